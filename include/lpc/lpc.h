/* SPDX-License-Identifier: MIT */
/*
 * lpc.h - the public API of lpc, a lockless page cache for user space.
 *
 * This header is the contract.  docs/design.md explains the protocols behind
 * it and the man pages (lpc(7), lpc_page_get(3), ...) say the same at length.
 *
 * Conventions (as liburing): every function returns 0 or a count on success and
 * a negative errno on failure; errno is never set; objects are opaque and come
 * back through out-parameters.  Library code never aborts and never exits.
 * No function fails with -EINTR except where lpc_file_open passes on
 * open(2)'s; a sleep in the page lock resumes by itself after a signal.
 *
 * Every function below says in a `Context:` line whether it may sleep (block
 * in the kernel: a mutex, a futex, a system call), do I/O, or wait for an RCU
 * grace period, and which internal lock it may take (the lock order is in
 * src/cache/cache.h).  Rules that hold for every function:
 *  - Threads: any thread may call any function.  A thread is registered with
 *    RCU on its first call into a cache, which allocates its per-thread block
 *    (this is the -ENOMEM that calls on a file or cache can return) and takes
 *    an internal lock once; it is unregistered when it exits.  A user never
 *    calls liburcu.  A program that uses liburcu's memb flavour itself must
 *    not call lpc_page_get, lpc_pread, lpc_page_alloc, lpc_file_close or
 *    lpc_cache_destroy inside its own read section: they may wait for a grace
 *    period.
 *  - Signal handlers: only lpc_config_init, lpc_page_data and lpc_version are
 *    async-signal-safe.  Every other function takes locks or allocates.
 *  - Re-entry: lpc calls no user code (no callbacks), so no lpc function runs
 *    inside another; a signal handler must not call into lpc either.
 *  - Lifetimes: no function may be called on a cache while another thread is
 *    inside lpc_cache_destroy() for it, nor on a file after its last close
 *    has returned.  Pages keep their own lifetime: see B.2.
 *
 * Ordering guarantees under concurrency.  Each is checked by the test named
 * after it (tests/unit/test_guarantees.c: g_a1_..., or the test given).
 *
 * A. Lookups (lpc_page_find, lpc_page_get)
 *  A.1 A page returned for (f, index) was in f's cache at `index` at some
 *      instant during the call, and its frame holds that page's data as read
 *      from the file by a read that completed before the call returned.
 *  A.2 lpc_page_find does no I/O, does not sleep and waits for nobody: a page
 *      being read returns -EAGAIN at once, an absent one -ENOENT.
 *  A.3 While lpc_invalidate runs on the same range, lpc_page_find and
 *      lpc_page_get return either a page that this invalidate does not drop
 *      (the reference they hold makes it skip the page), or, for find,
 *      -ENOENT; never a page the invalidate dropped.
 *  A.4 While the last lpc_file_close of f runs, an lpc_page_find on f that
 *      another thread (one that had called lpc before) began earlier returns
 *      -ENOENT or a page that stays valid until its put (B.2); the struct
 *      lpc_file is freed only after an RCU grace period, so it is never
 *      freed under a lookup.  Any other call on f racing the last close, and
 *      any call that begins after it began, is the caller's bug
 *      (tests/regress/regress_file_close.c).
 *  A.5 One cached copy per file: every open of one file in a cache returns
 *      the same lpc_file, so two opens never see two copies of a page.
 *
 * B. References
 *  B.1 lpc_invalidate never drops a page that a user holds (a reference from
 *      find, get or alloc), nor one that is locked, dirty or under writeback.
 *  B.2 A page held when it leaves the cache (lpc_invalidate cannot, but the
 *      last close and a failed read can) stays valid until its lpc_page_put:
 *      the same frame, the same data, never reused for another (file, index)
 *      or handed out by lpc_page_alloc before the put.
 *  B.3 Every reference is dropped by exactly one lpc_page_put, from any
 *      thread, including one that never called lpc before.
 *  B.4 lpc_cache_destroy with a reference held (cached or private page)
 *      returns -EBUSY and changes nothing: the cache keeps working.
 *
 * C. Misses and reads (lpc_page_get, lpc_pread)
 *  C.1 Exactly one read per page, however many threads miss on it at once:
 *      the others wait on the page and share the outcome of that read.
 *  C.2 When that read fails, the reader and every thread waiting on the page
 *      get -EIO (the reader: the backend's errno) from lpc_page_get, and
 *      lpc_pread returns it if it was the first page, else ends short before
 *      it; nothing is cached; the next call reads the page again.
 *  C.3 Data a call returns is never zeros that stand for data the file has:
 *      a read shorter than a page where the file does not end is -EIO.
 *  C.4 lpc_pread never fails for want of a frame: what it cannot cache it
 *      reads around the cache (counted in read_around).
 *
 * D. Removal
 *  D.1 lpc_invalidate returns the number of pages it dropped; a page in the
 *      range that nobody held or locked while the call ran is gone when it
 *      returns: a lookup started later finds it only if a get read it again.
 *  D.2 After the last close returns, none of the file's pages is cached: the
 *      next open of the file reads every page again.
 *
 * E. Frames
 *  E.1 lpc_page_get and lpc_page_alloc return -ENOMEM only when no frame is
 *      free anywhere: not on the shared list, not on another thread's private
 *      list, not waiting for a grace period.  Until reclaim exists, a frame
 *      in a file's cache is not free: drop it with lpc_invalidate.
 *  E.2 A thread that exits gives its private free frames back: none is lost.
 *
 * F. Counters (lpc_stats)
 *  F.1 Each count is exact once the threads that count it are quiet (have
 *      returned from their calls); lookups == hits + misses in every read.
 *      frames is constant; frames_free is a gauge, exact when all is quiet.
 *
 * G. The page lock
 *  G.1 lpc_page_lock excludes every other holder, and what a holder wrote
 *      before lpc_page_unlock is visible to the next one after its lock.
 *  G.2 No wake-up is lost: a thread sleeping in lpc_page_lock or waiting for
 *      a read in flight wakes once the lock is released.
 *
 * H. Optimistic reads (lpc_pread, lpc_page_read; lockless mode)
 *  H.1 The bytes lpc_pread returns for a page, and the view of the run of
 *      lpc_page_read's function that it returns 0 for, are one version of
 *      the page as cached at `index` at an instant during the call: never
 *      a mix of two versions (a write in progress), never another page's
 *      data (a frame reused during the call), never a page that had left
 *      the cache (tests/stress/stress_optimistic.c).
 *  H.2 A hit of either call takes no reference and writes no shared line
 *      but, once, the page's REFERENCED bit: readers of one hot page do not
 *      slow each other down.  When the optimistic try fails (the page is
 *      absent, being read or written, or left the index meanwhile), the call
 *      falls back, once, to the referenced path (as lpc_page_get): it always
 *      completes, however busy the writers (counted in optimistic_fallbacks)
 *      (tests/unit/test_page_read.c: h2_hit_takes_no_reference,
 *      h1_waits_for_writer).
 */
