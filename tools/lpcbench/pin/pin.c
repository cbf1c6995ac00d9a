/* SPDX-License-Identifier: MIT */
/*
 * pin.c - `lpcbench pin`, seed 000's workload: a database doing
 * direct I/O pins the pages of each request.  Threads pin random 8-32 KiB
 * ranges of a cached file (lpc_pin), read a few bytes of each page, and
 * unpin, in interleaved rounds:
 *
 *   lockless     lpc_pin's lockless fast path (one read section per range)
 *   locked       the same on an LPC_LOOKUP_LOCKED cache (the range walk under
 *                the file's rwlock: the seed's mmap_sem)
 *   zc_pwritev   the full OLTP shape, zero copy: pin, lpc_pin_iov, pwritev(2)
 *                of the pinned pages to /dev/null, unpin
 *   pread_write  the same ranges copied: lpc_pread into a buffer, write(2)
 *                of the buffer to /dev/null
 *
 * The file (--file-mb, default 256; the full size: --file-mb 1024)
 * is read through the null backend and cached whole in each of the two
 * caches before the rounds, so every pin hits: pin_fast should be every
 * call, pin_slow zero.  /dev/null takes a write without touching its bytes,
 * so zc_pwritev against pread_write is what the copy costs.
 *
 * The write row (write pins, the receive side): each thread has a pipe
 * (1 MiB) that it feeds itself with vmsplice(2) of a constant buffer (no
 * copy: the pipe references the buffer's pages), then receives the range at
 * a random page-aligned offset of the lockless cache's file (opened
 * read-write, null backend: writeback writes nowhere):
 *   zc_recv_K     lpc_pin(LPC_PIN_WRITE), lpc_pin_iov, readv(2) from the pipe
 *                 straight into the pages, lpc_unpin(LPC_PIN_WRITE)
 *   recv_pwrite_K read(2) from the pipe into a buffer, lpc_pwrite
 * for K = 8, 64 and 256 KiB.  Both pay the pipe's one copy out; the copy
 * variant copies the bytes once more.  Goal: zc / copy >= 1.5 at 64 KiB and
 * above.  wpin_fast should be every write pin, wpin_slow zero.
 * What bounds the ratio: the sender is not the bottleneck (vmsplice maps the
 * constant buffer, no copy: about 4.5k cycles per 64 KiB), and both
 * variants write each byte once into frames of a 256 MiB file at a random
 * offset, which are not in the CPU's caches; the copy variant's extra copy
 * goes from the pipe into a buffer that is (hot to hot).  Per 64 KiB on the
 * 2-CPU AMD EPYC VM (rdtsc medians, one thread, receive side): readv from
 * the pipe into cold memory with no lpc call 11.8k cycles; read into the hot
 * buffer 6.2k; read + lpc_pwrite 18.7k.  So zero copy with no lpc cost at
 * all would reach (4.5k + 18.7k) / (4.5k + 11.8k) = 1.4-1.5 there, and the
 * write pin's own cost (pin 2.2k, unpin 1.2k) keeps it near 1.2.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <fcntl.h>

#include <lpc/lpc.h>

#include "harness/datafile.h"
#include "harness/rng.h"
#include "harness/rounds.h"
#include "harness/util.h"
#include "lpcbench/benches.h"

#define PIN_DEF_FILE_MB 256
#define PIN_MIN_RANGE (8u << 10)
#define PIN_MAX_RANGE (32u << 10)
#define PIN_MAX_PAGES 16
#define PIN_BATCH 32

enum { PV_LOCKLESS, PV_LOCKED, PV_ZC, PV_COPY, PV_NR };
static const char *const pv_name[PV_NR] = { "lockless", "locked", "zc_pwritev", "pread_write" };

#define WP_NR 6
#define WP_MAX_RANGE (256u << 10)
#define WP_MAX_PAGES (WP_MAX_RANGE / 4096 + 1)
static const char *const wp_name[WP_NR] = { "zc_recv_8K",  "recv_pwrite_8K",
					    "zc_recv_64K", "recv_pwrite_64K",
					    "zc_recv_256K", "recv_pwrite_256K" };
static const size_t wp_len[WP_NR / 2] = { 8u << 10, 64u << 10, 256u << 10 };

struct pworker {
	uint64_t rng;
	char *buf;
	uint64_t sink;
	int err;
	int pipe[2];     /* the write row's "socket" */
	char *wbuf;      /* what the write row's sender sends (vmsplice) */
} __attribute__((aligned(BENCH_CACHELINE)));

