/* SPDX-License-Identifier: MIT */
/*
 * null.c - the null backend, after the kernel's null_blk: reads fill a
 * pattern derived from (file id, index), writes are discarded, sync succeeds.
 * Tests check every byte they read against lpc_io_null_pattern; benchmarks
 * measure the cache rather than the disk.  Like a disk, it reads short at the
 * file's size.
 */
#include <string.h>

#include "io/io.h"

/* splitmix64's finaliser: every bit of the input moves every bit of the output. */
static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/*
 * The fill is a memset and a word per 64-byte line, not a word of its own
 * for each of the page's 512: glibc's memset of a page is `rep stosb`, as
 * the kernel's clear_page, which writes whole lines without reading them
 * first, and the stamps then land in lines just written.  With a computed
 * store per word (0.2's pattern), writing each cold frame read it from
 * memory first: the fill took 72% of a null-backend miss (perf, lpcbench
 * fault, one thread) and two threads' misses shared the memory bandwidth,
 * so lpcbench fault measured the pattern's cost, not the cache's, beside
 * the kernel's anonymous fault that only clears its page.  Each line still
 * carries a word of its own (seed + offset, the seed a hash of id and
 * index), so a torn page, another page or a shifted copy is seen at every
 * line, and the bytes between are the page's own fill byte.
 */
void lpc_io_null_pattern(uint64_t id, uint64_t index, void *buf, size_t len)
{
	uint64_t words[2] = { id, index };
	uint64_t seed = mix64(id * 0x9e3779b97f4a7c15ULL ^ index);
	unsigned char *b = buf;

	memset(b, (int)(unsigned char)(seed >> 56), len);
	if (len >= sizeof(words))
		memcpy(b, words, sizeof(words));
	for (size_t i = 64; i + 8 <= len; i += 64) {
		uint64_t w = seed + i;

		memcpy(b + i, &w, 8);
	}
}

static ssize_t null_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			 uint64_t index)
{
	uint64_t size = atomic_load_explicit(&f->size, memory_order_relaxed);

	if (off >= size)
		return 0;
	if (len > size - off)
		len = (size_t)(size - off);
	lpc_io_null_pattern(f->id, index, buf, len);
	return (ssize_t)len;
}

/* Page by page: iov[k] is page index + k. */
static ssize_t null_readv(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			  uint64_t off, uint64_t index)
{
	size_t done = 0;

	for (int k = 0; k < iovcnt; k++) {
		ssize_t r = null_read(f, iov[k].iov_base, iov[k].iov_len, off + done,
				      index + (uint64_t)k);

		done += (size_t)r;
		if ((size_t)r < iov[k].iov_len)
			break;
	}
	return (ssize_t)done;
}

static ssize_t null_write(struct lpc_io_file *f, const void *buf, size_t len, uint64_t off)
{
	return (ssize_t)len;
}

static int null_sync(struct lpc_io_file *f)
{
	return 0;
}

static ssize_t null_writev(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			   uint64_t off)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return (ssize_t)n;
}

/* The file keeps its size on disk; only what reads are bounded by changes. */
static int null_truncate(struct lpc_io_file *f, uint64_t size)
{
	atomic_store_explicit(&f->size, size, memory_order_relaxed);
	return 0;
}

/* The size reads are bounded by: the null file's only size. */
static int null_size(struct lpc_io_file *f, uint64_t *out)
{
	*out = atomic_load_explicit(&f->size, memory_order_relaxed);
	return 0;
}

const struct lpc_io_backend_ops lpc_io_null_ops = {
	.name = "null",
	.read = null_read,
	.readv = null_readv,
	.write = null_write,
	.sync = null_sync,
	.writev = null_writev,
	.truncate = null_truncate,
	.size = null_size,
};
