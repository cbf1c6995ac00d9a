/* SPDX-License-Identifier: MIT */
/*
 * sqlite_side.c - one side of the sqlite benchmark (unix, lpc or lpc_excl):
 * its connections, one per worker, opened, scanned, checked and closed; the
 * timed loops (point selects, TPC-B transactions) its workers run in a
 * slice; and the commands it serves (sq_side_cmd), here for lpc and in a
 * child process for the others (sqlite_child.c).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include <lpc/lpc.h>
#ifdef LPCBENCH_HAVE_LPC_SQLITE
#include <lpc/lpc_sqlite.h>
#endif

#include "harness/cleanup.h"
#include "harness/pool.h"
#include "harness/rng.h"
#include "harness/util.h"
#include "harness/zipf.h"
#include "sqlite_run.h"

/* ---- the timed loops ---- */

/*
 * SQLite's own busy handler (sqlite3_busy_timeout) sleeps 1, 2, 5, ... up to
 * 100 ms between tries: with 8 writers queued on BEGIN IMMEDIATE the lock
 * would sit free for milliseconds and a slice would end up to 100 ms late.
 * This one polls every SQ_BUSY_POLL_NS for up to SQ_BUSY_MS, the same for
 * both VFSes.
 */
static int busy_poll(void *arg, int tries)
{
	struct timespec ts = { 0, SQ_BUSY_POLL_NS };

	(void)arg;
	if ((uint64_t)tries * SQ_BUSY_POLL_NS >= (uint64_t)SQ_BUSY_MS * 1000000u)
		return 0;
	nanosleep(&ts, NULL);
	return 1;
}

static __attribute__((noinline, cold)) void
work_fail(struct sworker *wk, int rc, const char *what)
{
	wk->err = rc ? rc : SQLITE_ERROR;
	snprintf(wk->msg, sizeof(wk->msg), "%s: %s (%d)", what, sqlite3_errmsg(wk->db), rc);
}

