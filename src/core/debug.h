/* SPDX-License-Identifier: MIT */
/*
 * debug.h - the LPC_DEBUG build: run-time checks of the protocols' rules, and
 * yield points at every numbered protocol step.
 *
 * -DLPC_DEBUG=ON (CMake) defines LPC_DEBUG=1 for the library, the tests and
 * the tools alike (the descriptor's layout depends on it); it is independent
 * of NDEBUG.  Release builds never define it, and everything here then
 * compiles to nothing: no load, no call, no evaluation of a check's operands.
 *
 * lpc_debug_check(cond, "RULE-NAME", page_or_NULL, fmt, ...)
 *   When cond is false: prints to stderr
 *     lpc debug: rule RULE-NAME violated: <msg> (page id N ref R flags 0x..
 *     file F index I) at src/x.c:123
 *   and abort()s.  The part in parentheses is the describer's: core/ knows
 *   no page, so the layer that owns the object registers a function that
 *   describes it (lpc_debug_set_describer: page/page.c, at load); without
 *   one the report gives the object's address.  Rule names are listed (with their tests) in
 *   tests/debug/test_debug_death.c, whose death test for each breaks it
 *   on purpose.
 *
 * lpc_yield_point(LPC_YP_xx)
 *   A named point at a protocol step.  Unarmed (the default) it costs one
 *   relaxed load and a branch.  Armed from the environment, read once when
 *   the library is loaded:
 *     LPC_YIELD       "all", or a comma list of step names (R3,A,M4,...)
 *     LPC_YIELD_PROB  probability that an armed point yields (default 0.05)
 *     LPC_YIELD_SEED  seed of the per-thread generators (default: time)
 *   A yield is sched_yield() or a nanosleep of 1-50 us, chosen at random.
 *   Tests arm points themselves with lpc_yield_arm and may install a hook
 *   that runs instead of the random yield (tests/regress/ use it to stop a
 *   thread at a step until another has done something).  This is lpc's only
 *   test-hook mechanism: a window a test needs to park a thread in gets a
 *   yield point here (the list below), never a hook of its own.
 */
#ifndef LPC_CORE_DEBUG_H
#define LPC_CORE_DEBUG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/compiler.h"

#ifndef LPC_DEBUG
#define LPC_DEBUG 0
#endif

/* Every numbered protocol step (the labels of the comments in the tree). */
#define LPC_YIELD_POINTS(X)                                                   \
	X(R2) X(R3) X(R4)                    /* lookup.c: speculative get */     \
	X(P2) X(P3) X(P4)                    /* pin.c: range pin fast path */    \
	X(WP1) X(WP3) X(WP4) X(WU1)          /* pin.c: write pins */             \
	X(O2) X(O3) X(O4) X(O5)              /* optimistic.h: optimistic read */ \
	X(A) X(B) X(C)                       /* remove.c: remover */             \
	X(C0) X(C1)                          /* alloc.c: around C, see below */  \
	X(M1) X(M2) X(M3) X(M4) X(M4D) X(M5) X(M5R) X(M6) /* miss.c, run.c */      \
	X(S1) X(S2) X(S3)                    /* alloc.c: private-list owner */   \
	X(OD5)                               /* alloc.c: own deferred frames */  \
	X(T1) X(T2) X(T3) X(T4)              /* alloc.c/thread.c: taker */       \
	X(L1) X(L2) X(L3) X(L4) X(L5)        /* lock.c: lock */                  \
	X(U1) X(U2)                          /* lock.c: unlock */                \
	X(W1) X(W2) X(W3)                    /* lock.c: wait for unlock */       \
	X(N1) X(N2) X(N3) X(N4)              /* radix.c: delete writer steps */  \
	X(FI2) X(FD2)                        /* radix.c: fast insert, delete */  \
	X(E1) X(E2) X(E3) X(E3P) X(E4) X(E5) X(E6) X(E7) X(E8) /* evict.c */ \
	X(Q1) X(Q2) X(Q3) X(Q4) X(Q5) X(Q6)  /* names/walk.c: rcu-walk */        \
	X(V1) X(V2) X(V3) X(V4)              /* names/ns.c: name writers */      \
	X(D1) X(D2) X(D3)                    /* writeback/write.c: dirtying */   \
	X(K1) X(K2) X(K3) X(K4) X(K4W) X(K5) /* writeback/writeback.c */         \
	X(Y1) X(Y2) X(Y3) X(Y4)              /* writeback/writeback.c: fsync */  \
	X(Z3) X(ZJ)                          /* filemap/file.c: last close */    \
	X(ZL1)                               /* filemap/file.c: open's lookup */ \
	X(SZ1) X(SZ2) X(SZ3) X(SZ4) X(SZ5)   /* writeback/: the file's size */   \
	X(ST2)                               /* filemap/stream.c: run out */     \
	X(A2)                                /* filemap/readahead.c: marker */   \
	X(FILE_FREE)                         /* file.c: struct lpc_file freed */