#ifndef LPC_LPC_H
#define LPC_LPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LPC_VERSION_MAJOR 0
#define LPC_VERSION_MINOR 1
#define LPC_VERSION_PATCH 0
#define LPC_VERSION_STRING "0.1.0"

/*
 * The version of the library loaded at run time ("MAJOR.MINOR.PATCH"), which
 * may be newer than the LPC_VERSION_* this program was compiled with.
 * Return: a static string, never NULL.  Context: any, signal handlers included.
 */
const char *lpc_version(void);

struct lpc_cache;
struct lpc_file;
struct lpc_page;

/* I/O backends (lpc_config.io_backend). */
enum lpc_io_backend {
	LPC_IO_SYNC = 0, /* pread/pwrite on an O_DIRECT descriptor */
	LPC_IO_NULL = 1, /* reads fill a pattern of (file, index); no disk */
};

/* Index protection (lpc_config.lookup_mode). */
enum lpc_lookup_mode {
	LPC_LOOKUP_LOCKLESS = 0, /* RCU walk + speculative references (default) */
	LPC_LOOKUP_LOCKED = 1,   /* a per-file rwlock around the index ("vanilla") */
};

struct lpc_config {
	size_t cache_bytes;   /* frame budget; default 64 MiB; at least one page */
	size_t page_size;     /* power of two, 512 B .. 2 MiB; default 4 KiB */
	int io_backend;       /* enum lpc_io_backend; default LPC_IO_SYNC */
	int lookup_mode;      /* enum lpc_lookup_mode; default LPC_LOOKUP_LOCKLESS */
	uint64_t reserved[8]; /* must be zero (lpc_config_init does it) */
};

/*
 * Counters.  Kept per thread and summed on read, so reading them is not a
 * snapshot: each field is exact once the threads that count it are quiet
 * (F.1).
 */
