/* SPDX-License-Identifier: MIT */
/*
 * lpc.h - the public API of lpc, a lockless page cache for user space.
 *
 * Conventions (as liburing): every function returns 0 or a count on success and
 * a negative errno on failure; errno is never set; objects are opaque and come
 * back through out-parameters.  Library code never aborts and never exits.
 *
 * Threads: any thread may call any function.  A thread is registered with RCU
 * lazily on its first call into lpc and unregistered when it exits; a user never
 * calls liburcu.  No function may be called on a cache while another thread is
 * inside lpc_cache_destroy() for it, nor on a file after its last close.
 *
 * See docs/ (and DESIGN.md of the project) for the protocols behind these calls.
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
 * snapshot: each field is exact once the threads that count it are quiet.
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
};

/* Fills *cfg with the defaults.  Context: any. */
void lpc_config_init(struct lpc_config *cfg);

/*
 * Creates a cache: one descriptor array and one frame arena, sized by cfg.
 * Return: 0; -EINVAL for a NULL argument, a bad page size, a budget of less
 * than one page, an unknown backend or mode, or non-zero reserved fields;
 * -ENOMEM when the arena cannot be mapped.
 */
int lpc_cache_create(const struct lpc_config *cfg, struct lpc_cache **out);

/*
 * Closes every file still open and frees the cache.
 * Return: 0; -EINVAL for NULL; -EBUSY, with nothing changed, while a user
 * still holds a page reference (every lpc_page_get needs its lpc_page_put).
 * Nothing else: destroy allocates nothing (a thread lpc has not seen, or one
 * that cannot have lpc's thread key, is registered with RCU for the call).
 * Context: may sleep; waits for RCU callbacks (rcu_barrier); not from a
 * signal handler, nor inside any other lpc call.
 */
int lpc_cache_destroy(struct lpc_cache *c);

/*
 * Opens path for caching.  oflags are open(2)'s (O_RDONLY, O_RDWR, O_CREAT,
 * O_EXCL, O_TRUNC; lpc adds O_DIRECT and O_CLOEXEC itself).  Opening a file
 * that is already open in this cache returns the same lpc_file (one cached
 * copy per file), counted: each open needs its own close.  A file system that
 * refuses O_DIRECT (tmpfs) is read with buffered I/O, counted in
 * direct_fallbacks.  O_WRONLY opens read-write: lpc reads what it caches.
 * With LPC_IO_NULL the file must still exist: its size bounds reads, its
 * contents are never read.
 * Return: 0; -EINVAL for NULL arguments, O_APPEND/O_PATH/O_DIRECTORY, or a
 * path that is not a regular file;
 * -EBUSY for O_TRUNC on a file this cache already holds; -ENOMEM; any
 * negative errno of open(2) or fstat(2).
 */
int lpc_file_open(struct lpc_cache *c, const char *path, int oflags, mode_t mode,
		  struct lpc_file **out);

/*
 * Drops one open.  The last close removes the file's pages from the cache:
 * pages users still hold stay valid until their lpc_page_put, but are no
 * longer cached.  Return: 0; -EINVAL for NULL.  It cannot fail otherwise:
 * what close needs is allocated at open.
 * The last close and other calls on f:
 *  - a call on f that begins after its last close has begun is a bug (f may
 *    be freed memory); so is any call but lpc_page_find running on f when
 *    the last close begins;
 *  - an lpc_page_find on f that began before the last close began is safe:
 *    f is freed only after an RCU grace period, once every such lookup has
 *    left.  It returns 0 with a referenced, UPTODATE page holding the
 *    file's data (which the close may have removed from the cache: it stays
 *    valid until lpc_page_put), or -ENOENT; or, as any lookup, -ENOMEM on
 *    the thread's first call (checked by tests/unit/test_file_close.c).
 * Context: may sleep (locks); never waits for I/O or a grace period (the
 * frees are deferred); not from a signal handler.
 */
int lpc_file_close(struct lpc_file *f);

/*
 * Looks up page `index` of f without I/O and without sleeping.
 * Return: 0 with *out referenced and UPTODATE; -ENOENT if not cached;
 * -EAGAIN if its read is in flight; -EINVAL for NULL arguments.
 */
int lpc_page_find(struct lpc_file *f, uint64_t index, struct lpc_page **out);

/*
 * Looks up page `index` of f, reading it on a miss and waiting for a read in
 * flight.  flags must be 0.
 * Return: 0 with *out referenced and UPTODATE; -ENXIO for a page wholly past
 * the end of the file; -EIO (or the backend's errno) when the read failed, in
 * which case nothing is cached and the next call reads again; -ENOMEM when no
 * frame is free; -EINVAL for NULL arguments or unknown flags.
 */
int lpc_page_get(struct lpc_file *f, uint64_t index, unsigned flags,
		 struct lpc_page **out);

/* Drops one reference.  Context: any; never waits for I/O or a grace period
 * (the last put of a cached page may take a short internal lock).  NULL is
 * ignored. */
void lpc_page_put(struct lpc_page *p);

/* The page's frame: page_size bytes, aligned for O_DIRECT. */
void *lpc_page_data(const struct lpc_page *p);

/*
 * Page lock: a sleeping lock (futex) in the page's flags word.  The caller
 * holds a reference.  Not recursive.  lpc_page_lock may sleep.
 */
void lpc_page_lock(struct lpc_page *p);
void lpc_page_unlock(struct lpc_page *p);

/*
 * Allocates a private page: referenced once, in no file, contents undefined.
 * Freeing it (lpc_page_put) takes no atomic operation: nobody else can see it.
 * Return: 0; -ENOMEM when no frame is free; -EINVAL for NULL.
 */
int lpc_page_alloc(struct lpc_cache *c, struct lpc_page **out);

/*
 * Reads up to len bytes at off through the cache, as pread(2): short at the
 * end of the file, 0 at or past it.  Pages that cannot be cached because every
 * frame is held are read around the cache (counted in read_around).
 * Return: the bytes read; -EINVAL for NULL arguments; -EIO (or the backend's
 * errno) if the first page failed (a later failure ends the read short).
 */
ssize_t lpc_pread(struct lpc_file *f, void *buf, size_t len, uint64_t off);

/*
 * Drops the clean, unlocked pages of f that nobody holds and that overlap
 * [off, off + len); len 0 means to the end of the file.
 * Return: the number of pages dropped; -EINVAL for NULL.
 */
int lpc_invalidate(struct lpc_file *f, uint64_t off, uint64_t len);

/* Sums the counters of every thread into *out.  NULL arguments are ignored. */
void lpc_stats(struct lpc_cache *c, struct lpc_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* LPC_LPC_H */
