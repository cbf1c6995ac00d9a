/* SPDX-License-Identifier: MIT */
/*
 * rbd.c - `lpcbench rbd`: lpc over a Ceph RBD image (liblpc_rbd) against
 * librbd used directly, in one run, interleaved: each round runs every
 * workload on
 *   A  librbd, its cache off (rbd_cache=false): every read a round trip;
 *   B  librbd with its own cache on (rbd_cache=true, rbd_cache_policy =
 *      writeback: 16.2's default, writearound, caches no reads;
 *      rbd_cache_size = lpc's budget, half of it for dirty data; librbd's
 *      readahead as configured by default) - the peer;
 *   C  lpc over the image (lpc_rbd_open; librbd's cache off underneath),
 *      cache_bytes = the same budget;
 * and ratios are taken within a round (C/B, C/A), then their median and
 * range over the rounds.
 *
 * Workloads (4 KiB requests; the budget is --cache-mb if given, else 16 MiB;
 * the image is 4x the budget):
 *   hot      one thread re-reading 256 pages (1 MiB: cached by B and C)
 *   rand/N   N threads (1, 2, 8) reading uniformly random pages of the
 *            whole image, after the cache was filled (the image's first
 *            budget bytes read in 1 MiB requests); hit ratio: lpc's counters for C, and for B the
 *            share of reads served under 40 us (a cluster round trip here
 *            takes well over that; librbd's C API has no cache counters)
 *   stream   one thread, uniformly random pages of the whole image after
 *            the rand rows (the cache as they left it): C reads them
 *            through a read stream (lpc_stream_*, look-ahead 64: its
 *            batches reach librbd together where the backend has
 *            read_batch, lpc.h BK7); A and B through librbd's aio at
 *            queue depth 32 (rbd_aio_read, each slot refilled as it
 *            completes): what one thread gets with many reads in flight;
 *            under it C's pages per stream run (lpc_stats stream_pages /
 *            stream_runs: pages per request to librbd)
 *   scan     one thread reading the first 8 MiB (or the budget, if larger)
 *            in order, from a cold cache (B and C open anew)
 *   write    1024 random 4 KiB writes to an image of the variant's own,
 *            then rbd_flush / lpc_fsync: writes per second to durable
 * Before the rounds, the cluster's own 4 KiB read rate with librbd at queue
 * depth 1 and 32 (rbd_aio_read on A's handle), so the ratios can be read.
 *
 * The cluster: $LPC_RBD_CONF (a conf path; the pool `lpc` must exist), or
 * one that the benchmark starts with scripts/ceph-cluster.sh in a
 * temporary directory and stops at the end.  Without either it says why
 * and measures nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#include <lpc/lpc.h>
#include <lpc/lpc_rbd.h>

#include "harness/bench.h"
#include "harness/stats.h"
#include "harness/util.h"
#include "lpcbench/benches.h"

#define RB_PS 4096u
#define RB_HOT_PAGES 256u
#define RB_WRITES 1024u
#define RB_DEF_ROUNDS 3
#define RB_SLICE_NS 400000000ull /* one variant, one workload: 0.4 s */
#define RB_HIT_NS 40000ull
#define RB_NV 3

static const char *const rb_vname[RB_NV] = { "A librbd", "B librbd+cache", "C lpc" };
static const unsigned rb_threads[] = { 1, 2, 8 };
#define RB_NT (sizeof(rb_threads) / sizeof(rb_threads[0]))

struct rb_ctx {
	const char *conf;
	uint64_t budget, image_bytes, scan_bytes;
	rados_t cluster; /* A's and B's, and the setup's */
	rados_ioctx_t io;
};

/* One variant's open image: librbd (A, B) or lpc (C). */
struct rb_h {
	int v;
	rados_t cl; /* B's own connection (its cache options) */
	rados_ioctx_t io;
	rbd_image_t img;
	struct lpc_cache *cache;
	struct lpc_file *f;
};

static void rb_die(const char *what, int r)
{
	fprintf(stderr, "lpcbench rbd: %s: %d (%s)\n", what, r, strerror(-r));
	exit(1);
}

