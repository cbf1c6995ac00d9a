/* SPDX-License-Identifier: MIT */
/*
 * filemap.h - the file object and its page cache: open/close (file.c),
 * lookup (lookup.c), miss handling (miss.c), pread (read.c), removal
 * (remove.c).  Internal API.
 *
 * Below it: page/ (descriptors, page lock, the pool and its allocator),
 * index/ (the radix tree), io/ (backends), core/ (RCU, per-thread blocks).
 * It never sees the cache object: a cache hands its file table (struct
 * lpc_files) the pool and the I/O it needs, and every file keeps pointers to
 * them.
 *
 * Verbs: "lookup" finds a page in the index and returns it referenced in any
 * state (lpc_filemap_lookup); "get" returns a referenced UPTODATE page,
 * reading it on a miss (lpc_page_get, lpc_filemap_get_page); "try_get" is the
 * speculative increment-unless-zero (lpc_page_try_get, page/page.h).
 */
#ifndef LPC_FILEMAP_FILEMAP_H
#define LPC_FILEMAP_FILEMAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <lpc/lpc.h>

#include "core/compiler.h"
#include "core/debug.h"
#include "core/rcu.h"
#include "core/thread.h"
#include "index/radix.h"
#include "io/io.h"
#include "page/page.h"
#include "page/pool.h"

struct lpc_files;

/* Streams a file's readahead follows at once, and the misses it keeps as
 * candidates for new ones (readahead.c S1-S4). */
#define LPC_RA_STREAMS 32
#define LPC_RA_CANDS 16

/* A parked descriptor (file.c ZL5). */
struct lpc_fd_park {
	struct lpc_fd_park *next;
	int fd;
	void *handle; /* a copy over a user backend parks handles (file.c ZN3) */
};

/* lpc_file.hit_id of a LOCKED-mode file: owner ids count up from 1. */
#define LPC_FILE_NO_FAST_PATH UINT64_MAX

struct lpc_close_join; /* file.c ZJ */

struct lpc_file {
	/* Hot, read-mostly line: every lookup reads these. */
	struct lpc_pool *pool;
	uint64_t owner_id; /* pool->owner.id, here so a hit reads one line of f */
	/* owner_id in lockless mode, LPC_FILE_NO_FAST_PATH in LOCKED mode: the
	 * hit paths (lpc_page_find, lpc_page_read) test "this thread has its
	 * block and the file is lockless" with one compare against
	 * lpc_self.cur_id, which is 0 or a real owner id, never this. */
	uint64_t hit_id;
	struct lpc_radix_root tree;
	bool locked_lookup;
	unsigned page_shift;
	/* io.size: lpc's end of the kernel's file (the size protocol, below) */
	struct lpc_io_file io;

	/* Writers of the index: tree_lock (lockless mode) or tree_rwlock held
	 * for writing (LOCKED mode, where lookups and pins hold it for reading;
	 * a LOCKED miss inserts under the read lock and tree_lock, miss.c). */
	pthread_mutex_t tree_lock lpc_cacheline_aligned;
	pthread_rwlock_t tree_rwlock;
	/* No count of pages here: a fast insert or delete (radix.c FI, FD)
	 * holds only its leaf's lock, and a shared counter would be the one
	 * line every miss writes; lpc_file_nrpages sums the leaves. */
	/* Bumped by every lpc_invalidate after its walk (release, remove.c):
	 * a read stream that holds look-ahead pages (stream.c ST5) learns
	 * that an invalidate may have skipped one of them because of its
	 * reference, and drops them itself before it hands one out. */
	_Atomic uint64_t inval_seq;

	/* Constant after open. */
	struct lpc_files *files; /* the cache's file table */
	struct lpc_io *iodev;    /* the cache's backend and fault hook */
	char *name;              /* a copy over a user backend: its name (file.c
				  * ZN1), and io.user is set; NULL for a path's */
	uint64_t ws_id;          /* the file in shadow keys (page/workingset.h):
				  * from its device and inode, or its backend
				  * id; set before the file is published */

	/* Under files->lock. */
	dev_t dev;
	ino_t ino;
	int accmode;
	unsigned opens;     /* the closer's open counts until its Z4 or Z5 */
	bool closing;       /* a last close runs (file.c Z1-Z5) */
	bool joined;        /* a close joined since the closer's last Z3 began (ZJ) */
	struct lpc_close_join *joins; /* closes waiting for the closer's result (ZJ) */
	struct lpc_file *next;
	/* Descriptors of this file that lpc no longer uses but may not close
	 * while the file is open (file.c ZL1-ZL6): closed with io.fd when the
	 * copy is freed. */
	struct lpc_fd_park *parked;

