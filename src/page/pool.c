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
 *
 * Giving memory back (a cache whose working set shrank): the background
 * reclaimer (reclaim/reclaimer.c "Trim") watches the shared free list, and
 * the frames that stayed free beyond its high watermark for a while are
 * given back: lpc_pool_trim advises their memory MADV_DONTNEED and keeps
 * them on a list of their own, `trimmed`, which the allocator takes from
 * only after `free` (alloc.c shared_take), so a cache that grows again
 * first reuses the frames still resident.  MADV_DONTNEED, not MADV_FREE:
 * the kernel keeps MADV_FREE'd pages in the process's resident set (and in
 * its memory cgroup) until memory runs short, so neither VmRSS nor
 * lpc_stats' resident_bytes could say what was given back; a trimmed
 * frame's next first touch costs a zero-filled fault, as a fresh frame's
 * does (a 64 MiB MADV_FREE'd region retouched at once was cheaper, 0.5 s
 * against 0.95 s, but these frames were not needed for seconds).  The
 * steps, for a batch of at most TRIM_BATCH frames:
 *   TR1 under reclaim_lock (held to TR4), then free_lock: unlink up to the
 *       batch off the head of `free` (nfree less them), count a batch in
 *       flight (as a drain does: lpc_stats' readers and the tests' quiet
 *       checks add up free, pending and in flight), drop free_lock;
 *   TR2 sort their ids and madvise each run of consecutive frames;
 *   TR3 under free_lock: push them on `trimmed`, nfree and ntrimmed more;
 *   TR4 the batch in flight ends (release), reclaim_lock dropped.
 * Why no frame under advice is in use: it is off every list from TR1 to
 * TR3, so no allocation can hand it out; no reader can reach it (it reached
 * the free list only after a grace period that followed its last
 * publication: alloc.c); the evictor loads its ref, finds 0 and skips it.
 * Only the reclaimer trims (one per pool), so no frame is advised twice at
 * once; and an allocator that finds no free frame meanwhile runs reclaim(),
 * which waits for reclaim_lock, so it never returns -ENOMEM while frames
 * are in TR2 ("frames in transit", alloc.c).  A frame handed out again
 * reads as zeros: every path fills a frame before it sets UPTODATE (a miss
 * reads it, a write copies or zeroes the parts it does not cover), and
 * none trusts a free frame's old contents.  Not for frames an I/O backend
 * pins (io_uring's registered chunks, io/uring.c): MADV_DONTNEED would
 * give nothing back (the pin holds the page) and the registration would go
 * on using the old page while the frame faulted in a new one; so trim_ok
 * is set only for backends that never pin (lpc_pool_trim_enable).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/debug.h"
#include "page/pool.h"

#define POOL_ALIGN ((size_t)2 << 20) /* a huge page; io/uring.c's smallest chunk */
/* Frames handed out before the descriptors are advised to use huge pages. */
#define POOL_HUGE_AFTER ((size_t)8 << 20)
/* Frames a trim advises per batch (TR1-TR4): 2 MiB of 4 KiB frames. */
#define TRIM_BATCH 512u

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

void lpc_pool_trim_enable(struct lpc_pool *pool)
{
	/* A frame smaller than a base page shares it with others: a run of
	 * them is not a whole number of pages to advise. */
	pool->trim_ok = pool->page_size >= (size_t)sysconf(_SC_PAGESIZE);
}

struct lpc_page *lpc_pool_trimmed_take(struct lpc_pool *pool, unsigned want, unsigned *got,
				       struct lpc_page **tail)
{
	struct lpc_page *head = pool->trimmed, *p = head, *last = NULL;
	unsigned n = 0;

	for (; p && n < want; p = p->next) {
		last = p;
		n++;
	}
	if (n) {
		pool->trimmed = last->next;
		last->next = NULL;
		atomic_store_explicit(&pool->ntrimmed,
				      atomic_load_explicit(&pool->ntrimmed, memory_order_relaxed) - n,
				      memory_order_relaxed);
	}
	*got = n;
	*tail = last;
	return n ? head : NULL;
}

static int cmp_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

uint32_t lpc_pool_trim(struct lpc_pool *pool, uint32_t want)
{
	uint32_t ids[TRIM_BATCH], n = 0;
	struct lpc_page *head, *tail = NULL, *p;

	if (!pool->trim_ok || !want)
		return 0;
	if (want > TRIM_BATCH)
		want = TRIM_BATCH;
	pthread_mutex_lock(&pool->reclaim_lock);			/* TR1 */
	pthread_mutex_lock(&pool->free_lock);
	head = pool->free;
	for (p = head; p && n < want; p = p->next) {
		tail = p;
		ids[n++] = p->id;
	}
	if (n) {
		pool->free = tail->next;
		tail->next = NULL;
		pool->nfree -= n;
		atomic_fetch_add_explicit(&pool->batches_in_flight, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&pool->free_lock);
	if (!n) {
		pthread_mutex_unlock(&pool->reclaim_lock);
		return 0;
	}
#if LPC_DEBUG
	for (p = head; p; p = p->next)
		lpc_debug_check(atomic_load_explicit(&p->ref, memory_order_relaxed) == 0 &&
					atomic_load_explicit(&p->dbg_state, memory_order_relaxed) ==
						LPC_DBG_FREE,
				"TRIM-FRAME-FREE", p, "a frame given back to the kernel is not free");
#endif
	qsort(ids, n, sizeof(ids[0]), cmp_id);				/* TR2 */
	for (uint32_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && ids[j] == ids[j - 1] + 1; j++)
			;
		/* Refused (it cannot be for a private anonymous range): the
		 * frames stay resident, and are counted as given back all the
		 * same; their next user overwrites them either way. */
		(void)madvise(pool->frames + ((size_t)ids[i] << pool->page_shift),
			      (size_t)(j - i) << pool->page_shift, MADV_DONTNEED);
	}
	pthread_mutex_lock(&pool->free_lock);				/* TR3 */
	tail->next = pool->trimmed;
	pool->trimmed = head;
	pool->nfree += n;
	atomic_store_explicit(&pool->ntrimmed,
			      atomic_load_explicit(&pool->ntrimmed, memory_order_relaxed) + n,
			      memory_order_relaxed);
	pthread_mutex_unlock(&pool->free_lock);
	/* TR4.  Release: as a drain's (alloc.c). */
	atomic_fetch_sub_explicit(&pool->batches_in_flight, 1, memory_order_release);
	pthread_mutex_unlock(&pool->reclaim_lock);
	return n;
}

void lpc_pool_destroy(struct lpc_pool *pool)
{
	unmap(pool->pages, map_bytes(pool->pages_bytes));
	unmap(pool->frames, map_bytes(pool->frames_bytes));
	pthread_mutex_destroy(&pool->free_lock);
	pthread_mutex_destroy(&pool->reclaim_lock);
}
