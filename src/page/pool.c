/* SPDX-License-Identifier: MIT */
/*
 * pool.c - creating and destroying a descriptor pool.
 *
 * Memory: one descriptor array and one frame arena per pool, both mapped
 * with mmap (frames are page-aligned, hence aligned for O_DIRECT).  Frames
 * are not locked (no mlock, so RLIMIT_MEMLOCK does not apply).
 *
 * Transparent huge pages (lpc_pool_hint_huge), one 2 MiB chunk ahead of
 * the allocator: a random lookup touches a descriptor and a frame anywhere
 * in a large cache, and TLB misses showed up in the lookup cost.  The frame
 * arena is advised MADV_HUGEPAGE from its first frame: the resident part of
 * the arena is then rounded up to 2 MiB (as io_uring's pinned chunks round
 * it anyway), and a chunk costs one fault, not 512.  Measured with SQLite's
 * 75,000-insert program (3 MiB of frames; lpcbench sqlite-small, each run a
 * fresh process, interleaved with unix) on a 2-CPU VM whose 4 KiB
 * anonymous faults cost tens of microseconds: its CPU time, unix/lpc,
 * 1.02 and 1.03 with the arena huge from the start against 0.96 and 0.94
 * with huge pages only past the first 8 MiB (two runs of 16 and 30
 * rounds), and 744 fewer page faults a run.  (Earlier, on another
 * machine, with the whole arena advised at create: the same time, and
 * 11.7 MB resident against 9.6 MB.)  The descriptors are advised only once
 * POOL_HUGE_AFTER bytes of frames were handed out: a small program's few
 * descriptors fit in a few base pages.
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
/* Frames handed out before the descriptors are advised to use huge pages. */
#define POOL_HUGE_AFTER ((size_t)8 << 20)

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
	return p;
}

/*
 * Advises the whole 2 MiB chunks of a region [base, base + len) that lie at
 * or past byte `from` and below one chunk past byte `end` (one ahead of the
 * allocator) to use huge pages, skipping those below chunk *hinted, and
 * moves *hinted past them.  A chunk is advised before anything in it is
 * touched: from is the first byte not yet handed out, so the chunk that
 * holds it is advised only when from starts it (or it was advised ahead).
 */
static void hint_region(unsigned char *base, size_t len, size_t from, size_t end,
			uint32_t *hinted)
{
	size_t first = (from + POOL_ALIGN - 1) / POOL_ALIGN;
	size_t last = end / POOL_ALIGN + 2; /* exclusive: the chunk of end, and one ahead */

	if (last > len / POOL_ALIGN)
		last = len / POOL_ALIGN; /* only whole chunks can be huge */
	if (first < *hinted)
		first = *hinted;
	if (first >= last)
		return;
	(void)madvise(base + first * POOL_ALIGN, (last - first) * POOL_ALIGN,
		      MADV_HUGEPAGE); /* a hint; fine if refused */
	*hinted = (uint32_t)last;
}

void lpc_pool_hint_huge(struct lpc_pool *pool, uint32_t first, uint32_t end)
{
	size_t ps = pool->page_size, sz = sizeof(struct lpc_page);

	hint_region(pool->frames, pool->frames_bytes, (size_t)first * ps, (size_t)end * ps,
		    &pool->huge_frames);
	if ((size_t)end * ps <= POOL_HUGE_AFTER)
		return;
	hint_region((unsigned char *)pool->pages, pool->pages_bytes, (size_t)first * sz,
		    (size_t)end * sz, &pool->huge_pages);
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
	{
		/* Adaptive: held for a list splice, taken by every thread's
		 * refill and free batch; a short spin before the futex. */
		pthread_mutexattr_t ma;

		pthread_mutexattr_init(&ma);
		pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
		pthread_mutex_init(&pool->free_lock, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	pthread_mutex_init(&pool->reclaim_lock, NULL);
	lpc_towner_init(&pool->owner, lpc_pool_thread_exit);
	lpc_debug_set_describer(lpc_page_describe); /* LPC_DEBUG's reports */
	return 0;
}

void lpc_pool_destroy(struct lpc_pool *pool)
{
	unmap(pool->pages, map_bytes(pool->pages_bytes));
	unmap(pool->frames, map_bytes(pool->frames_bytes));
	pthread_mutex_destroy(&pool->free_lock);
	pthread_mutex_destroy(&pool->reclaim_lock);
	lpc_pool_ws_destroy(&pool->ws);
}
