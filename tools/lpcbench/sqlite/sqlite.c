/* SPDX-License-Identifier: MIT */
/*
 * sqlite.c - the sqlite benchmark (the SQLite VFS's measurement): SQLite
 * through its own `unix` VFS on the kernel's page cache, confined by a memory
 * cgroup, against SQLite through lpc's VFS "lpc" (liblpc_sqlite), at equal
 * memory, side by side in interleaved rounds.
 *
 * Sizes (B = lpc's budget, --cache-mb if given, else 16 MiB; C = SQLite's
 * per-connection cache, PRAGMA cache_size, B / 8: 2 MiB by default, SQLite's
 * own default size):
 *   small     t(k INTEGER PRIMARY KEY, v BLOB of 100 bytes), about 4 x C
 *             (= B / 2): exceeds every connection's cache, fits lpc's budget
 *   large     the same table, about 4 x B
 *   tpcb      TPC-B's four tables (accounts about 4 x C), rollback journal
 *             (DELETE), synchronous FULL
 *   tpcb-wal  the same in WAL mode, synchronous FULL
 * Each is built once with the unix VFS and copied, so that each side has a
 * file of its own (a second process on lpc's file would be another test).
 *
 * Rows: small-uniform, small-zipf, large-uniform, large-zipf (point selects
 * `SELECT v FROM t WHERE k = ?`, keys uniform or Zipf --zipf-theta over
 * ranks permuted over the keys; every row returned is checked: v starts with
 * its key), tpcb and tpcb-wal (BEGIN IMMEDIATE; UPDATE accounts; SELECT
 * abalance; UPDATE tellers; UPDATE branches; INSERT INTO history; COMMIT;
 * the sums of the four tables are checked at the end of the phase, and
 * PRAGMA quick_check), each at every --threads count with one connection
 * per thread, through unix and through lpc.
 *
 * lpc_excl: the same as lpc, but every connection opens its copy of the
 * database with lpc_coherence=exclusive (liblpc_sqlite's refusing mode: an
 * OFD lock keeps other processes out, SQLite's locks between this
 * process's connections are the VFS's own, no system call per query).  Its
 * rows run in a second child process with an lpc cache of its own of the
 * same budget (one process has one lpc cache: in this process both lpc
 * files would share B).  Both children are started by exec, not a bare
 * fork (kchild.h: a child that calls lpc must not inherit this process's
 * liburcu registry).  unix with PRAGMA
 * locking_mode=EXCLUSIVE is not a row: bench/README.md says why.
 *
 * Equal memory.  lpc's rows run in this process: one lpc cache of B (the
 * URI parameter lpc_cache_mb of the first open) under SQLite's own
 * per-connection caches.  The unix rows run in a child process in a memory
 * cgroup (memcg.h) whose limit is set, once each phase's connections are
 * open and warm and again before every unix slice (cg_fit), to B + the
 * child's anonymous memory at that moment (SQLite's
 * per-connection caches, which the lpc side has as well, its heap and the
 * workers' stacks; there is no swap): the kernel's page cache gets B.  The
 * cgroup's page cache at the end of each phase is printed to show it.
 *
 * Phases.  Each database is a phase: both sides open their connections
 * (the child drops its file from the page cache first), scan the table once
 * (fills both caches as far as they go), run one warm slice at the most
 * threads, then the limit is set and the workload warms the caches for a
 * while more (WARM_S), then --warmup unrecorded and --rounds measured
 * rounds: every thread count runs every row of the phase once per round,
 * unix then lpc, and every ratio is taken within the round.
 *
 * Counting: sqlite_vfs.c (VFS calls and system calls per thread, the same
 * for both sides) and, for lpc's own I/O, lpc_sqlite_stats() (backend reads
 * and vectored writes).  Hit ratios: lpc's from lpc_sqlite_stats (hits /
 * lookups); the kernel's from the bytes the querying threads fetched from
 * storage (/proc/thread-self/io read_bytes; 1 - bytes / 4 KiB / preads):
 * kernel readahead would count as misses, and write-back is not in it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include <lpc/lpc.h>
#ifdef LPCBENCH_HAVE_LPC_SQLITE
#include <lpc/lpc_sqlite.h>
#endif

#include "harness/cleanup.h"
#include "harness/datafile.h"
#include "harness/kchild.h"
#include "harness/memcg.h"
#include "harness/rng.h"
#include "harness/util.h"
#include "harness/zipf.h"
#include "lpcbench/benches.h"
#include "sqlite.h"

#define SQ_DEF_CACHE_MB 16u /* B; C = B / 8 */
#define SQ_VALUE 100u       /* bytes of t.v */
#define SQ_ROW_EST 112u     /* bytes of file per row of t, about */
#define SQ_ACC_EST 98u      /* ... per row of accounts */
#define SQ_BATCH 8          /* selects between two looks at the stop flag */
#define SQ_WARM_SLICE_NS 250000000u
#define SQ_SLACK (512u << 10) /* over B + anon: the child's heap may grow a little */
#define SQ_BUSY_MS 10000
#define SQ_OPEN_ROOM ((uint64_t)256 << 20) /* the cgroup's room over B while opening */
/* Sanitizer builds: the child's anonymous memory grows all the time (ASan's
 * quarantine), so the limit is not lowered to B + anon (it would kill it):
 * such a run checks that everything works, it measures nothing. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SQ_SANITIZER 1
#else
#define SQ_SANITIZER 0
#endif
#define SQ_BUSY_POLL_NS 100000u /* a waiting writer polls the lock this often */

