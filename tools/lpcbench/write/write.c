/* SPDX-License-Identifier: MIT */
/*
 * write.c - `lpcbench write`, the writes' measurement: 4 KiB writes
 * to durable through lpc, beside the kernel's page cache at equal memory and
 * the device under O_DIRECT.
 *
 * Workloads (each a `struct rounds` of its own, run one after the other):
 *   seq   each thread writes its own 1/T of the file in order, 4 KiB a
 *         write, going on where its last slice stopped (wrapping)
 *   rand  uniformly random 4 KiB pages of the whole file
 *   mix   Zipf pages (theta --zipf-theta, ranks permuted over the file:
 *         zipf.h), 70 % reads and 30 % writes, over a file 4x the cache
 * Every slice ends with each thread making its writes durable (lpc_fsync, or
 * fdatasync), inside the timed slice: a slice's throughput is pages made
 * durable (or read) per second of the whole slice, fsync included.
 *
 * Rows, in every round at every --threads count:
 *   lpc_uring  lpc_pwrite/lpc_pread + lpc_fsync, cfg.io_backend = LPC_IO_URING
 *   lpc_sync   the same in a second cache, cfg.io_backend = LPC_IO_SYNC
 *   kernel     buffered pwrite/pread + fdatasync (what lpc_fsync ends with;
 *              fsync would add the mtime's journal commit) in a child process
 *              inside a memory cgroup limited to lpc's cache size (kchild.h),
 *              on its own copy of the file: lpc's and direct's O_DIRECT
 *              writes would otherwise drop its cached pages
 *   direct     O_DIRECT pwrite/pread + fdatasync: the device, no cache
 * lpc's two caches have --cache-mb each, with the default writeback limits
 * (flusher age 5 s, background 10 %, hard limit 20 % of the frames).  Pages
 * per vectored write are lpc_stats' writeback_pages / vectored_writes over
 * each row's slices (warm-up rounds included).
 *
 * Every page written starts with its page number, as datafile.c stamps the
 * file, so the readers of the mix check every page they read, whichever row
 * wrote it last.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "harness/datafile.h"
#include "harness/kchild.h"
#include "harness/rng.h"
#include "harness/rounds.h"
#include "harness/util.h"
#include "harness/zipf.h"
#include "lpcbench/benches.h"

#define WR_PAGE 4096u
#define WR_BATCH 8	  /* operations between two looks at the stop flag */
#define WR_MIX_WRITE_PCT 30
#define WR_BIG_PAGES 256  /* direct_1m: pages per write (lpc's longest vectored write) */
#define WR_DEF_ROUNDS 11  /* without --rounds: each round ends 39 slices with an fsync */

enum { WW_SEQ, WW_RAND, WW_MIX, WW_NR };
enum { WV_URING, WV_SYNC, WV_KERNEL, WV_DIRECT, WV_DIRECT_1M, WV_NR };

static const char *const ww_name[WW_NR] = { "seq", "rand", "mix" };
static const char *const wv_name[WV_NR] = { "lpc_uring", "lpc_sync", "kernel", "direct",
					    "direct_1m" };

struct wworker {
	alignas(BENCH_CACHELINE) uint64_t rng[WW_NR][WV_NR];
	uint64_t pos[WV_NR]; /* seq: the next page of the thread's part */
	unsigned char *buf;
	unsigned char *big; /* direct_1m's WR_BIG_PAGES pages */
};

struct wctx;

/* What one slice runs: a workload and a row at a thread count.  Made before
 * the fork, so the kernel rows' child finds them at the same address. */
struct wjob {
	struct wctx *x;
	unsigned w, v, threads;
};

/* lpc_stats deltas of a row, summed over its slices. */
struct wacc {
	uint64_t wb_pages, vec_writes, throttled, evictions, skipped_dirty, fallbacks;
};

