/* SPDX-License-Identifier: MIT */
/*
 * thread.h - per-thread state: lazy RCU registration, and one block per
 * (thread, owner) holding the thread's counters and a private list that the
 * owner's layer gives a meaning to (page/alloc.c: free frames).
 *
 * core/ knows nothing of files, caches or pages (the LPC_DEBUG build's
 * rule report asks page/'s describer for the page it names: debug.h), and
 * includes no part above it.  An owner (struct
 * lpc_towner, embedded in the frame pool, page/pool.h) is an id that is never
 * reused, the list of its blocks, the counts of its dead threads, and a
 * callback that runs for each of its blocks when their thread exits.  The
 * layers above walk an owner's blocks with lpc_towner_for_each, under the
 * registry lock: that is how page/alloc.c drains a dead thread's frames and
 * steals live threads' lists (S1-S3, T1-T4 there) without core calling up.
 *
 * Lock: lpc_threads_lock (thread.c) guards the registry: every owner's block
 * list, the blocks' links, `owner` and `retired`.  Callbacks and for_each
 * functions run under it and may take only leaf locks (free_lock).
 */
#ifndef LPC_CORE_THREAD_H
#define LPC_CORE_THREAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/compiler.h"

/* Per-thread counters; summed by lpc_stats. */
enum lpc_counter {
	LPC_C_LOOKUPS,
	LPC_C_HITS,
	LPC_C_MISSES,
	LPC_C_RETRIES,
	LPC_C_READS,
	LPC_C_READ_BYTES,
	LPC_C_READ_ERRORS,
	LPC_C_DIRECT_FALLBACKS,
	LPC_C_READ_AROUND,
	LPC_C_ALLOC_FAILURES,
	LPC_C_INVALIDATED,
	/* Eviction (reclaim/): counted by the thread that evicts. */
	LPC_C_EVICTIONS,
	LPC_C_RECLAIM_SCANS,
	LPC_C_SKIPPED_HELD,
	LPC_C_SKIPPED_LOCKED,
	LPC_C_SKIPPED_DIRTY,
	LPC_C_SKIPPED_REFERENCED,
	LPC_C_SKIPPED_BUSY,
	LPC_C_DIRECT_RECLAIMS,
	LPC_C_RECLAIMER_WAKEUPS,
	/* pins (lpc_pin) */
	LPC_C_PIN_FAST,
	LPC_C_PIN_SLOW,
	LPC_C_PAGES_PINNED,
	/* writes (lpc_pwrite, writeback, fsync) */
	LPC_C_WRITES,
	LPC_C_WRITE_BYTES,
	LPC_C_WB_PAGES,
	LPC_C_WB_WRITES,
	LPC_C_WRITE_ERRORS,
	LPC_C_THROTTLED,
	LPC_C_FSYNCS,
	LPC_C_URING_FALLBACKS,
	LPC_C_URING_UNREGISTERED, /* io/uring.c: rings without registered frames */
	/* optimistic reads */
	LPC_C_OPT_HITS,      /* also counted in lpc_stats' hits and lookups */
	LPC_C_OPT_FALLBACKS, /* the referenced try after counts as usual */
	/* where a miss's time goes (filemap/miss.c; ns, CLOCK_MONOTONIC) */
	LPC_C_MISS_NS_ALLOC,  /* M1: lpc_page_alloc_frame, direct reclaim included */
	LPC_C_MISS_NS_INSERT, /* M3: lpc_filemap_insert (the index lock) */
	LPC_C_MISS_NS_READ,   /* M4: the backend read */
	LPC_C_MISS_NS_EVICT,  /* page/alloc.c: direct reclaim's pool->evict calls */
	/* read I/Os of misses (filemap/miss.c, run.c; LPC_C_READS counts them) */
	LPC_C_READ_PAGES, /* pages those reads covered */
	/* readahead (filemap/readahead.c) */
	LPC_C_RA_WINDOWS, /* windows read (sync and async) */
	LPC_C_RA_ASYNC,   /* ... of which started by a hit on the marker */
	LPC_C_RA_PAGES,   /* pages read ahead (beyond what the call asked for) */
	LPC_C_RA_USED,    /* read-ahead pages later used (their first hit) */
	LPC_C_RA_WASTED,  /* read-ahead pages evicted unused */
	LPC_C_RA_DROPPED, /* used-once pages dropped behind a stream (readahead.c A5) */
	LPC_C_RA_REFILLS, /* A4's wake-ups of the reclaimer (not in lpc_stats: tests) */
	/* write pins (writeback/wpin.c) */
	LPC_C_WPIN_FAST,   /* lpc_pin(LPC_PIN_WRITE) calls served by the fast path */
	LPC_C_WPIN_SLOW,   /* ... that took the slow path */
	LPC_C_WPIN_DIRTIED, /* pages lpc_unpin(LPC_PIN_WRITE) marked dirty */
	/* lpc_page_get_batch and read streams (filemap/stream.c) */
	LPC_C_BATCHES,      /* lpc_page_get_batch calls with entries */
	LPC_C_BATCH_RUNS,   /* GB2-GB3 windows that inserted pages to read */
	LPC_C_BATCH_PAGES,  /* ... the pages they inserted */
	LPC_C_STREAM_RUNS,  /* ST2 runs handed out that inserted pages */
	LPC_C_STREAM_PAGES, /* ... the pages they inserted */
	/* waits for a grace period on the owner's behalf (lpc_count_gp) */
	LPC_C_GRACE_PERIODS,   /* lpc_rcu_synchronize and lpc_rcu_barrier calls */
	LPC_C_GRACE_PERIOD_NS, /* ... their time (ns, CLOCK_MONOTONIC, every one) */
	LPC_NR_COUNTERS,
};