static uint64_t select_loop(const struct side *sd, struct sworker *wk, const _Atomic unsigned *stop)
{
	const struct sqctx *x = sd->x;
	enum sq_db d = sq_work_db(sd->w);
	const struct zipf *z = &x->zipf[d == SD_LARGE];
	bool zipf = sd->w == SQ_SMALL_ZIPF || sd->w == SQ_LARGE_ZIPF;
	uint32_t n = (uint32_t)x->rows[d];
	uint64_t ops = 0;

	do {
		for (unsigned i = 0; i < SQ_BATCH; i++) {
			int64_t key = 1 + (int64_t)(zipf ? zipf_page(z, rng_unit(&wk->rng)) :
							   rng_below(&wk->rng, n));
			const unsigned char *v;
			int rc;

			sqlite3_bind_int64(wk->sel, 1, key);
			rc = sqlite3_step(wk->sel);
			if (unlikely(rc != SQLITE_ROW)) {
				work_fail(wk, rc, "select");
				sqlite3_reset(wk->sel);
				return ops;
			}
			v = sqlite3_column_blob(wk->sel, 0);
			if (unlikely(sqlite3_column_bytes(wk->sel, 0) != SQ_VALUE || !v ||
				     memcmp(v, &key, sizeof(key)))) {
				wk->err = SQLITE_CORRUPT;
				snprintf(wk->msg, sizeof(wk->msg),
					 "select: key %" PRId64 " returned another row's value", key);
				sqlite3_reset(wk->sel);
				return ops;
			}
			sqlite3_reset(wk->sel);
		}
		ops += SQ_BATCH;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

static int step_done(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

/* One TPC-B transaction.  Return: SQLITE_OK, or the failing step's code
 * (the transaction rolled back). */
static int tpcb_one(const struct sqctx *x, enum sq_db d, struct sworker *wk)
{
	int64_t aid = 1 + rng_below(&wk->rng, (uint32_t)x->rows[d]);
	int64_t tid = 1 + rng_below(&wk->rng, (uint32_t)x->tellers);
	int64_t bid = (tid - 1) / 10 + 1;
	int64_t delta = (int64_t)rng_below(&wk->rng, 10001) - 5000;
	int rc;

	rc = step_done(wk->begin);
	if (rc)
		return rc;
	sqlite3_bind_int64(wk->upd_acc, 1, delta);
	sqlite3_bind_int64(wk->upd_acc, 2, aid);
	rc = step_done(wk->upd_acc);
	if (!rc) {
		sqlite3_bind_int64(wk->sel_acc, 1, aid);
		rc = sqlite3_step(wk->sel_acc);
		rc = rc == SQLITE_ROW ? SQLITE_OK : rc == SQLITE_DONE ? SQLITE_CORRUPT : rc;
		sqlite3_reset(wk->sel_acc);
	}
	if (!rc) {
		sqlite3_bind_int64(wk->upd_tel, 1, delta);
		sqlite3_bind_int64(wk->upd_tel, 2, tid);
		rc = step_done(wk->upd_tel);
	}
	if (!rc) {
		sqlite3_bind_int64(wk->upd_br, 1, delta);
		sqlite3_bind_int64(wk->upd_br, 2, bid);
		rc = step_done(wk->upd_br);
	}
	if (!rc) {
		sqlite3_bind_int64(wk->ins_hist, 1, tid);
		sqlite3_bind_int64(wk->ins_hist, 2, bid);
		sqlite3_bind_int64(wk->ins_hist, 3, aid);
		sqlite3_bind_int64(wk->ins_hist, 4, delta);
		sqlite3_bind_int64(wk->ins_hist, 5, (int64_t)++wk->mtime);
		rc = step_done(wk->ins_hist);
	}
	if (!rc)
		rc = step_done(wk->commit);
	if (rc && !sqlite3_get_autocommit(wk->db))
		step_done(wk->rollback);
	return rc;
}

static uint64_t tpcb_loop(const struct side *sd, struct sworker *wk, const _Atomic unsigned *stop)
{
	enum sq_db d = sq_work_db(sd->w);
	uint64_t ops = 0;

	do {
		int rc = tpcb_one(sd->x, d, wk);

		if (!rc) {
			ops++;
		} else if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
			wk->busy++;
		} else {
			work_fail(wk, rc, "tpcb transaction");
			return ops;
		}
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

/* large-scan: one full pass over t, whatever stop says (a pass is a fixed
 * amount of work); the count and the sum of the keys (1..rows) checked.
 * Return: the rows scanned. */
static uint64_t scan_once(const struct side *sd, struct sworker *wk)
{
	uint64_t n = sd->x->rows[SD_LARGE];
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(wk->db, "SELECT count(*), sum(k) FROM t", -1, &s, NULL);

	if (rc) {
		work_fail(wk, rc, "scan");
		return 0;
	}
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		work_fail(wk, rc, "scan");
		n = 0;
	} else if ((uint64_t)sqlite3_column_int64(s, 0) != n ||
		   (uint64_t)sqlite3_column_int64(s, 1) != n * (n + 1) / 2) {
		wk->err = SQLITE_CORRUPT;
		snprintf(wk->msg, sizeof(wk->msg), "scan: count %" PRId64 ", sum %" PRId64
			 " for %" PRIu64 " rows", (int64_t)sqlite3_column_int64(s, 0),
			 (int64_t)sqlite3_column_int64(s, 1), n);
		n = 0;
	}
	sqlite3_finalize(s);
	return n;
}

static uint64_t sq_slice_fn(unsigned id, void *arg, const _Atomic unsigned *stop)
{
	struct side *sd = arg;
	struct sworker *wk = &sd->wk[id];
	uint64_t io0 = thread_read_bytes(&wk->iofd), ops;

	memset(&wk->c, 0, sizeof(wk->c));
	wk->err = 0;
	wk->busy = 0;
	sq_count_set(&wk->c);
	ops = sq_work_writes(sd->w) ? tpcb_loop(sd, wk, stop) :
	      sq_work_scan(sd->w)   ? scan_once(sd, wk) :
				      select_loop(sd, wk, stop);
	sq_count_set(NULL);
	wk->io_bytes = thread_read_bytes(&wk->iofd) - io0;
	wk->queries = ops;
	return ops;
}

/* ---- one side: open, warm, run, close ---- */

static void conn_uri(const struct sqctx *x, enum sq_db d, enum sq_vfs v, char *buf, size_t len)
{
	snprintf(buf, len, "file:%s?lpc_cache_mb=%" PRIu64 "&lpc_coherence=%s", x->path[d][v],
		 x->lpc_bytes >> 20, v == SV_LPC_EXCL ? "exclusive" : "detect");
}

#define PREP(db, sql, out)                                                      \
	do {                                                                    \
		rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, \
					out, NULL);                             \
		if (rc)                                                         \
			goto fail;                                              \
	} while (0)

/* Opens every worker's connection to d.  Return: 0, or an SQLite code with
 * msg saying what failed (everything opened is closed again). */
static int side_open(struct side *sd, enum sq_db d, char *msg, size_t len)
{
	const struct sqctx *x = sd->x;
	char uri[PATH_MAX + 64], sql[128];
	int rc = 0;

	sd->d = d;
	sd->open = true;
	conn_uri(x, d, sd->v, uri, sizeof(uri));
	for (unsigned i = 0; i < x->nr_workers; i++) {
		struct sworker *wk = &sd->wk[i];

		rc = sqlite3_open_v2(uri, &wk->db,
				     SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
				     sd->vfs);
		if (rc)
			goto fail;
		sqlite3_busy_handler(wk->db, busy_poll, NULL);
		snprintf(sql, sizeof(sql), "PRAGMA cache_size=-%" PRIu64 "; PRAGMA mmap_size=0",
			 x->conn_bytes >> 10);
		rc = sqlite3_exec(wk->db, sql, NULL, NULL, NULL);
		if (rc)
			goto fail;
		if (d == SD_SMALL || d == SD_LARGE) {
			PREP(wk->db, "SELECT v FROM t WHERE k = ?1", &wk->sel);
			continue;
		}
		rc = sqlite3_exec(wk->db, "PRAGMA synchronous=FULL", NULL, NULL, NULL);
		if (rc)
			goto fail;
		PREP(wk->db, "BEGIN IMMEDIATE", &wk->begin);
		PREP(wk->db, "UPDATE accounts SET abalance = abalance + ?1 WHERE aid = ?2",
		     &wk->upd_acc);
		PREP(wk->db, "SELECT abalance FROM accounts WHERE aid = ?1", &wk->sel_acc);
		PREP(wk->db, "UPDATE tellers SET tbalance = tbalance + ?1 WHERE tid = ?2",
		     &wk->upd_tel);
		PREP(wk->db, "UPDATE branches SET bbalance = bbalance + ?1 WHERE bid = ?2",
		     &wk->upd_br);
		PREP(wk->db,
		     "INSERT INTO history VALUES(?1, ?2, ?3, ?4, ?5, '0123456789012345678901')",
		     &wk->ins_hist);
		PREP(wk->db, "COMMIT", &wk->commit);
		PREP(wk->db, "ROLLBACK", &wk->rollback);
	}
	return 0;
fail:
	snprintf(msg, len, "%s: opening %s: %s (%d)", sq_vfs_name[sd->v], sq_db_name[d],
		 sqlite3_errstr(rc), rc);
	for (unsigned i = 0; i < x->nr_workers; i++)
		if (sd->wk[i].db && sqlite3_errcode(sd->wk[i].db))
			snprintf(msg, len, "%s: opening %s: %s (%d)", sq_vfs_name[sd->v],
				 sq_db_name[d], sqlite3_errmsg(sd->wk[i].db), rc);
	sq_side_close(sd);
	return rc;
}

/* One full pass over the phase's main table on connection 0: fills the
 * caches as far as they go. */
static int side_scan(struct side *sd, char *msg, size_t len)
{
	const char *sql = sd->d == SD_SMALL || sd->d == SD_LARGE ?
			  "SELECT count(*), sum(length(v)) FROM t" :
			  "SELECT count(*), sum(abalance) FROM accounts";
	char *err = NULL;
	int rc = sqlite3_exec(sd->wk[0].db, sql, NULL, NULL, &err);

	if (rc)
		snprintf(msg, len, "%s: scan: %s", sq_vfs_name[sd->v], err ? err : sqlite3_errstr(rc));
	sqlite3_free(err);
	return rc;
}

static int one_int64(sqlite3 *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);

	if (rc)
		return rc;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(s, 0);
		rc = 0;
	}
	sqlite3_finalize(s);
	return rc;
}