struct wctx {
	const struct bench_env *env;
	struct datafile df;
	char kpath[PATH_MAX]; /* the kernel rows' copy */
	uint64_t file_bytes, cache_bytes;
	uint32_t nr_pages;
	struct zipf zipf;
	struct lpc_cache *c[2]; /* WV_URING, WV_SYNC */
	struct lpc_file *f[2];
	int dfd;    /* O_DIRECT on the data file */
	int kfd;    /* the child's buffered descriptor on kpath */
	struct kchild kc;
	bool have_cg;
	struct pool *pool;
	unsigned nr_workers;
	struct wworker *wk;
	unsigned cur_w; /* the workload rounds_run is running */
	struct wjob *jobs; /* [WW_NR][WV_NR][nr_tconf] */
	struct wacc acc[WW_NR][WV_NR];
};

/* The hook's argument: one per row (rounds_variant.arg). */
struct wrow {
	struct wctx *x;
	unsigned v;
};

static struct wjob *job_of(struct wctx *x, unsigned w, unsigned v, unsigned threads)
{
	const struct bench_opts *o = x->env->opts;
	unsigned t = 0;

	while (t + 1 < o->nr_tconf && o->threads[t] != threads)
		t++;
	return &x->jobs[((size_t)w * WV_NR + v) * o->nr_tconf + t];
}

/* ---- the timed loop ---- */

static __attribute__((noinline, cold, noreturn)) void
wr_fail(const struct wjob *j, int err, const char *what, uint32_t page)
{
	die_err(err, "write %s %s, %u threads: %s of page %" PRIu32, ww_name[j->w],
		wv_name[j->v], j->threads, what, page);
}

/* One 4 KiB write (stamped with the page number) or read (checked). */
static inline void wr_one(const struct wjob *j, struct wworker *wk, bool wr, uint32_t page,
			  uint64_t n)
{
	const struct wctx *x = j->x;
	uint64_t off = (uint64_t)page * WR_PAGE;
	ssize_t got;

	if (wr) {
		memcpy(wk->buf, &(uint64_t){ page }, sizeof(uint64_t));
		wk->buf[8] = (unsigned char)n; /* the data changes between writes */
	}
	switch (j->v) {
	case WV_URING:
	case WV_SYNC:
		got = wr ? lpc_pwrite(x->f[j->v], wk->buf, WR_PAGE, off) :
			   lpc_pread(x->f[j->v], wk->buf, WR_PAGE, off);
		if (unlikely(got != WR_PAGE))
			wr_fail(j, got < 0 ? (int)-got : EIO, wr ? "lpc_pwrite" : "lpc_pread", page);
		break;
	default:
		got = wr ? pwrite(j->v == WV_KERNEL ? x->kfd : x->dfd, wk->buf, WR_PAGE, (off_t)off) :
			   pread(j->v == WV_KERNEL ? x->kfd : x->dfd, wk->buf, WR_PAGE, (off_t)off);
		if (unlikely(got != WR_PAGE))
			wr_fail(j, got < 0 ? errno : EIO, wr ? "pwrite" : "pread", page);
		break;
	}
	if (!wr && unlikely(*(const uint64_t *)wk->buf != page))
		wr_fail(j, EILSEQ, "the stamp", page);
}

/* direct_1m (seq only): the device's sequential bandwidth, WR_BIG_PAGES
 * stamped pages per O_DIRECT write.  Return: pages written. */
