/* SPDX-License-Identifier: MIT */
/* qd.h - a read gate for the batched-read review (attack_qd/).  It wraps a
 * cache's backend (c->io.ops, an internal field; install with no I/O in
 * flight) and, for the reads of one file (by lpc_io_file.id):
 *   - qd_set(all, page_on, p): holds every read of the file (all), or the
 *     requests that cover page p (page_on), or none;
 *   - qd_hold2(id2, on): every read of a second file held.
 * A batched read (ops->readv_batch, the io_uring backend's) is forwarded to
 * the wrapped backend whole; a run that covers the held page then waits at
 * the gate before it is ended, while the batch's other runs are ended at
 * their own completions (io.c RQ3): what io_uring does when that run's CQE
 * comes late.  QD_OLD_IO: a tree before those per-run ends, where the whole
 * batch waited at the gate (uring_readv_batch reaped every completion
 * before any run's U5).  A
 * backend without readv_batch (sync) is read run by run through read/readv,
 * each run passing the gate alone, as lpc_io_readv_batch's front does.
 * QD_NO_BATCH: for a tree before 709d776 (no readv_batch), to check that a
 * program passes there. */
#ifndef QD_H
#define QD_H
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "../common/readv_by_read.h"
#include "cache/cache.h"

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t id, id2; /* the gated file; id2: a second one, held whole */
	bool all, all2;         /* every read of id held */
	bool page_on;     /* the requests covering `page` held */
	uint64_t page;
	unsigned entered; /* held requests that reached the gate */
	_Atomic unsigned batches, batch_runs_max;
	/* The requests of file count_id are counted in `reqs`; with `einval`,
	 * a device that refuses direct transfers (a 512 B page on a 4Kn disk):
	 * each of them fails -EINVAL while the file is on O_DIRECT
	 * (lpc_io_file.direct), counted in `einvals`. */
	uint64_t count_id;
	bool einval;
	_Atomic unsigned reqs, einvals;
	const struct lpc_io_backend_ops *inner;
	struct lpc_io_backend_ops ops;
} qd = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static bool qd_holds(const struct lpc_io_file *f, uint64_t index, uint64_t n)
{
	return (f->id == qd.id &&
		(qd.all || (qd.page_on && qd.page >= index && qd.page < index + n))) ||
	       (qd.id2 && f->id == qd.id2 && qd.all2);
}

static void qd_pass(const struct lpc_io_file *f, uint64_t index, uint64_t n)
{
	bool counted = false;

	pthread_mutex_lock(&qd.mu);
	while (qd_holds(f, index, n)) {
		if (!counted) {
			qd.entered++;
			counted = true;
			pthread_cond_broadcast(&qd.cv);
		}
		pthread_cond_wait(&qd.cv, &qd.mu);
	}
	pthread_mutex_unlock(&qd.mu);
}

/* The einval device: true when this request of f is refused. */
static bool qd_refuse(struct lpc_io_file *f)
{
	if (!qd.count_id || f->id != qd.count_id)
		return false;
	atomic_fetch_add(&qd.reqs, 1);
	if (!qd.einval || !atomic_load(&f->direct))
		return false;
	atomic_fetch_add(&qd.einvals, 1);
	return true;
}

static ssize_t qd_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off, uint64_t index)
{
	qd_pass(f, index, 1);
	if (qd_refuse(f))
		return -EINVAL;
	return qd.inner->read(f, buf, len, off, index);
}

static ssize_t qd_readv(struct lpc_io_file *f, const struct iovec *iov, int iovcnt, uint64_t off,
			uint64_t index)
{
	qd_pass(f, index, (uint64_t)iovcnt);
	if (qd_refuse(f))
		return -EINVAL;
	return tst_readv_inner(qd.inner, f, iov, iovcnt, off, index);
}

#if !defined(QD_NO_BATCH) && defined(QD_OLD_IO)
/* A tree before each run of a batch was ended at its own completion (io.c
 * RQ3): the completions were reaped together, one late CQE held them all. */
