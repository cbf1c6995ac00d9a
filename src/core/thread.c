/* SPDX-License-Identifier: MIT */
/*
 * thread.c - per-thread state: lazy RCU registration, and one block per
 * (thread, cache) holding the thread's counters and private free frames.
 *
 * Why blocks per thread: a hit must write no shared cache line but the page's
 * reference count, so counters live in memory only their thread writes, and
 * lpc_stats sums them.  The fast path (lpc_tcache in cache.h) is one TLS load
 * and one compare with the cache's id; ids are never reused, so a block of a
 * destroyed cache can never be mistaken for one of a new cache at the same
 * address.
 *
 * Lifetimes: a block is linked into its cache's list and its thread's list
 * under lpc_threads_lock.  At thread exit (a pthread key destructor) the
 * thread folds its counters into the cache's `retired` sums, returns its free
 * frames, unlinks and frees its blocks, then unregisters from RCU.  When a
 * cache is destroyed first, its blocks are orphaned (cache = NULL) under the
 * same lock; their threads free them later.
 *
 * The key.  lpc owns exactly one pthread key, made on the first call that
 * needs it.  When the process has none left (pthread_key_create: EAGAIN),
 * lpc remembers that it has no key and tries again on a later thread's first
 * call; it never calls pthread_setspecific on a key it did not create (the
 * old code used key 0, someone else's, whose destructor then got lpc's
 * state).  A thread that cannot be registered persistently gets -ENOMEM from
 * the calls that need a block (find, get, pread, invalidate, alloc), while
 * the calls that only need RCU for a moment (the last put of a page, close,
 * cache destroy) register it for their own duration: lpc_rcu_scope_enter.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/cache.h"

__thread struct lpc_thread lpc_self;
#ifdef LPC_TSAN
char lpc_rcu_tsan_token; /* see core/rcu.h */
#endif

static pthread_mutex_t lpc_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lpc_thread_key_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t lpc_thread_key;
static _Atomic bool lpc_thread_key_made; /* lpc_thread_key is lpc's own */
static _Atomic uint64_t lpc_next_cache_id = 1;

uint64_t lpc_cache_new_id(void)
{
	return atomic_fetch_add_explicit(&lpc_next_cache_id, 1, memory_order_relaxed);
}

/* Takes the block's free frames.  Return: how many; the chain in *head..*tail.
 * Context: lpc_threads_lock, and t's owner off its list (its own thread, or
 * alloc.c's S1-S3 made sure). */
static uint32_t tcache_take(struct lpc_tcache *t, struct lpc_page **head, struct lpc_page **tail)
{
	struct lpc_page *p;
	uint32_t n = 0;

	*head = t->free;
	*tail = NULL;
	for (p = t->free; p; p = p->next) {
		*tail = p;
		n++;
	}
	t->free = NULL;
	atomic_store_explicit(&t->nfree, 0, memory_order_relaxed);
	return n;
}

/* Returns the block's free frames to its cache.  Context: lpc_threads_lock. */
static void tcache_drain(struct lpc_tcache *t)
{
	struct lpc_page *head, *tail;
	uint32_t n;

	if (!t->cache)
		return;
	n = tcache_take(t, &head, &tail);
	if (n)
		lpc_page_free_chain(t->cache, head, tail, n);
}

/*
 * Taking other threads' free frames, for an allocator that found none
 * anywhere else (the kernel's drain_all_pages): flag every block, wait for a
 * grace period, take the lists.  The owner touches its list only inside an
 * RCU read section that first checks the flag (alloc.c, S1-S3 there), so
 * after the grace period no owner is on its list and none will be until the
 * flag clears.  Context: c->reclaim_lock (one taker at a time), outside any
 * read section; the grace period goes between the two calls.
 */
void lpc_tcaches_steal_begin(struct lpc_cache *c)
{
	struct lpc_tcache *t;

	pthread_mutex_lock(&lpc_threads_lock);
	for (t = c->tcaches; t; t = t->cache_next)
		atomic_store_explicit(&t->steal, true, memory_order_relaxed); /* T1 */
	pthread_mutex_unlock(&lpc_threads_lock);
}

