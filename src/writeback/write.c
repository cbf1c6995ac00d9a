/* SPDX-License-Identifier: MIT */
/*
 * write.c - lpc_pwrite and lpc_page_mark_dirty: changing a page's data and
 * marking it dirty (steps D1-D3, told in writeback.c).
 *
 * A page the write covers whole, or one that lies wholly past lpc's size
 * (nothing to read: zeros), is filled while private (lpc_page_alloc's kind
 * of frame) and then inserted UPTODATE and DIRTY, so no reader ever sees a
 * half-written new page.  Any other page is read first (the miss path, M1-
 * M6), then changed under its lock between seq begin and end.  lpc's size
 * grows before the data is in the page (SZ1, below; the size protocol is in
 * writeback.c).  lpc_pwrite holds f->trunc_lock shared, so lpc_truncate
 * never runs in the middle of it.
 *
 * A write's new frames ascend with their pages (WB1-WB3).  Allocated page
 * by page, a write's pages got descending frames: the free lists hand
 * frames out last-freed first, and eviction frees them in the clock hand's
 * ascending order.  Writeback's vectored write of those pages was then one
 * segment per page (no two adjacent frames in the right order), and a
 * device with max_segments 254 (virtio-blk) split a 4 MiB write into five
 * requests, as reads' runs were before run.c U2's order.  Steps, in
 * lpc_pwrite, for the pages the call covers whole:
 *   WB1 at a whole page with no frame of the batch left: the next pages it
 *       covers whole (at most WRITE_BATCH and a sixteenth of the frames),
 *       those absent now (run.c U1's probe: a hint, nothing relied on), get
 *       a frame each, LPC_ALLOC_NOWAIT (a frame that cannot be had at once
 *       ends the batch: the rest are allocated one by one with the call's
 *       wait, as before); the batch is refilled only past its last page, so
 *       a write over cached pages probes each page once;
 *   WB2 the frames sorted ascending (run.c U2's order) and given to the
 *       absent pages in index order: they are private, so their order is
 *       free to choose;
 *   WB3 write_make of page `index` takes the batch's frame for it (the
 *       page is new after all: write_new_page fills it while private and
 *       inserts it, or frees it on -EEXIST as its own); a page found cached
 *       meanwhile leaves its frame unused, and the frames left are freed
 *       privately (never published) when the batch is refilled and when the
 *       call ends.
 * Nothing else changes: each page is still inserted alone, after its data,
 * in index order, as before; a batch holds at most a sixteenth of the
 * frames privately for the length of one call's copies.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "writeback/writeback.h"

#define WRITE_BATCH 64u /* WB1: the most frames one batch allocates */

/* WB1-WB3: frames for the absent pages of a write, ascending with them. */
struct write_frames {
	struct lpc_page *p[WRITE_BATCH]; /* NULL once taken */
	uint64_t index[WRITE_BATCH];     /* p[k]'s page, ascending */
	uint64_t end;                    /* the first page past the batch's */
	unsigned n, next;                /* frames; the first not yet passed */
};

/* WB3's end: the frames not taken, freed (private, never published). */
static void write_frames_drop(struct write_frames *w)
{
	for (unsigned k = 0; k < w->n; k++)
		if (w->p[k])
			lpc_page_free_private(w->p[k]);
	w->n = 0;
	w->next = 0;
}

/* WB1-WB2 for the `pages` pages from `index` that the call covers whole. */
static void write_frames_fill(struct lpc_file *f, struct write_frames *w, uint64_t index,
			      uint64_t pages)
{
	uint64_t cap = f->pool->nframes / 16;
	struct lpc_page *p;

	write_frames_drop(w);
	if (pages > WRITE_BATCH)
		pages = WRITE_BATCH;
	if (pages > cap)
		pages = cap;
	w->end = index + (pages ? pages : 1);
	if (pages < 2)
		return; /* one page: nothing to order */
	for (uint64_t k = 0; k < pages; k++) {					/* WB1 */
		if (lpc_filemap_present(f, index + k))
			continue;
		if (lpc_page_alloc_frame(f->pool, LPC_ALLOC_NOWAIT, &p))
			break;
		w->index[w->n] = index + k;
		w->p[w->n++] = p;
	}
	lpc_filemap_order_frames(w->p, w->n);					/* WB2 */
}

