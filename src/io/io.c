/* SPDX-License-Identifier: MIT */
/*
 * io.c - the front of the I/O layer: calls a cache's backend (struct lpc_io),
 * passes every call through the fault-injection hook, and moves a file off
 * O_DIRECT when the kernel refuses a direct transfer (EINVAL: alignment the
 * device does not support), so such a file is read buffered rather than
 * failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "core/compiler.h"
#include "io/io.h"

/*
 * Decides whether this op takes a fault.  Return: 0 (no fault), a negative
 * errno to fail with, or a positive byte count for a short transfer.
 */
static ssize_t fault_check(struct lpc_io_faults *h, unsigned op, uint64_t file_id)
{
	uint64_t n;

	if (likely(!atomic_load_explicit(&h->armed, memory_order_acquire)))
		return 0;
	if (!(h->f.ops & op) || (h->f.file_id && h->f.file_id != file_id))
		return 0;
	n = atomic_fetch_add_explicit(&h->seen, 1, memory_order_relaxed);
	if (n < h->f.skip || (h->f.count && n >= h->f.skip + h->f.count))
		return 0;
	atomic_fetch_add_explicit(&h->fired, 1, memory_order_relaxed);
	if (h->f.short_bytes)
		return (ssize_t)h->f.short_bytes;
	return -h->f.err;
}

ssize_t lpc_io_read(struct lpc_io *io, struct lpc_io_file *f, void *buf,
		    size_t len, uint64_t off, uint64_t index, int *fellback)
{
	ssize_t fault = fault_check(&io->faults, LPC_IO_READ, f->id);
	ssize_t r;

	if (fault < 0)
		return fault;
	r = io->ops->read(f, buf, len, off, index);
	if (r == -EINVAL && atomic_load_explicit(&f->direct, memory_order_relaxed)) {
		/* The device refuses this direct transfer: go buffered for good.
		 * Another thread may race here; clearing O_DIRECT twice is fine. */
		int fl = fcntl(f->fd, F_GETFL);

		if (fl >= 0 && fcntl(f->fd, F_SETFL, fl & ~O_DIRECT) == 0) {
			atomic_store_explicit(&f->direct, 0, memory_order_relaxed);
			*fellback = 1;
			r = io->ops->read(f, buf, len, off, index);
		}
	}
	/* A short transfer shortens the result, not the request: a shortened
	 * request would be a misaligned O_DIRECT read. */
	if (fault > 0 && r > fault)
		r = fault;
	return r;
}

int lpc_io_fault_set(struct lpc_io *io, const struct lpc_io_fault *f)
{
	struct lpc_io_faults *h = &io->faults;

	atomic_store_explicit(&h->armed, 0, memory_order_release);
	if (!f)
		return 0;
	if (!f->ops || (!f->err && !f->short_bytes))
		return -EINVAL;
	/* Not armed while we write it: no I/O reads h->f now (callers arm the
	 * hook while no I/O is in flight on the cache, as tests do). */
	h->f = *f;
	atomic_store_explicit(&h->seen, 0, memory_order_relaxed);
	atomic_store_explicit(&h->fired, 0, memory_order_relaxed);
	atomic_store_explicit(&h->armed, 1, memory_order_release);
	return 0;
}

uint64_t lpc_io_faults_fired(struct lpc_io *io)
{
	return atomic_load_explicit(&io->faults.fired, memory_order_relaxed);
}
