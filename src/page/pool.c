/* SPDX-License-Identifier: MIT */
/*
 * pool.c - creating and destroying a descriptor pool.
 *
 * Memory: one descriptor array and one frame arena per pool, both mapped
 * with mmap (frames are page-aligned, hence aligned for O_DIRECT) and advised
 * to use transparent huge pages: a random lookup touches a descriptor and a
 * frame anywhere in a large cache, and TLB misses showed up in the lookup
 * cost.  Frames are not locked (no mlock, so RLIMIT_MEMLOCK does not apply).
 *
 * Reserved, not populated (pay for what you use): both mappings are
 * MAP_NORESERVE and nothing here writes them, so creating a cache costs its
 * address space, not its memory.  A descriptor is written for the first time
 * when the allocator first hands its frame out (alloc.c, "fresh frames"),
 * and a frame becomes resident when its first user writes it (or when the
 * io_uring backend pins its chunk, io/uring.c).  Frames are handed out in
 * id order until the first one comes back, and freed frames are reused
 * first, so the resident part of the arena is a prefix about as long as
 * the most frames the cache ever held.  The arena is aligned to 2 MiB, so
 * that its huge pages and the io_uring chunks coincide.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/debug.h"
#include "page/pool.h"

#define POOL_ALIGN ((size_t)2 << 20) /* a huge page; io/uring.c's smallest chunk */

/* The bytes a mapping of `bytes` spans: whole base pages.  A descriptor
 * array (frames not a multiple of 64) or an arena of sub-4 KiB pages in
 * odd counts is not a whole number of pages; munmap needs a page-aligned
 * address, so the tail cut at an unrounded end was refused (EINVAL) and
 * its 2 MiB of address space stayed mapped for good. */
static size_t map_bytes(size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (bytes + page - 1) & ~(page - 1);
}

/* munmap, whose failure (a bad address or length: a bug here) the debug
 * build reports. */
static void unmap(void *p, size_t bytes)
{
	int rc = munmap(p, bytes);

	(void)rc;
	lpc_debug_check(rc == 0, "pool: munmap", NULL, "munmap(%p, %zu) failed", p, bytes);
}

/* Maps `bytes` (rounded up to whole base pages) at a 2 MiB boundary,
 * reserved only: the over-mapped head and tail are unmapped again. */
static void *map_region(size_t bytes)
{
	size_t span, head;
	unsigned char *p;

	bytes = map_bytes(bytes);
	span = bytes + POOL_ALIGN;
	p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	head = (POOL_ALIGN - ((uintptr_t)p & (POOL_ALIGN - 1))) & (POOL_ALIGN - 1);
	if (head)
		unmap(p, head);
	unmap(p + head + bytes, span - head - bytes);
	p += head;
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
			unmap(pool->pages, map_bytes(pool->pages_bytes));
		if (pool->frames)
			unmap(pool->frames, map_bytes(pool->frames_bytes));
		return -ENOMEM;
	}
	/* Every frame is fresh (alloc.c): no descriptor is written here. */
	pool->free = NULL;
	pool->fresh = 0;
	pool->nfree = n;
	pthread_mutex_init(&pool->free_lock, NULL);
	pthread_mutex_init(&pool->reclaim_lock, NULL);
	lpc_towner_init(&pool->owner, lpc_pool_thread_exit);
	return 0;
}

void lpc_pool_destroy(struct lpc_pool *pool)
{
	unmap(pool->pages, map_bytes(pool->pages_bytes));
	unmap(pool->frames, map_bytes(pool->frames_bytes));
	pthread_mutex_destroy(&pool->free_lock);
	pthread_mutex_destroy(&pool->reclaim_lock);
}
