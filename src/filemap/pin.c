/* SPDX-License-Identifier: MIT */
/*
 * pin.c - pinning the pages of a byte range for reading (lpc_pin's read
 * pins; the entry points lpc_pin and lpc_unpin are in writeback/wpin.c,
 * with the write pins, which dirty pages): the lockless get_user_pages,
 * and zero copy from pinned pages (lpc_pin_iov).
 *
 * A pin is LPC_PIN_BIAS references taken in one atomic (page/page.h), as the
 * kernel's FOLL_PIN: a pinned page is never at the index's lone reference, so
 * a remover's freeze (step A, lookup.c) fails on it, and eviction, which takes
 * only pages whose sole reference is the index's, skips it without asking
 * anyone (guarantee I.2).  Truncate-like removal (the last close, truncate)
 * leaves the holder a valid page, as it does for a reference (B.2).
 *
 * Fast path (lockless mode), modelled in tests/model/pin.pml:
 *   P1 rcu_read_lock(), once for the whole range
 *   P2 walk from the root to the leaf that holds the next index
 *      (lpc_radix_lookup_leaf), once per leaf, then load the range's slots
 *      of that leaf in index order; an empty slot (or no leaf) ends the fast
 *      path
 *   P3 pin the page speculatively: add LPC_PIN_BIAS to ref unless it is 0
 *      (lpc_page_try_pin: CAS, acquire); 0 (frozen or free) ends the fast path
 *   P4 reload the same slot: if it no longer holds the page, the page was
 *      removed (a truncate-like removal leaves it a holder, so P3 can succeed
 *      on it): unpin it and end the fast path.  Then the page must be
 *      UPTODATE (acquire, pairs with the miss's release at M5), else unpin
 *      and end: it is being read, or its read failed
 *   P5 rcu_read_unlock()
 * The fast path never retries: what it could not pin goes to the slow path.
 * P2-P4 are lookup.c's R2-R4 with the walk shared by a leaf's pages; the
 * three interleavings of lookup.c hold for each page unchanged (freeze before
 * P3: P3 fails; truncate-like removal between P2 and P4: P4 fails; reuse of a
 * removed page: as a private page, impossible inside the read section (C's
 * grace period), by its remover's miss, P3 fails until M2 and P4 after it
 * (page/alloc.c MR1-MR5: a stale pin is dropped at once), and
 * one more: a leaf emptied and detached while we walk it keeps NULL slots
 * (radix.c), so P2 sees an empty slot and the slow path looks up from the root.
 *
 * Slow path: the pages from the first one the fast path could not pin to the
 * end of the range, each through the miss path (lpc_filemap_get_pages: lookup,
 * miss M1-M6, wait for a read in flight; a miss reads the run of absent
 * pages that follows it in the range with one I/O, filemap/run.c), its reference then turned into a
 * pin (one add of LPC_PIN_BIAS - 1 on a page we hold).  The pins the fast
 * path took are kept rather than dropped and taken again: each was a page of
 * the range in the index at its P4, which is all I.1 asks of a page, and
 * dropping them would cost two atomics per page for nothing.  A failure
 * unpins everything (all or nothing).
 *
 * LOCKED mode: the same walk under the file's index rwlock held for reading,
 * with a plain add (removers hold the rwlock for writing, so a page in the
 * tree always has the index's reference); then the same slow path.
 *
 * Counters: pin_fast (the fast path pinned every page), pin_slow (it did
 * not), pages_pinned.  A failed call counts in neither.  Write pins use
 * the same fast path (lpc_filemap_pin_fast) and count there too.
 */
#include <errno.h>
#include <limits.h>

#include "filemap/filemap.h"

/* P1-P5's body: pins pages[0..n) of f from index `first` until the first page
 * it cannot pin.  Return: the pages pinned.  Context: RCU read section. */
static unsigned pin_fast_rcu(struct lpc_file *f, uint64_t first, unsigned n,
			     struct lpc_page **pages)
{
	void *_Atomic const *slots = NULL;
	unsigned i;

