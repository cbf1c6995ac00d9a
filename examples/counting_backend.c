/* SPDX-License-Identifier: MIT */
/*
 * counting_backend.c - a user backend (lpc_file_open_backend) to copy: the
 * storage is a second file, reached with pread/pwrite/fdatasync/ftruncate/
 * fstat, and every operation lpc calls is counted.  Swap the bodies of the
 * six functions for a network protocol, an SPDK device or an object store,
 * and the rest of lpc works over it unchanged.
 *
 * The program writes SIZE bytes of text through lpc, makes them durable
 * with lpc_fsync, closes the file, opens it again over a new handle, reads
 * it back and compares, then prints what the backend saw.
 * Usage: counting_backend STORAGE_FILE [SIZE]    (SIZE: default 41060)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <lpc/lpc.h>

/* The handle: what lpc hands back to every operation. */
struct counting {
	int fd;
	/* lpc calls operations from several threads at once (its flusher,
	 * readahead and the callers'): the counts are atomic. */
	atomic_ulong reads, read_pages, writes, write_pages, syncs, truncates, sizes;
	atomic_int released;
};

static size_t iov_bytes(const struct iovec *iov, int iovcnt)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* A run of whole pages at off.  Complete a partial transfer: return fewer
 * bytes only at the end of the storage. */
static ssize_t cb_read(void *h, const struct iovec *iov, int iovcnt, uint64_t off)
{
	struct counting *b = h;
	size_t want = iov_bytes(iov, iovcnt), done = 0;

	b->reads++;
	b->read_pages += (unsigned long)iovcnt;
	while (done < want) {
		/* preadv from where the last one stopped: find that iovec. */
		struct iovec v[1024];
		size_t skip = done;
		int n = 0;
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
		r = preadv(b->fd, v, n, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return done ? (ssize_t)done : -errno;
		if (r == 0)
			break; /* end of the storage: lpc zeroes the rest */
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* A short write is fine: lpc writes the rest again. */
static ssize_t cb_write(void *h, const struct iovec *iov, int iovcnt, uint64_t off)
{
	struct counting *b = h;
	ssize_t r;

	b->writes++;
	b->write_pages += (unsigned long)iovcnt;
	do {
		r = pwritev(b->fd, iov, iovcnt, (off_t)off);
	} while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

static int cb_sync(void *h)
{
	struct counting *b = h;

	b->syncs++;
	while (fdatasync(b->fd) != 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int cb_truncate(void *h, uint64_t size)
{
	struct counting *b = h;

	b->truncates++;
	while (ftruncate(b->fd, (off_t)size) != 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int cb_size(void *h, uint64_t *size)
{
	struct counting *b = h;
	struct stat st;

	b->sizes++;
	if (fstat(b->fd, &st) != 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

/* lpc is done with the handle: after the last close's writeback. */
static void cb_release(void *h)
{
	struct counting *b = h;

	b->released++;
}

/* Version 1: no read_batch (BK7, optional, version 2), so lpc reads a
 * batch run by run with read, from several threads at once. */
static const struct lpc_backend_ops counting_ops = {
	.version = LPC_BACKEND_V1,
	.read = cb_read,
	.write = cb_write,
	/* .write_batch left NULL: lpc calls write once per run */
	.sync = cb_sync,
	.truncate = cb_truncate,
	.size = cb_size,
	.release = cb_release,
};

static int fail(const char *what, long rc)
{
	fprintf(stderr, "counting_backend: %s: %s\n", what, strerror((int)-rc));
	return 1;
}

static void print_counts(const char *when, struct counting *b)
{
	printf("%s: reads %lu (%lu pages), writes %lu (%lu pages), syncs %lu, truncates %lu, "
	       "sizes %lu, released %d\n", when, (unsigned long)b->reads,
	       (unsigned long)b->read_pages, (unsigned long)b->writes,
	       (unsigned long)b->write_pages, (unsigned long)b->syncs,
	       (unsigned long)b->truncates, (unsigned long)b->sizes, (int)b->released);
}

int main(int argc, char **argv)
{
	static const char line[] = "lpc over a backend of its own.\n";
	struct counting first = { .fd = -1 }, second = { .fd = -1 };
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	char name[4096];
	size_t size = argc > 2 ? strtoul(argv[2], NULL, 0) : 41060;
	char *data, *back;
	ssize_t n;
	int rc;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s STORAGE_FILE [SIZE]\n", argv[0]);
		return 2;
	}
	data = malloc(size + 1);
	back = malloc(size + 1);
	if (!data || !back)
		return fail("malloc", -ENOMEM);
	for (size_t i = 0; i < size; i++)
		data[i] = line[i % (sizeof(line) - 1)];

	lpc_config_init(&cfg); /* 64 MiB of 4 KiB pages */
	rc = lpc_cache_create(&cfg, &c);
	if (rc < 0)
		return fail("lpc_cache_create", rc);
	/* The name is the storage object's identity in the cache: opening it
	 * again while it is open returns the same lpc_file. */
	snprintf(name, sizeof(name), "counting:%s", argv[1]);

	first.fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (first.fd < 0)
		return fail(argv[1], -errno);
	rc = lpc_file_open_backend(c, name, &counting_ops, &first, O_RDWR, &f);
	if (rc < 0)
		return fail("lpc_file_open_backend", rc);
	n = lpc_pwrite(f, data, size, 0);
	if (n != (ssize_t)size)
		return fail("lpc_pwrite", n < 0 ? n : -EIO);
	rc = lpc_fsync(f);
	if (rc < 0)
		return fail("lpc_fsync", rc);
	printf("wrote %zu bytes, lpc_fsync ok\n", size);
	print_counts("after fsync", &first);
	rc = lpc_file_close(f);
	if (rc < 0)
		return fail("lpc_file_close", rc);
	print_counts("after close", &first);
	close(first.fd); /* released: the handle is ours again */

	/* Again over a new handle: the pages left the cache at the last
	 * close, so every one is read from the storage. */
	second.fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (second.fd < 0)
		return fail(argv[1], -errno);
	rc = lpc_file_open_backend(c, name, &counting_ops, &second, O_RDONLY, &f);
	if (rc < 0)
		return fail("lpc_file_open_backend", rc);
	n = lpc_pread(f, back, size + 1, 0);
	if (n < 0)
		return fail("lpc_pread", n);
	printf("read %zd bytes back: %s\n", n,
	       (size_t)n == size && !memcmp(back, data, size) ? "equal" : "DIFFERENT");
	rc = lpc_file_close(f);
	if (rc < 0)
		return fail("lpc_file_close", rc);
	print_counts("reader", &second);
	close(second.fd);
	rc = lpc_cache_destroy(c);
	if (rc < 0)
		return fail("lpc_cache_destroy", rc);
	free(data);
	free(back);
	return (size_t)n == size ? 0 : 1;
}
