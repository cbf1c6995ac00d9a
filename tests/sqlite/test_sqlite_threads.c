/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_threads.c - many threads, each with its own connection
 * through "lpc" to one database, so every connection shares the process's
 * one cache and the file's pages (registry.c); run under TSan in CI.  Each
 * thread commits transfers between accounts (BEGIN IMMEDIATE, two updates
 * and a history row) and reads: the total of the balances never changes
 * and equals the history's count of transfers times zero net, and at the
 * end every transfer is there and integrity_check is ok.  Both journal
 * modes, each in both coherence modes (detect; exclusive, whose locks
 * between the connections are the VFS's own, file.c SL1-SL4), the seconds
 * split between them.  Threads: 8 (LPC_SQLITE_THREADS); seconds per mode:
 * LPC_SQLITE_SECONDS (default 1; not LPC_STRESS_SECONDS, which CI sets
 * for the stress label).  In one process nothing is another process's
 * change: the coherence checks must drop (almost) no page.  Prints its seed.
 */
#include <pthread.h>

#include "sqlite_test.h"

#define ACCOUNTS 500
#define TOTAL (ACCOUNTS * 1000)
/* lpc pages the coherence checks may drop in one run of one process: none
 * is needed; a few are allowed for an interleaving SQ3c cannot prove. */
#define MAX_DROPPED 16

struct worker {
	pthread_t tid;
	const char *uri;
	uint64_t seed;
	double seconds;
	int64_t transfers, reads;
	int errors;
};

static int retry(sqlite3 *db, const char *sql)
{
	int rc;

	while ((rc = sqt_try(db, sql)) == SQLITE_BUSY || rc == SQLITE_LOCKED ||
	       (rc & 0xff) == SQLITE_BUSY)
		tst_sleep_us(200);
	return rc;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	sqlite3 *db;
	uint64_t end = tst_now_ns() + (uint64_t)(w->seconds * 1e9);
	char sql[256];

	if (sqlite3_open_v2(w->uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, "lpc") !=
	    SQLITE_OK) {
		w->errors++;
		return NULL;
	}
	sqlite3_busy_timeout(db, 10000);
	/* Checkpoints and WAL restarts every few transactions, while others
	 * read. */
	sqlite3_exec(db, "PRAGMA cache_size=20; PRAGMA wal_autocheckpoint=8", NULL, NULL, NULL);
	while (tst_now_ns() < end) {
		uint64_t r = tst_rnd(&w->seed);
		int a = (int)(r % ACCOUNTS) + 1, b = (int)((r >> 20) % ACCOUNTS) + 1;

		if (r & (1ull << 60)) {
			snprintf(sql, sizeof(sql),
				 "BEGIN IMMEDIATE; UPDATE acct SET bal = bal - 7 WHERE id = %d;"
				 "UPDATE acct SET bal = bal + 7 WHERE id = %d;"
				 "INSERT INTO hist VALUES(NULL, %d, %d, randomblob(%d)); COMMIT",
				 a, b, a, b, (int)((r >> 40) % 2000));
			if (retry(db, sql) != SQLITE_OK) {
				fprintf(stderr, "transfer: %s\n", sqlite3_errmsg(db));
				w->errors++;
				sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
				continue;
			}
			w->transfers++;
		} else {
			sqlite3_stmt *st;
			int rc = sqlite3_prepare_v2(db, "SELECT sum(bal), count(*) FROM acct", -1, &st,
						    NULL);

			while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_BUSY)
				sqlite3_reset(st);
			if (rc != SQLITE_ROW || sqlite3_column_int64(st, 0) != TOTAL ||
			    sqlite3_column_int64(st, 1) != ACCOUNTS) {
				fprintf(stderr, "read: rc %d sum %lld: %s\n", rc,
					(long long)sqlite3_column_int64(st, 0), sqlite3_errmsg(db));
				w->errors++;
			}
			sqlite3_finalize(st);
			w->reads++;
		}
	}
	if (sqlite3_close(db) != SQLITE_OK)
		w->errors++;
	return NULL;
}