struct lpc_tcache;

/*
 * An owner of per-thread blocks.  `id` is read-mostly (every block lookup
 * compares it); the rest is under lpc_threads_lock.
 */
struct lpc_towner {
	uint64_t id; /* unique, never reused: block lookups compare it */
	struct lpc_tcache *blocks;
	uint64_t retired[LPC_NR_COUNTERS]; /* counters of exited threads */
	/* Runs at thread exit for each of the thread's blocks of this owner,
	 * before its counters are folded in and it is unlinked.  Context:
	 * lpc_threads_lock. */
	void (*thread_exit)(struct lpc_tcache *t);
};

/*
 * One thread's state for one owner.  Written only by its thread (counters
 * with relaxed load+store, so a concurrent lpc_towner_sum reads whole
 * values), read by lpc_towner_sum.  Linked into the owner's list and the
 * thread's list under lpc_threads_lock.  `owner` becomes NULL when the owner
 * is destroyed first (lpc_towner_orphan); the thread frees the block at exit
 * or on its next slow path.
 */
struct lpc_tcache {
	_Atomic uint64_t cnt[LPC_NR_COUNTERS];
	uint64_t owner_id;
	struct lpc_towner *owner;
	/* The owner layer's private list, opaque here: page/alloc.c keeps
	 * free frames on it with plain stores (no atomics), `nfree` counts
	 * them, `steal` says a taker is on it (S1-S3, T1-T4 there). */
	void *free;
	_Atomic unsigned nfree;
	_Atomic bool steal;
	/* Frames this thread removed from an index and keeps for itself
	 * once a grace period has passed (page/alloc.c OD1-OD5), opaque
	 * here too: the same S1-S3 rules as `free`; `ndfree` counts them. */
	void *dfree, *dfree_tail;
	_Atomic unsigned ndfree;
	/* The newest chain's grace-period stamp (core/rcu.h lpc_rcu_gp_stamp):
	 * every frame on dfree is covered once it has passed (OD2, OD5);
	 * written with dfree, under the same rules. */
	uint64_t dfree_gp;
	/* How many frames at dfree's front are covered already (page/alloc.c
	 * OD2, OD7): a grace period passed after their chains' stamps, before
	 * newer chains joined behind them.  The owner's alone (inside S1-S3):
	 * plain; meaningful only while dfree is not empty (OD2 resets it on
	 * an empty list, which a taker may have emptied). */
	unsigned dcov;
	/* Frames this thread borrowed from the shared list instead of
	 * waiting (page/alloc.c OD8) since a taker or its exit last moved
	 * its deferred list; OD8 stops at its cap.  Written by the owner
	 * inside S1-S3 and reset by a taker between T2 and T4 (OD6): the
	 * same hand-off as dfree, so plain. */
	unsigned dborrow;
	struct lpc_tcache *owner_next, *owner_prev;
	struct lpc_tcache *thread_next;
	/* The I/O layer's per-thread state for this owner, opaque here
	 * (io/uring.c: the thread's ring).  Only its thread uses it;
	 * io_ring_free runs once, under lpc_threads_lock, when the thread
	 * exits or the owner is orphaned (whichever comes first). */
	void *io_ring;
	void (*io_ring_free)(void *ring);
} lpc_cacheline_aligned;

struct lpc_thread {
	uint64_t cur_id;         /* id of the owner cur belongs to; 0: none */
	struct lpc_tcache *cur;
	struct lpc_tcache *blocks;
	bool registered;         /* with RCU, until the thread exits (lpc's key) */
	bool urcu_own;           /* ... and lpc made that registration (below) */
	bool scoped;             /* with RCU for one call (lpc_rcu_scope_enter) */
	/* The page inside which this thread's last lpc_pread ended (not at
	 * its end), or NULL: a read that starts there continues it and does
	 * not mark the page again (filemap/read.c, "Continuation").  Compared,
	 * never followed. */
	const void *cont_file;
	uint64_t cont_index;
	/* The file and byte where this thread's last lpc_pread ended, and the
	 * bytes its calls read in a row up to there: a call that goes on from
	 * there is a bulk read (filemap/read.c, "Bulk reads").  Compared,
	 * never followed. */
	const void *seq_file;
	uint64_t seq_end;
	uint64_t seq_bytes;
	/* lpc_thread_scratch's buffer (freed at thread exit) and its size. */
	void *scratch;
	size_t scratch_len;
};

