/* SPDX-License-Identifier: MIT */
/*
 * uring.c - the io_uring backend (liburing): page reads, writeback's runs
 * submitted together, IORING_OP_FSYNC with IORING_FSYNC_DATASYNC; truncate
 * is ftruncate (no ring op needed).
 *
 * Ring ownership: one ring per (thread, cache), made on the thread's first
 * I/O through the cache and kept in the thread's block of the pool's owner
 * (core/thread.h: io_ring); it is closed when the thread exits or when the
 * cache is destroyed (lpc_towner_orphan), whichever comes first, under
 * lpc_threads_lock.  Why this and not one ring per cache under a mutex:
 *  - a ring is one producer and one consumer; a thread's own ring needs no
 *    lock to submit or reap, so misses of many threads run in parallel as
 *    their preads did.  A shared ring would hold its mutex from submission
 *    to completion (serialising every miss behind one disk access) or need a
 *    completion thread to hand results back (a wake-up per read);
 *  - a batch (the runs of one writeback pass) comes from one thread, so that
 *    thread's ring is where it goes in one io_uring_enter;
 *  - the cost is a ring per thread that does I/O: its fd and a few pages
 *    (without CAP_IPC_LOCK, counted against RLIMIT_MEMLOCK).  The arena's
 *    registration is made once per cache, not per ring: see below.
 * Every request is reaped by its thread before the call returns: no request
 * outlives its call, so a ring is idle whenever another thread closes it
 * (cache destroy), and no frame is touched by the kernel after its call.
 *
 * Registered buffers: the frame arena (page/pool.c) is registered as fixed
 * buffers of at most 1 GiB (the kernel's bound per buffer),
 * buffer i covering arena bytes [i GiB, (i+1) GiB); a frame never straddles
 * two (page sizes divide 1 GiB).  A read into a frame is READ_FIXED with its
 * buffer's index; a run whose frames lie back to back in the arena (one
 * buffer) is one WRITE_FIXED, any other run one WRITEV.  Reads into memory
 * outside the arena (read.c's bounce buffer) are plain READs.
 * Registering pins the arena, which faults all of it in: measured here,
 * 36-800 ms for 64 MiB (THP compaction on a busy machine), so it is done
 * once per cache, on the cache's own ring (io->reg, the probe ring kept),
 * by the first thread that makes its ring (under reg_lock; the arena is
 * resident from then on).  Every thread's ring then clones that table
 * (IORING_REGISTER_CLONE_BUFFERS, Linux 6.12; a few microseconds, no second
 * pin, no second RLIMIT_MEMLOCK charge); where the kernel has no clone, the
 * ring registers the arena itself.  When the kernel refuses to pin
 * (RLIMIT_MEMLOCK, no CAP_IPC_LOCK), the rings run unregistered: counted
 * per ring (uring_unregistered), one line on stderr once per process, and
 * the cache's later rings do not try again.
 *
 * Fallback: lpc_io_uring_init probes with a ring of its own; when the kernel
 * refuses (ENOSYS: no io_uring; EPERM/EACCES: seccomp or the
 * io_uring_disabled sysctl; ENOMEM) the cache uses the sync backend and
 * counts uring_fallbacks.  A thread whose own ring cannot be made later, or
 * whose ring fails to submit, does its I/O with the sync backend's calls
 * (counted the same way, once per thread and cache).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include "io/io.h"

#define URING_ENTRIES 128u /* writeback.c WB_RUNS: a batch in one submission */
#define URING_BUF_SHIFT 30 /* 1 GiB per registered buffer */
#define URING_MAX_BUFS 1024u
/* IORING_REGISTER_CLONE_BUFFERS (Linux 6.12), newer than liburing 2.3's
 * headers: the opcode and its argument as the kernel defines them. */
#define URING_REGISTER_CLONE_BUFFERS 30u
struct uring_clone_buffers {
	uint32_t src_fd, flags, src_off, dst_off, nr, pad[3];
};

