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
#include <sys/stat.h>

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
	r = lpc_io_ops(io, f)->read(f, buf, len, off, index);
	if (r == -EINVAL && atomic_load_explicit(&f->direct, memory_order_relaxed)) {
		/* The device refuses this direct transfer: go buffered for good.
		 * Another thread may race here; clearing O_DIRECT twice is fine. */
		int fl = fcntl(f->fd, F_GETFL);

		if (fl >= 0 && fcntl(f->fd, F_SETFL, fl & ~O_DIRECT) == 0) {
			atomic_store_explicit(&f->direct, 0, memory_order_relaxed);
			*fellback = 1;
			r = lpc_io_ops(io, f)->read(f, buf, len, off, index);
		}
	}
	/* A short transfer shortens the result, not the request: a shortened
	 * request would be a misaligned O_DIRECT read. */
	if (fault > 0 && r > fault)
		r = fault;
	return r;
}

static bool direct_off(struct lpc_io_file *f);

/* Backends without readv: iovec by iovec, stopping at the first short one. */
static ssize_t readv_each(struct lpc_io *io, struct lpc_io_file *f, const struct iovec *iov,
			  int iovcnt, uint64_t off, uint64_t index)
{
	size_t done = 0;

	for (int k = 0; k < iovcnt; k++) {
		ssize_t r = lpc_io_ops(io, f)->read(f, iov[k].iov_base, iov[k].iov_len, off + done,
					  index + (uint64_t)k);

		if (r < 0)
			return done ? (ssize_t)done : r;
		done += (size_t)r;
		if ((size_t)r < iov[k].iov_len)
			break;
	}
	return (ssize_t)done;
}

static ssize_t readv_once(struct lpc_io *io, struct lpc_io_file *f, const struct iovec *iov,
			  int iovcnt, uint64_t off, uint64_t index)
{
	if (iovcnt == 1)
		return lpc_io_ops(io, f)->read(f, iov[0].iov_base, iov[0].iov_len, off, index);
	if (lpc_io_ops(io, f)->readv)
		return lpc_io_ops(io, f)->readv(f, iov, iovcnt, off, index);
	return readv_each(io, f, iov, iovcnt, off, index);
}

ssize_t lpc_io_readv(struct lpc_io *io, struct lpc_io_file *f, const struct iovec *iov,
		     int iovcnt, uint64_t off, uint64_t index, int *fellback)
{
	ssize_t fault, r;

	if (iovcnt <= 0 || iovcnt > LPC_IO_MAX_IOV)
		return -EINVAL;
	fault = fault_check(&io->faults, LPC_IO_READ, f->id);
	if (fault < 0)
		return fault;
	r = readv_once(io, f, iov, iovcnt, off, index);
	if (r == -EINVAL && atomic_load_explicit(&f->direct, memory_order_relaxed)) {
		int fl = fcntl(f->fd, F_GETFL);

		if (fl >= 0 && fcntl(f->fd, F_SETFL, fl & ~O_DIRECT) == 0) {
			atomic_store_explicit(&f->direct, 0, memory_order_relaxed);
			*fellback = 1;
			r = readv_once(io, f, iov, iovcnt, off, index);
		}
	}
	if (fault > 0 && r > fault)
		r = fault;
	return r;
}

