/* SPDX-License-Identifier: MIT */
/*
 * test_sqlite_random.c - random workloads through the VFS "lpc", each op run
 * on a twin database through "unix": inserts, updates, deletes, index
 * creation, VACUUM and large blobs that cross many pages, in transactions,
 * in rollback-journal and WAL modes and under several SQLite page sizes
 * (512: four SQLite pages per lpc page; 65536: sixteen lpc pages per SQLite
 * page).  After every few ops PRAGMA integrity_check must be "ok" and the
 * table's contents (a hash of every column of every row) equal the twin's;
 * at the end the file lpc wrote, read back through "unix" after the close,
 * must hash the same.  A 4 MiB cache (lpc_cache_mb=4 on the first open) and
 * SQLite's cache_size=32 keep lpc evicting and SQLite reading through it.
 * LPC_SQLITE_PAGE_KB sets lpc's page size (the release build runs it again
 * with 1 KiB lpc pages, smaller than most SQLite pages).  Prints its seed;
 * Half the workloads open the lpc twin with lpc_coherence=exclusive (file.c,
 * SL1-SL4, XJ1-XJ3): the same checks, the rounds shared between the modes.
 * --seed N replays.
 */
#include "sqlite_test.h"

#include "sqlite/sqlite_int.h" /* lpcs_page_size */

struct op {
	const char *sql;
	int64_t a, b, c;
	size_t blob;     /* bytes of the blob bound to ?4 (0: none) */
	uint64_t fill;   /* its contents' seed */
};

static unsigned char blobbuf[1 << 19];

static void run_op(sqlite3 *db, const struct op *o)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, o->sql, -1, &st, NULL);

	REQUIRE(rc == SQLITE_OK, "prepare %s: %s", o->sql, sqlite3_errmsg(db));
	for (int i = 1; i <= sqlite3_bind_parameter_count(st); i++) {
		if (i == 4) {
			tst_file_bytes(o->fill, 0, blobbuf, o->blob);
			sqlite3_bind_blob(st, 4, blobbuf, (int)o->blob, SQLITE_TRANSIENT);
		} else {
			sqlite3_bind_int64(st, i, i == 1 ? o->a : i == 2 ? o->b : o->c);
		}
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	REQUIRE(rc == SQLITE_DONE, "%s: %d %s", o->sql, rc, sqlite3_errmsg(db));
	sqlite3_finalize(st);
}

static void both(sqlite3 *db[2], const struct op *o)
{
	run_op(db[0], o);
	run_op(db[1], o);
}

static void both_sql(sqlite3 *db[2], const char *sql)
{
	sqt_exec(db[0], sql);
	sqt_exec(db[1], sql);
}

static const char *HASH_SQL = "SELECT id, k, v, b FROM t ORDER BY id";

static void compare(sqlite3 *db[2], const char *what, int step)
{
	int64_t r0, r1;
	uint64_t h0 = sqt_hash(db[0], HASH_SQL, &r0), h1 = sqt_hash(db[1], HASH_SQL, &r1);
	char w[128];

	snprintf(w, sizeof(w), "%s step %d", what, step);
	sqt_check_integrity(db[1], w);
	CHECK(h0 == h1 && r0 == r1, "%s: lpc has %lld rows (hash %llx), unix %lld (%llx)", w,
	      (long long)r1, (unsigned long long)h1, (long long)r0, (unsigned long long)h0);
}