struct lpc_stats {
	uint64_t lookups;          /* lpc_page_find/lpc_page_get calls */
	uint64_t hits;             /* ... that found an UPTODATE page */
	uint64_t misses;           /* ... that found nothing or a page in flight */
	uint64_t retries;          /* speculative references that had to retry */
	uint64_t reads;            /* page reads issued to the backend */
	uint64_t read_bytes;       /* bytes those reads returned */
	uint64_t read_errors;      /* page reads that failed */
	uint64_t direct_fallbacks; /* files or reads moved off O_DIRECT */
	uint64_t read_around;      /* pages lpc_pread read around a full cache */
	uint64_t alloc_failures;   /* frame allocations that found no frame */
	uint64_t invalidated;      /* pages dropped by lpc_invalidate */
	uint64_t frames;           /* frames in the cache (gauge) */
	uint64_t frames_free;      /* frames on free lists (gauge, approximate) */
	/* optimistic reads */
	uint64_t optimistic_hits;      /* pages lpc_pread and lpc_page_read read
					* without a reference (also in hits) */
	uint64_t optimistic_fallbacks; /* optimistic tries that took the
					* referenced path (counted there too) */
};

/*
 * Fills *cfg with the defaults; NULL is ignored.
 * Context: any, signal handlers included; no lock, no allocation.
 */
void lpc_config_init(struct lpc_config *cfg);

/*
 * Creates a cache: one descriptor array and one frame arena, sized by cfg.
 * Return: 0 with *out; -EINVAL for a NULL argument, a page size that is not a
 * power of two in 512 B .. 2 MiB, a budget of less than one page or of more
 * than 2^32 pages, an unknown backend or mode, or non-zero reserved fields;
 * -ENOMEM when the cache or its arena cannot be allocated or mapped.
 * Context: may sleep (malloc, mmap); no I/O, no grace period, no internal
 * lock; does not register the thread.
 */
int lpc_cache_create(const struct lpc_config *cfg, struct lpc_cache **out);

/*
 * Closes every file still open and frees the cache, once nobody holds a page.
 * Return: 0; -EINVAL for NULL; -EBUSY, with nothing changed, while a user
 * still holds a page reference, cached or private (every lpc_page_get,
 * lpc_page_find and lpc_page_alloc needs its lpc_page_put) (B.4).
 * Context: may sleep; closes the files' descriptors; waits for every pending
 * RCU callback of the cache (rcu_barrier, which includes a grace period);
 * takes files_lock, every index lock, lpc_threads_lock and free_lock.  No
 * other thread may use the cache or its files during or after the call.
 */
int lpc_cache_destroy(struct lpc_cache *c);

/*
 * Opens path for caching.  oflags are open(2)'s (O_RDONLY, O_RDWR, O_CREAT,
 * O_EXCL, O_TRUNC; lpc adds O_DIRECT and O_CLOEXEC itself).  Opening a file
 * that is already open in this cache returns the same lpc_file (one cached
 * copy per file, A.5), counted: each open needs its own close.  Opening it
 * read-write when it was read-only upgrades the shared descriptor.  A file
 * system that refuses O_DIRECT (tmpfs) is read with buffered I/O, counted in
 * direct_fallbacks.  O_WRONLY opens read-write: lpc reads what it caches.
 * With LPC_IO_NULL the file must still exist: its size bounds reads, its
 * contents are never read.
 * Return: 0 with *out; -EINVAL for NULL arguments, O_APPEND/O_PATH/O_DIRECTORY,
 * or a path that is not a regular file; -EBUSY for O_TRUNC on a file this
 * cache already holds; -ENOMEM when the thread's block or the file cannot be
 * allocated; any negative errno of open(2), fstat(2) or dup3(2) (-ENOENT,
 * -EACCES, -EMFILE, -EINTR, ...), passed on, not retried.
 * Context: may sleep (open(2), stat(2), malloc); no page I/O, no grace
 * period; takes files_lock, and lpc_threads_lock on the thread's first call.
 */
int lpc_file_open(struct lpc_cache *c, const char *path, int oflags, mode_t mode,
		  struct lpc_file **out);

