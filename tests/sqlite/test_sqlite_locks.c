/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_locks.c - exclusive coherence's lock table (file.c SL1-SL4) and
 * journal tracking (registry.c XJ1-XJ3), in one process.
 *
 * Part 1 calls the io methods of three connections to one file directly
 * and checks each answer against the unix VFS's semantics for connections
 * of one process: SHARED beside SHARED and RESERVED; one RESERVED; an
 * EXCLUSIVE asked for beside readers is SQLITE_BUSY and leaves PENDING,
 * which blocks new SHARED locks while the old readers finish; EXCLUSIVE
 * alone; xCheckReservedLock; unlocking to SHARED and to NONE.
 * Part 2 runs the same through SQLite (rollback journal): a reader beside a
 * writer reads the old row, a second writer is SQLITE_BUSY, a commit
 * beside an open read transaction is SQLITE_BUSY until the reader ends;
 * xAccess of the journal says it exists while the write transaction has
 * it, and not after the commit deleted it.
 */
#include "sqlite_test.h"

static sqlite3_vfs *vfs;

static sqlite3_file *open_file(const char *name)
{
	sqlite3_file *f = calloc(1, (size_t)vfs->szOsFile);
	int out = 0, rc;

	REQUIRE(f, "calloc");
	rc = vfs->xOpen(vfs, name, f,
			SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &out);
	REQUIRE(rc == SQLITE_OK, "xOpen = %d", rc);
	return f;
}

static int lk(sqlite3_file *f, int level)
{
	return f->pMethods->xLock(f, level);
}

static int unlk(sqlite3_file *f, int level)
{
	return f->pMethods->xUnlock(f, level);
}

static int reserved(sqlite3_file *f)
{
	int r = -1;

	REQUIRE(f->pMethods->xCheckReservedLock(f, &r) == SQLITE_OK, "xCheckReservedLock");
	return r;
}

enum { NONE = SQLITE_LOCK_NONE, SH = SQLITE_LOCK_SHARED, RES = SQLITE_LOCK_RESERVED,
       EXCL = SQLITE_LOCK_EXCLUSIVE };

static void part1(const char *dir)
{
	char path[600];
	const char *params[] = { "lpc_coherence", "exclusive" };
	sqlite3_filename name;
	sqlite3_file *a, *b, *c;

	snprintf(path, sizeof(path), "%s/locks.db", dir);
	name = sqlite3_create_filename(path, "", "", 1, params);
	REQUIRE(name, "sqlite3_create_filename");
	a = open_file(name);
	b = open_file(name);
	c = open_file(name);

	CHECK_EQ(lk(a, SH), SQLITE_OK, "SL2: a SHARED");
	CHECK_EQ(lk(b, SH), SQLITE_OK, "SL2: b SHARED beside a");
	CHECK_EQ(reserved(c), 0, "no RESERVED yet");
	CHECK_EQ(lk(a, RES), SQLITE_OK, "SL3: a RESERVED");
	CHECK_EQ(reserved(c), 1, "c sees a's RESERVED");
	CHECK_EQ(lk(b, RES), SQLITE_BUSY, "SL1: one RESERVED at a time");
	CHECK_EQ(lk(c, SH), SQLITE_OK, "SL1: SHARED beside RESERVED");
	CHECK_EQ(lk(a, EXCL), SQLITE_BUSY, "SL3: EXCLUSIVE beside readers is BUSY");
	CHECK_EQ(unlk(c, NONE), SQLITE_OK, "SL4: c to NONE");
	CHECK_EQ(lk(c, SH), SQLITE_BUSY, "SL1: PENDING blocks a new SHARED");
	CHECK_EQ(reserved(c), 1, "PENDING counts as reserved");
	CHECK_EQ(lk(a, EXCL), SQLITE_BUSY, "SL3: b still reads");
	CHECK_EQ(unlk(b, NONE), SQLITE_OK, "SL4: b to NONE");
	CHECK_EQ(lk(b, SH), SQLITE_BUSY, "SL1: still PENDING");
	CHECK_EQ(lk(a, EXCL), SQLITE_OK, "SL3: EXCLUSIVE once the readers left");
	CHECK_EQ(lk(b, SH), SQLITE_BUSY, "SL1: EXCLUSIVE blocks SHARED");
	CHECK_EQ(lk(a, RES), SQLITE_OK, "a lower level than held: nothing");
	CHECK_EQ(unlk(a, SH), SQLITE_OK, "SL4: a back to SHARED");
	CHECK_EQ(reserved(c), 0, "no RESERVED after the downgrade");
	CHECK_EQ(lk(b, SH), SQLITE_OK, "b SHARED beside a's SHARED");
	CHECK_EQ(lk(b, RES), SQLITE_OK, "b RESERVED now");
	CHECK_EQ(unlk(b, NONE), SQLITE_OK, "b from RESERVED to NONE");
	CHECK_EQ(reserved(c), 0, "b's RESERVED went with it");
	CHECK_EQ(lk(c, SH), SQLITE_OK, "c SHARED");
	CHECK_EQ(unlk(c, NONE), SQLITE_OK, "c to NONE");
	CHECK_EQ(lk(a, EXCL), SQLITE_OK, "SL3: EXCLUSIVE from SHARED when alone");
	CHECK_EQ(lk(c, SH), SQLITE_BUSY, "SL1: EXCLUSIVE blocks SHARED");
	CHECK_EQ(unlk(a, NONE), SQLITE_OK, "SL4: a to NONE");
	CHECK_EQ(lk(c, SH), SQLITE_OK, "c SHARED after all left");
	CHECK_EQ(lk(c, EXCL), SQLITE_OK, "c EXCLUSIVE alone");
	CHECK_EQ(unlk(c, NONE), SQLITE_OK, "c to NONE");
	CHECK_EQ(lk(a, SH), SQLITE_OK, "the table is empty again");
	CHECK_EQ(unlk(a, NONE), SQLITE_OK, "a to NONE");
	a->pMethods->xClose(a);
	b->pMethods->xClose(b);
	c->pMethods->xClose(c);
	free(a);
	free(b);
	free(c);
	sqlite3_free_filename(name);
}