static void qd_readv_batch(struct lpc_io_file *f, struct lpc_io_rrun *runs, int nruns)
{
	unsigned m = atomic_load(&qd.batch_runs_max);

	atomic_fetch_add(&qd.batches, 1);
	while ((unsigned)nruns > m && !atomic_compare_exchange_weak(&qd.batch_runs_max, &m,
								      (unsigned)nruns))
		;
	if (qd.count_id == f->id) {
		for (int i = 0; i < nruns; i++)
			if (runs[i].todo && qd_refuse(f)) {
				runs[i].res = -EINVAL;
				runs[i].todo = 0; /* answered here: not the inner's */
			}
		qd.inner->readv_batch(f, runs, nruns);
		for (int i = 0; i < nruns; i++)
			if (runs[i].res == -EINVAL)
				runs[i].todo = 1; /* the front's again (its EINVAL rule) */
		return;
	}
	qd.inner->readv_batch(f, runs, nruns);
	for (int i = 0; i < nruns; i++)
		if (runs[i].todo)
			qd_pass(f, runs[i].index, (uint64_t)runs[i].iovcnt);
}
#elif !defined(QD_NO_BATCH)
static void qd_readv_batch(struct lpc_io_file *f, struct lpc_io_rrun *runs, int nruns)
{
	unsigned m = atomic_load(&qd.batch_runs_max);
	bool mine[LPC_IO_MAX_IOV] = { false };

	atomic_fetch_add(&qd.batches, 1);
	while ((unsigned)nruns > m && !atomic_compare_exchange_weak(&qd.batch_runs_max, &m,
								      (unsigned)nruns))
		;
	if (qd.count_id == f->id) {
		for (int i = 0; i < nruns; i++)
			if (runs[i].todo && qd_refuse(f)) {
				runs[i].res = -EINVAL;
				runs[i].todo = 0; /* answered here: not the inner's */
				mine[i] = true;
			}
		qd.inner->readv_batch(f, runs, nruns);
		for (int i = 0; i < nruns; i++)
			if (mine[i])
				runs[i].todo = 1; /* the front's again (io.c RQ4) */
		return;
	}
	/* A run the gate holds completes late: the inner reads it with the
	 * others, but its report is this wrapper's (done NULL), so the inner's
	 * reap ends every other run at its own completion (io.c RQ3) and this
	 * one waits at the gate; the front ends it when the batch returns
	 * (RQ4), as a late CQE is reaped last. */
	pthread_mutex_lock(&qd.mu);
	for (int i = 0; i < nruns; i++)
		if (runs[i].todo && qd_holds(f, runs[i].index, (uint64_t)runs[i].iovcnt)) {
			mine[i] = true;
			runs[i].done = NULL;
		}
	pthread_mutex_unlock(&qd.mu);
	qd.inner->readv_batch(f, runs, nruns);
	for (int i = 0; i < nruns; i++)
		if (mine[i])
			qd_pass(f, runs[i].index, (uint64_t)runs[i].iovcnt);
}
#endif

static inline void qd_install(struct lpc_cache *c, uint64_t id)
{
	qd.inner = c->io.ops;
	qd.ops = *c->io.ops;
	qd.ops.read = qd_read;
	qd.ops.readv = qd_readv;
#ifndef QD_NO_BATCH
	qd.ops.readv_batch = c->io.ops->readv_batch ? qd_readv_batch : NULL;
#endif
	qd.id = id;
	c->io.ops = &qd.ops;
}

static inline void qd_set(bool all, bool page_on, uint64_t page)
{
	pthread_mutex_lock(&qd.mu);
	qd.all = all;
	qd.page_on = page_on;
	qd.page = page;
	pthread_cond_broadcast(&qd.cv);
	pthread_mutex_unlock(&qd.mu);
}

/* Holds (on) or lets through every read of a second file, id2. */
static inline void qd_hold2(uint64_t id2, bool on)
{
	pthread_mutex_lock(&qd.mu);
	qd.id2 = id2;
	qd.all2 = on;
	pthread_cond_broadcast(&qd.cv);
	pthread_mutex_unlock(&qd.mu);
}

/* The gate back to its first state, the backend unwrapped already (a
 * story run once per backend, tests/regress/regress_qd_*.c). */
static inline void qd_reset(void)
{
	pthread_mutex_lock(&qd.mu);
	qd.id = qd.id2 = qd.count_id = 0;
	qd.all = qd.all2 = qd.page_on = qd.einval = false;
	qd.entered = 0;
	atomic_store(&qd.batches, 0);
	atomic_store(&qd.batch_runs_max, 0);
	atomic_store(&qd.reqs, 0);
	atomic_store(&qd.einvals, 0);
	pthread_mutex_unlock(&qd.mu);
}

/* Held requests that reached the gate so far. */
static inline unsigned qd_entered(void)
{
	unsigned n;

	pthread_mutex_lock(&qd.mu);
	n = qd.entered;
	pthread_mutex_unlock(&qd.mu);
	return n;
}

/* Waits (at most ms) until n held requests reached the gate. */
static inline bool qd_wait_entered(unsigned n, int ms)
{
	struct timespec ts;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&qd.mu);
	while (qd.entered < n)
		if (pthread_cond_timedwait(&qd.cv, &qd.mu, &ts) == ETIMEDOUT)
			break;
	ok = qd.entered >= n;
	pthread_mutex_unlock(&qd.mu);
	return ok;
}

static inline uint64_t qd_ino(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Runs fn(arg) in a thread; true when it returned within ms. */
struct qd_call { void *(*fn)(void *); void *arg; _Atomic int done; pthread_t th; };
static __attribute__((unused)) void *qd_tramp(void *a)
{
	struct qd_call *c = a;

	c->fn(c->arg);
	atomic_store(&c->done, 1);
	return NULL;
}
static inline bool qd_returns_within(struct qd_call *c, int ms)
{
	pthread_create(&c->th, NULL, qd_tramp, c);
	for (int i = 0; i < ms / 10 && !atomic_load(&c->done); i++)
		usleep(10000);
	return atomic_load(&c->done);
}
#endif