static uint64_t loop_big(const struct wjob *j, unsigned id, struct wworker *wk,
			 const _Atomic unsigned *stop)
{
	const struct wctx *x = j->x;
	uint32_t part = x->nr_pages / j->threads;
	uint32_t run = part < WR_BIG_PAGES ? part : WR_BIG_PAGES;
	uint64_t ops = 0;

	do {
		uint32_t first = wk->pos[j->v] + run > part ? 0 : (uint32_t)wk->pos[j->v];
		uint32_t page = id * part + first;
		ssize_t got;

		for (uint32_t i = 0; i < run; i++)
			memcpy(wk->big + (size_t)i * WR_PAGE, &(uint64_t){ page + i },
			       sizeof(uint64_t));
		got = pwrite(x->dfd, wk->big, (size_t)run * WR_PAGE, (off_t)page * WR_PAGE);
		if (unlikely(got != (ssize_t)run * WR_PAGE))
			wr_fail(j, got < 0 ? errno : EIO, "pwrite", page);
		wk->pos[j->v] = first + run;
		ops += run;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

static uint64_t write_fn(unsigned id, void *arg, const _Atomic unsigned *stop)
{
	const struct wjob *j = arg;
	const struct wctx *x = j->x;
	struct wworker *wk = &x->wk[id];
	uint64_t *rng = &wk->rng[j->w][j->v];
	uint32_t part = x->nr_pages / j->threads;
	uint64_t ops = 0;
	int rc;

	if (j->v == WV_DIRECT_1M) {
		ops = loop_big(j, id, wk, stop);
		goto sync;
	}
	do {
		for (unsigned i = 0; i < WR_BATCH; i++) {
			uint32_t page;
			bool wr = true;

			if (j->w == WW_SEQ) {
				page = id * part + (uint32_t)(wk->pos[j->v]++ % part);
			} else if (j->w == WW_RAND) {
				page = rng_below(rng, x->nr_pages);
			} else {
				page = zipf_page(&x->zipf, rng_unit(rng));
				wr = rng_below(rng, 100) < WR_MIX_WRITE_PCT;
			}
			wr_one(j, wk, wr, page, ops + i);
		}
		ops += WR_BATCH;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));

sync:	/* To durable, inside the slice. */
	if (j->v == WV_URING || j->v == WV_SYNC)
		rc = lpc_fsync(x->f[j->v]);
	else
		rc = fdatasync(j->v == WV_KERNEL ? x->kfd : x->dfd) ? -errno : 0; /* both direct */
	if (rc)
		wr_fail(j, -rc, "the final fsync", 0);
	return ops;
}

/* ---- one slice of a row (rounds_variant.slice) ---- */

static void slice_lpc(void *arg, unsigned threads, uint64_t slice_ns, struct pool_slice *out)
{
	struct wrow *row = arg;
	struct wctx *x = row->x;
	struct wacc *a = &x->acc[x->cur_w][row->v];
	struct lpc_stats s0, s1;

	lpc_stats(x->c[row->v], &s0);
	pool_run(x->pool, threads, write_fn, job_of(x, x->cur_w, row->v, threads), slice_ns, out);
	lpc_stats(x->c[row->v], &s1);
	a->wb_pages += s1.writeback_pages - s0.writeback_pages;
	a->vec_writes += s1.vectored_writes - s0.vectored_writes;
	a->throttled += s1.throttled - s0.throttled;
	a->evictions += s1.evictions - s0.evictions;
	a->skipped_dirty += s1.skipped_dirty - s0.skipped_dirty;
	a->fallbacks = s1.uring_fallbacks;
}

static void slice_kernel(void *arg, unsigned threads, uint64_t slice_ns, struct pool_slice *out)
{
	struct wrow *row = arg;
	struct wctx *x = row->x;

	if (!x->have_cg) {
		memset(out, 0, sizeof(*out)); /* no value: NaN in the tables */
		return;
	}
	kchild_slice(&x->kc, write_fn, job_of(x, x->cur_w, WV_KERNEL, threads), threads, slice_ns,
		     out);
}

static void slice_direct(void *arg, unsigned threads, uint64_t slice_ns, struct pool_slice *out)
{
	struct wrow *row = arg;
	struct wctx *x = row->x;

	pool_run(x->pool, threads, write_fn, job_of(x, x->cur_w, row->v, threads), slice_ns, out);
}

/* ---- setup ---- */

static void write_check_opts(const struct bench_opts *o)
{
	uint64_t file = bench_file_bytes(o);

	if (file / WR_PAGE / bench_max_threads(o) < 1 || file / WR_PAGE > UINT32_MAX)
		die("write: a file of %" PRIu64 " MiB: need a page per thread, at most 2^32 pages",
		    file >> 20);
}

static double write_estimate_s(const struct bench_opts *o)
{
	unsigned rounds = o->rounds_set || o->rounds < WR_DEF_ROUNDS ? o->rounds : WR_DEF_ROUNDS;

	/* The slices (direct_1m in seq only), and about as long again for
	 * the fsyncs that end them. */
	return 2.0 * (o->warmup + rounds) * (WW_NR * (WV_NR - 1) + 1) * o->nr_tconf *
	       o->slice_ms / 1000.0;
}

/* In the child, inside the group: its buffered descriptor. */
static void child_open(void *arg)
{
	struct wctx *x = arg;

	int rc;

	x->kfd = open(x->kpath, O_RDWR | O_CLOEXEC);
	if (x->kfd < 0)
		die_err(errno, "opening %s", x->kpath);
	/* No readahead for the mix's reads: lpc and direct read one page. */
	rc = posix_fadvise(x->kfd, 0, 0, POSIX_FADV_RANDOM);
	if (rc)
		die_err(rc, "posix_fadvise on %s", x->kpath);
}

static char kfile_rm[PATH_MAX];
static pid_t kfile_owner;

static void kfile_remove(void)
{
	if (kfile_rm[0] && getpid() == kfile_owner) {
		unlink(kfile_rm);
		kfile_rm[0] = '\0';
	}
}

/* The kernel rows' own copy of the data file, next to it, dropped from the
 * page cache (removed before the data file's directory, and at exit). */
static void kfile_create(struct wctx *x)
{
	static bool registered;
	int in, out;
	uint64_t left = x->file_bytes;

	if (snprintf(x->kpath, sizeof(x->kpath), "%.*s/kernel", PATH_MAX - 16, x->df.dir) >=
	    (int)sizeof(x->kpath))
		die("the data directory name %s is too long", x->df.dir);
	memcpy(kfile_rm, x->kpath, sizeof(kfile_rm));
	kfile_owner = getpid();
	if (!registered) {
		registered = true;
		if (atexit(kfile_remove)) /* runs before datafile's rmdir */
			die("cannot register the removal of %s", x->kpath);
	}
	in = open(x->df.path, O_RDONLY | O_CLOEXEC);
	out = open(x->kpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (in < 0 || out < 0)
		die_err(errno, "copying %s", x->df.path);
	while (left) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, left, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die_err(n < 0 ? errno : EIO, "copying %s to %s", x->df.path, x->kpath);
		left -= (uint64_t)n;
	}
	if (fdatasync(out))
		die_err(errno, "fdatasync %s", x->kpath);
	posix_fadvise(out, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(in, 0, 0, POSIX_FADV_DONTNEED);
	close(in);
	close(out);
}

static void lpc_open_one(struct wctx *x, unsigned v)
{
	struct lpc_config cfg;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = x->cache_bytes;
	cfg.io_backend = v == WV_URING ? LPC_IO_URING : LPC_IO_SYNC;
	rc = lpc_cache_create(&cfg, &x->c[v]);
	if (rc)
		die_err(-rc, "lpc_cache_create (%" PRIu64 " MiB, %s)", x->cache_bytes >> 20,
			wv_name[v]);
	rc = lpc_file_open(x->c[v], x->df.path, O_RDWR, 0, &x->f[v]);
	if (rc)
		die_err(-rc, "lpc_file_open %s", x->df.path);
}

static void write_setup(struct wctx *x)
{
	const struct bench_opts *o = x->env->opts;
	char name[64];

	x->cache_bytes = (uint64_t)o->cache_mb << 20;
	x->file_bytes = bench_file_bytes(o);
	x->nr_pages = (uint32_t)(x->file_bytes / WR_PAGE);
	x->nr_workers = bench_max_threads(o);
	x->kfd = -1;

	datafile_choose(o->dir, &x->df);
	progress("write: ranking %u pages for Zipf", x->nr_pages);
	zipf_init(&x->zipf, x->nr_pages, o->zipf_theta, o->seed);
	progress_done();
	progress("write: writing %" PRIu64 " MiB twice to %s", x->file_bytes >> 20, x->df.dir);
	datafile_create(&x->df, x->file_bytes);
	kfile_create(x);
	progress_done();
	posix_fadvise(x->dfd = open(x->df.path, O_RDONLY | O_CLOEXEC), 0, 0, POSIX_FADV_DONTNEED);
	close(x->dfd);

	x->wk = xaligned_alloc(BENCH_CACHELINE, x->nr_workers * sizeof(*x->wk));
	memset(x->wk, 0, x->nr_workers * sizeof(*x->wk));
	for (unsigned i = 0; i < x->nr_workers; i++) {
		x->wk[i].buf = xaligned_alloc(WR_PAGE, WR_PAGE);
		memset(x->wk[i].buf, 0x5a, WR_PAGE);
		x->wk[i].big = xaligned_alloc(WR_PAGE, (size_t)WR_BIG_PAGES * WR_PAGE);
		memset(x->wk[i].big, 0x5b, (size_t)WR_BIG_PAGES * WR_PAGE);
		for (unsigned w = 0; w < WW_NR; w++)
			for (unsigned v = 0; v < WV_NR; v++)
				x->wk[i].rng[w][v] = splitmix64(o->seed * 1000003u + i * 64u + w * 8u + v);
	}
	x->jobs = xcalloc((size_t)WW_NR * WV_NR * o->nr_tconf, sizeof(*x->jobs));
	for (unsigned w = 0; w < WW_NR; w++)
		for (unsigned v = 0; v < WV_NR; v++)
			for (unsigned t = 0; t < o->nr_tconf; t++)
				x->jobs[((size_t)w * WV_NR + v) * o->nr_tconf + t] =
					(struct wjob){ x, w, v, o->threads[t] };

	/* The child first, before this process starts threads (lpc's
	 * flusher and reclaimer, the pool).  A plain fork, not an exec
	 * (kchild.h): the kernel rows never call lpc, so the liburcu state
	 * it copies is never used. */
	snprintf(name, sizeof(name), "lpcbench-write.%d", (int)getpid());
	x->have_cg = !kchild_start_pool(&x->kc, name, x->cache_bytes, x->nr_workers, o->pin,
					child_open, x);

	for (unsigned v = WV_URING; v <= WV_SYNC; v++)
		lpc_open_one(x, v);
	x->dfd = datafile_open_direct(&x->df, O_RDWR);
	x->pool = pool_create(x->nr_workers, o->pin);
}

static void write_echo(const struct wctx *x)
{
	const struct bench_opts *o = x->env->opts;

	printf("write: 4 KiB writes to durable (each slice ends with every thread's fsync), lpc against\n"
	       "       the kernel's page cache at equal memory and O_DIRECT\n");
	printf("  file       %" PRIu64 " MiB = %" PRIu32 " pages, %.1fx the cache, in %s/ (%s)%s\n",
	       x->file_bytes >> 20, x->nr_pages, (double)x->file_bytes / (double)x->cache_bytes,
	       x->df.dir, x->df.fstype,
	       x->df.tmpfs ? "; tmpfs: no O_DIRECT, lpc and direct write buffered" : "");
	printf("  memory     %" PRIu64 " MiB: each lpc cache's frames; the kernel rows' page cache\n",
	       x->cache_bytes >> 20);
	if (x->have_cg)
		printf("             kernel: one child process in memory cgroup v%d %s, limit %" PRIu64
		       " MiB, on its own copy of the file\n",
		       x->kc.cg.version, x->kc.cg.path, x->cache_bytes >> 20);
	else
		printf("             kernel: SKIPPED: no writable memory cgroup (%s)\n", x->kc.cg.why);
	printf("  rows       lpc_uring (io_backend LPC_IO_URING), lpc_sync (LPC_IO_SYNC): lpc_pwrite,\n"
	       "             lpc_fsync; kernel: buffered pwrite, fdatasync; direct: O_DIRECT pwrite,\n"
	       "             fdatasync; seq also direct_1m: O_DIRECT writes of %u pages (the device's\n"
	       "             sequential bandwidth, the goal's reference)\n", WR_BIG_PAGES);
	printf("  workloads  seq: each thread its own 1/T of the file in order; rand: uniform pages;\n"
	       "             mix: Zipf (theta %.2f) pages, %d %% reads / %d %% writes, reads checked\n"
	       "             (kernel: POSIX_FADV_RANDOM, no readahead, as lpc and direct)\n",
	       o->zipf_theta, 100 - WR_MIX_WRITE_PCT, WR_MIX_WRITE_PCT);
	printf("  rounds     %u warm-up + %u measured per workload, %u ms of writing per slice\n\n",
	       o->warmup, o->rounds, o->slice_ms);
	fflush(stdout);
}

/* ---- report ---- */

static void print_ratio(const struct bench_env *env, const struct rounds *r, unsigned v1,
			unsigned v2, unsigned t)
{
	char l[96], m[64];

	snprintf(l, sizeof(l), "%s / %s", wv_name[v1], wv_name[v2]);
	snprintf(m, sizeof(m), "ratio_%s_%s", wv_name[v1], wv_name[v2]);
	rounds_print_ratio_at(env, r, l, m, t, v1, v2);
}

static void write_report(const struct wctx *x, const struct rounds *r)
{
	const struct bench_env *env = x->env;
	const struct bench_opts *o = env->opts;
	static const char *const title[WW_NR] = {
		"write seq: sequential 4 KiB writes + fsync, to durable",
		"write rand: random 4 KiB writes + fsync, to durable",
		"write mix: Zipf 70/30 reads/writes + fsync",
	};
	static const char *const plot[WW_NR] = { "write_seq", "write_rand", "write_mix" };

	for (unsigned w = 0; w < WW_NR; w++) {
		double scale = w == WW_MIX ? 1e-3 : (double)WR_PAGE / (1 << 20);

		rounds_print(env, &r[w], title[w], w == WW_MIX ? "kops/s" : "MiB/s", scale,
			     plot[w]);
		printf("\n  ratios within a round, median [min - max]:\n");
		for (unsigned t = 0; t < o->nr_tconf; t++) {
			print_ratio(env, &r[w], WV_URING, WV_KERNEL, t);
			print_ratio(env, &r[w], WV_SYNC, WV_KERNEL, t);
			print_ratio(env, &r[w], WV_URING, WV_DIRECT, t);
			if (w == WW_SEQ) {
				print_ratio(env, &r[w], WV_URING, WV_DIRECT_1M, t);
				print_ratio(env, &r[w], WV_SYNC, WV_DIRECT_1M, t);
			}
			print_ratio(env, &r[w], WV_URING, WV_SYNC, t);
		}
		printf("\n  lpc counters over all the workload's slices (warm-up included):\n");
		for (unsigned v = WV_URING; v <= WV_SYNC; v++) {
			const struct wacc *a = &x->acc[w][v];

			printf("    %-10s pages per vectored write %.1f (%" PRIu64 " pages in %" PRIu64
			       " writes); throttled %" PRIu64 ", evictions %" PRIu64
			       ", skipped dirty %" PRIu64 "\n",
			       wv_name[v], a->vec_writes ? (double)a->wb_pages / (double)a->vec_writes : NAN,
			       a->wb_pages, a->vec_writes, a->throttled, a->evictions, a->skipped_dirty);
			csv_summary(env->csv,
				    &(struct csv_key){ .bench = r[w].bench, .threads = 0,
						       .variant = wv_name[v],
						       .metric = "pages_per_vectored_write" },
				    &(struct summary){ .med = a->vec_writes ? (double)a->wb_pages /
										 (double)a->vec_writes : NAN,
						       .min = NAN, .max = NAN, .n = 1 });
		}
		printf("\n");
	}

	printf("  checks (informational; a loaded machine can miss them):\n");
	for (unsigned t = 0; t < o->nr_tconf; t++) {
		struct summary k = rounds_ratio(&r[WW_RAND], WV_URING, t, WV_KERNEL, t);

		printf("    a) random writes to durable, lpc_uring ahead of kernel at equal memory, %u thread%s: %.2f: %s\n",
		       o->threads[t], o->threads[t] > 1 ? "s" : "", k.med,
		       isnan(k.med) ? "SKIPPED" : k.med > 1 ? "PASS" : "FAIL");
	}
	for (unsigned t = 0; t < o->nr_tconf; t++) {
		struct summary d = rounds_ratio(&r[WW_SEQ], WV_URING, t, WV_DIRECT_1M, t);

		printf("    b) sequential writes, lpc_uring within 10 %% of O_DIRECT 1 MiB writes (>= 0.9), %u thread%s: %.2f: %s\n",
		       o->threads[t], o->threads[t] > 1 ? "s" : "", d.med,
		       d.med >= 0.9 ? "PASS" : "FAIL");
	}
	if (x->acc[WW_SEQ][WV_URING].fallbacks)
		printf("    note: lpc_uring's cache fell back to the sync backend (uring_fallbacks %" PRIu64
		       ")\n", x->acc[WW_SEQ][WV_URING].fallbacks);
	printf("\n");
}

static void write_run(const struct bench_env *env)
{
	static struct wctx x; /* the child's jobs point into it */
	struct rounds r[WW_NR];
	struct wrow rows[WV_NR];
	static void (*const hook[WV_NR])(void *, unsigned, uint64_t, struct pool_slice *) = {
		slice_lpc, slice_lpc, slice_kernel, slice_direct, slice_direct,
	};
	/* Fewer rounds than the others by default: every slice ends with
	 * fsyncs of up to the dirty limit (write_estimate_s). */
	struct bench_opts wo = *env->opts;
	struct bench_env wenv = *env;

	if (!wo.rounds_set && wo.rounds > WR_DEF_ROUNDS)
		wo.rounds = WR_DEF_ROUNDS;
	wenv.opts = &wo;
	env = &wenv;
	memset(&x, 0, sizeof(x));
	x.env = env;
	write_setup(&x);
	write_echo(&x);
	for (unsigned v = 0; v < WV_NR; v++)
		rows[v] = (struct wrow){ &x, v };
	for (unsigned w = 0; w < WW_NR; w++) {
		static const char *const bench_name[WW_NR] = { "write_seq", "write_rand",
							       "write_mix" };

		memset(&r[w], 0, sizeof(r[w]));
		r[w].bench = bench_name[w];
		r[w].nv = w == WW_SEQ ? WV_NR : WV_DIRECT_1M; /* direct_1m: seq only */
		for (unsigned v = 0; v < r[w].nv; v++)
			r[w].v[v] = (struct rounds_variant){ .name = wv_name[v], .fn = write_fn,
							     .arg = &rows[v], .slice = hook[v] };
		x.cur_w = w;
		rounds_run(env, x.pool, &r[w], w == WW_MIX ? "ops_s" : "bytes_s",
			   w == WW_MIX ? 1 : WR_PAGE);
	}
	write_report(&x, r);

	kchild_stop(&x.kc);
	pool_destroy(x.pool);
	for (unsigned v = WV_URING; v <= WV_SYNC; v++) {
		int rc = lpc_file_close(x.f[v]);

		if (!rc)
			rc = lpc_cache_destroy(x.c[v]);
		if (rc)
			die_err(-rc, "closing lpc's %s cache", wv_name[v]);
	}
	close(x.dfd);
	for (unsigned i = 0; i < x.nr_workers; i++) {
		free(x.wk[i].buf);
		free(x.wk[i].big);
	}
	free(x.wk);
	free(x.jobs);
	for (unsigned w = 0; w < WW_NR; w++)
		free(r[w].ops_s);
	zipf_destroy(&x.zipf);
	kfile_remove();
	datafile_remove();
}

const struct bench bench_write = {
	.name = "write",
	.help = "sequential, random and Zipf 70/30 4 KiB writes to durable (fsync\n"
		"           ending each slice), lpc with io_uring and sync beside the kernel's\n"
		"           page cache in a memory cgroup of the same size and O_DIRECT",
	.run = write_run,
	.check_opts = write_check_opts,
	.estimate_s = write_estimate_s,
};
