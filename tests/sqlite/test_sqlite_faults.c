/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_faults.c - lpc's I/O faults (lpc_io_fault_set, the hook every
 * backend call passes) surface as SQLite errors, and the database stays
 * consistent:
 *  - EIO on writeback: COMMIT fails with SQLITE_IOERR_WRITE (the write-back
 *    at SQLITE_FCNTL_SYNC, before xSync, returned the write error: file.c
 *    SQ4), never SQLITE_OK; the transaction is not
 *    there afterwards, through lpc or through unix after the close;
 *  - ENOSPC on writeback: COMMIT fails with SQLITE_FULL;
 *  - EIO from fdatasync: SQLITE_IOERR_FSYNC;
 *  - EIO on a page read (a cold cache): SQLITE_IOERR_READ; the next read
 *    succeeds once the fault is cleared; also when the failed lpc page is
 *    in the middle of one 64 KiB SQLite page (lpc_pread ends short);
 *  - WAL mode: the checkpoint's writeback fails, the checkpoint reports it,
 *    every commit stays readable, and a later checkpoint succeeds.
 * integrity_check is "ok" after each, through lpc and through unix.
 */
#include "sqlite_test.h"

#include "cache/cache.h"
#include "sqlite/sqlite_int.h"

static struct lpc_cache *cache(void)
{
	struct lpc_cache *c = lpcs_cache_peek();

	REQUIRE(c, "the VFS's cache exists");
	return c;
}

static void arm(unsigned ops, int err, uint64_t skip)
{
	struct lpc_io_fault f = { .ops = ops, .err = err, .skip = skip };

	REQUIRE(lpc_io_fault_set(&cache()->io, &f) == 0, "lpc_io_fault_set");
}

static void disarm(void)
{
	lpc_io_fault_set(&cache()->io, NULL);
}

static void check_file(const char *path, int64_t rows, const char *what)
{
	sqlite3 *db = sqt_open(path, "unix");

	sqt_check_integrity(db, what);
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t"), rows, "%s: rows on disk", what);
	sqlite3_close(db);
}

/* Makes dir/name through lpc: pragmas first, then t(id, b) with rows rows
 * of 900 random bytes.  Return: the connection, open; its path in path. */
static sqlite3 *blob_db(const char *dir, const char *name, const char *pragmas, int rows,
			char *path, size_t len)
{
	char sql[512];
	sqlite3 *db;

	snprintf(path, len, "%s/%s", dir, name);
	db = sqt_open(path, "lpc");
	snprintf(sql, sizeof(sql),
		 "%s CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB);"
		 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d)"
		 " INSERT INTO t SELECT i, randomblob(900) FROM n",
		 pragmas, rows);
	sqt_exec(db, sql);
	return db;
}

/* A commit whose writeback fails with err (op: LPC_IO_WRITE or _SYNCOP). */
static void failed_commit(const char *dir, unsigned op, int err, int want, const char *name)
{
	char path[600], what[96], file[80];
	sqlite3 *db;
	int rc;

	snprintf(what, sizeof(what), "rollback journal, %s", name);
	snprintf(file, sizeof(file), "%s.db", name);
	db = blob_db(dir, file, "PRAGMA journal_mode=delete;", 200, path, sizeof(path));
	arm(op, err, 0);
	sqt_exec(db, "BEGIN; INSERT INTO t SELECT NULL, randomblob(900) FROM t WHERE id <= 50;"
		     "UPDATE t SET b = randomblob(100) WHERE id % 4 = 0");
	rc = sqt_try(db, "COMMIT");
	CHECK_EQ(rc, want, "%s: COMMIT fails with the mapped code (%s)", what,
		 sqlite3_errmsg(db));
	CHECK(lpc_io_faults_fired(&cache()->io) > 0, "%s: the fault fired", what);
	disarm();
	if (sqlite3_get_autocommit(db) == 0)
		sqt_try(db, "ROLLBACK");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t"), 200, "%s: the failed commit is not there",
		 what);
	sqt_check_integrity(db, what);
	/* The same transaction now commits. */
	sqt_exec(db, "INSERT INTO t SELECT NULL, randomblob(900) FROM t WHERE id <= 50");
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t"), 250, "%s: a later commit", what);
	CHECK(sqlite3_close(db) == SQLITE_OK, "%s: close", what);
	check_file(path, 250, what);
}