	for (i = 0; i < n; i++) {
		uint64_t index = first + i;
		unsigned off = (unsigned)(index & LPC_RADIX_MASK);
		void *_Atomic const *slot;
		struct lpc_page *p;
		uint32_t flags;
#if LPC_DEBUG
		uint32_t removals;
#endif

		if (!slots || !off) {
			lpc_yield_point(LPC_YP_P2);
			slots = lpc_radix_lookup_leaf(&f->tree, index);		/* P2 */
			if (!slots)
				break;
		}
		slot = &slots[off];
		p = atomic_load_explicit((void *_Atomic *)slot, memory_order_acquire);
		if (!p)
			break;
		lpc_yield_point(LPC_YP_P3);
		if (unlikely(!lpc_page_try_pin(p)))				/* P3 */
			break;
#if LPC_DEBUG
		removals = lpc_filemap_debug_after_r3(f, index, p);
#endif
		lpc_yield_point(LPC_YP_P4);
		if (unlikely(atomic_load_explicit((void *_Atomic *)slot,	/* P4 */
						  memory_order_acquire) != p)) {
			lpc_page_unpin(p);
			break;
		}
#if LPC_DEBUG
		lpc_filemap_debug_check_in_index(f, p, index, slot, removals);
#endif
		flags = lpc_page_flags(p);
		/* RA_MARK: the slow path starts the next readahead window. */
		if (unlikely((flags & (LPC_PG_UPTODATE | LPC_PG_RA_MARK)) != LPC_PG_UPTODATE)) {
			lpc_page_unpin(p);
			break;
		}
		lpc_page_mark_referenced(p, flags);
		pages[i] = p;
	}
	return i;
}

/* LOCKED mode's fast path: the same walk under the rwlock, plain adds. */
static unsigned pin_fast_locked(struct lpc_file *f, uint64_t first, unsigned n,
				struct lpc_page **pages)
{
	void *_Atomic const *slots = NULL;
	unsigned i;

	pthread_rwlock_rdlock(&f->tree_rwlock);
	for (i = 0; i < n; i++) {
		uint64_t index = first + i;
		unsigned off = (unsigned)(index & LPC_RADIX_MASK);
		struct lpc_page *p;
		uint32_t flags;

		if (!slots || !off) {
			slots = lpc_radix_lookup_leaf(&f->tree, index);
			if (!slots)
				break;
		}
		p = atomic_load_explicit((void *_Atomic *)&slots[off], memory_order_acquire);
		if (!p)
			break;
		flags = lpc_page_flags(p);
		if ((flags & (LPC_PG_UPTODATE | LPC_PG_RA_MARK)) != LPC_PG_UPTODATE)
			break;
		atomic_fetch_add_explicit(&p->ref, LPC_PIN_BIAS, memory_order_acquire);
		lpc_page_mark_referenced(p, flags);
		pages[i] = p;
	}
	pthread_rwlock_unlock(&f->tree_rwlock);
	return i;
}

static void unpin_all(struct lpc_page **pages, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		lpc_page_unpin(pages[i]);
}

unsigned lpc_filemap_pin_fast(struct lpc_file *f, uint64_t first, unsigned n,
			      struct lpc_page **pages)
{
	unsigned got;

	if (unlikely(f->locked_lookup))
		return pin_fast_locked(f, first, n, pages);
	lpc_rcu_read_lock();							/* P1 */
	got = pin_fast_rcu(f, first, n, pages);
	lpc_rcu_read_unlock();							/* P5 */
	return got;
}

void lpc_filemap_unpin_all(struct lpc_page **pages, unsigned n)
{
	unpin_all(pages, n);
}

unsigned lpc_filemap_pages_held(struct lpc_file *f, uint64_t first, unsigned n,
				struct lpc_page *const *pages)
{
	void *_Atomic const *slots = NULL;
	unsigned i;

