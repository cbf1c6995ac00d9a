/* SPDX-License-Identifier: MIT */
/*
 * stress_readahead.c - readahead (synchronous windows, asynchronous markers,
 * lpc_fadvise) racing writers, truncates, invalidation and eviction, on both
 * disk backends and both lookup modes, with a working set 8x the cache.
 *
 * Every 8-byte word of every page is stamped: (file, page index, word,
 * version, the first and last word the write that put it there covered in
 * that page), bit 63 set; 0 only where a truncate cut the file and nothing
 * was written since.  Each page has one owner that writes it (a writer owns
 * 16-page chunks of the low zone; the truncate thread owns the tail zone of
 * each file), so the versions of a word only grow, and after each write or
 * truncate returns the owner publishes, per word, what the file holds there
 * now (done[], release; a truncate's zero carries its version too), and
 * before a truncate starts, its version (zstart[]).
 * Threads: scanners (sequential lpc_pread from a random page to the end, in
 * calls of 4 KiB .. 128 KiB: readahead windows and marker hits), random
 * readers (lpc_pread of 1-3 pages anywhere), two writers (whole pages, and
 * word-aligned partial writes across pages), the truncate thread (writes,
 * shrinks to a word-aligned size inside the tail, sometimes writes past the
 * cut, grows back to the full size), and an invalidator (lpc_invalidate,
 * lpc_fadvise DONTNEED, now and then WILLNEED, and a RANDOM/NORMAL/
 * SEQUENTIAL advice flip on one file).
 * A read loads done[] for its range before it starts; each word it returns
 * must be:
 *  - a stamp of its own position (file, index, word): never another page's
 *  - of a version at least the one done[] had (no older data than a write
 *    or truncate that returned before the read began: no stale read-ahead
 *    bytes over new data, nothing resurrected past a truncate); the same
 *    version: the same word exactly
 *  - 0 only if a truncate of that word had started before the read ended
 *    (zstart[] loaded after the read at least done[]'s version)
 *  - not torn: a word from a whole-page write of version v means every
 *    word of that page the read returned is of version >= v (or a cut 0)
 * and the read's length is at least what the low zone (never cut) holds.
 * At the end of each variant: writers stopped, lpc_fsync on each file, then
 * the kernel's file through a fresh descriptor is the full size and every
 * word is done[]'s; close and lpc_cache_destroy return 0.  The variant runs
 * until readahead read pages and an asynchronous window started (a starved
 * run on a loaded machine goes on, up to TST_EXTRA_S, until it did).
 *
 * Usage: stress_readahead [--seed N]   Exit: 0 pass, 1 fail, 77 skip.
 * LPC_STRESS_SECONDS: seconds for the whole run, shared by the four
 * variants (default 8).
 */
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../common/stress.h"
#include "../common/write_test.h"

#define PS 4096u
#define WPP (PS / 8)	    /* words per page */
#define NF 2
#define NPAGES 1024u	    /* per file */
#define TAIL 128u	    /* the truncate thread's pages at each file's end */
#define LOW (NPAGES - TAIL) /* the writers' pages */
#define NFRAMES (NF * NPAGES / 8)
#define CHUNK 16u
#define NW 2
#define NSCAN 2
#define NRAND 2
#define FULL ((uint64_t)NPAGES * PS)

static struct lpc_cache *g_c;
static struct lpc_file *g_f[NF];
static char g_path[NF][600];
static _Atomic uint64_t *g_done;   /* NF * NPAGES * WPP: the file's word now */
static _Atomic uint32_t *g_zstart; /* the same: the last truncate begun's version */
static uint32_t *g_ver;		   /* NF * NPAGES: the owner's version counter */
static _Atomic unsigned long g_reads, g_words, g_zeros;

#define WIDX(fi, pg, w) (((uint64_t)(fi) * NPAGES + (pg)) * WPP + (w))

/* bit 63 | file 2 | index 12 | word 9 | first 9 | last 9 | version 22 */
static uint64_t stamp(unsigned fi, uint64_t pg, unsigned w, unsigned first, unsigned last,
		      uint32_t v)
{
	return (1ull << 63) | ((uint64_t)fi << 61) | (pg << 49) | ((uint64_t)w << 40) |
	       ((uint64_t)first << 31) | ((uint64_t)last << 22) | (v & 0x3fffffu);
}