/* TPC-B's invariant: every table's balances add up to the history's deltas;
 * and PRAGMA quick_check.  Return: 0, or -1 with msg. */
static int side_check(struct side *sd, char *msg, size_t len)
{
	static const char *const sums[4] = {
		"SELECT total(delta) FROM history", "SELECT total(abalance) FROM accounts",
		"SELECT total(tbalance) FROM tellers", "SELECT total(bbalance) FROM branches",
	};
	sqlite3 *db = sd->wk[0].db;
	int64_t v[4] = { 0 };
	sqlite3_stmt *s;
	int rc;

	for (int i = 0; i < 4; i++) {
		rc = one_int64(db, sums[i], &v[i]);
		if (rc || v[i] != v[0]) {
			snprintf(msg, len, "%s: TPC-B check: %s = %" PRId64 ", history %" PRId64 " (%s)",
				 sq_vfs_name[sd->v], sums[i], v[i], v[0], sqlite3_errstr(rc));
			return -1;
		}
	}
	rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &s, NULL);
	if (!rc) {
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(s, 0), "ok"))
			snprintf(msg, len, "%s: quick_check: %s", sq_vfs_name[sd->v],
				 sqlite3_column_text(s, 0));
		else if (rc == SQLITE_ROW)
			rc = 0;
		sqlite3_finalize(s);
	}
	if (rc && !msg[0])
		snprintf(msg, len, "%s: quick_check: %s", sq_vfs_name[sd->v], sqlite3_errstr(rc));
	return msg[0] ? -1 : 0;
}

