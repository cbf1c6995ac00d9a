/* stress.c - eviction, demand misses (single pages and runs), readahead,
 * invalidate, truncate, writes and close/reopen, all at once, over a small
 * cache (sync backend, real files), so that shadows are stored and consumed
 * by many threads.  Checks every byte it reads against what the file holds:
 *  - F1 (read-only, 3x the cache): page i holds its index in every word;
 *  - F2 (reopened over and over by one thread, the same contents as F1);
 *  - F3 (written through the cache: page i holds gen[i], the last generation
 *    written; a dirty page dropped would read back an older one).
 *  - F4 truncated and regrown by one thread (pages past the size read as 0).
 * usage: stress DIR [SECONDS (5)] [READERS (4)]   Exit 0: no mismatch. */
#include <errno.h>
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

#define PS 4096
#define FRAMES 512
#define F1PAGES (3 * FRAMES)
#define F3PAGES 256
#define F4PAGES 256

static struct lpc_cache *c;
static struct lpc_file *f1, *f3, *f4;
static char p1[4096], p2[4096], p3[4096], p4[4096];
static atomic_bool stop;
static atomic_ulong errors, ops;
static _Atomic uint64_t gen[F3PAGES];
static pthread_mutex_t f3lock[F3PAGES];

static uint64_t xs(uint64_t *s) { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s; }

static void bad(const char *what, uint64_t i, uint64_t got, uint64_t want)
{
	if (atomic_fetch_add(&errors, 1) < 20)
		fprintf(stderr, "MISMATCH %s page %" PRIu64 ": got %" PRIu64 " want %" PRIu64 "\n", what, i, got, want);
}

static void check_page(const char *what, const uint64_t *w, uint64_t i)
{
	for (int k = 0; k < PS / 8; k += 61)
		if (w[k] != i) { bad(what, i, w[k], i); return; }
}

static void *reader(void *arg)
{
	uint64_t s = (uintptr_t)arg * 7919 + 1, buf[4 * PS / 8];
	while (!atomic_load(&stop)) {
		uint64_t r = xs(&s), i = r % F1PAGES;
		if (r & 0x100) { /* a page */
			struct lpc_page *p;
			int rc = lpc_page_get(f1, i, 0, &p);
			if (rc == 0) { check_page("F1 get", lpc_page_data(p), i); lpc_page_put(p); }
			else if (rc != -ENOMEM && rc != -EAGAIN) bad("F1 get rc", i, (uint64_t)rc, 0);
		} else if (r & 0x200) { /* a run of 4 */
			if (i + 4 > F1PAGES) i = F1PAGES - 4;
			ssize_t n = lpc_pread(f1, buf, sizeof buf, i * PS);
			if (n == (ssize_t)sizeof buf)
				for (int k = 0; k < 4; k++) check_page("F1 pread", buf + k * PS / 8, i + k);
			else if (n != -ENOMEM && n != -EAGAIN) bad("F1 pread rc", i, (uint64_t)n, sizeof buf);
		} else { /* a sequential burst: readahead */
			uint64_t b = i;
			for (int k = 0; k < 64 && b + k < F1PAGES; k++) {
				ssize_t n = lpc_pread(f1, buf, PS, (b + k) * PS);
				if (n == PS) check_page("F1 seq", buf, b + k);
			}
		}
		atomic_fetch_add(&ops, 1);
	}
	return NULL;
}

static void *invalidator(void *arg)
{
	uint64_t s = 99;
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t i = xs(&s) % F1PAGES;
		lpc_invalidate(f1, i * PS, 32 * PS);
		usleep(200);
	}
	return NULL;
}

static void *reopener(void *arg)
{
	uint64_t s = 5, buf[PS / 8];
	(void)arg;
	while (!atomic_load(&stop)) {
		struct lpc_file *f2;
		if (lpc_file_open(c, p2, O_RDONLY, 0, &f2)) { bad("F2 open", 0, 0, 0); break; }
		for (int k = 0; k < 200; k++) {
			uint64_t i = xs(&s) % F1PAGES;
			ssize_t n = lpc_pread(f2, buf, PS, i * PS);
			if (n == PS) check_page("F2", buf, i);
		}
		lpc_file_close(f2);
	}
	return NULL;
}