struct uring {
	struct io_uring ring;
	bool fixed; /* the arena is registered (see above) */
};

/* A thread whose ring could not be made: its io_ring points here. */
static char ring_none;
static _Atomic bool unregistered_said;

static void ring_free(void *arg)
{
	struct uring *r = arg;

	io_uring_queue_exit(&r->ring);
	free(r);
}

/* Counts a ring running unregistered; says so once per process. */
static void note_unregistered(struct lpc_io *io, struct lpc_tcache *t, int err)
{
	lpc_count(t, LPC_C_URING_UNREGISTERED);
	if (!atomic_exchange_explicit(&unregistered_said, true, memory_order_relaxed))
		fprintf(stderr,
			"lpc: io_uring: cannot register the %zu-byte frame arena (%s; "
			"RLIMIT_MEMLOCK too low, no CAP_IPC_LOCK): running unregistered\n",
			io->arena_bytes, strerror(-err));
}

/* Registers the arena with r.  Return: 0 or negative errno. */
static int ring_register(struct lpc_io *io, struct uring *r)
{
	size_t chunk = (size_t)1 << URING_BUF_SHIFT;
	size_t n = (io->arena_bytes + chunk - 1) >> URING_BUF_SHIFT;
	struct iovec *iov;
	int rc;

	if (!n || n > URING_MAX_BUFS)
		return -E2BIG;
	iov = calloc(n, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t off = i << URING_BUF_SHIFT;

		iov[i].iov_base = io->arena + off;
		iov[i].iov_len = io->arena_bytes - off < chunk ? io->arena_bytes - off : chunk;
	}
	rc = io_uring_register_buffers(&r->ring, iov, (unsigned)n);
	free(iov);
	return rc;
}

/* The cache's registration, made once (the first ring to need it pins the
 * arena on io->reg).  Return: 0 when registered; negative errno otherwise. */
static int reg_get(struct lpc_io *io)
{
	int rc;

	if (atomic_load_explicit(&io->unregistered, memory_order_relaxed))
		return -ENOMEM;
	pthread_mutex_lock(&io->reg_lock);
	if (io->reg_state == 0) {
		io->reg_state = ring_register(io, io->reg);
		if (io->reg_state == 0)
			io->reg_state = 1;
		else
			atomic_store_explicit(&io->unregistered, 1, memory_order_relaxed);
	}
	rc = io->reg_state == 1 ? 0 : io->reg_state;
	pthread_mutex_unlock(&io->reg_lock);
	return rc;
}

/* Gives r the cache's registered buffers (no second pin).  Return: 0 or
 * negative errno (-EINVAL: a kernel without IORING_REGISTER_CLONE_BUFFERS). */
static int ring_clone(struct lpc_io *io, struct uring *r)
{
	struct uring *src = io->reg;
	struct uring_clone_buffers arg = { .src_fd = (uint32_t)src->ring.ring_fd };
	long rc = syscall(SYS_io_uring_register, r->ring.ring_fd, URING_REGISTER_CLONE_BUFFERS,
			  &arg, 1);

	return rc < 0 ? -errno : 0;
}

/* Makes this thread's ring for io.  Return: it, or NULL (use sync). */
static struct uring *ring_make(struct lpc_io *io, struct lpc_tcache *t)
{
	struct uring *r = calloc(1, sizeof(*r));
	int rc;

	if (!r || io_uring_queue_init(URING_ENTRIES, &r->ring, 0) < 0) {
		free(r);
		lpc_count(t, LPC_C_URING_FALLBACKS);
		t->io_ring = &ring_none;
		return NULL;
	}
	rc = reg_get(io);
	if (rc == 0) {
		rc = ring_clone(io, r);
		if (rc == -EINVAL || rc == -EOPNOTSUPP || rc == -ENOSYS)
			rc = ring_register(io, r); /* a kernel without clone */
		if (rc == 0)
			r->fixed = true;
		else
			atomic_store_explicit(&io->unregistered, 1, memory_order_relaxed);
	}
	if (rc)
		note_unregistered(io, t, rc);
	t->io_ring = r;
	t->io_ring_free = ring_free;
	return r;
}

