/* SPDX-License-Identifier: MIT */
/* g2.h - a read gate over up to four files at once (fgate.h holds one):
 * while closed it holds every read of a gated file (by lpc_io_file.id). */
#ifndef G2_H
#define G2_H
#include <pthread.h>
#include <time.h>

#include "../common/readv_by_read.h"
#include "cache/cache.h"

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t ids[4];
	unsigned nids, entered;
	bool closed;
	const struct lpc_io_backend_ops *inner;
	struct lpc_io_backend_ops ops;
} g2 = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };

static void g2_pass(struct lpc_io_file *f)
{
	pthread_mutex_lock(&g2.mu);
	for (unsigned i = 0; i < g2.nids; i++)
		if (g2.closed && f->id == g2.ids[i]) {
			g2.entered++;
			pthread_cond_broadcast(&g2.cv);
			while (g2.closed)
				pthread_cond_wait(&g2.cv, &g2.mu);
			break;
		}
	pthread_mutex_unlock(&g2.mu);
}

static ssize_t g2_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off, uint64_t index)
{
	g2_pass(f);
	return g2.inner->read(f, buf, len, off, index);
}

static ssize_t g2_readv(struct lpc_io_file *f, const struct iovec *iov, int iovcnt, uint64_t off,
			uint64_t index)
{
	g2_pass(f);
	return tst_readv_inner(g2.inner, f, iov, iovcnt, off, index);
}

static inline void g2_install(struct lpc_cache *c)
{
	g2.inner = c->io.ops;
	g2.ops = *c->io.ops;
	g2.ops.read = g2_read;
	g2.ops.readv = g2_readv;
	c->io.ops = &g2.ops;
}

static inline uint64_t g2_id(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static inline void g2_close(uint64_t id)
{
	pthread_mutex_lock(&g2.mu);
	g2.ids[g2.nids++] = id;
	g2.closed = true;
	pthread_mutex_unlock(&g2.mu);
}

static inline void g2_open(void)
{
	pthread_mutex_lock(&g2.mu);
	g2.closed = false;
	pthread_cond_broadcast(&g2.cv);
	pthread_mutex_unlock(&g2.mu);
}

static inline unsigned g2_entered_after(int ms)
{
	unsigned n;

	usleep((useconds_t)ms * 1000);
	pthread_mutex_lock(&g2.mu);
	n = g2.entered;
	pthread_mutex_unlock(&g2.mu);
	return n;
}

/* Runs fn(arg) in a thread; true when it returned within ms. */
struct g2_call { void *(*fn)(void *); void *arg; _Atomic int done; pthread_t th; };
static void *g2_tramp(void *a)
{
	struct g2_call *c = a;

	c->fn(c->arg);
	atomic_store(&c->done, 1);
	return NULL;
}
static inline bool g2_returns_within(struct g2_call *c, int ms)
{
	pthread_create(&c->th, NULL, g2_tramp, c);
	for (int i = 0; i < ms / 10 && !atomic_load(&c->done); i++)
		usleep(10000);
	return atomic_load(&c->done);
}
#endif
