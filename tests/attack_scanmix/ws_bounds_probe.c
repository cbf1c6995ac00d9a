/* SPDX-License-Identifier: MIT */
/*
 * ws_bounds_probe.c - can rule WS-TARGET-BOUNDS (26af3ed) fire in a correct
 * program?  Every configuration below is reached through the public API only
 * (lpc_config_init, lpc_cache_create, lpc_file_open, lpc_pread from several
 * threads: a sequential scanner, Zipf-ish hot readers that refault, a
 * re-reader of a loop); the internal headers are included only to PRINT the
 * bounds the cache chose.  Each configuration runs in a forked child, so a
 * fired rule (SIGABRT, "rule WS-TARGET-BOUNDS violated") is reported and the
 * next configuration still runs.
 *
 * Build (against an LPC_DEBUG build, e.g. build-asan of a worktree):
 *   cc -std=gnu11 -O1 -g -fsanitize=address,undefined -DLPC_DEBUG=1 \
 *      -I$WT/include -I$WT/src -I$WT/build-asan/src ws_bounds_probe.c \
 *      -L$WT/build-asan/src -llpc -lpthread -Wl,-rpath,$WT/build-asan/src
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lpc/lpc.h>

#include "cache/cache.h"

struct cfgc {
	size_t cache_pages;
	size_t page_size;
	int policy;
	uint32_t ra_kb, ra_max_kb;
	const char *what;
};

static const char *path;
static uint64_t file_pages;
static struct lpc_file *lf;
static size_t ps;
static _Atomic int stop;

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void *scanner(void *a)
{
	char *buf = malloc(ps);
	uint64_t pos = (uintptr_t)a;

	while (!atomic_load(&stop)) {
		ssize_t n = lpc_pread(lf, buf, ps, (pos++ % file_pages) * ps);
		if (n < 0 && n != -ENOMEM && n != -EAGAIN) {
			fprintf(stderr, "pread %zd\n", n);
			exit(3);
		}
	}
	free(buf);
	return NULL;
}

/* Hot reader: 3/4 of its reads in a hot set of about the cache, so the scan
 * evicts some and they refault (the target moves both ways). */
static void *hot(void *a)
{
	char *buf = malloc(ps);
	uint64_t s = (uintptr_t)a, hotn;

	while (!atomic_load(&stop)) {
		uint64_t r = rnd(&s), pg;

		hotn = file_pages / 4 ? file_pages / 4 : 1;
		pg = (r & 3) ? (r >> 8) % hotn : (r >> 8) % file_pages;
		ssize_t n = lpc_pread(lf, buf, ps, pg * ps);
		if (n < 0 && n != -ENOMEM && n != -EAGAIN) {
			fprintf(stderr, "pread %zd\n", n);
			exit(3);
		}
	}
	free(buf);
	return NULL;
}

static int child(const struct cfgc *k)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	pthread_t th[5];
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = k->cache_pages * k->page_size;
	cfg.page_size = k->page_size;
	cfg.io_backend = LPC_IO_SYNC;
	cfg.reclaim_policy = k->policy;
	cfg.readahead_kb = k->ra_kb;
	cfg.readahead_max_kb = k->ra_max_kb;
	cfg.alloc_wait_ms = 50;
	rc = lpc_cache_create(&cfg, &c);
	if (rc) {
		printf("    create: %d (%s) - not a cache\n", rc, strerror(-rc));
		return 0;
	}
	ps = k->page_size;
	file_pages = 4096 * 4096 / ps; /* the file: 16 MiB */
	rc = lpc_file_open(c, path, O_RDONLY, 0, &lf);
	if (rc) {
		printf("    open: %d\n", rc);
		return 2;
	}
	printf("    nframes %u  ws.min %u  ws.max %u  target %u (table %s)\n", c->pool.nframes,
	       c->pool.ws.min, c->pool.ws.max, atomic_load(&c->pool.ws.target),
	       c->pool.ws.shadow ? "yes" : "no");
	fflush(stdout);
	pthread_create(&th[0], NULL, scanner, (void *)(uintptr_t)0);
	pthread_create(&th[1], NULL, scanner, (void *)(uintptr_t)(file_pages / 3));
	for (int i = 2; i < 5; i++)
		pthread_create(&th[i], NULL, hot, (void *)(uintptr_t)(i * 7919));
	usleep(1500 * 1000);
	atomic_store(&stop, 1);
	for (int i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	{
		struct lpc_stats st;

		lpc_stats(c, &st);
		printf("    after: target %u in [%u, %u]; evictions %llu, refaults %llu, nactive %u\n",
		       atomic_load(&c->pool.ws.target), c->pool.ws.min, c->pool.ws.max,
		       (unsigned long long)st.evictions,
		       (unsigned long long)atomic_load(&c->pool.ws.refaults),
		       atomic_load(&c->pool.nactive));
	}
	lpc_file_close(lf);
	lpc_cache_destroy(c);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct cfgc cases[] = {
		{ 1, 4096, LPC_RECLAIM_CLOCK2, 0, 0, "1 frame" },
		{ 2, 4096, LPC_RECLAIM_CLOCK2, 0, 0, "2 frames" },
		{ 3, 4096, LPC_RECLAIM_CLOCK2, 0, 0, "3 frames" },
		{ 5, 4096, LPC_RECLAIM_CLOCK2, 0, 0, "5 frames" },
		{ 9, 4096, LPC_RECLAIM_CLOCK2, LPC_READAHEAD_OFF, 0, "9 frames, readahead off" },
		{ 16, 4096, LPC_RECLAIM_CLOCK2, 4, 1u << 20, "16 frames, ra max 1 GiB" },
		{ 64, 4096, LPC_RECLAIM_CLOCK2, 1u << 20, 1u << 20, "64 frames, ra 1 GiB" },
		{ 256, 4096, LPC_RECLAIM_CLOCK2, 0, 0, "256 frames" },
		{ 8, 512, LPC_RECLAIM_CLOCK2, 0, 0, "8 frames of 512 B" },
		{ 4096, 512, LPC_RECLAIM_CLOCK2, 0, 1u << 20, "4096 frames of 512 B, ra max huge" },
		{ 1, 4096, LPC_RECLAIM_CLOCK, 0, 0, "CLOCK, 1 frame (no table)" },
		{ 64, 4096, LPC_RECLAIM_CLOCK, 0, 0, "CLOCK, 64 frames (no table)" },
		{ 2048, 4096, LPC_RECLAIM_CLOCK2, 0, 0, "2048 frames (8 MiB)" },
	};
	int fired = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE (16 MiB or more)\n", argv[0]);
		return 2;
	}
	path = argv[1];
	setvbuf(stdout, NULL, _IONBF, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st;
		pid_t pid;

		printf("[%s] policy %s, %zu x %zu B, readahead_kb %u max %u\n", cases[i].what,
		       cases[i].policy == LPC_RECLAIM_CLOCK ? "CLOCK" : "CLOCK2",
		       cases[i].cache_pages, cases[i].page_size, cases[i].ra_kb, cases[i].ra_max_kb);
		pid = fork();
		if (pid == 0)
			_exit(child(&cases[i]));
		waitpid(pid, &st, 0);
		if (WIFSIGNALED(st)) {
			printf("    CHILD DIED of signal %d\n", WTERMSIG(st));
			fired++;
		} else if (WEXITSTATUS(st)) {
			printf("    child exit %d\n", WEXITSTATUS(st));
			fired++;
		} else {
			printf("    ok\n");
		}
	}
	printf("%d of %zu configurations failed\n", fired, sizeof(cases) / sizeof(cases[0]));
	return fired != 0;
}
