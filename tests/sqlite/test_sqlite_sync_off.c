/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_sync_off.c - synchronous=OFF syncs nothing through "lpc", as
 * through "unix" (lpc_sqlite(7)), while the other processes' view is kept:
 *
 *  - rollback journal (DELETE) and WAL (with checkpoints), synchronous=OFF:
 *    20 write transactions and the close make no lpc_fsync (lpc_stats
 *    fsyncs, which counts every fdatasync lpc makes for the VFS: xSync and
 *    the write-back before a write lock is released, file.c SQ1);
 *  - after each commit, a connection through "unix" (the kernel's file, as
 *    another process reads it) sees every row: SQ1 still writes the pages
 *    back before the lock is released;
 *  - the same with synchronous=FULL makes fsyncs (the counter counts).
 *
 * Usage: test_sqlite_sync_off [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include "sqlite_test.h"

static uint64_t fsyncs(void)
{
	struct lpc_stats s;

	REQUIRE(lpc_sqlite_stats(&s) == SQLITE_OK);
	return s.fsyncs;
}

static void run(const char *dir, const char *journal, const char *sync, bool want_none)
{
	char path[600], sql[256];
	sqlite3 *db, *kdb;
	uint64_t before;
	int64_t rows = 0;

	snprintf(path, sizeof(path), "%s/%s_%s.db", dir, journal, sync);
	db = sqt_open(path, LPC_SQLITE_VFS_NAME);
	snprintf(sql, sizeof(sql), "PRAGMA journal_mode=%s; PRAGMA synchronous=%s;", journal, sync);
	sqt_exec(db, sql);
	sqt_exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)");
	before = fsyncs();
	for (int i = 0; i < 20; i++) {
		sqt_exec(db, "BEGIN");
		for (int j = 0; j < 50; j++, rows++) {
			snprintf(sql, sizeof(sql), "INSERT INTO t VALUES(%" PRId64 ", randomblob(300))",
				 rows);
			sqt_exec(db, sql);
		}
		sqt_exec(db, "COMMIT");
		if (i % 5 == 4 && !strcmp(journal, "WAL"))
			sqt_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
		/* The kernel's file, as another process sees it (a WAL is read
		 * through the shared wal-index). */
		kdb = sqt_open(path, "unix");
		CHECK_EQ(sqt_int(kdb, "SELECT count(*) FROM t"), rows, "%s %s: rows after commit %d",
			 journal, sync, i);
		CHECK_EQ(sqlite3_close(kdb), SQLITE_OK);
	}
	CHECK_EQ(sqlite3_close(db), SQLITE_OK);
	printf("  journal %-6s synchronous %-4s: %" PRIu64 " lpc fsyncs\n", journal, sync,
	       fsyncs() - before);
	if (want_none)
		CHECK_EQ(fsyncs() - before, 0, "%s, synchronous=%s: no fdatasync", journal, sync);
	else
		CHECK(fsyncs() > before, "%s, synchronous=%s: fdatasyncs counted", journal, sync);
}

int main(int argc, char **argv)
{
	const char *dir = sqt_start(argc, argv, 120);

	TST_RUN(run(dir, "DELETE", "OFF", true));
	TST_RUN(run(dir, "WAL", "OFF", true));
	TST_RUN(run(dir, "DELETE", "FULL", false));
	TST_RUN(run(dir, "WAL", "FULL", false));
	return tst_finish();
}
