/* marks.c - which pages does lpc_pread mark REFERENCED (CLOCK2's promotion
 * signal)?  Small cache (1024 frames), null backend, no eviction: every
 * scenario reads the flags of the pages it names straight from the pool.
 * usage: marks DIR   (files DIR/lpc_cont_*, removed at the end) */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lpc/lpc.h>
#include <urcu/urcu-memb.h>
#include "cache/cache.h"
#include "page/page.h"

static char dir[256];
#define PAGES 64

static struct lpc_cache *mkcache(int locked, int ra)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	lpc_config_init(&cfg);
	cfg.cache_bytes = 1024 * 4096;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = locked ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS;
	if (!ra) cfg.readahead_kb = LPC_READAHEAD_OFF;
	if (lpc_cache_create(&cfg, &c)) { fprintf(stderr, "create\n"); exit(1); }
	return c;
}

static struct lpc_file *mkfile(struct lpc_cache *c, const char *name, uint64_t pages)
{
	char path[512];
	struct lpc_file *f;
	snprintf(path, sizeof path, "%s/lpc_cont_%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(pages * 4096))) { perror(path); exit(1); }
	close(fd);
	if (lpc_file_open(c, path, O_RDWR, 0, &f)) { fprintf(stderr, "open %s\n", path); exit(1); }
	return f;
}

static void rmfile(const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/lpc_cont_%s", dir, name);
	unlink(path);
}

static uint32_t flags_of(struct lpc_cache *c, struct lpc_file *f, uint64_t idx)
{
	for (uint32_t i = 0; i < c->pool.nframes; i++) {
		struct lpc_page *p = &c->pool.pages[i];
		uint32_t fl = atomic_load(&p->flags);
		if ((fl & LPC_PG_PUBLISHED) && !(fl & LPC_PG_REMOVED) && atomic_load(&p->file) == f && atomic_load(&p->index) == idx)
			return fl;
	}
	return 0;
}
static int refd(struct lpc_cache *c, struct lpc_file *f, uint64_t i) { return !!(flags_of(c, f, i) & LPC_PG_REFERENCED); }
static unsigned count_ref(struct lpc_cache *c, struct lpc_file *f, uint64_t n)
{
	unsigned k = 0;
	for (uint64_t i = 0; i < n; i++) k += refd(c, f, i);
	return k;
}
/* What the evictor's second-chance pass does to a page it passes over. */
static void clear_ref(struct lpc_cache *c, struct lpc_file *f, uint64_t idx)
{
	for (uint32_t i = 0; i < c->pool.nframes; i++) {
		struct lpc_page *p = &c->pool.pages[i];
		if ((atomic_load(&p->flags) & LPC_PG_PUBLISHED) && !(atomic_load(&p->flags) & LPC_PG_REMOVED) && atomic_load(&p->file) == f && atomic_load(&p->index) == idx)
			atomic_fetch_and(&p->flags, ~(uint32_t)LPC_PG_REFERENCED);
	}
}
static char buf[1 << 20];
static void rd(struct lpc_file *f, size_t len, uint64_t off)
{
	ssize_t r = lpc_pread(f, buf, len, off);
	if (r != (ssize_t)len) { fprintf(stderr, "pread(%zu, %" PRIu64 ") = %zd\n", len, off, r); exit(1); }
}

/* 1. a one-time scan in CALL-byte calls: how many of the file's pages end REFERENCED? */
static void scan(int locked, int ra, size_t call)
{
	struct lpc_cache *c = mkcache(locked, ra);
	struct lpc_file *f = mkfile(c, "scan", PAGES);
	uint64_t total = PAGES * 4096ull;
	for (uint64_t off = 0; off < total; off += call)
		rd(f, total - off < call ? total - off : call, off);
	printf("1 scan %-8s ra=%d call=%6zu: REFERENCED %2u of %d pages\n", locked ? "LOCKED" : "lockless", ra, call,
	       count_ref(c, f, PAGES), PAGES);
	lpc_file_close(f); lpc_cache_destroy(c); rmfile("scan");
}

/* 2. two one-time scans interleaved by one thread (a merge of two files, or two
 * runs of one file), 1000-byte records: each call breaks the other's continuation. */
static void interleaved(int same_file)
{
	struct lpc_cache *c = mkcache(0, 1);
	struct lpc_file *a = mkfile(c, "a", PAGES), *b = same_file ? a : mkfile(c, "b", PAGES);
	uint64_t half = same_file ? PAGES / 2 * 4096ull : 0, total = (same_file ? PAGES / 2 : PAGES) * 4096ull;
	for (uint64_t off = 0; off + 1000 <= total; off += 1000) {
		rd(a, 1000, off);
		rd(b, 1000, half + off);
	}
	if (same_file)
		printf("2 interleaved scan, two runs of one file : REFERENCED %2u of %d pages\n", count_ref(c, a, PAGES), PAGES);
	else
		printf("2 interleaved scan, two files           : REFERENCED %2u + %2u of %d + %d pages\n",
		       count_ref(c, a, PAGES), count_ref(c, b, PAGES), PAGES, PAGES);
	lpc_file_close(a); if (!same_file) lpc_file_close(b);
	lpc_cache_destroy(c); rmfile("a"); rmfile("b");
}

/* 2c. one sequential scan in 1000-byte records whose calls alternate between
 * two threads (a pool of workers taking the next record): the scan is one
 * stream, but each thread sees only every other call. */
static _Atomic int turn;
static struct lpc_file *g_sf;
static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	static char b[2][1000];
	for (uint64_t k = me; (k + 1) * 1000 <= PAGES * 4096ull; k += 2) {
		while (atomic_load(&turn) != me) ;
		if (lpc_pread(g_sf, b[me], 1000, k * 1000) != 1000) exit(1);
		atomic_store(&turn, !me);
	}
	return NULL;
}
static void two_threads(void)
{
	struct lpc_cache *c = mkcache(0, 1);
	g_sf = mkfile(c, "tt", PAGES);
	pthread_t t[2];
	for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
	printf("2 one scan, calls alternating between 2 threads: REFERENCED %2u of %d pages\n", count_ref(c, g_sf, PAGES), PAGES);
	lpc_file_close(g_sf); lpc_cache_destroy(c); rmfile("tt");
}

