/* SPDX-License-Identifier: MIT */
/*
 * pool.c - creating and destroying a descriptor pool.
 *
 * Memory: one descriptor array and one frame arena per pool, both mapped
 * with mmap (frames are page-aligned, hence aligned for O_DIRECT) and advised
 * to use transparent huge pages: a random lookup touches a descriptor and a
 * frame anywhere in a large cache, and TLB misses showed up in the lookup
 * cost.  Frames are not locked (no mlock, so RLIMIT_MEMLOCK does not apply).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "page/pool.h"

static void *map_region(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint; fine if refused */
	return p;
}

int lpc_pool_init(struct lpc_pool *pool, uint32_t n, size_t page_size)
{
	memset(pool, 0, sizeof(*pool));
	pool->nframes = n;
	pool->page_size = page_size;
	pool->page_shift = (unsigned)__builtin_ctzl(page_size);
	pool->pages_bytes = (size_t)n * sizeof(struct lpc_page);
	pool->frames_bytes = (size_t)n * page_size;
	pool->tbatch = n / 64 < 1 ? 1 : n / 64 > 32 ? 32 : n / 64;
	pool->low_free = 4 * pool->tbatch;
	pool->pages = map_region(pool->pages_bytes);
	pool->frames = map_region(pool->frames_bytes);
	if (!pool->pages || !pool->frames) {
		if (pool->pages)
			munmap(pool->pages, pool->pages_bytes);
		if (pool->frames)
			munmap(pool->frames, pool->frames_bytes);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct lpc_page *p = &pool->pages[i];

		p->id = i;
		p->pool = pool;
		p->next = i + 1 < n ? &pool->pages[i + 1] : NULL;
#if LPC_DEBUG
		atomic_store_explicit(&p->dbg_state, LPC_DBG_FREE, memory_order_relaxed);
#endif
	}
	pool->free = &pool->pages[0];
	pool->nfree = n;
	pthread_mutex_init(&pool->free_lock, NULL);
	pthread_mutex_init(&pool->reclaim_lock, NULL);
	lpc_towner_init(&pool->owner, lpc_pool_thread_exit);
	return 0;
}

void lpc_pool_destroy(struct lpc_pool *pool)
{
	munmap(pool->pages, pool->pages_bytes);
	munmap(pool->frames, pool->frames_bytes);
	pthread_mutex_destroy(&pool->free_lock);
	pthread_mutex_destroy(&pool->reclaim_lock);
}