static int journal_exists(const char *path)
{
	char j[700];
	int res = -1;

	snprintf(j, sizeof(j), "%s-journal", path);
	REQUIRE(vfs->xAccess(vfs, j, SQLITE_ACCESS_EXISTS, &res) == SQLITE_OK, "xAccess");
	return res;
}

static void part2(const char *dir)
{
	char path[600], uri[700];
	sqlite3 *w, *r, *r2;

	snprintf(path, sizeof(path), "%s/locks2.db", dir);
	snprintf(uri, sizeof(uri), "file:%s?lpc_coherence=exclusive", path);
	w = sqt_open(uri, "lpc");
	r = sqt_open(uri, "lpc");
	r2 = sqt_open(uri, "lpc");
	sqlite3_busy_timeout(w, 0);
	sqlite3_busy_timeout(r, 0);
	sqlite3_busy_timeout(r2, 0);
	sqt_exec(w, "PRAGMA journal_mode=delete; CREATE TABLE t(k INTEGER PRIMARY KEY, v INT);"
		    "INSERT INTO t VALUES(1, 1)");
	CHECK_EQ(journal_exists(path), 0, "XJ3: no journal after the commits");
	sqt_exec(w, "BEGIN IMMEDIATE; UPDATE t SET v = 2");
	CHECK_EQ(journal_exists(path), 1, "XJ2: the write transaction's journal exists");
	CHECK_EQ(sqt_int(r, "SELECT v FROM t"), 1, "a reader beside the writer reads the old row");
	CHECK_EQ(sqt_try(r2, "BEGIN IMMEDIATE"), SQLITE_BUSY, "a second writer is BUSY");
	sqt_exec(r, "BEGIN; SELECT v FROM t");
	CHECK_EQ(sqt_try(w, "COMMIT"), SQLITE_BUSY, "commit beside a read transaction: BUSY");
	CHECK_EQ(sqt_try(r2, "SELECT v FROM t"), SQLITE_BUSY, "PENDING keeps new readers out");
	sqt_exec(r, "COMMIT");
	CHECK_EQ(sqt_try(w, "COMMIT"), SQLITE_OK, "commit once the reader left");
	CHECK_EQ(journal_exists(path), 0, "XJ3: the commit deleted the journal");
	CHECK_EQ(sqt_int(r2, "SELECT v FROM t"), 2, "the new row");
	sqt_check_integrity(r2, "part 2");
	sqlite3_close(w);
	sqlite3_close(r);
	sqlite3_close(r2);
}

int main(int argc, char **argv)
{
	const char *dir;

	tst_init(argc, argv, 60);
	sqt_register();
	vfs = sqlite3_vfs_find(LPC_SQLITE_VFS_NAME);
	REQUIRE(vfs, "the VFS");
	dir = tst_tmpdir();
	REQUIRE(dir, "tmpdir");
	part1(dir);
	part2(dir);
	return tst_finish();
}
