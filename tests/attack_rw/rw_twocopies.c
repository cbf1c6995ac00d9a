/* SPDX-License-Identifier: MIT */
/*
 * rw_twocopies.c LIB - two copies of lpc in one process: this program's
 * (liblpc.a) and the one liblpc_sqlite.so (LIB, loaded as an SQLite
 * extension) carries.  Both link liburcu-memb.so, so there is one call_rcu
 * worker: thread rw-sq opens a database through the VFS "lpc" first (the
 * extension's lpc_cache_create makes the worker: one new pthread, named
 * rw-sq, every signal blocked), then the main thread creates a cache of its
 * own copy and evicts: no new thread but lpc's, and the worker keeps its
 * name and mask.  io_uring's iou-wrk-* (the kernel's) and lpc-* threads are
 * left out of the counts.  Exit 77 without LIB.
 */
#include <sqlite3.h>

#include "rw.h"

static const char *lib;
static char dbpath[600];

static unsigned others(const struct rw_tids *before, const struct rw_tids *after, pid_t *w)
{
	unsigned n = 0;

	*w = 0;
	for (unsigned i = 0; i < after->n; i++) {
		bool old = false;
		char comm[32];

		for (unsigned j = 0; j < before->n; j++)
			old |= after->t[i] == before->t[j];
		rw_comm(after->t[i], comm, sizeof(comm));
		if (old || !strncmp(comm, "lpc-", 4) || !strncmp(comm, "iou-", 4))
			continue;
		*w = after->t[i];
		n++;
	}
	return n;
}

static void *sq(void *arg)
{
	sqlite3 *boot, *db;
	char *err = NULL;

	(void)arg;
	pthread_setname_np(pthread_self(), "rw-sq");
	REQUIRE(sqlite3_open(":memory:", &boot) == SQLITE_OK &&
			sqlite3_enable_load_extension(boot, 1) == SQLITE_OK &&
			sqlite3_load_extension(boot, lib, NULL, &err) == SQLITE_OK,
		"load %s: %s", lib, err ? err : "");
	REQUIRE(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "lpc") ==
			SQLITE_OK, "open through lpc");
	REQUIRE(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", NULL, NULL,
			     NULL) == SQLITE_OK, "exec");
	sqlite3_close(db);
	sqlite3_close(boot);
	return NULL;
}

int main(int argc, char **argv)
{
	struct rw_tids before, mid, after;
	struct lpc_cache *c;
	unsigned long long blk;
	char comm[32];
	pthread_t t;
	pid_t w, w2;

	if (argc < 2) {
		printf("skip: no LIB\n");
		return 77;
	}
	lib = argv[1];
	tst_init(1, argv, 120);
	tst_require_tmpdir();
	pthread_setname_np(pthread_self(), "rw-main");
	snprintf(dbpath, sizeof(dbpath), "%s/rw-two.db", tst_tmpdir());
	unlink(dbpath);
	before = rw_tids();
	pthread_create(&t, NULL, sq, NULL);
	pthread_join(t, NULL);
	mid = rw_tids();
	CHECK_EQ(others(&before, &mid, &w), 1u, "the extension's copy made one thread");
	REQUIRE(w, "worker found");
	rw_comm(w, comm, sizeof(comm));
	CHECK(!strcmp(comm, "rw-sq"), "worker named '%s', want rw-sq", comm);
	CHECK(rw_all_blocked(w), "worker blocks every signal");
	blk = rw_sigblk(w);
	c = rw_cache();
	after = rw_tids();
	CHECK_EQ(others(&mid, &after, &w2), 0u, "liblpc.a's create made no thread");
	rw_evict_run(c, "rw-two");
	tst_cache_destroy(c);
	rw_comm(w, comm, sizeof(comm));
	CHECK(!strcmp(comm, "rw-sq"), "worker now '%s'", comm);
	CHECK_EQ(rw_sigblk(w), blk, "worker mask unchanged");
	rw_list();
	unlink(dbpath);
	return tst_finish();
}