/* WB3: the batch's frame for page `index`, or NULL (allocate one). */
static struct lpc_page *write_frames_take(struct write_frames *w, uint64_t index)
{
	struct lpc_page *p;

	while (w->next < w->n && w->index[w->next] < index)
		w->next++; /* cached after all: its frame stays for the drop */
	if (w->next == w->n || w->index[w->next] != index)
		return NULL;
	p = w->p[w->next];
	w->p[w->next++] = NULL;
	return p;
}

/* A new page holding [pgoff, pgoff + n) of src and zeros elsewhere, in
 * frame p if not NULL (WB3: consumed whatever the result), else a frame
 * allocated here.  Return: 0; -EEXIST (someone inserted first: use
 * theirs); -ENOMEM. */
static int write_new_page(struct lpc_file *f, uint64_t index, size_t pgoff, size_t n,
			  const void *src, struct lpc_page *p)
{
	size_t ps = f->pool->page_size;
	char *data;
	int rc;

	if (!p) {
		rc = lpc_page_alloc_frame(f->pool, 0, &p);
		if (rc)
			return rc;
	}
	data = lpc_page_frame(p);
	/* Private: nobody else can reach it yet.  As M2: the data and the
	 * identity change inside one seq write section, the identity while
	 * the page is locked (rule SEQ-IDENTITY), then the final flags. */
	lpc_page_seq_write_begin(p);
	if (n != ps) {
		memset(data, 0, pgoff);
		memset(data + pgoff + n, 0, ps - pgoff - n);
	}
	memcpy(data + pgoff, src, n);
	atomic_store_explicit(&p->flags, LPC_PG_LOCKED, memory_order_relaxed);
	lpc_page_set_identity(p, f, index);
	lpc_page_seq_write_end(p);
	atomic_store_explicit(&p->flags, LPC_PG_PUBLISHED | LPC_PG_UPTODATE | LPC_PG_DIRTY,
			      memory_order_relaxed);
	atomic_store_explicit(&p->ref, 1, memory_order_relaxed); /* the index's */
	rc = lpc_wb_insert_dirty(f, index, p);
	if (rc) {
		lpc_page_free_private(p);
		return rc;
	}
	return 0;
}

#if LPC_DEBUG
/* Rule SIZE-CUT, the writer's half (SZ1 before D3): bytes are dirtied only
 * below lpc's size, so a publish (which reads the size under size_lock)
 * never sees a page with promised bytes past the size it cuts to. */
static void debug_check_z1(struct lpc_file *f, struct lpc_page *p, uint64_t end)
{
	uint64_t size = atomic_load_explicit(&f->size, memory_order_relaxed);

	lpc_debug_check(size >= end, "SIZE-CUT", p,
			"bytes up to %llu dirtied with lpc's size at %llu (SZ1 must raise it "
			"before D3: a publish in between would cut them)",
			(unsigned long long)end, (unsigned long long)size);
}
#else
#define debug_check_z1(f, p, end) ((void)0)
#endif

/*
 * The find/make/wait loop that lpc_pwrite (D1) and a write pin's slow path
 * (WP1-WP3, wpin.c) share: page `index` of f, held and locked for writing.
 *   - `fresh` (the caller's range covers the page whole, or it lies wholly
 *     past lpc's size before SZ1: nothing to read): look the page up; an
 *     absent one is made by make() (zeros and the caller's bytes, filled
 *     while private, then inserted); one whose read is in flight is waited
 *     for, and looked up again if that read failed;
 *   - otherwise through the miss path (read if absent); -ENXIO (past the
 *     kernel file's end after all) makes it fresh.
 * The reference the lookup took becomes a pin with LPC_WB_GET_PIN, then
 * lpc_wb_lock_for_write locks it (the caller's yield point, then the lock,
 * the re-check that it is still f's at `index`, and with LPC_WB_GET_STABLE
 * the wait for a write in flight); a page that left the index meanwhile is
 * dropped and the loop starts again.  Return: 0 with *out the page (held:
 * a reference, or a pin with LPC_WB_GET_PIN; locked), or with *out as
 * make() left it (NULL: make() wrote and inserted the page, nothing held);
 * negative errno.
 */
