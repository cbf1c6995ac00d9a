/* SPDX-License-Identifier: MIT */
/*
 * rw_sqlite.c - liblpc_sqlite's VFS (src/sqlite/registry.c) sets
 * dirty_expire_ms NEVER so that "a process whose lpc never passes the
 * background threshold then runs no flusher thread, keeping glibc's
 * single-thread paths for SQLite's mutexes (0.91x unix's time with the
 * thread)".  Does the VFS still keep a small program single-threaded now
 * that lpc_cache_create starts liburcu's call_rcu worker?
 *   rw_sqlite [N]   N (default 2000) inserts, one transaction each, in
 *                   rollback-journal mode through the VFS "lpc"
 * Checks: one thread after sqlite3_open_v2 (ad5f9fa: create makes none)
 * and after the inserts; glibc still single-threaded after sqlite3_close
 * (exit 1 if not).  lpc_sqlite(7), as ad5f9fa rewrote it: "lpc-reclaim
 * starts when free frames first run low ... A program in which none of
 * them has started is single-threaded".  Found against ad5f9fa: the
 * database's close (lpc_file_close -> lpc_page_release_last ->
 * linger_cb -> start_locked) starts lpc-reclaim, and with it the worker,
 * in a 256 MiB cache holding a few pages: free frames never ran low.  The
 * same without the fix (_nofix), so pre-existing; the page's new sentence
 * is what is false.  Built against liblpc_sqlite.a + liblpc.a.
 */
#include <sqlite3.h>
#include <lpc/lpc_sqlite.h>

#include "rw.h"

extern char __libc_single_threaded; /* glibc 2.32+ */

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	char path[600];
	sqlite3 *db;
	struct rw_census c0, c1, c2;

	tst_init(1, argv, 120);
	tst_require_tmpdir();
	c0 = rw_census();
	REQUIRE(lpc_sqlite_register(1) == 0, "register the VFS");
	snprintf(path, sizeof(path), "%s/rw.db", tst_tmpdir());
	unlink(path);
	REQUIRE(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "lpc") ==
			SQLITE_OK, "open");
	c1 = rw_census();
	REQUIRE(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL) == SQLITE_OK, "create");
	for (int i = 0; i < n; i++)
		REQUIRE(sqlite3_exec(db, "INSERT INTO t VALUES (42)", NULL, NULL, NULL) == SQLITE_OK,
			"insert");
	CHECK_EQ(c1.threads, c0.threads, "sqlite3_open_v2 made no thread");
	CHECK_EQ(rw_census().threads, c0.threads, "CREATE TABLE and %d inserts made no thread", n);
	CHECK(__libc_single_threaded, "single-threaded before sqlite3_close");
	sqlite3_close(db);
	c2 = rw_census();
	printf("# threads: before %u, after open %u, after %d inserts %u\n", c0.threads,
	       c1.threads, n, c2.threads);
	rw_list();
	printf("# __libc_single_threaded %d\n", __libc_single_threaded);
	CHECK(__libc_single_threaded, "glibc still sees one thread (io_uring's iou-wrk are the kernel's)");
	unlink(path);
	return tst_finish();
}