/* This thread's ring for the file's cache, made on first use.  Return: NULL
 * when the thread does its I/O with the sync backend. */
static struct uring *ring_get(struct lpc_io *io, struct lpc_tcache **tp)
{
	struct lpc_tcache *t = lpc_tcache(io->owner);

	*tp = t;
	if (unlikely(!t))
		return NULL;
	if (likely(t->io_ring))
		return t->io_ring == &ring_none ? NULL : t->io_ring;
	return ring_make(io, t);
}

/* A ring that failed to submit is closed: the thread goes sync from now on
 * (its queued entries, never consumed, go with it). */
static void ring_kill(struct lpc_tcache *t)
{
	ring_free(t->io_ring);
	t->io_ring = &ring_none;
	t->io_ring_free = NULL;
	lpc_count(t, LPC_C_URING_FALLBACKS);
}

/* The registered buffer holding [p, p + len), or -1. */
static int buf_index(struct lpc_io *io, struct uring *r, const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t off;

	if (!r->fixed || b < io->arena || b + len > io->arena + io->arena_bytes || !len)
		return -1;
	off = (size_t)(b - io->arena);
	if (off >> URING_BUF_SHIFT != (off + len - 1) >> URING_BUF_SHIFT)
		return -1;
	return (int)(off >> URING_BUF_SHIFT);
}

/*
 * Submits what is queued and reaps `want` completions into res[user_data].
 * Return: 0; negative errno when the submission failed (nothing reaped: the
 * caller kills the ring and goes sync).
 */
static int ring_run(struct uring *r, unsigned want, ssize_t *res)
{
	int n;

	do {
		n = io_uring_submit_and_wait(&r->ring, want);
	} while (n == -EINTR);
	if (n < 0)
		return n;
	for (unsigned i = 0; i < want; i++) {
		struct io_uring_cqe *cqe;
		int rc;

		do {
			rc = io_uring_wait_cqe(&r->ring, &cqe);
		} while (rc == -EINTR);
		if (rc < 0)
			return rc; /* cannot happen with entries in flight */
		res[cqe->user_data] = cqe->res;
		io_uring_cqe_seen(&r->ring, cqe);
	}
	return 0;
}

static ssize_t uring_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			  uint64_t index)
{
	struct lpc_io *io = f->dev;
	struct lpc_tcache *t;
	struct uring *r = ring_get(io, &t);
	size_t done = 0;

	while (done < len) {
		char *p = (char *)buf + done;
		struct io_uring_sqe *sqe;
		ssize_t res = 0;
		int bi;

		if (!r)
			break;
		sqe = io_uring_get_sqe(&r->ring);
		bi = buf_index(io, r, p, len - done);
		if (bi >= 0)
			io_uring_prep_read_fixed(sqe, f->fd, p, (unsigned)(len - done), off + done,
						 bi);
		else
			io_uring_prep_read(sqe, f->fd, p, (unsigned)(len - done), off + done);
		sqe->user_data = 0;
		if (ring_run(r, 1, &res) < 0) {
			ring_kill(t);
			r = NULL;
			break;
		}
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res < 0)
			return done ? (ssize_t)done : res;
		if (res == 0)
			return (ssize_t)done;
		done += (size_t)res;
	}
	if (done < len && !r) {
		/* No ring for this thread: the rest the sync way. */
		ssize_t s = lpc_io_sync_ops.read(f, (char *)buf + done, len - done, off + done,
						 index);

		if (s < 0)
			return done ? (ssize_t)done : s;
		done += (size_t)s;
	}
	return (ssize_t)done;
}

/*
 * A miss's run of pages (lpc_io_readv): one READ_FIXED when the frames lie
 * back to back in one registered buffer, else one READV; a partial transfer
 * is completed by more requests on the rest.  Reaped before returning, as
 * every request of this backend.
 */