static inline bool lock_for_write(struct lpc_file *f, struct lpc_page *p, uint64_t index,
				  unsigned how, enum lpc_yield_point yp);

/* Inline in lpc_pwrite's write_page, whose `how` is a constant (its
 * checks then fold away); wpin.c calls the exported lpc_wb_get_locked. */
static inline __attribute__((always_inline)) int
get_locked(struct lpc_file *f, uint64_t index, bool fresh, unsigned how,
	   enum lpc_yield_point yp, lpc_wb_make_fn make, void *arg, struct lpc_tcache *t,
	   struct lpc_page **out)
{
	struct lpc_page *p;
	int rc;

	for (;;) {
		if (fresh) {
			p = lpc_filemap_lookup(f, index, t);
			if (!p) {
				rc = make(f, index, arg, out);
				if (rc == -EEXIST)
					continue;
				return rc;
			}
			if (!(lpc_page_flags(p) & LPC_PG_UPTODATE)) {
				/* Its read is in flight: let it end. */
				lpc_page_wait_unlocked(p);
				if (!(lpc_page_flags(p) & LPC_PG_UPTODATE)) {
					lpc_page_release(p);
					continue;
				}
			}
			/* A page read ahead and now written: used. */
			if ((how & LPC_WB_GET_RA_USED) && unlikely(lpc_page_flags(p) & LPC_PG_RA))
				lpc_page_ra_used(p);
		} else {
			rc = lpc_filemap_get_page(f, index, t, 0, &p);
			if (rc == -ENXIO) {
				fresh = true; /* past the end after all: a new page */
				continue;
			}
			if (rc)
				return rc;
		}
		if (how & LPC_WB_GET_PIN) {
			/* Our reference (acquired) becomes a pin. */
			atomic_fetch_add_explicit(&p->ref, LPC_PIN_BIAS - 1, memory_order_relaxed);
			if (!lock_for_write(f, p, index, how, yp)) {
				lpc_page_unpin(p);
				continue;
			}
		} else if (!lock_for_write(f, p, index, how, yp)) {
			lpc_page_release(p);
			continue;
		}
		*out = p;
		return 0;
	}
}

static inline bool lock_for_write(struct lpc_file *f, struct lpc_page *p, uint64_t index,
				  unsigned how, enum lpc_yield_point yp)
{
	(void)yp; /* a release build has no yield points */
	lpc_yield_point(yp);
	lpc_page_lock_noseq(p);						/* D1, WP1 */
	for (;;) {
		if (!(how & LPC_WB_LOCK_HELD_LATER) &&
		    unlikely(!lpc_wb_holds(f, p, index))) {			/* WP2 */
			lpc_page_unlock_noseq(p);
			return false;
		}
		if (!(how & LPC_WB_GET_STABLE) || likely(!(lpc_page_flags(p) & LPC_PG_WRITEBACK)))
			return true;
		lpc_yield_point(LPC_YP_WP3);
		lpc_page_unlock_noseq(p);					/* WP3 */
		lpc_page_wait_writeback(p);
		lpc_page_lock_noseq(p);
	}
}

int lpc_wb_get_locked(struct lpc_file *f, uint64_t index, bool fresh, unsigned how,
		      enum lpc_yield_point yp, lpc_wb_make_fn make, void *arg,
		      struct lpc_tcache *t, struct lpc_page **out)
{
	return get_locked(f, index, fresh, how, yp, make, arg, t, out);
}

bool lpc_wb_lock_for_write(struct lpc_file *f, struct lpc_page *p, uint64_t index,
			   unsigned how, enum lpc_yield_point yp)
{
	return lock_for_write(f, p, index, how, yp);
}

/* What write_page's make() writes into a new page, and where its frame
 * may come from (WB3). */
struct write_src {
	size_t pgoff, n;
	const void *src;
	struct write_frames *wf;
};

