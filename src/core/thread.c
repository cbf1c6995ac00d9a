/* SPDX-License-Identifier: MIT */
/*
 * thread.c - per-thread state: lazy RCU registration, and one block per
 * (thread, owner) holding the thread's counters and the owner layer's private
 * list (core/thread.h).
 *
 * Why blocks per thread: a hit must write no shared cache line but the page's
 * reference count, so counters live in memory only their thread writes, and
 * lpc_stats sums them.  The fast path (lpc_tcache in thread.h) is one TLS load
 * and one compare with the owner's id; ids are never reused, so a block of a
 * destroyed owner can never be mistaken for one of a new owner at the same
 * address.
 *
 * Lifetimes: a block is linked into its owner's list and its thread's list
 * under lpc_threads_lock.  At thread exit (a pthread key destructor) the
 * thread runs each owner's thread_exit callback on its block (page/alloc.c
 * returns the free frames), folds its counters into the owner's `retired`
 * sums, unlinks and frees its blocks, then unregisters from RCU.  When an
 * owner is destroyed first, its blocks are orphaned (owner = NULL) under the
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
 *
 * Sharing liburcu.  urcu-memb's reader registry is one per process, and it
 * asserts on a thread registered twice.  The application may register its
 * threads itself (it uses liburcu too), and a process may hold two copies
 * of lpc (liblpc.so, and the one liblpc_sqlite.so carries for dlopen): so
 * lpc registers a thread only when liburcu does not count it as a reader
 * already (urcu_registered), remembers whether the registration is its own
 * (urcu_own), and unregisters only its own.  If the registration's owner
 * drops it first (its key destructor ran before lpc's, or the application
 * unregistered), lpc's exit work registers the thread for its duration.
 * The rule for applications (lpc(7)): a thread you registered yourself
 * stays registered while it calls lpc.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/rcu.h"
#include "core/thread.h"

__thread struct lpc_thread lpc_self;
#ifdef LPC_TSAN
char lpc_rcu_tsan_token; /* see core/rcu.h */
#endif
/* GC1-GC3 (core/rcu.h), each on its own line. */
_Alignas(64) _Atomic uint64_t lpc_rcu_gp_begun;
_Alignas(64) _Atomic uint64_t lpc_rcu_gp_done;

static pthread_mutex_t lpc_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lpc_thread_key_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t lpc_thread_key;
static _Atomic bool lpc_thread_key_made; /* lpc_thread_key is lpc's own */
static _Atomic uint64_t lpc_next_owner_id = 1;

void lpc_towner_init(struct lpc_towner *o, void (*thread_exit)(struct lpc_tcache *t))
{
	memset(o, 0, sizeof(*o));
	o->id = atomic_fetch_add_explicit(&lpc_next_owner_id, 1, memory_order_relaxed);
	o->thread_exit = thread_exit;
}

/* Frees t's I/O state (io/uring.c's ring), once.  Context: lpc_threads_lock. */
static void tcache_io_free(struct lpc_tcache *t)
{
	if (t->io_ring_free)
		t->io_ring_free(t->io_ring);
	t->io_ring = NULL;
	t->io_ring_free = NULL;
}

/* Unlinks t from its owner, after the owner's thread_exit, folding its
 * counters in.  Context: lpc_threads_lock. */
static void tcache_retire(struct lpc_tcache *t)
{
	struct lpc_towner *o = t->owner;

	if (!o)
		return;
	if (o->thread_exit)
		o->thread_exit(t);
	tcache_io_free(t);
	for (int i = 0; i < LPC_NR_COUNTERS; i++)
		o->retired[i] += atomic_load_explicit(&t->cnt[i], memory_order_relaxed);
	if (t->owner_prev)
		t->owner_prev->owner_next = t->owner_next;
	else
		o->blocks = t->owner_next;
	if (t->owner_next)
		t->owner_next->owner_prev = t->owner_prev;
	t->owner = NULL;
}

/* Whether liburcu counts this thread as a reader now (whoever registered
 * it).  The field is liburcu's own (urcu/static/urcu-common.h). */
static bool urcu_registered(void)
{
	return URCU_TLS(urcu_memb_reader).registered;
}

static void lpc_thread_exit(void *arg)
{
	struct lpc_thread *self = arg;
	struct lpc_tcache *t, *next;
	bool scope = false;

	/* The owners' exit callbacks may free through RCU: a registration
	 * that another owner dropped already is made again for them. */
	if (!urcu_registered()) {
		urcu_memb_register_thread();
		scope = true;
	}
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
	free(self->scratch);
	self->scratch = NULL;
	self->scratch_len = 0;
	if (scope || (self->registered && self->urcu_own))
		urcu_memb_unregister_thread();
	self->registered = false;
	self->urcu_own = false;
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

void *lpc_thread_scratch(size_t len)
{
	struct lpc_thread *self = &lpc_self;
	void *p;

	if (likely(self->scratch_len >= len))
		return self->scratch;
	if (!self->registered)
		return NULL; /* no exit to free it */
	p = aligned_alloc(len, len);
	if (!p)
		return NULL;
	free(self->scratch);
	self->scratch = p;
	self->scratch_len = len;
	return p;
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
		self->urcu_own = true;
	} else if (!urcu_registered()) {
		urcu_memb_register_thread();
		self->urcu_own = true;
	} else {
		self->urcu_own = false; /* the application's, or another lpc's */
	}
	self->registered = true;
	return 0;
}

