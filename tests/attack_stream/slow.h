/* SPDX-License-Identifier: MIT */
/* slow.h - a backend wrapper for the stream review (attack_stream/): every
 * read of a file is delayed by slow.delay_us, the reads in flight at once are
 * counted (slow.now, slow.peak), each page read is recorded (slow.reads), and
 * the reads that cover page slow.bad_index fail with -EIO (every time) when
 * slow.bad_armed.  Install (slow_install) while no I/O is in flight; it wraps
 * c->io.ops, an internal field. */
#ifndef SLOW_H
#define SLOW_H
#include <stdatomic.h>
#include <time.h>

#include "../common/readv_by_read.h"
#include "cache/cache.h"

static struct {
	const struct lpc_io_backend_ops *inner;
	struct lpc_io_backend_ops ops;
	unsigned delay_us;
	_Atomic int now, peak;
	_Atomic uint64_t reads, pages;
	_Atomic int bad_armed;
	uint64_t bad_index;
	/* "ahead" accounting: pages read minus pages the consumer took */
	_Atomic int64_t taken, max_ahead;
	/* pages being read at once (the frames locked by reads), and the most */
	_Atomic int64_t pages_now, pages_peak;
	uint64_t only_id; /* != 0: only reads of the file with this id are slowed and counted */
	uint64_t hold_id; /* != 0: reads of this file (not counted) sleep hold_us */
	unsigned hold_us;
} slow;

static void slow_count(uint64_t index, uint64_t npages)
{
	int64_t pn = atomic_fetch_add(&slow.pages_now, (int64_t)npages) + (int64_t)npages;
	int64_t pp = atomic_load(&slow.pages_peak);

	while (pn > pp && !atomic_compare_exchange_weak(&slow.pages_peak, &pp, pn))
		;
	int n = atomic_fetch_add(&slow.now, 1) + 1;
	int p = atomic_load(&slow.peak);
	uint64_t pg;
	int64_t ahead, m;

	while (n > p && !atomic_compare_exchange_weak(&slow.peak, &p, n))
		;
	atomic_fetch_add(&slow.reads, 1);
	pg = atomic_fetch_add(&slow.pages, npages) + npages;
	ahead = (int64_t)pg - atomic_load(&slow.taken);
	m = atomic_load(&slow.max_ahead);
	while (ahead > m && !atomic_compare_exchange_weak(&slow.max_ahead, &m, ahead))
		;
	(void)index;
}

static void slow_enter(uint64_t index, uint64_t npages)
{
	slow_count(index, npages);
	if (slow.delay_us)
		usleep(slow.delay_us);
}

static bool slow_covers_bad(uint64_t index, uint64_t npages)
{
	return atomic_load(&slow.bad_armed) && slow.bad_index >= index &&
	       slow.bad_index < index + npages;
}

static ssize_t slow_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			 uint64_t index)
{
	ssize_t r;

	if (slow.hold_id && f->id == slow.hold_id)
		usleep(slow.hold_us);
	if (slow.only_id && f->id != slow.only_id)
		return slow.inner->read(f, buf, len, off, index);
	slow_enter(index, 1);
	if (slow_covers_bad(index, 1))
		r = -EIO;
	else
		r = slow.inner->read(f, buf, len, off, index);
	atomic_fetch_sub(&slow.now, 1);
	atomic_fetch_sub(&slow.pages_now, 1);
	return r;
}

static ssize_t slow_readv(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			  uint64_t off, uint64_t index)
{
	ssize_t r;

	if (slow.hold_id && f->id == slow.hold_id)
		usleep(slow.hold_us);
	if (slow.only_id && f->id != slow.only_id)
		return tst_readv_inner(slow.inner, f, iov, iovcnt, off, index);
	slow_enter(index, (uint64_t)iovcnt);
	if (slow_covers_bad(index, (uint64_t)iovcnt))
		r = -EIO;
	else
		r = tst_readv_inner(slow.inner, f, iov, iovcnt, off, index);
	atomic_fetch_sub(&slow.now, 1);
	atomic_fetch_sub(&slow.pages_now, iovcnt);
	return r;
}

/* A batch (io.h lpc_io_readv_batch: the backend has its runs at once):
 * every run counted as a read in flight, one delay for them all. */
static void slow_readv_batch(struct lpc_io_file *f, struct lpc_io_rrun *runs, int nruns)
{
	int n = 0;
	int64_t pages = 0;

	if (slow.hold_id && f->id == slow.hold_id)
		usleep(slow.hold_us);
	if (!slow.only_id || f->id == slow.only_id) {
		for (int i = 0; i < nruns; i++) {
			if (!runs[i].todo)
				continue;
			slow_count(runs[i].index, (uint64_t)runs[i].iovcnt);
			n++;
			pages += runs[i].iovcnt;
			if (slow_covers_bad(runs[i].index, (uint64_t)runs[i].iovcnt)) {
				runs[i].res = -EIO;
				runs[i].todo = 2; /* not the inner's */
			}
		}
		if (slow.delay_us)
			usleep(slow.delay_us);
	}
	for (int i = 0; i < nruns; i++)
		runs[i].todo = runs[i].todo == 1;
	slow.inner->readv_batch(f, runs, nruns);
	atomic_fetch_sub(&slow.now, n);
	atomic_fetch_sub(&slow.pages_now, pages);
}

static inline void slow_install(struct lpc_cache *c)
{
	slow.inner = c->io.ops;
	slow.ops = *c->io.ops;
	slow.ops.read = slow_read;
	slow.ops.readv = slow_readv;
	if (slow.inner->readv_batch)
		slow.ops.readv_batch = slow_readv_batch;
	c->io.ops = &slow.ops;
}

static inline void slow_reset(void)
{
	atomic_store(&slow.now, 0);
	atomic_store(&slow.peak, 0);
	atomic_store(&slow.reads, 0);
	atomic_store(&slow.pages, 0);
	atomic_store(&slow.taken, 0);
	atomic_store(&slow.max_ahead, 0);
	atomic_store(&slow.pages_now, 0);
	atomic_store(&slow.pages_peak, 0);
}

static inline double slow_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
#endif
