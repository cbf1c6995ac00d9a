/* SPDX-License-Identifier: MIT */
/*
 * lookup.c - the lookup benchmark: what one hit on a hot page costs, through
 * lpc's lockless index, through its locked one, through the kernel, and with
 * no index at all (the floor), side by side in one process.
 *
 * Setup: a data file of real bytes; two caches with the null I/O backend
 * (filling a page costs no disk, so setup is quick and nothing but the cache
 * is measured), each with a budget that holds the whole file; every page of
 * both caches, and of the kernel's page cache, read once before measuring.
 *
 * Measurement: R rounds.  A round runs, for each thread count, each variant
 * for one slice, always in the same order.  The machines this runs on drift
 * by tens of per cent between runs and even within one, so comparing a run of
 * A with a later run of B mostly measures the drift.  Ratios are taken
 * within a round, between slices less than a round (1.5 s by default) apart,
 * and lookup_report.c reports their median and range over the rounds.
 *
 * Every operation of floor, lockless, locked, kernel and lpc_pread is on a
 * uniformly random page of the file.  The page numbers are drawn before
 * measuring, 64 Ki per thread: drawing them in the loop would time the
 * generator too.  A random page of a 256 MiB file is rarely in the CPU's
 * caches, so the two pread variants mostly time copying 4 KiB out of DRAM.
 * kernel_hot and lpc_pread_hot read one page again and again instead: each
 * thread its own page, drawn once at setup, the same page for both, so that
 * its bytes stay in the L1/L2 and what is timed is the read path itself
 * (syscall, lookup, a copy from cache).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "harness/datafile.h"
#include "harness/floor.h"
#include "harness/rng.h"
#include "harness/util.h"
#include "lookup.h"
#include "lpcbench/benches.h"

#define LOOKUP_IDX_ENTRIES (1u << 16) /* page numbers per thread; power of 2 */
#define LOOKUP_BATCH 64 /* operations between two looks at the stop flag */
/*
 * Cache budget beyond the file's size, so that the fill evicts nothing: the
 * reclaimer keeps free frames up to `high` (2/64 of the frames) and, when
 * sequential reads ask it, a readahead window more (reclaimer.c ra_high:
 * 8 MiB by default), and the fill's lpc_page_get calls are sequential.
 * A sixteenth of the file plus 16 MiB stays above that at every size.
 */
static uint64_t lookup_slack(uint64_t file_bytes)
{
	return file_bytes / 16 + (16u << 20);
}
#define LOOKUP_WARM_CHUNK (1u << 20) /* bytes per pread of the kernel warm-up */

_Static_assert(LOOKUP_IDX_ENTRIES % LOOKUP_BATCH == 0,
	       "a batch never runs past the end of the page numbers");

static const char *const lookup_variant_desc[LV_NR] = {
	[LV_FLOOR] = "CAS inc-unless-zero + release dec on a 64 B descriptor array, no index",
	[LV_LOCKLESS] = "lpc_page_find + lpc_page_put, LPC_LOOKUP_LOCKLESS cache",
	[LV_LOCKED] = "lpc_page_find + lpc_page_put, LPC_LOOKUP_LOCKED cache (per-file rwlock)",
	[LV_KERNEL] = "pread(2) of one page on a buffered fd, page cache warm",
	[LV_LPC_PREAD] = "lpc_pread of one page, LPC_LOOKUP_LOCKLESS cache",
	[LV_KERNEL_HOT] = "as kernel, but of one page again and again (the thread's hot page)",
	[LV_LPC_PREAD_HOT] = "as lpc_pread, but of that same hot page again and again",
	[LV_LOCKLESS_HOT] = "find + read the 8 words optimistic reads + put, of that hot page",
	[LV_OPTIMISTIC] = "lpc_page_read of that hot page: a function reads 8 words, no reference",
	[LV_KERNEL_SHARED] = "as kernel, but every thread reads one shared page",
	[LV_LPC_PREAD_SHARED] = "as lpc_pread, but every thread reads that shared page",
	[LV_LOCKLESS_SHARED] = "as lockless_hot, but every thread reads that shared page",
	[LV_OPTIMISTIC_SHARED] = "as optimistic, but every thread reads that shared page",
};

