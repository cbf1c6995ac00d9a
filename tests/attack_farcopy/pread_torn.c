/* SPDX-License-Identifier: MIT */
/*
 * pread_torn.c - lpc_pread of several pages while writers rewrite whole
 * pages with lpc_pwrite: each page's bytes in a read must be one version
 * (lpc.h H.1, K.1), the sense tests/stress/stress_optimistic.c and
 * stress_write.c check.
 *
 * Every 8-byte word of the file is stamp(pos, gen) = 1<<63 | gen<<40 |
 * pos/8.  A writer takes a fresh gen and writes one whole page (sometimes
 * two or three adjacent pages in one call) stamped with it.  A reader
 * calls lpc_pread at any byte offset with a length of up to five pages
 * (most calls cover several pages, so they go through pread_slow and its
 * copy), and for each page's part of what it got takes the gen of the
 * part's first whole word and checks every byte of the part against that
 * version: a byte of another version (a torn copy), of another position
 * (a misplaced copy) or a zero fails.  The readers also check the return
 * value (the file's size never changes).
 *
 * --selftest: writers write each page in two lpc_pwrite calls (two
 * versions, the halves), so the page itself holds two versions at times:
 * the check must then report torn pages, showing that it can.
 *
 * Configurations: page sizes 1 KiB .. 64 KiB, a cache that holds the file
 * (io_uring) and one of 8 frames (sync backend), and LOCKED mode for 4 KiB
 * and 64 KiB pages.
 *
 * Usage: pread_torn [--selftest] [seconds per config]  (default 3)
 * Exit: 0 no torn page (or, with --selftest, torn pages found), 1 otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lpc/lpc.h>

#define NP 24 /* pages of the file */
#define NWRITERS 2
#define NREADERS 2

static size_t ps;
static struct lpc_file *g_f;
static _Atomic bool g_stop;
static _Atomic uint64_t g_gen;
static _Atomic uint64_t g_reads, g_parts, g_torn, g_bad, g_writes;
static bool selftest;

static uint64_t stamp(uint64_t pos, uint64_t gen)
{
	return (1ull << 63) | (gen << 40) | (pos >> 3);
}

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fill(uint64_t *w, uint64_t off, size_t len, uint64_t gen)
{
	for (size_t k = 0; k < len / 8; k++)
		w[k] = stamp(off + 8 * k, gen);
}

static void *writer(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1;
	uint64_t *buf = malloc(3 * ps);

	while (!atomic_load(&g_stop)) {
		uint64_t pg = xs(&s) % NP, npg = 1 + (xs(&s) % 4 == 0 ? xs(&s) % 3 : 0);
		uint64_t gen = atomic_fetch_add(&g_gen, 1) + 1;

		if (pg + npg > NP)
			npg = NP - pg;
		fill(buf, pg * ps, npg * ps, gen);
		if (selftest) {
			size_t h = ps / 2;

			lpc_pwrite(g_f, buf, h, pg * ps);
			fill(buf, pg * ps, ps, gen + (1ull << 20));
			lpc_pwrite(g_f, (char *)buf + h, ps - h, pg * ps + h);
			atomic_fetch_add(&g_writes, 1);
			continue;
		}
		if (lpc_pwrite(g_f, buf, npg * ps, pg * ps) != (ssize_t)(npg * ps)) {
			atomic_fetch_add(&g_bad, 1);
			atomic_store(&g_stop, true);
		}
		atomic_fetch_add(&g_writes, 1);
	}
	free(buf);
	return NULL;
}

/* The part [a, b) of the file, read into p: one version of its page? */
static bool part_ok(const unsigned char *p, uint64_t a, uint64_t b)
{
	uint64_t w0 = (a + 7) & ~7ull, word, gen;

	if (w0 + 8 > b)
		return true; /* no whole word: nothing to name the version by */
	memcpy(&word, p + (w0 - a), 8);
	if (!(word >> 63) || (word & ((1ull << 40) - 1)) != (w0 >> 3))
		return false;
	gen = (word >> 40) & ((1ull << 23) - 1);
	for (uint64_t pos = a; pos < b; pos++) {
		uint64_t wp = pos & ~7ull, want = stamp(wp, gen);

		if (p[pos - a] != ((const unsigned char *)&want)[pos - wp])
			return false;
	}
	return true;
}

