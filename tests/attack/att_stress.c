/* SPDX-License-Identifier: MIT */
/*
 * att_stress - a seeded stress of readahead against writers, a truncater of
 * the file's tail, invalidators and eviction (a file 8x the cache), checking
 * every half page a read returns: stamped (index, half, version) in every
 * word, never torn, never another page's, never a version older than one
 * whose lpc_pwrite returned before the read began; the tail that truncates
 * cut and regrow reads as its first stamp (version 0) or zeros.  After the
 * run: lpc_fsync, then the kernel's file holds every half's last version.
 * Threads: 2 scanners (4 KiB, 16 KiB, 128 KiB calls, in file order), 1
 * random reader, 2 writers (whole pages and half pages, each its own pages),
 * 1 invalidator (DONTNEED, WILLNEED), 1 truncater, 1 pinner (lpc_pin ranges,
 * frames copied under the page lock).
 * In the LPC_DEBUG build, LPC_YIELD=all adds yield injection.
 * Usage: att_stress [--seed N] [--secs S] [sync|uring] [locked]
 * Exit: 0 no failure, 1 failures (counted).
 */
#include "att.h"
#include <stdatomic.h>
#include <time.h>

#define PS 4096u
#define HALF (PS / 2)
#define NPAGES 1024u
#define TAIL 64u /* pages [NPAGES - TAIL, NPAGES): the truncater's */
#define NHALF (NPAGES * 2)

static struct lpc_file *F;
static _Atomic uint64_t done_ver[NHALF];
static _Atomic int stop;
static _Atomic uint64_t fails, checks;
static uint64_t seed0;

static inline uint64_t stamp(uint64_t index, unsigned half, uint64_t ver)
{
	return (index << 40) | ((uint64_t)half << 39) | ver;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void fail(const char *what, uint64_t h, uint64_t got, uint64_t want)
{
	if (atomic_fetch_add(&fails, 1) < 10)
		printf("  FAIL %s: half %" PRIu64 " (page %" PRIu64 ") word %#" PRIx64
		       " (want >= version %" PRIu64 ")\n",
		       what, h, h / 2, got, want);
}

/* Checks len bytes at off (half-page aligned) against snapshot snap[]. */
static void check(const uint64_t *buf, uint64_t off, size_t len, const uint64_t *snap)
{
	for (size_t d = 0; d < len; d += HALF) {
		uint64_t h = (off + d) / HALF, index = h / 2;
		unsigned half = (unsigned)(h & 1);
		const uint64_t *w = buf + d / 8;
		uint64_t w0 = w[0];

		for (size_t i = 1; i < HALF / 8; i++)
			if (w[i] != w0) {
				fail("torn half", h, w[i], w0);
				break;
			}
		atomic_fetch_add_explicit(&checks, 1, memory_order_relaxed);
		if (index >= NPAGES - TAIL) {
			if (w0 != 0 && w0 != stamp(index, half, 0))
				fail("tail neither zeros nor its first stamp", h, w0, 0);
			continue;
		}
		if ((w0 >> 39) != ((index << 1) | half)) {
			fail("another page's data", h, w0, snap[d / HALF]);
			continue;
		}
		if ((w0 & ((1ull << 39) - 1)) < snap[d / HALF])
			fail("stale version", h, w0, snap[d / HALF]);
	}
}

static void read_check(uint64_t off, size_t len, uint64_t *buf)
{
	uint64_t snap[128 * 1024 / HALF];
	ssize_t r;

	for (size_t d = 0; d < len; d += HALF)
		snap[d / HALF] = atomic_load_explicit(&done_ver[(off + d) / HALF], memory_order_acquire);
	r = lpc_pread(F, buf, len, off);
	if (r < 0) {
		if (atomic_fetch_add(&fails, 1) < 10)
			printf("  FAIL lpc_pread(%" PRIu64 ", %zu) = %zd\n", off, len, r);
		return;
	}
	check(buf, off, (size_t)r & ~(size_t)(HALF - 1), snap);
}

static void *scanner(void *arg)
{
	uint64_t s = seed0 * 31 + (uintptr_t)arg;
	static const size_t sizes[] = { 4096, 16384, 131072 };
	uint64_t *buf = aligned_alloc(4096, 131072);

	while (!atomic_load(&stop)) {
		size_t len = sizes[rnd(&s) % 3];
		uint64_t start = (rnd(&s) % NPAGES) * PS;

		for (uint64_t off = start; off + len <= NPAGES * PS && !atomic_load(&stop); off += len)
			read_check(off, len, buf);
	}
	free(buf);
	return NULL;
}

static void *random_reader(void *arg)
{
	uint64_t s = seed0 * 37 + 5;
	uint64_t *buf = aligned_alloc(4096, PS);

	(void)arg;
	while (!atomic_load(&stop))
		read_check((rnd(&s) % NPAGES) * PS, PS, buf);
	free(buf);
	return NULL;
}

/* Pins a range (the pin slow path reads runs), checks the pinned frames. */
static void *pinner(void *arg)
{
	uint64_t s = seed0 * 53 + 7;
	struct lpc_page *pages[32];
	uint64_t *buf = aligned_alloc(4096, 32 * PS);

	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t first = rnd(&s) % NPAGES, n = 1 + rnd(&s) % 32;
		uint64_t snap[64];
		int got;

		if (first + n > NPAGES)
			n = NPAGES - first;
		for (uint64_t h = 0; h < 2 * n; h++)
			snap[h] = atomic_load_explicit(&done_ver[first * 2 + h], memory_order_acquire);
		got = lpc_pin(F, first * PS, n * PS, LPC_PIN_READ, pages, 32);
		if (got < 0) {
			if (got != -ENXIO && atomic_fetch_add(&fails, 1) < 10)
				printf("  FAIL lpc_pin = %d\n", got);
			continue;
		}
		/* A pinned page may still be written: copy each under its
		 * lock, as a reader that needs one version would. */
		for (int i = 0; i < got; i++) {
			lpc_page_lock(pages[i]);
			memcpy((char *)buf + (size_t)i * PS, lpc_page_data(pages[i]), PS);
			lpc_page_unlock(pages[i]);
		}
		lpc_unpin(pages, (unsigned)got, LPC_PIN_READ);
		check(buf, first * PS, (size_t)got * PS, snap);
	}
	free(buf);
	return NULL;
}

