/* SPDX-License-Identifier: MIT */
/*
 * stream.c - `lpcbench stream`: one thread reading uniformly random pages of
 * a cold file four times the cache, with many misses in flight or one.
 * Interleaved rounds of one slice per row, one thread each:
 *
 *   pread       lpc_pread of one page at a time (one miss, one device read
 *               at a time: queue depth 1)
 *   batch32     lpc_page_get_batch of 32 random pages, then 32 puts
 *   stream64    a read stream (lpc_stream_*) whose callback yields random
 *               pages, look-ahead up to 64
 *   direct_qd32 the device's own limit from one thread: O_DIRECT io_uring
 *               reads of random pages, 32 in flight, no cache
 *   kernel      the kernel's buffered pread(2) of one page at a time, in a
 *               child process whose memory cgroup holds its page cache to
 *               lpc's budget (harness/kchild.h; no row where no group can
 *               be made), POSIX_FADV_RANDOM
 *
 * Each lpc row has its own cache (io_uring backend, O_DIRECT, the default
 * readahead, which random reads never start), so the rows do not share
 * pages; the warm-up round fills them, so the measured rounds see the
 * steady state of a random reader: about a quarter hits.  Counted in pages
 * per second; reported as median [min - max] over the rounds, and ratios
 * within each round.  The goals (informational: a loaded machine misses
 * them): stream64 >= 0.8x direct_qd32 and >= 4x pread.
 *
 * Then lpc_stats' batch and stream counters of the batch32 and stream64
 * caches (lpc_stats(3): batches, runs per batch, pages per run).
 *
 * Default: a 16 MiB cache and a 64 MiB file, 7 rounds of 100 ms (a few
 * seconds); --cache-mb / --file-mb / --rounds / --slice-ms for the full
 * sizes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "harness/csv.h"
#include "harness/datafile.h"
#include "harness/kchild.h"
#include "harness/rng.h"
#include "harness/rounds.h"
#include "harness/util.h"
#include "lpcbench/benches.h"

#define SB_PS 4096u
#define SB_BATCH 32
#define SB_QD 32
#define SB_DISTANCE 64
#define SB_DEF_CACHE_MB 16
#define SB_DEF_ROUNDS 7

enum { SV_PREAD, SV_BATCH, SV_STREAM, SV_DIRECT, SV_KERNEL, SV_NR };
static const char *const sv_name[SV_NR] = { "pread", "batch32", "stream64", "direct_qd32",
					     "kernel" };

struct sctx {
	struct lpc_cache *c[3];
	struct lpc_file *f[3];
	uint64_t pages;
	uint64_t seed;
	int dfd, kfd;
	const char *path;
	struct kchild kc;
	bool have_cg;
	int err;
	char why[96];
	unsigned char *buf; /* SB_QD pages, aligned */
};

struct svar {
	struct sctx *x;
	int v;
};

static int fail(struct sctx *x, int err, const char *what)
{
	if (!x->err) {
		x->err = err;
		snprintf(x->why, sizeof(x->why), "%s", what);
	}
	return err;
}

struct gen {
	uint64_t rng, pages;
};

static int gen_cb(void *arg, uint64_t *index, void **user)
{
	struct gen *g = arg;

	(void)user;
	*index = xorshift64s(&g->rng) % g->pages;
	return 1;
}