/*
 * Drops one open.  The last close removes the file's pages from the cache:
 * pages users still hold stay valid until their lpc_page_put, but are no
 * longer cached (B.2, D.2); then it closes the descriptor.  What close needs
 * is allocated at open, so it cannot fail for want of memory.
 * Return: 0; -EINVAL for NULL.
 * The last close and other calls on f (A.4):
 *  - a call on f that begins after its last close has begun is a bug (f may
 *    be freed memory); so is any call but lpc_page_find running on f when
 *    the last close begins;
 *  - an lpc_page_find on f that began before the last close began, on a
 *    thread that had called lpc before, is safe: f is freed only after an
 *    RCU grace period, once every such lookup has left.  It returns 0 with a
 *    referenced, UPTODATE page holding the file's data (which the close may
 *    have removed from the cache: it stays valid until lpc_page_put), or
 *    -ENOENT; or, as any lookup, -ENOMEM on the thread's first call on this
 *    cache (checked by tests/regress/regress_file_close.c).
 * Context: may sleep (mutexes, close(2)); no read I/O; does not wait for a
 * grace period: the pages and the struct lpc_file are freed after one by
 * call_rcu; takes files_lock, then the file's index lock and free_lock; not
 * from a signal handler.
 */
int lpc_file_close(struct lpc_file *f);

/*
 * Looks up page `index` of f without I/O and without sleeping (A.2).
 * Return: 0 with *out referenced and UPTODATE (A.1); -ENOENT if not cached;
 * -EAGAIN if its read is in flight (or has just failed); -EINVAL for NULL
 * arguments; -ENOMEM on the thread's first call on the cache when its block
 * cannot be allocated.
 * Context: lockless mode takes no lock and writes no shared line but the
 * page's reference count: an RCU read section, retried (counted in retries)
 * while the page is being removed; LOCKED mode holds the file's index rwlock
 * for reading.  The thread's first call on the cache takes lpc_threads_lock
 * and allocates.  Never waits for a grace period.
 */
int lpc_page_find(struct lpc_file *f, uint64_t index, struct lpc_page **out);

/*
 * Looks up page `index` of f, reading it on a miss and waiting for a read in
 * flight (C.1).  flags must be 0.
 * Return: 0 with *out referenced and UPTODATE (A.1); -ENXIO for a page wholly
 * past the end of the file; -EIO (or, for the thread that issued the read,
 * the backend's errno) when the read failed, in which case nothing is cached
 * and the next call reads again (C.2); -ENOMEM when no frame is free anywhere
 * (E.1) or the thread's block cannot be allocated; -EINVAL for NULL arguments
 * or unknown flags.
 * Context: may sleep and do I/O: the read (pread(2), and fstat(2) near the
 * end of the file), a futex wait on a page in flight; may wait for a grace
 * period when no frame is free (the allocator collects frames in transit,
 * one thread at a time under reclaim_lock); takes the file's index lock for
 * the insert, free_lock, and lpc_threads_lock on the first call.
 */
int lpc_page_get(struct lpc_file *f, uint64_t index, unsigned flags,
		 struct lpc_page **out);

/*
 * Drops one reference (B.3).  The last put of a cached page that has left
 * the cache frees its frame after an RCU grace period; the put of a private
 * page (lpc_page_alloc) frees it at once with plain stores.  NULL is ignored.
 * Context: any thread, but not a signal handler; never waits for I/O or a
 * grace period; the last put may take free_lock (short) and queue an RCU
 * callback; a thread's first call takes lpc_threads_lock and allocates.
 */
void lpc_page_put(struct lpc_page *p);

/*
 * The page's frame: page_size bytes, aligned for O_DIRECT, valid while the
 * caller holds its reference.  A cached page's frame is read-only to its
 * users (optimistic readers rely on it: every change of a cached page's
 * data goes through lpc's write path, which brackets it for them); a
 * private page's (lpc_page_alloc) is its owner's to write.  NULL for NULL.
 * Context: any, signal handlers included.
 */
void *lpc_page_data(const struct lpc_page *p);

/*
 * Page lock: a sleeping lock (futex) in the page's flags word (G.1, G.2).
 * The caller holds a reference.  Not recursive: locking a page this thread
 * holds locked deadlocks.  The thread that locked it unlocks it.  NULL is
 * ignored.  lpc_invalidate skips a locked page (B.1); a page being read is
 * locked by the reader until the read ends.
 * Context: lpc_page_lock may sleep (futex) for as long as the holder keeps
 * it, and a page in flight is held across its read; no other lock is taken.
 * lpc_page_unlock never sleeps (it may wake sleepers, a system call).  Never
 * lock a page while another thread may wait for this one to return (no lock
 * order is enforced between pages).
 */
void lpc_page_lock(struct lpc_page *p);
void lpc_page_unlock(struct lpc_page *p);

