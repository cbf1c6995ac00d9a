/* SPDX-License-Identifier: MIT */
/*
 * io.h - the I/O layer: a small backend interface (read, write, sync) chosen
 * per cache, and one fault-injection hook that every backend call passes
 * through, so tests can fail the Nth read or write or make it short.
 *
 * Backends:
 *  - sync: pread/pwrite/pwritev on the file's descriptor (O_DIRECT unless
 *    the file system refused it), retrying EINTR and partial transfers;
 *  - null: reads fill lpc_io_null_pattern(file id, index), writes are
 *    discarded, sync succeeds; like the kernel's null_blk, it lets tests and
 *    benchmarks measure the cache rather than the disk;
 *  - uring (uring.c): io_uring through liburing, one ring per thread and
 *    cache, the frame arena registered as fixed buffers where the kernel
 *    lets it be pinned; writeback's runs of one pass go in one submission
 *    (writev_batch).  Falls back to sync where io_uring is refused.
 *
 * Context: every call may sleep; none is made on a lookup hit.
 */
#ifndef LPC_IO_IO_H
#define LPC_IO_IO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "core/thread.h"
#include <lpc/lpc.h>

enum lpc_io_op { LPC_IO_READ = 1, LPC_IO_WRITE = 2, LPC_IO_SYNCOP = 4 };

/*
 * A fault: the ops in `ops` (a mask of enum lpc_io_op) pass untouched `skip`
 * times, then the next `count` of them (0: every one until cleared) fail with
 * -err, or, if short_bytes > 0, transfer only short_bytes and report that.
 * Only ops on files whose id equals file_id are counted when file_id != 0.
 */
struct lpc_io_fault {
	unsigned ops;
	uint64_t file_id;
	uint64_t skip;
	uint64_t count;
	int err;            /* positive errno, e.g. EIO */
	size_t short_bytes; /* > 0: a short transfer instead of an error */
};

/* The per-cache state of the hook.  Counted with atomics: I/O paths only. */
struct lpc_io_faults {
	_Atomic int armed;
	struct lpc_io_fault f;
	_Atomic uint64_t seen;  /* matching ops seen since armed */
	_Atomic uint64_t fired; /* faults delivered */
};

/*
 * The backend's view of one file: descriptor, id (st_ino: stable across opens,
 * so a null-backend pattern can be checked by anyone), its size in bytes (the
 * null backend reads short at it, as a disk does at end of file), and whether
 * the descriptor is still O_DIRECT.
 */
struct lpc_io;

struct lpc_io_file {
	struct lpc_io *dev; /* the cache's I/O: backends that keep state there */
	/* Atomic: an open that upgrades a read-only copy to read-write stores
	 * a new descriptor here while I/O may load it (filemap/file.c ZL4);
	 * the old one stays open until the file is freed, so an I/O that
	 * loaded it still has a valid descriptor. */
	_Atomic int fd;
	uint64_t id;
	_Atomic uint64_t size;
	_Atomic int direct;
	/* A file over a user backend (lpc_file_open_backend; user.c): its
	 * table, constant after open, NULL for a path's file, whose I/O goes
	 * to the cache's backend (dev->ops).  handle: as fd, an upgrade to
	 * read-write stores a new one (file.c ZL4 for names) while I/O may
	 * load the old, which stays valid until the last close releases it. */
	const struct lpc_backend_ops *user;
	_Atomic(void *) handle;
};

/*
 * True when a read of `asked` bytes on f that transferred `got` (0 < got <
 * asked) ends the transfer: on an O_DIRECT descriptor the kernel cuts a
 * read short only at the end of the file (or before an error the next read
 * would meet), and the next offset is then seldom sector-aligned, so a read
 * from it fails with EINVAL.  (Reading on did exactly that at the tail of
 * every file whose size is not a multiple of 512; through io_uring the
 * failed READ_FIXED marked its chunk unusable registered for that ring, H5
 * in uring.c, and printed "running unregistered".)  Buffered reads go on
 * until a read returns 0, as before.
 */
static inline bool lpc_io_read_ends(const struct lpc_io_file *f, size_t got, size_t asked)
{
	return got < asked && atomic_load_explicit(&f->direct, memory_order_relaxed);
}

/* iovecs per vectored write at most (the kernel's UIO_MAXIOV). */
#define LPC_IO_MAX_IOV 1024

/*
 * One run of a batched write (lpc_io_write_batch): iovcnt iovecs written at
 * off.  `todo` and `res` belong to the front and the backend (writev_batch);
 * `err` is the run's result: 0 when every byte was written.
 */
