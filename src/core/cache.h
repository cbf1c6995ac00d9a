/* SPDX-License-Identifier: MIT */
/*
 * cache.h - the cache and file objects, and the per-thread state that keeps
 * counters and frame lists off shared cache lines.
 *
 * Lock order (outer to inner):
 *   cache->reclaim_lock (alloc.c: one thread reclaims at a time; held across
 *                        a grace period, so never taken in a read section)
 *   lpc_threads_lock (thread.c: the registry of per-thread blocks)
 *     cache->files_lock (open/close)
 *       file index lock (file->tree_lock, or tree_rwlock in LOCKED mode)
 *         page lock (LOCKED bit; never waited for while an index lock is held)
 *           cache->free_lock (free and pending-free lists; leaf)
 *
 * Taken inside an RCU read section (so never held across a grace-period
 * wait, nor while waiting for one): lpc_threads_lock (lookup.c's find_slow
 * makes the thread's block there), a file's index lock (remove.c keeps a
 * frozen page's A..C in one section; LOCKED-mode lookups take the rwlock in
 * theirs), and free_lock (a final put: page/alloc.c).
 */
#ifndef LPC_CORE_CACHE_H
#define LPC_CORE_CACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <lpc/lpc.h>

#include "core/compiler.h"
#include "index/radix.h"
#include "io/io.h"
#include "page/page.h"

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
	LPC_NR_COUNTERS,
};

/*
 * One thread's state for one cache.  Written only by its thread (counters
 * with relaxed load+store, so a concurrent lpc_stats reads whole values), read
 * by lpc_stats.  Linked into the cache's list and the thread's list under
 * lpc_threads_lock.  `cache` becomes NULL when the cache is destroyed first;
 * the thread frees the block at exit or on its next slow path.
 */
struct lpc_tcache {
	_Atomic uint64_t cnt[LPC_NR_COUNTERS];
	uint64_t cache_id;
	struct lpc_cache *cache;
	struct lpc_page *free; /* private free frames: no atomics (alloc.c) */
	_Atomic unsigned nfree;
	_Atomic bool steal;    /* a reclaimer is taking `free`: keep off it */
	struct lpc_tcache *cache_next, *cache_prev;
	struct lpc_tcache *thread_next;
} lpc_cacheline_aligned;

struct lpc_thread {
	uint64_t cur_id;         /* id of the cache cur belongs to; 0: none */
	struct lpc_tcache *cur;
	struct lpc_tcache *blocks;
	bool registered;         /* with RCU, until the thread exits (lpc's key) */
	bool scoped;             /* with RCU for one call (lpc_rcu_scope_enter) */
};

extern __thread struct lpc_thread lpc_self;

struct lpc_cache {
	/* Read-mostly: set at create. */
	uint64_t id; /* unique, never reused: tcache lookups compare it */
	struct lpc_page *pages;
	unsigned char *frames;
	uint32_t nframes;
	unsigned page_shift;
	size_t page_size;
	size_t pages_bytes, frames_bytes;
	bool locked_lookup;
	const struct lpc_io_backend_ops *io;
	unsigned tbatch; /* frames moved between a thread list and the shared one */
	uint32_t low_free; /* below this many shared free frames, threads hoard none */

	/* Shared free list and the batch of published pages awaiting a grace
	 * period.  Leaf lock; never held across I/O or a grace period. */
	pthread_mutex_t free_lock lpc_cacheline_aligned;
	struct lpc_page *free;
	_Atomic uint32_t nfree; /* written under free_lock; read without it as a hint */
	struct lpc_page *pending;
	uint32_t npending;
	_Atomic uint32_t batches_in_flight; /* call_rcu batches not yet run */

	pthread_mutex_t reclaim_lock; /* see the lock order above */

	pthread_mutex_t files_lock lpc_cacheline_aligned;
	struct lpc_file *files;

	/* Under lpc_threads_lock: per-thread blocks and counts of dead ones. */
	struct lpc_tcache *tcaches;
	uint64_t retired[LPC_NR_COUNTERS];

	struct lpc_io_faults faults;
};

struct lpc_file {
	/* Hot, read-mostly line: every lookup reads these. */
	struct lpc_cache *cache;
	uint64_t cache_id; /* cache->id, here so a hit reads one line of f */
	struct lpc_radix_root tree;
	bool locked_lookup;
	unsigned page_shift;
	struct lpc_io_file io; /* io.size: bytes, refreshed from fstat on a miss past it */

	/* Writers of the index: tree_lock (lockless mode) or tree_rwlock held
	 * for writing (LOCKED mode, where lookups hold it for reading). */
	pthread_mutex_t tree_lock lpc_cacheline_aligned;
	pthread_rwlock_t tree_rwlock;
	uint64_t nrpages; /* pages in the index; under the index lock */

	/* Under cache->files_lock. */
	dev_t dev;
	ino_t ino;
	int accmode;
	unsigned opens;
	struct lpc_file *next;

	/* The last close frees the struct with call_rcu (file.c): lookups
	 * already in their read section may still read it.  Here since open,
	 * so that close allocates nothing and cannot fail. */
	struct rcu_head rcu;
};

/* Registers this thread with RCU until it exits.  Return: 0; -ENOMEM if
 * lpc has no pthread key (the process ran out) or cannot set it. */
int lpc_thread_register(void);

/* Counts an event of a thread that has no block (straight into the
 * retired sums).  Context: not lpc_threads_lock. */
void lpc_count_noblock(struct lpc_cache *c, enum lpc_counter i);

/* Returns this thread's block for c, registering the thread on first use.
 * Return: NULL only if the block cannot be allocated or the thread cannot
 * be registered (thread.c: the key). */
struct lpc_tcache *lpc_tcache_slow(struct lpc_cache *c);

static inline struct lpc_tcache *lpc_tcache(struct lpc_cache *c)
{
	if (likely(lpc_self.cur_id == c->id))
		return lpc_self.cur;
	return lpc_tcache_slow(c);
}

/* The same for a file's cache, reading only the file's hot line. */
static inline struct lpc_tcache *lpc_file_tcache(const struct lpc_file *f)
{
	if (likely(lpc_self.cur_id == f->cache_id))
		return lpc_self.cur;
	return lpc_tcache_slow(f->cache);
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

/* thread.c */
void lpc_cache_orphan_tcaches(struct lpc_cache *c);
void lpc_tcaches_steal_begin(struct lpc_cache *c);
uint32_t lpc_tcaches_steal_end(struct lpc_cache *c, struct lpc_page **head);
void lpc_cache_sum_counters(struct lpc_cache *c, uint64_t out[LPC_NR_COUNTERS],
			    uint64_t *tfree);
uint64_t lpc_cache_new_id(void);

/* file.c: closes every file whatever its open count (cache destroy); counts
 * the pages all indexes hold (context: files_lock). */
int lpc_file_close_all(struct lpc_cache *c);
uint64_t lpc_files_nrpages(struct lpc_cache *c);

/* Index lock of a file (writers). */
static inline void lpc_file_index_lock(struct lpc_file *f)
{
	if (f->locked_lookup)
		pthread_rwlock_wrlock(&f->tree_rwlock);
	else
		pthread_mutex_lock(&f->tree_lock);
}

static inline void lpc_file_index_unlock(struct lpc_file *f)
{
	if (f->locked_lookup)
		pthread_rwlock_unlock(&f->tree_rwlock);
	else
		pthread_mutex_unlock(&f->tree_lock);
}

#endif /* LPC_CORE_CACHE_H */
