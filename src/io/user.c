/* SPDX-License-Identifier: MIT */
/*
 * user.c - user backends (lpc_file_open_backend): the one internal backend
 * that adapts a user's table of operations (struct lpc_backend_ops, lpc.h
 * BK1-BK6) to the I/O layer's.
 *
 * Why an adapter, and not the built-in backends rewritten as instances of
 * the public table: the internal interface carries what no user backend
 * should see or be bound to: the descriptor and its O_DIRECT fallback
 * (io.c moves a file off O_DIRECT on EINVAL), io_uring's per-thread rings
 * and registered frame arena (uring.c), the null backend's pattern keyed by
 * (file id, index), and the `todo` bookkeeping of a batch.  Kept internal,
 * it can change with every release; the public table is frozen per version
 * (LPC_BACKEND_V1) and stays small.  The price is one indirect call more
 * per I/O (the adapter's, next to a system call or a network round trip)
 * and one branch in the front (lpc_io_ops).  Everything the front does for
 * every backend (the fault hook, the completion of short writes, the
 * one-more-read of a short page, C.3) applies to user backends unchanged,
 * since they are behind the same front.
 *
 * The adapter's own rule (BK4): a result larger than asked is a broken
 * backend.  Taken as bytes it would make lpc cache or count what was never
 * transferred; so it becomes -EIO (the page is not cached, a written page
 * stays dirty), and LPC_DEBUG builds stop on rule BACKEND-OVERRUN.
 *
 * Batched reads (BK7).  A table of version 2 with read_batch gets the
 * runs of one lpc_io_readv_batch together (user_readv_batch), and
 * lpc_io_batches says so (io.h), so readahead and streams hand it whole
 * batches; any other table gets them run by run through read.  The
 * adapter's steps:
 *  UR1 The runs the front left to the backend (todo) are copied into
 *      public runs on the stack, USER_BATCH at a time, each with its
 *      position in the front's array (at[]) and a done flag, all on the
 *      calling thread's stack: nothing of a batch is shared.
 *  UR2 The backend's done(arg, k) (user_read_done) runs on the calling
 *      thread (BK7), so the flags need no atomics: it checks k (a run of
 *      this batch, not yet done), sets the flag and stores the checked
 *      result (BK4) in the front's run.  That one place is the run's
 *      completion: it ends the run at once (lpc_io_rrun_done, io.c RQ3),
 *      so the run's pages are readable while the batch's other runs are
 *      still at the storage.
 *  UR3 When read_batch returns, a run it did not complete is -EIO (rule
 *      BACKEND-DONE, which also catches a second done, a k out of the
 *      batch and a done from another thread): the front then fails that
 *      run's pages (nothing of it is cached).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include "core/debug.h"
#include "io/io.h"

static void *user_handle(struct lpc_io_file *f)
{
	/* Relaxed: an upgrade (file.c ZL4) publishes a new handle before the
	 * release store of accmode that writers load with acquire; a reader
	 * may use either handle, both valid until the last close. */
	return atomic_load_explicit(&f->handle, memory_order_relaxed);
}

static size_t iov_total(const struct iovec *iov, int iovcnt)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* BK4: r from an operation asked for `asked` bytes. */
static ssize_t user_checked(struct lpc_io_file *f, ssize_t r, size_t asked, const char *op)
{
	lpc_debug_check(r < 0 || (size_t)r <= asked, "BACKEND-OVERRUN", NULL,
			"the user backend's %s of %zu bytes (file id %llu) returned %zd",
			op, asked, (unsigned long long)f->id, r);
	if (r > 0 && (size_t)r > asked)
		return -EIO;
	/* Not an errno (a negative count, e.g. -2^32): an error all the same,
	 * never a success nor a value that wraps where lpc narrows it. */
	if (r < -4095)
		return -EIO;
	return r;
}

static ssize_t user_readv(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			  uint64_t off, uint64_t index)
{
	(void)index;
	return user_checked(f, f->user->read(user_handle(f), iov, iovcnt, off),
			    iov_total(iov, iovcnt), "read");
}

static ssize_t user_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			 uint64_t index)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return user_readv(f, &iov, 1, off, index);
}

static ssize_t user_writev(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			   uint64_t off)
{
	return user_checked(f, f->user->write(user_handle(f), iov, iovcnt, off),
			    iov_total(iov, iovcnt), "write");
}

static ssize_t user_write(struct lpc_io_file *f, const void *buf, size_t len, uint64_t off)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return user_writev(f, &iov, 1, off);
}

/* The runs the front left to the backend (todo), handed to the user's
 * write_batch in chunks of the public runs on the stack. */
#define USER_BATCH 64