static uint32_t s_ver(uint64_t x) { return (uint32_t)(x & 0x3fffffu); }
static unsigned s_first(uint64_t x) { return (unsigned)(x >> 31) & 511u; }
static unsigned s_last(uint64_t x) { return (unsigned)(x >> 22) & 511u; }

/* done[]'s value for a word a truncate of version v cut: bit 63 clear. */
static uint64_t zero_state(uint32_t v) { return v; }

static _Atomic int g_bad;

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void bad(const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&tst_failed, 1);
	if (atomic_fetch_add(&g_bad, 1) >= 10)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "BAD: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (seed %" PRIu64 ")\n", tst_seed);
	va_end(ap);
}

/* ---- reads ---- */

struct rd {
	uint64_t rng;
	uint64_t *buf, *snap;
};

/* Checks n bytes read at off of file fi against snap (done[] before). */
static void check_read(unsigned fi, uint64_t off, const uint64_t *buf, size_t n,
		       const uint64_t *snap, const char *who)
{
	uint64_t w0 = off / 8, nw = n / 8;

	for (uint64_t pstart = 0; pstart < nw;) {
		uint64_t wi = w0 + pstart, pg = wi / WPP;
		uint64_t pend = (pg + 1) * WPP - w0; /* words of this page in the read */
		uint32_t whole = 0;

		if (pend > nw)
			pend = nw;
		for (uint64_t k = pstart; k < pend; k++) {
			uint64_t x = buf[k], s = snap[k];
			unsigned w = (unsigned)((w0 + k) % WPP);
			uint32_t sv = s_ver(s);

			if (x == 0) {
				uint32_t z = atomic_load_explicit(&g_zstart[WIDX(fi, pg, w)],
								  memory_order_acquire);

				atomic_fetch_add_explicit(&g_zeros, 1, memory_order_relaxed);
				if (!z || z < sv)
					bad("%s: file %u page %" PRIu64 " word %u reads 0, no truncate "
					    "begun since version %u (done %#" PRIx64 ")",
					    who, fi, pg, w, sv, s);
				continue;
			}
			if (!(x >> 63) || ((x >> 61) & 3) != fi || ((x >> 49) & 4095) != pg ||
			    ((x >> 40) & 511) != w) {
				bad("%s: file %u page %" PRIu64 " word %u holds %#" PRIx64
				    ": another place's stamp", who, fi, pg, w, x);
				continue;
			}
			if (s_ver(x) < sv || (s_ver(x) == sv && x != s))
				bad("%s: file %u page %" PRIu64 " word %u holds version %u (%#" PRIx64
				    "), older than %u (%#" PRIx64 ") whose call returned before the read",
				    who, fi, pg, w, s_ver(x), x, sv, s);
			if (s_first(x) == 0 && s_last(x) == WPP - 1 && s_ver(x) > whole)
				whole = s_ver(x);
		}
		if (whole)
			for (uint64_t k = pstart; k < pend; k++)
				if (buf[k] && s_ver(buf[k]) < whole)
					bad("%s: file %u page %" PRIu64 " torn: word %u of version %u "
					    "beside a whole-page write of version %u", who, fi, pg,
					    (unsigned)((w0 + k) % WPP), s_ver(buf[k]), whole);
		pstart = pend;
	}
	atomic_fetch_add_explicit(&g_words, nw, memory_order_relaxed);
	atomic_fetch_add_explicit(&g_reads, 1, memory_order_relaxed);
}

static void one_read(struct rd *r, unsigned fi, uint64_t off, size_t len, const char *who)
{
	uint64_t w0 = off / 8;
	size_t least = off < LOW * (uint64_t)PS ? (size_t)(LOW * (uint64_t)PS - off) : 0;
	ssize_t n;

	if (off + len > FULL)
		len = (size_t)(FULL - off);
	for (size_t k = 0; k < len / 8; k++)
		r->snap[k] = atomic_load_explicit(&g_done[fi * (uint64_t)NPAGES * WPP + w0 + k],
						  memory_order_acquire);
	n = lpc_pread(g_f[fi], r->buf, len, off);
	if (least > len)
		least = len;
	if (n < (ssize_t)least || n > (ssize_t)len || n % 8) {
		bad("%s: lpc_pread(file %u, off %" PRIu64 ", len %zu) = %zd, want %zu .. %zu", who,
		    fi, off, len, n, least, len);
		return;
	}
	check_read(fi, off, r->buf, (size_t)n, r->snap, who);
}

