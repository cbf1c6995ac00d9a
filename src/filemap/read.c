/* SPDX-License-Identifier: MIT */
/*
 * read.c - lpc_pread: any byte range, built on the lookup and miss paths.
 * Short at end of file and 0 at or past it, as pread(2).  A page that cannot
 * be cached because every frame is held is read around the cache into a
 * bounce frame (counted in read_around) rather than failing the read: the
 * allocation evicts what it can but never waits (LPC_ALLOC_NOWAIT).
 *
 * A page that is cached and stable is copied optimistically, without a
 * reference (O1-O6, optimistic.h): a hit writes no shared line, so threads
 * that read one hot page do not bounce its descriptor.  One try per page;
 * when it fails (the page is absent, in flight, being written, or left the
 * index during the copy) the page goes the referenced way (lookup.c, miss.c).
 * LOCKED mode always goes the referenced way.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "filemap/optimistic.h"

/* lpc_pread's optimistic copy (O4 of optimistic.h): part of one page. */
struct pread_copy {
	void *dst;
	size_t pgoff, n;
};

/* Not under AddressSanitizer: its checks do not see an inline asm's stores
 * (tests/attack_farcopy, asan_blind).  lpc's ASan variant is an LPC_DEBUG
 * build anyway. */
#if defined(__x86_64__) && !LPC_DEBUG && !defined(__SANITIZE_ADDRESS__)
/*
 * Copies of 2 KiB and more (whole pages, mostly) with 32-byte AVX2 loads and
 * stores, 128 bytes an iteration, where the CPU has AVX2; memcpy otherwise
 * and for the tail.  Why not memcpy: glibc 2.36 copies 4 KiB with `rep
 * movsb` on CPUs with ERMS (above its rep_movsb_threshold: 2112 bytes on
 * this CPU, which has FSRM; `ld.so --list-diagnostics`), which
 * on the AMD EPYC this was measured on takes 107-112 TSC ticks for a 4 KiB
 * copy from L1/L2 against 91 for this loop (page-aligned source and
 * destination, 31 interleaved rounds; the destination's alignment to 64
 * bytes did not matter).  The 4 KiB copy is most of a cached lpc_pread
 * (~140 of ~166 ticks), so this is most of what a hit can still lose.
 * `copy_vec` and `copy_erms` (copy_far below) are set once, before main,
 * and only read afterwards.
 */
static bool copy_vec, copy_erms;

__attribute__((constructor)) static void copy_vec_init(void)
{
	unsigned a, b, c, d;

	__builtin_cpu_init();
	copy_vec = __builtin_cpu_supports("avx2");
	/* ERMS, "enhanced rep movsb": CPUID leaf 7, EBX bit 9. */
	copy_erms = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 9 & 1);
}

typedef long long copy_v32 __attribute__((vector_size(32), aligned(1), may_alias));

__attribute__((target("avx2"), noinline)) static void copy_avx2(char *dst, const char *src,
								 size_t n)
{
	size_t i;

	for (i = 0; i + 128 <= n; i += 128) {
		copy_v32 a = *(const copy_v32 *)(src + i), b = *(const copy_v32 *)(src + i + 32);
		copy_v32 c = *(const copy_v32 *)(src + i + 64), d = *(const copy_v32 *)(src + i + 96);

		*(copy_v32 *)(dst + i) = a;
		*(copy_v32 *)(dst + i + 32) = b;
		*(copy_v32 *)(dst + i + 64) = c;
		*(copy_v32 *)(dst + i + 96) = d;
	}
	if (i < n)
		memcpy(dst + i, src + i, n - i);
}

static lpc_always_inline void copy_bytes(void *dst, const void *src, size_t n)
{
	if (n >= 2048 && copy_vec)
		copy_avx2(dst, src, n);
	else
		memcpy(dst, src, n);
}

/*
 * Copies for a call of several pages (pread_slow): `rep movsb` for 2 KiB
 * and more.  What such a call copies is mostly not in this CPU's caches: a
 * page the device just wrote (a scan's first use of what readahead read),
 * or one of a cache larger than the L2.  From memory, a bare `rep movsb`
 * of the 4 KiB took 133-200 ns against 150-229 for glibc's memcpy and
 * 198-235 for copy_avx2 (3 runs of 5 interleaved rounds of
 * tests/attack_farcopy/far_copy_ns.c: a 512 MiB source copied page by page
 * into a 128 KiB destination, on the AMD EPYC above; the bare one was the
 * fastest in 13 of the 15 rounds).  glibc's memcpy is `rep movsb` too here,
 * but of the last 4032 bytes, after one 64-byte vector store that aligns
 * the destination (tests/attack_farcopy, memcpy_path): with both ends
 * page-aligned, as a frame and most callers' buffers are, that split only
 * costs.  With the copies so, lpcbench scan's lpc_uring/kernel at 128 KiB
 * calls, one scanner, was 0.927-1.057 against 0.874-1.280, higher in 6 of 8
 * interleaved pairs of runs (defaults), and at 16 KiB calls 1.018-1.391
 * against 0.949-1.200, higher in all 8.  A one-page hit (lpc_pread's fast
 * path) keeps copy_bytes: its page is more often hot, where copy_avx2 is
 * the faster one (lpcbench lookup's lpc_pread_hot: 100.2-100.3 ns a call,
 * against 106.4-106.6 with `rep movsb` there; two interleaved runs each).
 * Only on a CPU with ERMS (fast `rep movsb`); copy_bytes on one without.
 */