	/* Writes (writeback/: dirty.c and the rest).  The sizes (protocol SZ1-SZ5
	 * and rules S1-S4 in writeback/writeback.c):
	 *   size     lpc's size of the file: lpc_pread, lpc_pin and writeback
	 *            stop at it, writes past it extend it.  The kernel's
	 *            (fstat) until lpc first writes or truncates the file
	 *            (size_kept), then lpc's own: raised by lpc_pwrite (SZ1)
	 *            and set by lpc_truncate, both under size_lock; read
	 *            without a lock (acquire).
	 *   io.size  lpc's end of the kernel's file: fstat's while !size_kept;
	 *            then only raised by a writeback's write (SZ2, CAS-max) and
	 *            set by a publish (SZ5) or lpc_truncate, both by CAS.
	 *   the kernel's file: extended by writeback's whole pages, extended
	 *            or cut back to size by a publish (under size_lock), set by
	 *            lpc_truncate; other processes may change it.
	 * The rule that keeps bytes: (S1) SZ1 raises size before the bytes are
	 * in the page, and (S2) a publish cuts only to the size it read under
	 * size_lock, (S3) only over lpc's own writes (the file's end no
	 * further than io.size).  lpc_truncate is the only call that cuts the
	 * file below a size lpc had or below another process's bytes. */
	_Atomic uint64_t size lpc_cacheline_aligned;
	_Atomic bool size_kept;
	/* The highest end of the file a writeback's write reached (SZ2,
	 * CAS-max) since lpc's last ftruncate, which sets it to its size just
	 * before the call (lpc_wb_ftruncate, under size_lock): above size, a
	 * tail some write's own publish still owes (writeback.c, S4). */
	_Atomic uint64_t wb_end;
	/* Odd while an lpc_truncate that shrinks the file runs (raised before
	 * its size store and after its ftruncate, under size_lock): a read
	 * whose page was inserted while it was odd, or that saw it change,
	 * may hold bytes from before the cut, which a later growth would make
	 * look valid; what it read from the cut on is dropped (the pages
	 * wholly past it looked up again, the cut's own page kept with zeros
	 * past the cut), what lies below the cut is kept (miss.c M5, run.c
	 * U5, lpc_filemap_trunc_from).  trunc_cut[n & 1] is the cut (the new
	 * size, bytes) of the shrinking truncate that raises trunc_seq from
	 * 2n to 2n + 1, stored (release) before that raise, under size_lock. */
	_Atomic uint64_t trunc_seq;
	_Atomic uint64_t trunc_cut[2];
	_Atomic uint64_t wb_err;       /* errseq of write errors (writeback/dirty.c) */
	_Atomic uint64_t nrdirty;      /* DIRTY pages; changed under the index lock */
	_Atomic uint64_t dirtied_when; /* ns when nrdirty last left 0 (the flusher's age) */
	pthread_mutex_t size_lock;     /* raises of size (SZ1), publishes (SZ3-SZ5), truncate */
	pthread_rwlock_t trunc_lock;   /* lpc_pwrite shared, lpc_truncate exclusive */
	/* Writeback's writes in flight (K4) shared, lpc's ftruncates that may
	 * grow the file exclusive (rule S5, writeback/writeback.c). */
	pthread_rwlock_t dio_lock;
	unsigned wb_busy;              /* flusher passes on f; under files->lock */
	/* Eviction met a dirty page of f (reclaim/evict.c E8): the flusher's
	 * next round writes f back whatever its age.  Set (test, then
	 * exchange) by evictors, cleared by the flusher's pick. */
	_Atomic bool wb_reclaim;

	/* Readahead's streams (readahead.c): under ra_lock, which misses only
	 * try (never wait for) and marker hits wait for (A2); ra_thrash is set
	 * by eviction of a page read ahead and never used, and taken by the
	 * next window. */
	pthread_mutex_t ra_lock;
	struct lpc_ra_stream {
		uint64_t next;   /* the index the stream's next window starts at */
		uint64_t stamp;  /* last use (the slot to reuse is the oldest) */
		uint32_t size;   /* its last window, pages [next - size, next);
				  * 0: an empty slot */
		uint32_t seen;   /* a candidate's: consecutive misses, each
				  * starting where the last ended */
		uint64_t behind; /* a stream's: where its next drop-behind
				  * starts, and ra_drop_refaults at its last
				  * one (readahead.c A5) */
		uint64_t refaults_seen;
		bool fed;        /* a stream's: its last drop-behind left at
				  * most half of its range cached, so it
				  * feeds its windows itself (readahead.c
				  * A4-A5, ra_fed) */
	} ra_streams[LPC_RA_STREAMS], ra_cands[LPC_RA_CANDS];
	uint64_t ra_clock;
	_Atomic int ra_advice; /* LPC_FADV_NORMAL / SEQUENTIAL / RANDOM */
	_Atomic bool ra_thrash;
	/* Pages a stream read again soon after a drop-behind took them
	 * (run.c U5; relaxed: a hint): while it grows, streams do not drop
	 * (readahead.c A5). */
	_Atomic uint64_t ra_drop_refaults;
	unsigned ra_inflight; /* windows queued or being read by the
			       * readahead threads; under files->ra.lock
			       * (ra_worker.c) */
	unsigned ra_reading;  /* ... of which being read; same lock */

	/* Pages write-pinned (writeback/wpin.c WC1-WC6) in the low bits,
	 * LPC_WPINS_CUT while an lpc_truncate cuts (new write pins wait),
	 * LPC_WPINS_WAITERS while someone sleeps in futex on the word.  Its
	 * own line: every write pin and unpin changes it, every lookup reads
	 * the lines above. */
	_Atomic uint32_t wpins lpc_cacheline_aligned;

