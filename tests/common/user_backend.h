/* SPDX-License-Identifier: MIT */
/*
 * user_backend.h - a user backend for the tests (lpc_file_open_backend,
 * lpc.h BK1-BK6): the storage object is a second, plain descriptor of a
 * file (buffered pread/pwrite/fdatasync/ftruncate/fstat), so a test checks
 * what reached the storage by reading the file.  Each handle counts its
 * operations, checks every call against the rules lpc promises a backend
 * (BK3: offsets and frames page-aligned, whole pages, 1..1024 iovecs; no
 * write on a read-only open; no operation after release), and can be told
 * to fail its next operations of a kind, to write short, or to return more
 * than asked (BK4's broken backend).
 *
 * tub_ops has every operation of version 1; tub_ops_plain leaves out
 * write_batch and sync; tub_ops_fixed leaves out truncate too (a storage of
 * fixed size); tub_ops_batch is version 2, with read_batch (BK7: it reads
 * every run, then completes them last first, so lpc meets completions out
 * of order; `undone` makes it return with its last run not completed).
 */
#ifndef LPC_TESTS_COMMON_USER_BACKEND_H
#define LPC_TESTS_COMMON_USER_BACKEND_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <lpc/lpc.h>

enum tub_kind { TUB_READ, TUB_WRITE, TUB_SYNC, TUB_TRUNCATE, TUB_SIZE, TUB_NKIND };

struct tub {
	int fd;
	size_t ps;      /* the cache's page size: BK3 is checked against it */
	bool rdonly;    /* opened O_RDONLY: a write is a breach */
	bool free_on_release; /* release closes and frees it (else tub_free) */
	_Atomic uint64_t calls[TUB_NKIND];
	_Atomic uint64_t pages_read, pages_written, batches, max_iovcnt;
	_Atomic uint64_t breaches;  /* BK3 (or a write on a read-only open) */
	_Atomic int released;       /* release calls seen (must end at 1) */
	_Atomic uint64_t after_release; /* operations called after release */
	/* Faults: the next fail_n[kind] operations of that kind return
	 * -fail_err[kind] (fail_n -1: every one until cleared). */
	_Atomic int fail_n[TUB_NKIND];
	_Atomic int fail_err[TUB_NKIND];
	_Atomic size_t short_write; /* > 0: a write transfers at most this */
	_Atomic size_t overrun;     /* > 0: a read returns this many bytes more */
	_Atomic uint64_t read_batches, read_batch_runs, read_batch_max;
	_Atomic int undone;         /* 1: read_batch leaves its last run undone */
};

/* Handles made and released by every tub_open/tub_release, for tests that
 * check release is called exactly once per handle lpc took. */
static _Atomic uint64_t tub_made, tub_releases;
/* The breaches (BK3, a write through a read-only handle) of every handle,
 * added at its release: what a freed handle saw is still counted. */
static _Atomic uint64_t tub_breaches;

static inline void tub_note(struct tub *t, enum tub_kind k)
{
	atomic_fetch_add(&t->calls[k], 1);
	if (atomic_load(&t->released))
		atomic_fetch_add(&t->after_release, 1);
}

/* Return: 0, or the negative errno of an armed fault for kind k. */
static inline int tub_fault(struct tub *t, enum tub_kind k)
{
	int n = atomic_load(&t->fail_n[k]);

	while (n != 0) {
		if (n < 0)
			return -atomic_load(&t->fail_err[k]);
		if (atomic_compare_exchange_weak(&t->fail_n[k], &n, n - 1))
			return -atomic_load(&t->fail_err[k]);
	}
	return 0;
}

static inline void tub_fail(struct tub *t, enum tub_kind k, int n, int err)
{
	atomic_store(&t->fail_err[k], err);
	atomic_store(&t->fail_n[k], n);
}

