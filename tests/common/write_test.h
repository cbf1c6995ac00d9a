/* SPDX-License-Identifier: MIT */
/*
 * write_test.h - helpers of the write tests (header only): the backends
 * every write test runs on, a reference copy of a file, and reading a file
 * back through a fresh kernel descriptor.
 */
#ifndef LPC_TESTS_COMMON_WRITE_TEST_H
#define LPC_TESTS_COMMON_WRITE_TEST_H

#include "lpc_test.h"

/* Every write test runs on each of these.  Where the kernel refuses
 * io_uring, LPC_IO_URING runs as sync (counted in uring_fallbacks). */
static const int tst_write_backends[] = { LPC_IO_SYNC, LPC_IO_URING };
#define TST_NWRITE_BACKENDS (sizeof(tst_write_backends) / sizeof(tst_write_backends[0]))

static inline const char *tst_backend_name(int b)
{
	return b == LPC_IO_SYNC ? "sync" : b == LPC_IO_NULL ? "null" : "uring";
}

/* A cache for write tests with explicit limits (0: defaults). */
static inline struct lpc_cache *tst_wcache_create(size_t frames, size_t ps, int backend,
						  uint64_t expire_ms, uint64_t bg_pct,
						  uint64_t limit_pct)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = frames * ps;
	cfg.page_size = ps;
	cfg.io_backend = backend;
	cfg.dirty_expire_ms = expire_ms;
	cfg.dirty_background_pct = bg_pct;
	cfg.dirty_limit_pct = limit_pct;
	rc = lpc_cache_create(&cfg, &c);
	REQUIRE(rc == 0 && c, "lpc_cache_create(write) = %d", rc);
	return c;
}

/* Reads the whole file at path with a fresh descriptor (no lpc) into buf
 * (at most max bytes).  Return: its size, or -1. */
static inline int64_t tst_kernel_read(const char *path, void *buf, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t done = 0;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0)
		return -1;
	while (done < max && done < (size_t)st.st_size) {
		ssize_t r = pread(fd, (char *)buf + done, max - done, (off_t)done);

		if (r <= 0)
			break;
		done += (size_t)r;
	}
	close(fd);
	return (int64_t)st.st_size;
}

/* First offset where a and b differ, or -1. */
static inline int64_t tst_first_diff(const void *a, const void *b, size_t len)
{
	const unsigned char *x = a, *y = b;

	if (!memcmp(a, b, len))
		return -1;
	for (size_t i = 0; i < len; i++)
		if (x[i] != y[i])
			return (int64_t)i;
	return -1;
}

/* Makes a test file `<prefix><pid>-<n>` of size bytes of tst_file_bytes(salt)
 * (n counts this file's calls; the pid keeps a forked child's apart) and puts
 * its path in path. */
static inline void tst_wfile(const char *prefix, char *path, size_t len, uint64_t size,
			     uint64_t salt)
{
	static int n;
	char name[64];

	snprintf(name, sizeof(name), "%s%d-%d", prefix, (int)getpid(), n++);
	REQUIRE(tst_make_file(name, size, salt, path, len) == 0, "making %s", name);
}

/* Checks that the file at path, read through a fresh kernel descriptor, is
 * exactly the len bytes of want.  Return: whether it is. */
static inline bool tst_kernel_equals(const char *path, const void *want, size_t len)
{
	unsigned char *k = calloc(1, len + 4096);
	int64_t n;
	bool ok;

	REQUIRE(k);
	n = tst_kernel_read(path, k, len + 4096);
	ok = CHECK_EQ(n, (int64_t)len, "kernel size") &&
	     CHECK(tst_first_diff(k, want, len) < 0, "kernel bytes differ at %lld",
		   (long long)tst_first_diff(k, want, len));
	free(k);
	return ok;
}

#endif /* LPC_TESTS_COMMON_WRITE_TEST_H */