static void run(const char *dir, const char *mode, bool excl, int nthreads, double seconds,
		uint64_t *rs)
{
	char path[600], uri[700], sql[128], what[64];
	struct worker *w = calloc((size_t)nthreads, sizeof(*w));
	int64_t transfers = 0, reads = 0;
	struct lpc_stats st0, st1;
	sqlite3 *db;

	REQUIRE(w, "calloc");
	snprintf(path, sizeof(path), "%s/threads-%s-%d.db", dir, mode, excl);
	snprintf(uri, sizeof(uri), "file:%s?lpc_coherence=%s", path, excl ? "exclusive" : "detect");
	snprintf(what, sizeof(what), "%s/%s", mode, excl ? "exclusive" : "detect");
	db = sqt_open(uri, "lpc");
	snprintf(sql, sizeof(sql), "PRAGMA journal_mode=%s", mode);
	sqt_exec(db, sql);
	sqt_exec(db, "CREATE TABLE acct(id INTEGER PRIMARY KEY, bal INT);"
		     "CREATE TABLE hist(id INTEGER PRIMARY KEY, a INT, b INT, pad BLOB);"
		     "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)"
		     " INSERT INTO acct SELECT i, 1000 FROM n");
	lpc_sqlite_stats(&st0);
	for (int i = 0; i < nthreads; i++) {
		w[i].uri = uri;
		w[i].seed = tst_rnd(rs);
		w[i].seconds = seconds;
		REQUIRE(pthread_create(&w[i].tid, NULL, work, &w[i]) == 0, "pthread_create");
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i].tid, NULL);
		CHECK_EQ(w[i].errors, 0, "%s: thread %d had no error", what, i);
		transfers += w[i].transfers;
		reads += w[i].reads;
	}
	CHECK_EQ(sqt_int(db, "SELECT count(*) FROM hist"), transfers, "%s: every transfer", what);
	CHECK_EQ(sqt_int(db, "SELECT sum(bal) FROM acct"), TOTAL, "%s: the total", what);
	sqt_check_integrity(db, what);
	printf("%s: %d threads, %lld transfers, %lld reads\n", what, nthreads,
	       (long long)transfers, (long long)reads);
	CHECK(transfers > 0 && reads > 0, "%s: both kinds ran", what);
	/* One process alone: its own commits, checkpoints and WAL restarts
	 * are no change to the coherence checks (file.c SQ2, SQ3b, SQ3c), so
	 * they drop nothing while the threads run (before SQ3b and SQ3c a
	 * reader meeting another thread's checkpoint or restart dropped the
	 * file's pages: hundreds to thousands of them a second here). */
	lpc_sqlite_stats(&st1);
	printf("%s: %llu lpc pages dropped by coherence checks\n", what,
	       (unsigned long long)(st1.invalidated - st0.invalidated));
	CHECK(st1.invalidated - st0.invalidated <= MAX_DROPPED,
	      "%s: %llu lpc pages dropped by coherence checks (at most %d)", what,
	      (unsigned long long)(st1.invalidated - st0.invalidated), MAX_DROPPED);
	CHECK(sqlite3_close(db) == SQLITE_OK, "%s: close", what);
	free(w);
}

int main(int argc, char **argv)
{
	const char *dir, *e = getenv("LPC_SQLITE_THREADS");
	int n = e && atoi(e) > 0 ? atoi(e) : 8;
	const char *es = getenv("LPC_SQLITE_SECONDS");
	double secs = es && atof(es) > 0 ? atof(es) : 1.0;
	uint64_t rs;

	dir = sqt_start(argc, argv, 300);
	rs = tst_seed;
	run(dir, "delete", false, n, secs / 2, &rs);
	run(dir, "wal", false, n, secs / 2, &rs);
	run(dir, "delete", true, n, secs / 2, &rs);
	run(dir, "wal", true, n, secs / 2, &rs);
	return tst_finish();
}
