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
 * its key), large-scan (one cold full scan of large's t on one connection,
 * at the first --threads count: `SELECT count(*), sum(k) FROM t`, both
 * checked; before it the side closes its connections, lpc's last close
 * dropping the file from lpc's cache, unix dropping it from the page cache
 * with posix_fadvise DONTNEED in its cgroup of the same budget, and opens
 * them again: both sides cold, SQLite's own caches empty), tpcb and tpcb-wal (BEGIN IMMEDIATE; UPDATE accounts; SELECT
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
 *
 * Files: this one runs the benchmark (setup, phases, rounds, cleanup);
 * sqlite_db.c builds the databases, sqlite_side.c runs one side's
 * connections, sqlite_child.c the child processes, sqlite_vfs.c counts,
 * sqlite_report.c reports, sqlite_small.c runs the small-program table
 * (sqlite_run.h, sqlite.h).
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
#include "sqlite_run.h"

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

/* ---- cleanup: the files, at exit and on a signal (the children: kchild.c) ---- */

#define SQ_NR_FILES (SD_NR * SV_NR * 4 + 2 * 2) /* + the small program's */
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
	for (unsigned k = 0; k < 2; k++) {
		sq_small_path(x, k, rm_files[n], sizeof(rm_files[0]) - 8);
		memcpy(rm_files[n + 1], rm_files[n], sizeof(rm_files[0]) - 8);
		strcat(rm_files[n + 1], "-journal");
		n += 2;
	}
	snprintf(rm_dir, sizeof(rm_dir), "%s", x->dir);
	cleanup_ctx = x;
	cleanup_owner = getpid();
	cleanup_arm(sq_cleanup_now);
}

/* ---- setup ---- */

/* Whether side v runs: unix with its cgroup, lpc with liblpc_sqlite,
 * lpc_excl with it and its process. */
static bool side_on(const struct sqctx *x, enum sq_vfs v)
{
	return v == SV_UNIX ? x->have_cg : v == SV_LPC ? x->have_lpc : x->kid[v].pid > 0;
}

static void build_rows(struct sq_results *res, const struct bench_opts *o, bool cg, bool lpc,
		       bool excl)
{
	struct sq_row *r = xcalloc((size_t)SQ_NR * o->nr_tconf * SV_NR, sizeof(*r));
	unsigned n = 0;

	for (enum sq_work w = 0; w < SQ_NR; w++)
		for (unsigned t = 0; t < (sq_work_scan(w) ? 1 : o->nr_tconf); t++)
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
	/* + the small program: two processes a round, about 0.3 s each */
	return (o->warmup + sq_rounds(o)) * slices + warm + 0.6 * (o->rounds_set ? o->rounds : 21);
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
			sq_build_select(x->path[d][SV_UNIX], x->rows[d]);
		else
			sq_build_tpcb(x->path[d][SV_UNIX], x->rows[d], x->tellers, x->branches,
				      d == SD_TPCB_WAL);
		sq_copy_file(x->path[d][SV_UNIX], x->path[d][SV_LPC]);
		sq_copy_file(x->path[d][SV_UNIX], x->path[d][SV_LPC_EXCL]);
		for (unsigned v = 0; v < SV_NR; v++)
			sq_sync_drop(x->path[d][v]);
		res->end[d].db_bytes = sq_file_bytes(x->path[d][SV_UNIX]);
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
	x->have_cg = sq_child_start(x, SV_UNIX, name);
#ifdef LPCBENCH_HAVE_LPC_SQLITE
	sq_child_start(x, SV_LPC_EXCL, name);
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
	sq_side_init(x, &x->side, SV_LPC, name);
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

	sq_child_stop(x, SV_UNIX);
	sq_child_stop(x, SV_LPC_EXCL);
	sq_side_cmd(x, &x->side, &c, &r);
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

/* Runs one row for slice_ns; an error is kept in s->err and msg. */
static void run_row(struct sqctx *x, enum sq_work w, enum sq_vfs v, unsigned threads,
		    uint64_t slice_ns, struct sq_sample *s, char *msg, size_t len)
{
	struct sq_cmd c = { .op = CMD_RUN, .d = sq_work_db(w), .w = w, .threads = threads,
			     .slice_ns = slice_ns };
	struct sq_res r;

	if (v == SV_LPC)
		sq_side_cmd(x, &x->side, &c, &r);
	else
		sq_child_call(x, v, &c, &r);
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
			sq_side_cmd(x, &x->side, &c, &r);
		else
			sq_child_call(x, v, &c, &r);
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
			sq_side_cmd(x, &x->side, &c, &r);
		else if (side_on(x, v))
			sq_child_call(x, v, &c, &r);
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
	sq_lpc_counters(&st);
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
	sq_small_run(&x, o->rounds_set ? o->rounds : 0);
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
