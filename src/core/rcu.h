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

/* First statement of every call_rcu callback. */
static inline void lpc_rcu_callback_enter(struct rcu_head *head)
{
#ifdef LPC_TSAN
	lpc_tsan_acquire(&lpc_rcu_tsan_token);
#endif
	lpc_tsan_acquire(head);
}

/* Waits for a grace period.  Context: a registered thread, outside any read
 * section, holding no frozen page in a slot (readers spin on one: the rule in
 * cache/cache.h). */
static inline void lpc_rcu_synchronize(void)
{
#if LPC_DEBUG
	uint64_t gp, done;

	lpc_debug_check(lpc_debug_frozen == 0, "GP-WHILE-FROZEN", NULL,
			"synchronize_rcu while this thread holds %d frozen page(s) in a slot",
			lpc_debug_frozen);
	/* seq_cst, as the stamp's load (alloc.c OD2): a stamp that reads a
	 * number below gp was loaded before this wait began. */
	gp = atomic_fetch_add(&lpc_debug_gp_begun, 1) + 1;
#endif
	urcu_memb_synchronize_rcu();
#if LPC_DEBUG
	done = atomic_load(&lpc_debug_gp_done);
	while (done < gp && !atomic_compare_exchange_weak(&lpc_debug_gp_done, &done, gp))
		;
#endif
#ifdef LPC_TSAN
	lpc_tsan_acquire(&lpc_rcu_tsan_token);
#endif
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