/*
 * Allocates a private page: referenced once, in no file, contents undefined.
 * Nobody else can reach it; freeing it (lpc_page_put) takes no atomic
 * operation.
 * Return: 0 with *out; -ENOMEM when no frame is free anywhere (E.1); -EINVAL
 * for NULL.
 * Context: may sleep and wait for a grace period when no frame is free
 * (reclaim_lock, as lpc_page_get); no I/O; free_lock; lpc_threads_lock on
 * the thread's first call.
 */
int lpc_page_alloc(struct lpc_cache *c, struct lpc_page **out);

/*
 * Reads up to len bytes at off through the cache, as pread(2): short at the
 * end of the file, 0 at or past it or for len 0.  Pages that cannot be cached
 * because every frame is held are read around the cache (counted in
 * read_around, C.4).
 * Return: the bytes read; -EINVAL for a NULL f, or a NULL buf with len > 0;
 * -EIO (or the backend's errno) if the first page failed (a later failure
 * ends the read short, C.2); -ENOMEM when the thread's block, or the bounce
 * buffer to read the first page around the cache, cannot be allocated.
 * Each page's bytes are one version of it (H.1).
 * Context: a cached page is copied optimistically, without a reference, a
 * lock or a shared write (H.2); any other page as lpc_page_get, page after
 * page; the read-around allocates.
 */
ssize_t lpc_pread(struct lpc_file *f, void *buf, size_t len, uint64_t off);

/*
 * Drops the clean, unlocked pages of f that nobody holds and that overlap
 * [off, off + len); len 0 means to the end of the file (B.1, D.1).
 * Return: the number of pages dropped (at most INT32_MAX counted); -EINVAL for
 * NULL; -ENOMEM on the thread's first call when its block cannot be
 * allocated.
 * Context: may sleep (the file's index lock, taken per page); no I/O; never
 * waits for a grace period: the dropped frames are freed after one by
 * call_rcu (free_lock).  lpc_page_find may run beside it (A.3).
 */
int lpc_invalidate(struct lpc_file *f, uint64_t off, uint64_t len);

/*
 * The function lpc_page_read runs on a page: data is the page's frame, len
 * the cache's page size, arg the caller's.
 */
typedef void lpc_page_read_fn(const void *data, size_t len, void *arg);

/*
 * Reads page `index` of f optimistically (H.1, H.2): runs fn(data, len, arg)
 * on the cached page without taking a reference, then validates that the
 * page did not change, leave the cache or get reused while fn ran.  When
 * that fails, or the page is not cached, it gets the page as lpc_page_get
 * does (reading it on a miss) and runs fn again on the held page: under its
 * page lock if a writer is changing it.  flags must be 0.
 * Rules for fn, which runs inside lpc's RCU read section:
 *  - it may run more than once (at most three times); only the last run
 *    counts, so it writes its results to arg, overwriting earlier runs';
 *  - it must not write the page, and must tolerate a torn view: the bytes
 *    may mix two versions or come from a page being reused, so it must not
 *    follow pointers or loop on lengths read from the page without bounds
 *    checks, and must not act on what it read before the call returns 0;
 *  - it may not block, sleep, or call lpc (nor liburcu); it should be short:
 *    a grace period (frees, reclaim) waits for it.
 * Return: 0 when fn's last run saw one version of the page as cached at
 * `index` (H.1); -ENXIO for a page wholly past the end of the file; -EIO (or
 * the backend's errno) when reading it failed (C.2); -ENOMEM when no frame is
 * free anywhere (E.1) or the thread's block cannot be allocated; -EINVAL for
 * a NULL f or fn, or unknown flags.  On an error fn may have run, on a view
 * that is not valid.
 * Context: a hit takes no lock, writes no shared line (H.2) and never
 * sleeps; the fallback is lpc_page_get's context (may sleep, do I/O and
 * wait for a grace period) plus the page lock; LOCKED mode always takes the
 * fallback.  Not from a signal handler.
 */
int lpc_page_read(struct lpc_file *f, uint64_t index, unsigned flags, lpc_page_read_fn *fn,
		  void *arg);

/*
 * Sums the counters of every thread into *out (F.1).  NULL arguments are
 * ignored.
 * Context: may sleep (lpc_threads_lock, then free_lock); no I/O, no grace
 * period; does not register the thread.
 */
void lpc_stats(struct lpc_cache *c, struct lpc_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* LPC_LPC_H */