void sq_side_close(struct side *sd)
{
	for (unsigned i = 0; i < sd->x->nr_workers; i++) {
		struct sworker *wk = &sd->wk[i];
		sqlite3_stmt **st[] = { &wk->sel, &wk->begin, &wk->upd_acc, &wk->sel_acc,
					&wk->upd_tel, &wk->upd_br, &wk->ins_hist, &wk->commit,
					&wk->rollback };

		for (size_t j = 0; j < ARRAY_SIZE(st); j++) {
			sqlite3_finalize(*st[j]);
			*st[j] = NULL;
		}
		if (wk->db)
			sqlite3_close_v2(wk->db);
		wk->db = NULL;
	}
	sd->open = false;
}

/* Runs (w, threads) for slice_ns on this process's pool; sums into *s. */
static void side_run(struct side *sd, enum sq_work w, unsigned threads, uint64_t slice_ns,
		     struct sq_sample *s, char *msg, size_t len)
{
	memset(s, 0, sizeof(*s));
	sd->w = w;
	pool_run(sd->pool, threads, sq_slice_fn, sd, slice_ns, &s->ps);
	for (unsigned i = 0; i < threads; i++) {
		const struct sworker *wk = &sd->wk[i];

		s->queries += wk->queries;
		s->busy += wk->busy;
		s->io_bytes += wk->io_bytes;
		sq_count_add(&s->c, &wk->c);
		if (wk->err && !s->err) {
			s->err = wk->err;
			snprintf(msg, len, "%s %s, %u threads: %s", sq_vfs_name[sd->v],
				 sq_work_name[w], threads, wk->msg);
		}
	}
}