struct lpc_io_wrun {
	const struct iovec *iov;
	int iovcnt;
	uint64_t off;
	int todo;
	ssize_t res;
	int err;
};

/*
 * One run of a batched read (lpc_io_readv_batch): the whole pages iov[k] =
 * page index + k, read at off.  `todo` belongs to the front and the backend
 * (readv_batch): set while the run is the backend's to read (RQ2; a wrapper
 * may clear it to keep a run it answers itself from the backend below it);
 * `cut`, `done`, `front` and `ended` to the front alone (the hook's short
 * size; the call that reports the run's completion, RQ3; its batch; set
 * once the run is ended, RQ5: whether a run is ended is never read from
 * `todo`, which a backend may change); `res` is the run's result, as
 * lpc_io_readv returns it: bytes read (short at end of file) or negative
 * errno.
 */
struct lpc_io_rrun {
	const struct iovec *iov;
	int iovcnt;
	uint64_t off;
	uint64_t index;
	int todo;
	bool ended;
	ssize_t cut;
	ssize_t res;
	void (*done)(struct lpc_io_rrun *w);
	void *front;
};

/* A backend's readv_batch reports run w, whose `res` is now final (its
 * request completed, completions and redos included), to the front at once
 * (lpc_io_readv_batch RQ3).  w->done is NULL where a wrapper took the
 * report over; the front then ends the run when readv_batch returns. */
static inline void lpc_io_rrun_done(struct lpc_io_rrun *w)
{
	if (w->done)
		w->done(w);
}

/* The caller's end of one run of a batch (lpc_io_readv_batch RQ5): w is
 * runs[w - runs], its res final. */
typedef void lpc_io_rrun_end_fn(void *arg, struct lpc_io_rrun *w);

struct lpc_io_backend_ops {
	const char *name;
	/* Reads up to len bytes at off into buf (aligned for O_DIRECT).
	 * Return: bytes read (short only at end of file); negative errno. */
	ssize_t (*read)(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			uint64_t index);
	/* Optional (NULL: the front reads iovec by iovec).  Reads the run of
	 * whole pages iov[k] = page index + k (frames, aligned for O_DIRECT),
	 * starting at off, in one vectored request where it can, completing
	 * a partial transfer.  Return: bytes read (short only at end of file,
	 * or where a later part failed after some bytes came); negative errno
	 * when nothing was read. */
	ssize_t (*readv)(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			 uint64_t off, uint64_t index);
	ssize_t (*write)(struct lpc_io_file *f, const void *buf, size_t len,
			 uint64_t off);
	int (*sync)(struct lpc_io_file *f);
	/* Writes the iovecs (frames, aligned for O_DIRECT) at off in one
	 * vectored call where it can.  Return: bytes written, possibly short
	 * (lpc_io_write completes it); negative errno. */
	ssize_t (*writev)(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			  uint64_t off);
	/* Sets the file's size (ftruncate).  Return: 0 or negative errno. */
	int (*truncate)(struct lpc_io_file *f, uint64_t size);
	/* Optional (NULL: fstat of f->fd).  The file's size as the storage
	 * has it now.  Return: 0 or negative errno. */
	int (*size)(struct lpc_io_file *f, uint64_t *out);
	/* Optional (NULL: the front calls writev per run).  Writes every run
	 * with `todo` set, as writev would, submitting them together where
	 * the backend can; sets each such run's `res` (bytes written, possibly
	 * short, or negative errno).  The front completes short runs. */
	void (*writev_batch)(struct lpc_io_file *f, struct lpc_io_wrun *runs, int nruns);
	/* Optional (NULL: the front reads run by run, as lpc_io_readv).
	 * Reads every run with `todo` set, as readv would (each completed
	 * to its end or end of file), submitting them together where the
	 * backend can (io_uring: one submission on the calling thread's ring,
	 * every completion reaped by that thread before it returns); sets each
	 * such run's `res` and reports it with lpc_io_rrun_done as soon as it
	 * is final, while other runs are still at the device (RQ3), after
	 * which the run is no longer the backend's (todo may be cleared).  A
	 * run the backend must read again (EINTR, a partial transfer) is
	 * reported after the redo. */
	void (*readv_batch)(struct lpc_io_file *f, struct lpc_io_rrun *runs, int nruns);
};

extern const struct lpc_io_backend_ops lpc_io_sync_ops;
extern const struct lpc_io_backend_ops lpc_io_null_ops;
extern const struct lpc_io_backend_ops lpc_io_uring_ops;
/* The adapter of user backends (user.c): every file with io.user set does
 * its I/O through it, whatever the cache's backend. */
extern const struct lpc_io_backend_ops lpc_io_user_ops;