struct pctx {
	struct lpc_cache *c[2];
	struct lpc_file *f[2];
	uint64_t file_bytes;
	int devnull;
	struct pworker *wk;
};

struct pvar {
	struct pctx *x;
	int v;
};

/* The sender: len bytes of w->wbuf into the pipe, by reference. */
static int wp_send(struct pworker *w, size_t len)
{
	size_t done = 0;

	while (done < len) {
		struct iovec v = { w->wbuf + done, len - done };
		ssize_t r = vmsplice(w->pipe[1], &v, 1, 0);

		if (r <= 0)
			return r < 0 ? errno : EIO;
		done += (size_t)r;
	}
	return 0;
}

/* readv until the iovec is full.  Return: 0 or errno. */
static int wp_readv_all(int fd, struct iovec *iov, int k, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = readv(fd, iov, k);

		if (r <= 0)
			return r < 0 ? errno : EIO;
		got += (size_t)r;
		while (r > 0 && k > 0) {
			if ((size_t)r >= iov->iov_len) {
				r -= (ssize_t)iov->iov_len;
				iov++;
				k--;
			} else {
				iov->iov_base = (char *)iov->iov_base + r;
				iov->iov_len -= (size_t)r;
				r = 0;
			}
		}
	}
	return 0;
}

static uint64_t wpin_fn(unsigned id, void *arg, const _Atomic unsigned *stop)
{
	struct pvar *pv = arg;
	struct pctx *x = pv->x;
	struct pworker *w = &x->wk[id];
	struct lpc_file *f = x->f[0];
	size_t len = wp_len[pv->v / 2];
	bool zc = !(pv->v & 1);
	struct lpc_page *pages[WP_MAX_PAGES];
	struct iovec iov[WP_MAX_PAGES];
	uint64_t ops = 0, npages = x->file_bytes / 4096 - len / 4096;

	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		for (unsigned b = 0; b < 8; b++) {
			uint64_t off = (xorshift64s(&w->rng) >> 8) % (npages + 1) * 4096;
			int n, k, e;

			e = wp_send(w, len);
			if (e) {
				w->err = e;
				return ops;
			}
			if (!zc) {
				size_t got = 0;

				while (got < len) {
					ssize_t r = read(w->pipe[0], w->buf + got, len - got);

					if (r <= 0) {
						w->err = r < 0 ? errno : EIO;
						return ops;
					}
					got += (size_t)r;
				}
				if (lpc_pwrite(f, w->buf, len, off) != (ssize_t)len) {
					w->err = EIO;
					return ops;
				}
				continue;
			}
			n = lpc_pin(f, off, len, LPC_PIN_WRITE, pages, WP_MAX_PAGES);
			if (n <= 0) {
				w->err = n < 0 ? -n : EIO;
				return ops;
			}
			k = lpc_pin_iov(pages, (unsigned)n, off, len, iov);
			e = k <= 0 ? EIO : wp_readv_all(w->pipe[0], iov, k, len);
			lpc_unpin(pages, (unsigned)n, LPC_PIN_WRITE);
			if (e) {
				w->err = e;
				return ops;
			}
		}
		ops += 8;
	}
	return ops;
}

static inline void pick(struct pworker *w, uint64_t file_bytes, uint64_t *off, size_t *len)
{
	*len = PIN_MIN_RANGE + rng_below(&w->rng, PIN_MAX_RANGE - PIN_MIN_RANGE + 1);
	*off = ((uint64_t)xorshift64s(&w->rng) >> 8) % (file_bytes - *len + 1);
}