/* Takes the free frames of flagged blocks, putting them in front of the
 * chain *head (which may be NULL); the caller owns them.  Return: how many. */
uint32_t lpc_tcaches_steal_end(struct lpc_cache *c, struct lpc_page **head)
{
	struct lpc_tcache *t;
	struct lpc_page *h, *tail;
	uint32_t n = 0;

	pthread_mutex_lock(&lpc_threads_lock);
	for (t = c->tcaches; t; t = t->cache_next) {
		/* Blocks made since steal_begin are not flagged: their owners
		 * may be on their lists. */
		if (!atomic_load_explicit(&t->steal, memory_order_relaxed))
			continue;
		if (t->free) {						/* T3 */
			n += tcache_take(t, &h, &tail);
			tail->next = *head;
			*head = h;
		}
		/* Release: the owner that sees the flag clear sees the list
		 * empty (S1's acquire). */
		atomic_store_explicit(&t->steal, false, memory_order_release); /* T4 */
	}
	pthread_mutex_unlock(&lpc_threads_lock);
	return n;
}

/* Unlinks t from its cache, folding its counters in.  Context: lpc_threads_lock. */
static void tcache_retire(struct lpc_tcache *t)
{
	struct lpc_cache *c = t->cache;

	if (!c)
		return;
	tcache_drain(t);
	for (int i = 0; i < LPC_NR_COUNTERS; i++)
		c->retired[i] += atomic_load_explicit(&t->cnt[i], memory_order_relaxed);
	if (t->cache_prev)
		t->cache_prev->cache_next = t->cache_next;
	else
		c->tcaches = t->cache_next;
	if (t->cache_next)
		t->cache_next->cache_prev = t->cache_prev;
	t->cache = NULL;
}

static void lpc_thread_exit(void *arg)
{
	struct lpc_thread *self = arg;
	struct lpc_tcache *t, *next;

	pthread_mutex_lock(&lpc_threads_lock);
	for (t = self->blocks; t; t = next) {
		next = t->thread_next;
		tcache_retire(t);
		free(t);
	}
	pthread_mutex_unlock(&lpc_threads_lock);
	self->blocks = NULL;
	self->cur = NULL;
	self->cur_id = 0;
	if (self->registered) {
		urcu_memb_unregister_thread();
		self->registered = false;
	}
}

/* Makes lpc's key if it has none yet.  Return: true once it has one. */
static bool thread_key_get(void)
{
	bool made;

	/* Acquire: pairs with the release below, so lpc_thread_key is read
	 * after it was written. */
	if (likely(atomic_load_explicit(&lpc_thread_key_made, memory_order_acquire)))
		return true;
	pthread_mutex_lock(&lpc_thread_key_lock);
	made = atomic_load_explicit(&lpc_thread_key_made, memory_order_relaxed);
	if (!made && pthread_key_create(&lpc_thread_key, lpc_thread_exit) == 0) {
		atomic_store_explicit(&lpc_thread_key_made, true, memory_order_release);
		made = true;
	}
	pthread_mutex_unlock(&lpc_thread_key_lock);
	return made;
}

int lpc_thread_register(void)
{
	struct lpc_thread *self = &lpc_self;

	if (likely(self->registered))
		return 0;
	/* Keep the failure: no key, no setspecific (on no one else's key). */
	if (!thread_key_get() || pthread_setspecific(lpc_thread_key, self) != 0)
		return -ENOMEM;
	if (self->scoped) {
		/* Registered for a scope already: keep it, now for good. */
		self->scoped = false;
	} else {
		urcu_memb_register_thread();
	}
	self->registered = true;
	return 0;
}