static ssize_t uring_readv(struct lpc_io_file *f, const struct iovec *iov0, int iovcnt,
			   uint64_t off, uint64_t index)
{
	struct lpc_io *io = f->dev;
	struct lpc_tcache *t;
	struct uring *r = ring_get(io, &t);
	struct iovec iov[LPC_IO_MAX_IOV];
	struct iovec *v = iov;
	size_t done = 0, total = 0;
	int cnt = iovcnt;

	if (iovcnt <= 0 || iovcnt > LPC_IO_MAX_IOV)
		return -EINVAL;
	memcpy(iov, iov0, sizeof(*iov) * (size_t)iovcnt);
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	while (done < total) {
		struct io_uring_sqe *sqe;
		const char *base = v[0].iov_base;
		size_t len = 0, n;
		bool flat = true;
		ssize_t res = 0;
		int bi;

		if (!r)
			break;
		for (int j = 0; j < cnt; j++) {
			flat = flat && (const char *)v[j].iov_base == base + len;
			len += v[j].iov_len;
		}
		sqe = io_uring_get_sqe(&r->ring);
		bi = flat ? buf_index(io, r, base, len) : -1;
		if (bi >= 0)
			io_uring_prep_read_fixed(sqe, f->fd, (void *)base, (unsigned)len, off + done,
						 bi);
		else
			io_uring_prep_readv(sqe, f->fd, v, (unsigned)cnt, off + done);
		sqe->user_data = 0;
		if (ring_run(r, 1, &res) < 0) {
			ring_kill(t);
			r = NULL;
			break;
		}
		if (res == -EINTR || res == -EAGAIN)
			continue;
		if (res < 0)
			return done ? (ssize_t)done : res;
		if (res == 0)
			return (ssize_t)done;
		done += (size_t)res;
		for (n = (size_t)res; cnt > 0 && n >= v->iov_len; cnt--, v++)
			n -= v->iov_len;
		if (cnt > 0) {
			v->iov_base = (char *)v->iov_base + n;
			v->iov_len -= n;
		}
	}
	if (done < total && !r) {
		ssize_t s = lpc_io_sync_ops.readv(f, v, cnt, off + done, index);

		if (s < 0)
			return done ? (ssize_t)done : s;
		done += (size_t)s;
	}
	return (ssize_t)done;
}

/* The runs with `todo`, each one WRITE_FIXED or WRITEV, submitted together
 * (URING_ENTRIES at a time); each run's res is what its request returned. */
static void uring_writev_batch(struct lpc_io_file *f, struct lpc_io_wrun *runs, int nruns)
{
	struct lpc_io *io = f->dev;
	struct lpc_tcache *t;
	struct uring *r = ring_get(io, &t);
	ssize_t res[URING_ENTRIES];
	int which[URING_ENTRIES];
	int i = 0;

	while (r && i < nruns) {
		unsigned k = 0;

		for (; i < nruns && k < URING_ENTRIES; i++) {
			struct lpc_io_wrun *w = &runs[i];
			struct io_uring_sqe *sqe;
			const char *base = w->iov[0].iov_base;
			size_t total = 0;
			bool flat = true;
			int bi;

			if (!w->todo)
				continue;
			for (int j = 0; j < w->iovcnt; j++) {
				flat = flat && (const char *)w->iov[j].iov_base == base + total;
				total += w->iov[j].iov_len;
			}
			sqe = io_uring_get_sqe(&r->ring);
			bi = flat ? buf_index(io, r, base, total) : -1;
			if (bi >= 0)
				io_uring_prep_write_fixed(sqe, f->fd, base, (unsigned)total, w->off, bi);
			else
				io_uring_prep_writev(sqe, f->fd, w->iov, (unsigned)w->iovcnt, w->off);
			sqe->user_data = k;
			which[k++] = i;
		}
		if (!k)
			break;
		if (ring_run(r, k, res) < 0) {
			ring_kill(t);
			r = NULL;
			i = which[0]; /* this chunk again, the sync way */
			break;
		}
		for (unsigned j = 0; j < k; j++) {
			struct lpc_io_wrun *w = &runs[which[j]];

			w->res = res[j];
			/* Interrupted before any byte: once more, the sync way. */
			if (w->res == -EINTR || w->res == -EAGAIN)
				w->res = lpc_io_sync_ops.writev(f, w->iov, w->iovcnt, w->off);
		}
	}
	for (; i < nruns; i++)
		if (runs[i].todo)
			runs[i].res = lpc_io_sync_ops.writev(f, runs[i].iov, runs[i].iovcnt,
							     runs[i].off);
}