/* Seconds each side warms with the phase's workload after the limit is set,
 * at the default --slice-ms (100); both this and SQ_WARM_SLICE_NS scale with
 * --slice-ms, so that a short smoke run stays short. */
static const double warm_s[SD_NR] = { 0.5, 2.0, 0.5, 0.5 };

static double warm_scale(const struct bench_opts *o)
{
	return o->slice_ms / 100.0;
}

static uint64_t warm_slice_ns(const struct bench_opts *o)
{
	return (uint64_t)(SQ_WARM_SLICE_NS * warm_scale(o));
}

struct sworker {
	alignas(BENCH_CACHELINE) uint64_t rng;
	sqlite3 *db;
	sqlite3_stmt *sel;
	sqlite3_stmt *begin, *upd_acc, *sel_acc, *upd_tel, *upd_br, *ins_hist, *commit,
		*rollback;
	struct sq_count c;
	uint64_t queries, busy, io_bytes, mtime;
	int iofd;
	int err;
	char msg[120];
};

struct sqctx;

/* One side's connections: lpc's in this process, unix's in the child. */
struct side {
	enum sq_vfs v;
	char vfs[64]; /* the counting VFS over it */
	struct pool *pool;
	struct sworker *wk;
	enum sq_db d; /* the open phase */
	bool open;
	/* the slice being run */
	enum sq_work w;
	const struct sqctx *x;
};

/* Parent -> child commands, child -> parent results (pipes). */
enum { CMD_SETUP, CMD_OPEN, CMD_RUN, CMD_CLOSE };

struct sq_cmd {
	int op;
	int v; /* CMD_SETUP: the child's side */
	int d, w;
	unsigned threads;
	uint64_t slice_ns;
};

struct sq_res {
	int err;
	char msg[160];
	struct sq_sample s;
};

struct sqctx {
	const struct bench_env *env;
	char dir[PATH_MAX];
	char path[SD_NR][SV_NR][PATH_MAX];
	uint64_t rows[SD_NR]; /* rows of t, or of accounts */
	uint64_t tellers, branches;
	uint64_t lpc_bytes, conn_bytes;
	unsigned nr_workers;
	struct zipf zipf[2]; /* over small's and large's keys */
	struct side side;    /* this process's: lpc (the child's: unix) */
	bool have_cg, have_lpc;
	/* the children (kchild.h): [SV_UNIX] in the memory cgroup
	 * kid[SV_UNIX].cg, [SV_LPC_EXCL]; pid 0: none */
	struct kchild kid[SV_NR];
};

/* ---- cleanup: the files, at exit and on a signal (the children: kchild.c) ---- */

#define SQ_NR_FILES (SD_NR * SV_NR * 4)
static char rm_files[SQ_NR_FILES][PATH_MAX + 16];
static char rm_dir[PATH_MAX];
static struct sqctx *cleanup_ctx;
static pid_t cleanup_owner;
/* Async-signal-safe: unlink, rmdir. */
static void sq_cleanup_now(void)
{
	struct sqctx *x = cleanup_ctx;

	if (!x || getpid() != cleanup_owner)
		return;
	cleanup_ctx = NULL;
	for (unsigned i = 0; i < SQ_NR_FILES; i++)
		if (rm_files[i][0])
			unlink(rm_files[i]);
	if (rm_dir[0])
		rmdir(rm_dir);
}

static void sq_cleanup_arm(struct sqctx *x)
{
	static const char *const sfx[4] = { "", "-journal", "-wal", "-shm" };
	unsigned n = 0;

	for (unsigned d = 0; d < SD_NR; d++)
		for (unsigned v = 0; v < SV_NR; v++)
			for (unsigned s = 0; s < 4; s++)
				snprintf(rm_files[n++], sizeof(rm_files[0]), "%s%s", x->path[d][v],
					 sfx[s]);
	snprintf(rm_dir, sizeof(rm_dir), "%s", x->dir);
	cleanup_ctx = x;
	cleanup_owner = getpid();
	cleanup_arm(sq_cleanup_now);
}

/* ---- small helpers ---- */

static void xexec(sqlite3 *db, const char *sql, const char *what)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		die("sqlite: %s: %s: %s", what, sql, msg ? msg : sqlite3_errmsg(db));
}

static uint64_t file_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_size;
}

/* fdatasync, then drop from the page cache (it was just written). */
static void sync_drop(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die_err(errno, "opening %s", path);
	if (fdatasync(fd))
		die_err(errno, "fdatasync %s", path);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

static void copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	uint64_t left = file_bytes(from);

	if (in < 0 || out < 0)
		die_err(errno, "copying %s to %s", from, to);
	while (left) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, left, 0);

		if (n <= 0)
			die_err(n < 0 ? errno : EIO, "copying %s to %s", from, to);
		left -= (uint64_t)n;
	}
	close(in);
	close(out);
}

/* ---- building the databases (this process, unix VFS, before the fork) ---- */

static void fill_value(unsigned char *v, int64_t key)
{
	memset(v, 0x5a ^ (unsigned char)key, SQ_VALUE);
	memcpy(v, &key, sizeof(key));
}

static sqlite3 *build_open(const char *path)
{
	sqlite3 *db;

	unlink(path);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "unix"))
		die("sqlite: creating %s: %s", path, sqlite3_errmsg(db));
	xexec(db, "PRAGMA page_size=4096; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", "build");
	return db;
}