	/* The last close frees the struct with call_rcu (file.c): lookups
	 * already in their read section may still read it.  Here since open,
	 * so that close allocates nothing and cannot fail. */
	struct rcu_head rcu;
#if LPC_DEBUG
	uint32_t dbg_magic; /* LPC_FILE_MAGIC while open; poisoned at the last close */
	/* Rule ONE-COPY (file.c): the cache's copies made (ZC) whose last close
	 * has not reached Z5, in or out of the table; under files->lock. */
	struct lpc_file *dbg_live_next;
	/* Rule FSYNC-INFLIGHT (writeback.c Y3): writebacks begun (K3, under
	 * the index lock) and ended (K5, counted before WRITEBACK clears);
	 * release increments, acquire loads. */
	_Atomic uint64_t dbg_wb_started, dbg_wb_ended;
	/* Rule SIZE-SEEN (writeback.c): the highest end of the file a write
	 * of lpc reached (SZ2, CAS-max) since lpc's last ftruncate set it. */
	_Atomic uint64_t dbg_wb_end;
	/* Batches past their write (SZ2) whose publish has not returned. */
	_Atomic int64_t dbg_publish_owed;
#endif
};

#if LPC_DEBUG
static inline void lpc_debug_wb_end_raise(struct lpc_file *f, uint64_t end)
{
	uint64_t e = atomic_load_explicit(&f->dbg_wb_end, memory_order_relaxed);

	while (e < end && !atomic_compare_exchange_weak_explicit(&f->dbg_wb_end, &e, end,
								 memory_order_relaxed,
								 memory_order_relaxed))
		;
}
#define lpc_debug_wb_end_set(f, size) \
	atomic_store_explicit(&(f)->dbg_wb_end, (size), memory_order_relaxed)
#define lpc_debug_publish_owed(f, d) \
	atomic_fetch_add_explicit(&(f)->dbg_publish_owed, (d), memory_order_release)
#else
#define lpc_debug_publish_owed(f, d) ((void)0)
#define lpc_debug_wb_end_raise(f, end) ((void)0)
#define lpc_debug_wb_end_set(f, size) ((void)0)
#endif

/*
 * Where the bytes of a read that loaded trunc_seq as s0 after its pages were
 * in the index (M4, U4) may predate a shrinking truncate's cut (see
 * trunc_seq): from the cut of the one shrinking truncate that overlapped the
 * read on; nowhere (UINT64_MAX) when none did; everywhere (0) when several
 * did (a rarity: each of them ran while this read was in flight).  Bytes
 * below the cut are the file's whatever the truncate did: a read of pages
 * below it is never dropped.  Why the cut read is that truncate's, T's (its
 * count went from base = s0 & ~1 to base + 1): T stored it before its raise
 * (release, then the seq_cst RMW), and the first load below read T's raise
 * or a later value, so the acquire load of T's slot reads T's store or a
 * later one; the next store to that slot is by the truncate after next,
 * T + 2, which takes size_lock after T + 1 raised the count to base + 3, so
 * a load that reads it (acquire, from T + 2's release) makes the count's
 * second load read base + 3 or more: then 0.  T + 1 writes the other slot.
 * Context: after the read, before its size check.
 */
static inline uint64_t lpc_filemap_trunc_from(struct lpc_file *f, uint64_t s0)
{
	uint64_t base = s0 & ~(uint64_t)1;
	uint64_t s1 = atomic_load_explicit(&f->trunc_seq, memory_order_seq_cst);
	uint64_t cut;

	if (s1 == s0 && !(s0 & 1))
		return UINT64_MAX;
	if (s1 - base > 2)
		return 0;
	cut = atomic_load_explicit(&f->trunc_cut[(base >> 1) & 1], memory_order_acquire);
	if (atomic_load_explicit(&f->trunc_seq, memory_order_seq_cst) - base > 2)
		return 0;
	return cut;
}

#define LPC_FILE_MAGIC 0x6c706366u /* "lpcf" */
#define LPC_FILE_POISON 0xdeadf11eu

/* Rule FILE-USE-AFTER-CLOSE: the entry check of the calls that take a file. */
#if LPC_DEBUG
#define lpc_debug_file_check(f)                                                        \
	lpc_debug_check((f)->dbg_magic == LPC_FILE_MAGIC, "FILE-USE-AFTER-CLOSE", NULL, \
			"lpc_file %p used after its last close (magic 0x%x)", (void *)(f),      \
			(f)->dbg_magic)
#else
#define lpc_debug_file_check(f) ((void)0)
#endif

/*
 * A cache's open files, and what a new file needs from the cache.  The cache
 * embeds one (cache/cache.h) and fills pool, io and locked_lookup before the
 * first open.
 */
struct lpc_wb;

