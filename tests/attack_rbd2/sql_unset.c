/* SPDX-License-Identifier: MIT */
/*
 * sql_unset.c - the opener removed (lpc_sqlite_set_opener(prefix, NULL))
 * while a connection to one of its databases is open: where does that
 * connection's next rollback journal go?
 *
 * Contract (lpc_sqlite.h): "the main database is an lpc file over the
 * opener's backend ...; its rollback journal ("NAME-journal"), WAL
 * ("NAME-wal") and super-journal are objects of the same opener";
 * lpc_sqlite_set_opener(3): "A NULL opener removes the prefix's entry;
 * setting a prefix again replaces its opener (files open keep the old
 * one's objects)".
 *
 * What happens: the VFS looks the opener up by name at every xOpen
 * (vfs.c lpcs_open, remote.c lpcs_opener_find); the database's next
 * journal, "rbd:lpc/IMG-journal", is no longer any opener's name and goes
 * to the unix VFS as a relative path: SQLITE_CANTOPEN for the write
 * (harmless) -- or, where the process's working directory has a
 * directory "rbd:lpc", a journal file on local disk protecting pages of
 * an RBD image: a kill then leaves the hot journal where a reopen through
 * the opener never looks (xAccess on RBD), and the half-written
 * transaction stays in the image.  This program makes the directory (in a
 * temporary working directory) and shows the journal there.
 * Exit 1 when the open connection's journal leaves the opener's storage
 * (a local file), or the connection is broken or the database damaged once
 * the opener is set again; 0 otherwise (a failed write while no opener is
 * set is taken as clean).
 *
 * Run: LPC_CEPH_CONF=DIR/ceph.conf out-release/sql_unset
 * Seen (release): the write while no opener is set fails with "disk I/O
 * error" (SQLITE_IOERR: the unix VFS's journal open stats the database
 * "rbd:lpc/IMG" as a local path, which is absent), no local journal; set
 * again, the connection writes, 2 rows, integrity ok; exit 0 (held; the
 * error says nothing of the missing opener).
 */
#include <sys/stat.h>

#include "sql.h"

int main(void)
{
	sqlite3 *db = NULL;
	char img[64], local[128], tmpl[] = "/tmp/att2-unset-XXXXXX", ij[128];
	struct stat st;
	int rc1, rc2;

	sq_conf_get();
	sq_direct();
	sq_vfs();
	snprintf(img, sizeof(img), "att2-unset-%d", (int)getpid());
	sq_fresh(img);
	CHECK(sq_open(img, NULL, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db) == SQLITE_OK);
	CHECK(sq_exec(db, "CREATE TABLE t(x)") == 0);
	CHECK(sq_exec(db, "INSERT INTO t VALUES(1)") == 0);
	/* a working directory with a directory named like the pool */
	CHECK(mkdtemp(tmpl) != NULL);
	CHECK(chdir(tmpl) == 0);
	CHECK(mkdir("rbd:lpc", 0700) == 0);
	snprintf(local, sizeof(local), "rbd:lpc/%s-journal", img);
	snprintf(ij, sizeof(ij), "%s-journal", img);

	CHECK(lpc_sqlite_set_opener(LPC_RBD_PREFIX, NULL) == SQLITE_OK);
	rc1 = sq_exec(db, "BEGIN");
	rc2 = rc1 ? rc1 : sq_exec(db, "INSERT INTO t VALUES(2)");
	bool local_journal = stat(local, &st) == 0;
	bool image_journal = sq_image_exists(ij);
	printf("sql_unset: after the opener was removed, the open connection's write: %d; "
	       "journal as a local file %s/%s: %s (%lld bytes); journal image: %s\n",
	       rc2, tmpl, local, local_journal ? "YES" : "no",
	       local_journal ? (long long)st.st_size : 0LL, image_journal ? "yes" : "no");
	int rc3 = rc1 ? rc1 : sq_exec(db, "COMMIT");
	printf("sql_unset: COMMIT: %d; the write's extended code %d\n", rc3, sqlite3_extended_errcode(db));
	sq_vfs(); /* back: the connection must work again, the database intact */
	int rc4 = sq_exec(db, "INSERT INTO t VALUES(3)");
	int64_t n = sq_int(db, "SELECT count(*) FROM t");
	char ic[200];
	sq_integrity(db, ic, sizeof(ic));
	printf("sql_unset: opener set again: insert %d, rows %lld (expected 2), integrity %s\n", rc4,
	       (long long)n, ic);
	sqlite3_close(db);
	unlink(local);
	rmdir("rbd:lpc");
	chdir("/");
	rmdir(tmpl);
	sq_fresh(img);
	return local_journal || rc4 || n != 2 || strcmp(ic, "ok") ? 1 : 0;
}
