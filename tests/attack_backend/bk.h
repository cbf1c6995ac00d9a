/* SPDX-License-Identifier: MIT */
/*
 * bk.h - the backend review's in-memory user backend (lpc_file_open_backend,
 * lpc.h BK1-BK6): the storage object is a byte array with its own size,
 * guarded by a mutex, so a program sees exactly what reached "the storage".
 * Knobs make one operation misbehave the way a program needs.
 */
#ifndef ATT_BK_H
#define ATT_BK_H
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <lpc/lpc.h>

struct mem {
	pthread_mutex_t lock;
	unsigned char *data;
	uint64_t size, cap;
	/* knobs */
	_Atomic int write_fail;      /* > 0: the next n writes return -EIO */
	_Atomic int read_short;      /* > 0: reads return at most this many bytes */
	_Atomic int sync_fail;       /* > 0: next n syncs return -EIO */
	/* observations */
	_Atomic int released;
	_Atomic int after_release;
	_Atomic int misaligned;
	_Atomic int reads, writes, syncs, truncs, sizes;
};

static inline void mem_init(struct mem *m, uint64_t size)
{
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	m->cap = size > 4096 ? size : 4096;
	m->data = calloc(1, m->cap);
	m->size = size;
}

static inline void mem_fill(struct mem *m, unsigned char (*pat)(uint64_t))
{
	for (uint64_t i = 0; i < m->size; i++)
		m->data[i] = pat(i);
}

static inline void mem_reserve(struct mem *m, uint64_t end)
{
	if (end > m->cap) {
		uint64_t nc = m->cap;
		while (nc < end)
			nc *= 2;
		m->data = realloc(m->data, nc);
		memset(m->data + m->cap, 0, nc - m->cap);
		m->cap = nc;
	}
}

static inline void mem_note(struct mem *m, const struct iovec *iov, int n, uint64_t off)
{
	if (atomic_load(&m->released))
		atomic_fetch_add(&m->after_release, 1);
	if (off % 4096)
		atomic_fetch_add(&m->misaligned, 1);
	for (int i = 0; i < n; i++)
		if ((uintptr_t)iov[i].iov_base % 4096 || iov[i].iov_len != 4096)
			atomic_fetch_add(&m->misaligned, 1);
}

static inline ssize_t mem_read(void *h, const struct iovec *iov, int n, uint64_t off)
{
	struct mem *m = h;
	size_t done = 0, lim = (size_t)atomic_load(&m->read_short);

	atomic_fetch_add(&m->reads, 1);
	mem_note(m, iov, n, off);
	pthread_mutex_lock(&m->lock);
	for (int i = 0; i < n; i++) {
		uint64_t o = off + done;
		size_t l = iov[i].iov_len;
		if (o >= m->size)
			break;
		if (l > m->size - o)
			l = (size_t)(m->size - o);
		if (lim && done + l > lim)
			l = lim - done;
		memcpy(iov[i].iov_base, m->data + o, l);
		done += l;
		if (l < iov[i].iov_len)
			break;
	}
	pthread_mutex_unlock(&m->lock);
	return (ssize_t)done;
}

static inline ssize_t mem_write(void *h, const struct iovec *iov, int n, uint64_t off)
{
	struct mem *m = h;
	size_t done = 0;
	int f;

	atomic_fetch_add(&m->writes, 1);
	if (atomic_load(&m->released))
		atomic_fetch_add(&m->after_release, 1);
	f = atomic_load(&m->write_fail);
	while (f > 0)
		if (atomic_compare_exchange_weak(&m->write_fail, &f, f - 1))
			return -EIO;
	pthread_mutex_lock(&m->lock);
	for (int i = 0; i < n; i++) {
		mem_reserve(m, off + done + iov[i].iov_len);
		memcpy(m->data + off + done, iov[i].iov_base, iov[i].iov_len);
		done += iov[i].iov_len;
	}
	if (off + done > m->size)
		m->size = off + done;
	pthread_mutex_unlock(&m->lock);
	return (ssize_t)done;
}

static inline int mem_sync(void *h)
{
	struct mem *m = h;
	int f = atomic_load(&m->sync_fail);

	atomic_fetch_add(&m->syncs, 1);
	while (f > 0)
		if (atomic_compare_exchange_weak(&m->sync_fail, &f, f - 1))
			return -EIO;
	return 0;
}

static inline int mem_truncate(void *h, uint64_t size)
{
	struct mem *m = h;

	atomic_fetch_add(&m->truncs, 1);
	pthread_mutex_lock(&m->lock);
	mem_reserve(m, size);
	if (size < m->size)
		memset(m->data + size, 0, m->size - size);
	m->size = size;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static inline int mem_size(void *h, uint64_t *size)
{
	struct mem *m = h;

	atomic_fetch_add(&m->sizes, 1);
	pthread_mutex_lock(&m->lock);
	*size = m->size;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

static inline void mem_release(void *h)
{
	struct mem *m = h;

	atomic_fetch_add(&m->released, 1);
}

static const struct lpc_backend_ops mem_ops = {
	.version = LPC_BACKEND_V1,
	.read = mem_read,
	.write = mem_write,
	.sync = mem_sync,
	.truncate = mem_truncate,
	.size = mem_size,
	.release = mem_release,
};

static inline struct lpc_cache *att_cache(void)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	int rc;

	lpc_config_init(&cfg);
	rc = lpc_cache_create(&cfg, &c);
	if (rc) {
		fprintf(stderr, "lpc_cache_create: %d\n", rc);
		exit(2);
	}
	return c;
}

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: setup failed: %s\n", __FILE__, __LINE__, #x); exit(2); } } while (0)
#endif