static void *scanner(void *arg)
{
	static const size_t sizes[] = { 4096, 16384, 32768, 65536, 131072 };
	struct rd r = { .rng = tst_seed ^ (0x5ca11ull + (uintptr_t)arg * 7919) };

	r.buf = malloc(131072);
	r.snap = malloc(131072);
	REQUIRE(r.buf && r.snap);
	while (!tst_stopping()) {
		unsigned fi = (unsigned)(tst_rnd(&r.rng) % NF);
		size_t call = sizes[tst_rnd(&r.rng) % 5];
		uint64_t off = (tst_rnd(&r.rng) % NPAGES) * PS;

		for (; off < FULL && !tst_stopping(); off += call)
			one_read(&r, fi, off, call, "scanner");
	}
	free(r.buf);
	free(r.snap);
	return NULL;
}

static void *rand_reader(void *arg)
{
	struct rd r = { .rng = tst_seed ^ (0x7a4dull + (uintptr_t)arg * 104729) };

	r.buf = malloc(3 * PS);
	r.snap = malloc(3 * PS);
	REQUIRE(r.buf && r.snap);
	while (!tst_stopping()) {
		unsigned fi = (unsigned)(tst_rnd(&r.rng) % NF);
		uint64_t off = (tst_rnd(&r.rng) % (NPAGES * WPP)) * 8;
		size_t len = 8 * (1 + (size_t)(tst_rnd(&r.rng) % (3 * WPP)));

		one_read(&r, fi, off, len, "random reader");
	}
	free(r.buf);
	free(r.snap);
	return NULL;
}

/* ---- writes (the owner of every page written) ---- */

/* Writes words [w0, w0 + nw) of file fi (whole words, across pages), each
 * page with its next version; publishes done[] after the call returned. */
static void owner_write(unsigned fi, uint64_t w0, uint64_t nw, uint64_t *buf, const char *who)
{
	ssize_t n;

	for (uint64_t k = 0; k < nw;) {
		uint64_t wi = w0 + k, pg = wi / WPP;
		unsigned first = (unsigned)(wi % WPP);
		uint64_t e = (pg + 1) * WPP - w0;
		unsigned last;
		uint32_t v = ++g_ver[fi * NPAGES + pg];

		if (e > nw)
			e = nw;
		last = (unsigned)((w0 + e - 1) % WPP);
		for (; k < e; k++)
			buf[k] = stamp(fi, pg, (unsigned)((w0 + k) % WPP), first, last, v);
	}
	n = lpc_pwrite(g_f[fi], buf, nw * 8, w0 * 8);
	if (n != (ssize_t)(nw * 8)) {
		bad("%s: lpc_pwrite(file %u, off %" PRIu64 ", len %" PRIu64 ") = %zd", who, fi,
		    w0 * 8, nw * 8, n);
		return;
	}
	for (uint64_t k = 0; k < nw; k++)
		atomic_store_explicit(&g_done[fi * (uint64_t)NPAGES * WPP + w0 + k], buf[k],
				      memory_order_release);
}

static void *writer(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint64_t rng = tst_seed ^ (0x3417ull + id * 31337);
	uint64_t *buf = malloc(4 * PS);

	REQUIRE(buf);
	while (!tst_stopping()) {
		unsigned fi = (unsigned)(tst_rnd(&rng) % NF);
		uint64_t chunk = (tst_rnd(&rng) % (LOW / CHUNK / NW)) * NW + id;
		uint64_t cw0 = chunk * CHUNK * WPP, w0, nw;

		if (tst_rnd(&rng) % 2) { /* whole pages: 1..4 */
			nw = (1 + tst_rnd(&rng) % 4) * WPP;
			w0 = cw0 + (tst_rnd(&rng) % (CHUNK - nw / WPP + 1)) * WPP;
		} else { /* partial: any words, up to 3 pages */
			nw = 1 + tst_rnd(&rng) % (3 * WPP);
			w0 = cw0 + tst_rnd(&rng) % (CHUNK * WPP - nw + 1);
		}
		owner_write(fi, w0, nw, buf, "writer");
	}
	free(buf);
	return NULL;
}