/* 3. a hot page P, re-read N times by one thread, after the evictor cleared
 * its REFERENCED: is it marked again?  mode: 0 the same 100-byte record each
 * time, nothing else; 1 record r then r+1 (sub-page, same page); 2 the record,
 * with an lpc_page_get of another page between; 3 with lpc_page_read between;
 * 4 with an lpc_pread of another page between (control). */
static int noop_fn_called;
static void noop_fn(const void *frame, size_t size, void *arg) { (void)frame; (void)size; (void)arg; noop_fn_called++; }
static void hot(int mode)
{
	static const char *what[] = { "same record, nothing between", "record r then r+1, nothing between",
				      "record, lpc_page_get(other) between", "record, lpc_page_read(other) between",
				      "record, lpc_pread(other page) between" };
	struct lpc_cache *c = mkcache(0, 0);
	struct lpc_file *f = mkfile(c, "hot", PAGES);
	const uint64_t P = 5;
	rd(f, 4096, P * 4096);  /* bring P and the others in */
	for (uint64_t i = 10; i < 20; i++) rd(f, 4096, i * 4096);
	rd(f, 100, P * 4096);   /* first sub-page use */
	clear_ref(c, f, P);     /* the evictor's second chance */
	for (int n = 0; n < 100; n++) {
		struct lpc_page *p;
		if (mode == 1) { rd(f, 100, P * 4096 + 100 * (n % 40)); continue; }
		if (mode == 2) { if (lpc_page_get(f, 10 + n % 10, 0, &p)) exit(1); lpc_page_put(p); }
		if (mode == 3) { if (lpc_page_read(f, 10 + n % 10, 0, noop_fn, NULL)) exit(1); }
		if (mode == 4) rd(f, 100, (10 + n % 10) * 4096);
		rd(f, 100, P * 4096);
	}
	printf("3 hot page read 100x (%-38s): REFERENCED %d\n", what[mode], refd(c, f, P));
	lpc_file_close(f); lpc_cache_destroy(c); rmfile("hot");
}

/* 4. a stale cont_file: the thread's last call ended inside page 0 of A; A is
 * closed and B opened (same address?).  B's page 0, cached by another thread's
 * read, is read by this thread for the first time: is it marked? */
