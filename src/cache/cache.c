/* SPDX-License-Identifier: MIT */
/*
 * cache.c - configuration, cache create/destroy, lpc_stats, and the public
 * calls that take a cache (lpc_file_open, lpc_page_alloc): the top part,
 * which puts a pool (page/pool.c: memory), an I/O backend and a file table
 * together.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

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
	lpc_files_init(&c->files, &c->pool, &c->io, c->locked_lookup);
	*out = c;
	return 0;
}

/* True if users hold page references: every reference beyond the one each
 * cached page gives its index belongs to a user. */
static bool cache_busy(struct lpc_cache *c)
{
	uint64_t refs = 0;

	for (uint32_t i = 0; i < c->pool.nframes; i++)
		refs += atomic_load_explicit(&c->pool.pages[i].ref, memory_order_relaxed);
	return refs > lpc_files_nrpages(&c->files);
}

LPC_EXPORT int lpc_cache_destroy(struct lpc_cache *c)
{
	bool busy, scoped;

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&c->files.lock);
	busy = cache_busy(c);
	pthread_mutex_unlock(&c->files.lock);
	if (busy)
		return -EBUSY;
	/* The closes' call_rcu and the barrier below need this thread
	 * registered with RCU; a scoped registration allocates nothing, so
	 * destroy fails only with -EINVAL or -EBUSY. */
	scoped = lpc_rcu_scope_enter();
	lpc_files_close_all(&c->files);
	lpc_towner_orphan(&c->pool.owner);
	/* Wait for call_rcu callbacks that still point into this cache: free
	 * batches (they touch the free list), index nodes and files. */
	lpc_rcu_barrier();
	lpc_rcu_scope_exit(scoped);
	lpc_pool_destroy(&c->pool);
	lpc_files_destroy(&c->files);
	free(c);
	return 0;
}

LPC_EXPORT void lpc_stats(struct lpc_cache *c, struct lpc_stats *out)
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
	out->direct_fallbacks = cnt[LPC_C_DIRECT_FALLBACKS];
	out->read_around = cnt[LPC_C_READ_AROUND];
	out->alloc_failures = cnt[LPC_C_ALLOC_FAILURES];
	out->invalidated = cnt[LPC_C_INVALIDATED];
	out->frames = c->pool.nframes;
	pthread_mutex_lock(&c->pool.free_lock);
	out->frames_free = c->pool.nfree + tfree;
	pthread_mutex_unlock(&c->pool.free_lock);
}

LPC_EXPORT int lpc_file_open(struct lpc_cache *c, const char *path, int oflags, mode_t mode,
			     struct lpc_file **out)
{
	if (!c)
		return -EINVAL;
	return lpc_files_open(&c->files, path, oflags, mode, out);
}

LPC_EXPORT int lpc_page_alloc(struct lpc_cache *c, struct lpc_page **out)
{
	if (unlikely(!c || !out))
		return -EINVAL;
	return lpc_page_alloc_frame(&c->pool, out);
}
