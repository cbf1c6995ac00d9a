/* SPDX-License-Identifier: MIT */
/*
 * rcu.h - lpc's use of liburcu (the urcu-memb flavour), in one place.
 *
 * Why wrappers: ThreadSanitizer cannot see the ordering RCU provides.  A grace
 * period orders every read section that began before it ahead of the
 * callbacks that follow it, through membarrier(2) and plain per-thread
 * counters inside liburcu, and call_rcu hands its callback to a worker thread
 * through liburcu's own wait-free queue; liburcu is not built with TSan.  In
 * the TSan build (LPC_TSAN), these wrappers tell TSan what RCU guarantees:
 *  - every read-section exit releases a global token; every callback, and
 *    every return from a barrier, acquires it: the callback happens after all
 *    the read sections that ended before it (an over-approximation of "that
 *    began before the grace period", so TSan may miss a race, never invent
 *    one);
 *  - call_rcu releases the callback's head, and the callback acquires it: the
 *    caller's writes before call_rcu happen before the callback.
 * In other builds they compile to the liburcu calls alone (the read side
 * inlined through _LGPL_SOURCE).
 */
#ifndef LPC_CORE_RCU_H
#define LPC_CORE_RCU_H

#include <stdbool.h>
#include <urcu/urcu-memb.h>

#include "core/debug.h"

#ifdef LPC_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
extern char lpc_rcu_tsan_token;
#define lpc_tsan_acquire(a) __tsan_acquire(a)
#define lpc_tsan_release(a) __tsan_release(a)
#else
#define lpc_tsan_acquire(a) ((void)(a))
#define lpc_tsan_release(a) ((void)(a))
#endif

/*
 * The two designed races on frame data, hidden from TSan by these brackets
 * rather than by suppressions (tests/tsan.supp names liburcu only): an
 * optimistic copy that a seqlock validates afterwards (filemap/optimistic.h;
 * TSan cannot see fences), and a writeback's pwritev of a frame that a
 * writer may change meanwhile (writeback/writeback.c K4: that writer set
 * DIRTY again, so the page is written again).  Nothing else goes between
 * them.
 */
#ifdef LPC_TSAN
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
#define lpc_tsan_ignore_begin() __tsan_ignore_thread_begin()
#define lpc_tsan_ignore_end() __tsan_ignore_thread_end()
#else
#define lpc_tsan_ignore_begin() ((void)0)
#define lpc_tsan_ignore_end() ((void)0)
#endif

static inline void lpc_rcu_read_lock(void)
{
	urcu_memb_read_lock();
}

static inline void lpc_rcu_read_unlock(void)
{
#ifdef LPC_TSAN
	lpc_tsan_release(&lpc_rcu_tsan_token);
#endif
	urcu_memb_read_unlock();
}

/* Queues fn(head) to run after a grace period.  Context: a registered
 * thread; legal inside a read section. */
static inline void lpc_call_rcu(struct rcu_head *head, void (*fn)(struct rcu_head *))
{
	lpc_tsan_release(head);
	urcu_memb_call_rcu(head, fn);
}

/*
 * Scoped registration (thread.c): makes a thread that is not registered an
 * RCU reader for the duration of one call, so it may call_rcu, rcu_barrier
 * and read-lock.  Cannot fail.  Return of enter: whether exit must undo it;
 * pass it to exit.  Context: outside any read section; not nested in a way
 * that unregisters inside a read section (enter/exit pair in one function).
 */
bool lpc_rcu_scope_enter(void);
void lpc_rcu_scope_exit(bool entered);

/*
 * Makes sure liburcu's default call_rcu worker exists, made by the calling
 * thread, before that thread starts one of lpc's background threads (the
 * reclaimer, the flusher, a readahead worker: each starts through
 * core/spawn.c lpc_thread_spawn, which calls this first, with every signal
 * blocked).  liburcu makes that worker at the process's
 * first call_rcu, from the calling thread, and a new Linux thread inherits
 * its creator's name, signal mask, CPU affinity and scheduling policy: when
 * the first call_rcu came from an lpc background thread (the reclaimer
 * freeing a radix leaf, the flusher), the worker was named "lpc-reclaim"
 * or "lpc-flusher" for the process's life (test_write_flusher counted two
 * flushers; profiles charged its callbacks to the reclaimer).  Now: before
 * lpc's first background thread exists, the first call_rcu comes from an
 * application thread; the first background thread is started by an
 * application thread, which makes the worker first; a later start finds it.
 * So the worker is always made by an application thread, with its name, or
 * was the application's own (an application that made only per-CPU
 * call_rcu workers gets the default one too, which lpc's call_rcu then
 * does not use: its threads have the per-CPU ones).  No thread is made
 * before lpc needs one (a single-threaded program stays so while lpc starts
 * none: lpc_sqlite(7)).
 * liburcu 0.13 aborts the process when it cannot make the worker (it has
 * no error path); a probe thread made, joined and waited for until the
 * kernel has reaped it turns the usual cause (no thread can be made now:
 * RLIMIT_NPROC reached, no memory for a stack) into this call's error,
 * which the caller treats as its own pthread_create's failure.  It narrows
 * the abort, it cannot close it: a limit reached by another thread between
 * the probe and liburcu's pthread_create still aborts, as does the first
 * call_rcu of an application thread in a process that can make no thread
 * (both as before).  Once it succeeded (worker_made) it costs one load.
 * Return: 0, or a negative errno (pthread_create's).  Context: any thread,
 * outside any read section, with every signal blocked by the caller or not;
 * may make two threads (once per process); takes liburcu's call_rcu lock
 * under the starter's own lock (liburcu never takes lpc's).
 */