	lpc_rcu_read_lock();
	for (i = 0; i < n; i++) {
		uint64_t index = first + i;
		unsigned off = (unsigned)(index & LPC_RADIX_MASK);

		if (!slots || !off) {
			slots = lpc_radix_lookup_leaf(&f->tree, index);
			if (!slots)
				break;
		}
		/* A leaf detached meanwhile keeps NULL slots: not held. */
		if (atomic_load_explicit((void *_Atomic *)&slots[off], memory_order_acquire) !=
		    pages[i])
			break;
	}
	lpc_rcu_read_unlock();
	return i;
}

int lpc_filemap_pin_read(struct lpc_file *f, uint64_t off, size_t len, struct lpc_page **pages,
			 unsigned max, struct lpc_tcache *t)
{
	uint64_t size, end, first, last;
	unsigned n, got;

	/* lpc's size, as lpc_pread's (a write past the kernel's end is in
	 * range; what another process appended past lpc's size is not). */
	size = atomic_load_explicit(&f->size, memory_order_acquire);
	if (unlikely(off >= size)) {
		size = lpc_filemap_refresh_size(f);
		if (off >= size)
			return -ENXIO;
	}
	end = off + len < off ? UINT64_MAX : off + len;
	if (end > size)
		end = size;
	first = off >> f->page_shift;
	last = (end - 1) >> f->page_shift;
	if (unlikely(last - first >= max || last - first >= INT32_MAX))
		return -E2BIG;
	n = (unsigned)(last - first + 1);

	got = lpc_filemap_pin_fast(f, first, n, pages);
	if (likely(got == n)) {
		lpc_count(t, LPC_C_PIN_FAST);
		lpc_count_add(t, LPC_C_PAGES_PINNED, n);
		return (int)n;
	}
	/* Slow path: the rest of the range through the miss path. */
	for (unsigned i = got; i < n; i++) {
		struct lpc_page *p;
		/* A miss reads the absent pages after it in the range in the
		 * same I/O (run.c); each is then a hit here. */
		int rc = lpc_filemap_get_pages(f, first + i, n - i, t, 0, &p);

		if (unlikely(rc)) {
			unpin_all(pages, i);
			return rc;
		}
		/* Our reference (acquired) becomes a pin. */
		atomic_fetch_add_explicit(&p->ref, LPC_PIN_BIAS - 1, memory_order_relaxed);
		pages[i] = p;
	}
	lpc_count(t, LPC_C_PIN_SLOW);
	lpc_count_add(t, LPC_C_PAGES_PINNED, n);
	return (int)n;
}

LPC_EXPORT int lpc_pin_iov(struct lpc_page *const *pages, unsigned n, uint64_t off, size_t len,
			   struct iovec *iov)
{
	const struct lpc_page *p0;
	struct lpc_file *file;
	uint64_t first, pos, end;
	unsigned shift, k = 0;
	size_t ps;

	if (len == 0)
		return 0;
	if (!pages || !iov || !n || !pages[0])
		return -EINVAL;
	p0 = pages[0];
	ps = p0->pool->page_size;
	shift = p0->pool->page_shift;
	file = atomic_load_explicit(&((struct lpc_page *)p0)->file, memory_order_relaxed);
	first = atomic_load_explicit(&((struct lpc_page *)p0)->index, memory_order_relaxed);
	end = off + len;
	if (end < off || (off >> shift) != first || ((end - 1) >> shift) - first >= n)
		return -EINVAL;
	for (pos = off; pos < end;) {
		struct lpc_page *p = pages[(pos >> shift) - first];
		size_t pgoff = (size_t)pos & (ps - 1);
		size_t nb = ps - pgoff;
		char *base;

		if (!p || p->pool != p0->pool ||
		    atomic_load_explicit(&p->file, memory_order_relaxed) != file ||
		    atomic_load_explicit(&p->index, memory_order_relaxed) != pos >> shift)
			return -EINVAL;
		if (nb > end - pos)
			nb = (size_t)(end - pos);
		base = (char *)lpc_page_frame(p) + pgoff;
		if (k && (char *)iov[k - 1].iov_base + iov[k - 1].iov_len == base) {
			iov[k - 1].iov_len += nb;
		} else {
			iov[k].iov_base = base;
			iov[k].iov_len = nb;
			k++;
		}
		pos += nb;
	}
	return (int)k;
}