static int write_make(struct lpc_file *f, uint64_t index, void *arg, struct lpc_page **out)
{
	const struct write_src *w = arg;

	debug_check_z1(f, NULL, (index << f->page_shift) + w->pgoff + w->n);
	*out = NULL; /* inserted dirty: nothing held */
	return write_new_page(f, index, w->pgoff, w->n, w->src,
			      w->wf ? write_frames_take(w->wf, index) : NULL);	/* WB3 */
}

/* D1-D3 on page `index`: [pgoff, pgoff + n) from src.  size0 is lpc's size
 * before this write's SZ1 raise (lpc_wb_extend): a page wholly past it holds
 * nothing yet (zeros), so a new page needs no read.  Return: 0 or errno. */
static int write_page(struct lpc_file *f, uint64_t index, size_t pgoff, size_t n,
		      const void *src, uint64_t size0, struct write_frames *wf,
		      struct lpc_tcache *t)
{
	size_t ps = f->pool->page_size;
	bool fresh = n == ps || (index << f->page_shift) >= size0;
	struct write_src w = { pgoff, n, src, wf };
	struct lpc_page *p;
	int rc;

	for (;;) {
		rc = get_locked(f, index, fresh, LPC_WB_GET_RA_USED, LPC_YP_D1,	/* D1 */
				write_make, &w, t, &p);
		if (rc || !p)
			return rc;
		lpc_yield_point(LPC_YP_D2);
		lpc_page_seq_write_begin(p);					/* D2 */
		memcpy((char *)lpc_page_frame(p) + pgoff, src, n);
		lpc_page_seq_write_end(p);
		debug_check_z1(f, p, (index << f->page_shift) + pgoff + n);
		rc = lpc_wb_dirty_locked(f, p, index);			/* D3 */
		lpc_page_unlock_noseq(p);
		lpc_page_release(p);
		if (rc == -ENOENT)
			continue; /* removed under us, cannot be: we held its lock */
		return rc;
	}
}

/*
 * SZ1: raises lpc's size of f to at least `end`, under size_lock, before the
 * bytes below `end` are in a page (writeback.c, the size protocol): a
 * publish, which reads the size under the same lock, then either sees the
 * new size or runs its ftruncate before any of these bytes can be dirty.
 * A write inside the size takes no lock (one acquire load).  Return: lpc's
 * size just before this raise (or the size, when it did not raise): the
 * bound below which the file may hold bytes.
 */
uint64_t lpc_wb_extend(struct lpc_file *f, uint64_t end)
{
	uint64_t size = atomic_load_explicit(&f->size, memory_order_acquire);

	lpc_yield_point(LPC_YP_SZ1);
	if (size >= end)
		return size;
	lpc_debug_no_page_lock("size_lock taken (lpc_pwrite SZ1)");
	pthread_mutex_lock(&f->size_lock);
	size = atomic_load_explicit(&f->size, memory_order_relaxed);
	if (size < end)
		atomic_store_explicit(&f->size, end, memory_order_release);	/* SZ1 */
	pthread_mutex_unlock(&f->size_lock);
	return size;
}