static uint64_t direct_qd32(struct sctx *x, uint64_t *rng, const _Atomic unsigned *stop)
{
	struct io_uring ring;
	unsigned freev[SB_QD], nfree = SB_QD; /* buffer slots not in flight */
	uint64_t ops = 0;
	int rc = io_uring_queue_init(SB_QD, &ring, 0);

	if (rc < 0) {
		fail(x, -rc, "io_uring_queue_init");
		return 0;
	}
	for (unsigned i = 0; i < SB_QD; i++)
		freev[i] = i;
	for (;;) {
		bool stopping = atomic_load_explicit(stop, memory_order_relaxed);
		struct io_uring_cqe *cqe;

		while (!stopping && nfree) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			unsigned slot;

			if (!sqe)
				break;
			slot = freev[--nfree];
			io_uring_prep_read(sqe, x->dfd, x->buf + (size_t)slot * SB_PS, SB_PS,
					   (xorshift64s(rng) % x->pages) * SB_PS);
			io_uring_sqe_set_data64(sqe, slot);
		}
		if (nfree == SB_QD)
			break;
		rc = io_uring_submit_and_wait(&ring, 1);
		if (rc < 0 && rc != -EINTR) {
			fail(x, -rc, "io_uring_submit_and_wait");
			break;
		}
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (cqe->res != (int)SB_PS)
				fail(x, cqe->res < 0 ? -cqe->res : EIO, "direct read");
			else
				ops++;
			freev[nfree++] = (unsigned)io_uring_cqe_get_data64(cqe);
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	io_uring_queue_exit(&ring);
	return ops;
}

static uint64_t stream_fn(unsigned id, void *arg, const _Atomic unsigned *stop)
{
	struct svar *sv = arg;
	struct sctx *x = sv->x;
	uint64_t rng = splitmix64(x->seed + (uint64_t)sv->v * 7919 + id), ops = 0;
	struct lpc_file *f = sv->v < 3 ? x->f[sv->v] : NULL;

	x->seed++;
	switch (sv->v) {
	case SV_PREAD:
		while (!atomic_load_explicit(stop, memory_order_relaxed)) {
			ssize_t r = lpc_pread(f, x->buf, SB_PS, (xorshift64s(&rng) % x->pages) * SB_PS);

			if (r != (ssize_t)SB_PS)
				return fail(x, r < 0 ? (int)-r : EIO, "lpc_pread"), ops;
			ops++;
		}
		break;
	case SV_BATCH: {
		uint64_t idx[SB_BATCH];
		struct lpc_page *pages[SB_BATCH];
		int errs[SB_BATCH];

		while (!atomic_load_explicit(stop, memory_order_relaxed)) {
			int got;

			for (unsigned i = 0; i < SB_BATCH; i++)
				idx[i] = xorshift64s(&rng) % x->pages;
			got = lpc_page_get_batch(f, idx, SB_BATCH, 0, pages, errs);
			for (unsigned i = 0; i < SB_BATCH; i++)
				lpc_page_put(pages[i]);
			if (got != SB_BATCH)
				return fail(x, got < 0 ? -got : EIO, "lpc_page_get_batch"), ops;
			ops += SB_BATCH;
		}
		break;
	}
	case SV_STREAM: {
		struct gen g = { .rng = rng, .pages = x->pages };
		struct lpc_stream *s;
		int rc = lpc_stream_open(f, gen_cb, &g,
					 &(struct lpc_stream_opts){ .max_distance = SB_DISTANCE },
					 &s);

		if (rc)
			return fail(x, -rc, "lpc_stream_open"), ops;
		while (!atomic_load_explicit(stop, memory_order_relaxed)) {
			struct lpc_page *p;

			rc = lpc_stream_next(s, &p, NULL);
			if (rc != 1) {
				fail(x, rc < 0 ? -rc : EIO, "lpc_stream_next");
				break;
			}
			lpc_page_put(p);
			ops++;
		}
		lpc_stream_close(s); /* with its look-ahead in flight */
		break;
	}
	case SV_DIRECT:
		ops = direct_qd32(x, &rng, stop);
		break;
	default: /* SV_KERNEL, in the child */
		while (!atomic_load_explicit(stop, memory_order_relaxed)) {
			ssize_t r = pread(x->kfd, x->buf, SB_PS,
					  (off_t)((xorshift64s(&rng) % x->pages) * SB_PS));

			if (r != (ssize_t)SB_PS)
				return fail(x, r < 0 ? errno : EIO, "pread"), ops;
			ops++;
		}
		break;
	}
	return ops;
}

static void kernel_slice(void *arg, unsigned threads, uint64_t slice_ns, struct pool_slice *out)
{
	struct svar *sv = arg;

	if (!sv->x->have_cg) {
		memset(out, 0, sizeof(*out)); /* no value: NaN in the tables */
		return;
	}
	kchild_slice(&sv->x->kc, stream_fn, arg, threads, slice_ns, out);
}