static ssize_t uring_writev(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			    uint64_t off)
{
	struct lpc_io_wrun w = { .iov = iov, .iovcnt = iovcnt, .off = off, .todo = 1 };

	uring_writev_batch(f, &w, 1);
	return w.res;
}

static ssize_t uring_write(struct lpc_io_file *f, const void *buf, size_t len, uint64_t off)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	size_t done = 0;

	while (done < len) {
		ssize_t r = uring_writev(f, &iov, 1, off + done);

		if (r < 0)
			return done ? (ssize_t)done : r;
		if (r == 0)
			return done ? (ssize_t)done : -EIO;
		done += (size_t)r;
		iov.iov_base = (char *)buf + done;
		iov.iov_len = len - done;
	}
	return (ssize_t)done;
}

static int uring_sync(struct lpc_io_file *f)
{
	struct lpc_io *io = f->dev;
	struct lpc_tcache *t;
	struct uring *r = ring_get(io, &t);
	ssize_t res;

	for (;;) {
		struct io_uring_sqe *sqe;

		if (!r)
			return lpc_io_sync_ops.sync(f);
		sqe = io_uring_get_sqe(&r->ring);
		io_uring_prep_fsync(sqe, f->fd, IORING_FSYNC_DATASYNC);
		sqe->user_data = 0;
		if (ring_run(r, 1, &res) < 0) {
			ring_kill(t);
			r = NULL;
			continue;
		}
		if (res != -EINTR && res != -EAGAIN)
			return (int)res;
	}
}

static int uring_truncate(struct lpc_io_file *f, uint64_t size)
{
	return lpc_io_sync_ops.truncate(f, size);
}

const struct lpc_io_backend_ops lpc_io_uring_ops = {
	.name = "uring",
	.read = uring_read,
	.readv = uring_readv,
	.write = uring_write,
	.sync = uring_sync,
	.writev = uring_writev,
	.truncate = uring_truncate,
	.writev_batch = uring_writev_batch,
};

int lpc_io_uring_registered(struct lpc_io *io)
{
	struct lpc_tcache *t;
	struct uring *r;

	if (io->ops != &lpc_io_uring_ops)
		return -1;
	r = ring_get(io, &t);
	return r ? r->fixed : -1;
}

int lpc_io_uring_init(struct lpc_io *io, struct lpc_towner *owner, void *arena,
		      size_t arena_bytes)
{
	struct uring *reg = calloc(1, sizeof(*reg));
	int rc;

	if (!reg)
		return -ENOMEM;
	/* The probe, kept: it will hold the arena's registration. */
	rc = io_uring_queue_init(2, &reg->ring, 0);
	if (rc < 0) {
		free(reg);
		return rc;
	}
	io->reg = reg;
	io->reg_state = 0;
	pthread_mutex_init(&io->reg_lock, NULL);
	io->owner = owner;
	io->arena = arena;
	io->arena_bytes = arena_bytes;
	atomic_store_explicit(&io->unregistered, 0, memory_order_relaxed);
	io->ops = &lpc_io_uring_ops;
	return 0;
}

void lpc_io_uring_destroy(struct lpc_io *io)
{
	if (!io->reg)
		return;
	ring_free(io->reg);
	io->reg = NULL;
	pthread_mutex_destroy(&io->reg_lock);
}