/* A cache's I/O: its backend and its fault hook.  The cache embeds one; each
 * file points at it (filemap.h), so the I/O layer never needs the cache. */
struct lpc_io {
	const struct lpc_io_backend_ops *ops;
	struct lpc_io_faults faults;
	/* The uring backend's (uring.c), set by lpc_io_uring_init; read-only
	 * after it but for `unregistered`. */
	struct lpc_towner *owner;  /* per-thread blocks: each keeps its ring */
	unsigned char *arena;      /* the frame arena: registered buffers */
	size_t arena_bytes;
	_Atomic int unregistered;  /* 1: registration was refused; later rings
				    * do not try again */
	void *reg;                 /* the cache's own ring, holding the arena's
				    * registration that threads' rings clone */
	int reg_state;             /* under reg_lock: 0 no table yet, 1 the
				    * sparse table made, -errno refused */
	bool no_replace;           /* under reg_lock: the kernel refused
				    * IORING_REGISTER_DST_REPLACE (6.12): H3
				    * re-clones into an emptied table */
	int reg_why;               /* under reg_lock: which step set reg_state
				    * < 0 (uring.c's enum why, for the line on
				    * stderr) */
	pthread_mutex_t reg_lock;
	unsigned chunk_shift;      /* registered chunks of 2^chunk_shift bytes */
	size_t nchunks;
	unsigned char *chunk_state; /* under reg_lock, per chunk: 0 not
				     * registered, 1 registered on reg, 2 refused */
	_Atomic size_t pinned_end; /* end of the highest chunk registered */
};

/* The backend of f: the adapter for a file over a user backend, else the
 * cache's. */
static inline const struct lpc_io_backend_ops *lpc_io_ops(const struct lpc_io *io,
							   const struct lpc_io_file *f)
{
	return f->user ? &lpc_io_user_ops : io->ops;
}

/* A user backend's table has read_batch (lpc.h BK7): version 2 or later,
 * the field set.  A version-1 table ends before the field: never read. */
static inline bool lpc_io_user_batches(const struct lpc_backend_ops *u)
{
	return u->version >= LPC_BACKEND_V2 && u->read_batch;
}

/* True when f's backend submits a batch's runs together (readv_batch):
 * then gathering runs into one lpc_io_readv_batch puts them at the device
 * at once.  False: a batch would be read run after run (sync: one preadv
 * each), so callers read and complete each run alone, and readahead keeps
 * one run per thread (ra_worker.c Q2), whose threads are then what overlaps
 * the reads.  The user adapter has readv_batch for every table but batches
 * only for one with read_batch (user.c UR1). */
static inline bool lpc_io_batches(const struct lpc_io *io, const struct lpc_io_file *f)
{
	if (f->user)
		return lpc_io_user_batches(f->user);
	return io->ops->readv_batch != NULL;
}

/*
 * Reads one page through io's backend, passing the fault hook first.  Moves the file off O_DIRECT (counted by the caller through *fellback)
 * when the kernel answers EINVAL to a direct read, and retries buffered.
 * Return: bytes read or negative errno.
 */
ssize_t lpc_io_read(struct lpc_io *io, struct lpc_io_file *f, void *buf,
		    size_t len, uint64_t off, uint64_t index, int *fellback);

/*
 * Reads a run of whole pages, iov[k] holding page index + k, with one backend
 * request (readv; the run of a multi-page miss, filemap/run.c).  The fault
 * hook is passed once for the whole run (op LPC_IO_READ: an error fails every
 * page of it; a short transfer shortens the result), as a device fails or
 * cuts one request.  EINVAL on an O_DIRECT file moves it off O_DIRECT, as
 * lpc_io_read does.  Return: bytes read (short at end of file) or negative
 * errno.
 */
ssize_t lpc_io_readv(struct lpc_io *io, struct lpc_io_file *f, const struct iovec *iov,
		     int iovcnt, uint64_t off, uint64_t index, int *fellback);

/*
 * Reads nruns runs as lpc_io_readv reads each (the fault hook is passed
 * once per run, in run order, before any read: an error fails that run
 * alone, a short transfer shortens that run's result; EINVAL on an O_DIRECT
 * file moves it off O_DIRECT and the run is read again buffered), but hands
 * the runs the hook let through to the backend together (readv_batch: one
 * io_uring submission on this thread's ring, so every run is at the device
 * at once; sync and null read them in turn).  Each run's result is in its
 * `res`: bytes read (short only at end of file, or where a later part
 * failed after some bytes came), or negative errno; one run's error is no
 * other run's.  Each run is ended (end(arg, w), if end is not NULL) once,
 * as soon as its own result is final: a run whose request completes is
 * not held for the batch's slowest run (io.c RQ1-RQ5).  end is called on
 * this thread, possibly while other runs of the batch are in flight on
 * its ring: it must do no I/O through io (its U5 does none).  *fellback
 * as lpc_io_readv's.
 */