static int rb_connect(const char *conf, bool cache, uint64_t budget, rados_t *cl,
		      rados_ioctx_t *io)
{
	char sz[32];
	int r = rados_create(cl, NULL);

	if (r < 0)
		return r;
	if ((r = rados_conf_read_file(*cl, conf)) < 0)
		return r;
	snprintf(sz, sizeof(sz), "%" PRIu64, budget);
	rados_conf_set(*cl, "rbd_cache", cache ? "true" : "false");
	if (cache) {
		char half[32];

		snprintf(half, sizeof(half), "%" PRIu64, budget / 2);
		/* Pacific's default policy, writearound, caches no reads. */
		rados_conf_set(*cl, "rbd_cache_policy", "writeback");
		rados_conf_set(*cl, "rbd_cache_size", sz);
		rados_conf_set(*cl, "rbd_cache_max_dirty", half);
		rados_conf_set(*cl, "rbd_cache_target_dirty", half);
		rados_conf_set(*cl, "rbd_cache_writethrough_until_flush", "false");
	}
	if ((r = rados_connect(*cl)) < 0)
		return r;
	return rados_ioctx_create(*cl, "lpc", io);
}

static void rb_open(struct rb_ctx *x, int v, const char *img, bool rw, struct rb_h *h)
{
	int r;

	memset(h, 0, sizeof(*h));
	h->v = v;
	if (v == 2) {
		struct lpc_config cfg;
		char name[128];

		lpc_config_init(&cfg);
		cfg.cache_bytes = x->budget;
		if ((r = lpc_cache_create(&cfg, &h->cache)) < 0)
			rb_die("lpc_cache_create", r);
		snprintf(name, sizeof(name), "rbd:lpc/%s", img);
		if ((r = lpc_rbd_open(h->cache, name, x->conf, rw ? O_RDWR : O_RDONLY, &h->f)) < 0)
			rb_die("lpc_rbd_open", r);
		return;
	}
	h->io = x->io;
	if (v == 1 && (r = rb_connect(x->conf, true, x->budget, &h->cl, &h->io)) < 0)
		rb_die("rados connect (cache on)", r);
	r = rw ? rbd_open(h->io, img, &h->img, NULL) : rbd_open_read_only(h->io, img, &h->img, NULL);
	if (r < 0)
		rb_die("rbd_open", r);
}

static void rb_close(struct rb_h *h)
{
	if (h->v == 2) {
		lpc_file_close(h->f);
		lpc_cache_destroy(h->cache);
		return;
	}
	rbd_close(h->img);
	if (h->cl) {
		rados_ioctx_destroy(h->io);
		rados_shutdown(h->cl);
	}
}

static int rb_read(struct rb_h *h, void *buf, uint64_t off)
{
	ssize_t n = h->v == 2 ? lpc_pread(h->f, buf, RB_PS, off)
			      : rbd_read(h->img, off, RB_PS, buf);
	return n == RB_PS ? 0 : (n < 0 ? (int)n : -EIO);
}

static uint64_t rb_rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct rb_worker {
	pthread_t t;
	struct rb_h *h;
	uint64_t pages, seed, deadline, ops, fast;
	int err;
};

static void *rb_rand_thread(void *arg)
{
	struct rb_worker *w = arg;
	char *buf = aligned_alloc(RB_PS, RB_PS);
	uint64_t s = w->seed | 1;

	while (now_ns() < w->deadline) {
		for (int i = 0; i < 16; i++) {
			uint64_t t0 = now_ns();
			int r = rb_read(w->h, buf, (rb_rng(&s) % w->pages) * RB_PS);
			if (r < 0) {
				w->err = r;
				goto out;
			}
			if (now_ns() - t0 < RB_HIT_NS)
				w->fast++;
			w->ops++;
		}
	}
out:
	free(buf);
	return NULL;
}