static lpc_always_inline void copy_far(void *dst, const void *src, size_t n)
{
	if (n >= 2048 && copy_erms)
		__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
	else
		copy_bytes(dst, src, n);
}
#else
#define copy_bytes memcpy
#define copy_far memcpy
#endif

/* lpc_pread's copy of part of a page; far: copy_far (pread_slow's) rather
 * than copy_bytes (the one-page hit's). */
static lpc_always_inline void pread_copy_with(const void *frame, void *arg, bool far)
{
	const struct pread_copy *a = arg;

#if LPC_DEBUG
	/* In two halves around yield point O4, so that yield injection can
	 * stop a reader in the middle of its copy (a writer then tears it). */
	size_t half = a->n / 2;

	memcpy(a->dst, (const char *)frame + a->pgoff, half);
	lpc_yield_point(LPC_YP_O4);
	memcpy((char *)a->dst + half, (const char *)frame + a->pgoff + half, a->n - half);
	(void)far;
#else
	if (far)
		copy_far(a->dst, (const char *)frame + a->pgoff, a->n);
	else
		copy_bytes(a->dst, (const char *)frame + a->pgoff, a->n);
#endif
}

static lpc_always_inline void pread_copy(const void *frame, size_t size, void *arg)
{
	(void)size;
	pread_copy_with(frame, arg, false);
}

static void pread_copy_far(const void *frame, size_t size, void *arg)
{
	(void)size;
	pread_copy_with(frame, arg, true);
}

/* Reads part of page `index` without caching it. Return: 0 or negative errno. */
static int read_around(struct lpc_file *f, uint64_t index, void *dst, size_t pgoff,
		       size_t n, struct lpc_tcache *t)
{
	struct lpc_pool *c = f->pool;
	void *bounce;
	ssize_t r;

	if (posix_memalign(&bounce, c->page_size < 4096 ? 4096 : c->page_size, c->page_size))
		return -ENOMEM;
	/* C.3's two tries, as a miss (a short count where the storage goes
	 * on is read once more before it is an error). */
	r = lpc_filemap_read_frame(f, bounce, index, t);
	lpc_count(t, LPC_C_READ_AROUND);
	if (r < 0) {
		lpc_count(t, LPC_C_READ_ERRORS);
		free(bounce);
		return (int)r;
	}
	lpc_count_add(t, LPC_C_READ_BYTES, (uint64_t)r);
	if ((size_t)r < c->page_size)
		memset((char *)bounce + r, 0, c->page_size - (size_t)r);
	memcpy(dst, (char *)bounce + pgoff, n);
	free(bounce);
	return 0;
}

/*
 * Continuation.  A scan in calls smaller than a page, or of a size that is
 * not a multiple of it, reads a page in several calls; each call after the
 * first would be a hit that marks the page REFERENCED, and CLOCK2 would
 * promote a one-time scan's pages over the hot set.  So, as the kernel's
 * filemap_read does with a descriptor's previous position, a call that
 * starts inside the page where this thread's last lpc_pread ended (not at
 * its end) does not mark that page: lpc_self.cont_file and cont_index, set
 * by a call that ends inside a page, cleared by one that ends on a
 * boundary.  Cost on a hit: two thread-local loads, and a store only for a
 * call that ends inside a page or follows one that did.
 * Where it does not reach (tests/attack_cont):
 *  - only the optimistic read skips the mark: in LOCKED mode, and for a
 *    page whose optimistic try failed, the locked lookup marks as before;
 *  - it is per thread and remembers one page, where the kernel keeps a
 *    position per open file: a thread that interleaves two scans (two
 *    files, two parts of one), or a scan whose calls alternate between
 *    threads, still marks every page;
 *  - only lpc_pread sets or clears it: a thread's lpc_page_get or
 *    lpc_page_read in between does not end a continuation, and its next
 *    lpc_pread that reads on in the page misses that page's mark (so does
 *    a record read again, or the next record of the page, with no call in
 *    between: the kernel's blind spot too).
 */