static void *writer(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	uint64_t s = seed0 * 41 + w, ver = 0;
	uint64_t buf[PS / 8];

	while (!atomic_load(&stop)) {
		uint64_t index = (rnd(&s) % ((NPAGES - TAIL) / 2)) * 2 + w;
		bool whole = rnd(&s) & 1;
		unsigned half = (unsigned)(rnd(&s) & 1);
		size_t len = whole ? PS : HALF;
		uint64_t off = index * PS + (whole ? 0 : half * HALF);
		ssize_t r;

		ver++;
		for (size_t i = 0; i < len / 8; i++)
			buf[i] = stamp(index, whole ? (unsigned)(i * 8 / HALF) : half, ver);
		r = lpc_pwrite(F, buf, len, off);
		if (r != (ssize_t)len) {
			if (atomic_fetch_add(&fails, 1) < 10)
				printf("  FAIL lpc_pwrite = %zd\n", r);
			continue;
		}
		for (uint64_t h = off / HALF; h < (off + len) / HALF; h++)
			atomic_store_explicit(&done_ver[h], ver, memory_order_release);
		if ((ver & 255) == 0)
			lpc_fsync(F);
	}
	return NULL;
}

static void *invalidator(void *arg)
{
	uint64_t s = seed0 * 43 + 1;

	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t off = (rnd(&s) % NPAGES) * PS, len = (1 + rnd(&s) % 64) * PS;

		lpc_fadvise(F, off, len, (rnd(&s) & 1) ? LPC_FADV_DONTNEED : LPC_FADV_WILLNEED);
		usleep(200);
	}
	return NULL;
}

static void *truncater(void *arg)
{
	uint64_t s = seed0 * 47 + 3;

	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t cut = (uint64_t)(NPAGES - TAIL) * PS + (rnd(&s) % (TAIL * 2)) * HALF;
		int rc = lpc_truncate(F, cut);

		if (rc)
			printf("  lpc_truncate = %d\n", rc);
		usleep(500);
		rc = lpc_truncate(F, (uint64_t)NPAGES * PS);
		if (rc)
			printf("  lpc_truncate = %d\n", rc);
		usleep(500);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int backend = LPC_IO_URING, mode = LPC_LOOKUP_LOCKLESS, secs = 5;
	char path[400];
	pthread_t th[9];
	struct lpc_cache *c;
	int fd;

	seed0 = (uint64_t)time(NULL);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed0 = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--secs") && i + 1 < argc)
			secs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "sync"))
			backend = LPC_IO_SYNC;
		else if (!strcmp(argv[i], "uring"))
			backend = LPC_IO_URING;
		else if (!strcmp(argv[i], "locked"))
			mode = LPC_LOOKUP_LOCKED;
	}
	printf("att_stress --seed %" PRIu64 " --secs %d %s %s\n", seed0, secs,
	       att_backend_name(backend), att_mode_name(mode));
	/* The file: every half stamped (index, half, 0). */
	snprintf(path, sizeof(path), "%s/st", att_tmpdir());
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	for (uint64_t h = 0; h < NHALF; h++) {
		uint64_t b[HALF / 8];

		for (size_t i = 0; i < HALF / 8; i++)
			b[i] = stamp(h / 2, (unsigned)(h & 1), 0);
		if (write(fd, b, HALF) != HALF)
			return 77;
	}
	close(fd);
	c = att_cache(NPAGES / 8 * PS, PS, backend, mode, 0, 0);
	if (lpc_file_open(c, path, O_RDWR, 0, &F))
		return 1;
	pthread_create(&th[0], NULL, scanner, (void *)1);
	pthread_create(&th[1], NULL, scanner, (void *)2);
	pthread_create(&th[2], NULL, random_reader, NULL);
	pthread_create(&th[3], NULL, writer, (void *)0);
	pthread_create(&th[4], NULL, writer, (void *)1);
	pthread_create(&th[5], NULL, invalidator, NULL);
	pthread_create(&th[6], NULL, truncater, NULL);
	pthread_create(&th[7], NULL, pinner, NULL);
	sleep((unsigned)secs);
	atomic_store(&stop, 1);
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	if (lpc_fsync(F))
		printf("  FAIL lpc_fsync\n");
	att_print_stats(c, "stats");
	lpc_file_close(F);
	lpc_cache_destroy(c);
	/* The kernel's file: every half's last version. */
	fd = open(path, O_RDONLY);
	for (uint64_t h = 0; h < NHALF - TAIL * 2; h++) {
		uint64_t b[HALF / 8];

		if (pread(fd, b, HALF, (off_t)(h * HALF)) != HALF ||
		    b[0] != stamp(h / 2, (unsigned)(h & 1), atomic_load(&done_ver[h])))
			fail("file after fsync", h, b[0], atomic_load(&done_ver[h]));
	}
	close(fd);
	att_cleanup();
	printf("  %" PRIu64 " halves checked, %" PRIu64 " failures\n", atomic_load(&checks),
	       atomic_load(&fails));
	return atomic_load(&fails) ? 1 : 0;
}