/* BK3 for one call. */
static inline void tub_check_frames(struct tub *t, const struct iovec *iov, int iovcnt,
				    uint64_t off, bool whole)
{
	uint64_t m = atomic_load(&t->max_iovcnt);

	if (iovcnt < 1 || iovcnt > 1024) {
		atomic_fetch_add(&t->breaches, 1);
		return;
	}
	while ((uint64_t)iovcnt > m && !atomic_compare_exchange_weak(&t->max_iovcnt, &m,
								     (uint64_t)iovcnt))
		;
	if (!whole)
		return;
	if (off % t->ps)
		atomic_fetch_add(&t->breaches, 1);
	for (int i = 0; i < iovcnt; i++)
		if (iov[i].iov_len != t->ps || (uintptr_t)iov[i].iov_base % t->ps)
			atomic_fetch_add(&t->breaches, 1);
}

static inline size_t tub_total(const struct iovec *iov, int iovcnt)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

static inline ssize_t tub_read(void *h, const struct iovec *iov, int iovcnt, uint64_t off)
{
	struct tub *t = h;
	size_t want = tub_total(iov, iovcnt), done = 0;
	int rc;

	tub_note(t, TUB_READ);
	tub_check_frames(t, iov, iovcnt, off, true);
	atomic_fetch_add(&t->pages_read, (uint64_t)iovcnt);
	rc = tub_fault(t, TUB_READ);
	if (rc)
		return rc;
	/* Complete a partial transfer (BK's read contract): short only at
	 * the end of the file. */
	while (done < want) {
		struct iovec v[1024];
		int n = 0;
		size_t skip = done;
		ssize_t r;

		for (int i = 0; i < iovcnt; i++) {
			if (skip >= iov[i].iov_len) {
				skip -= iov[i].iov_len;
				continue;
			}
			v[n].iov_base = (char *)iov[i].iov_base + skip;
			v[n++].iov_len = iov[i].iov_len - skip;
			skip = 0;
		}
		r = preadv(t->fd, v, n, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return done ? (ssize_t)done : -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	if (atomic_load(&t->overrun))
		return (ssize_t)(done + atomic_load(&t->overrun));
	return (ssize_t)done;
}

static inline ssize_t tub_write(void *h, const struct iovec *iov, int iovcnt, uint64_t off)
{
	struct tub *t = h;
	size_t lim = atomic_load(&t->short_write);
	struct iovec v[1024];
	int n = 0;
	size_t left;
	ssize_t r;
	int rc;

	tub_note(t, TUB_WRITE);
	if (t->rdonly)
		atomic_fetch_add(&t->breaches, 1);
	/* A completion of a short write starts inside a page (BK3). */
	tub_check_frames(t, iov, iovcnt, off, !lim && off % t->ps == 0);
	atomic_fetch_add(&t->pages_written, (uint64_t)iovcnt);
	rc = tub_fault(t, TUB_WRITE);
	if (rc)
		return rc;
	left = lim ? lim : (size_t)-1;
	for (int i = 0; i < iovcnt && left; i++) {
		v[n] = iov[i];
		if (v[n].iov_len > left)
			v[n].iov_len = left;
		left -= v[n].iov_len;
		n++;
	}
	do {
		r = pwritev(t->fd, v, n, (off_t)off);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

static inline void tub_write_batch(void *h, struct lpc_backend_run *runs, int nruns)
{
	struct tub *t = h;

	atomic_fetch_add(&t->batches, 1);
	for (int i = 0; i < nruns; i++)
		runs[i].res = tub_write(h, runs[i].iov, runs[i].iovcnt, runs[i].off);
}

/* BK7: every run read (read's checks and faults per run), then each
 * completed, last first. */
static inline void tub_read_batch(void *h, struct lpc_backend_run *runs, int nruns,
				  lpc_backend_done *done, void *arg)
{
	struct tub *t = h;
	uint64_t m = atomic_load(&t->read_batch_max);

	atomic_fetch_add(&t->read_batches, 1);
	atomic_fetch_add(&t->read_batch_runs, (uint64_t)nruns);
	while ((uint64_t)nruns > m &&
	       !atomic_compare_exchange_weak(&t->read_batch_max, &m, (uint64_t)nruns))
		;
	if (nruns < 1 || nruns > 64)
		atomic_fetch_add(&t->breaches, 1);
	for (int i = 0; i < nruns; i++)
		runs[i].res = tub_read(h, runs[i].iov, runs[i].iovcnt, runs[i].off);
	for (int i = nruns - 1; i >= 0; i--)
		if (!(i == nruns - 1 && atomic_load(&t->undone)))
			done(arg, i);
}

static inline int tub_sync(void *h)
{
	struct tub *t = h;
	int rc;

	tub_note(t, TUB_SYNC);
	rc = tub_fault(t, TUB_SYNC);
	if (rc)
		return rc;
	while (fdatasync(t->fd) != 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static inline int tub_truncate(void *h, uint64_t size)
{
	struct tub *t = h;
	int rc;

	tub_note(t, TUB_TRUNCATE);
	if (t->rdonly)
		atomic_fetch_add(&t->breaches, 1);
	rc = tub_fault(t, TUB_TRUNCATE);
	if (rc)
		return rc;
	while (ftruncate(t->fd, (off_t)size) != 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static inline int tub_size(void *h, uint64_t *size)
{
	struct tub *t = h;
	struct stat st;
	int rc;

	tub_note(t, TUB_SIZE);
	rc = tub_fault(t, TUB_SIZE);
	if (rc)
		return rc;
	if (fstat(t->fd, &st) != 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

static inline void tub_free(struct tub *t);

/* Counts the release; the handle is freed by tub_free (the test still
 * reads its counters) unless free_on_release is set. */
static inline void tub_release(void *h)
{
	struct tub *t = h;

	atomic_fetch_add(&t->released, 1);
	atomic_fetch_add(&tub_releases, 1);
	atomic_fetch_add(&tub_breaches, atomic_load(&t->breaches));
	if (t->free_on_release)
		tub_free(t);
}

static const struct lpc_backend_ops tub_ops = {
	.version = LPC_BACKEND_V1,
	.read = tub_read,
	.write = tub_write,
	.write_batch = tub_write_batch,
	.sync = tub_sync,
	.truncate = tub_truncate,
	.size = tub_size,
	.release = tub_release,
};

static const struct lpc_backend_ops tub_ops_plain = {
	.version = LPC_BACKEND_V1,
	.read = tub_read,
	.write = tub_write,
	.truncate = tub_truncate,
	.size = tub_size,
	.release = tub_release,
};

static const struct lpc_backend_ops tub_ops_fixed = {
	.version = LPC_BACKEND_V1,
	.read = tub_read,
	.write = tub_write,
	.sync = tub_sync,
	.size = tub_size,
	.release = tub_release,
};

static const struct lpc_backend_ops tub_ops_batch = {
	.version = LPC_BACKEND_V2,
	.read = tub_read,
	.write = tub_write,
	.write_batch = tub_write_batch,
	.sync = tub_sync,
	.truncate = tub_truncate,
	.size = tub_size,
	.release = tub_release,
	.read_batch = tub_read_batch,
};

/* A handle over path (buffered, read-write unless rdonly).  NULL on error. */
static inline struct tub *tub_new(const char *path, size_t ps, bool rdonly)
{
	struct tub *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->fd = open(path, (rdonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (t->fd < 0) {
		free(t);
		return NULL;
	}
	t->ps = ps;
	t->rdonly = rdonly;
	atomic_fetch_add(&tub_made, 1);
	return t;
}

static inline void tub_free(struct tub *t)
{
	if (!t)
		return;
	close(t->fd);
	free(t);
}

#endif /* LPC_TESTS_COMMON_USER_BACKEND_H */