/* N threads of random reads over `pages` for one slice: ops/s, *hit. */
static double rb_rand(struct rb_h *h, unsigned n, uint64_t pages, uint64_t seed, double *hit)
{
	struct rb_worker w[8];
	uint64_t t0 = now_ns(), ops = 0, fast = 0;
	struct lpc_stats s0, s1;

	if (h->v == 2)
		lpc_stats(h->cache, &s0);
	for (unsigned i = 0; i < n; i++) {
		w[i] = (struct rb_worker){ .h = h, .pages = pages, .seed = seed * 31 + i,
					   .deadline = t0 + RB_SLICE_NS };
		pthread_create(&w[i].t, NULL, rb_rand_thread, &w[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(w[i].t, NULL);
		if (w[i].err)
			rb_die("read", w[i].err);
		ops += w[i].ops;
		fast += w[i].fast;
	}
	double secs = (double)(now_ns() - t0) / 1e9;
	if (h->v == 2) {
		lpc_stats(h->cache, &s1);
		uint64_t lk = s1.lookups - s0.lookups;
		*hit = lk ? (double)(s1.hits - s0.hits) / (double)lk : NAN;
	} else {
		*hit = ops ? (double)fast / (double)ops : NAN;
	}
	return (double)ops / secs;
}

/* The stream row's list: uniformly random pages. */
struct rb_gen {
	uint64_t s, pages;
};

static int rb_gen_cb(void *arg, uint64_t *index, void **user)
{
	struct rb_gen *g = arg;

	*index = rb_rng(&g->s) % g->pages;
	*user = NULL;
	return 1;
}

#define RB_STREAM_DIST 64
#define RB_AIO_QD 32

/* One thread, one slice of random pages with many in flight: a read stream
 * (C) or librbd's aio at queue depth 32 (A, B).  Return: pages/s;
 * *per_run: C's pages per stream run (lpc_stats stream_pages /
 * stream_runs: pages per read request to librbd), else NAN. */
static double rb_stream(struct rb_h *h, uint64_t pages, uint64_t seed, double *per_run)
{
	uint64_t t0 = now_ns(), end = t0 + RB_SLICE_NS, ops = 0, s = seed | 1;

	*per_run = NAN;
	if (h->v == 2) {
		struct rb_gen g = { .s = seed | 1, .pages = pages };
		struct lpc_stats s0, s1;
		struct lpc_stream *st;
		int r;

		lpc_stats(h->cache, &s0);
		r = lpc_stream_open(h->f, rb_gen_cb, &g,
					&(struct lpc_stream_opts){ .max_distance = RB_STREAM_DIST },
					&st);

		if (r < 0)
			rb_die("lpc_stream_open", r);
		while (now_ns() < end) {
			struct lpc_page *p;

			for (int i = 0; i < 16; i++, ops++) {
				r = lpc_stream_next(st, &p, NULL);
				if (r != 1)
					rb_die("lpc_stream_next", r < 0 ? r : -EIO);
				lpc_page_put(p);
			}
		}
		lpc_stream_close(st);
		lpc_stats(h->cache, &s1);
		if (s1.stream_runs > s0.stream_runs)
			*per_run = (double)(s1.stream_pages - s0.stream_pages) /
				   (double)(s1.stream_runs - s0.stream_runs);
	} else {
		rbd_completion_t c[RB_AIO_QD];
		char *buf[RB_AIO_QD];
		unsigned live = RB_AIO_QD;

		for (unsigned i = 0; i < RB_AIO_QD; i++) {
			buf[i] = aligned_alloc(RB_PS, RB_PS);
			rbd_aio_create_completion(NULL, NULL, &c[i]);
			rbd_aio_read(h->img, (rb_rng(&s) % pages) * RB_PS, RB_PS, buf[i], c[i]);
		}
		for (unsigned i = 0; live; i = (i + 1) % RB_AIO_QD) {
			if (!c[i])
				continue;
			rbd_aio_wait_for_complete(c[i]);
			if (rbd_aio_get_return_value(c[i]) != RB_PS)
				rb_die("aio read", -EIO);
			rbd_aio_release(c[i]);
			c[i] = NULL;
			ops++;
			if (now_ns() < end) {
				rbd_aio_create_completion(NULL, NULL, &c[i]);
				rbd_aio_read(h->img, (rb_rng(&s) % pages) * RB_PS, RB_PS, buf[i],
					     c[i]);
			} else {
				live--;
			}
		}
		for (unsigned i = 0; i < RB_AIO_QD; i++)
			free(buf[i]);
	}
	return (double)ops / ((double)(now_ns() - t0) / 1e9);
}

/* Reads the first budget bytes in 1 MiB requests (filling B's or C's
 * cache). */
static void rb_warm(struct rb_ctx *x, struct rb_h *h)
{
	char *buf = aligned_alloc(RB_PS, 1u << 20);

	for (uint64_t off = 0; off < x->budget; off += 1u << 20) {
		ssize_t n = h->v == 2 ? lpc_pread(h->f, buf, 1u << 20, off)
				      : rbd_read(h->img, off, 1u << 20, buf);
		if (n != 1 << 20)
			rb_die("warm read", n < 0 ? (int)n : -EIO);
	}
	free(buf);
}

/* Cold sequential scan of the first scan_bytes: MB/s. */
static double rb_scan(struct rb_ctx *x, int v, const char *img)
{
	struct rb_h h;
	char *buf = aligned_alloc(RB_PS, RB_PS);

	rb_open(x, v, img, false, &h);
	uint64_t t0 = now_ns();
	for (uint64_t off = 0; off < x->scan_bytes; off += RB_PS)
		if (rb_read(&h, buf, off) < 0)
			rb_die("scan read", -EIO);
	double secs = (double)(now_ns() - t0) / 1e9;
	rb_close(&h);
	free(buf);
	return (double)x->scan_bytes / 1e6 / secs;
}

/* RB_WRITES random page writes then a flush: writes/s to durable. */
static double rb_write(struct rb_ctx *x, int v, const char *img, uint64_t seed)
{
	struct rb_h h;
	char *buf = aligned_alloc(RB_PS, RB_PS);
	uint64_t s = seed | 1, pages = x->image_bytes / RB_PS;
	int r;

	rb_open(x, v, img, true, &h);
	uint64_t t0 = now_ns();
	for (unsigned i = 0; i < RB_WRITES; i++) {
		uint64_t off = (rb_rng(&s) % pages) * RB_PS;
		memset(buf, (int)i, RB_PS);
		ssize_t n = v == 2 ? lpc_pwrite(h.f, buf, RB_PS, off) : rbd_write(h.img, off, RB_PS, buf);
		if (n != RB_PS)
			rb_die("write", n < 0 ? (int)n : -EIO);
	}
	r = v == 2 ? lpc_fsync(h.f) : rbd_flush(h.img);
	if (r < 0)
		rb_die("flush", r);
	double secs = (double)(now_ns() - t0) / 1e9;
	rb_close(&h);
	free(buf);
	return RB_WRITES / secs;
}

/* The cluster's own 4 KiB random read rate at queue depth qd, for 1 s. */
static double rb_qd(struct rb_ctx *x, const char *img, unsigned qd)
{
	rbd_image_t im;
	rbd_completion_t c[32];
	char *buf[32];
	uint64_t s = 12345, pages = x->image_bytes / RB_PS, ops = 0;
	int r = rbd_open_read_only(x->io, img, &im, NULL);

	if (r < 0)
		rb_die("rbd_open_read_only", r);
	for (unsigned i = 0; i < qd; i++)
		buf[i] = aligned_alloc(RB_PS, RB_PS);
	uint64_t t0 = now_ns(), end = t0 + 1000000000ull;
	for (unsigned i = 0; i < qd; i++) {
		rbd_aio_create_completion(NULL, NULL, &c[i]);
		rbd_aio_read(im, (rb_rng(&s) % pages) * RB_PS, RB_PS, buf[i], c[i]);
	}
	/* Round robin over the slots: each completion is waited for and its
	 * slot refilled until the second is over; then the rest drained. */
	for (unsigned i = 0, live = qd; live; i = (i + 1) % qd) {
		if (!c[i])
			continue;
		rbd_aio_wait_for_complete(c[i]);
		rbd_aio_release(c[i]);
		c[i] = NULL;
		ops++;
		if (now_ns() < end) {
			rbd_aio_create_completion(NULL, NULL, &c[i]);
			rbd_aio_read(im, (rb_rng(&s) % pages) * RB_PS, RB_PS, buf[i], c[i]);
		} else {
			live--;
		}
	}
	double secs = (double)(now_ns() - t0) / 1e9;
	for (unsigned i = 0; i < qd; i++)
		free(buf[i]);
	rbd_close(im);
	return (double)ops / secs;
}

static void rb_fill(struct rb_ctx *x, const char *img)
{
	rbd_image_t im;
	char *buf = malloc(4u << 20);
	int order = 22, r;

	rbd_remove(x->io, img);
	if ((r = rbd_create(x->io, img, x->image_bytes, &order)) < 0)
		rb_die("rbd_create", r);
	if ((r = rbd_open(x->io, img, &im, NULL)) < 0)
		rb_die("rbd_open", r);
	for (uint64_t off = 0; off < x->image_bytes; off += 4u << 20) {
		memset(buf, (int)(off >> 20), 4u << 20);
		if (rbd_write(im, off, 4u << 20, buf) != 4 << 20)
			rb_die("fill", -EIO);
	}
	rbd_close(im);
	free(buf);
}

static void rb_print(const char *row, double *v, unsigned n, const char *unit)
{
	struct summary s = summarize(v, n);
	printf("  %-22s %10.2f  [%.2f .. %.2f] %s\n", row, s.med, s.min, s.max, unit);
}

static void rb_measure(struct rb_ctx *x, unsigned rounds)
{
	enum { W_HOT, W_R1, W_R2, W_R8, W_STREAM, W_SCAN, W_WRITE, NW };
	static const char *const wname[NW] = { "hot 4K reads", "rand 4K x1", "rand 4K x2",
					       "rand 4K x8",
					       "stream x1 (C: look-ahead 64; A, B: aio QD32)",
					       "cold scan", "writes to durable" };
	static const char *const wunit[NW] = { "reads/s", "reads/s", "reads/s", "reads/s",
					       "reads/s", "MB/s", "writes/s" };
	double val[NW][RB_NV][16], hit[RB_NT][RB_NV][16], per_run[RB_NV][16];
	uint64_t pages = x->image_bytes / RB_PS;

	rb_fill(x, "bench");
	for (int v = 0; v < RB_NV; v++) {
		char w[32];
		snprintf(w, sizeof(w), "bench-w%d", v);
		rb_fill(x, w);
	}
	printf("  cluster: librbd 4K random reads, queue depth 1: %.0f IOPS; 32: %.0f IOPS\n",
	       rb_qd(x, "bench", 1), rb_qd(x, "bench", 32));
	fflush(stdout);
	for (unsigned k = 0; k < rounds; k++) {
		fprintf(stderr, "lpcbench rbd: round %u/%u\n", k + 1, rounds);
		for (int i = 0; i < RB_NV; i++) {
			/* A different order each round: no variant always first. */
			int v = (int)((i + k) % RB_NV);
			struct rb_h h;
			double hr;


			rb_open(x, v, "bench", false, &h);
			/* hot: each hot page read once, then one slice */
			char pg[RB_PS] __attribute__((aligned(64)));
			for (uint64_t p = 0; p < RB_HOT_PAGES; p++)
				if (rb_read(&h, pg, p * RB_PS) < 0)
					rb_die("hot warm read", -EIO);
			val[W_HOT][v][k] = rb_rand(&h, 1, RB_HOT_PAGES, k + 7, &hr);
			/* fill the cache: the rand rows start at their steady state */
			rb_warm(x, &h);
			for (unsigned t = 0; t < RB_NT; t++)
				val[W_R1 + t][v][k] =
					rb_rand(&h, rb_threads[t], pages, k * 100 + t, &hit[t][v][k]);
			val[W_STREAM][v][k] = rb_stream(&h, pages, k * 100 + 50, &per_run[v][k]);
			rb_close(&h);
			val[W_SCAN][v][k] = rb_scan(x, v, "bench");
			char w[32];
			snprintf(w, sizeof(w), "bench-w%d", v);
			val[W_WRITE][v][k] = rb_write(x, v, w, k + 1);
		}
	}
	printf("\n  %-22s %10s  %s\n", "workload/variant", "median", "[min .. max] over rounds");
	for (int w = 0; w < NW; w++) {
		printf(" %s\n", wname[w]);
		for (int v = 0; v < RB_NV; v++) {
			char row[64];
			snprintf(row, sizeof(row), "%s", rb_vname[v]);
			rb_print(row, val[w][v], rounds, wunit[w]);
		}
		double cb[16], ca[16];
		for (unsigned k = 0; k < rounds; k++) {
			cb[k] = val[w][2][k] / val[w][1][k];
			ca[k] = val[w][2][k] / val[w][0][k];
		}
		rb_print("ratio C/B (lpc/peer)", cb, rounds, "x");
		rb_print("ratio C/A (lpc/none)", ca, rounds, "x");
		if (w >= W_R1 && w <= W_R8) {
			rb_print("hit ratio B (est.)", hit[w - W_R1][1], rounds, "(reads < 40 us)");
			rb_print("hit ratio C", hit[w - W_R1][2], rounds, "(lpc_stats)");
		}
		if (w == W_STREAM)
			rb_print("pages/run C", per_run[2], rounds,
				 "(lpc_stats stream_pages / stream_runs)");
	}
	printf("\n");
}

static char rb_dir[256];

static void rb_down(void)
{
	char cmd[1024];

	if (!rb_dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "bash '%s' down '%s' >&2", LPCBENCH_CEPH_SCRIPT, rb_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "lpcbench rbd: %s failed\n", cmd);
	rb_dir[0] = '\0';
}

static void rb_run(const struct bench_env *env)
{
	const struct bench_opts *o = env->opts;
	struct rb_ctx x = { 0 };
	char conf[512];
	unsigned rounds = o->rounds_set ? o->rounds : RB_DEF_ROUNDS;

	if (rounds > 16)
		rounds = 16;
	x.budget = (uint64_t)(o->cache_mb_set ? o->cache_mb : 16) << 20;
	x.image_bytes = 4 * x.budget;
	x.scan_bytes = x.budget > (8u << 20) ? x.budget : 8u << 20;
	printf("rbd: lpc over a Ceph RBD image (liblpc_rbd) vs librbd, %u rounds, interleaved\n",
	       rounds);
	printf("  budget %" PRIu64 " MiB (lpc cache_bytes = B's rbd_cache_size), image %" PRIu64
	       " MiB, 4 KiB requests, %.1f s per variant and workload\n",
	       x.budget >> 20, x.image_bytes >> 20, RB_SLICE_NS / 1e9);
	const char *env_conf = getenv("LPC_RBD_CONF");
	if (env_conf && *env_conf) {
		snprintf(conf, sizeof(conf), "%s", env_conf);
		printf("  cluster: LPC_RBD_CONF=%s\n", conf);
	} else {
		char cmd[1024];
		const char *tmp = o->dir ? o->dir : (getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp");

		snprintf(cmd, sizeof(cmd), "bash '%s' check", LPCBENCH_CEPH_SCRIPT);
		if (access(LPCBENCH_CEPH_SCRIPT, R_OK) != 0 || system(cmd) != 0) {
			printf("rbd: skipped: no Ceph cluster (set LPC_RBD_CONF, or install ceph-mon ceph-osd ceph-common: scripts/deps.sh)\n\n");
			return;
		}
		snprintf(rb_dir, sizeof(rb_dir), "%s/lpcbench-ceph.XXXXXX", tmp);
		if (!mkdtemp(rb_dir))
			rb_die("mkdtemp", -errno);
		atexit(rb_down);
		/* The memstore holds the images: 6 of them, plus room. */
		char mem[64];
		snprintf(mem, sizeof(mem), "%" PRIu64, 6 * x.image_bytes + (512u << 20));
		setenv("LPC_CEPH_OSD_BYTES", mem, 1);
		snprintf(cmd, sizeof(cmd), "bash '%s' up '%s' 2>&1 >/dev/null | tail -1 >&2",
			 LPCBENCH_CEPH_SCRIPT, rb_dir);
		uint64_t t0 = now_ns();
		if (system(cmd) != 0 || access(strcat(strcpy(conf, rb_dir), "/ceph.conf"), R_OK)) {
			printf("rbd: skipped: the cluster did not start (see above)\n\n");
			rb_down();
			return;
		}
		printf("  cluster: scripts/ceph-cluster.sh up %s: %.1f s\n", rb_dir,
		       (double)(now_ns() - t0) / 1e9);
	}
	fflush(stdout);
	x.conf = conf;
	int r = rb_connect(conf, false, 0, &x.cluster, &x.io);
	if (r < 0)
		rb_die("rados connect", r);
	rb_measure(&x, rounds);
	rados_ioctx_destroy(x.io);
	rados_shutdown(x.cluster);
	rb_down();
}

static double rb_estimate_s(const struct bench_opts *o)
{
	unsigned rounds = o->rounds_set ? o->rounds : RB_DEF_ROUNDS;
	return 2 + rounds * RB_NV * (6 * RB_SLICE_NS / 1e9 + 2);
}

const struct bench bench_rbd = {
	.name = "rbd",
	.help = "lpc over a Ceph RBD image vs librbd (cache off; cache on at lpc's budget)",
	.run = rb_run,
	.estimate_s = rb_estimate_s,
};