/*
 * The points that are not a protocol's own numbered step mark a window that
 * a regression story (tests/regress/) parks a thread in:
 *   C0         alloc.c lpc_page_release_last: a put brought ref to 0; the
 *              frame is on no list until C has it on pending (a sub-step of
 *              C on the put path; regress_alloc_transit.c, story 1).
 *   C1         alloc.c pending_submit_unlock: C's pending batch is counted
 *              in batches_in_flight and free_lock dropped, but it is not yet
 *              given to call_rcu (regress_alloc_transit.c, story 2).
 *   M4D        miss.c filemap_read_page, run.c run_finish: the read has
 *              returned, its size check (before M5) not yet made: a
 *              shrinking lpc_truncate and a regrowth between the two
 *              (regress_trunc_regrow.c).
 *   K4W        writeback.c batch_flush: dio_lock held for reading, the
 *              batch's write about to go to the kernel: a write "in
 *              flight" for rule S5 (regress_size_publish.c, story 5).
 *   O4         read.c pread_copy: the middle of an optimistic copy (debug
 *              builds copy in two halves around it), so that yield injection
 *              lets a writer tear the copy that O5 must then refuse
 *              (tests/stress/stress_optimistic.c, mutant opt-no-seq-recheck).
 *   FILE_FREE  file.c file_free_rcu: the grace period after the last close
 *              is over and struct lpc_file is about to be freed (runs in
 *              liburcu's call_rcu thread; regress_file_close.c counts frees).
 */

enum lpc_yield_point {
#define LPC_YP_ENUM(name) LPC_YP_##name,
	LPC_YIELD_POINTS(LPC_YP_ENUM)
#undef LPC_YP_ENUM
	LPC_YP_NR
};

#if LPC_DEBUG

/* Prints the rule, the message and the object (a page: the describer's
 * words), then abort()s. */
void lpc_debug_fail(const char *rule, const void *obj, const char *file, int line,
		    const char *fmt, ...)
	__attribute__((noreturn, cold, format(printf, 5, 6)));

/* Writes a description of obj (at most len bytes, NUL-terminated) for
 * lpc_debug_fail's report. */
typedef void (*lpc_debug_describe_fn)(const void *obj, char *buf, size_t len);
/* Sets the describer of the objects that rules name (one, for pages).
 * Context: any; the last call wins. */
void lpc_debug_set_describer(lpc_debug_describe_fn fn);

#define lpc_debug_check(cond, rule, page, ...)                                \
	do {                                                                  \
		if (unlikely(!(cond)))                                        \
			lpc_debug_fail(rule, page, __FILE__, __LINE__,        \
				       __VA_ARGS__);                          \
	} while (0)

/* Armed yield points: lpc_yield_armed[LPC_YP_xx] is 1 while xx is armed
 * (one byte per point: there are more points than a 64-bit mask holds). */
extern _Atomic unsigned char lpc_yield_armed[LPC_YP_NR];
void lpc_yield_slow(enum lpc_yield_point yp);

#define lpc_yield_point(yp)                                                   \
	do {                                                                  \
		if (unlikely(atomic_load_explicit(&lpc_yield_armed[(yp)],     \
						  memory_order_relaxed)))     \
			lpc_yield_slow(yp);                                   \
	} while (0)

/*
 * Test interface.  lpc_yield_arm: arms exactly the points a comma list names
 * (as LPC_YIELD: "R3,R4,T2", or "all"; NULL or "" disarms every point), with
 * probability prob and generators seeded from seed.  Return: 0; -EINVAL,
 * with nothing changed, if the list names an unknown point.
 * lpc_yield_set_hook: while set, an armed point calls hook(yp) instead of
 * yielding at random (NULL restores the random yield).  lpc_yield_name:
 * "R3" for LPC_YP_R3.
 */
int lpc_yield_arm(const char *list, double prob, uint64_t seed);
void lpc_yield_set_hook(void (*hook)(enum lpc_yield_point yp));
const char *lpc_yield_name(enum lpc_yield_point yp);

/*
 * Frozen pages this thread holds in a slot (A done, B or unfreeze not yet):
 * a grace-period wait with one would wait for readers that spin on it.
 */
extern __thread int lpc_debug_frozen;

/*
 * Page locks this thread holds (lock.c counts them where it records the
 * owner, miss.c for M2's lock).  Rule PAGE-LOCK-HELD: a thread that holds
 * one never takes a file's trunc_lock or size_lock, nor flushes a
 * writeback batch (whose end may take size_lock), because lpc_truncate
 * holds both while it waits for page locks (the lock order in cache.h;
 * the deadlock of regress_k2_size_lock.c).  Checked where those are
 * taken: lpc_pwrite, lpc_truncate, lpc_fsync and the last close (the body
 * they share), batch_flush, lpc_wb_publish_size.
 */
extern __thread int lpc_debug_page_locks;

#define lpc_debug_no_page_lock(what)                                          \
	lpc_debug_check(lpc_debug_page_locks == 0, "PAGE-LOCK-HELD", NULL,    \
			"%s with %d page lock(s) held by this thread (lpc_truncate " \
			"holds trunc_lock and size_lock while it waits for page locks)", \
			(what), lpc_debug_page_locks)

/* dbg_state of a descriptor (page.h): who owns the frame. */
enum lpc_debug_state {
	LPC_DBG_LIVE = 0,   /* allocated: a private page or a cached one */
	LPC_DBG_FROZEN = 1, /* frozen by a remover (A), still in its slot */
	LPC_DBG_FREE = 2,   /* the allocator's: pending a grace period or free */
};

/* This thread's id for the lock-owner check (never 0). */
uint64_t lpc_debug_tid(void);

#else /* !LPC_DEBUG */

/* sizeof: the operands type-check and count as used, and are not evaluated. */
#define lpc_debug_check(cond, rule, page, ...) ((void)sizeof(!(cond)))
#define lpc_yield_point(yp) ((void)0)
#define lpc_debug_no_page_lock(what) ((void)0)
#define lpc_debug_set_describer(fn) ((void)0)

#endif /* LPC_DEBUG */

#endif /* LPC_CORE_DEBUG_H */