static lpc_always_inline bool pread_marks(const struct lpc_file *f, uint64_t index)
{
	return lpc_self.cont_file != f || lpc_self.cont_index != index;
}

/* The call ended inside page `index` (inside) or on a boundary. */
static lpc_always_inline void pread_ended(const struct lpc_file *f, uint64_t index, bool inside)
{
	if (inside) {
		lpc_self.cont_file = f;
		lpc_self.cont_index = index;
	} else if (lpc_self.cont_file) {
		lpc_self.cont_file = NULL;
	}
}

/*
 * Bulk reads.  A sequential reader of a file larger than the cache (a table
 * scan, a backup) hits pages that other threads cached: the random readers'
 * pages it passes over.  Marked REFERENCED by it, each of them looked used
 * twice, and CLOCK2 promoted every page a scan passed: what the hot set had
 * read once was kept as if it were hot, the active side filled with it, and
 * the hot set's pages got the inactive side's short stay (lpcbench read,
 * scan-mix: the readers' hit ratio 0.82-0.83, 0.85 without the scanner).
 * So, as PostgreSQL's bulk-read strategy counts a scan's use of a buffer
 * at most as a first one, a call that continues this thread's sequential
 * run of lpc_pread calls on f (it starts at the byte where the last one
 * ended, and the run so far is at least PREAD_BULK_BYTES) over a file
 * larger than the cache is a bulk read: its hits clear RA or FRESH as any
 * first use does, and never set REFERENCED (lpc_page_mark_bulk).  A page
 * the hot set reads again is still marked by that read.  Only with
 * CLOCK2's shadows, as drop-behind (readahead.c A5): they are what tells a
 * loop's pages (REFAULTED, which any hit marks) from a scan's.
 * State, per thread (lpc_self: compared, never followed): seq_file and
 * seq_end, the file and byte where this thread's last lpc_pread ended, and
 * seq_bytes, how many bytes its calls read in a row up to there.  Cost on a
 * hit: three thread-local loads and two stores, and the test of the file's
 * size only for a page not REFERENCED yet.
 * Where it does not reach: lpc_page_get, lpc_page_read, pins and batches
 * mark as before (a scan through them: the drop behind its stream still
 * takes what it read ahead, readahead.c A5); a file that fits the cache
 * is marked as before, so a loop over it is kept (the kernel's choice);
 * a scan whose calls alternate between threads is no thread's run.
 */
#define PREAD_BULK_BYTES (256u << 10) /* twice readahead's first window */

static lpc_always_inline bool pread_bulk(const struct lpc_file *f, uint64_t off, uint64_t size)
{
	return lpc_self.seq_file == f && lpc_self.seq_end == off &&
	       lpc_self.seq_bytes >= PREAD_BULK_BYTES && (size >> f->page_shift) > f->pool->nframes &&
	       f->pool->ws.shadow;
}

/* The call [off, off + done) ended: the run goes on, or starts here. */
static lpc_always_inline void pread_run(const struct lpc_file *f, uint64_t off, size_t done)
{
	if (lpc_self.seq_file == f && lpc_self.seq_end == off) {
		lpc_self.seq_bytes += done;
	} else {
		lpc_self.seq_file = f;
		lpc_self.seq_bytes = done;
	}
	lpc_self.seq_end = off + done;
}

/* The use's mark of a page a bulk read or a plain one copied. */
static lpc_always_inline void pread_mark(struct lpc_page *p, bool bulk)
{
	if (bulk)
		lpc_page_mark_bulk(p, atomic_load_explicit(&p->flags, memory_order_relaxed));
	else
		lpc_filemap_mark_seen(p);
}

/*
 * lpc_pread in full: any range, LOCKED mode, a thread's first call, the
 * fallback.  `tried`: the caller's optimistic try of the first page failed
 * (it is not tried again: one try per page).  Out of line, so that the
 * one-page hit below saves fewer registers.
 */
