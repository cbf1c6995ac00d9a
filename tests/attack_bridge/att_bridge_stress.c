/* SPDX-License-Identifier: MIT */
/*
 * att_bridge_stress.c - attack on 5adbd3b (run.c U1's bridge): bridged
 * readahead runs racing writes, evictions (lpc_invalidate / DONTNEED),
 * fsync and demand misses of the holes' pages, checked for stale bytes.
 *
 * One file of NP pages, every page's words (version << 32 | page << 12 |
 * word) for version 0 on storage.  Threads:
 *   writers  lpc_pwrite a whole page with version v+1 and publish v+1 in
 *            done[page] after the call returns;
 *   hot      random one-page lpc_pread of the "hot" pages (index % 4 == 1
 *            or 2), keeping them cached: the cached pages a scan bridges;
 *   scanner  sequential 64 KiB lpc_pread from the start, again and again
 *            (readahead windows, bridged runs over the hot pages);
 *   dropper  lpc_invalidate / LPC_FADV_DONTNEED of random ranges, and
 *            lpc_fsync now and then (the storage gets newer versions).
 * Every read checks each page it got: every word of the page the same
 * version, the page's own index, and a version >= done[page] loaded before
 * the read (a write that returned before the read began is seen: no stale
 * bytes, no hole's bytes in a page).  Every I/O backend: argv[1] sync |
 * uring | null (null: no writes are kept: version 0 only, checked as such).
 * Usage: att_bridge_stress [sync|uring] [seconds] [seed] [locked]
 * ATT_NOBRIDGE=1 in the environment: the control (run_bridge 0 before the
 * open: the cache before 5adbd3b), to compare the request counts.
 * Exit 0 held, 1 defect.
 */
#include "../attack/att.h"
#include "cache/cache.h" /* run_bridge, for the control */
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#define PS 4096u
#define NP 2048u

static struct lpc_file *f;
static _Atomic uint32_t done_v[NP];
static pthread_mutex_t wlock[NP];
static _Atomic bool stop;
static _Atomic unsigned long nreads, nwrites, nbad, ndrops;

static void fill(uint64_t *w, uint64_t page, uint32_t v)
{
	for (uint64_t i = 0; i < PS / 8; i++)
		w[i] = ((uint64_t)v << 32) | (page << 12) | i;
}