/* The readahead threads' queue (ra_worker.c, Q1-Q4); under lock.  A job
 * is a run of a window whose pages are inserted LOCKED (run.c U1-U3, by the
 * thread that hit the marker) and whose read (U4-U5) a readahead thread
 * makes.  At most LPC_RA_THREADS threads, and at most LPC_RA_PER_FILE of
 * them reading one file's jobs at once.  The queue bounds jobs, not pages
 * (Q5's share does): a window's cached pages split it into runs (run.c
 * W1), and in lpcbench read's scan-mix, where a quarter of the file's
 * pages are the readers' cached hot set, a window made hundreds of jobs of
 * three or four pages, and most marker windows ended at a full queue (2285
 * of 2430).  512 slots (an experiment, not kept) cut them to 116 of 451
 * and sped the scanner by 0-10 % (183-204 against 160-191 kpages/s), but
 * the readers lost 10-15 % of their reads/s and their hot set 0.004-0.015
 * of its hit ratio (0.815-0.826 against 0.829-0.834; two interleaved runs
 * each, readers 1 and 2): the bigger windows took the device from them. */
#define LPC_RA_QUEUE 64
#define LPC_RA_THREADS 8
#define LPC_RA_PER_FILE 4
/* A batch (ra_worker.c Q2, stream.c GB3): the runs of one file read with
 * one lpc_io_readv_batch, at most LPC_RUN_BATCH runs and, past its first
 * run, LPC_RUN_BATCH_PAGES pages (never more than LPC_IO_MAX_IOV). */
#define LPC_RUN_BATCH 32
#define LPC_RUN_BATCH_PAGES 256
/* Q5's split of the share between streams (ra_worker.c QS1-QS3): the
 * streams that sized a window lately, at most LPC_RA_ACTIVE of them, and
 * how many window sizings of the cache's streams a stream stays active
 * after its own last. */
#define LPC_RA_ACTIVE 8
#define LPC_RA_ACTIVE_AGE (2 * LPC_RA_ACTIVE)
struct lpc_ra_job {
	struct lpc_file *f;
	uint64_t index, mark, n;
	struct lpc_page *pages[];
};
struct lpc_ra_worker {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* jobs queued, or stop */
	pthread_cond_t idle; /* a file's ra_inflight reached 0 */
	struct lpc_ra_job *q[LPC_RA_QUEUE]; /* oldest first */
	unsigned n;
	unsigned nthreads;      /* started (joined by stop) */
	unsigned nready;        /* started, with their blocks, not exited */
	unsigned nidle;         /* waiting for a job */
	unsigned nres;          /* slots reserved by windows being built (Q0) */
	uint64_t npages;        /* pages of the queued and running jobs (Q5) */
	uint64_t respages;      /* pages reserved by windows being built or read by their caller (Q5) */
	/* QS1: the streams that sized a window lately, by key (the stream's
	 * slot, compared, never followed: a slot reused, or its file freed,
	 * costs at most a stream counted too long); stamp: wclock at its last
	 * sizing (0: an empty entry). */
	struct {
		const void *key;
		uint64_t stamp;
	} act[LPC_RA_ACTIVE];
	uint64_t wclock;        /* window sizings so far (QS1) */
	bool failed, stop;
	pthread_t threads[LPC_RA_THREADS];
};

struct lpc_files {
	pthread_mutex_t lock; /* open/close: the list, opens, closing, accmode, parked, wb_busy */
	struct lpc_file *head;
	struct lpc_pool *pool;
	struct lpc_io *io;
	bool locked_lookup;
	/* Writes.  flush: the writeback layer's (set by the cache), run by the
	 * last close before it removes the pages; returns 0 or the first write
	 * error.  wb_idle: signalled (under lock) when a wb_busy drops to 0;
	 * close_done: when a last close ends (file.c Z4, Z5), for the closes
	 * that joined it (ZJ). */
	int (*flush)(struct lpc_file *f);
	struct lpc_wb *wb; /* the cache's writeback state, opaque here */
	pthread_cond_t wb_idle;
	pthread_cond_t close_done;
#if LPC_DEBUG
	struct lpc_file *dbg_live; /* rule ONE-COPY: see lpc_file.dbg_live_next */
#endif
	/* Dirty pages of every file: changed only when a page goes clean ->
	 * dirty or back, never by a write to a page already dirty. */
	_Atomic int64_t ndirty lpc_cacheline_aligned;
	/* Pages one read I/O covers at most (run.c), readahead's first and
	 * largest window (readahead.c; ra_max 0: readahead off); set by the
	 * cache before the first open, read-only after. */
	uint32_t run_max;
	uint32_t ra_init, ra_max;
	/* A readahead run's bridge (run.c U1): a page cached within its first
	 * run_bridge pages does not end it (0: every cached page does); the
	 * request reads that page's bytes into the reading thread's discard
	 * buffer, or into `discard` (one page-sized, page-aligned buffer of no
	 * page, whose bytes nobody reads) when that thread has none.  Set with
	 * run_max. */
	uint32_t run_bridge;
	void *discard;
	/* Streams drop their used-once pages behind them (readahead.c A5);
	 * set by the cache, cleared only by tests that look at eviction or
	 * the reclaimer's refill alone, before the first open. */
	bool ra_drop;
	struct lpc_ra_worker ra;
	/* Look-ahead pages the cache's read streams may hold referenced
	 * (stream.c ST6: credits they took, each stream at most its
	 * max_pages): at most a quarter of the frames, so streams never hold
	 * what the other threads need (eviction skips a held page). */
	_Atomic uint64_t stream_held;
};

