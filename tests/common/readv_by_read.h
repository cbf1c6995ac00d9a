/* SPDX-License-Identifier: MIT */
/*
 * readv_by_read.h - the readv of a test's backend wrapper (a gate that holds
 * or counts reads: common/gate_io.h, attack/fgate.h, attack/g2.h,
 * attack_qd/qd.h, attack_stream/slow.h, unit/test_readahead.c,
 * unit/test_ra_pool.c), forwarded to the backend it wraps.
 *
 * A wrapper installs its own readv over every backend, also over one that
 * has none (ops.readv NULL: the front, io.c readv_once, would then have read
 * the run page by page itself).  So where the wrapped backend has no readv,
 * the wrapper must do what the front does: one read per page, iov[k] being
 * page index + k at off + the bytes before it, stopping at the first short
 * read (end of file) and returning the bytes read so far, or the first
 * error where nothing was read.  tst_readv_by_read is that read-by-read
 * fallback, written once; tst_readv_inner forwards to the wrapped readv
 * where there is one and falls back to it otherwise.
 *
 * Header-only: the attack programs (tests/attack*) build from their own
 * Makefiles, without the CMake test targets' objects.
 */
#ifndef LPC_TESTS_READV_BY_READ_H
#define LPC_TESTS_READV_BY_READ_H
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "io/io.h"

/* Reads the run iov[0..iovcnt) at off (page index of iov[0]) through
 * inner->read, one page at a time.  Return: the bytes read, short at the
 * first short read; the first read's negative errno where nothing was read
 * (a later error ends the run short instead, as a short transfer would). */
static inline ssize_t tst_readv_by_read(const struct lpc_io_backend_ops *inner,
					struct lpc_io_file *f, const struct iovec *iov,
					int iovcnt, uint64_t off, uint64_t index)
{
	size_t done = 0;

	for (int k = 0; k < iovcnt; k++) {
		ssize_t r = inner->read(f, iov[k].iov_base, iov[k].iov_len, off + done,
					index + (uint64_t)k);

		if (r < 0)
			return done ? (ssize_t)done : r;
		done += (size_t)r;
		if ((size_t)r < iov[k].iov_len)
			break;
	}
	return (ssize_t)done;
}

/* The wrapped backend's readv of the run, or tst_readv_by_read where it has
 * none.  Return: as the backend's readv. */
static inline ssize_t tst_readv_inner(const struct lpc_io_backend_ops *inner,
				      struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
				      uint64_t off, uint64_t index)
{
	if (inner->readv)
		return inner->readv(f, iov, iovcnt, off, index);
	return tst_readv_by_read(inner, f, iov, iovcnt, off, index);
}
#endif