/*
 * A batch's runs are each ended at their own completion, so that a reader
 * of one run's pages waits for that run's request only, never for another
 * run of the batch (ra_worker.c Q6: a demand read waits only for the
 * device).  Steps (all on the calling thread):
 *   RQ1 the hook first, once per run, in run order, before any read (as
 *       lpc_io_readv would see them one after another); every run starts
 *       not `ended`; a run the hook fails, or with no iovec, is ended at
 *       once (RQ5) with its error;
 *   RQ2 every other run is `todo` (the backend's to read) and carries
 *       `done` and `front`, this batch;
 *   RQ3 a backend with readv_batch (io_uring) reads them together and
 *       reports each run by lpc_io_rrun_done as its completion is reaped
 *       and final (uring.c: after its redo, if it needed one), while other
 *       runs are still in flight on this thread's ring: the run is ended
 *       there (RQ5), unless it needs a read of its own, which cannot be
 *       made with the ring's reaps in flight: a run the device refused
 *       direct (EINVAL) stays todo for RQ4.  A backend without readv_batch
 *       (sync, null, user) reads the runs in turn, each ended (RQ4-RQ5)
 *       right after its own read;
 *   RQ4 when readv_batch returns (every request reaped: the ring idle),
 *       each run not yet ended is ended, whatever its todo says: refused
 *       direct, not reported by a wrapper that took the reports over
 *       (done NULL), or answered by a wrapper itself with todo cleared
 *       to keep it from the backend below (attack_stream/slow.h fails a
 *       run -EIO so: when RQ4 ended only the runs still todo, that run's
 *       U5 never came and its pages stayed LOCKED for ever, every reader
 *       of them waiting in lpc_page_wait_unlocked); a refused one is read
 *       again buffered first (every refused run, whoever turned direct
 *       off), but only when the file went direct as the batch began: on a
 *       file that was buffered already, or a user backend's (never
 *       direct), -EINVAL is the backend's own answer and ends the run as
 *       it is (read again, a user backend's read_batch answer was
 *       replaced by its read()'s: tests/attack_io att_user_einval);
 *   RQ5 a run ends once: the hook's short size applied, todo cleared,
 *       `ended` set, then the caller's end(arg, w) (ra_worker.c and
 *       stream.c GB3: run.c's U5 of that run, which unlocks or removes
 *       every page of it, a failed run's too, and wakes their waiters).
 * Why no run is lost or ended twice: `ended` is the front's alone (io.h
 * lpc_io_rrun: no backend writes it), false from RQ1, set only at RQ5, and
 * RQ5 runs only on a run not ended; RQ4 ends every run not ended, and a
 * backend's report (RQ3) of a run already ended is no second end.  So
 * every run is ended exactly once before this call returns, whatever a
 * backend or a wrapper did with todo, and a caller's pages all leave their
 * locks by then.
 */
struct rbatch {
	struct lpc_io *io;
	struct lpc_io_file *f;
	int *fellback;
	lpc_io_rrun_end_fn *end;
	void *arg;
	bool direct; /* f went direct when the batch began (RQ1) */
};

/* RQ4-RQ5 for run w of b, its res set.  may_read: false inside a backend's
 * reap (RQ3), where a refused run waits for RQ4. */
static void rrun_end(struct rbatch *b, struct lpc_io_rrun *w, bool may_read)
{
	if (w->ended)
		return;
	/* The device refused a direct transfer: buffered for good, and this
	 * run again (lpc_io_readv's rule).  Every run of the batch that went
	 * direct met the same refusal, but only the first to ask turns direct
	 * off: the others (and a run another thread's refusal cut) are read
	 * again buffered too, not failed. */
	if (w->res == -EINVAL && b->direct) {
		if (!may_read)
			return; /* RQ4's */
		if (direct_off(b->f))
			*b->fellback = 1;
		if (!atomic_load_explicit(&b->f->direct, memory_order_relaxed))
			w->res = readv_once(b->io, b->f, w->iov, w->iovcnt, w->off, w->index);
	}
	if (w->cut > 0 && w->res > w->cut)					/* RQ5 */
		w->res = w->cut;
	w->todo = 0;
	w->ended = true;
	if (b->end)
		b->end(b->arg, w);
}

/* RQ3: the backend's report of one run. */
static void rrun_done(struct lpc_io_rrun *w)
{
	rrun_end(w->front, w, false);
}