int lpc_rcu_worker_ensure(void);

/* First statement of every call_rcu callback. */
static inline void lpc_rcu_callback_enter(struct rcu_head *head)
{
#ifdef LPC_TSAN
	lpc_tsan_acquire(&lpc_rcu_tsan_token);
#endif
	lpc_tsan_acquire(head);
}

/*
 * Grace periods begun and completed, counted by lpc_rcu_synchronize (always,
 * not only under LPC_DEBUG): GC1 the number it takes before its wait
 * (lpc_rcu_gp_begun, seq_cst RMW), GC2 its wait, GC3 the highest number
 * whose wait has returned (lpc_rcu_gp_done, a CAS to the max: two waits may
 * return out of order).  Waits through call_rcu or rcu_barrier are not
 * counted.  A remover stamps what it removed (lpc_rcu_gp_stamp: a seq_cst
 * fence after the removal, then a load of begun); once lpc_rcu_gp_passed
 * (done > stamp) a grace period that took its number after the stamp was
 * loaded, so after the removal, has completed: every reader that could see
 * the removed object has ended, as if the remover had waited itself.  (The
 * stamp's load reads a number below gp, so it precedes GC1's RMW in the
 * seq_cst order; the remover's fence, before the load, precedes GC1 too, and
 * the removal before it.)  page/alloc.c OD2-OD5 lands a thread's deferred
 * frames on it: a wait another thread (or the reclaimer) paid covers them.
 * Each counter on its own line: written once per wait, read once per chain.
 * Model: tests/model/gp_count.pml checks GC1-GC3, the stamp and passed with
 * waits that overlap and complete out of order (a GC3 that counts a wait not
 * yet ended, GC1 after the wait, passed off by one, the stamp before the
 * removal: each caught); tests/model/own_defer.pml checks OD1-OD8 on them.
 */
extern _Atomic uint64_t lpc_rcu_gp_begun;
extern _Atomic uint64_t lpc_rcu_gp_done;

/* Waits for a grace period.  Context: a registered thread, outside any read
 * section, holding no frozen page in a slot (readers spin on one: the rule in
 * cache/cache.h). */
static inline void lpc_rcu_synchronize(void)
{
	uint64_t gp, done;

#if LPC_DEBUG
	lpc_debug_check(lpc_debug_frozen == 0, "GP-WHILE-FROZEN", NULL,
			"synchronize_rcu while this thread holds %d frozen page(s) in a slot",
			lpc_debug_frozen);
#endif
	/* GC1, seq_cst, as the stamp's fence (lpc_rcu_gp_stamp): a stamp that
	 * reads a number below gp was loaded before this wait began. */
	gp = atomic_fetch_add(&lpc_rcu_gp_begun, 1) + 1;
	urcu_memb_synchronize_rcu();					/* GC2 */
	/* GC3: release (seq_cst CAS): a lpc_rcu_gp_passed that reads it
	 * acquires the wait's end. */
	done = atomic_load_explicit(&lpc_rcu_gp_done, memory_order_relaxed);
	while (done < gp && !atomic_compare_exchange_weak(&lpc_rcu_gp_done, &done, gp))
		;
#ifdef LPC_TSAN
	lpc_tsan_acquire(&lpc_rcu_tsan_token);
#endif
}

/* The stamp of what this thread removed from an index before the call: a
 * later lpc_rcu_gp_passed(stamp) says a grace period that began after the
 * removal has completed.  Context: any thread, after the removal (a store
 * or RMW on the slot), inside or outside a read section. */
static inline uint64_t lpc_rcu_gp_stamp(void)
{
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load(&lpc_rcu_gp_begun);
}

/* Whether a grace period that began after `stamp` was taken has completed
 * (GC3's number above it).  On true the caller may reuse what it removed
 * before the stamp, as after its own lpc_rcu_synchronize.  Context: any
 * registered thread. */
static inline bool lpc_rcu_gp_passed(uint64_t stamp)
{
	if (atomic_load_explicit(&lpc_rcu_gp_done, memory_order_acquire) <= stamp)
		return false;
#ifdef LPC_TSAN
	/* The wait that passed it acquired every reader's unlock before it
	 * ended; tsan sees no edge through the counter, so take the token
	 * as that wait did. */
	lpc_tsan_acquire(&lpc_rcu_tsan_token);
#endif
	return true;
}

/* Waits for every callback queued so far.  Context: a registered thread,
 * outside any read section. */
static inline void lpc_rcu_barrier(void)
{
#if LPC_DEBUG
	lpc_debug_check(lpc_debug_frozen == 0, "GP-WHILE-FROZEN", NULL,
			"rcu_barrier while this thread holds %d frozen page(s) in a slot",
			lpc_debug_frozen);
#endif
	urcu_memb_barrier();
#ifdef LPC_TSAN
	lpc_tsan_acquire(&lpc_rcu_tsan_token);
#endif
}

#endif /* LPC_CORE_RCU_H */