void sq_side_init(struct sqctx *x, struct side *sd, enum sq_vfs v, const char *vfs)
{
	sd->v = v;
	sd->x = x;
	snprintf(sd->vfs, sizeof(sd->vfs), "%s", vfs);
	sd->wk = xaligned_alloc(BENCH_CACHELINE, x->nr_workers * sizeof(*sd->wk));
	memset(sd->wk, 0, x->nr_workers * sizeof(*sd->wk));
	for (unsigned i = 0; i < x->nr_workers; i++) {
		sd->wk[i].iofd = -1;
		sd->wk[i].rng = splitmix64(x->env->opts->seed * 1000003u + i * 64u + v);
	}
	sd->pool = pool_create(x->nr_workers, x->env->opts->pin);
}

/* unix: the database file dropped from the page cache (the side's process,
 * in its cgroup; its connections closed or not yet reading).  lpc: nothing
 * to do here (its connections' last close dropped the file from lpc's
 * cache). */
static void side_drop(const struct sqctx *x, const struct side *sd, enum sq_db d)
{
	int fd;

	if (sd->v != SV_UNIX)
		return;
	fd = open(x->path[d][sd->v], O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
}

/* Does one command on this process's side (the child's, or lpc's here). */
void sq_side_cmd(struct sqctx *x, struct side *sd, const struct sq_cmd *c, struct sq_res *r)
{
	memset(r, 0, sizeof(*r));
	switch (c->op) {
	case CMD_SETUP:
		break;
	case CMD_OPEN:
		side_drop(x, sd, (enum sq_db)c->d); /* start cold */
		r->err = side_open(sd, (enum sq_db)c->d, r->msg, sizeof(r->msg));
		if (!r->err)
			r->err = side_scan(sd, r->msg, sizeof(r->msg));
		break;
	case CMD_RUN: {
		struct lpc_stats a, b;
		uint64_t slice_ns = c->slice_ns;

		if (sq_work_scan((enum sq_work)c->w)) {
			/* Cold, outside the timing: every connection closed
			 * (lpc's last close drops the file from its cache),
			 * unix's file dropped from the page cache, all opened
			 * again (SQLite's own caches empty); then one pass on
			 * one connection (slice 0: scan_once ignores stop). */
			sq_side_close(sd);
			side_drop(x, sd, sd->d);
			r->err = side_open(sd, sd->d, r->msg, sizeof(r->msg));
			if (r->err)
				break;
			slice_ns = 0;
		}
		if (sd->v != SV_UNIX)
			sq_lpc_counters(&a);
		side_run(sd, (enum sq_work)c->w, c->threads, slice_ns, &r->s, r->msg,
			 sizeof(r->msg));
		r->err = r->s.err;
		if (sd->v != SV_UNIX) {
			sq_lpc_counters(&b);
			r->s.lookups = b.lookups - a.lookups;
			r->s.hits = b.hits - a.hits;
			r->s.reads = b.reads - a.reads;
			r->s.read_around = b.read_around - a.read_around;
			r->s.vwrites = b.vectored_writes - a.vectored_writes;
			r->s.fsyncs = b.fsyncs - a.fsyncs;
			r->s.evictions = b.evictions - a.evictions;
		}
		break;
	}
	case CMD_CLOSE:
		if (sd->open && (sd->d == SD_TPCB || sd->d == SD_TPCB_WAL))
			r->err = side_check(sd, r->msg, sizeof(r->msg));
		if (sd->open)
			sq_side_close(sd);
		break;
	}
}

void sq_lpc_counters(struct lpc_stats *st)
{
	memset(st, 0, sizeof(*st));
#ifdef LPCBENCH_HAVE_LPC_SQLITE
	lpc_sqlite_stats(st);
#endif
}
