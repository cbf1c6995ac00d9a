/* SPDX-License-Identifier: MIT */
/* fgate.h - a per-file read gate: wraps a cache's backend (c->io.ops, an
 * internal field; install while no I/O is in flight) and holds the reads of
 * one file (by lpc_io_file.id, st_ino) while closed.  Reads of other files
 * pass untouched. */
#ifndef FGATE_H
#define FGATE_H
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#include "../common/readv_by_read.h"
#include "cache/cache.h"

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t id, min_index; /* held: reads of file id at index >= min_index */
	bool closed;
	unsigned entered, waiting;
	const struct lpc_io_backend_ops *inner;
	struct lpc_io_backend_ops ops;
} fg = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };

static void fg_pass(struct lpc_io_file *f, uint64_t index)
{
	pthread_mutex_lock(&fg.mu);
	if (f->id == fg.id && fg.closed && index >= fg.min_index) {
		fg.entered++;
		fg.waiting++;
		pthread_cond_broadcast(&fg.cv);
		while (fg.closed)
			pthread_cond_wait(&fg.cv, &fg.mu);
		fg.waiting--;
	}
	pthread_mutex_unlock(&fg.mu);
}

static ssize_t fg_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off, uint64_t index)
{
	fg_pass(f, index);
	return fg.inner->read(f, buf, len, off, index);
}

static ssize_t fg_readv(struct lpc_io_file *f, const struct iovec *iov, int iovcnt, uint64_t off,
			uint64_t index)
{
	fg_pass(f, index);
	return tst_readv_inner(fg.inner, f, iov, iovcnt, off, index);
}

static inline void fg_install(struct lpc_cache *c)
{
	fg.inner = c->io.ops;
	fg.ops = *c->io.ops;
	fg.ops.read = fg_read;
	fg.ops.readv = fg_readv;
	c->io.ops = &fg.ops;
}

static inline uint64_t fg_file_id(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static inline void fg_close(uint64_t id)
{
	pthread_mutex_lock(&fg.mu);
	fg.id = id;
	fg.closed = true;
	fg.entered = 0;
	pthread_mutex_unlock(&fg.mu);
}

static inline void fg_open(void)
{
	pthread_mutex_lock(&fg.mu);
	fg.closed = false;
	pthread_cond_broadcast(&fg.cv);
	pthread_mutex_unlock(&fg.mu);
}

/* Waits until n held reads entered; false after ms milliseconds. */
static inline bool fg_wait_entered(unsigned n, int ms)
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
	pthread_mutex_lock(&fg.mu);
	while (fg.entered < n)
		if (pthread_cond_timedwait(&fg.cv, &fg.mu, &ts))
			break;
	ok = fg.entered >= n;
	pthread_mutex_unlock(&fg.mu);
	return ok;
}
#endif