static void user_writev_batch(struct lpc_io_file *f, struct lpc_io_wrun *runs, int nruns)
{
	struct lpc_backend_run ur[USER_BATCH];
	int at[USER_BATCH];
	int i = 0;

	if (!f->user->write_batch) {
		for (i = 0; i < nruns; i++)
			if (runs[i].todo)
				runs[i].res = user_writev(f, runs[i].iov, runs[i].iovcnt,
							  runs[i].off);
		return;
	}
	while (i < nruns) {
		int n = 0;

		for (; i < nruns && n < USER_BATCH; i++) {
			if (!runs[i].todo)
				continue;
			ur[n] = (struct lpc_backend_run){ .iov = runs[i].iov,
							  .iovcnt = runs[i].iovcnt,
							  .off = runs[i].off,
							  .res = -EIO };
			at[n++] = i;
		}
		if (!n)
			break;
		f->user->write_batch(user_handle(f), ur, n);
		for (int k = 0; k < n; k++)
			runs[at[k]].res = user_checked(f, ur[k].res,
						       iov_total(ur[k].iov, ur[k].iovcnt),
						       "write_batch");
	}
}

/* One chunk of a batched read in flight (UR1). */
struct user_rbatch {
	struct lpc_io_file *f;
	struct lpc_io_rrun *runs; /* the front's */
	pthread_t caller;
	int n;
	int at[USER_BATCH];
	bool done[USER_BATCH];
	struct lpc_backend_run ur[USER_BATCH];
};

/* UR2: run k of the chunk is back. */
static void user_read_done(void *arg, int k)
{
	struct user_rbatch *b = arg;
	bool ok = k >= 0 && k < b->n && !b->done[k] &&
		  pthread_equal(pthread_self(), b->caller);

	lpc_debug_check(ok, "BACKEND-DONE", NULL,
			"the user backend's read_batch (file id %llu) completed run %d of %d "
			"twice, out of the batch or on another thread", (unsigned long long)b->f->id,
			k, b->n);
	if (!ok)
		return; /* a broken backend: the run's first completion stands */
	b->done[k] = true;
	b->runs[b->at[k]].res = user_checked(b->f, b->ur[k].res,
					     iov_total(b->ur[k].iov, b->ur[k].iovcnt),
					     "read_batch");
	lpc_io_rrun_done(&b->runs[b->at[k]]); /* io.c RQ3: ended now, not after the batch */
}

static void user_readv_batch(struct lpc_io_file *f, struct lpc_io_rrun *runs, int nruns)
{
	const struct lpc_backend_ops *u = f->user;
	struct user_rbatch b;
	int i = 0;

	if (!lpc_io_user_batches(u)) {
		for (i = 0; i < nruns; i++)
			if (runs[i].todo) {
				runs[i].res = user_readv(f, runs[i].iov, runs[i].iovcnt, runs[i].off,
							 runs[i].index);
				lpc_io_rrun_done(&runs[i]); /* io.c RQ3 */
			}
		return;
	}
	b.f = f;
	b.runs = runs;
	b.caller = pthread_self();
	while (i < nruns) {						/* UR1 */
		b.n = 0;
		for (; i < nruns && b.n < USER_BATCH; i++) {
			if (!runs[i].todo)
				continue;
			b.ur[b.n] = (struct lpc_backend_run){ .iov = runs[i].iov,
							      .iovcnt = runs[i].iovcnt,
							      .off = runs[i].off,
							      .res = -EIO };
			b.done[b.n] = false;
			b.at[b.n++] = i;
		}
		if (!b.n)
			break;
		u->read_batch(user_handle(f), b.ur, b.n, user_read_done, &b);
		for (int k = 0; k < b.n; k++) {				/* UR3 */
			lpc_debug_check(b.done[k], "BACKEND-DONE", NULL,
					"the user backend's read_batch (file id %llu) returned "
					"with run %d of %d not completed",
					(unsigned long long)f->id, k, b.n);
			if (!b.done[k]) {
				runs[b.at[k]].res = -EIO;
				lpc_io_rrun_done(&runs[b.at[k]]);
			}
		}
	}
}

static int user_sync(struct lpc_io_file *f)
{
	return f->user->sync ? f->user->sync(user_handle(f)) : 0;
}

static int user_truncate(struct lpc_io_file *f, uint64_t size)
{
	return f->user->truncate ? f->user->truncate(user_handle(f), size) : -EOPNOTSUPP;
}

static int user_size(struct lpc_io_file *f, uint64_t *out)
{
	uint64_t size = 0;
	int rc = f->user->size(user_handle(f), &size);

	if (rc > 0)
		rc = -EIO; /* the contract: 0 or a negative errno */
	if (!rc)
		*out = size;
	return rc;
}

const struct lpc_io_backend_ops lpc_io_user_ops = {
	.name = "user",
	.read = user_read,
	.readv = user_readv,
	.write = user_write,
	.sync = user_sync,
	.writev = user_writev,
	.truncate = user_truncate,
	.size = user_size,
	.writev_batch = user_writev_batch,
	.readv_batch = user_readv_batch,
};