static const char *const cache_name[LOOKUP_NR_CACHES] = {
	[LPC_LOOKUP_LOCKLESS] = "lockless",
	[LPC_LOOKUP_LOCKED] = "locked",
};

/* One worker's inputs, and the error that stopped its loop, if one did. */
struct lookup_thread {
	alignas(BENCH_CACHELINE) uint32_t *idx; /* LOOKUP_IDX_ENTRIES page numbers */
	void *buf;    /* one page, for the pread variants */
	uint32_t hot; /* the page of the _hot variants, drawn once at setup */
	uint32_t shared; /* the page of the _shared variants: every thread's */
	uint64_t sink;   /* what the optimistic variant's function read */
	int err;      /* positive errno of the failed operation, or 0 */
	uint32_t err_page;
};

struct lookup {
	const struct bench_env *env;
	struct datafile df;
	uint64_t file_bytes;
	uint32_t nr_pages;
	size_t page_size;
	unsigned page_shift;
	struct floor floor;
	struct lpc_cache *cache[LOOKUP_NR_CACHES];
	struct lpc_file *file[LOOKUP_NR_CACHES];
	int kfd; /* buffered, for the kernel variant */
	unsigned nr_threads;
	struct lookup_thread *t;
	struct pool *pool;
	unsigned variants; /* --variants as a mask */
	enum lookup_variant variant; /* of the slice being run */
};

/*
 * The timed loops.  Each is its own function, kept out of line so that its
 * code can be read alone (objdump -d lpcbench) and holds nothing but the
 * operation, the page number load and the stop check; the failure exit is a
 * cold call, out of the loop's way.
 */
static __attribute__((noinline, cold)) uint64_t
lookup_fail(struct lookup_thread *t, int err, uint32_t page, uint64_t ops)
{
	t->err = err;
	t->err_page = page;
	return ops;
}

