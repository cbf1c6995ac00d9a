/* SPDX-License-Identifier: MIT */
/*
 * gate_io.h - a test backend that wraps a cache's backend and can hold every
 * page read (or write, or sync) at a gate until the test opens it, then let
 * it through or fail it.  It makes "a read in flight" a state a test can
 * reach deterministically: lpc's miss path inserts the locked page (miss.c
 * M3) before it reads (M4), so once tst_gate_wait_entered() returns, the page
 * is in the index, LOCKED and not UPTODATE until the gate opens.  With
 * writes gated (tst_gate_close_ops(LPC_IO_WRITE)), "a write in flight" is
 * one: the pages of a held writeback batch stay in WRITEBACK (K3-K5).
 *
 * Every op of struct lpc_io_backend_ops is forwarded to the wrapped backend:
 * read, readv (one pass of the gate per run of pages), write, writev and writev_batch (one pass of the gate per batch,
 * then the inner batch, or its writev per run where it has none), sync, and
 * truncate, which is never held (the front passes it through no fault hook
 * either).  An op the gate does not hold passes without being counted.
 *
 * Two narrowings for readahead's tests: tst_gate_hold_from(id, index) holds
 * only the reads of file `id` (st_ino) that start at page `index` or later
 * (the others pass uncounted), and tst_gate_open_once(err) fails only the
 * ops held at the gate when it opens, not later ones.  And a bad sector:
 * tst_gate_bad(id, off, len) fails every read request of file `id` that
 * covers a byte of [off, off + len), whole, with -EIO, as a medium error
 * fails an O_DIRECT request (after the gate, whatever it holds).
 *
 * Install it with tst_gate_install(cache) while no I/O is in flight on the
 * cache (it swaps cache->io.ops, an internal field); one gate per program.
 * Faults armed with lpc_io_fault_set act before the backend is called, so a
 * faulted read never reaches the gate: use tst_gate_open(err) to fail a
 * gated read instead.
 */
#ifndef LPC_TESTS_COMMON_GATE_IO_H
#define LPC_TESTS_COMMON_GATE_IO_H

#include <pthread.h>
#include <sys/stat.h>

#include "cache/cache.h"
#include "lpc_test.h"
#include "readv_by_read.h"

struct tst_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned ops;      /* the ops it holds (enum lpc_io_op mask) */
	bool closed;       /* held ops wait while closed */
	int fail_err;      /* > 0: held ops that pass the gate fail with -fail_err */
	unsigned entered;  /* held ops that reached the gate (waiting or not) */
	unsigned waiting;  /* held ops waiting at it now */
	unsigned writes;   /* write calls forwarded (write, writev, a batch) */
	bool fail_once;    /* fail_err only for ops held when the gate opened */
	uint64_t hold_id;  /* != 0: hold only reads of this file id ... */
	uint64_t hold_from; /* ... starting at this page index or later */
	uint64_t bad_id, bad_off, bad_len; /* the bad sector: bad_len 0, none */
	const struct lpc_io_backend_ops *inner;
};

static struct tst_gate tst_gate = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
	.ops = LPC_IO_READ,
};

/* An op of kind `op` at the gate (a read: of file f at page index; NULL
 * for other ops): waits while it is closed for op.  Return: 0 to go on to
 * the backend, or -fail_err. */
static int tst_gate_pass_at(unsigned op, const struct lpc_io_file *f, uint64_t index)
{
	bool held;
	int err;

	pthread_mutex_lock(&tst_gate.mu);
	if (op == LPC_IO_WRITE)
		tst_gate.writes++;
	if (!(tst_gate.ops & op) ||
	    (op == LPC_IO_READ && tst_gate.hold_id &&
	     (!f || f->id != tst_gate.hold_id || index < tst_gate.hold_from))) {
		pthread_mutex_unlock(&tst_gate.mu);
		return 0;
	}
	tst_gate.entered++;
	tst_gate.waiting++;
	pthread_cond_broadcast(&tst_gate.cv);
	held = tst_gate.closed;
	while (tst_gate.closed)
		pthread_cond_wait(&tst_gate.cv, &tst_gate.mu);
	tst_gate.waiting--;
	err = held || !tst_gate.fail_once ? tst_gate.fail_err : 0;
	pthread_mutex_unlock(&tst_gate.mu);
	return -err;
}

static int tst_gate_pass(unsigned op)
{
	return tst_gate_pass_at(op, NULL, 0);
}

/* True if a read of [off, off + len) of f covers the bad sector. */
static bool tst_gate_covers_bad(const struct lpc_io_file *f, uint64_t off, size_t len)
{
	bool bad;

	pthread_mutex_lock(&tst_gate.mu);
	bad = tst_gate.bad_len && f->id == tst_gate.bad_id &&
	      off < tst_gate.bad_off + tst_gate.bad_len && off + len > tst_gate.bad_off;
	pthread_mutex_unlock(&tst_gate.mu);
	return bad;
}