/* file.c.  Context of all: no lock held. */
void lpc_files_init(struct lpc_files *fs, struct lpc_pool *pool, struct lpc_io *io,
		    bool locked_lookup);
void lpc_files_destroy(struct lpc_files *fs);
/* lpc_file_open for the cache that owns fs (arguments as lpc_file_open). */
int lpc_files_open(struct lpc_files *fs, const char *path, int oflags, mode_t mode,
		   struct lpc_file **out);
/* fd, which the caller opened and no longer needs: parked on the copy of
 * its file if fs holds one (closed with it), else closed (file.c ZL5). */
void lpc_files_give_fd(struct lpc_files *fs, int fd);
/* lpc_file_open_backend (lpc.h), for the cache's table (file.c ZN1-ZN4). */
int lpc_files_open_backend(struct lpc_files *fs, const char *name,
			   const struct lpc_backend_ops *ops, void *handle, int oflags,
			   struct lpc_file **out);
/* An open file of fs by (dev, ino), counted as one more open; NULL if none
 * (or open read-only when accmode asks for writing). */
struct lpc_file *lpc_files_find_get(struct lpc_files *fs, dev_t dev, ino_t ino, int accmode);
/* Closes every file whatever its open count (cache destroy). */
int lpc_files_close_all(struct lpc_files *fs);
/* Pages held by every file's index.  Context: fs->lock. */
uint64_t lpc_files_nrpages(struct lpc_files *fs);
/* Bytes of every open file's index nodes (lpc_stats).  Context: no lock. */
uint64_t lpc_files_index_bytes(struct lpc_files *fs);

/* This thread's block for f's pool, reading only f's hot line. */
static inline struct lpc_tcache *lpc_file_tcache(const struct lpc_file *f)
{
	if (likely(lpc_self.cur_id == f->owner_id))
		return lpc_self.cur;
	return lpc_tcache_slow(&f->pool->owner);
}

/* Pages in f's index (the leaves' counts).  Exact when no writer runs.
 * Context: index lock, or an RCU read section. */
static inline uint64_t lpc_file_nrpages(struct lpc_file *f)
{
	return lpc_radix_count(&f->tree);
}

/* Index lock of a file (writers). */
static inline void lpc_file_index_lock(struct lpc_file *f)
{
	if (f->locked_lookup)
		pthread_rwlock_wrlock(&f->tree_rwlock);
	else
		pthread_mutex_lock(&f->tree_lock);
}

/* Index lock without waiting (the evictor, inside a read section).
 * Return: true if taken. */
static inline bool lpc_file_index_trylock(struct lpc_file *f)
{
	if (f->locked_lookup)
		return pthread_rwlock_trywrlock(&f->tree_rwlock) == 0;
	return pthread_mutex_trylock(&f->tree_lock) == 0;
}

static inline void lpc_file_index_unlock(struct lpc_file *f)
{
	if (f->locked_lookup)
		pthread_rwlock_unlock(&f->tree_rwlock);
	else
		pthread_mutex_unlock(&f->tree_lock);
}

/*
 * Returns page `index` of f with a reference taken, whatever its state
 * (UPTODATE or in flight), or NULL if absent.  Lockless mode: RCU walk and
 * speculative reference, R1-R5 (lookup.c); LOCKED mode: under the file's
 * rwlock.  Context: outside an RCU read section (it takes its own).
 */
struct lpc_page *lpc_filemap_lookup(struct lpc_file *f, uint64_t index, struct lpc_tcache *t);

/*
 * lpc_page_get without argument checks: a referenced UPTODATE page, reading
 * it on a miss (M1-M6, miss.c); alloc_flags go to the frame allocator
 * (LPC_ALLOC_NOWAIT: lpc_pread, which reads around a full cache instead).  Return: 0, -ENXIO, -ENOMEM, or the read's
 * negative errno.
 */
int lpc_filemap_get_page(struct lpc_file *f, uint64_t index, struct lpc_tcache *t,
			 unsigned alloc_flags, struct lpc_page **out);

/*
 * lpc_filemap_get_page for a caller that will read pages [index, index + nr)
 * next (lpc_pread's range, lpc_pin's slow path): a miss on `index` reads the
 * run of absent pages that starts there (at most nr, the cache's run_max,
 * up to end of file) with one I/O (run.c, R-steps there), leaving the others
 * cached.  Return: as lpc_filemap_get_page, for page `index` alone.
 */
int lpc_filemap_get_pages(struct lpc_file *f, uint64_t index, uint64_t nr,
			  struct lpc_tcache *t, unsigned alloc_flags, struct lpc_page **out);

/*
 * Read pins (pin.c).  lpc_filemap_pin_fast: the fast path, P1-P5 (LOCKED
 * mode: under the index rwlock), pinning pages[0..) of f from index `first`
 * up to n, until the first page absent, not UPTODATE or marked for
 * readahead.  Return: the pages pinned.  lpc_filemap_unpin_all drops n
 * pins.  lpc_filemap_pin_read: lpc_pin(LPC_PIN_READ) after its argument
 * checks (writeback/wpin.c), with its counters.  Context: outside a read
 * section.
 */
unsigned lpc_filemap_pin_fast(struct lpc_file *f, uint64_t first, unsigned n,
			      struct lpc_page **pages);