static void *writer(void *arg)
{
	uint64_t s = 77 + (uintptr_t)arg, buf[PS / 8];
	while (!atomic_load(&stop)) {
		uint64_t i = xs(&s) % F3PAGES;
		pthread_mutex_lock(&f3lock[i]);
		if (xs(&s) & 1) {
			uint64_t g = atomic_load(&gen[i]) + 1;
			for (int k = 0; k < PS / 8; k++) buf[k] = g;
			if (lpc_pwrite(f3, buf, PS, i * PS) == PS) atomic_store(&gen[i], g);
		} else {
			ssize_t n = lpc_pread(f3, buf, PS, i * PS);
			if (n == PS && buf[0] != atomic_load(&gen[i])) bad("F3 (written)", i, buf[0], gen[i]);
		}
		pthread_mutex_unlock(&f3lock[i]);
	}
	return NULL;
}

static void *truncator(void *arg)
{
	uint64_t s = 3, buf[PS / 8];
	(void)arg;
	while (!atomic_load(&stop)) {
		uint64_t sz = (xs(&s) % F4PAGES) * PS;
		lpc_truncate(f4, sz);
		for (int k = 0; k < 50; k++) {
			uint64_t i = xs(&s) % F4PAGES;
			ssize_t n = lpc_pread(f4, buf, PS, i * PS);
			if (n > 0) for (int j = 0; j < n / 8; j += 61) if (buf[j] != 0) { bad("F4 past truncate", i, buf[j], 0); break; }
		}
		lpc_truncate(f4, F4PAGES * PS);
	}
	return NULL;
}

static void fill(const char *path, uint64_t pages, int stamp)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	uint64_t buf[PS / 8];
	for (uint64_t i = 0; i < pages; i++) {
		for (int k = 0; k < PS / 8; k++) buf[k] = stamp ? i : 0;
		if (pwrite(fd, buf, PS, (off_t)(i * PS)) != PS) { perror("fill"); exit(1); }
	}
	close(fd);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/var/tmp";
	double secs = argc > 2 ? atof(argv[2]) : 5;
	int nr = argc > 3 ? atoi(argv[3]) : 4;
	struct lpc_config cfg;
	pthread_t t[64];
	int nt = 0;

	snprintf(p1, sizeof p1, "%s/ws_stress1.%d", dir, getpid());
	snprintf(p2, sizeof p2, "%s/ws_stress2.%d", dir, getpid());
	snprintf(p3, sizeof p3, "%s/ws_stress3.%d", dir, getpid());
	snprintf(p4, sizeof p4, "%s/ws_stress4.%d", dir, getpid());
	fill(p1, F1PAGES, 1);
	fill(p2, F1PAGES, 1);
	fill(p3, F3PAGES, 0);
	fill(p4, F4PAGES, 0);
	for (int i = 0; i < F3PAGES; i++) pthread_mutex_init(&f3lock[i], NULL);
	lpc_config_init(&cfg);
	cfg.cache_bytes = FRAMES * PS;
	cfg.io_backend = LPC_IO_SYNC;
	if (lpc_cache_create(&cfg, &c) || lpc_file_open(c, p1, O_RDONLY, 0, &f1) ||
	    lpc_file_open(c, p3, O_RDWR, 0, &f3) || lpc_file_open(c, p4, O_RDWR, 0, &f4)) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	for (int i = 0; i < nr; i++) pthread_create(&t[nt++], NULL, reader, (void *)(uintptr_t)(i + 1));
	pthread_create(&t[nt++], NULL, invalidator, NULL);
	pthread_create(&t[nt++], NULL, reopener, NULL);
	pthread_create(&t[nt++], NULL, writer, (void *)1);
	pthread_create(&t[nt++], NULL, writer, (void *)2);
	pthread_create(&t[nt++], NULL, truncator, NULL);
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, true);
	for (int i = 0; i < nt; i++) pthread_join(t[i], NULL);
	/* F3 after a full drop: what the file got must be the last generation. */
	lpc_fsync(f3);
	lpc_file_close(f3);
	{
		int fd = open(p3, O_RDONLY);
		uint64_t w;
		for (int i = 0; i < F3PAGES; i++)
			if (pread(fd, &w, 8, (off_t)i * PS) != 8 || w != gen[i]) bad("F3 on disk", (uint64_t)i, w, gen[i]);
		close(fd);
	}
	struct lpc_stats s;
	lpc_stats(c, &s);
	lpc_file_close(f1);
	lpc_file_close(f4);
	lpc_cache_destroy(c);
	unlink(p1); unlink(p2); unlink(p3); unlink(p4);
	printf("stress: %lu reader ops, evictions %" PRIu64 ", errors %lu\n", (unsigned long)ops, s.evictions,
	       (unsigned long)errors);
	return errors ? 1 : 0;
}
