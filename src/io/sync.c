/* SPDX-License-Identifier: MIT */
/*
 * sync.c - the synchronous backend: pread/pwrite on the file's descriptor
 * (O_DIRECT unless the file system refused it), retrying EINTR and partial
 * transfers, so a short count means end of file (on O_DIRECT, the first
 * short read is the end: lpc_io_read_ends).
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/io.h"

static ssize_t sync_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			 uint64_t index)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(f->fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (r == 0)
			break;
		done += (size_t)r;
		if (lpc_io_read_ends(f, (size_t)r, len - (done - (size_t)r)))
			break;
	}
	return (ssize_t)done;
}

/* One preadv, then the rest of a partial transfer until end of file. */
static ssize_t sync_readv(struct lpc_io_file *f, const struct iovec *iov0, int iovcnt,
			  uint64_t off, uint64_t index)
{
	struct iovec iov[LPC_IO_MAX_IOV];
	struct iovec *v = iov;
	size_t done = 0, total = 0;
	int cnt = iovcnt;

	(void)index;
	if (iovcnt <= 0 || iovcnt > LPC_IO_MAX_IOV)
		return -EINVAL;
	memcpy(iov, iov0, sizeof(*iov) * (size_t)iovcnt);
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	while (done < total) {
		ssize_t r = preadv(f->fd, v, cnt, (off_t)(off + done));
		size_t n;

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (r == 0)
			break;
		done += (size_t)r;
		if (lpc_io_read_ends(f, (size_t)r, total - (done - (size_t)r)))
			break;
		for (n = (size_t)r; cnt > 0 && n >= v->iov_len; cnt--, v++)
			n -= v->iov_len;
		if (cnt > 0) {
			v->iov_base = (char *)v->iov_base + n;
			v->iov_len -= n;
		}
	}
	return (ssize_t)done;
}

static ssize_t sync_write(struct lpc_io_file *f, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pwrite(f->fd, (const char *)buf + done, len - done,
				   (off_t)(off + done));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		if (r == 0)
			return done ? (ssize_t)done : -EIO;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

static int sync_sync(struct lpc_io_file *f)
{
	while (fdatasync(f->fd) != 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/* One pwritev; the front (lpc_io_write) completes a short one. */
static ssize_t sync_writev(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			   uint64_t off)
{
	ssize_t r;

	do {
		r = pwritev(f->fd, iov, iovcnt, (off_t)off);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/* A batch is a loop of pwritev here (io_uring submits it at once). */
static void sync_writev_batch(struct lpc_io_file *f, struct lpc_io_wrun *runs, int nruns)
{
	for (int i = 0; i < nruns; i++)
		if (runs[i].todo)
			runs[i].res = sync_writev(f, runs[i].iov, runs[i].iovcnt, runs[i].off);
}

static int sync_truncate(struct lpc_io_file *f, uint64_t size)
{
	while (ftruncate(f->fd, (off_t)size) != 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

const struct lpc_io_backend_ops lpc_io_sync_ops = {
	.name = "sync",
	.read = sync_read,
	.readv = sync_readv,
	.write = sync_write,
	.sync = sync_sync,
	.writev = sync_writev,
	.truncate = sync_truncate,
	.writev_batch = sync_writev_batch,
};