static ssize_t tst_gate_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			     uint64_t index)
{
	int err = tst_gate_pass_at(LPC_IO_READ, f, index);

	if (!err && tst_gate_covers_bad(f, off, len))
		err = -EIO;
	return err ? err : tst_gate.inner->read(f, buf, len, off, index);
}

/* One pass of the gate for a run of pages (one request), then the inner
 * backend's readv, or its read page by page where it has none. */
static ssize_t tst_gate_readv(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			      uint64_t off, uint64_t index)
{
	int err = tst_gate_pass_at(LPC_IO_READ, f, index);
	size_t len = 0;

	for (int k = 0; k < iovcnt; k++)
		len += iov[k].iov_len;
	if (!err && tst_gate_covers_bad(f, off, len))
		err = -EIO;
	if (err)
		return err;
	return tst_readv_inner(tst_gate.inner, f, iov, iovcnt, off, index);
}

static ssize_t tst_gate_write(struct lpc_io_file *f, const void *buf, size_t len,
			      uint64_t off)
{
	int err = tst_gate_pass(LPC_IO_WRITE);

	return err ? err : tst_gate.inner->write(f, buf, len, off);
}

static ssize_t tst_gate_writev(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			       uint64_t off)
{
	int err = tst_gate_pass(LPC_IO_WRITE);

	return err ? err : tst_gate.inner->writev(f, iov, iovcnt, off);
}

/* One pass of the gate for the whole batch (one submission). */
static void tst_gate_writev_batch(struct lpc_io_file *f, struct lpc_io_wrun *runs, int nruns)
{
	int err = tst_gate_pass(LPC_IO_WRITE);

	if (!err && tst_gate.inner->writev_batch) {
		tst_gate.inner->writev_batch(f, runs, nruns);
		return;
	}
	for (int i = 0; i < nruns; i++)
		if (runs[i].todo)
			runs[i].res = err ? err
					  : tst_gate.inner->writev(f, runs[i].iov, runs[i].iovcnt,
								   runs[i].off);
}

static int tst_gate_sync(struct lpc_io_file *f)
{
	int err = tst_gate_pass(LPC_IO_SYNCOP);

	return err ? err : tst_gate.inner->sync(f);
}

static int tst_gate_truncate(struct lpc_io_file *f, uint64_t size)
{
	return tst_gate.inner->truncate(f, size);
}

/* The wrapped backend's size: its op, or the front's fstat. */
static int tst_gate_size(struct lpc_io_file *f, uint64_t *out)
{
	struct stat st;

	if (tst_gate.inner->size)
		return tst_gate.inner->size(f, out);
	if (fstat(f->fd, &st) != 0)
		return -errno;
	*out = (uint64_t)st.st_size;
	return 0;
}

static const struct lpc_io_backend_ops tst_gate_ops = {
	.name = "gate",
	.read = tst_gate_read,
	.readv = tst_gate_readv,
	.write = tst_gate_write,
	.sync = tst_gate_sync,
	.writev = tst_gate_writev,
	.truncate = tst_gate_truncate,
	.size = tst_gate_size,
	.writev_batch = tst_gate_writev_batch,
};

/* Wraps c's backend (open gate).  Context: no I/O in flight on c. */
static inline void tst_gate_install(struct lpc_cache *c)
{
	if (c->io.ops != &tst_gate_ops)
		tst_gate.inner = c->io.ops;
	c->io.ops = &tst_gate_ops;
}

/* Closes the gate for the ops in `ops` (a mask of enum lpc_io_op): the next
 * ones wait; others pass.  Resets the counts and the narrowing to reads of
 * one file (tst_gate_hold_from). */
static inline void tst_gate_close_ops(unsigned ops)
{
	pthread_mutex_lock(&tst_gate.mu);
	tst_gate.ops = ops;
	tst_gate.closed = true;
	tst_gate.fail_err = 0;
	tst_gate.fail_once = false;
	tst_gate.hold_id = 0;
	tst_gate.entered = 0;
	tst_gate.writes = 0;
	pthread_mutex_unlock(&tst_gate.mu);
}

/* After tst_gate_close: holds only reads of file id (st_ino) that start at
 * page `from` or later; other reads pass uncounted. */
static inline void tst_gate_hold_from(uint64_t id, uint64_t from)
{
	pthread_mutex_lock(&tst_gate.mu);
	tst_gate.hold_id = id;
	tst_gate.hold_from = from;
	pthread_mutex_unlock(&tst_gate.mu);
}

/* Every read request of file id covering a byte of [off, off + len) fails
 * with -EIO from now on (len 0: none). */
static inline void tst_gate_bad(uint64_t id, uint64_t off, uint64_t len)
{
	pthread_mutex_lock(&tst_gate.mu);
	tst_gate.bad_id = id;
	tst_gate.bad_off = off;
	tst_gate.bad_len = len;
	pthread_mutex_unlock(&tst_gate.mu);
}