static void build_select(const char *path, uint64_t rows)
{
	sqlite3 *db = build_open(path);
	unsigned char v[SQ_VALUE];
	sqlite3_stmt *ins;

	xexec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB NOT NULL); BEGIN", "build");
	if (sqlite3_prepare_v2(db, "INSERT INTO t VALUES(?1, ?2)", -1, &ins, NULL))
		die("sqlite: %s", sqlite3_errmsg(db));
	for (uint64_t k = 1; k <= rows; k++) {
		fill_value(v, (int64_t)k);
		sqlite3_bind_int64(ins, 1, (int64_t)k);
		sqlite3_bind_blob(ins, 2, v, SQ_VALUE, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			die("sqlite: building %s: %s", path, sqlite3_errmsg(db));
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	xexec(db, "COMMIT", "build");
	sqlite3_close(db);
}

static void build_tpcb(const char *path, uint64_t accounts, uint64_t tellers, uint64_t branches,
		       bool wal)
{
	sqlite3 *db = build_open(path);
	sqlite3_stmt *ins;

	xexec(db,
	      "CREATE TABLE branches(bid INTEGER PRIMARY KEY, bbalance INTEGER, filler TEXT);"
	      "CREATE TABLE tellers(tid INTEGER PRIMARY KEY, bid INTEGER, tbalance INTEGER, filler TEXT);"
	      "CREATE TABLE accounts(aid INTEGER PRIMARY KEY, bid INTEGER, abalance INTEGER, filler TEXT);"
	      "CREATE TABLE history(tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER,"
	      " mtime INTEGER, filler TEXT);"
	      "BEGIN", "build tpcb");
	if (sqlite3_prepare_v2(db, "INSERT INTO accounts VALUES(?1, ?2, 0, printf('%084d', 0))",
			       -1, &ins, NULL))
		die("sqlite: %s", sqlite3_errmsg(db));
	for (uint64_t a = 1; a <= accounts; a++) {
		sqlite3_bind_int64(ins, 1, (int64_t)a);
		sqlite3_bind_int64(ins, 2, (int64_t)((a - 1) * branches / accounts + 1));
		if (sqlite3_step(ins) != SQLITE_DONE)
			die("sqlite: building %s: %s", path, sqlite3_errmsg(db));
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	for (uint64_t t = 1; t <= tellers; t++) {
		char sql[160];

		snprintf(sql, sizeof(sql),
			 "INSERT INTO tellers VALUES(%" PRIu64 ", %" PRIu64 ", 0, printf('%%084d', 0))",
			 t, (t - 1) / 10 + 1);
		xexec(db, sql, "build tpcb");
	}
	for (uint64_t b = 1; b <= branches; b++) {
		char sql[160];

		snprintf(sql, sizeof(sql),
			 "INSERT INTO branches VALUES(%" PRIu64 ", 0, printf('%%088d', 0))", b);
		xexec(db, sql, "build tpcb");
	}
	xexec(db, "COMMIT", "build tpcb");
	if (wal)
		xexec(db, "PRAGMA journal_mode=WAL", "build tpcb");
	sqlite3_close(db);
}

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

static uint64_t sq_slice_fn(unsigned id, void *arg, const _Atomic unsigned *stop)
{
	struct side *sd = arg;
	struct sworker *wk = &sd->wk[id];
	uint64_t io0 = thread_read_bytes(&wk->iofd), ops;

	memset(&wk->c, 0, sizeof(wk->c));
	wk->err = 0;
	wk->busy = 0;
	sq_count_set(&wk->c);
	ops = sq_work_writes(sd->w) ? tpcb_loop(sd, wk, stop) : select_loop(sd, wk, stop);
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
static void side_close(struct side *sd);

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
	side_close(sd);
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

static void side_close(struct side *sd)
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

static void side_init(struct sqctx *x, struct side *sd, enum sq_vfs v, const char *vfs)
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

static void lpc_counters(struct lpc_stats *st);

/* Does one command on this process's side (the child's, or lpc's here). */
static void side_cmd(struct sqctx *x, struct side *sd, const struct sq_cmd *c, struct sq_res *r)
{
	memset(r, 0, sizeof(*r));
	switch (c->op) {
	case CMD_SETUP:
		break;
	case CMD_OPEN:
		if (sd->v == SV_UNIX) { /* start cold: the file out of the page cache */
			int fd = open(x->path[c->d][sd->v], O_RDONLY | O_CLOEXEC);

			if (fd >= 0) {
				posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
				close(fd);
			}
		}
		r->err = side_open(sd, (enum sq_db)c->d, r->msg, sizeof(r->msg));
		if (!r->err)
			r->err = side_scan(sd, r->msg, sizeof(r->msg));
		break;
	case CMD_RUN: {
		struct lpc_stats a, b;

		if (sd->v != SV_UNIX)
			lpc_counters(&a);
		side_run(sd, (enum sq_work)c->w, c->threads, c->slice_ns, &r->s, r->msg,
			 sizeof(r->msg));
		r->err = r->s.err;
		if (sd->v != SV_UNIX) {
			lpc_counters(&b);
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
			side_close(sd);
		break;
	}
}

/* ---- the children: the unix side in the memory cgroup, the lpc_excl side ---- */

/* The lpc_excl child's own VFS: lpc registered in it, counted. */
static void child_lpc_vfs(char *name, size_t len)
{
#ifdef LPCBENCH_HAVE_LPC_SQLITE
	int rc = lpc_sqlite_register(0);

	if (rc)
		die("sqlite: lpc_sqlite_register: %s", sqlite3_errstr(rc));
	rc = sq_vfs_wrap(LPC_SQLITE_VFS_NAME, name, (unsigned)len);
	if (rc)
		die("sqlite: cannot wrap the lpc VFS: %s", sqlite3_errstr(rc));
#else
	snprintf(name, len, "count-lpc");
#endif
}

/* A child's state: its copy of the run's layout, and its side. */
struct sq_kid {
	struct sqctx *x;
	struct side sd;
};

/* The child's commands (kchild_serve); CMD_SETUP says which side it is. */
static void child_serve(void *arg, const void *cmd, void *res)
{
	struct sq_kid *k = arg;
	const struct sq_cmd *c = cmd;
	char name[64] = "count-unix";

	if (!c) { /* stop */
		if (k->sd.open)
			side_close(&k->sd);
		return;
	}
	if (c->op == CMD_SETUP) { /* unix: inside the cgroup now */
		if (c->v != SV_UNIX)
			child_lpc_vfs(name, sizeof(name));
		side_init(k->x, &k->sd, (enum sq_vfs)c->v, name);
	}
	side_cmd(k->x, &k->sd, c, res);
}

static void sq_layout(struct sqctx *x, const struct bench_opts *o);

/*
 * bench_sqlite.child: `lpcbench --kchild sqlite DIR CMD_FD RES_FD <options>`,
 * exec'd by child_start.  Makes the same layout as the parent's from the same
 * options (sizes, paths under DIR, Zipf ranks: all derived from them) and
 * serves.  An exec, not a fork, because the lpc_excl side uses lpc: a forked
 * child would inherit liburcu's registry of this process's readers (kchild.h).
 */
static void sq_child(const struct bench_env *env, const char *dir, int cmd_fd, int res_fd)
{
	struct sq_kid k = { .x = xcalloc(1, sizeof(*k.x)) };
	struct sqctx *x = k.x;
	int rc;

	x->env = env;
	if (snprintf(x->dir, sizeof(x->dir), "%s", dir) >= (int)sizeof(x->dir))
		die("sqlite: the directory name %s is too long", dir);
	sq_layout(x, env->opts);
	rc = sq_vfs_install();
	if (rc)
		die("sqlite: cannot install the counting VFS: %s", sqlite3_errstr(rc));
	zipf_init(&x->zipf[0], (uint32_t)x->rows[SD_SMALL], env->opts->zipf_theta, env->opts->seed);
	zipf_init(&x->zipf[1], (uint32_t)x->rows[SD_LARGE], env->opts->zipf_theta, env->opts->seed);
	kchild_serve(cmd_fd, res_fd, sizeof(struct sq_cmd), sizeof(struct sq_res), child_serve, &k);
}

static void child_call(struct sqctx *x, enum sq_vfs v, const struct sq_cmd *c, struct sq_res *r)
{
	kchild_call(&x->kid[v], c, r);
}

/* Starts side v's process (exec'd, sq_child): unix in the memory cgroup,
 * whose limit is raised for now (set per phase once the connections are
 * warm); lpc_excl with no cgroup (lpc's budget bounds it).  Return: false
 * if it cannot run (no cgroup for unix). */
static bool child_start(struct sqctx *x, enum sq_vfs v, const char *name)
{
	struct sq_cmd c = { .op = CMD_SETUP, .v = (int)v };
	struct sq_res r;
	struct kchild_spec s = {
		.what = v == SV_UNIX ? "sqlite: the unix side" : "sqlite: the lpc_excl side",
		.cg_name = v == SV_UNIX ? name : NULL, .cg_limit = x->lpc_bytes + SQ_OPEN_ROOM,
		.cmd_len = sizeof(struct sq_cmd), .res_len = sizeof(struct sq_res),
		.bench = "sqlite", .bench_arg = x->dir,
	};

	if (kchild_start(&x->kid[v], &s))
		return false;
	child_call(x, v, &c, &r);
	return true;
}

static void child_stop(struct sqctx *x, enum sq_vfs v)
{
	kchild_stop(&x->kid[v]);
}

/* Whether side v runs: unix with its cgroup, lpc with liblpc_sqlite,
 * lpc_excl with it and its process. */
static bool side_on(const struct sqctx *x, enum sq_vfs v)
{
	return v == SV_UNIX ? x->have_cg : v == SV_LPC ? x->have_lpc : x->kid[v].pid > 0;
}

/* ---- setup ---- */

static uint64_t sq_budget(const struct bench_opts *o)
{
	return (uint64_t)(o->cache_mb_set ? o->cache_mb : SQ_DEF_CACHE_MB) << 20;
}

static void build_rows(struct sq_results *res, const struct bench_opts *o, bool cg, bool lpc,
		       bool excl)
{
	struct sq_row *r = xcalloc((size_t)SQ_NR * o->nr_tconf * SV_NR, sizeof(*r));
	unsigned n = 0;

	for (enum sq_work w = 0; w < SQ_NR; w++)
		for (unsigned t = 0; t < o->nr_tconf; t++)
			for (enum sq_vfs v = 0; v < SV_NR; v++)
				r[n++] = (struct sq_row){ w, v, o->threads[t],
							  v == SV_UNIX ? !cg : v == SV_LPC ? !lpc : !excl };
	res->rows = r;
	res->nr_rows = n;
}

static uint64_t slice_ns_of(const struct bench_opts *o, enum sq_work w)
{
	(void)w;
	return (uint64_t)o->slice_ms * 1000000u;
}

/* --rounds, else SQ_DEF_ROUNDS (three sides per round: about the time 21
 * rounds of two took). */
static unsigned sq_rounds(const struct bench_opts *o)
{
	return o->rounds_set || o->rounds < SQ_DEF_ROUNDS ? o->rounds : SQ_DEF_ROUNDS;
}

static double sq_estimate_s(const struct bench_opts *o)
{
	double slices = 0, warm = 0;

	for (enum sq_work w = 0; w < SQ_NR; w++)
		slices += (double)o->nr_tconf * SV_NR * (double)slice_ns_of(o, w) / 1e9;
	for (enum sq_db d = 0; d < SD_NR; d++)
		warm += SV_NR * (warm_s[d] + SQ_WARM_SLICE_NS / 1e9) * warm_scale(o);
	return (o->warmup + sq_rounds(o)) * slices + warm;
}

static void sq_check_opts(const struct bench_opts *o)
{
	uint64_t b = sq_budget(o);

	if (b < (8u << 20))
		die("sqlite: --cache-mb %" PRIu64 " is too small: at least 8 (the per-connection cache is an eighth of it)",
		    b >> 20);
	if (4 * b / SQ_ROW_EST > UINT32_MAX)
		die("sqlite: --cache-mb %" PRIu64 " is too big for this benchmark's keys", b >> 20);
}

/* The sizes and paths of a run, from its options and x->dir: the same in
 * this process and in the children (sq_child). */
static void sq_layout(struct sqctx *x, const struct bench_opts *o)
{
	x->lpc_bytes = sq_budget(o);
	x->conn_bytes = x->lpc_bytes / 8;
	x->nr_workers = bench_max_threads(o);
	x->rows[SD_SMALL] = 4 * x->conn_bytes / SQ_ROW_EST;
	x->rows[SD_LARGE] = 4 * x->lpc_bytes / SQ_ROW_EST;
	x->rows[SD_TPCB] = x->rows[SD_TPCB_WAL] = 4 * x->conn_bytes / SQ_ACC_EST;
	x->branches = x->rows[SD_TPCB] / 100000 + 1;
	x->tellers = 10 * x->branches;
	for (unsigned d = 0; d < SD_NR; d++)
		for (unsigned v = 0; v < SV_NR; v++)
			if (snprintf(x->path[d][v], sizeof(x->path[d][v]), "%s/%s.%s.db",
				     x->dir, sq_db_name[d], sq_vfs_name[v]) >=
			    (int)sizeof(x->path[d][v]) - 16)
				die("sqlite: the directory name %s is too long", x->dir);
}

static void sq_setup(struct sqctx *x, struct sq_results *res)
{
	const struct bench_opts *o = x->env->opts;
	struct datafile df;
	char name[64];
	int rc;

	rc = sq_vfs_install();
	if (rc)
		die("sqlite: cannot install the counting VFS: %s", sqlite3_errstr(rc));
	datafile_choose(o->dir, &df);
	snprintf(x->dir, sizeof(x->dir), "%s", df.dir);
	if (!mkdtemp(x->dir))
		die_err(errno, "creating a directory %s", x->dir);
	sq_layout(x, o);
	res->lpc_bytes = x->lpc_bytes;
	res->conn_bytes = x->conn_bytes;
	sq_cleanup_arm(x);

	for (unsigned d = 0; d < SD_NR; d++) {
		progress("sqlite: building %s (%" PRIu64 " rows) in %s", sq_db_name[d], x->rows[d],
			 x->dir);
		if (d == SD_SMALL || d == SD_LARGE)
			build_select(x->path[d][SV_UNIX], x->rows[d]);
		else
			build_tpcb(x->path[d][SV_UNIX], x->rows[d], x->tellers, x->branches,
				   d == SD_TPCB_WAL);
		copy_file(x->path[d][SV_UNIX], x->path[d][SV_LPC]);
		copy_file(x->path[d][SV_UNIX], x->path[d][SV_LPC_EXCL]);
		for (unsigned v = 0; v < SV_NR; v++)
			sync_drop(x->path[d][v]);
		res->end[d].db_bytes = file_bytes(x->path[d][SV_UNIX]);
		progress_done();
	}
	progress("sqlite: ranking keys for Zipf");
	zipf_init(&x->zipf[0], (uint32_t)x->rows[SD_SMALL], o->zipf_theta, o->seed);
	zipf_init(&x->zipf[1], (uint32_t)x->rows[SD_LARGE], o->zipf_theta, o->seed);
	progress_done();

	/* The children first, before this process starts threads (a smaller
	 * fork).  Both exec (sq_child), so what this process did with lpc and
	 * RCU before, here or in `lpcbench all`'s earlier benchmarks, does
	 * not reach them. */
	snprintf(name, sizeof(name), "lpcbench-sqlite.%d", (int)getpid());
	x->have_cg = child_start(x, SV_UNIX, name);
#ifdef LPCBENCH_HAVE_LPC_SQLITE
	child_start(x, SV_LPC_EXCL, name);
#endif
	res->memcg = x->have_cg;
	res->memcg_version = x->kid[SV_UNIX].cg.version;
	snprintf(res->memcg_why, sizeof(res->memcg_why), "%s", x->kid[SV_UNIX].cg.why);

#ifdef LPCBENCH_HAVE_LPC_SQLITE
	rc = lpc_sqlite_register(0);
	if (rc)
		die("sqlite: lpc_sqlite_register: %s", sqlite3_errstr(rc));
	rc = sq_vfs_wrap(LPC_SQLITE_VFS_NAME, name, sizeof(name));
	if (rc)
		die("sqlite: cannot wrap the lpc VFS: %s", sqlite3_errstr(rc));
	x->have_lpc = true;
#else
	snprintf(name, sizeof(name), "count-lpc");
	x->have_lpc = false;
#endif
	res->have_lpc = x->have_lpc;
	side_init(x, &x->side, SV_LPC, name);
	build_rows(res, o, x->have_cg, x->have_lpc, side_on(x, SV_LPC_EXCL));
}

static void sq_echo(const struct sqctx *x, const struct sq_results *res)
{
	const struct bench_opts *o = x->env->opts;

	printf("sqlite: SQLite %s, point selects and TPC-B, the unix VFS on the kernel's page cache against\n"
	       "        the VFS \"lpc\" (liblpc_sqlite) at equal memory, one connection per thread\n",
	       sqlite3_libversion());
	printf("  memory     lpc: a cache of %" PRIu64 " MiB (lpc_cache_mb)%s\n", x->lpc_bytes >> 20,
	       o->cache_mb_set ? "" : " (--cache-mb for another size)");
	if (res->memcg)
		printf("             unix: one child process in memory cgroup v%d %s, limit set per phase\n"
		       "             to %" PRIu64 " MiB + the child's anonymous memory once its connections are warm\n",
		       res->memcg_version, x->kid[SV_UNIX].cg.path, x->lpc_bytes >> 20);
	else
		printf("             unix: SKIPPED: no writable memory cgroup (%s)\n", res->memcg_why);
	printf("             both: SQLite's own cache of %" PRIu64 " KiB per connection (PRAGMA cache_size), mmap_size 0\n",
	       x->conn_bytes >> 10);
	if (!res->have_lpc)
		printf("  lpc rows   SKIPPED: lpcbench was built without liblpc_sqlite\n");
	if (SQ_SANITIZER)
		printf("  SANITIZER  build: the cgroup's limit stays %" PRIu64 " MiB over lpc's budget (the sanitizer's\n"
		       "             memory would not fit B + anon): not equal memory, and slow; a check, not a measurement\n",
		       SQ_OPEN_ROOM >> 20);
	printf("  databases  in %s/:\n", x->dir);
	for (unsigned d = 0; d < SD_NR; d++)
		printf("             %-9s %6.1f MiB = %4.1fx the connection cache, %4.2fx lpc's (%" PRIu64 " %s)\n",
		       sq_db_name[d], (double)res->end[d].db_bytes / 1048576.0,
		       (double)res->end[d].db_bytes / (double)x->conn_bytes,
		       (double)res->end[d].db_bytes / (double)x->lpc_bytes, x->rows[d],
		       d < SD_TPCB ? "rows of t" : "accounts");
	printf("  tpcb       %" PRIu64 " branches, %" PRIu64 " tellers; BEGIN IMMEDIATE, a waiting writer polls the lock\n"
	       "             every %u us for up to %d ms; tpcb: journal DELETE, tpcb-wal: WAL; synchronous FULL\n",
	       x->branches, x->tellers, SQ_BUSY_POLL_NS / 1000, SQ_BUSY_MS);
	printf("  zipf       theta %.2f over the keys (ranks permuted, seed %" PRIu64 ")\n", o->zipf_theta,
	       o->seed);
	printf("  phases     per database: open, scan once, warm %.2f s at the most threads, set the limit,\n"
	       "             warm %.1f-%.1f s more, then %u warm-up and %u measured rounds (unix, lpc, lpc_excl in turn)\n",
	       warm_slice_ns(o) / 1e9, warm_s[SD_SMALL] * warm_scale(o),
	       warm_s[SD_LARGE] * warm_scale(o), o->warmup, sq_rounds(o));
	printf("  counting   VFS calls by a counting VFS over each; system calls: the unix VFS's system-call\n"
	       "             table and fdatasync/fsync wrapped (exact for unix and for what lpc's VFS delegates\n"
	       "             to it), plus lpc's backend reads and vectored writes (lpc_sqlite_stats)\n");
	printf("  hits       lpc: lpc_sqlite_stats hits / lookups; unix: 1 - storage bytes read by the querying\n"
	       "             threads (/proc/thread-self/io) / 4 KiB / preads\n\n");
	fflush(stdout);
}

static void sq_teardown(struct sqctx *x)
{
	struct sq_cmd c = { .op = CMD_CLOSE };
	struct sq_res r;

	child_stop(x, SV_UNIX);
	child_stop(x, SV_LPC_EXCL);
	side_cmd(x, &x->side, &c, &r);
	pool_destroy(x->side.pool);
	for (unsigned i = 0; i < x->nr_workers; i++)
		if (x->side.wk[i].iofd >= 0)
			close(x->side.wk[i].iofd);
	free(x->side.wk);
	zipf_destroy(&x->zipf[0]);
	zipf_destroy(&x->zipf[1]);
	sq_cleanup_now();
}

/* ---- measuring ---- */

static void lpc_counters(struct lpc_stats *st)
{
	memset(st, 0, sizeof(*st));
#ifdef LPCBENCH_HAVE_LPC_SQLITE
	lpc_sqlite_stats(st);
#endif
}

/* Runs one row for slice_ns; an error is kept in s->err and msg. */
static void run_row(struct sqctx *x, enum sq_work w, enum sq_vfs v, unsigned threads,
		    uint64_t slice_ns, struct sq_sample *s, char *msg, size_t len)
{
	struct sq_cmd c = { .op = CMD_RUN, .d = sq_work_db(w), .w = w, .threads = threads,
			     .slice_ns = slice_ns };
	struct sq_res r;

	if (v == SV_LPC)
		side_cmd(x, &x->side, &c, &r);
	else
		child_call(x, v, &c, &r);
	*s = r.s;
	if (r.err)
		snprintf(msg, len, "%s", r.msg);
}

static void csv_sample(const struct bench_env *env, unsigned round, const struct sq_row *row,
		       const struct sq_sample *s)
{
	char var[48];
	struct csv_key k = { "sqlite", round + 1, row->threads, var, NULL };
	const struct {
		const char *m;
		uint64_t v;
	} f[] = {
		{ "queries", s->queries }, { "wall_ns", s->ps.wall_ns }, { "cpu_ns", s->ps.cpu_ns },
		{ "busy", s->busy }, { "io_bytes", s->io_bytes }, { "xread", s->c.xread },
		{ "xwrite", s->c.xwrite }, { "xsync", s->c.xsync }, { "sys_read", s->c.sys_read },
		{ "sys_write", s->c.sys_write }, { "sys_lock", s->c.sys_lock },
		{ "sys_sync", s->c.sys_sync }, { "sys_other", s->c.sys_other },
		{ "lpc_lookups", s->lookups }, { "lpc_hits", s->hits }, { "lpc_reads", s->reads },
		{ "lpc_vectored_writes", s->vwrites }, { "lpc_fsyncs", s->fsyncs },
		{ "lpc_evictions", s->evictions },
	};

	if (!env->csv)
		return;
	snprintf(var, sizeof(var), "%s/%s", sq_work_name[row->w], sq_vfs_name[row->v]);
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		if (i >= 13 && row->v == SV_UNIX)
			break;
		k.metric = f[i].m;
		csv_raw(env->csv, &k, (double)f[i].v);
	}
}

/* A side that failed (open or a slice) sits out the rest of the phase. */
static void side_failed(struct sq_results *res, enum sq_db d, enum sq_vfs v, const char *msg)
{
	struct sq_phase_end *e = &res->end[d];

	if (!e->err[v][0]) {
		snprintf(e->err[v], sizeof(e->err[v]), "%s", msg);
		fprintf(stderr, "lpcbench: sqlite %s: %s\n", sq_db_name[d], msg);
	}
}

static bool row_runs(const struct sq_results *res, const struct sq_row *row, enum sq_db d)
{
	return sq_work_db(row->w) == d && !row->skip && !res->end[d].err[row->v][0];
}

static void open_both(struct sqctx *x, enum sq_db d, struct sq_results *res)
{
	struct sq_cmd c = { .op = CMD_OPEN, .d = d };
	struct sq_res r;

	/* Room for the new connections until warm() sets the phase's limit. */
	if (x->have_cg)
		memcg_set_limit(&x->kid[SV_UNIX].cg, x->lpc_bytes + SQ_OPEN_ROOM);
	for (enum sq_vfs v = 0; v < SV_NR; v++) {
		if (!side_on(x, v))
			continue;
		if (v == SV_LPC)
			side_cmd(x, &x->side, &c, &r);
		else
			child_call(x, v, &c, &r);
		if (r.err)
			side_failed(res, d, v, r.msg);
	}
}

static void close_both(struct sqctx *x, enum sq_db d, struct sq_results *res)
{
	struct sq_cmd c = { .op = CMD_CLOSE };
	struct sq_res r;

	for (enum sq_vfs v = 0; v < SV_NR; v++) {
		if (v == SV_LPC)
			side_cmd(x, &x->side, &c, &r);
		else if (side_on(x, v))
			child_call(x, v, &c, &r);
		else
			continue;
		if (r.err)
			side_failed(res, d, v, r.msg);
	}
}

/*
 * Sets the cgroup's limit to B + the child's anonymous memory now (+ a little
 * slack), so that its page cache gets B.  Called after the first warm slice
 * and before every slice of the unix side after it: SQLite's per-connection
 * caches keep growing until each is full (8 x 32 MiB take many rounds to
 * fill at --cache-mb 256), and a limit set once would leave the page cache
 * less and less.  Records the smallest page cache seen.
 */
static void cg_fit(struct sqctx *x, enum sq_db d, struct sq_phase_end *e)
{
	uint64_t anon, file;
	int err;

	if (!x->have_cg)
		return;
	anon = memcg_stat(&x->kid[SV_UNIX].cg, x->kid[SV_UNIX].cg.version == 1 ? "rss" : "anon");
	file = memcg_stat(&x->kid[SV_UNIX].cg, x->kid[SV_UNIX].cg.version == 1 ? "cache" : "file");
	if (e->cg_limit && file < e->cg_file_min)
		e->cg_file_min = file; /* after a slice under the last limit */
	e->cg_limit = x->lpc_bytes + (anon == UINT64_MAX ? 0 : anon) + SQ_SLACK;
	if (SQ_SANITIZER)
		e->cg_limit = x->lpc_bytes + SQ_OPEN_ROOM;
	err = memcg_set_limit(&x->kid[SV_UNIX].cg, e->cg_limit);
	if (err)
		fprintf(stderr, "lpcbench: sqlite %s: setting the cgroup's limit to %" PRIu64 " MiB: %s\n",
			sq_db_name[d], e->cg_limit >> 20, strerror(err));
}

/* Warms both sides with the phase's first workload at the most threads:
 * one slice, the cgroup's limit, then warm_s[d] more each. */
static void warm(struct sqctx *x, enum sq_db d, struct sq_results *res)
{
	const struct bench_opts *o = x->env->opts;
	unsigned t = x->nr_workers;
	struct sq_phase_end *e = &res->end[d];
	enum sq_work w = SQ_NR;
	struct sq_sample s;
	char msg[160] = "";
	uint64_t t0 = now_ns();

	for (enum sq_work i = 0; i < SQ_NR && w == SQ_NR; i++)
		if (sq_work_db(i) == d)
			w = i;
	/* the Zipf rows come second: warm with them, their hot set settles */
	if (w == SQ_SMALL_UNI || w == SQ_LARGE_UNI)
		w++;
	progress("sqlite %s: warming", sq_db_name[d]);
	for (enum sq_vfs v = 0; v < SV_NR; v++) {
		if (!side_on(x, v) || e->err[v][0])
			continue;
		run_row(x, w, v, t, warm_slice_ns(o), &s, msg, sizeof(msg));
		if (s.err)
			side_failed(res, d, v, msg);
	}
	cg_fit(x, d, e);
	for (enum sq_vfs v = 0; v < SV_NR; v++) {
		uint64_t t1 = now_ns();

		if (!side_on(x, v) || e->err[v][0])
			continue;
		while ((double)(now_ns() - t1) / 1e9 < warm_s[d] * warm_scale(o)) {
			if (v == SV_UNIX)
				cg_fit(x, d, e);
			run_row(x, w, v, t, warm_slice_ns(o), &s, msg, sizeof(msg));
			if (s.err) {
				side_failed(res, d, v, msg);
				break;
			}
		}
	}
	progress_done();
	e->warm_s = (double)(now_ns() - t0) / 1e9;
}

static void run_phase(struct sqctx *x, enum sq_db d, struct sq_results *res, uint64_t t_start,
		      double est)
{
	const struct bench_opts *o = x->env->opts;
	unsigned total = o->warmup + sq_rounds(o);
	struct sq_phase_end *e = &res->end[d];
	struct lpc_stats st;

	e->ran = true;
	progress("sqlite %s: opening and scanning", sq_db_name[d]);
	open_both(x, d, res);
	progress_done();
	warm(x, d, res);
	e->cg_file_min = UINT64_MAX;
	for (unsigned r = 0; r < total; r++) {
		bool warmup = r < o->warmup;
		double el = (double)(now_ns() - t_start) / 1e9;

		progress("sqlite %s: %s round %u/%u, ~%.0f s left", sq_db_name[d],
			 warmup ? "warm-up" : "measured", warmup ? r + 1 : r - o->warmup + 1,
			 warmup ? o->warmup : sq_rounds(o), est > el ? est - el : 0);
		for (unsigned i = 0; i < res->nr_rows; i++) {
			const struct sq_row *row = &res->rows[i];
			struct sq_sample s, *dst;
			char msg[160] = "";

			if (!row_runs(res, row, d))
				continue;
			dst = warmup ? &s : sq_sample(res, r - o->warmup, i);
			if (row->v == SV_UNIX)
				cg_fit(x, d, e);
			run_row(x, row->w, row->v, row->threads, slice_ns_of(o, row->w), dst, msg,
				sizeof(msg));
			if (dst->err)
				side_failed(res, d, row->v, msg);
			else if (!warmup)
				csv_sample(x->env, r - o->warmup, row, dst);
		}
	}
	progress_done();
	if (x->have_cg) {
		e->cg_usage = memcg_usage(&x->kid[SV_UNIX].cg);
		e->cg_file = memcg_stat(&x->kid[SV_UNIX].cg, x->kid[SV_UNIX].cg.version == 1 ? "cache" : "file");
		e->cg_anon = memcg_stat(&x->kid[SV_UNIX].cg, x->kid[SV_UNIX].cg.version == 1 ? "rss" : "anon");
	}
	lpc_counters(&st);
	e->lpc_frames = st.frames;
	close_both(x, d, res);
}

static void sq_run(const struct bench_env *env)
{
	const struct bench_opts *o = env->opts;
	struct sqctx x = { .env = env };
	struct sq_results res = { .rounds = sq_rounds(o) };
	uint64_t t0;

	sq_setup(&x, &res);
	sq_echo(&x, &res);
	res.s = xcalloc((size_t)res.rounds * res.nr_rows, sizeof(*res.s));
	t0 = now_ns();
	for (enum sq_db d = 0; d < SD_NR; d++)
		run_phase(&x, d, &res, t0, sq_estimate_s(o));
	printf("measured in %.1f s\n\n", (double)(now_ns() - t0) / 1e9);
	sq_teardown(&x);
	sq_report(env, &res);
	free(res.s);
	free(res.rows);
	/* A wrong row, a failed check or an SQLite error is not a speed:
	 * the run fails (after the report, which says where). */
	for (enum sq_db d = 0; d < SD_NR; d++)
		for (enum sq_vfs v = 0; v < SV_NR; v++)
			if (res.end[d].err[v][0])
				die("sqlite: %s through %s failed: %s", sq_db_name[d], sq_vfs_name[v],
				    res.end[d].err[v]);
}

const struct bench bench_sqlite = {
	.name = "sqlite",
	.help = "SQLite point selects (a database 4x the connection cache, and 4x lpc's)\n"
		"           and TPC-B (rollback journal, WAL): the unix VFS in a memory cgroup\n"
		"           against the VFS \"lpc\" at equal memory; --cache-mb sets lpc's budget [16]",
	.run = sq_run,
	.check_opts = sq_check_opts,
	.estimate_s = sq_estimate_s,
	.child = sq_child,
};