void lpc_io_readv_batch(struct lpc_io *io, struct lpc_io_file *f, struct lpc_io_rrun *runs,
			int nruns, int *fellback, lpc_io_rrun_end_fn *end, void *arg);

/*
 * Writes the iovecs at off through io's backend, passing the fault hook
 * first (op LPC_IO_WRITE: an error fails the whole write; a short transfer
 * writes only short_bytes, rounded down to 512 on an O_DIRECT file, and
 * reports that).  A short write is completed: the rest is written again
 * until all of it is on the file or a call fails (a write that makes no
 * progress is -EIO).  Moves the file off O_DIRECT on EINVAL, as reads do.
 * Return: 0 when every byte was written; negative errno (-EIO, -ENOSPC, ...)
 * otherwise, with an unknown part written.  *vectored counts the backend
 * calls made.
 */
int lpc_io_write(struct lpc_io *io, struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
		 uint64_t off, unsigned *calls);

/*
 * Writes nruns runs as lpc_io_write writes each (the fault hook is passed
 * once per run, a short run is completed, EINVAL on O_DIRECT moves the file
 * off it), but hands the runs the hook let through to the backend together
 * (writev_batch: one io_uring submission).  Each run's result is in its
 * `err`.  Return: the first run's error in run order, or 0.  *calls counts
 * the backend writes (one per run, plus completions).
 */
int lpc_io_write_batch(struct lpc_io *io, struct lpc_io_file *f, struct lpc_io_wrun *runs,
		       int nruns, unsigned *calls);

/*
 * Makes io an io_uring one (uring.c): makes the cache's own ring (the probe:
 * it later holds the arena's registration), then sets io->ops to
 * lpc_io_uring_ops.  Threads make
 * their rings on their first I/O, in their blocks of `owner`.
 * Return: 0; a negative errno when the kernel refuses io_uring (-ENOSYS,
 * -EPERM, -EACCES under seccomp or io_uring_disabled; -ENOMEM), io
 * unchanged: the caller uses sync and counts the fallback.
 */
int lpc_io_uring_init(struct lpc_io *io, struct lpc_towner *owner, void *arena,
		      size_t arena_bytes);

/* Closes the cache's own ring (lpc_io_uring_init).  Context: every thread's
 * ring is closed (lpc_towner_orphan), the arena still mapped. */
void lpc_io_uring_destroy(struct lpc_io *io);

/* This thread's ring for io, made now if it has none (tests).  Return: 1 if
 * the arena's first chunk is registered with it (registered now if it was
 * not yet: uring.c H3), 0 if it runs unregistered, -1 if the thread has no
 * ring (sync) or io is not an io_uring one. */
int lpc_io_uring_registered(struct lpc_io *io);

/* Bytes of the arena from its start to the end of the highest chunk that
 * registration pinned (resident from then on); 0 for other backends.
 * Context: any; a relaxed read. */
size_t lpc_io_uring_pinned_bytes(struct lpc_io *io);

/* fdatasync through the hook (op LPC_IO_SYNCOP).  Return: 0 or negative errno. */
int lpc_io_sync(struct lpc_io *io, struct lpc_io_file *f);

/* ftruncate through the backend (no fault).  Return: 0 or negative errno. */
int lpc_io_truncate(struct lpc_io *io, struct lpc_io_file *f, uint64_t size);
/* The file's size as the storage has it now (the backend's size op, or
 * fstat).  Return: 0 or negative errno. */
int lpc_io_size(struct lpc_io *io, struct lpc_io_file *f, uint64_t *out);

/* Arms (f != NULL) or clears (f == NULL) io's fault hook.
 * Return: 0; -EINVAL for a fault with no ops or no error and no short size. */
int lpc_io_fault_set(struct lpc_io *io, const struct lpc_io_fault *f);
/* Faults delivered since the hook was last armed. */
uint64_t lpc_io_faults_fired(struct lpc_io *io);

/*
 * The null backend's data: fills len bytes of buf for page `index` of file
 * `id`.  The first 16 bytes are the stamp {id, index} (two uint64_t); then
 * every 64-byte line starts with a word of both and its offset, and the
 * other bytes are a fill byte of both (null.c), so a test can check any byte
 * of any page.
 */
void lpc_io_null_pattern(uint64_t id, uint64_t index, void *buf, size_t len);

#endif /* LPC_IO_IO_H */