void lpc_io_readv_batch(struct lpc_io *io, struct lpc_io_file *f, struct lpc_io_rrun *runs,
			int nruns, int *fellback, lpc_io_rrun_end_fn *end, void *arg)
{
	const struct lpc_io_backend_ops *ops = lpc_io_ops(io, f);
	struct rbatch b = { io, f, fellback, end, arg,
			    atomic_load_explicit(&f->direct, memory_order_relaxed) };
	int ntodo = 0;

	for (int i = 0; i < nruns; i++) {					/* RQ1 */
		struct lpc_io_rrun *w = &runs[i];

		w->todo = 1;
		w->ended = false;
		w->cut = 0;
		w->done = rrun_done;
		w->front = &b;
		if (w->iovcnt <= 0 || w->iovcnt > LPC_IO_MAX_IOV) {
			w->res = -EINVAL;
			w->todo = 0;
		} else {
			w->cut = fault_check(&io->faults, LPC_IO_READ, f->id);
			w->res = w->cut < 0 ? w->cut : 0;
			w->todo = w->cut >= 0;
		}
		if (!w->todo) {
			w->ended = true;
			if (end)
				end(arg, w); /* RQ5: failed before any read */
			continue;
		}
		ntodo++;						/* RQ2 */
	}
	if (!ntodo)
		return;
	if (ops->readv_batch) {
		ops->readv_batch(f, runs, nruns);			/* RQ3 */
	} else {
		for (int i = 0; i < nruns; i++) {
			if (!runs[i].todo)
				continue;
			runs[i].res = readv_once(io, f, runs[i].iov, runs[i].iovcnt, runs[i].off,
						 runs[i].index);
			rrun_end(&b, &runs[i], true);
		}
	}
	for (int i = 0; i < nruns; i++)					/* RQ4 */
		rrun_end(&b, &runs[i], true);
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

/* Drops the first `n` bytes of an iovec array in place. */
static int iov_advance(struct iovec *iov, int cnt, size_t n)
{
	int i = 0;

	while (i < cnt && n >= iov[i].iov_len) {
		n -= iov[i].iov_len;
		i++;
	}
	if (i < cnt) {
		iov[i].iov_base = (char *)iov[i].iov_base + n;
		iov[i].iov_len -= n;
	}
	return i;
}

/* Clears O_DIRECT on f after the kernel refused a direct transfer (EINVAL).
 * Return: true if the transfer should be tried again buffered. */
static bool direct_off(struct lpc_io_file *f)
{
	int fl;

	if (!atomic_load_explicit(&f->direct, memory_order_relaxed))
		return false;
	fl = fcntl(f->fd, F_GETFL);
	if (fl < 0 || fcntl(f->fd, F_SETFL, fl & ~O_DIRECT) != 0)
		return false;
	atomic_store_explicit(&f->direct, 0, memory_order_relaxed);
	return true;
}

/* How write_loop's first round starts: as any (the hook, then the backend);
 * with the hook's answer already taken (`first` is it: a short size); or with
 * the backend's result already there (a batch made the call: `first`). */
enum { FIRST_PLAIN, FIRST_FAULTED, FIRST_DONE };

/* The loop of lpc_io_write (see its comment in io.h). */
static int write_loop(struct lpc_io *io, struct lpc_io_file *f, const struct iovec *iov0,
		      int iovcnt, uint64_t off, unsigned *calls, int how, ssize_t first)
{
	struct iovec iov[LPC_IO_MAX_IOV];
	struct iovec *v = iov;
	size_t total = 0;
	int cnt = iovcnt;

	if (iovcnt <= 0 || iovcnt > LPC_IO_MAX_IOV)
		return -EINVAL;
	memcpy(iov, iov0, sizeof(*iov) * (size_t)iovcnt);
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	while (total > 0) {
		ssize_t fault = how == FIRST_PLAIN ? fault_check(&io->faults, LPC_IO_WRITE, f->id)
				: how == FIRST_FAULTED ? first : 0;
		ssize_t r;

		if (fault < 0)
			return (int)fault;
		if (fault > 0) {
			/* A short transfer: write only the first `fault` bytes
			 * (whole 512 B sectors on an O_DIRECT descriptor). */
			size_t want = (size_t)fault;
			struct iovec part[LPC_IO_MAX_IOV];
			int n = 0;

			if (atomic_load_explicit(&f->direct, memory_order_relaxed))
				want &= ~(size_t)511;
			if (want > total)
				want = total;
			for (size_t left = want; left > 0 && n < cnt; n++) {
				part[n] = v[n];
				if (part[n].iov_len > left)
					part[n].iov_len = left;
				left -= part[n].iov_len;
			}
			r = want ? lpc_io_ops(io, f)->writev(f, part, n, off) : 0;
		} else {
			r = how == FIRST_DONE ? first : lpc_io_ops(io, f)->writev(f, v, cnt, off);
			if (r == -EINVAL && direct_off(f))
				r = lpc_io_ops(io, f)->writev(f, v, cnt, off);
		}
		how = FIRST_PLAIN;
		if (calls)
			(*calls)++;
		if (r < 0)
			return (int)r;
		if (r == 0)
			return -EIO; /* no progress: never report bytes missing as success */
		/* Short: complete it (the rest is still ours to write). */
		{
			int skip = iov_advance(v, cnt, (size_t)r);

			v += skip;
			cnt -= skip;
		}
		total -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

int lpc_io_write(struct lpc_io *io, struct lpc_io_file *f, const struct iovec *iov0,
		 int iovcnt, uint64_t off, unsigned *calls)
{
	return write_loop(io, f, iov0, iovcnt, off, calls, FIRST_PLAIN, 0);
}

int lpc_io_write_batch(struct lpc_io *io, struct lpc_io_file *f, struct lpc_io_wrun *runs,
		       int nruns, unsigned *calls)
{
	int ntodo = 0, first = 0;

	/* The hook first, once per run, in run order (as lpc_io_write would
	 * see them), before any write: a faulted run is then written (or
	 * failed) on its own, its completions passing the hook again. */
	for (int i = 0; i < nruns; i++) {
		struct lpc_io_wrun *w = &runs[i];

		w->todo = 0;
		w->err = 0;
		w->res = 0;
		if (w->iovcnt <= 0 || w->iovcnt > LPC_IO_MAX_IOV)
			w->err = -EINVAL;
		else
			w->res = fault_check(&io->faults, LPC_IO_WRITE, f->id);
	}
	for (int i = 0; i < nruns; i++) {
		struct lpc_io_wrun *w = &runs[i];

		if (w->err)
			continue;
		if (w->res < 0) {
			w->err = (int)w->res;
		} else if (w->res > 0) {
			w->err = write_loop(io, f, w->iov, w->iovcnt, w->off, calls, FIRST_FAULTED,
					    w->res);
		} else {
			w->todo = 1;
			ntodo++;
		}
	}
	if (ntodo) {
		if (lpc_io_ops(io, f)->writev_batch) {
			lpc_io_ops(io, f)->writev_batch(f, runs, nruns);
		} else {
			for (int i = 0; i < nruns; i++)
				if (runs[i].todo)
					runs[i].res = lpc_io_ops(io, f)->writev(f, runs[i].iov,
								      runs[i].iovcnt, runs[i].off);
		}
		/* Complete what came back short, redo EINVAL buffered. */
		for (int i = 0; i < nruns; i++) {
			struct lpc_io_wrun *w = &runs[i];

			if (w->todo)
				w->err = write_loop(io, f, w->iov, w->iovcnt, w->off, calls, FIRST_DONE,
						    w->res);
		}
	}
	for (int i = 0; i < nruns && !first; i++)
		first = runs[i].err;
	return first;
}

int lpc_io_sync(struct lpc_io *io, struct lpc_io_file *f)
{
	ssize_t fault = fault_check(&io->faults, LPC_IO_SYNCOP, f->id);

	if (fault < 0)
		return (int)fault;
	return lpc_io_ops(io, f)->sync(f);
}

int lpc_io_truncate(struct lpc_io *io, struct lpc_io_file *f, uint64_t size)
{
	return lpc_io_ops(io, f)->truncate(f, size);
}

int lpc_io_size(struct lpc_io *io, struct lpc_io_file *f, uint64_t *out)
{
	struct stat st;

	if (lpc_io_ops(io, f)->size)
		return lpc_io_ops(io, f)->size(f, out);
	if (fstat(f->fd, &st) != 0)
		return -errno;
	*out = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	return 0;
}