static _Atomic unsigned long g_truncs;

/* Cuts file fi at word `cut` of the tail (the truncate's version per page). */
static void owner_truncate(unsigned fi, uint64_t cut_w)
{
	uint64_t end_w = (uint64_t)NPAGES * WPP, base = fi * (uint64_t)NPAGES * WPP;
	uint32_t v = 0;
	int rc;

	for (uint64_t wi = cut_w; wi < end_w; wi++) {
		if (wi == cut_w || wi % WPP == 0)
			v = ++g_ver[fi * NPAGES + wi / WPP];
		atomic_store_explicit(&g_zstart[base + wi], v, memory_order_release);
	}
	rc = lpc_truncate(g_f[fi], cut_w * 8);
	if (rc)
		bad("lpc_truncate(file %u, %" PRIu64 ") = %d", fi, cut_w * 8, rc);
	for (uint64_t wi = cut_w; wi < end_w; wi++)
		atomic_store_explicit(&g_done[base + wi],
				      zero_state(atomic_load_explicit(&g_zstart[base + wi],
								      memory_order_relaxed)),
				      memory_order_release);
	atomic_fetch_add(&g_truncs, 1);
}

static void *truncater(void *arg)
{
	uint64_t rng = tst_seed ^ 0x7e11ull;
	uint64_t *buf = malloc(4 * PS);

	(void)arg;
	REQUIRE(buf);
	while (!tst_stopping()) {
		unsigned fi = (unsigned)(tst_rnd(&rng) % NF);
		uint64_t lo = (uint64_t)LOW * WPP, tw = (uint64_t)TAIL * WPP;
		uint64_t cut, nw, w0;
		int rc;

		for (int i = 0; i < 4; i++) { /* writes in the tail */
			nw = tst_rnd(&rng) % 2 ? WPP : 1 + tst_rnd(&rng) % (3 * WPP);
			w0 = tst_rnd(&rng) % 2 ? lo + (tst_rnd(&rng) % TAIL) * WPP
					       : lo + tst_rnd(&rng) % tw;
			if (w0 + nw > lo + tw)
				nw = lo + tw - w0;
			owner_write(fi, w0, nw, buf, "truncater");
		}
		cut = lo + tst_rnd(&rng) % tw;
		owner_truncate(fi, cut);
		tst_sleep_us((unsigned)(tst_rnd(&rng) % 500));
		if (tst_rnd(&rng) % 2) { /* a write past the cut extends the file */
			w0 = cut + tst_rnd(&rng) % (lo + tw - cut);
			nw = 1 + tst_rnd(&rng) % (lo + tw - w0 < WPP ? lo + tw - w0 : WPP);
			owner_write(fi, w0, nw, buf, "truncater past the cut");
		}
		rc = lpc_truncate(g_f[fi], FULL); /* grows back: zeros */
		if (rc)
			bad("lpc_truncate(file %u, full) = %d", fi, rc);
	}
	free(buf);
	return NULL;
}

static void *invalidator(void *arg)
{
	uint64_t rng = tst_seed ^ 0x1a7dull;

	(void)arg;
	while (!tst_stopping()) {
		unsigned fi = (unsigned)(tst_rnd(&rng) % NF);
		uint64_t off = (tst_rnd(&rng) % NPAGES) * PS + tst_rnd(&rng) % 2 * (tst_rnd(&rng) % PS);
		uint64_t len = tst_rnd(&rng) % 4 == 0 ? 0 : 1 + tst_rnd(&rng) % (64 * PS);
		unsigned k = (unsigned)(tst_rnd(&rng) % 16);
		int rc;

		if (k < 7) {
			rc = lpc_invalidate(g_f[fi], off, len);
			if (rc < 0)
				bad("lpc_invalidate = %d", rc);
		} else if (k < 13) {
			rc = lpc_fadvise(g_f[fi], off, len, LPC_FADV_DONTNEED);
			if (rc)
				bad("lpc_fadvise(DONTNEED) = %d", rc);
		} else if (k < 15) {
			rc = lpc_fadvise(g_f[fi], off, len ? len : 16 * PS, LPC_FADV_WILLNEED);
			if (rc)
				bad("lpc_fadvise(WILLNEED) = %d", rc);
		} else {
			static const int adv[] = { LPC_FADV_NORMAL, LPC_FADV_SEQUENTIAL,
						   LPC_FADV_RANDOM, LPC_FADV_NORMAL };

			rc = lpc_fadvise(g_f[fi], 0, 0, adv[tst_rnd(&rng) % 4]);
			if (rc)
				bad("lpc_fadvise(advice) = %d", rc);
		}
		tst_sleep_us((unsigned)(tst_rnd(&rng) % 2000));
	}
	return NULL;
}

