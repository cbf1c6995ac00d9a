/* SPDX-License-Identifier: MIT */
/*
 * cache.c - configuration, cache create/destroy, lpc_stats, and the public
 * calls that take a cache (lpc_file_open, lpc_page_alloc): the top part,
 * which puts a pool (page/pool.c: memory), an I/O backend and a file table
 * together.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

#define LPC_MIN_PAGE 512u
#define LPC_MAX_PAGE (2u << 20)
#define LPC_ALLOC_WAIT_MS_DEFAULT 1000u
/* One read I/O's cap: the largest request lpc makes, 2 MiB, at most
 * LPC_IO_MAX_IOV pages (the kernel's max_sectors_kb is 128 KiB - 4 MiB and
 * its readahead sends up to read_ahead_kb at once; the device split does the
 * rest).  It was 4 MiB, the best of 1, 2 and 4 MiB in `lpcbench scan
 * --rounds 5` (64 MiB cache, 256 MiB file, two runs each, interleaved with
 * main's build, a machine at load 8-15: ratios noisy), lpc_uring/kernel
 * medians at 4, 16, 128 KiB calls, 1 scanner: 1.96, 0.85, 1.18 (1 MiB),
 * 1.79, 1.08, 0.73 (2 MiB), 2.84, 1.32, 0.97 (4 MiB); 2 scanners: 1.30,
 * 0.80, 0.73; 1.66, 0.69, 0.60; 1.23, 0.75, 0.66; and lpc_uring's CPU per
 * MiB 0.37-0.45 ms (1 MiB), 0.26-0.37 (2 MiB), 0.22-0.28 (4 MiB): a quarter
 * of the requests for the same bytes.  Measured before run.c's
 * run_order_frames: a run's frames were then descending, and a virtio disk
 * (max_segments 254) split every request into pieces of at most 1016 KiB, so
 * the cap set how many pieces went out together, not their size; since,
 * a 4 MiB run of adjacent frames is one request.  Measured again with ordered
 * frames on a quiet machine (`lpcbench scan --cache-mb 256`, a 1 GiB file;
 * calls with each cap interleaved, LPC_READ_MAX_KB_DEFAULT set through a
 * temporary environment override, not kept), 2 MiB won, and is the default.
 * One scanner, 128 KiB calls, five calls of `--variants lpc_uring,lpc_sync,
 * kernel --calls 128 --threads 1 --rounds 5` per cap: lpc_uring/kernel
 * medians 1.06-1.10 with 2 MiB runs against 0.94-1.02 with 4 MiB, lpc_sync
 * 1.04-1.19 against 0.88-1.04; three full runs: 1 scanner at 4, 16, 128 KiB
 * 1.12-1.21, 1.08-1.15, 0.97-1.09 against 1.06-1.15, 0.97-1.04, 0.94-1.03;
 * 2 scanners about even (0.93-1.09 against 0.89-1.22 in four calls of
 * `--calls 4,128 --threads 2 --rounds 3`; the review's five pairs: 1.00-1.02
 * of the 4 MiB figure, tests/attack_runcap).  The block layer's own counts
 * (/sys/block/vda/stat): a 2 MiB request completed in 2.8-3.1 ms, a 4 MiB
 * one in 3.8-5.8 ms, so a reader waiting on the first run of a window has
 * its pages sooner while the next run is at the device.  A 2 MiB run is also
 * one registered 2 MiB chunk of the arena when its frames are (one
 * READ_FIXED, io/uring.c); a 4 MiB one was always two or more.  CPU per MiB:
 * within the noise (101-198 us against 99-203). */