/* Closes the gate for reads: the next reads wait.  Resets the counts. */
static inline void tst_gate_close(void)
{
	tst_gate_close_ops(LPC_IO_READ);
}

/* Opens the gate; err > 0 fails the held ops waiting and the later ones. */
static inline void tst_gate_open(int err)
{
	pthread_mutex_lock(&tst_gate.mu);
	tst_gate.closed = false;
	tst_gate.fail_err = err;
	tst_gate.fail_once = false;
	pthread_cond_broadcast(&tst_gate.cv);
	pthread_mutex_unlock(&tst_gate.mu);
}

/* Opens the gate; err > 0 fails only the held ops waiting at it now. */
static inline void tst_gate_open_once(int err)
{
	pthread_mutex_lock(&tst_gate.mu);
	tst_gate.closed = false;
	tst_gate.fail_err = err;
	tst_gate.fail_once = true;
	pthread_cond_broadcast(&tst_gate.cv);
	pthread_mutex_unlock(&tst_gate.mu);
}

/* Stops failing held ops (after tst_gate_open(err)). */
static inline void tst_gate_clear_error(void)
{
	pthread_mutex_lock(&tst_gate.mu);
	tst_gate.fail_err = 0;
	pthread_mutex_unlock(&tst_gate.mu);
}

/* Waits until n held ops have reached the gate since it was closed, for at most
 * timeout_ms.  Return: true if they did. */
static inline bool tst_gate_wait_entered(unsigned n, unsigned timeout_ms)
{
	struct timespec ts;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&tst_gate.mu);
	while (tst_gate.entered < n)
		if (pthread_cond_timedwait(&tst_gate.cv, &tst_gate.mu, &ts) == ETIMEDOUT)
			break;
	ok = tst_gate.entered >= n;
	pthread_mutex_unlock(&tst_gate.mu);
	return ok;
}

/* Write calls forwarded since the gate was last closed (held or not). */
static inline unsigned tst_gate_writes(void)
{
	unsigned n;

	pthread_mutex_lock(&tst_gate.mu);
	n = tst_gate.writes;
	pthread_mutex_unlock(&tst_gate.mu);
	return n;
}

static inline unsigned tst_gate_entered(void)
{
	unsigned n;

	pthread_mutex_lock(&tst_gate.mu);
	n = tst_gate.entered;
	pthread_mutex_unlock(&tst_gate.mu);
	return n;
}

/* Polls lpc_stats until misses reach `want`, for at most timeout_ms.
 * Counters are summed from per-thread blocks: each thread's count is visible
 * once stored.  Return: true if reached. */
static inline bool tst_wait_misses(struct lpc_cache *c, uint64_t want, unsigned timeout_ms)
{
	uint64_t end = tst_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct lpc_stats s;

	for (;;) {
		lpc_stats(c, &s);
		if (s.misses >= want)
			return true;
		if (tst_now_ns() > end)
			return false;
		tst_sleep_us(200);
	}
}

/*
 * Waits until `holders` users hold page `index` of f besides the index (its
 * ref is then holders + 1), for at most timeout_ms.  With a read held at the
 * gate, holders = the reader + the threads waiting on the page: a thread
 * counted in it holds a reference on the in-flight page and will see how
 * that read ends (miss.c M6), unlike one that has only counted its miss and
 * may still be on its way to an insert of its own - with one exception: a
 * lockless lookup that has incremented the count but not yet re-checked its
 * slot (lookup.c R3-R4) is counted too, and if the page is deleted before
 * its re-check, it looks up again instead of waiting.  Uses the internal lookup
 * (lpc_filemap_lookup), which returns a page whatever its state; our own
 * reference is not counted.
 * Return: true if reached.
 */
static inline bool tst_wait_page_holders(struct lpc_file *f, uint64_t index, uint32_t holders,
					 unsigned timeout_ms)
{
	uint64_t end = tst_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct lpc_tcache *t = lpc_file_tcache(f);

	for (;;) {
		struct lpc_page *p = t ? lpc_filemap_lookup(f, index, t) : NULL;
		uint32_t ref = 0;

		if (p) {
			ref = atomic_load(&p->ref);
			lpc_page_put(p);
			/* ours, the index's, and the holders' */
			if (ref >= holders + 2)
				return true;
		}
		if (tst_now_ns() > end)
			return false;
		tst_sleep_us(100);
	}
}

/* A thread that calls lpc_page_get once: the other side of a gated read. */
struct tst_getter {
	struct lpc_file *f;
	uint64_t index;
	int rc;
	struct lpc_page *p;
};

static inline void *tst_getter_main(void *arg)
{
	struct tst_getter *g = arg;

	g->rc = lpc_page_get(g->f, g->index, 0, &g->p);
	return NULL;
}

#endif /* LPC_TESTS_COMMON_GATE_IO_H */