static uint64_t pin_fn(unsigned id, void *arg, const _Atomic unsigned *stop)
{
	struct pvar *pv = arg;
	struct pctx *x = pv->x;
	struct pworker *w = &x->wk[id];
	struct lpc_file *f = x->f[pv->v == PV_LOCKED];
	struct lpc_page *pages[PIN_MAX_PAGES];
	struct iovec iov[PIN_MAX_PAGES];
	uint64_t ops = 0;

	while (!atomic_load_explicit(stop, memory_order_relaxed)) {
		for (unsigned b = 0; b < PIN_BATCH; b++) {
			uint64_t off;
			size_t len;
			int n, k;

			pick(w, x->file_bytes, &off, &len);
			if (pv->v == PV_COPY) {
				ssize_t r = lpc_pread(f, w->buf, len, off);

				if (r != (ssize_t)len || write(x->devnull, w->buf, len) != (ssize_t)len) {
					w->err = r < 0 ? (int)-r : EIO;
					return ops;
				}
				continue;
			}
			n = lpc_pin(f, off, len, LPC_PIN_READ, pages, PIN_MAX_PAGES);
			if (n <= 0) {
				w->err = n < 0 ? -n : EIO;
				return ops;
			}
			if (pv->v == PV_ZC) {
				k = lpc_pin_iov(pages, (unsigned)n, off, len, iov);
				if (k <= 0 || pwritev(x->devnull, iov, k, 0) != (ssize_t)len) {
					w->err = k < 0 ? -k : EIO;
					lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
					return ops;
				}
			} else {
				/* "Read a few bytes of each page." */
				for (int i = 0; i < n; i++)
					w->sink += *(volatile uint64_t *)lpc_page_data(pages[i]);
			}
			lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
		}
		ops += PIN_BATCH;
	}
	return ops;
}

static void pin_check_opts(const struct bench_opts *o)
{
	uint64_t mb = o->file_mb_set ? o->file_mb : PIN_DEF_FILE_MB;

	if (mb * 2 > 64 * 1024)
		die("pin: --file-mb %" PRIu64 " needs two caches of that size; at most 32768", mb);
}

static double pin_estimate_s(const struct bench_opts *o)
{
	return (double)(o->rounds + o->warmup) * o->nr_tconf * (PV_NR + WP_NR) * o->slice_ms /
	       1000.0;
}

static void warm(struct lpc_file *f, uint64_t bytes)
{
	static struct lpc_page *pages[256];

	for (uint64_t off = 0; off < bytes; off += 256 * 4096) {
		uint64_t len = bytes - off < 256 * 4096 ? bytes - off : 256 * 4096;
		int n = lpc_pin(f, off, (size_t)len, LPC_PIN_READ, pages, 256);

		if (n < 0)
			die_err(-n, "pin: warming the cache at %" PRIu64, off);
		lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
	}
}