#ifndef LPC_READ_MAX_KB_DEFAULT
#define LPC_READ_MAX_KB_DEFAULT 2048u
#endif
/* A readahead run's bridge (run.c U1): a page cached within the first
 * 32 KiB of a readahead run does not end it; the request reads that page's
 * bytes into a discard buffer.  Why: readers that keep a hot set cached
 * split a scanner's windows into runs of three or four absent pages
 * (lpcbench read's scan-mix: a Zipf hot set of a quarter of the file), and
 * a window became hundreds of requests, more jobs than readahead's queue
 * holds: windows were cut, and the scanner read the rest itself, a few
 * pages a request (160-191 kpages/s against the kernel's 228-256).  The
 * reach trades the scanner's speed against the readers', who share the
 * device and the two CPUs with it; measured with scan-mix, runs of each
 * reach interleaved (one reader; reach: scanner kpages/s, the readers'
 * kreads/s, their hot set's hit ratio; the kernel's scanner 236-264,
 * its readers 8.6-13.2, 0.75-0.78 in the same runs):
 *   none             162-186   33-37   0.824-0.832   (five runs)
 *   32 KiB (this)    240-250   23-25   0.822-0.829   (four)
 *   64 KiB           285-295   18-20   0.818-0.826   (four)
 *   any gap of up to
 *   8 or 32 pages    406-433   0.7-2.2 0.800-0.830   (one each, two
 *                    reader counts: the readers' misses queued behind
 *                    2 MiB requests)
 * 32 KiB brings the scanner to the kernel's and keeps lpc's readers at two
 * to three times the kernel's with their hit ratio within 0.01 of none.
 * A largest window of 4 or 2 MiB instead of 8 did not give the hit ratio
 * back.  (Runs with no cached page in them, as lpcbench scan's, are not
 * touched.) */
#ifndef LPC_RUN_BRIDGE_KB
#define LPC_RUN_BRIDGE_KB 32u
#endif
/* The largest window (readahead_max_kb's default): 1/8 of the cache, but
 * no less than LPC_READAHEAD_MAX_KB_MIN nor more than this (a window never
 * takes more than the free frames: run.c U2; the reclaimer's refill for
 * readahead makes room for one, reclaimer.c ra_high).  8 MiB: the kernel's
 * read_ahead_kb on the virtio disk lpc is measured on, and the best of
 * 512 KiB, 1, 2, 4 and 8 MiB in `lpcbench scan --ra-max-kb N` (64 MiB
 * cache, 256 MiB file; interleaved runs, ratios within a run) on a machine
 * at load 11-15 (2 CPUs: the figures are noisy), lpc/O_DIRECT 1 MiB at
 * 128 KiB calls, lpc_uring and lpc_sync, two runs each, 1 scanner:
 * 512 KiB 0.51-0.86, 1 MiB 0.53-0.85, 2 MiB 0.66-2.68, 4 MiB 0.87-1.84,
 * 8 MiB 0.83-3.36; 2 scanners: 0.82-1.15, 0.32-1.10, 0.79-1.05, 1.14-2.00,
 * 1.55-5.63.  A larger window needs more free frames kept (reclaimer.c caps
 * the room at an eighth of the cache; a quarter is readahead's share, Q5),
 * and lowers CLOCK2's active maximum (four windows are kept inactive:
 * reclaim.h, lpc_reclaim_active_max).  16 MiB above a 128 MiB cache (tried:
 * 1/16 of it past 8 MiB) lifted one scanner in 128 KiB calls at 256 MiB
 * from 0.89-1.09x the kernel to 1.06-1.17x, but with the active maximum at
 * 75 % instead of 87.5 % a scan took 3-21 % of the hits of a hot set of
 * 76-87 % of a 192-384 MiB cache, which kept them all before
 * (tests/attack_rawin): not kept. */
#define LPC_READAHEAD_MAX_KB_MIN 512u
#ifndef LPC_READAHEAD_MAX_KB_DEFAULT
#define LPC_READAHEAD_MAX_KB_DEFAULT 8192u
#endif
/* A stream's first window (readahead_kb's default): the kernel's default. */
#define LPC_READAHEAD_KB_DEFAULT 128u

/* 0.2's fields came out of the reserved space: the 0.1 layout stands. */
_Static_assert(sizeof(struct lpc_config) == 2 * sizeof(size_t) + 2 * sizeof(int) + 8 * 8,
	       "struct lpc_config keeps its 0.1 size");

LPC_EXPORT void lpc_config_init(struct lpc_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->cache_bytes = 64u << 20;
	cfg->page_size = 4096;
	cfg->io_backend = LPC_IO_URING;
	cfg->lookup_mode = LPC_LOOKUP_LOCKLESS;
}

