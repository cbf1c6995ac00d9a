/* SPDX-License-Identifier: MIT */
/* att.h - helpers for the readahead review's attack programs (attack/). */
#ifndef ATT_H
#define ATT_H
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lpc/lpc.h>

static int att_fails __attribute__((unused));
#define ATT_CHECK(cond, ...)                                                   \
	do {                                                                   \
		if (!(cond)) {                                                 \
			att_fails++;                                           \
			printf("  FAIL %s:%d: ", __FILE__, __LINE__);          \
			printf(__VA_ARGS__);                                   \
			printf("\n");                                          \
		}                                                              \
	} while (0)

/* Every 8-byte word of the file is (tag << 48) | byte offset / 8. */
static inline uint64_t att_word(uint64_t tag, uint64_t off)
{
	return (tag << 48) | (off >> 3);
}

static char att_dir[256];
static inline const char *att_tmpdir(void)
{
	if (!att_dir[0]) {
		snprintf(att_dir, sizeof(att_dir), "/var/tmp/lpcatt.XXXXXX");
		if (!mkdtemp(att_dir)) {
			perror("mkdtemp");
			exit(77);
		}
	}
	return att_dir;
}

static inline void att_make_file(const char *name, uint64_t size, uint64_t tag, char *path,
				 size_t len)
{
	uint64_t buf[8192];
	uint64_t done = 0;
	int fd;

	snprintf(path, len, "%s/%s", att_tmpdir(), name);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0) {
		perror("open");
		exit(77);
	}
	while (done < size) {
		size_t n = size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf);

		for (size_t i = 0; i < n / 8; i++)
			buf[i] = att_word(tag, done + i * 8);
		if (write(fd, buf, n) != (ssize_t)n) {
			perror("write");
			exit(77);
		}
		done += n;
	}
	fsync(fd);
	close(fd);
}

/* Index of the first word of buf (file offset off) that is not the file's. */
static inline long att_bad_word(const void *buf, size_t len, uint64_t off, uint64_t tag)
{
	const uint64_t *w = buf;

	for (size_t i = 0; i < len / 8; i++)
		if (w[i] != att_word(tag, off + i * 8))
			return (long)i;
	return -1;
}

static inline struct lpc_cache *att_cache(size_t bytes, size_t ps, int backend, int mode,
					  uint32_t ra_kb, uint32_t ra_max_kb)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = bytes;
	cfg.page_size = ps;
	cfg.io_backend = backend;
	cfg.lookup_mode = mode;
	cfg.readahead_kb = ra_kb;
	cfg.readahead_max_kb = ra_max_kb;
	rc = lpc_cache_create(&cfg, &c);
	if (rc) {
		printf("lpc_cache_create: %d\n", rc);
		exit(1);
	}
	return c;
}

static inline const char *att_backend_name(int b)
{
	return b == LPC_IO_SYNC ? "sync" : b == LPC_IO_URING ? "uring" : "null";
}

static inline const char *att_mode_name(int m)
{
	return m == LPC_LOOKUP_LOCKED ? "locked" : "lockless";
}

static inline void att_print_stats(struct lpc_cache *c, const char *what)
{
	struct lpc_stats s;

	lpc_stats(c, &s);
	printf("    %s: reads %" PRIu64 " read_pages %" PRIu64 " ra_windows %" PRIu64
	       " ra_async %" PRIu64 " ra_pages %" PRIu64 " ra_used %" PRIu64
	       " ra_wasted %" PRIu64 " read_errors %" PRIu64 " uring_fallbacks %" PRIu64
	       " uring_unregistered %" PRIu64 "\n",
	       what, s.reads, s.read_pages, s.ra_windows, s.ra_async, s.ra_pages, s.ra_used,
	       s.ra_wasted, s.read_errors, s.uring_fallbacks, s.uring_unregistered);
}

static inline void att_cleanup(void)
{
	char cmd[300];

	if (att_dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", att_dir);
		if (system(cmd)) {
			/* a directory left in /var/tmp: nothing to do */
		}
	}
}
#endif