static void child_open(void *arg)
{
	struct sctx *x = arg;

	x->kfd = open(x->path, O_RDONLY | O_CLOEXEC);
	if (x->kfd < 0)
		die_err(errno, "opening %s", x->path);
	if (posix_fadvise(x->kfd, 0, 0, POSIX_FADV_RANDOM))
		die_err(errno, "posix_fadvise");
}

static uint64_t sb_cache_mb(const struct bench_opts *o)
{
	return o->cache_mb_set ? o->cache_mb : SB_DEF_CACHE_MB;
}

static double stream_estimate_s(const struct bench_opts *o)
{
	unsigned rounds = o->rounds_set ? o->rounds : SB_DEF_ROUNDS;

	return (double)(rounds + o->warmup) * SV_NR * o->slice_ms / 1000.0;
}

static void stream_run(const struct bench_env *env0)
{
	struct bench_opts o = *env0->opts;
	struct bench_env env = *env0;
	struct sctx x = { 0 };
	struct svar sv[SV_NR];
	struct rounds r = { .bench = "stream", .nv = SV_NR };
	struct datafile df;
	struct pool *pool;
	uint64_t cache = sb_cache_mb(&o) << 20, bytes;
	char name[64];

	/* One thread: the point is many misses in flight from one. */
	o.threads[0] = 1;
	o.nr_tconf = 1;
	if (!o.rounds_set)
		o.rounds = SB_DEF_ROUNDS;
	o.cache_mb = (unsigned)(cache >> 20);
	env.opts = &o;
	bytes = o.file_mb_set ? (uint64_t)o.file_mb << 20 : 4 * cache;
	x.pages = bytes / SB_PS;
	x.seed = o.seed;
	datafile_choose(o.dir, &df);
	printf("== stream: one thread reading random 4 KiB pages of a cold %" PRIu64
	       " MiB file through\n  a %" PRIu64 " MiB cache (%s, %s): lpc_pread one page at a"
	       " time, lpc_page_get_batch of %u,\n  a read stream (look-ahead up to %u); the device"
	       " (O_DIRECT io_uring, %u in flight) and\n  the kernel's buffered pread in a memory"
	       " cgroup of the cache's size; %u rounds of %u ms\n\n",
	       bytes >> 20, cache >> 20, df.dir, df.fstype, SB_BATCH, SB_DISTANCE, SB_QD,
	       o.rounds, o.slice_ms);
	fflush(stdout);
	progress("stream: writing a %" PRIu64 " MiB file", bytes >> 20);
	datafile_create(&df, bytes);
	progress_done();
	datafile_drop(&df);
	x.path = df.path;
	x.buf = xaligned_alloc(SB_PS, SB_PS * SB_QD);
	memset(x.buf, 0, SB_PS * SB_QD);
	for (int m = 0; m < 3; m++) {
		struct lpc_config cfg;
		int rc;

		lpc_config_init(&cfg);
		cfg.cache_bytes = cache;
		cfg.page_size = SB_PS;
		cfg.io_backend = LPC_IO_URING;
		rc = lpc_cache_create(&cfg, &x.c[m]);
		if (rc == 0)
			rc = lpc_file_open(x.c[m], df.path, O_RDONLY, 0, &x.f[m]);
		if (rc < 0)
			die_err(-rc, "stream: cache or file");
		lpc_fadvise(x.f[m], 0, 0, LPC_FADV_RANDOM);
	}
	x.dfd = datafile_open_direct(&df, O_RDONLY);
	for (int v = 0; v < SV_NR; v++) {
		sv[v] = (struct svar){ .x = &x, .v = v };
		r.v[v] = (struct rounds_variant){ .name = sv_name[v], .fn = stream_fn,
						  .arg = &sv[v],
						  .slice = v == SV_KERNEL ? kernel_slice : NULL };
	}
	/* The kernel row's child: forked with sv[] set (it runs stream_fn on
	 * its copy of them), before it reads; it never calls lpc. */
	snprintf(name, sizeof(name), "lpcbench-stream.%d", (int)getpid());
	x.have_cg = !kchild_start_pool(&x.kc, name, cache, 1, o.pin, child_open, &x);
	if (!x.have_cg)
		printf("  kernel row: no memory cgroup (%s): not measured\n\n", x.kc.cg.why);
	pool = pool_create(1, o.pin);
	rounds_run(&env, pool, &r, "kpages_per_s", 1e-3);
	pool_destroy(pool);
	if (x.err)
		die_err(x.err, "stream: %s failed", x.why);

	rounds_print(&env, &r, "stream: random pages per second, one thread", "k/s", 1e-3,
		     "stream");
	printf("\n  ratios within a round, median [min - max]:\n");
	rounds_print_ratio_at(&env, &r, "stream64 / pread", "ratio_stream_pread", 0, SV_STREAM,
			      SV_PREAD);
	rounds_print_ratio_at(&env, &r, "batch32 / pread", "ratio_batch_pread", 0, SV_BATCH,
			      SV_PREAD);
	rounds_print_ratio_at(&env, &r, "stream64 / direct_qd32", "ratio_stream_direct", 0,
			      SV_STREAM, SV_DIRECT);
	rounds_print_ratio_at(&env, &r, "batch32 / direct_qd32", "ratio_batch_direct", 0, SV_BATCH,
			      SV_DIRECT);
	if (x.have_cg)
		rounds_print_ratio_at(&env, &r, "pread / kernel", "ratio_pread_kernel", 0,
				      SV_PREAD, SV_KERNEL);
	{
		struct summary a = rounds_ratio(&r, SV_STREAM, 0, SV_DIRECT, 0);
		struct summary b = rounds_ratio(&r, SV_STREAM, 0, SV_PREAD, 0);

		printf("\n  checks (informational; a loaded machine can miss them):\n");
		printf("    a) stream64 >= 0.8x direct_qd32: %.2f: %s\n", a.med,
		       a.med >= 0.8 ? "PASS" : "FAIL");
		printf("    b) stream64 >= 4x pread: %.2f: %s\n\n", b.med, b.med >= 4 ? "PASS" : "FAIL");
	}
	{
		/* lpc_stats(3)'s batch and stream counters of the two rows'
		 * caches, over every round (warm-up included): how many
		 * read I/Os a batch made, and how many pages each carried
		 * (random pages: mostly runs of one, adjacency by chance). */
		struct lpc_stats sb, ss;

		lpc_stats(x.c[SV_BATCH], &sb);
		lpc_stats(x.c[SV_STREAM], &ss);
		printf("  counters over all rounds (warm-up included):\n");
		printf("    batch32   batches %10" PRIu64 "  runs %10" PRIu64 "  pages %10" PRIu64
		       "  runs/batch %6.2f  pages/run %6.3f\n",
		       sb.batches, sb.batch_runs, sb.batch_pages,
		       sb.batches ? (double)sb.batch_runs / (double)sb.batches : NAN,
		       sb.batch_runs ? (double)sb.batch_pages / (double)sb.batch_runs : NAN);
		printf("    stream64  %27s  runs %10" PRIu64 "  pages %10" PRIu64
		       "  %17s  pages/run %6.3f\n\n",
		       "", ss.stream_runs, ss.stream_pages, "",
		       ss.stream_runs ? (double)ss.stream_pages / (double)ss.stream_runs : NAN);
	}
	kchild_stop(&x.kc);
	for (int m = 0; m < 3; m++) {
		lpc_file_close(x.f[m]);
		lpc_cache_destroy(x.c[m]);
	}
	close(x.dfd);
	free(x.buf);
	free(r.ops_s);
	datafile_remove();
}

const struct bench bench_stream = {
	.name = "stream",
	.help = "one thread, random pages of a cold file 4x the cache: lpc_pread, batches of 32,\n"
		"           a read stream, against O_DIRECT io_uring at queue depth 32 and the\n"
		"           kernel's buffered pread",
	.run = stream_run,
	.check_opts = NULL,
	.estimate_s = stream_estimate_s,
};