static void *reader(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg * 0xD1B54A32D192ED03ull + 7;
	const uint64_t fsize = NP * ps;
	unsigned char *buf = malloc(6 * ps + 64);

	while (!atomic_load(&g_stop)) {
		uint64_t off = xs(&s) % fsize;
		size_t len = xs(&s) % 4 ? ps + 1 + xs(&s) % (4 * ps) : 1 + xs(&s) % ps;
		unsigned char *dst = buf + xs(&s) % 64;
		ssize_t want = (ssize_t)(off + len > fsize ? fsize - off : len);
		ssize_t n = lpc_pread(g_f, dst, len, off);

		atomic_fetch_add(&g_reads, 1);
		if (n != want) {
			if (atomic_fetch_add(&g_bad, 1) < 5)
				printf("  lpc_pread(off=%" PRIu64 ", len=%zu) = %zd, want %zd\n", off, len,
				       n, want);
			continue;
		}
		for (uint64_t a = off; a < off + (uint64_t)n;) {
			uint64_t b = (a / ps + 1) * ps;

			if (b > off + (uint64_t)n)
				b = off + (uint64_t)n;
			atomic_fetch_add(&g_parts, 1);
			if (!part_ok(dst + (a - off), a, b) &&
			    atomic_fetch_add(&g_torn, 1) < 3 && !selftest)
				printf("  TORN: page %" PRIu64 " part [%" PRIu64 ", %" PRIu64
				       ") of lpc_pread(off=%" PRIu64 ", len=%zu)\n",
				       a / ps, a, b, off, len);
			a = b;
		}
	}
	free(buf);
	return NULL;
}

static int run(size_t page_size, bool small, int backend, int lookup, double secs, const char *dir)
{
	char path[4096];
	struct lpc_config lc;
	struct lpc_cache *cache;
	struct lpc_stats st;
	pthread_t th[NWRITERS + NREADERS];
	uint64_t *init;
	int fd, rc;

	ps = page_size;
	atomic_store(&g_stop, false);
	atomic_store(&g_gen, 0);
	atomic_store(&g_reads, 0);
	atomic_store(&g_parts, 0);
	atomic_store(&g_torn, 0);
	atomic_store(&g_bad, 0);
	atomic_store(&g_writes, 0);
	snprintf(path, sizeof(path), "%s/torn.%d.dat", dir, (int)getpid());
	init = malloc(NP * ps);
	fill(init, 0, NP * ps, 0);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || pwrite(fd, init, NP * ps, 0) != (ssize_t)(NP * ps)) {
		perror("setup");
		return 2;
	}
	close(fd);
	free(init);
	lpc_config_init(&lc);
	lc.page_size = ps;
	lc.io_backend = backend;
	lc.lookup_mode = lookup;
	lc.cache_bytes = small ? 8 * ps : 2 * NP * ps;
	if ((rc = lpc_cache_create(&lc, &cache)) || (rc = lpc_file_open(cache, path, O_RDWR, 0, &g_f))) {
		printf("setup: %d\n", rc);
		return 2;
	}
	for (uintptr_t i = 0; i < NWRITERS; i++)
		pthread_create(&th[i], NULL, writer, (void *)(i + 1));
	for (uintptr_t i = 0; i < NREADERS; i++)
		pthread_create(&th[NWRITERS + i], NULL, reader, (void *)(i + 1));
	{
		struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

		nanosleep(&ts, NULL);
	}
	atomic_store(&g_stop, true);
	for (int i = 0; i < NWRITERS + NREADERS; i++)
		pthread_join(th[i], NULL);
	lpc_stats(cache, &st);
	printf("ps=%-7zu %-5s %-5s %-8s reads=%" PRIu64 " page parts=%" PRIu64 " writes=%" PRIu64
	       " torn=%" PRIu64 " bad=%" PRIu64 " optimistic_hits=%" PRIu64 " fallbacks=%" PRIu64
	       "\n",
	       ps, small ? "small" : "big", backend == LPC_IO_SYNC ? "sync" : "uring",
	       lookup == LPC_LOOKUP_LOCKED ? "locked" : "lockless",
	       atomic_load(&g_reads), atomic_load(&g_parts), atomic_load(&g_writes),
	       atomic_load(&g_torn), atomic_load(&g_bad), st.optimistic_hits,
	       st.optimistic_fallbacks);
	lpc_file_close(g_f);
	lpc_cache_destroy(cache);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1024, 2048, 4096, 16384, 65536 };
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	double secs = 3;
	uint64_t torn = 0, bad = 0;
	int i = 1;

	if (argc > i && !strcmp(argv[i], "--selftest")) {
		selftest = true;
		i++;
	}
	if (argc > i)
		secs = atof(argv[i]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (int m = 0; m < 3; m++) {
			bool small = m == 1, locked = m == 2;

			if (selftest && (sizes[k] != 4096 || m))
				continue;
			if (locked && sizes[k] != 4096 && sizes[k] != 65536)
				continue;
			if (run(sizes[k], small, small ? LPC_IO_SYNC : LPC_IO_URING,
				locked ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS, secs, dir))
				return 1;
			torn += atomic_load(&g_torn);
			bad += atomic_load(&g_bad);
		}
	if (selftest) {
		printf("%s\n", torn ? "SELFTEST OK: the check sees two versions in a page"
				    : "SELFTEST FAILED: no torn page seen");
		return torn ? 0 : 1;
	}
	printf("%s\n", torn || bad ? "DEFECT: a torn or wrong page" : "PASS: every page one version");
	return torn || bad ? 1 : 0;
}