static void pin_run(const struct bench_env *env)
{
	const struct bench_opts *o = env->opts;
	uint64_t mb = o->file_mb_set ? o->file_mb : PIN_DEF_FILE_MB;
	unsigned maxt = 0;
	struct pctx x = { .file_bytes = mb << 20 };
	struct pvar pv[PV_NR];
	struct rounds r = { .bench = "pin", .nv = PV_NR };
	struct lpc_stats s0[2], s1[2];
	struct datafile df;
	struct pool *pool;

	for (unsigned i = 0; i < o->nr_tconf; i++)
		maxt = o->threads[i] > maxt ? o->threads[i] : maxt;
	datafile_choose(o->dir, &df);
	printf("== pin: seed 000's workload: pin random %u-%u KiB ranges of a cached %" PRIu64
	       " MiB file, read a few bytes of each page, unpin\n",
	       PIN_MIN_RANGE >> 10, PIN_MAX_RANGE >> 10, mb);
	printf("  variants: lockless (lpc_pin), locked (LPC_LOOKUP_LOCKED: the walk under the file's\n"
	       "  rwlock), zc_pwritev (pin + lpc_pin_iov + pwritev to /dev/null), pread_write\n"
	       "  (lpc_pread into a buffer + write to /dev/null); null backend, file in %s (%s)\n\n",
	       df.dir, df.fstype);
	fflush(stdout);
	progress("pin: writing a %" PRIu64 " MiB file", mb);
	datafile_create(&df, x.file_bytes);
	for (int m = 0; m < 2; m++) {
		struct lpc_config cfg;
		int rc;

		lpc_config_init(&cfg);
		cfg.cache_bytes = x.file_bytes + (4u << 20);
		cfg.io_backend = LPC_IO_NULL;
		cfg.lookup_mode = m ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS;
		rc = lpc_cache_create(&cfg, &x.c[m]);
		if (rc == 0)
			rc = lpc_file_open(x.c[m], df.path, m ? O_RDONLY : O_RDWR, 0, &x.f[m]);
		if (rc < 0)
			die_err(-rc, "pin: cache or file");
		progress("pin: caching the file (%s)", m ? "locked" : "lockless");
		warm(x.f[m], x.file_bytes);
	}
	progress_done();
	x.devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (x.devnull < 0)
		die_err(errno, "/dev/null");
	x.wk = xaligned_alloc(BENCH_CACHELINE, sizeof(*x.wk) * maxt);
	memset(x.wk, 0, sizeof(*x.wk) * maxt);
	for (unsigned i = 0; i < maxt; i++) {
		x.wk[i].rng = splitmix64(o->seed * 1000003u + i);
		x.wk[i].buf = xaligned_alloc(4096, WP_MAX_RANGE);
		x.wk[i].wbuf = xaligned_alloc(4096, WP_MAX_RANGE);
		memset(x.wk[i].wbuf, 0x5a + (int)i, WP_MAX_RANGE);
		if (pipe2(x.wk[i].pipe, O_CLOEXEC))
			die_err(errno, "pin: pipe");
		if (fcntl(x.wk[i].pipe[1], F_SETPIPE_SZ, 1 << 20) < (int)WP_MAX_RANGE)
			die_err(errno, "pin: a pipe of 1 MiB (fs.pipe-max-size)");
	}
	for (int v = 0; v < PV_NR; v++) {
		pv[v] = (struct pvar){ .x = &x, .v = v };
		r.v[v] = (struct rounds_variant){ .name = pv_name[v], .fn = pin_fn, .arg = &pv[v] };
	}
	lpc_stats(x.c[0], &s0[0]);
	lpc_stats(x.c[1], &s0[1]);
	pool = pool_create(maxt, o->pin);
	rounds_run(env, pool, &r, "mops", 1e-6);
	pool_destroy(pool);
	lpc_stats(x.c[0], &s1[0]);
	lpc_stats(x.c[1], &s1[1]);
	for (unsigned i = 0; i < maxt; i++)
		if (x.wk[i].err)
			die_err(x.wk[i].err, "pin: worker %u failed", i);

	rounds_print(env, &r, "pin: ranges per second", "Mranges/s", 1e-6, "pin");
	printf("\n  ratios within a round, median [min - max]:\n");
	for (unsigned t = 0; t < r.nt; t++) {
		rounds_print_ratio_at(env, &r, "lockless / locked", "ratio_lockless_locked", t,
				      PV_LOCKLESS, PV_LOCKED);
		rounds_print_ratio_at(env, &r, "zc_pwritev / pread_write (zero copy)", "ratio_zc_copy",
				      t, PV_ZC, PV_COPY);
	}
	for (unsigned t = 1; t < r.nt; t++) {
		for (int v = PV_LOCKLESS; v <= PV_LOCKED; v++) {
			char l[96];

			snprintf(l, sizeof(l), "scaling %s, %u over %u threads", pv_name[v],
				 o->threads[t], o->threads[0]);
			rounds_print_ratio(env, &r, l, "scaling", o->threads[t],
					   rounds_ratio(&r, (unsigned)v, t, (unsigned)v, 0));
		}
	}
	printf("\n  counters over the measured rounds (warm cache: fast should be every call, slow 0):\n");
	for (int m = 0; m < 2; m++) {
		uint64_t fast = s1[m].pin_fast - s0[m].pin_fast, slow = s1[m].pin_slow - s0[m].pin_slow;

		printf("    %-8s pin_fast %12" PRIu64 "  pin_slow %8" PRIu64
		       "  pages_pinned %12" PRIu64 "  fast share %.6f\n",
		       m ? "locked" : "lockless", fast, slow, s1[m].pages_pinned - s0[m].pages_pinned,
		       fast + slow ? (double)fast / (double)(fast + slow) : NAN);
	}
	printf("\n");

	/* The write row. */
	{
		struct rounds wr = { .bench = "pin_write", .nv = WP_NR };
		struct pvar wv[WP_NR];
		struct lpc_stats w0, w1;

		for (int v = 0; v < WP_NR; v++) {
			wv[v] = (struct pvar){ .x = &x, .v = v };
			wr.v[v] = (struct rounds_variant){ .name = wp_name[v], .fn = wpin_fn,
							   .arg = &wv[v] };
		}
		printf("== pin write row: receive K KiB from a pipe (vmsplice'd by the same thread)\n"
		       "  zc_recv_K: write pin + lpc_pin_iov + readv into the pages + unpin;\n"
		       "  recv_pwrite_K: read into a buffer + lpc_pwrite (lockless cache)\n\n");
		fflush(stdout);
		lpc_stats(x.c[0], &w0);
		pool = pool_create(maxt, o->pin);
		rounds_run(env, pool, &wr, "mops", 1e-6);
		pool_destroy(pool);
		lpc_stats(x.c[0], &w1);
		for (unsigned i = 0; i < maxt; i++)
			if (x.wk[i].err)
				die_err(x.wk[i].err, "pin write: worker %u failed", i);
		rounds_print(env, &wr, "pin write: ranges received per second", "Mranges/s", 1e-6,
			     "pin_write");
		printf("\n  ratios within a round, median [min - max]:\n");
		for (unsigned t = 0; t < wr.nt; t++)
			for (int v = 0; v < WP_NR; v += 2) {
				char l[96];

				snprintf(l, sizeof(l), "%s / %s (zero-copy receive)", wp_name[v],
					 wp_name[v + 1]);
				rounds_print_ratio_at(env, &wr, l, "ratio_zc_recv", t, (unsigned)v,
						      (unsigned)v + 1);
			}
		printf("\n  counters over the measured rounds (warm cache: fast should be every write "
		       "pin, slow 0):\n");
		printf("    wpin_fast %12" PRIu64 "  wpin_slow %8" PRIu64 "  wpin_dirtied %12" PRIu64
		       "  fast share %.6f\n",
		       w1.wpin_fast - w0.wpin_fast, w1.wpin_slow - w0.wpin_slow,
		       w1.wpin_dirtied - w0.wpin_dirtied,
		       w1.wpin_fast + w1.wpin_slow - w0.wpin_fast - w0.wpin_slow
			       ? (double)(w1.wpin_fast - w0.wpin_fast) /
					 (double)(w1.wpin_fast + w1.wpin_slow - w0.wpin_fast -
						  w0.wpin_slow)
			       : NAN);
		printf("\n");
		free(wr.ops_s);
	}
	for (int m = 0; m < 2; m++) {
		lpc_file_close(x.f[m]);
		lpc_cache_destroy(x.c[m]);
	}
	for (unsigned i = 0; i < maxt; i++) {
		free(x.wk[i].buf);
		free(x.wk[i].wbuf);
		close(x.wk[i].pipe[0]);
		close(x.wk[i].pipe[1]);
	}
	free(x.wk);
	free(r.ops_s);
	close(x.devnull);
	datafile_remove();
}

const struct bench bench_pin = {
	.name = "pin",
	.help = "seed 000: pin random 8-32 KiB ranges of a cached file (lpc_pin), lockless\n"
		"           against LOCKED, and the OLTP shape: pwritev from pinned pages against\n"
		"           pread + write (default file 256 MiB, full size: --file-mb 1024); a\n"
		"           write row: zero-copy receive into write-pinned pages against\n"
		"           read + lpc_pwrite, 8-256 KiB",
	.run = pin_run,
	.check_opts = pin_check_opts,
	.estimate_s = pin_estimate_s,
};
