/* SPDX-License-Identifier: MIT */
/*
 * alloc.c - the frame allocator and the deferred free of published pages.
 *
 * Where a frame comes from: this thread's private list (no atomics, no lock),
 * else a batch from the cache's shared list (free_lock), else, when frames
 * wait for a grace period, the caller takes them and waits for one itself
 * (reclaim_pending), else -ENOMEM.  Eviction under memory pressure is the
 * reclaim part's job (a later step); until then a full cache fails the
 * allocation.
 *
 * Frames on a thread's list are out of other threads' reach, so hoarding is
 * bounded where it could starve them: a refill takes at most an eighth of
 * the shared free frames, and once fewer than low_free remain, private frees
 * go back to the shared list instead of the thread's.  A thread that stops
 * calling lpc still holds what its list had then (at most 2 * tbatch) until
 * it exits.
 *
 * Where a frame goes:
 *  - A private page (PUBLISHED clear: never in an index since it was
 *    allocated) has exactly one user, its owner.  lpc_page_free_private puts
 *    it on the thread's list with plain stores: the page-free fast path.
 *  - A published page may still be in the hands of a speculative getter that
 *    loaded its pointer from a slot before it was removed: such a getter can
 *    still try to increment ref (it fails, ref is 0) and must never see the
 *    page reused for another identity within its read section.  So it goes on
 *    the cache's pending list; every LPC_FREE_BATCH pages the list is handed to
 *    call_rcu as one batch (one grace period per batch, not per page), whose
 *    callback moves it to the shared free list.
 *
 * The "count is 1, so it is mine" shortcut is never taken on a published page:
 * a speculative getter may be about to increment that count.  Both rules are
 * checked, with broken variants that spin must catch, in
 * tests/model/spec_get.pml (BUG_NO_GRACE, BUG_COUNT_ONE_IS_MINE).
 */
#include <errno.h>
#include <stdlib.h>

#include "core/cache.h"

#define LPC_FREE_BATCH 64

void lpc_page_free_chain(struct lpc_cache *c, struct lpc_page *head, struct lpc_page *tail,
			 uint32_t n)
{
	pthread_mutex_lock(&c->free_lock);
	tail->next = c->free;
	c->free = head;
	c->nfree += n;
	pthread_mutex_unlock(&c->free_lock);
}

struct lpc_free_batch {
	struct rcu_head rcu;
	struct lpc_cache *cache;
	struct lpc_page *head, *tail;
	uint32_t n;
};

static void free_batch_rcu(struct rcu_head *head)
{
	struct lpc_free_batch *b = caa_container_of(head, struct lpc_free_batch, rcu);
	struct lpc_cache *c;

	lpc_rcu_callback_enter(head);
	c = b->cache;

	lpc_page_free_chain(c, b->head, b->tail, b->n);
	/* Release: the barrier's waiter that sees the count drop sees the list. */
	atomic_fetch_sub_explicit(&c->batches_in_flight, 1, memory_order_release);
	free(b);
}

/*
 * Hands the pending list to call_rcu.  Context: free_lock held; drops it.
 * Return: true if a batch was submitted.
 */
static bool pending_submit_unlock(struct lpc_cache *c)
{
	struct lpc_free_batch *b;
	struct lpc_page *head = c->pending, *tail;
	uint32_t n = c->npending;

	if (!head) {
		pthread_mutex_unlock(&c->free_lock);
		return false;
	}
	b = malloc(sizeof(*b));
	if (!b) {
		/* Keep them pending; the next free or allocation retries. */
		pthread_mutex_unlock(&c->free_lock);
		return false;
	}
	c->pending = NULL;
	c->npending = 0;
	atomic_fetch_add_explicit(&c->batches_in_flight, 1, memory_order_relaxed);
	pthread_mutex_unlock(&c->free_lock);

	for (tail = head; tail->next; tail = tail->next)
		;
	b->cache = c;
	b->head = head;
	b->tail = tail;
	b->n = n;
	/* call_rcu is legal inside a read section: a put may run in one. */
	lpc_call_rcu(&b->rcu, free_batch_rcu);
	return true;
}

void lpc_page_free_deferred(struct lpc_page *p)
{
	struct lpc_cache *c = p->cache;

	/* A thread that only ever puts still needs RCU registration: call_rcu
	 * below runs read-side code. */
	(void)lpc_tcache(c);

	pthread_mutex_lock(&c->free_lock);
	p->next = c->pending;
	c->pending = p;
	if (++c->npending < LPC_FREE_BATCH) {
		pthread_mutex_unlock(&c->free_lock);
		return;
	}
	pending_submit_unlock(c);
}