extern __thread struct lpc_thread lpc_self;

/* Gives o a new id and no blocks; thread_exit may be NULL.  Context: any. */
void lpc_towner_init(struct lpc_towner *o, void (*thread_exit)(struct lpc_tcache *t));

/* Registers this thread with RCU until it exits.  Return: 0; -ENOMEM if
 * lpc has no pthread key (the process ran out) or cannot set it. */
int lpc_thread_register(void);

/* This thread's scratch buffer of at least len bytes, aligned to len (a
 * power of two), kept until the thread exits (a registered thread's: its
 * exit frees it); NULL when it cannot be had.  Only this thread writes it
 * (filemap/run.c: a readahead run's holes).  Context: a registered
 * thread. */
void *lpc_thread_scratch(size_t len);

/* Counts an event of a thread that has no block (straight into the
 * retired sums).  Context: not lpc_threads_lock. */
void lpc_count_noblock(struct lpc_towner *o, enum lpc_counter i);

/* Returns this thread's block for o, registering the thread (with RCU and
 * for thread exit) on first use.
 * Return: NULL only if the thread cannot be registered or the block cannot be
 * allocated. */
struct lpc_tcache *lpc_tcache_slow(struct lpc_towner *o);

static inline struct lpc_tcache *lpc_tcache(struct lpc_towner *o)
{
	if (likely(lpc_self.cur_id == o->id))
		return lpc_self.cur;
	return lpc_tcache_slow(o);
}

static inline void lpc_count_add(struct lpc_tcache *t, enum lpc_counter i, uint64_t n)
{
	/* Only this thread writes: a relaxed load and store, no RMW. */
	atomic_store_explicit(&t->cnt[i],
			      atomic_load_explicit(&t->cnt[i], memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static inline void lpc_count(struct lpc_tcache *t, enum lpc_counter i)
{
	lpc_count_add(t, i, 1);
}

/* This thread's block for o if it is the one lpc_tcache last returned, else
 * NULL; never registers, allocates or locks.  For a caller that only counts
 * (lpc_count_gp: a NULL block counts into the owner's retired sums). */
static inline struct lpc_tcache *lpc_tcache_peek(const struct lpc_towner *o)
{
	return lpc_self.cur_id == o->id ? lpc_self.cur : NULL;
}

/* Nanoseconds of CLOCK_MONOTONIC (the vDSO's clock_gettime): every timer
 * of lpc's counters and deadlines (the miss split, grace periods, the
 * flusher's ages). */
static inline uint64_t lpc_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Counts one wait for a grace period that this thread took on o's behalf
 * (lpc_stats grace_periods, grace_period_ns): a lpc_rcu_synchronize or a
 * lpc_rcu_barrier that began at t0 (lpc_clock_ns, read just before the
 * wait) and has just returned.  Every wait is timed, not one in
 * LPC_MISS_SAMPLE as a miss is (filemap/filemap.h): a wait costs
 * microseconds (a membarrier IPI to every CPU running the process), two
 * clock reads tens of nanoseconds.  t: the thread's block for o, or NULL
 * (counted into o's retired sums under lpc_threads_lock: a thread with no
 * block, or one whose current block is another owner's).  Context: not
 * lpc_threads_lock.
 */
void lpc_count_gp(struct lpc_towner *o, struct lpc_tcache *t, uint64_t t0);

/*
 * Starts one of lpc's background threads running fn(arg), named name (at
 * most 15 characters), with every signal blocked and liburcu's call_rcu
 * worker made first (core/spawn.c says why).  Return: 0 with *thread, or a
 * negative errno (pthread_create's, or lpc_rcu_worker_ensure's): the
 * caller goes on without the thread as after a failed pthread_create.
 * Context: outside any read section; may be under the caller's own lock.
 */
int lpc_thread_spawn(pthread_t *thread, void *(*fn)(void *), void *arg, const char *name);

/* Calls fn(t, arg) for every live block of o, under lpc_threads_lock (fn may
 * take leaf locks only).  Blocks made during the walk are not visited. */
void lpc_towner_for_each(struct lpc_towner *o, void (*fn)(struct lpc_tcache *t, void *arg),
			 void *arg);

/* Detaches every block from o (owner destroyed): their private lists are
 * dropped unread, their I/O state freed (io_ring_free), their threads free
 * them later.  Context: no block of o in
 * use by another thread's library call. */
void lpc_towner_orphan(struct lpc_towner *o);

/* Sums o's counters, live and retired, and the blocks' nfree into *tfree. */
void lpc_towner_sum(struct lpc_towner *o, uint64_t out[LPC_NR_COUNTERS], uint64_t *tfree);

#endif /* LPC_CORE_THREAD_H */
