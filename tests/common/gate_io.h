/* SPDX-License-Identifier: MIT */
/*
 * gate_io.h - a test backend that wraps a cache's backend and can hold every
 * page read at a gate until the test opens it, then let it through or fail
 * it.  It makes "a read in flight" a state a test can reach deterministically:
 * lpc's miss path inserts the locked page (miss.c M3) before it reads (M4), so
 * once tst_gate_wait_entered() returns, the page is in the index, LOCKED and
 * not UPTODATE until the gate opens.
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

#include "cache/cache.h"
#include "lpc_test.h"

struct tst_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool closed;       /* reads wait while closed */
	int fail_err;      /* > 0: reads that pass the gate fail with -fail_err */
	unsigned entered;  /* reads that reached the gate (waiting or not) */
	unsigned waiting;  /* reads waiting at it now */
	const struct lpc_io_backend_ops *inner;
};

static struct tst_gate tst_gate = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
};

static ssize_t tst_gate_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			     uint64_t index)
{
	int err;

	pthread_mutex_lock(&tst_gate.mu);
	tst_gate.entered++;
	tst_gate.waiting++;
	pthread_cond_broadcast(&tst_gate.cv);
	while (tst_gate.closed)
		pthread_cond_wait(&tst_gate.cv, &tst_gate.mu);
	tst_gate.waiting--;
	err = tst_gate.fail_err;
	pthread_mutex_unlock(&tst_gate.mu);
	if (err)
		return -err;
	return tst_gate.inner->read(f, buf, len, off, index);
}

static ssize_t tst_gate_write(struct lpc_io_file *f, const void *buf, size_t len,
			      uint64_t off)
{
	return tst_gate.inner->write(f, buf, len, off);
}

static int tst_gate_sync(struct lpc_io_file *f)
{
	return tst_gate.inner->sync(f);
}

static const struct lpc_io_backend_ops tst_gate_ops = {
	.name = "gate",
	.read = tst_gate_read,
	.write = tst_gate_write,
	.sync = tst_gate_sync,
};

/* Wraps c's backend (open gate).  Context: no I/O in flight on c. */
static inline void tst_gate_install(struct lpc_cache *c)
{
	if (c->io.ops != &tst_gate_ops)
		tst_gate.inner = c->io.ops;
	c->io.ops = &tst_gate_ops;
}

/* Closes the gate: the next reads wait.  Resets the counts. */
static inline void tst_gate_close(void)
{
	pthread_mutex_lock(&tst_gate.mu);
	tst_gate.closed = true;
	tst_gate.fail_err = 0;
	tst_gate.entered = 0;
	pthread_mutex_unlock(&tst_gate.mu);
}

/* Opens the gate; err > 0 fails the reads waiting and the later ones. */
static inline void tst_gate_open(int err)
{
	pthread_mutex_lock(&tst_gate.mu);
	tst_gate.closed = false;
	tst_gate.fail_err = err;
	pthread_cond_broadcast(&tst_gate.cv);
	pthread_mutex_unlock(&tst_gate.mu);
}

/* Stops failing reads (after tst_gate_open(err)). */
static inline void tst_gate_clear_error(void)
{
	pthread_mutex_lock(&tst_gate.mu);
	tst_gate.fail_err = 0;
	pthread_mutex_unlock(&tst_gate.mu);
}

/* Waits until n reads have reached the gate since it was closed, for at most
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