static __attribute__((noinline)) ssize_t pread_slow(struct lpc_file *f, void *buf, size_t len,
						    uint64_t off, bool tried)
{
	struct lpc_tcache *t;
	uint64_t size;
	size_t done = 0;
	size_t mask;
	bool cont, bulk;

	if (unlikely(!f || (!buf && len)))
		return -EINVAL;
	lpc_debug_file_check(f);
	if (unlikely(len == 0))
		return 0;
	t = lpc_file_tcache(f);
	if (unlikely(!t))
		return -ENOMEM;
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	size = atomic_load_explicit(&f->size, memory_order_acquire);
	if (unlikely(off >= size)) {
		size = lpc_filemap_refresh_size(f);
		if (off >= size)
			return 0;
	}
	if (len > size - off)
		len = (size_t)(size - off);

	mask = f->pool->page_size - 1;
	cont = !pread_marks(f, off >> f->page_shift);
	bulk = pread_bulk(f, off, size);
	while (done < len) {
		uint64_t pos = off + done;
		uint64_t index = pos >> f->page_shift;
		size_t pgoff = (size_t)pos & mask;
		size_t n = f->pool->page_size - pgoff;
		struct lpc_page *p;
		int rc;

		if (n > len - done)
			n = len - done;
		if (likely(!f->locked_lookup)) {
			if (likely(!tried)) {
				struct pread_copy a = { (char *)buf + done, pgoff, n };
				bool ok;

				lpc_rcu_read_lock();			/* O1 */
				struct lpc_page *seen;

				seen = lpc_filemap_read_optimistic_page(f, index, pread_copy_far,
										&a);
				ok = seen != NULL;
				if (ok && !(cont && !done))
					pread_mark(seen, bulk);
				lpc_rcu_read_unlock();			/* O6 */
				if (likely(ok)) {
					lpc_count(t, LPC_C_OPT_HITS);
					done += n;
					continue;
				}
			}
			tried = false;
			lpc_count(t, LPC_C_OPT_FALLBACKS);
		}
		/* A miss reads the absent pages of the rest of the range with
		 * it, in one I/O (run.c). */
		rc = lpc_filemap_get_pages(f, index,
					   ((off + len - 1) >> f->page_shift) - index + 1, t,
					   LPC_ALLOC_NOWAIT, &p);
		if (likely(rc == 0)) {
			struct pread_copy a = { (char *)buf + done, pgoff, n };

			/* One version of the page, even with writers (K.1). */
			lpc_filemap_read_held(p, pread_copy_far, &a);
			lpc_page_put(p);
		} else if (rc == -ENOMEM) {
			rc = read_around(f, index, (char *)buf + done, pgoff, n, t);
		}
		if (unlikely(rc)) {
			if (rc == -ENXIO) /* the file shrank under us */
				break;
			return done ? (ssize_t)done : rc;
		}
		done += n;
	}
	pread_ended(f, (off + done) >> f->page_shift, (off + done) & mask);
	pread_run(f, off, done);
	return (ssize_t)done;
}

/*
 * The hit of a read inside one page (the common call: a page, or part of
 * one), for a thread that has its block for f's cache, in lockless mode:
 * O1-O6 once, in straight-line code.  Everything else, and a failed try,
 * is pread_slow's.  The checks are pread_slow's in another order: a range
 * inside [0, size) of one page needs no clamping.
 */
LPC_EXPORT ssize_t lpc_pread(struct lpc_file *f, void *buf, size_t len, uint64_t off)
{
	struct pread_copy a;
	struct lpc_page *p;
	uint64_t size;
	size_t ps;

	if (unlikely(!f || !buf || lpc_self.cur_id != f->hit_id))
		return pread_slow(f, buf, len, off, false);
	lpc_debug_file_check(f);
	ps = f->pool->page_size;
	a.dst = buf;
	a.pgoff = (size_t)off & (ps - 1);
	a.n = len;
	size = atomic_load_explicit(&f->size, memory_order_acquire);
	/* len - 1 wraps for 0: pread_slow returns 0 for it. */
	if (unlikely(len - 1 >= ps - a.pgoff || off >= size || len > size - off))
		return pread_slow(f, buf, len, off, false);
	lpc_rcu_read_lock();							/* O1 */
	p = lpc_filemap_read_optimistic_page(f, off >> f->page_shift, pread_copy, &a);
	if (unlikely(!p)) {
		lpc_rcu_read_unlock();						/* O6 */
		return pread_slow(f, buf, len, off, true);
	}
	/* The use's mark, unless it continues this thread's last call (above,
	 * "Continuation"), and not a second use in a bulk read ("Bulk
	 * reads"): REFERENCED tested first, so a hot page's hit loads nothing
	 * more. */
	if (!(atomic_load_explicit(&p->flags, memory_order_relaxed) & LPC_PG_REFERENCED) &&
	    pread_marks(f, off >> f->page_shift))
		pread_mark(p, pread_bulk(f, off, size));
	pread_ended(f, off >> f->page_shift, a.pgoff + len != ps);
	pread_run(f, off, len);
	/* Counted inside the section, as lpc_page_read does.  lpc_self.cur is
	 * still f's block: only this thread changes it. */
	lpc_count(lpc_self.cur, LPC_C_OPT_HITS);
	lpc_rcu_read_unlock();							/* O6 */
	return (ssize_t)len;
}