void lpc_filemap_unpin_all(struct lpc_page **pages, unsigned n);
/* How many of pages[0..n) are, from the first on, f's pages at first,
 * first + 1, ... now: lpc_radix_lookup's answer for each, with one walk
 * from the root per leaf (a write pin's WP2 for its whole range).
 * Context: any, outside a read section (opens its own). */
unsigned lpc_filemap_pages_held(struct lpc_file *f, uint64_t first, unsigned n,
				struct lpc_page *const *pages);
int lpc_filemap_pin_read(struct lpc_file *f, uint64_t off, size_t len, struct lpc_page **pages,
			 unsigned max, struct lpc_tcache *t);

/*
 * run.c: the run miss behind lpc_filemap_get_pages (M1-M5 for each page of
 * the run, one read): pages [index, index + nr) asked for, then up to `ra`
 * pages read ahead, page `mark` (UINT64_MAX: none) the async marker.  nr 0:
 * a window read ahead alone, out unused, return 0.  Return: 0 with *out (page `index`, referenced,
 * UPTODATE); -EEXIST (page `index` was inserted by another thread first:
 * nothing done, look it up again); -ENOMEM; -ENXIO; the read's errno.
 */
int lpc_filemap_read_run(struct lpc_file *f, uint64_t index, uint64_t nr, uint64_t ra,
			 uint64_t mark, struct lpc_tcache *t, unsigned alloc_flags,
			 struct lpc_page **out);

/*
 * Readahead (readahead.c).  lpc_ra_on_miss: a miss of pages [index, index +
 * nr) (nr >= 1) is looked up among f's streams; returns how many pages to
 * read ahead after them (0: random, off, or busy) and sets *mark.
 * lpc_ra_on_mark: a lookup cleared RA_MARK on page `index` (a hit, or a page in flight): reads the stream's
 * next window.  lpc_ra_init: at open.  Context: no lock, outside a read
 * section (lpc_ra_on_mark reads).
 */
uint64_t lpc_ra_on_miss(struct lpc_file *f, uint64_t index, uint64_t nr, uint64_t *mark);
void lpc_ra_on_mark(struct lpc_file *f, uint64_t index, struct lpc_tcache *t);
void lpc_ra_init(struct lpc_file *f);
/* ra_worker.c: the readahead threads (Q1-Q4 there).  lpc_ra_submit: queues
 * a run of f; false when it cannot (the caller reads it, its reservation
 * still held, then gives that back).  lpc_ra_quiesce:
 * waits until no run of f is queued or in flight (the last close).
 * lpc_ra_worker_stop: finishes the queue, joins the threads (destroy). */
void lpc_ra_worker_init(struct lpc_files *fs);
void lpc_ra_worker_destroy(struct lpc_files *fs);
bool lpc_ra_submit(struct lpc_ra_job *j, uint64_t granted);
/* Q5's reservation for one run: at most `want` pages of readahead's share
 * (a quarter of the frames, less the pages of the queued and running jobs
 * and those reserved by others), and with `slot` a queue slot too.  Return:
 * the pages granted (the run is capped at them), 0 when refused (the window
 * ends here: readahead reads less, never waits; *queue_full set, when not
 * NULL, if a slot was asked for and the queue alone refused it: the share
 * had the whole run, and the threads were neither stopping nor unable to
 * start).  A grant is given back by
 * lpc_ra_submit (when it queues the run: the run's pages then count as the
 * job's) or by lpc_ra_unreserve with the same pages and slot (the run read
 * by its caller, after its U5, or not built). */
uint64_t lpc_ra_reserve(struct lpc_files *fs, uint64_t want, bool slot, bool *queue_full);
/* QS1-QS2: the largest window stream `key` may read now, so that two
 * windows of every active stream fit readahead's share together: share /
 * (2 x the streams active, key counted), at least 1; UINT32_MAX (no cap)
 * when key is the only one; the call counts as key's activity, but for the
 * window that reaches the end of the file (`last`): key counts no more.
 * Context: any thread, no lock but f->ra_lock (w->lock is taken under it,
 * never the other way round, so it cannot deadlock). */
uint32_t lpc_ra_window_cap(struct lpc_files *fs, const void *key, bool last);
void lpc_ra_unreserve(struct lpc_files *fs, uint64_t pages, bool slot);
/* Q6: a thread about to wait on page p of f (M6) reads p's run itself if
 * the run is still queued.  Return: whether it did. */
bool lpc_ra_steal(struct lpc_file *f, struct lpc_page *p, struct lpc_tcache *t);
/* run.c: a window [start, end) read ahead alone: its absent pages (cached
 * ones skipped, never ending the window), in runs of at most run_max, each
 * run handed to the readahead threads (async, lockless mode) or read here;
 * RA_MARK on the first page inserted when mark_first (set before its insert).  Return: pages inserted;
 * *queued: runs handed to the threads; *stop: where the window ended early
 * (no free frame, no share left: ra_worker.c Q5, end of file), else end;
 * *queue_cut (when not NULL) set if it ended for want of a queue slot alone
 * (lpc_ra_reserve's queue_full: the share had the run; frames not tried).
 * held (NULL: none; stream.c ST4 b): held[k] gets a reference of the
 * caller's on page start + k when this call inserted it, taken before its
 * run is handed to a reader (W2); entries of pages it did not insert are
 * left as they were (the caller clears them first).  lpc_filemap_ra_finish:
 * U4-U5 of a job, by any thread; frees the job. */