static void workload(const char *dir, const char *mode, int page_size, bool excl, int ops,
		     uint64_t *rs)
{
	char p0[600], p1[700], sql[128], what[64];
	sqlite3 *db[2];

	struct lpc_stats st0, st1;

	lpc_sqlite_stats(&st0);
	snprintf(what, sizeof(what), "%s/%d/%s", mode, page_size, excl ? "exclusive" : "detect");
	snprintf(p0, sizeof(p0), "%s/unix-%s-%d.db", dir, mode, page_size);
	snprintf(p1, sizeof(p1), "file:%s/lpc-%s-%d.db?lpc_cache_mb=4&lpc_coherence=%s", dir, mode,
		 page_size, excl ? "exclusive" : "detect");
	db[0] = sqt_open(p0, "unix");
	db[1] = sqt_open(p1, "lpc");
	snprintf(sql, sizeof(sql), "PRAGMA page_size=%d; PRAGMA journal_mode=%s; PRAGMA cache_size=32",
		 page_size, mode);
	both_sql(db, sql);
	sqt_exec(db[0], "PRAGMA synchronous=OFF"); /* the twin needs no durability */
	both_sql(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, k INT, v TEXT, b BLOB)");
	for (int i = 0; i < ops; i++) {
		uint64_t r = tst_rnd(rs) % 100, x = tst_rnd(rs), y = tst_rnd(rs);
		struct op o = { .a = (int64_t)(x % 5000), .b = (int64_t)(y % 1000),
				.c = (int64_t)(x >> 40), .fill = tst_rnd(rs) };
		int n;

		if (r < 40) { /* a transaction of inserts */
			n = 1 + (int)(y % 40);
			both_sql(db, "BEGIN");
			for (int k = 0; k < n; k++) {
				o.sql = "INSERT OR REPLACE INTO t VALUES(?1, ?2, hex(?3), ?4)";
				o.a = (int64_t)(tst_rnd(rs) % 5000);
				o.blob = (size_t)(tst_rnd(rs) % 3000);
				o.fill = tst_rnd(rs);
				both(db, &o);
			}
			both_sql(db, (x & 7) ? "COMMIT" : "ROLLBACK");
		} else if (r < 58) {
			o.sql = "UPDATE t SET v = hex(?3) || v, b = ?4 WHERE id BETWEEN ?1 AND ?1 + ?2 / 4";
			o.blob = (size_t)(y % 6000);
			both(db, &o);
		} else if (r < 72) {
			o.sql = "DELETE FROM t WHERE id BETWEEN ?1 AND ?1 + ?2 / 3";
			both(db, &o);
		} else if (r < 82) {
			both_sql(db, (x & 1) ? "DROP INDEX IF EXISTS tk" :
					       "CREATE INDEX IF NOT EXISTS tk ON t(k, v)");
		} else if (r < 86) {
			both_sql(db, "VACUUM");
		} else { /* a large blob: many pages, overflow chains */
			o.sql = "INSERT OR REPLACE INTO t VALUES(?1, ?2, 'big', ?4)";
			o.blob = 20000 + (size_t)(y % (sizeof(blobbuf) - 20000));
			both(db, &o);
		}
		if (i % 10 == 9 || i == ops - 1)
			compare(db, what, i);
	}
	sqlite3_close(db[0]);
	CHECK(sqlite3_close(db[1]) == SQLITE_OK, "%s: close", what);
	/* One process alone: the coherence checks (file.c SQ2, SQ3) must see
	 * only its own changes, checkpoints and WAL restarts included, and
	 * drop nothing but what the first lock finds cached (at most page 1
	 * and the schema page: 2 SQLite pages). */
	lpc_sqlite_stats(&st1);
	CHECK(st1.invalidated - st0.invalidated <=
		      2u * ((size_t)page_size > lpcs_page_size ? page_size / lpcs_page_size : 1),
	      "%s: %llu lpc pages dropped by coherence checks", what,
	      (unsigned long long)(st1.invalidated - st0.invalidated));
	printf("%s: %llu lpc pages dropped by coherence checks\n", what,
	       (unsigned long long)(st1.invalidated - st0.invalidated));
	/* What lpc wrote, read by the unix VFS from the file. */
	db[0] = sqt_open(p0, "unix");
	snprintf(p1, sizeof(p1), "%s/lpc-%s-%d.db", dir, mode, page_size);
	db[1] = sqt_open(p1, "unix");
	compare(db, "reopened through unix", ops);
	sqlite3_close(db[0]);
	sqlite3_close(db[1]);
}

int main(int argc, char **argv)
{
	const char *dir;
	uint64_t rs;
	struct lpc_stats st;

	dir = sqt_start(argc, argv, 600);
	rs = tst_seed;
	workload(dir, "delete", 4096, false, SQT_SCALE(120), &rs);
	workload(dir, "wal", 4096, true, SQT_SCALE(120), &rs);
	workload(dir, "delete", 512, true, SQT_SCALE(80), &rs);
	workload(dir, "wal", 1024, false, SQT_SCALE(80), &rs);
	workload(dir, "truncate", 65536, true, SQT_SCALE(60), &rs);
	workload(dir, "wal", 65536, false, SQT_SCALE(60), &rs);
	workload(dir, "delete", 1024, true, SQT_SCALE(40), &rs);
	lpc_sqlite_stats(&st);
	printf("lpc: %llu lookups, %llu hits, %llu reads, %llu writebacks, %llu evictions, %llu fsyncs\n",
	       (unsigned long long)st.lookups, (unsigned long long)st.hits,
	       (unsigned long long)st.reads, (unsigned long long)st.writeback_pages,
	       (unsigned long long)st.evictions, (unsigned long long)st.fsyncs);
	CHECK(st.reads > 0 && st.writeback_pages > 0 && st.fsyncs > 0,
	      "the databases went through lpc");
	return tst_finish();
}