static int config_check(const struct lpc_config *cfg)
{
	size_t ps = cfg->page_size;

	if (ps < LPC_MIN_PAGE || ps > LPC_MAX_PAGE || (ps & (ps - 1)))
		return -EINVAL;
	if (cfg->cache_bytes < ps || cfg->cache_bytes / ps > UINT32_MAX)
		return -EINVAL;
	if (cfg->io_backend != LPC_IO_SYNC && cfg->io_backend != LPC_IO_NULL &&
	    cfg->io_backend != LPC_IO_URING)
		return -EINVAL;
	if (cfg->lookup_mode != LPC_LOOKUP_LOCKLESS && cfg->lookup_mode != LPC_LOOKUP_LOCKED)
		return -EINVAL;
	if (cfg->reclaim_policy != LPC_RECLAIM_CLOCK2 && cfg->reclaim_policy != LPC_RECLAIM_CLOCK)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(cfg->reserved) / sizeof(cfg->reserved[0]); i++)
		if (cfg->reserved[i])
			return -EINVAL;
	if (cfg->reserved_wb || cfg->dirty_background_pct > 100 || cfg->dirty_limit_pct > 100 ||
	    (cfg->dirty_expire_ms > UINT32_MAX && cfg->dirty_expire_ms != LPC_DIRTY_EXPIRE_NEVER) ||
	    (cfg->dirty_limit_pct && cfg->dirty_background_pct > cfg->dirty_limit_pct))
		return -EINVAL;
	return 0;
}