static struct lpc_file *g_f;
static ssize_t g_r;
static void *other(void *arg) { (void)arg; static char b2[4096]; g_r = lpc_pread(g_f, b2, 4096, 0); return NULL; }
static void stale(int end_inside)
{
	struct lpc_cache *c = mkcache(0, 0);
	struct lpc_file *a = mkfile(c, "A", PAGES);
	rd(a, end_inside ? 1000 : 4096, 0);
	lpc_file_close(a);
	urcu_memb_barrier(); /* the deferred free of A runs: its address may be reused */
	struct lpc_file *b = mkfile(c, "B", PAGES);
	g_f = b;
	pthread_t t;
	pthread_create(&t, NULL, other, NULL); pthread_join(t, NULL);
	clear_ref(c, b, 0);
	uint32_t before = flags_of(c, b, 0);
	rd(b, 100, 2000);       /* this thread's first read of B */
	printf("4 stale cont: A's last read ended %-8s, B %s A's address: B's page 0 REFERENCED after first read %d (flags %#x -> %#x, other's pread %zd)\n",
	       end_inside ? "inside" : "boundary", b == a ? "==" : "!=", refd(c, b, 0), before, flags_of(c, b, 0), g_r);
	lpc_file_close(b); lpc_cache_destroy(c); rmfile("A"); rmfile("B");
}

/* 5. data: pwrite a pattern, then compare lpc_pread of random ranges (many
 * continuations, page crossings, both modes, files closed and reopened at
 * the same address, two caches in turn) with it. */
static unsigned char pat[PAGES * 4096];
static void data(void)
{
	uint64_t rs = 12345, bad = 0, calls = 0, reopened = 0, same = 0;
	struct lpc_file *last = NULL;
	for (size_t i = 0; i < sizeof pat; i++) pat[i] = (unsigned char)(i * 131 + (i >> 12));
	for (int round = 0; round < 6; round++) {
		struct lpc_cache *c1 = mkcache(round & 1, 1), *c2 = mkcache(!(round & 1), 0);
		struct lpc_file *f1 = mkfile(c1, "d1", PAGES), *f2 = mkfile(c2, "d2", PAGES);
		last = f1;
		if (lpc_pwrite(f1, pat, sizeof pat, 0) != (ssize_t)sizeof pat ||
		    lpc_pwrite(f2, pat, sizeof pat, 0) != (ssize_t)sizeof pat) { fprintf(stderr, "pwrite\n"); exit(1); }
		for (int k = 0; k < 20000; k++) {
			rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
			struct lpc_file *f = (rs >> 40) & 1 ? f1 : f2;
			uint64_t off = (rs >> 3) % sizeof pat;
			size_t len = (rs >> 24) % 3 == 0 ? 1 + (rs >> 28) % 9000 : 1 + (rs >> 28) % 300;
			if (len > sizeof pat - off) len = sizeof pat - off;
			if (lpc_pread(f, buf, len, off) != (ssize_t)len || memcmp(buf, pat + off, len)) bad++;
			calls++;
			if (k % 5000 == 4999) { /* close and reopen f1: often the same address */
				/* the null backend keeps nothing: the pattern is written again */
				lpc_file_close(f1); urcu_memb_barrier(); f1 = mkfile(c1, "d1", PAGES);
				if (lpc_pwrite(f1, pat, sizeof pat, 0) != (ssize_t)sizeof pat) exit(1);
				reopened++; same += f1 == last; last = f1;
			}
		}
		lpc_file_close(f1); lpc_file_close(f2); lpc_cache_destroy(c1); lpc_cache_destroy(c2);
		rmfile("d1"); rmfile("d2");
	}
	printf("5 data: %" PRIu64 " random preads (both modes, two caches), %" PRIu64 " reopens (%" PRIu64 " at the same address): %" PRIu64 " wrong\n",
	       calls, reopened, same, bad);
}

int main(int argc, char **argv)
{
	snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : "/var/tmp");
	for (int locked = 0; locked < 2; locked++)
		for (int ra = 1; ra >= 0; ra--) {
			scan(locked, ra, 1000);
			scan(locked, ra, 130000);
		}
	scan(0, 1, 512);
	interleaved(0);
	interleaved(1);
	two_threads();
	for (int m = 0; m < 5; m++) hot(m);
	stale(1);
	stale(0);
	data();
	return 0;
}