LPC_EXPORT ssize_t lpc_pwrite(struct lpc_file *f, const void *buf, size_t len, uint64_t off)
{
	struct lpc_tcache *t;
	struct write_frames wf = { .end = 0 };
	size_t done = 0, mask;
	uint64_t size0;
	int rc = 0;

	if (unlikely(!f || (!buf && len)))
		return -EINVAL;
	lpc_debug_file_check(f);
	/* Acquire: pairs with the upgrade's release (filemap/file.c ZL4), so
	 * what this call writes goes through the read-write descriptor. */
	if (__atomic_load_n(&f->accmode, __ATOMIC_ACQUIRE) == O_RDONLY)
		return -EBADF;
	if (unlikely(len == 0))
		return 0;
	if (len > SSIZE_MAX)
		len = SSIZE_MAX;
	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return -EFBIG;
	t = lpc_file_tcache(f);
	if (unlikely(!t))
		return -ENOMEM;
	lpc_debug_no_page_lock("lpc_pwrite");

	pthread_rwlock_rdlock(&f->trunc_lock);
	/* From now on the size is lpc's: fstat no longer moves it. */
	if (!atomic_load_explicit(&f->size_kept, memory_order_relaxed))
		atomic_store_explicit(&f->size_kept, true, memory_order_release);
	mask = f->pool->page_size - 1;
	while (done < len) {
		uint64_t pos = off + done;
		size_t pgoff = (size_t)pos & mask;
		size_t n = f->pool->page_size - pgoff;

		if (n > len - done)
			n = len - done;
		if (pgoff == 0 && (pos >> f->page_shift) >= wf.end &&
		    len - done >= 2 * f->pool->page_size)
			write_frames_fill(f, &wf, pos >> f->page_shift,		/* WB1 */
					  (len - done) >> f->page_shift);
		size0 = lpc_wb_extend(f, pos + n);				/* SZ1 */
		rc = write_page(f, pos >> f->page_shift, pgoff, n, (const char *)buf + done, size0,
				n == f->pool->page_size ? &wf : NULL, t);
		if (rc)
			break;
		done += n;
	}
	write_frames_drop(&wf);							/* WB3 */
	pthread_rwlock_unlock(&f->trunc_lock);
	lpc_count(t, LPC_C_WRITES);
	lpc_count_add(t, LPC_C_WRITE_BYTES, done);
	lpc_wb_balance(f, t);
	return done ? (ssize_t)done : rc;
}

void lpc_wb_balance(struct lpc_file *f, struct lpc_tcache *t)
{
	if (f->files->wb) {
		struct lpc_wb *wb = f->files->wb;
		int64_t nd = atomic_load_explicit(&f->files->ndirty, memory_order_relaxed);

		if (nd > wb->limit_pages)
			lpc_wb_throttle(wb, f, t);
		else if (nd > wb->bg_pages)
			lpc_wb_kick_bg(wb);
	}
}

LPC_EXPORT int lpc_page_mark_dirty(struct lpc_page *p)
{
	struct lpc_file *f;
	uint64_t index;
	bool scoped;
	int rc;

	if (unlikely(!p))
		return -EINVAL;
	f = atomic_load_explicit(&p->file, memory_order_relaxed);
	if (!f || !(lpc_page_flags(p) & LPC_PG_PUBLISHED))
		return -EINVAL; /* a private page belongs to no file */
	if (!(lpc_page_flags(p) & LPC_PG_LOCKED))
		return -EINVAL;
	/*
	 * A page held across its file's truncate or last close stays valid,
	 * but its file may not: the last close frees the struct one grace
	 * period after it removed the pages (file.c).  Removal sets REMOVED
	 * (under the index lock, release) before that close's call_rcu, so a
	 * read section that sees REMOVED clear began before the grace period
	 * and keeps f's memory valid until it ends; a page with REMOVED set
	 * never goes back into an index.  Inside the section the index lock
	 * may be waited for: no holder of an index lock waits for a grace
	 * period (cache/cache.h).
	 */
	scoped = lpc_rcu_scope_enter();
	lpc_rcu_read_lock();
	if (atomic_load_explicit(&p->flags, memory_order_acquire) & LPC_PG_REMOVED) {
		rc = -ENOENT;
		goto out;
	}
	lpc_debug_file_check(f);
	/* Acquire: pairs with the upgrade's release (filemap/file.c ZL4), so
	 * what this call writes goes through the read-write descriptor. */
	if (__atomic_load_n(&f->accmode, __ATOMIC_ACQUIRE) == O_RDONLY) {
		rc = -EBADF;
		goto out;
	}
	index = atomic_load_explicit(&p->index, memory_order_relaxed);
	/* No seq bump here: the caller's lpc_page_lock opened a seq write
	 * section on this published page (lock.c X1) that its unlock closes
	 * (X2), so optimistic readers already refuse every copy taken while
	 * the caller changed the frame, before or after this call. */
	rc = lpc_wb_dirty_locked(f, p, index);
	if (rc == 0 && !atomic_load_explicit(&f->size_kept, memory_order_relaxed))
		atomic_store_explicit(&f->size_kept, true, memory_order_release);
out:
	lpc_rcu_read_unlock();
	lpc_rcu_scope_exit(scoped);
	return rc;
}
