/* SPDX-License-Identifier: MIT */
/*
 * cache.c - configuration, cache create/destroy, and lpc_stats.
 *
 * Memory: one descriptor array and one frame arena per cache, both mapped
 * with mmap (frames are page-aligned, hence aligned for O_DIRECT) and advised
 * to use transparent huge pages: a random lookup touches a descriptor and a
 * frame anywhere in a large cache, and TLB misses showed up in the lookup
 * cost.  Frames are not locked (no mlock, so RLIMIT_MEMLOCK does not apply).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "filemap/filemap.h"

#define LPC_MIN_PAGE 512u
#define LPC_MAX_PAGE (2u << 20)

LPC_EXPORT void lpc_config_init(struct lpc_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->cache_bytes = 64u << 20;
	cfg->page_size = 4096;
	cfg->io_backend = LPC_IO_SYNC;
	cfg->lookup_mode = LPC_LOOKUP_LOCKLESS;
}

static void *map_region(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint; fine if refused */
	return p;
}

static int config_check(const struct lpc_config *cfg)
{
	size_t ps = cfg->page_size;

	if (ps < LPC_MIN_PAGE || ps > LPC_MAX_PAGE || (ps & (ps - 1)))
		return -EINVAL;
	if (cfg->cache_bytes < ps || cfg->cache_bytes / ps > UINT32_MAX)
		return -EINVAL;
	if (cfg->io_backend != LPC_IO_SYNC && cfg->io_backend != LPC_IO_NULL)
		return -EINVAL;
	if (cfg->lookup_mode != LPC_LOOKUP_LOCKLESS && cfg->lookup_mode != LPC_LOOKUP_LOCKED)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(cfg->reserved) / sizeof(cfg->reserved[0]); i++)
		if (cfg->reserved[i])
			return -EINVAL;
	return 0;
}

LPC_EXPORT int lpc_cache_create(const struct lpc_config *cfg, struct lpc_cache **out)
{
	struct lpc_cache *c;
	uint32_t n;
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
	n = (uint32_t)(cfg->cache_bytes / cfg->page_size);
	c->nframes = n;
	c->page_size = cfg->page_size;
	c->page_shift = (unsigned)__builtin_ctzl(cfg->page_size);
	c->pages_bytes = (size_t)n * sizeof(struct lpc_page);
	c->frames_bytes = (size_t)n * cfg->page_size;
	c->locked_lookup = cfg->lookup_mode == LPC_LOOKUP_LOCKED;
	c->io = cfg->io_backend == LPC_IO_NULL ? &lpc_io_null_ops : &lpc_io_sync_ops;
	c->tbatch = n / 64 < 1 ? 1 : n / 64 > 32 ? 32 : n / 64;
	c->low_free = 4 * c->tbatch;
	c->pages = map_region(c->pages_bytes);
	c->frames = map_region(c->frames_bytes);
	if (!c->pages || !c->frames) {
		if (c->pages)
			munmap(c->pages, c->pages_bytes);
		if (c->frames)
			munmap(c->frames, c->frames_bytes);
		free(c);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct lpc_page *p = &c->pages[i];

		p->id = i;
		p->cache = c;
		p->next = i + 1 < n ? &c->pages[i + 1] : NULL;
	}
	c->free = &c->pages[0];
	c->nfree = n;
	pthread_mutex_init(&c->free_lock, NULL);
	pthread_mutex_init(&c->reclaim_lock, NULL);
	pthread_mutex_init(&c->files_lock, NULL);
	c->id = lpc_cache_new_id();
	*out = c;
	return 0;
}

/* True if users hold page references: every reference beyond the one each
 * cached page gives its index belongs to a user. */
static bool cache_busy(struct lpc_cache *c)
{
	uint64_t refs = 0;

	for (uint32_t i = 0; i < c->nframes; i++)
		refs += atomic_load_explicit(&c->pages[i].ref, memory_order_relaxed);
	return refs > lpc_files_nrpages(c);
}

LPC_EXPORT int lpc_cache_destroy(struct lpc_cache *c)
{
	bool busy, scoped;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->files_lock);
	busy = cache_busy(c);
	pthread_mutex_unlock(&c->files_lock);
	if (busy)
		return -EBUSY;
	/* The closes' call_rcu and the barrier below need this thread
	 * registered with RCU; a scoped registration allocates nothing, so
	 * destroy fails only with -EINVAL or -EBUSY. */
	scoped = lpc_rcu_scope_enter();
	lpc_file_close_all(c);
	lpc_cache_orphan_tcaches(c);
	/* Wait for call_rcu callbacks that still point into this cache: free
	 * batches (they touch the free list), index nodes and files. */
	lpc_rcu_barrier();
	lpc_rcu_scope_exit(scoped);
	munmap(c->pages, c->pages_bytes);
	munmap(c->frames, c->frames_bytes);
	pthread_mutex_destroy(&c->free_lock);
	pthread_mutex_destroy(&c->reclaim_lock);
	pthread_mutex_destroy(&c->files_lock);
	free(c);
	return 0;
}

LPC_EXPORT void lpc_stats(struct lpc_cache *c, struct lpc_stats *out)
{
	uint64_t cnt[LPC_NR_COUNTERS], tfree;

	if (!c || !out)
		return;
	lpc_cache_sum_counters(c, cnt, &tfree);
	memset(out, 0, sizeof(*out));
	out->hits = cnt[LPC_C_HITS];
	out->misses = cnt[LPC_C_MISSES];
	out->lookups = out->hits + out->misses; /* one store less on a hit */
	out->retries = cnt[LPC_C_RETRIES];
	out->reads = cnt[LPC_C_READS];
	out->read_bytes = cnt[LPC_C_READ_BYTES];
	out->read_errors = cnt[LPC_C_READ_ERRORS];
	out->direct_fallbacks = cnt[LPC_C_DIRECT_FALLBACKS];
	out->read_around = cnt[LPC_C_READ_AROUND];
	out->alloc_failures = cnt[LPC_C_ALLOC_FAILURES];
	out->invalidated = cnt[LPC_C_INVALIDATED];
	out->frames = c->nframes;
	pthread_mutex_lock(&c->free_lock);
	out->frames_free = c->nfree + tfree;
	pthread_mutex_unlock(&c->free_lock);
}