uint64_t lpc_filemap_ra_window(struct lpc_file *f, uint64_t start, uint64_t end,
			       bool mark_first, bool async, struct lpc_tcache *t,
			       unsigned *queued, uint64_t *stop, struct lpc_page **held,
			       bool *queue_cut);
/* readahead.c: the stream whose next window was to start at old_next ended
 * its last window at new_next (no free frame): its next miss there
 * continues it.  Tried only (ra_lock busy: nothing). */
void lpc_ra_cut(struct lpc_file *f, uint64_t old_next, uint64_t new_next);
void lpc_filemap_ra_finish(struct lpc_ra_job *j, struct lpc_tcache *t);
/* U4-U5 of nj jobs of one file (ra_worker.c Q2's batch: their pages at most
 * LPC_IO_MAX_IOV) with one lpc_io_readv_batch; frees them. */
void lpc_filemap_ra_finish_batch(struct lpc_ra_job **jobs, unsigned nj, struct lpc_tcache *t);
/* stream.c GB3's windows read by their caller (lpc_filemap_ra_window's
 * !async), gathered: each window's runs are inserted and reserved as there
 * (U1-U3, Q5), then read together, LPC_RUN_BATCH runs or LPC_RUN_BATCH_PAGES
 * pages at a time, with one lpc_io_readv_batch, each run's grant given
 * back at its own U5; a run short of share by no more than the batch's
 * own grants reads the batch first (they come back) and asks again, so a
 * batch never refuses its own runs.  Lockless mode over a backend that batches only
 * (LOCKED mode holds U3's rwlock per run; sync reads a batch run after
 * run, lpc_io_batches): else lpc_filemap_ra_window's !async, each run read
 * alone.  *stop as lpc_filemap_ra_window's. */
struct lpc_filemap_batch {
	struct lpc_file *f;
	unsigned nruns;
	uint64_t npages;
	struct { uint64_t index, n, granted; } runs[LPC_RUN_BATCH];
	struct lpc_page *pages[LPC_IO_MAX_IOV];
};
void lpc_filemap_batch_init(struct lpc_filemap_batch *b, struct lpc_file *f);
uint64_t lpc_filemap_ra_window_batch(struct lpc_filemap_batch *b, uint64_t start,
				     uint64_t end, struct lpc_tcache *t, uint64_t *stop);
void lpc_filemap_batch_flush(struct lpc_filemap_batch *b, struct lpc_tcache *t);
/* run.c U2's order (and write.c WB2's): private frames pages[0..n) sorted
 * by address, ascending, so that pages given them in index order merge
 * into few segments of a request.  Context: the frames are private. */
void lpc_filemap_order_frames(struct lpc_page **pages, uint64_t n);
/* run.c U1's probe: true if page `index` of f is in its index now (no
 * reference taken, nothing relied on).  Context: outside a read section. */
bool lpc_filemap_present(struct lpc_file *f, uint64_t index);
void lpc_ra_quiesce(struct lpc_file *f);
/* The last close (ra_worker.c QS5): f's streams leave QS1's active set;
 * with fewer than two streams left, the pool's ra_room goes back to 0. */
void lpc_ra_forget(struct lpc_file *f);
void lpc_ra_worker_stop(struct lpc_files *fs);
/* Eviction took p, read ahead and never used (reclaim/evict.c E6): counts,
 * and the file's next window shrinks.  Context: f's index lock. */
void lpc_ra_evicted_unused(struct lpc_file *f, struct lpc_tcache *t);

/*
 * The miss timers (lpc_stats miss_ns_*: LPC_C_MISS_NS_*) are sampled: a
 * clock read costs tens of nanoseconds under a hypervisor's clock (kvm-clock:
 * about a tenth of a null-backend miss, at six reads a miss), so one miss in
 * LPC_MISS_SAMPLE is timed, by the thread's own count of misses (reads, for
 * a read), and counts LPC_MISS_SAMPLE times what it took: the sums stay
 * estimates of the whole, divided by misses as before.  Context: t the
 * calling thread's block.
 */
#define LPC_MISS_SAMPLE 16u
static inline bool lpc_miss_sampled(struct lpc_tcache *t, enum lpc_counter by)
{
	return (atomic_load_explicit(&t->cnt[by], memory_order_relaxed) & (LPC_MISS_SAMPLE - 1)) ==
	       0;
}

/*
 * M2 on a frame p allocated with LPC_ALLOC_MISS (ref 0): LOCKED by this
 * thread, identity (f, index), PUBLISHED, then two references (ours and the
 * index's), a seq write section open until M5.  lpc_filemap_unprep_miss
 * undoes it after an insert that failed and drops both references (MR4:
 * the last holder frees p the published way).
 */
void lpc_filemap_prep_miss(struct lpc_file *f, struct lpc_page *p, uint64_t index);
void lpc_filemap_unprep_miss(struct lpc_page *p);

