/* SPDX-License-Identifier: MIT */
/* mh.h - the allocator review's helpers (attack_miss/), on attack/att.h. */
#ifndef MH_H
#define MH_H
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "../attack/att.h"

/* The null backend's page contents (src/io/null.c; in liblpc.a). */
void lpc_io_null_pattern(uint64_t id, uint64_t index, void *buf, size_t len);

static inline double mh_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift64 */
static inline uint64_t mh_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* A sparse file of `pages` pages of ps bytes for the null backend. */
static inline void mh_hole_file(const char *name, uint64_t bytes, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/%s", att_tmpdir(), name);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)bytes)) {
		perror("hole file");
		exit(77);
	}
	close(fd);
}

/* Waits (up to secs) until frames_free == frames; returns the last frames_free. */
static inline uint64_t mh_wait_all_free(struct lpc_cache *c, double secs)
{
	struct lpc_stats s;
	double t0 = mh_now();

	for (;;) {
		lpc_stats(c, &s);
		if (s.frames_free == s.frames || mh_now() - t0 > secs)
			return s.frames_free;
		usleep(10000);
	}
}

/* Allocates private pages until -ENOMEM (at most max + 1); puts them back.
 * Return: how many it got. */
static inline uint64_t mh_allocatable(struct lpc_cache *c, uint64_t max)
{
	struct lpc_page **v = calloc(max + 1, sizeof(*v));
	uint64_t n = 0;

	while (n <= max && lpc_page_alloc(c, &v[n]) == 0)
		n++;
	for (uint64_t i = 0; i < n; i++)
		lpc_page_put(v[i]);
	free(v);
	return n;
}
#endif