/* liburcu's call_rcu worker, made by an application thread: core/rcu.h says
 * why and when. */
static _Atomic bool worker_made; /* lpc_rcu_worker_ensure succeeded once */

/* The probe records its kernel tid, for the wait after its join. */
static void *worker_probe(void *arg)
{
	atomic_store_explicit((_Atomic pid_t *)arg, (pid_t)syscall(SYS_gettid),
			      memory_order_relaxed);
	return NULL;
}

int lpc_rcu_worker_ensure(void)
{
	_Atomic pid_t tid = 0;
	sigset_t all, old;
	pthread_t probe;
	int rc;

	if (atomic_load_explicit(&worker_made, memory_order_acquire))
		return 0;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&probe, NULL, worker_probe, (void *)&tid);
	if (rc == 0) {
		pthread_join(probe, NULL);
		/* pthread_join returns before the kernel has reaped the probe,
		 * which still counts against RLIMIT_NPROC until then: a process
		 * one thread below its limit had liburcu's thread refused in
		 * that gap (revrw2's rw_nproc, about 1 round in 500).  Wait
		 * until its tid is gone (bounded: a tid can be reused). */
		for (int i = 0; i < 100000 && tid > 0 &&
				syscall(SYS_tgkill, getpid(), (pid_t)tid, 0) == 0;
		     i++)
			sched_yield();
		(void)urcu_memb_get_default_call_rcu_data(); /* makes it if absent */
		atomic_store_explicit(&worker_made, true, memory_order_release);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
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
	if (urcu_registered())
		return false; /* a reader already (not lpc's registration) */
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

void lpc_count_noblock(struct lpc_towner *o, enum lpc_counter i)
{
	pthread_mutex_lock(&lpc_threads_lock);
	o->retired[i]++;
	pthread_mutex_unlock(&lpc_threads_lock);
}

void lpc_count_gp(struct lpc_towner *o, struct lpc_tcache *t, uint64_t t0)
{
	uint64_t ns = lpc_clock_ns() - t0;

	if (t) {
		lpc_count(t, LPC_C_GRACE_PERIODS);
		lpc_count_add(t, LPC_C_GRACE_PERIOD_NS, ns);
		return;
	}
	pthread_mutex_lock(&lpc_threads_lock);
	o->retired[LPC_C_GRACE_PERIODS]++;
	o->retired[LPC_C_GRACE_PERIOD_NS] += ns;
	pthread_mutex_unlock(&lpc_threads_lock);
}

struct lpc_tcache *lpc_tcache_slow(struct lpc_towner *o)
{
	struct lpc_thread *self = &lpc_self;
	struct lpc_tcache *t, **pp;

	if (lpc_thread_register() < 0)
		return NULL;

	pthread_mutex_lock(&lpc_threads_lock);
	/* Find this owner's block; free blocks of destroyed owners on the way. */
	for (pp = &self->blocks; (t = *pp) != NULL;) {
		if (!t->owner) {
			*pp = t->thread_next;
			free(t);
			continue;
		}
		if (t->owner_id == o->id)
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
		t->owner = o;
		t->owner_id = o->id;
		t->owner_next = o->blocks;
		if (o->blocks)
			o->blocks->owner_prev = t;
		o->blocks = t;
		t->thread_next = self->blocks;
		self->blocks = t;
	}
	pthread_mutex_unlock(&lpc_threads_lock);
	self->cur = t;
	self->cur_id = o->id;
	return t;
}

void lpc_towner_for_each(struct lpc_towner *o, void (*fn)(struct lpc_tcache *t, void *arg),
			 void *arg)
{
	struct lpc_tcache *t;

	pthread_mutex_lock(&lpc_threads_lock);
	for (t = o->blocks; t; t = t->owner_next)
		fn(t, arg);
	pthread_mutex_unlock(&lpc_threads_lock);
}

void lpc_towner_orphan(struct lpc_towner *o)
{
	struct lpc_tcache *t, *next;

	pthread_mutex_lock(&lpc_threads_lock);
	for (t = o->blocks; t; t = next) {
		next = t->owner_next;
		/* Its private lists die with the owner; its thread frees the block. */
		t->free = NULL;
		t->dfree = t->dfree_tail = NULL;
		tcache_io_free(t);
		t->owner = NULL;
	}
	o->blocks = NULL;
	pthread_mutex_unlock(&lpc_threads_lock);
	if (lpc_self.cur_id == o->id) {
		lpc_self.cur = NULL;
		lpc_self.cur_id = 0;
	}
}

void lpc_towner_sum(struct lpc_towner *o, uint64_t out[LPC_NR_COUNTERS], uint64_t *tfree)
{
	struct lpc_tcache *t;

	*tfree = 0;
	pthread_mutex_lock(&lpc_threads_lock);
	for (int i = 0; i < LPC_NR_COUNTERS; i++)
		out[i] = o->retired[i];
	for (t = o->blocks; t; t = t->owner_next) {
		for (int i = 0; i < LPC_NR_COUNTERS; i++)
			out[i] += atomic_load_explicit(&t->cnt[i], memory_order_relaxed);
		*tfree += atomic_load_explicit(&t->nfree, memory_order_relaxed) +
			  atomic_load_explicit(&t->ndfree, memory_order_relaxed);
	}
	pthread_mutex_unlock(&lpc_threads_lock);
}