static bool check(const uint64_t *w, uint64_t page, uint32_t vmin, const char *who)
{
	uint32_t v = (uint32_t)(w[0] >> 32);

	for (uint64_t i = 0; i < PS / 8; i++)
		if (w[i] != (((uint64_t)v << 32) | (page << 12) | i) || v < vmin) {
			if (atomic_fetch_add(&nbad, 1) < 10)
				printf("  BAD %s: page %" PRIu64 " word %" PRIu64 ": %016" PRIx64
				       " (version %u, at least %u)\n",
				       who, page, i, w[i], v, vmin);
			return false;
		}
	return true;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *writer(void *arg)
{
	uint64_t s = (uintptr_t)arg;
	uint64_t w[PS / 8];

	while (!stop) {
		uint64_t p = rnd(&s) % NP;
		uint32_t v;

		pthread_mutex_lock(&wlock[p]);
		v = done_v[p] + 1;
		fill(w, p, v);
		if (lpc_pwrite(f, w, PS, p * PS) != PS)
			printf("  pwrite failed\n");
		done_v[p] = v;
		pthread_mutex_unlock(&wlock[p]);
		nwrites++;
		if (rnd(&s) % 4 == 0)
			usleep(50);
	}
	return NULL;
}

static void *hot(void *arg)
{
	uint64_t s = (uintptr_t)arg;
	uint64_t w[PS / 8];

	while (!stop) {
		uint64_t p = (rnd(&s) % (NP / 4)) * 4 + 1 + rnd(&s) % 2;
		uint32_t v0 = done_v[p];

		if (lpc_pread(f, w, PS, p * PS) != PS)
			printf("  hot pread failed\n");
		else
			check(w, p, v0, "hot");
		nreads++;
	}
	return NULL;
}

static void *scanner(void *arg)
{
	enum { CH = 16 };
	static __thread uint64_t w[CH * PS / 8];
	uint32_t v0[CH];

	(void)arg;
	while (!stop) {
		for (uint64_t p = 0; p < NP && !stop; p += CH) {
			for (unsigned k = 0; k < CH; k++)
				v0[k] = done_v[p + k];
			if (lpc_pread(f, w, CH * PS, p * PS) != CH * PS) {
				printf("  scan pread failed\n");
				continue;
			}
			for (unsigned k = 0; k < CH; k++)
				check(w + k * PS / 8, p + k, v0[k], "scan");
			nreads++;
		}
	}
	return NULL;
}

static void *dropper(void *arg)
{
	uint64_t s = (uintptr_t)arg;

	while (!stop) {
		uint64_t p = rnd(&s) % NP, n = 1 + rnd(&s) % 64;

		switch (rnd(&s) % 8) {
		case 0:
			lpc_fsync(f);
			break;
		case 1:
		case 2:
		case 3:
			lpc_fadvise(f, p * PS, n * PS, LPC_FADV_DONTNEED);
			break;
		default:
			lpc_invalidate(f, p * PS, n * PS);
		}
		ndrops++;
		usleep(200);
	}
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	printf("  FAIL: hang (alarm)\n");
	_exit(1);
}

int main(int argc, char **argv)
{
	const char *be = argc > 1 ? argv[1] : "sync";
	int secs = argc > 2 ? atoi(argv[2]) : 10;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : (uint64_t)time(NULL);
	bool locked = argc > 4 && !strcmp(argv[4], "locked");
	int backend = !strcmp(be, "uring") ? LPC_IO_URING : LPC_IO_SYNC;
	struct lpc_cache *c;
	char path[512];
	pthread_t th[7];
	uint64_t w[PS / 8];

	signal(SIGALRM, on_alarm);
	alarm(secs + 120);
	printf("  backend %s, %d s, seed %" PRIu64 ", %s\n", be, secs, seed,
	       locked ? "locked" : "lockless");
	snprintf(path, sizeof(path), "%s/f", att_tmpdir());
	{
		int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);

		for (uint64_t p = 0; p < NP; p++) {
			fill(w, p, 0);
			if (pwrite(fd, w, PS, (off_t)(p * PS)) != PS)
				return 77;
		}
		close(fd);
	}
	for (unsigned p = 0; p < NP; p++)
		pthread_mutex_init(&wlock[p], NULL);
	/* A cache of 4 MiB for an 8 MiB file: the scan evicts. */
	c = att_cache(4u << 20, PS, backend, locked ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS, 0, 0);
	if (getenv("ATT_NOBRIDGE"))
		c->files.run_bridge = 0; /* control: the cache before 5adbd3b */
	printf("  run_bridge %u\n", c->files.run_bridge);
	if (lpc_file_open(c, path, O_RDWR, 0, &f)) {
		printf("open failed\n");
		return 1;
	}
	pthread_create(&th[0], NULL, writer, (void *)(uintptr_t)(seed | 1));
	pthread_create(&th[1], NULL, writer, (void *)(uintptr_t)(seed * 3 + 7));
	pthread_create(&th[2], NULL, hot, (void *)(uintptr_t)(seed * 5 + 11));
	pthread_create(&th[3], NULL, hot, (void *)(uintptr_t)(seed * 7 + 13));
	pthread_create(&th[4], NULL, scanner, NULL);
	pthread_create(&th[5], NULL, scanner, NULL);
	pthread_create(&th[6], NULL, dropper, (void *)(uintptr_t)(seed * 11 + 17));
	sleep((unsigned)secs);
	stop = true;
	for (int i = 0; i < 7; i++)
		pthread_join(th[i], NULL);
	/* Everything once more, after the threads. */
	for (uint64_t p = 0; p < NP; p++) {
		if (lpc_pread(f, w, PS, p * PS) != PS)
			printf("  final pread failed\n");
		else if (!check(w, p, done_v[p], "final") || (uint32_t)(w[0] >> 32) != done_v[p])
			printf("  final page %" PRIu64 ": version %u, want %u\n", p,
			       (uint32_t)(w[0] >> 32), done_v[p]), nbad++;
	}
	att_print_stats(c, "stats");
	if (lpc_file_close(f))
		printf("  close failed\n"), nbad++;
	{
		int fd = open(path, O_RDONLY);

		for (uint64_t p = 0; p < NP; p++)
			if (pread(fd, w, PS, (off_t)(p * PS)) != PS ||
			    (uint32_t)(w[0] >> 32) != done_v[p] || !check(w, p, done_v[p], "storage"))
				nbad++;
		close(fd);
	}
	lpc_cache_destroy(c);
	att_cleanup();
	printf("  reads %lu writes %lu drops %lu bad %lu\n", (unsigned long)nreads,
	       (unsigned long)nwrites, (unsigned long)ndrops, (unsigned long)nbad);
	ATT_CHECK(nbad == 0, "%lu bad pages", (unsigned long)nbad);
	printf(att_fails ? "DEFECT\n" : "held\n");
	return att_fails ? 1 : 0;
}