LPC_EXPORT int lpc_cache_create(const struct lpc_config *cfg, struct lpc_cache **out)
{
	struct lpc_cache *c;
	int rc;

	if (!cfg || !out)
		return -EINVAL;
	rc = config_check(cfg);
	if (rc)
		return rc;
	c = aligned_alloc(LPC_CACHELINE, sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	rc = lpc_pool_init(&c->pool, (uint32_t)(cfg->cache_bytes / cfg->page_size),
			   cfg->page_size);
	if (rc) {
		free(c);
		return rc;
	}
	c->locked_lookup = cfg->lookup_mode == LPC_LOOKUP_LOCKED;
	c->io.ops = cfg->io_backend == LPC_IO_NULL ? &lpc_io_null_ops : &lpc_io_sync_ops;
	/* io_uring where the kernel allows it; refused (seccomp, the
	 * io_uring_disabled sysctl, an old kernel): sync, counted. */
	if (cfg->io_backend == LPC_IO_URING &&
	    lpc_io_uring_init(&c->io, &c->pool.owner, c->pool.frames, c->pool.frames_bytes) < 0)
		c->pool.owner.retired[LPC_C_URING_FALLBACKS]++; /* no other thread
								 * knows c yet */
	lpc_files_init(&c->files, &c->pool, &c->io, c->locked_lookup);
	{
		uint64_t kb = cfg->readahead_max_kb;
		uint64_t pages, run;

		/* A run's cap: 2 MiB, or readahead_max_kb when set below it. */
		run = LPC_READ_MAX_KB_DEFAULT;
		if (kb && kb < run)
			run = kb;
		run = (run << 10) >> c->pool.page_shift;
		c->files.run_max = run < 1 ? 1 : run > LPC_IO_MAX_IOV ? LPC_IO_MAX_IOV : (uint32_t)run;
		c->files.ra_drop = true; /* readahead.c A5 */
		/* A readahead run's bridge over cached pages (run.c U1). */
		run = (LPC_RUN_BRIDGE_KB << 10) >> c->pool.page_shift;
		if (run > 1) {
			c->files.discard = aligned_alloc(c->pool.page_size, c->pool.page_size);
			c->files.run_bridge = c->files.discard ? (uint32_t)run : 0;
		}
		/* The largest window: 1/8 of the cache, within [512 KiB, 8 MiB]. */
		if (!kb) {
			kb = (uint64_t)(cfg->cache_bytes >> 10) / 8;
			if (kb > LPC_READAHEAD_MAX_KB_DEFAULT)
				kb = LPC_READAHEAD_MAX_KB_DEFAULT;
			if (kb < LPC_READAHEAD_MAX_KB_MIN)
				kb = LPC_READAHEAD_MAX_KB_MIN;
		}
		pages = (kb << 10) >> c->pool.page_shift;
		c->files.ra_max = pages < 1 ? 1 : pages > UINT32_MAX / 4 ? UINT32_MAX / 4
									  : (uint32_t)pages;
		kb = cfg->readahead_kb ? cfg->readahead_kb : LPC_READAHEAD_KB_DEFAULT;
		pages = (kb << 10) >> c->pool.page_shift;
		c->files.ra_init = pages < 1 ? 1 : pages > c->files.ra_max ? c->files.ra_max
									 : (uint32_t)pages;
		if (cfg->readahead_kb == LPC_READAHEAD_OFF)
			c->files.ra_max = 0;
	}
	lpc_reclaim_init(&c->reclaim, &c->pool, cfg->reclaim_policy,
			 cfg->alloc_wait_ms ? cfg->alloc_wait_ms : LPC_ALLOC_WAIT_MS_DEFAULT);
	/* Readahead's refills make room for its largest window (reclaimer.c). */
	lpc_reclaim_set_ra_window(&c->reclaim, c->files.ra_max);
	rc = lpc_wb_init(&c->wb, &c->files, cfg->dirty_expire_ms, cfg->dirty_background_pct,
			 cfg->dirty_limit_pct, c->pool.nframes);
	if (rc) {
		lpc_files_destroy(&c->files);
		lpc_io_uring_destroy(&c->io);
		lpc_pool_destroy(&c->pool);
		free(c);
		return rc;
	}
	c->files.wb = &c->wb;
	lpc_wb_start(&c->wb); /* allowed; the thread starts when first needed */
	c->files.flush = lpc_wb_flush_file;
	*out = c;
	return 0;
}

/* True if users hold page references: every reference beyond the one each
 * cached page gives its index belongs to a user. */
static bool cache_busy(struct lpc_cache *c)
{
	uint32_t carved = atomic_load_explicit(&c->pool.fresh, memory_order_relaxed);
	uint64_t refs = 0;

	/* Fresh frames (page/alloc.c) were never handed out: ref 0. */
	for (uint32_t i = 0; i < carved; i++)
		refs += atomic_load_explicit(&c->pool.pages[i].ref, memory_order_relaxed);
	return refs > lpc_files_nrpages(&c->files);
}

/* Writes back every file.  Return: the first error.  Context: nobody else
 * uses the cache (the flusher is stopped). */
static int destroy_flush(struct lpc_cache *c)
{
	int err = 0;

	for (struct lpc_file *f = c->files.head; f; f = f->next) {
		int rc = lpc_wb_flush_file(f);

		if (!err)
			err = rc;
	}
	return err;
}

LPC_EXPORT int lpc_cache_destroy(struct lpc_cache *c)
{
	bool busy, scoped;
	int err;

	if (!c)
		return -EINVAL;
	/* The flusher first: a pass holds page references, which would make
	 * the cache look busy.  Then the background reclaimer: it changes the
	 * counts cache_busy compares.  If the cache is busy, both start again
	 * when needed. */
	lpc_wb_stop(&c->wb);
	lpc_reclaim_stop(&c->reclaim);
	/* The readahead thread finishes its windows (ra_worker.c Q4): they
	 * hold page references. */
	lpc_ra_worker_stop(&c->files);
	pthread_mutex_lock(&c->files.lock);
	busy = cache_busy(c);
	pthread_mutex_unlock(&c->files.lock);
	if (busy) {
		lpc_wb_start(&c->wb); /* allowed again; started if pages are dirty */
		return -EBUSY;
	}
	/* The closes' call_rcu and the barrier below need this thread
	 * registered with RCU; a scoped registration allocates nothing, so
	 * destroy fails only with -EINVAL or -EBUSY. */
	/* Write back first: every file is written (the flusher is stopped). */
	scoped = lpc_rcu_scope_enter();
	err = destroy_flush(c);
	lpc_files_close_all(&c->files);
	/* The closes' frees ask for the reclaimer's linger (page/alloc.c
	 * free_deferred, file.c file_free), which starts its thread again:
	 * stopped and joined once more, and never started again (the frees
	 * of the RCU barrier below), before the pool goes. */
	lpc_reclaim_retire(&c->reclaim);
	lpc_towner_orphan(&c->pool.owner);
	/* Wait for call_rcu callbacks that still point into this cache: free
	 * batches (they touch the free list), index nodes and files. */
	lpc_rcu_barrier();
	lpc_rcu_scope_exit(scoped);
#if LPC_DEBUG
	{
		/* Rule ACTIVE-COUNT at quiescence (reclaim/evict.c): every page
		 * was freed, each active one leaving the count as it went. */
		uint32_t freed, live = lpc_reclaim_active_census(&c->reclaim, &freed);
		uint32_t n = atomic_load_explicit(&c->pool.nactive, memory_order_relaxed);

		lpc_debug_check(live == 0 && freed == 0 && n == 0, "ACTIVE-COUNT", NULL,
				"at destroy the active count is %u and %u held, %u free frames carry "
				"ACTIVE (want 0 of each)",
				n, live, freed);
	}
#endif
	lpc_wb_destroy(&c->wb);
	lpc_io_uring_destroy(&c->io); /* after every thread's ring (orphan) */
	lpc_pool_destroy(&c->pool);
	lpc_files_destroy(&c->files);
	lpc_reclaim_destroy(&c->reclaim);
	free(c);
	return err;
}

/*
 * lpc_stats has three versions (src/lpc.map): lpc_stats@@LPC_0.3 fills the
 * whole struct; lpc_stats@LPC_0.2, which programs built against 0.2 call,
 * fills the fields up to wpin_dirtied (the 0.2 struct: 0.2 was released
 * with it, so the batch, stream and grace-period counters of 0.3 are past
 * its end), and
 * lpc_stats@LPC_0.1, which programs built against 0.1 call, only the fields
 * its struct had (up to frames_free).  Each old version writes nothing past
 * its struct (tests/packaging/stats_abi.c).  A static link resolves
 * lpc_stats to the default, @@LPC_0.3.
 */
LPC_EXPORT void lpc_stats_v03(struct lpc_cache *c, struct lpc_stats *out);
LPC_EXPORT void lpc_stats_v02(struct lpc_cache *c, struct lpc_stats *out);
LPC_EXPORT void lpc_stats_v01(struct lpc_cache *c, struct lpc_stats *out);

LPC_EXPORT void lpc_stats_v03(struct lpc_cache *c, struct lpc_stats *out)
{
	uint64_t cnt[LPC_NR_COUNTERS], tfree;

	if (!c || !out)
		return;
	lpc_towner_sum(&c->pool.owner, cnt, &tfree);
	memset(out, 0, sizeof(*out));
	/* An optimistic hit counts one store, in opt_hits only. */
	out->hits = cnt[LPC_C_HITS] + cnt[LPC_C_OPT_HITS];
	out->misses = cnt[LPC_C_MISSES];
	out->lookups = out->hits + out->misses; /* one store less on a hit */
	out->retries = cnt[LPC_C_RETRIES];
	out->reads = cnt[LPC_C_READS];
	out->read_bytes = cnt[LPC_C_READ_BYTES];
	out->read_errors = cnt[LPC_C_READ_ERRORS];
	out->optimistic_hits = cnt[LPC_C_OPT_HITS];
	out->optimistic_fallbacks = cnt[LPC_C_OPT_FALLBACKS];
	out->miss_ns_alloc = cnt[LPC_C_MISS_NS_ALLOC];
	out->miss_ns_insert = cnt[LPC_C_MISS_NS_INSERT];
	out->miss_ns_read = cnt[LPC_C_MISS_NS_READ];
	out->miss_ns_evict = cnt[LPC_C_MISS_NS_EVICT];
	out->direct_fallbacks = cnt[LPC_C_DIRECT_FALLBACKS];
	out->read_around = cnt[LPC_C_READ_AROUND];
	out->alloc_failures = cnt[LPC_C_ALLOC_FAILURES];
	out->invalidated = cnt[LPC_C_INVALIDATED];
	out->evictions = cnt[LPC_C_EVICTIONS];
	out->reclaim_scans = cnt[LPC_C_RECLAIM_SCANS];
	out->skipped_held = cnt[LPC_C_SKIPPED_HELD];
	out->skipped_locked = cnt[LPC_C_SKIPPED_LOCKED];
	out->skipped_dirty = cnt[LPC_C_SKIPPED_DIRTY];
	out->skipped_referenced = cnt[LPC_C_SKIPPED_REFERENCED];
	out->skipped_busy = cnt[LPC_C_SKIPPED_BUSY];
	out->direct_reclaims = cnt[LPC_C_DIRECT_RECLAIMS];
	out->reclaimer_wakeups = cnt[LPC_C_RECLAIMER_WAKEUPS];
	out->pin_fast = cnt[LPC_C_PIN_FAST];
	out->pin_slow = cnt[LPC_C_PIN_SLOW];
	out->pages_pinned = cnt[LPC_C_PAGES_PINNED];
	out->writes = cnt[LPC_C_WRITES];
	out->write_bytes = cnt[LPC_C_WRITE_BYTES];
	out->writeback_pages = cnt[LPC_C_WB_PAGES];
	out->vectored_writes = cnt[LPC_C_WB_WRITES];
	out->write_errors = cnt[LPC_C_WRITE_ERRORS];
	out->throttled = cnt[LPC_C_THROTTLED];
	out->fsyncs = cnt[LPC_C_FSYNCS];
	out->uring_fallbacks = cnt[LPC_C_URING_FALLBACKS];
	out->uring_unregistered = cnt[LPC_C_URING_UNREGISTERED];
	out->read_pages = cnt[LPC_C_READ_PAGES];
	out->ra_windows = cnt[LPC_C_RA_WINDOWS];
	out->ra_async = cnt[LPC_C_RA_ASYNC];
	out->ra_pages = cnt[LPC_C_RA_PAGES];
	out->ra_used = cnt[LPC_C_RA_USED];
	out->ra_wasted = cnt[LPC_C_RA_WASTED];
	out->ra_dropped = cnt[LPC_C_RA_DROPPED];
	out->wpin_fast = cnt[LPC_C_WPIN_FAST];
	out->wpin_slow = cnt[LPC_C_WPIN_SLOW];
	out->wpin_dirtied = cnt[LPC_C_WPIN_DIRTIED];
	out->batches = cnt[LPC_C_BATCHES];
	out->batch_runs = cnt[LPC_C_BATCH_RUNS];
	out->batch_pages = cnt[LPC_C_BATCH_PAGES];
	out->stream_runs = cnt[LPC_C_STREAM_RUNS];
	out->stream_pages = cnt[LPC_C_STREAM_PAGES];
	out->grace_periods = cnt[LPC_C_GRACE_PERIODS];
	out->grace_period_ns = cnt[LPC_C_GRACE_PERIOD_NS];
	{
		int64_t nd = atomic_load_explicit(&c->files.ndirty, memory_order_relaxed);

		out->dirty_pages = nd > 0 ? (uint64_t)nd : 0;
	}
	out->frames = c->pool.nframes;
	out->descriptor_bytes = c->pool.pages_bytes;
	out->index_bytes = lpc_files_index_bytes(&c->files);
	{
		/* Pinned chunks lie over frames handed out (uring.c H3), so
		 * the union of the two is the longer prefix. */
		size_t touched = lpc_pool_touched_bytes(&c->pool);
		size_t pinned = lpc_io_uring_pinned_bytes(&c->io);

		out->resident_bytes = touched > pinned ? touched : pinned;
	}
	pthread_mutex_lock(&c->pool.free_lock);
	out->frames_free = c->pool.nfree + tfree;
	pthread_mutex_unlock(&c->pool.free_lock);
}

LPC_EXPORT void lpc_stats_v02(struct lpc_cache *c, struct lpc_stats *out)
{
	struct lpc_stats s;

	if (!c || !out)
		return;
	lpc_stats_v03(c, &s);
	memcpy(out, &s, offsetof(struct lpc_stats, batches));
}

LPC_EXPORT void lpc_stats_v01(struct lpc_cache *c, struct lpc_stats *out)
{
	struct lpc_stats s;

	if (!c || !out)
		return;
	lpc_stats_v03(c, &s);
	memcpy(out, &s, offsetof(struct lpc_stats, evictions));
}

#ifndef LPC_EMBEDDED
__asm__(".symver lpc_stats_v01, lpc_stats@LPC_0.1");
__asm__(".symver lpc_stats_v02, lpc_stats@LPC_0.2");
__asm__(".symver lpc_stats_v03, lpc_stats@@LPC_0.3");
#else
/* A private copy inside another library (liblpc_sqlite, built with
 * LPC_EMBEDDED): no symbol versions, since a .symver'ed default version is
 * exported past that library's "local: *" - a program linking it and
 * liblpc could then bind lpc_stats to the wrong copy.  Its own callers get
 * the current one. */
void lpc_stats(struct lpc_cache *c, struct lpc_stats *out)
{
	lpc_stats_v03(c, out);
}
#endif

LPC_EXPORT int lpc_file_open(struct lpc_cache *c, const char *path, int oflags, mode_t mode,
			     struct lpc_file **out)
{
	if (!c)
		return -EINVAL;
	return lpc_files_open(&c->files, path, oflags, mode, out);
}

LPC_EXPORT int lpc_file_open_backend(struct lpc_cache *c, const char *name,
				     const struct lpc_backend_ops *ops, void *handle, int oflags,
				     struct lpc_file **out)
{
	if (!c)
		return -EINVAL;
	return lpc_files_open_backend(&c->files, name, ops, handle, oflags, out);
}

LPC_EXPORT int lpc_page_alloc(struct lpc_cache *c, struct lpc_page **out)
{
	if (unlikely(!c || !out))
		return -EINVAL;
	return lpc_page_alloc_frame(&c->pool, 0, out);
}