static void read_fault(const char *dir)
{
	char path[600];
	sqlite3 *db;
	int rc;

	db = blob_db(dir, "read.db", "", 300, path, sizeof(path));
	sqlite3_close(db); /* the last close drops the file's pages (D.2) */
	db = sqt_open(path, "lpc");
	arm(LPC_IO_READ, EIO, 0);
	rc = sqt_try(db, "SELECT sum(length(b)) FROM t");
	CHECK_EQ(rc, SQLITE_IOERR_READ, "read fault: SELECT fails with SQLITE_IOERR_READ (%s)",
		 sqlite3_errmsg(db));
	disarm();
	CHECK_EQ(sqt_int(db, "SELECT sum(length(b)) FROM t"), 300 * 900,
		 "read fault: the next read succeeds");
	sqt_check_integrity(db, "read fault");
	sqlite3_close(db);
}

/* A failed page in the middle of one xRead (a 64 KiB SQLite page is 16 lpc
 * pages): lpc_pread ends short before it, which must be SQLITE_IOERR_READ,
 * never zeros taken for the end of the file. */
static void read_fault_mid_page(const char *dir)
{
	char path[600];
	sqlite3 *db;
	int rc, fired;

	db = blob_db(dir, "read64k.db", "PRAGMA page_size=65536;", 300, path, sizeof(path));
	sqlite3_close(db);
	db = sqt_open(path, "lpc");
	arm(LPC_IO_READ, EIO, 3);
	rc = sqt_try(db, "SELECT sum(length(b)) FROM t");
	fired = lpc_io_faults_fired(&cache()->io) > 0;
	disarm();
	CHECK(fired, "mid-page read fault: the fault fired");
	CHECK_EQ(rc, SQLITE_IOERR_READ, "mid-page read fault: SQLITE_IOERR_READ (%s)",
		 sqlite3_errmsg(db));
	CHECK_EQ(sqt_int(db, "SELECT sum(length(b)) FROM t"), 300 * 900,
		 "mid-page read fault: the next read succeeds");
	sqt_check_integrity(db, "mid-page read fault");
	sqlite3_close(db);
}

static void wal_checkpoint_fault(const char *dir)
{
	char path[600];
	sqlite3 *db;
	int rc;

	db = blob_db(dir, "wal.db", "PRAGMA journal_mode=wal; PRAGMA wal_autocheckpoint=0;", 400,
		     path, sizeof(path));
	arm(LPC_IO_WRITE, EIO, 0);
	rc = sqt_try(db, "PRAGMA wal_checkpoint(TRUNCATE)");
	CHECK((rc & 0xff) == SQLITE_IOERR, "wal: the checkpoint fails (%d %s)", rc,
	      sqlite3_errmsg(db));
	disarm();
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM t"), 400, "wal: every commit readable");
	sqt_check_integrity(db, "wal after a failed checkpoint");
	sqt_exec(db, "INSERT INTO t SELECT NULL, randomblob(500) FROM t WHERE id <= 10");
	CHECK_EQ(sqt_int(db, "PRAGMA wal_checkpoint(TRUNCATE)"), 0, "wal: a later checkpoint");
	CHECK(sqlite3_close(db) == SQLITE_OK, "wal: close");
	check_file(path, 410, "wal");
}

int main(int argc, char **argv)
{
	const char *dir;

	dir = sqt_start(argc, argv, 300);
	failed_commit(dir, LPC_IO_WRITE, EIO, SQLITE_IOERR_WRITE, "write-eio");
	failed_commit(dir, LPC_IO_WRITE, ENOSPC, SQLITE_FULL, "write-enospc");
	failed_commit(dir, LPC_IO_SYNCOP, EIO, SQLITE_IOERR_FSYNC, "fdatasync-eio");
	read_fault(dir);
	read_fault_mid_page(dir);
	wal_checkpoint_fault(dir);
	return tst_finish();
}