void lpc_page_free_private(struct lpc_page *p)
{
	struct lpc_cache *c = p->cache;
	struct lpc_tcache *t = lpc_tcache(c);
	unsigned n;

	/* Nobody else can see this page: plain (relaxed) stores, no RMW. */
	atomic_store_explicit(&p->ref, 0, memory_order_relaxed);
	atomic_store_explicit(&p->flags, 0, memory_order_relaxed);
	/* Keep it for this thread's next allocation, unless the shared list
	 * runs low: then a frame hoarded here could starve another thread. */
	if (likely(t != NULL) &&
	    atomic_load_explicit(&c->nfree, memory_order_relaxed) >= c->low_free) {
		p->next = t->free;
		t->free = p;
		n = atomic_load_explicit(&t->nfree, memory_order_relaxed) + 1;
		if (likely(n <= 2 * c->tbatch)) {
			atomic_store_explicit(&t->nfree, n, memory_order_relaxed);
			return;
		}
		/* Too many hoarded: give a batch back to the shared list. */
		struct lpc_page *head = t->free, *tail = head;

		for (unsigned i = 1; i < c->tbatch; i++)
			tail = tail->next;
		t->free = tail->next;
		atomic_store_explicit(&t->nfree, n - c->tbatch, memory_order_relaxed);
		lpc_page_free_chain(c, head, tail, c->tbatch);
		return;
	}
	lpc_page_free_chain(c, p, p, 1);
}

static void page_init_private(struct lpc_page *p)
{
	p->next = NULL;
	atomic_store_explicit(&p->file, NULL, memory_order_relaxed);
	atomic_store_explicit(&p->index, 0, memory_order_relaxed);
	atomic_store_explicit(&p->flags, 0, memory_order_relaxed);
	/* Plain store: no reader can reach a page on a free list (a grace
	 * period separates its last publication from now). */
	atomic_store_explicit(&p->ref, 1, memory_order_relaxed);
}

/*
 * The allocator found no free frame.  Frames on the pending list wait only
 * for a grace period: take them privately, wait for one ourselves
 * (synchronize_rcu costs microseconds with no reader to wait for, where
 * rcu_barrier waits for the call_rcu worker's next pass, about 10 ms), and
 * put them on the free list.  Batches already handed to call_rcu are waited
 * for with the barrier.  Context: no RCU read section, no frozen page held.
 * Return: true if frames may now be free (worth another look).
 */
static bool reclaim_pending(struct lpc_cache *c)
{
	struct lpc_page *head, *tail;
	uint32_t n;

	pthread_mutex_lock(&c->free_lock);
	head = c->pending;
	n = c->npending;
	c->pending = NULL;
	c->npending = 0;
	pthread_mutex_unlock(&c->free_lock);
	if (head) {
		lpc_rcu_synchronize();
		for (tail = head; tail->next; tail = tail->next)
			;
		lpc_page_free_chain(c, head, tail, n);
		return true;
	}
	if (atomic_load_explicit(&c->batches_in_flight, memory_order_acquire)) {
		lpc_rcu_barrier();
		return true;
	}
	/* A batch may have landed since the caller found the list empty. */
	return atomic_load_explicit(&c->nfree, memory_order_relaxed) > 0;
}

/* Takes up to `want` frames from the shared list.  Return: the chain. */
static struct lpc_page *shared_take(struct lpc_cache *c, unsigned want, unsigned *got)
{
	struct lpc_page *head, *tail;
	unsigned n = 0;

	pthread_mutex_lock(&c->free_lock);
	head = c->free;
	if (!head) {
		pthread_mutex_unlock(&c->free_lock);
		*got = 0;
		return NULL;
	}
	/* Take a batch for this thread's list only while frames are plenty:
	 * a thread's hoard is then at most an eighth of what was free. */
	if (want > c->nfree / 8)
		want = c->nfree / 8 ? c->nfree / 8 : 1;
	for (tail = head, n = 1; n < want && tail->next; n++)
		tail = tail->next;
	c->free = tail->next;
	c->nfree -= n;
	tail->next = NULL;
	pthread_mutex_unlock(&c->free_lock);
	*got = n;
	return head;
}

int lpc_page_alloc_frame(struct lpc_cache *c, struct lpc_page **out)
{
	struct lpc_tcache *t = lpc_tcache(c);
	struct lpc_page *p;
	unsigned got;

	for (int attempt = 0;; attempt++) {
		if (likely(t != NULL) && t->free) {
			p = t->free;
			t->free = p->next;
			atomic_store_explicit(&t->nfree,
					      atomic_load_explicit(&t->nfree, memory_order_relaxed) - 1,
					      memory_order_relaxed);
			break;
		}
		p = shared_take(c, t ? c->tbatch : 1, &got);
		if (p) {
			if (t && got > 1) {
				t->free = p->next;
				atomic_store_explicit(&t->nfree, got - 1, memory_order_relaxed);
			}
			break;
		}
		/* Frames may be waiting for a grace period: wait, a bounded
		 * number of times (others may take what one wait frees). */
		if (attempt >= 3 || !reclaim_pending(c))
			goto nomem;
	}
	page_init_private(p);
	*out = p;
	return 0;
nomem:
	if (t) /* a thread without a block (out of memory) goes uncounted */
		lpc_count(t, LPC_C_ALLOC_FAILURES);
	return -ENOMEM;
}