/* ---- a variant ---- */

static bool enough(void *arg)
{
	const int *lookup = arg;
	struct lpc_stats s;

	lpc_stats(g_c, &s);
	/* LOCKED mode counts no async window (see the check after the run). */
	return s.ra_pages > 0 && (*lookup == LPC_LOOKUP_LOCKED || s.ra_async > 0) &&
	       s.evictions > 0 &&
	       atomic_load(&g_truncs) > 0;
}

/* True when a registration cannot be refused for RLIMIT_MEMLOCK. */
static bool memlock_unbounded(void)
{
	struct rlimit rl;

	return geteuid() == 0 ||
	       (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY);
}

static void variant(int backend, int lookup, double secs)
{
	struct lpc_config cfg;
	struct tst_threads th = { 0 };
	struct lpc_stats s;
	uint64_t *k = malloc(FULL + PS);
	int rc;

	REQUIRE(k);
	memset(g_ver, 0, NF * NPAGES * sizeof(*g_ver));
	/* The files: every page written whole, version 1. */
	for (unsigned fi = 0; fi < NF; fi++) {
		int fd;

		tst_wfile("ra", g_path[fi], sizeof(g_path[fi]), 0, fi);
		for (uint64_t pg = 0; pg < NPAGES; pg++) {
			g_ver[fi * NPAGES + pg] = 1;
			for (unsigned w = 0; w < WPP; w++) {
				k[pg * WPP + w] = stamp(fi, pg, w, 0, WPP - 1, 1);
				atomic_store(&g_done[WIDX(fi, pg, w)], k[pg * WPP + w]);
				atomic_store(&g_zstart[WIDX(fi, pg, w)], 0);
			}
		}
		fd = open(g_path[fi], O_WRONLY | O_CLOEXEC);
		REQUIRE(fd >= 0 && pwrite(fd, k, FULL, 0) == (ssize_t)FULL && fsync(fd) == 0,
			"writing %s", g_path[fi]);
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = backend;
	cfg.lookup_mode = lookup;
	cfg.alloc_wait_ms = 5000;
	cfg.dirty_expire_ms = 10;
	cfg.dirty_background_pct = 5;
	cfg.dirty_limit_pct = 30;
	rc = lpc_cache_create(&cfg, &g_c);
	REQUIRE(rc == 0, "lpc_cache_create = %d", rc);
	for (unsigned fi = 0; fi < NF; fi++)
		g_f[fi] = tst_file_open(g_c, g_path[fi], O_RDWR);
	printf("backend %s, lookup %s: %u frames, %u files of %u pages, %.1f s\n",
	       tst_backend_name(backend), lookup == LPC_LOOKUP_LOCKED ? "locked" : "lockless",
	       NFRAMES, NF, NPAGES, secs);
	atomic_store(&g_truncs, 0);
	tst_threads_start(&th, NSCAN, scanner, NULL, 0);
	tst_threads_start(&th, NRAND, rand_reader, NULL, 0);
	tst_threads_start(&th, NW, writer, NULL, 0);
	tst_threads_start(&th, 1, truncater, NULL, 0);
	tst_threads_start(&th, 1, invalidator, NULL, 0);
	tst_stress_wait_for(secs, enough, &lookup);
	tst_threads_join(&th);
	lpc_stats(g_c, &s);
	printf("  %lu reads (%lu words, %lu cut zeros), %lu truncates; reads %" PRIu64
	       ", pages per read %.2f, ra windows %" PRIu64 " (async %" PRIu64 "), ra pages %" PRIu64
	       " (used %" PRIu64 ", wasted %" PRIu64 "), evictions %" PRIu64 "\n",
	       atomic_load(&g_reads), atomic_load(&g_words), atomic_load(&g_zeros),
	       atomic_load(&g_truncs), s.reads, s.reads ? (double)s.read_pages / (double)s.reads : 0.0,
	       s.ra_windows, s.ra_async, s.ra_pages, s.ra_used, s.ra_wasted, s.evictions);
	/* LOCKED mode reads its marker windows in the marker's reader: they
	 * count in ra_windows, not ra_async (readahead.c). */
	CHECK(s.ra_pages > 0 && (lookup == LPC_LOOKUP_LOCKED ? s.ra_async == 0 : s.ra_async > 0),
	      "readahead ran: %" PRIu64 " pages, %" PRIu64 " async windows", s.ra_pages,
	      s.ra_async);
	CHECK(s.evictions > 0, "eviction ran");
	/* A direct read cut short by a truncate, then read on from the cut
	 * after the file grew back, asked for an unaligned offset: EINVAL,
	 * and io_uring gave up the chunk's registration on that ring for good
	 * (io.h lpc_io_read_ends).  Without CAP_IPC_LOCK and with a bounded
	 * RLIMIT_MEMLOCK the kernel may refuse a pin: then rings do run
	 * unregistered. */
	if (backend == LPC_IO_URING && memlock_unbounded())
		CHECK_EQ(s.uring_unregistered, 0, "every ring kept its registration");
	/* Writers stopped: after lpc_fsync the kernel's file holds every
	 * word's last version (0 where a cut was not written again). */
	for (unsigned fi = 0; fi < NF; fi++) {
		int64_t n;
		uint64_t badw = 0;

		CHECK_EQ(lpc_fsync(g_f[fi]), 0, "lpc_fsync(file %u)", fi);
		n = tst_kernel_read(g_path[fi], k, FULL + PS);
		CHECK_EQ(n, (int64_t)FULL, "the kernel's file %u after lpc_fsync", fi);
		for (uint64_t wi = 0; n == (int64_t)FULL && wi < (uint64_t)NPAGES * WPP; wi++) {
			uint64_t d = atomic_load(&g_done[fi * (uint64_t)NPAGES * WPP + wi]);
			uint64_t want = d >> 63 ? d : 0;

			if (k[wi] != want && badw++ < 5)
				bad("after lpc_fsync: file %u page %" PRIu64 " word %" PRIu64
				    " is %#" PRIx64 " in the kernel's file, want %#" PRIx64,
				    fi, wi / WPP, wi % WPP, k[wi], want);
		}
		CHECK(badw == 0, "file %u: %" PRIu64 " words differ after lpc_fsync", fi, badw);
	}
	for (unsigned fi = 0; fi < NF; fi++) {
		CHECK_EQ(lpc_file_close(g_f[fi]), 0, "close");
		unlink(g_path[fi]);
	}
	tst_cache_destroy(g_c);
	atomic_store(&g_reads, 0);
	atomic_store(&g_words, 0);
	atomic_store(&g_zeros, 0);
	free(k);
}

int main(int argc, char **argv)
{
	static const int backends[] = { LPC_IO_SYNC, LPC_IO_URING };
	static const int lookups[] = { LPC_LOOKUP_LOCKLESS, LPC_LOOKUP_LOCKED };
	double secs = tst_stress_init(argc, argv, 8) / 4;

	/* The watchdog: each variant may run TST_EXTRA_S longer. */
	alarm((unsigned)(4 * (secs + TST_EXTRA_S)) + 120);
	g_done = calloc((size_t)NF * NPAGES * WPP, sizeof(*g_done));
	g_zstart = calloc((size_t)NF * NPAGES * WPP, sizeof(*g_zstart));
	g_ver = calloc((size_t)NF * NPAGES, sizeof(*g_ver));
	REQUIRE(g_done && g_zstart && g_ver);
	for (int b = 0; b < 2; b++)
		for (int l = 0; l < 2; l++)
			variant(backends[b], lookups[l], secs);
	free(g_done);
	free(g_zstart);
	free(g_ver);
	return tst_finish();
}