static __attribute__((noinline)) uint64_t
loop_floor(struct lookup_thread *t, struct floor_desc *desc,
	   const _Atomic unsigned *stop)
{
	const uint32_t *idx = t->idx;
	uint64_t ops = 0;
	unsigned pos = 0;

	do {
		for (unsigned i = pos; i < pos + LOOKUP_BATCH; i++) {
			struct floor_desc *d = &desc[idx[i]];

			if (unlikely(!floor_get(d)))
				return lookup_fail(t, ESTALE, idx[i], ops);
			floor_put(d);
		}
		ops += LOOKUP_BATCH;
		pos = (pos + LOOKUP_BATCH) & (LOOKUP_IDX_ENTRIES - 1);
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

static __attribute__((noinline)) uint64_t
loop_find(struct lookup_thread *t, struct lpc_file *f,
	  const _Atomic unsigned *stop)
{
	const uint32_t *idx = t->idx;
	uint64_t ops = 0;
	unsigned pos = 0;

	do {
		for (unsigned i = pos; i < pos + LOOKUP_BATCH; i++) {
			struct lpc_page *p;
			int rc = lpc_page_find(f, idx[i], &p);

			if (unlikely(rc))
				return lookup_fail(t, -rc, idx[i], ops);
			lpc_page_put(p);
		}
		ops += LOOKUP_BATCH;
		pos = (pos + LOOKUP_BATCH) & (LOOKUP_IDX_ENTRIES - 1);
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

static __attribute__((noinline)) uint64_t
loop_kernel(struct lookup_thread *t, int fd, size_t len, unsigned shift,
	    const _Atomic unsigned *stop)
{
	const uint32_t *idx = t->idx;
	void *buf = t->buf;
	uint64_t ops = 0;
	unsigned pos = 0;

	do {
		for (unsigned i = pos; i < pos + LOOKUP_BATCH; i++) {
			ssize_t n = pread(fd, buf, len, (off_t)idx[i] << shift);

			if (unlikely(n != (ssize_t)len))
				return lookup_fail(t, n < 0 ? errno : EIO, idx[i], ops);
		}
		ops += LOOKUP_BATCH;
		pos = (pos + LOOKUP_BATCH) & (LOOKUP_IDX_ENTRIES - 1);
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

static __attribute__((noinline)) uint64_t
loop_lpc_pread(struct lookup_thread *t, struct lpc_file *f, size_t len,
	       unsigned shift, const _Atomic unsigned *stop)
{
	const uint32_t *idx = t->idx;
	void *buf = t->buf;
	uint64_t ops = 0;
	unsigned pos = 0;

	do {
		for (unsigned i = pos; i < pos + LOOKUP_BATCH; i++) {
			ssize_t n = lpc_pread(f, buf, len, (uint64_t)idx[i] << shift);

			if (unlikely(n != (ssize_t)len))
				return lookup_fail(t, n < 0 ? (int)-n : EIO, idx[i], ops);
		}
		ops += LOOKUP_BATCH;
		pos = (pos + LOOKUP_BATCH) & (LOOKUP_IDX_ENTRIES - 1);
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

/* The _hot loops: the same operation as above on one page, again and again. */
static __attribute__((noinline)) uint64_t
loop_kernel_hot(struct lookup_thread *t, uint32_t page, int fd, size_t len, unsigned shift,
		const _Atomic unsigned *stop)
{
	const off_t off = (off_t)page << shift;
	void *buf = t->buf;
	uint64_t ops = 0;

	do {
		for (unsigned i = 0; i < LOOKUP_BATCH; i++) {
			ssize_t n = pread(fd, buf, len, off);

			if (unlikely(n != (ssize_t)len))
				return lookup_fail(t, n < 0 ? errno : EIO, page, ops);
		}
		ops += LOOKUP_BATCH;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

static __attribute__((noinline)) uint64_t
loop_lpc_pread_hot(struct lookup_thread *t, uint32_t page, struct lpc_file *f, size_t len,
		   unsigned shift, const _Atomic unsigned *stop)
{
	const uint64_t off = (uint64_t)page << shift;
	void *buf = t->buf;
	uint64_t ops = 0;

	do {
		for (unsigned i = 0; i < LOOKUP_BATCH; i++) {
			ssize_t n = lpc_pread(f, buf, len, off);

			if (unlikely(n != (ssize_t)len))
				return lookup_fail(t, n < 0 ? (int)-n : EIO, page, ops);
		}
		ops += LOOKUP_BATCH;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	return ops;
}

/* What a B-tree's search reads of an inner node: a few words. */
static void read_fields(const void *data, size_t len, void *arg)
{
	const uint64_t *w = data;
	uint64_t sum = 0;

	/* len is a power of two: a mask, not a division. */
	for (unsigned i = 0; i < 8; i++)
		sum += w[(i * 61) & (len / sizeof(uint64_t) - 1)];
	*(uint64_t *)arg = sum;
}

/* find, read the fields the optimistic variants read, put: the same work
 * as lpc_page_read(read_fields), the referenced way. */
static __attribute__((noinline)) uint64_t
loop_find_hot(struct lookup_thread *t, uint32_t page, struct lpc_file *f, size_t len,
	      const _Atomic unsigned *stop)
{
	uint64_t ops = 0, sink = 0;

	do {
		for (unsigned i = 0; i < LOOKUP_BATCH; i++) {
			struct lpc_page *p;
			int rc = lpc_page_find(f, page, &p);

			if (unlikely(rc))
				return lookup_fail(t, -rc, page, ops);
			read_fields(lpc_page_data(p), len, &sink);
			lpc_page_put(p);
		}
		ops += LOOKUP_BATCH;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	t->sink = sink;
	return ops;
}

static __attribute__((noinline)) uint64_t
loop_page_read(struct lookup_thread *t, uint32_t page, struct lpc_file *f,
	       const _Atomic unsigned *stop)
{
	uint64_t ops = 0, sink = 0;

	do {
		for (unsigned i = 0; i < LOOKUP_BATCH; i++) {
			int rc = lpc_page_read(f, page, 0, read_fields, &sink);

			if (unlikely(rc))
				return lookup_fail(t, -rc, page, ops);
		}
		ops += LOOKUP_BATCH;
	} while (!atomic_load_explicit(stop, memory_order_relaxed));
	t->sink = sink;
	return ops;
}

/* pool_fn: runs the current variant's loop on worker id's page numbers. */
static uint64_t lookup_slice_fn(unsigned id, void *arg, const _Atomic unsigned *stop)
{
	struct lookup *lk = arg;
	struct lookup_thread *t = &lk->t[id];

	switch (lk->variant) {
	case LV_FLOOR:
		return loop_floor(t, lk->floor.desc, stop);
	case LV_LOCKLESS:
		return loop_find(t, lk->file[LPC_LOOKUP_LOCKLESS], stop);
	case LV_LOCKED:
		return loop_find(t, lk->file[LPC_LOOKUP_LOCKED], stop);
	case LV_KERNEL:
		return loop_kernel(t, lk->kfd, lk->page_size, lk->page_shift, stop);
	case LV_LPC_PREAD:
		return loop_lpc_pread(t, lk->file[LPC_LOOKUP_LOCKLESS],
				      lk->page_size, lk->page_shift, stop);
	case LV_KERNEL_HOT:
		return loop_kernel_hot(t, t->hot, lk->kfd, lk->page_size, lk->page_shift, stop);
	case LV_LPC_PREAD_HOT:
		return loop_lpc_pread_hot(t, t->hot, lk->file[LPC_LOOKUP_LOCKLESS],
					  lk->page_size, lk->page_shift, stop);
	case LV_LOCKLESS_HOT:
		return loop_find_hot(t, t->hot, lk->file[LPC_LOOKUP_LOCKLESS], lk->page_size, stop);
	case LV_OPTIMISTIC:
		return loop_page_read(t, t->hot, lk->file[LPC_LOOKUP_LOCKLESS], stop);
	case LV_KERNEL_SHARED:
		return loop_kernel_hot(t, t->shared, lk->kfd, lk->page_size, lk->page_shift, stop);
	case LV_LPC_PREAD_SHARED:
		return loop_lpc_pread_hot(t, t->shared, lk->file[LPC_LOOKUP_LOCKLESS],
					  lk->page_size, lk->page_shift, stop);
	case LV_LOCKLESS_SHARED:
		return loop_find_hot(t, t->shared, lk->file[LPC_LOOKUP_LOCKLESS], lk->page_size,
				     stop);
	case LV_OPTIMISTIC_SHARED:
		return loop_page_read(t, t->shared, lk->file[LPC_LOOKUP_LOCKLESS], stop);
	case LV_NR:
		break;
	}
	return 0;
}

/* A uniformly random page of the file. */
static uint32_t draw_page(uint64_t *s, uint32_t nr_pages)
{
	return rng_below(s, nr_pages);
}

static void fill_indices(uint32_t *idx, uint32_t nr_pages, uint64_t seed)
{
	uint64_t s = splitmix64(seed);

	for (unsigned i = 0; i < LOOKUP_IDX_ENTRIES; i++)
		idx[i] = draw_page(&s, nr_pages);
}

/* The hot page of the thread whose random pages come from seed: drawn from a
 * stream of its own, so that it is no particular one of those pages. */
static uint32_t hot_page(uint32_t nr_pages, uint64_t seed)
{
	uint64_t s = splitmix64(~seed);

	return draw_page(&s, nr_pages);
}

/* The --variants list as a mask (bit v: run variant v); dies on a bad name. */
static unsigned lookup_variants(const struct bench_opts *o)
{
	return bench_name_mask(o->variants, lookup_variant_name, LV_NR, (1u << LV_NR) - 1,
			       "lookup");
}

static void lookup_check_opts(const struct bench_opts *o)
{
	lookup_variants(o);
}

static double lookup_estimate_s(const struct bench_opts *o)
{
	return (double)(o->warmup + o->rounds) * o->nr_tconf *
	       __builtin_popcount(lookup_variants(o)) * o->slice_ms / 1000.0;
}

/* MemAvailable from /proc/meminfo, in bytes; 0 if unknown. */
static uint64_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kib = 0;
	char line[128];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib << 10;
}

static void lookup_echo(const struct lookup *lk, const struct lpc_config *cfg)
{
	const struct bench_opts *o = lk->env->opts;

	printf("lookup: one hit on a cached page per operation: a uniformly random page, or (_hot) the thread's one page\n");
	printf("  file       %" PRIu64 " MiB = %" PRIu32 " pages of %zu B, in %s/ (%s)\n",
	       lk->file_bytes >> 20, lk->nr_pages, lk->page_size, lk->df.dir,
	       lk->df.fstype);
	if (lk->df.tmpfs)
		printf("             note: tmpfs: lpc opens it buffered (no O_DIRECT); the null backend never reads it\n");
	printf("  caches     2 x %zu MiB (file + %" PRIu64 " MiB), I/O backend null: %s and %s\n",
	       cfg->cache_bytes >> 20, lookup_slack(lk->file_bytes) >> 20,
	       cache_name[LPC_LOOKUP_LOCKLESS], cache_name[LPC_LOOKUP_LOCKED]);
	printf("  variants   (run in this order in every round)\n");
	for (unsigned v = 0; v < LV_NR; v++)
		if (lk->variants & (1u << v))
			printf("    %-13s %s\n", lookup_variant_name[v],
			       lookup_variant_desc[v]);
	printf("  pages      %u random page numbers per thread (xorshift64*, seed %" PRIu64 ")\n",
	       LOOKUP_IDX_ENTRIES, o->seed);
	printf("  stop check every %u operations\n", LOOKUP_BATCH);
	fflush(stdout);
}

static void lookup_open_caches(struct lookup *lk, const struct lpc_config *base)
{
	for (int m = 0; m < LOOKUP_NR_CACHES; m++) {
		struct lpc_config cfg = *base;
		int rc;

		cfg.lookup_mode = m;
		rc = lpc_cache_create(&cfg, &lk->cache[m]);
		if (rc)
			die_err(-rc, "lpc_cache_create (%s, %zu MiB)", cache_name[m],
				cfg.cache_bytes >> 20);
		rc = lpc_file_open(lk->cache[m], lk->df.path, O_RDONLY, 0, &lk->file[m]);
		if (rc)
			die_err(-rc, "lpc_file_open %s (%s cache)", lk->df.path,
				cache_name[m]);
	}
}

/* Reads every page into both caches, then checks that find sees them all. */
static void lookup_warm_caches(struct lookup *lk)
{
	for (int m = 0; m < LOOKUP_NR_CACHES; m++) {
		struct lpc_stats st;

		progress("lookup: filling the %s cache", cache_name[m]);
		for (uint32_t i = 0; i < lk->nr_pages; i++) {
			struct lpc_page *p;
			int rc = lpc_page_get(lk->file[m], i, 0, &p);

			if (rc)
				die_err(-rc, "lpc_page_get of page %" PRIu32 " (%s cache)",
					i, cache_name[m]);
			lpc_page_put(p);
		}
		for (uint32_t i = 0; i < lk->nr_pages; i++) {
			struct lpc_page *p;
			int rc = lpc_page_find(lk->file[m], i, &p);

			if (rc)
				die_err(-rc, "page %" PRIu32 " of %" PRIu32 " is not cached right after filling the %s cache (%zu MiB budget)",
					i, lk->nr_pages, cache_name[m],
					(lk->file_bytes + lookup_slack(lk->file_bytes)) >> 20);
			lpc_page_put(p);
		}
		lpc_stats(lk->cache[m], &st);
		/* Pages, not reads: a miss reads a run of pages with one I/O. */
		if (st.read_bytes != (uint64_t)lk->nr_pages * lk->page_size)
			die("the %s cache read %" PRIu64 " pages to hold %" PRIu32
			    ": something evicted during the fill",
			    cache_name[m], st.read_bytes / lk->page_size, lk->nr_pages);
	}
}

/*
 * Opens the buffered fd of the kernel variant, reads the file through it, and
 * checks with mincore() that every page is resident, so that the kernel, like
 * lpc, is measured on hits only.
 */
static void lookup_warm_kernel(struct lookup *lk)
{
	unsigned char *vec, *buf;
	long sys_page = sysconf(_SC_PAGESIZE);
	size_t nr_sys_pages, missing = 0;
	void *map;
	int rc;

	progress("lookup: reading the file into the kernel's page cache");
	lk->kfd = open(lk->df.path, O_RDONLY | O_CLOEXEC);
	if (lk->kfd < 0)
		die_err(errno, "opening %s", lk->df.path);
	buf = xaligned_alloc(4096, LOOKUP_WARM_CHUNK);
	for (uint64_t off = 0; off < lk->file_bytes;) {
		ssize_t n = pread(lk->kfd, buf, LOOKUP_WARM_CHUNK, (off_t)off);

		if (n <= 0)
			die_err(n < 0 ? errno : EIO, "reading %s at %" PRIu64,
				lk->df.path, off);
		off += (uint64_t)n;
	}
	free(buf);
	/* Random reads: readahead would only add work to the kernel's hits. */
	rc = posix_fadvise(lk->kfd, 0, 0, POSIX_FADV_RANDOM);
	if (rc)
		die_err(rc, "posix_fadvise(POSIX_FADV_RANDOM) on %s", lk->df.path);

	map = mmap(NULL, lk->file_bytes, PROT_READ, MAP_SHARED, lk->kfd, 0);
	if (map == MAP_FAILED)
		die_err(errno, "mapping %s to check its residency", lk->df.path);
	nr_sys_pages = (lk->file_bytes + (uint64_t)sys_page - 1) / (uint64_t)sys_page;
	vec = xmalloc(nr_sys_pages);
	if (mincore(map, lk->file_bytes, vec))
		die_err(errno, "mincore on %s", lk->df.path);
	for (size_t i = 0; i < nr_sys_pages; i++)
		missing += !(vec[i] & 1);
	free(vec);
	munmap(map, lk->file_bytes);
	if (missing)
		die("%zu of %zu pages of %s are not in the kernel's page cache after reading it: not enough memory?",
		    missing, nr_sys_pages, lk->df.path);
}

static void lookup_setup(struct lookup *lk)
{
	const struct bench_opts *o = lk->env->opts;
	struct lpc_config cfg;
	uint64_t need, avail;

	lpc_config_init(&cfg);
	lk->page_size = cfg.page_size;
	lk->page_shift = (unsigned)__builtin_ctzll(cfg.page_size);
	lk->file_bytes = (uint64_t)o->file_mb << 20;
	if (lk->file_bytes < lk->page_size)
		die("--file-mb %u holds no page of %zu B", o->file_mb, lk->page_size);
	if (lk->file_bytes / lk->page_size > UINT32_MAX)
		die("--file-mb %u: more pages than this benchmark numbers (2^32)",
		    o->file_mb);
	lk->nr_pages = (uint32_t)(lk->file_bytes / lk->page_size);
	cfg.cache_bytes = lk->file_bytes + lookup_slack(lk->file_bytes);
	cfg.io_backend = LPC_IO_NULL;

	datafile_choose(o->dir, &lk->df);
	lookup_echo(lk, &cfg);

	/* Two caches, the kernel's copy, and a little: fail now with a clear
	 * message rather than later in the OOM killer. */
	need = 2 * cfg.cache_bytes + lk->file_bytes;
	avail = mem_available();
	if (avail && need > avail)
		die("lookup needs about %" PRIu64 " MiB of memory (two caches and the kernel's copy of a %u MiB file), %" PRIu64 " MiB are available: lower --file-mb",
		    need >> 20, o->file_mb, avail >> 20);

	progress("lookup: writing %u MiB to %s", o->file_mb, lk->df.dir);
	datafile_create(&lk->df, lk->file_bytes);

	lookup_open_caches(lk, &cfg);
	lookup_warm_caches(lk);
	lookup_warm_kernel(lk);
	floor_create(&lk->floor, lk->nr_pages);

	lk->nr_threads = 0;
	for (unsigned i = 0; i < o->nr_tconf; i++)
		if (o->threads[i] > lk->nr_threads)
			lk->nr_threads = o->threads[i];
	lk->t = xaligned_alloc(BENCH_CACHELINE, lk->nr_threads * sizeof(*lk->t));
	memset(lk->t, 0, lk->nr_threads * sizeof(*lk->t));
	for (unsigned i = 0; i < lk->nr_threads; i++) {
		lk->t[i].idx = xmalloc(LOOKUP_IDX_ENTRIES * sizeof(uint32_t));
		fill_indices(lk->t[i].idx, lk->nr_pages, o->seed + i);
		lk->t[i].hot = hot_page(lk->nr_pages, o->seed + i);
		/* One page for all: drawn from a stream no worker's hot page uses. */
		lk->t[i].shared = hot_page(lk->nr_pages, o->seed ^ 0x5a5a5a5aull);
		lk->t[i].buf = xaligned_alloc(4096, lk->page_size);
		memset(lk->t[i].buf, 0, lk->page_size);
	}
	lk->pool = pool_create(lk->nr_threads, o->pin);
	progress_done();
	if (lk->variants & (1u << LV_KERNEL_HOT | 1u << LV_LPC_PREAD_HOT | 1u << LV_LOCKLESS_HOT |
			    1u << LV_OPTIMISTIC)) {
		printf("  hot pages  one per worker, drawn once, the same for kernel_hot, lpc_pread_hot, lockless_hot and optimistic; workers 0..%u:",
		       lk->nr_threads - 1);
		for (unsigned i = 0; i < lk->nr_threads; i++)
			printf(" %" PRIu32, lk->t[i].hot);
		printf("\n");
	}
	if (lk->variants & (1u << LV_KERNEL_SHARED | 1u << LV_LPC_PREAD_SHARED |
			    1u << LV_LOCKLESS_SHARED | 1u << LV_OPTIMISTIC_SHARED))
		printf("  shared     page %" PRIu32 ", read by every worker in the _shared variants\n",
		       lk->t[0].shared);
	printf("  workers    %u, %u pinned (%s); slices ended by a %s coordinator\n",
	       lk->nr_threads, pool_pinned(lk->pool),
	       o->pin ? "worker i on allowed CPU i mod CPUs" : "--no-pin",
	       pool_coord_rt(lk->pool) ? "SCHED_FIFO" :
	       "normal-priority (no SCHED_FIFO: oversubscribed slices may overrun)");
	printf("\n");
	fflush(stdout);
}

static void lookup_teardown(struct lookup *lk)
{
	pool_destroy(lk->pool);
	for (int m = 0; m < LOOKUP_NR_CACHES; m++) {
		int rc = lpc_file_close(lk->file[m]);

		if (rc)
			die_err(-rc, "lpc_file_close (%s cache)", cache_name[m]);
		rc = lpc_cache_destroy(lk->cache[m]);
		if (rc)
			die_err(-rc, "lpc_cache_destroy (%s cache)", cache_name[m]);
	}
	close(lk->kfd);
	floor_destroy(&lk->floor);
	for (unsigned i = 0; i < lk->nr_threads; i++) {
		free(lk->t[i].idx);
		free(lk->t[i].buf);
	}
	free(lk->t);
	datafile_remove();
}

/* Dies with what the first failed worker of the last slice saw. */
static void lookup_check_slice(const struct lookup *lk, unsigned active)
{
	static const char *const op[LV_NR] = {
		[LV_FLOOR] = "the floor's reference (a descriptor at 0)",
		[LV_LOCKLESS] = "lpc_page_find (lockless cache)",
		[LV_LOCKED] = "lpc_page_find (locked cache)",
		[LV_KERNEL] = "pread",
		[LV_LPC_PREAD] = "lpc_pread",
		[LV_KERNEL_HOT] = "pread (hot page)",
		[LV_LPC_PREAD_HOT] = "lpc_pread (hot page)",
		[LV_LOCKLESS_HOT] = "lpc_page_find (hot page)",
		[LV_OPTIMISTIC] = "lpc_page_read (hot page)",
		[LV_KERNEL_SHARED] = "pread (shared page)",
		[LV_LPC_PREAD_SHARED] = "lpc_pread (shared page)",
		[LV_LOCKLESS_SHARED] = "lpc_page_find (shared page)",
		[LV_OPTIMISTIC_SHARED] = "lpc_page_read (shared page)",
	};

	for (unsigned i = 0; i < active; i++) {
		const struct lookup_thread *t = &lk->t[i];

		if (!t->err)
			continue;
		die_err(t->err, "%s of page %" PRIu32 " failed in worker %u of %u%s",
			op[lk->variant], t->err_page, i, active,
			t->err == ENOENT ? " (a page left a cache that holds the whole file)" : "");
	}
}

static void lookup_csv_slice(const struct bench_env *env, unsigned round,
			     unsigned threads, enum lookup_variant v,
			     const struct pool_slice *s)
{
	struct csv_key k = { "lookup", round + 1, threads, lookup_variant_name[v], NULL };

	if (!env->csv)
		return;
	k.metric = "ops";
	csv_raw(env->csv, &k, (double)s->ops);
	k.metric = "ticks";
	csv_raw(env->csv, &k, (double)s->ticks);
	k.metric = "wall_ns";
	csv_raw(env->csv, &k, (double)s->wall_ns);
	k.metric = "cpu_ns";
	csv_raw(env->csv, &k, (double)s->cpu_ns);
	k.metric = "ops_thread_min";
	csv_raw(env->csv, &k, (double)s->ops_min);
	k.metric = "ops_thread_max";
	csv_raw(env->csv, &k, (double)s->ops_max);
}

/* Runs the rounds: warm-up ones into a scratch slot, then the measured ones. */
static void lookup_measure(struct lookup *lk, struct lookup_results *res)
{
	const struct bench_opts *o = lk->env->opts;
	uint64_t slice_ns = (uint64_t)o->slice_ms * 1000000u;
	unsigned total = o->warmup + o->rounds;
	uint64_t t0 = now_ns();

	for (unsigned r = 0; r < total; r++) {
		bool warm = r < o->warmup;
		unsigned mr = warm ? 0 : r - o->warmup;
		double left = (double)(total - r) / total * lookup_estimate_s(o);

		if (warm)
			progress("lookup: warm-up round %u/%u, ~%.0f s left", r + 1,
				 o->warmup, left);
		else
			progress("lookup: round %u/%u, ~%.0f s left", mr + 1,
				 o->rounds, left);
		for (unsigned tc = 0; tc < o->nr_tconf; tc++) {
			for (unsigned v = 0; v < LV_NR; v++) {
				struct pool_slice s;

				if (!(lk->variants & (1u << v)))
					continue;
				lk->variant = v;
				pool_run(lk->pool, o->threads[tc], lookup_slice_fn, lk,
					 slice_ns, &s);
				lookup_check_slice(lk, o->threads[tc]);
				if (warm)
					continue;
				res->slice[((size_t)mr * o->nr_tconf + tc) * LV_NR + v] = s;
				lookup_csv_slice(lk->env, mr, o->threads[tc], v, &s);
			}
		}
	}
	progress_done();
	printf("measured %u rounds in %.1f s\n\n", o->rounds,
	       (double)(now_ns() - t0) / 1e9);
}

static void lookup_run(const struct bench_env *env)
{
	const struct bench_opts *o = env->opts;
	struct lookup lk = { .env = env, .kfd = -1, .variants = lookup_variants(o) };
	struct lookup_results res = {
		.rounds = o->rounds,
		.nr_tconf = o->nr_tconf,
		.threads = o->threads,
		.variants = lk.variants,
	};

	res.slice = xcalloc((size_t)o->rounds * o->nr_tconf * LV_NR, sizeof(*res.slice));
	lookup_setup(&lk);
	lookup_measure(&lk, &res);
	for (int m = 0; m < LOOKUP_NR_CACHES; m++)
		lpc_stats(lk.cache[m], &res.stats[m]);
	lookup_report(env, &res);
	lookup_teardown(&lk);
	free(res.slice);
}

const struct bench bench_lookup = {
	.name = "lookup",
	.help = "cached-page hit: refcount floor, lpc lockless and locked find+put,\n"
		"           kernel pread, lpc_pread (random pages), kernel_hot, lpc_pread_hot,\n"
		"           lockless_hot, optimistic (lpc_page_read) (one page per thread),\n"
		"           kernel_shared, lpc_pread_shared, lockless_shared,\n"
		"           optimistic_shared (one page for all)",
	.run = lookup_run,
	.check_opts = lookup_check_opts,
	.estimate_s = lookup_estimate_s,
};