/*
 * M3: inserts p, a page with PUBLISHED set (rule PUBLISH-UNPUBLISHED), at
 * `index` under tree_lock.  Return: 0, -EEXIST, -ENOMEM.  Context: LOCKED
 * mode: the caller holds tree_rwlock for reading (miss.c).
 */
int lpc_filemap_insert(struct lpc_file *f, uint64_t index, struct lpc_page *p);

/*
 * Removes p from f's index if it is still there at `index`, and drops the
 * index's reference; holders keep a valid page.  Return: true if removed.
 * Context: no index lock held.
 */
bool lpc_filemap_delete(struct lpc_file *f, struct lpc_page *p, uint64_t index);

/*
 * Drop-behind (readahead.c A5): removes f's pages at [first, end) that were
 * used once (remove.c DROP_KEEP), are clean, unlocked and held by nobody,
 * as lpc_invalidate would, and keeps their frames for this thread's next
 * misses (page/alloc.c OD1-OD2, MR1) or hands them to pending.  Counted in
 * ra_dropped.  Return: the pages dropped; *kept: those of the range that it
 * found cached and left (used again, held, dirty, in flight).  Context: t
 * is f's thread block; no page lock, index lock, ra_lock or read section
 * held.
 */
uint64_t lpc_filemap_drop_behind(struct lpc_file *f, uint64_t first, uint64_t end,
				 struct lpc_tcache *t, uint64_t *kept);

/* Removes every page (last close).  Context: nobody else uses f. */
void lpc_filemap_remove_all(struct lpc_file *f);

/* f->wpins (writeback/wpin.c WC1-WC6). */
#define LPC_WPINS_CUT (1u << 31)
#define LPC_WPINS_WAITERS (1u << 30)
#define LPC_WPINS_COUNT (LPC_WPINS_WAITERS - 1)
/* Sleeps until (f->wpins & busy) == 0 (acquire).  Context: may sleep. */
void lpc_file_wpins_wait(struct lpc_file *f, uint32_t busy);
/* Wakes every sleeper of lpc_file_wpins_wait (after a change that clears
 * WAITERS). */
void lpc_file_wpins_wake(struct lpc_file *f);

#if LPC_DEBUG
/* lookup.c's checks after R3 (RESURRECT, GRACE-PERIOD; returns the page's
 * removal count) and after R4 (LOOKUP-NOT-IN-INDEX), shared with pin.c's P3
 * and P4.  Context: the read section of the lookup or pin. */
uint32_t lpc_filemap_debug_after_r3(struct lpc_file *f, uint64_t index, struct lpc_page *p);
void lpc_filemap_debug_check_in_index(struct lpc_file *f, struct lpc_page *p, uint64_t index,
				      void *_Atomic const *slot, uint32_t removals);
#endif

/* Another process grew the kernel's file to at least `seen` bytes (the
 * SQLite VFS in detect mode read them there, or fstat said so): lpc's size
 * and io.size become at least that.  Never shrinks, never calls ftruncate,
 * so a racing writer of either size only ever raises it further (CAS-max,
 * as size_extend).  Return: lpc's size. */
uint64_t lpc_filemap_size_seen(struct lpc_file *f, uint64_t seen);
/* Re-reads the kernel file's size (into io.size); lpc's size follows it
 * until lpc keeps the size itself (size_kept).  Return: lpc's size. */
uint64_t lpc_filemap_refresh_size(struct lpc_file *f);

/*
 * C.3's judgement of a short read: true when a read that stopped at byte
 * `end` of f stopped at the end of the storage's file (its size now: the
 * backend's size op or fstat, whether or not lpc keeps the size), so what
 * it did not return is a hole; false when the storage's file goes further:
 * an error cut the read, or the file grew since (writeback of a later page
 * extends it), and the missing bytes must be read again, never taken for
 * zeros.  Context: may call fstat.
 */
bool lpc_filemap_short_at_eof(struct lpc_file *f, uint64_t end);

/*
 * Reads page `index` of f into frame (a page's frame, or read.c's bounce
 * frame around the cache), judges a short count with
 * lpc_filemap_short_at_eof, and reads once more when it came short where
 * the storage's file goes on (the file may have grown between the read and
 * the size: the second read then gets the bytes).  Every read of a page
 * from storage goes through these two tries: a miss (lpc_filemap_read_one)
 * and a read around a full cache alike (one try there was -EIO from
 * lpc_pread while the flusher grew an RBD image over a hole:
 * tests/regress/regress_around_grow.c).  Counts reads, read_pages,
 * direct_fallbacks; not errors.  Return: the bytes (short only at the
 * storage's end of file), or a negative errno (-EIO: short twice where the
 * file goes on).
 */
ssize_t lpc_filemap_read_frame(struct lpc_file *f, void *frame, uint64_t index,
			       struct lpc_tcache *t);

/*
 * M4 for one page: lpc_filemap_read_frame into p's frame (p locked by the
 * caller, in the index, referenced: rule FRAME-FREED-IN-FLIGHT).  Return:
 * as lpc_filemap_read_frame.
 */
ssize_t lpc_filemap_read_one(struct lpc_file *f, struct lpc_page *p, uint64_t index,
			     struct lpc_tcache *t);

#endif /* LPC_FILEMAP_FILEMAP_H */