/*
 * Scoped registration.  liburcu's urcu_memb_register_thread allocates
 * nothing and cannot fail, so a thread that has no key (or whose
 * pthread_setspecific failed) can still be an RCU reader, and call call_rcu
 * and rcu_barrier, for the duration of one lpc call: register, do the RCU
 * work, unregister.  Chosen over keeping such frees on the pending list for a
 * registered thread to submit: that would leave frames out of reach of
 * reclaim (and close and destroy would still need RCU themselves).
 * Persistent registration is tried first: a thread that keeps calling puts
 * then pays the registry's mutex once, not per call.
 */
bool lpc_rcu_scope_enter(void)
{
	struct lpc_thread *self = &lpc_self;

	if (likely(self->registered || self->scoped))
		return false;
	if (lpc_thread_register() == 0)
		return false;
	urcu_memb_register_thread();
	self->scoped = true;
	return true;
}

void lpc_rcu_scope_exit(bool entered)
{
	struct lpc_thread *self = &lpc_self;

	/* scoped is false if lpc_thread_register made it persistent since. */
	if (entered && self->scoped) {
		urcu_memb_unregister_thread();
		self->scoped = false;
	}
}

void lpc_count_noblock(struct lpc_cache *c, enum lpc_counter i)
{
	pthread_mutex_lock(&lpc_threads_lock);
	c->retired[i]++;
	pthread_mutex_unlock(&lpc_threads_lock);
}

struct lpc_tcache *lpc_tcache_slow(struct lpc_cache *c)
{
	struct lpc_thread *self = &lpc_self;
	struct lpc_tcache *t, **pp;

	if (lpc_thread_register() < 0)
		return NULL;

	pthread_mutex_lock(&lpc_threads_lock);
	/* Find this cache's block; free blocks of destroyed caches on the way. */
	for (pp = &self->blocks; (t = *pp) != NULL;) {
		if (!t->cache) {
			*pp = t->thread_next;
			free(t);
			continue;
		}
		if (t->cache_id == c->id)
			break;
		pp = &t->thread_next;
	}
	if (!t) {
		t = aligned_alloc(LPC_CACHELINE, sizeof(*t));
		if (!t) {
			pthread_mutex_unlock(&lpc_threads_lock);
			return NULL;
		}
		memset(t, 0, sizeof(*t));
		t->cache = c;
		t->cache_id = c->id;
		t->cache_next = c->tcaches;
		if (c->tcaches)
			c->tcaches->cache_prev = t;
		c->tcaches = t;
		t->thread_next = self->blocks;
		self->blocks = t;
	}
	pthread_mutex_unlock(&lpc_threads_lock);
	self->cur = t;
	self->cur_id = c->id;
	return t;
}

void lpc_cache_orphan_tcaches(struct lpc_cache *c)
{
	struct lpc_tcache *t, *next;

	pthread_mutex_lock(&lpc_threads_lock);
	for (t = c->tcaches; t; t = next) {
		next = t->cache_next;
		/* Its frames die with the arena; its owner frees the block. */
		t->free = NULL;
		t->cache = NULL;
	}
	c->tcaches = NULL;
	pthread_mutex_unlock(&lpc_threads_lock);
	if (lpc_self.cur_id == c->id) {
		lpc_self.cur = NULL;
		lpc_self.cur_id = 0;
	}
}

void lpc_cache_sum_counters(struct lpc_cache *c, uint64_t out[LPC_NR_COUNTERS],
			    uint64_t *tfree)
{
	struct lpc_tcache *t;

	*tfree = 0;
	pthread_mutex_lock(&lpc_threads_lock);
	for (int i = 0; i < LPC_NR_COUNTERS; i++)
		out[i] = c->retired[i];
	for (t = c->tcaches; t; t = t->cache_next) {
		for (int i = 0; i < LPC_NR_COUNTERS; i++)
			out[i] += atomic_load_explicit(&t->cnt[i], memory_order_relaxed);
		*tfree += atomic_load_explicit(&t->nfree, memory_order_relaxed);
	}
	pthread_mutex_unlock(&lpc_threads_lock);
}

#ifdef LPC_TEST_HOOKS
lpc_hook_fn *_Atomic lpc_test_hook;
#endif
