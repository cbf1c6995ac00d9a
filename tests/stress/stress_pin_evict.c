/* SPDX-License-Identifier: MIT */
/*
 * stress_pin_evict.c - range pins (src/filemap/pin.c) racing eviction
 * (src/reclaim/evict.c, E1-E7) and lpc_truncate (src/writeback/truncate.c):
 * guarantees I.2, H.1 and J.4 of include/lpc/lpc.h: a pinned page
 * is never evicted or recycled while pinned, and stamps always match.
 *
 * One cache of 128 frames on the sync backend (real files, so a page that
 * survives a truncate it should not have shows as data, not just as a
 * lookup), and two files whose every 8-byte word at file position pos is
 * stamp(tag, pos) (the position and the file in each word: a frame recycled
 * for another page or file shows in any word, at both ends and in the
 * middle of the page alike):
 *  - A, 1024 pages (8x the cache): pinners pin random ranges of it (1 to 12
 *    pages, unaligned, some across the 64-page leaves; half of them in its
 *    first 160 pages, so many are fast pins of pages that eviction is
 *    taking at the same time), so the background
 *    reclaimer and direct reclaim evict all the while; every page of a pin
 *    is checked whole (every word its stamp, a pin on its count, UPTODATE,
 *    the descriptor's identity) right after lpc_pin and again just before
 *    lpc_unpin, after a yield now and then: a pinned page that eviction
 *    froze and reused shows another page's stamp;
 *  - T, 64 pages, opened O_RDWR: the same pinners pin ranges of it too (a
 *    word is its stamp or 0, see below; each pinned page is copied at pin
 *    time and must be unchanged at unpin), while a truncater loops:
 *      1 pins a few pages around a random page-aligned cut S (I.2);
 *      2 lpc_truncate(T, S); then no lookup past S returns a page
 *        (lpc_page_find, lpc_pin: -ENXIO, lpc_pread: 0 bytes) (J.4);
 *      3 lpc_truncate(T, full size); every byte past S reads 0 through
 *        lpc_pread: a page cached before the cut (stale, stamped) shows;
 *      4 checks the pages pinned in 1 are unchanged, stamps and all, and
 *        not cached any more past S, and unpins them;
 *      5 stamps [S, end) again through a kernel descriptor (not lpc: a
 *        cached page nobody wrote keeps its zeros until evicted, so a word
 *        of T is its stamp or 0).
 *    Cuts are page aligned: a cut inside a page zeroes that page's tail in
 *    place (documented, stress_write.c covers it), which a pinned copy
 *    would flag.
 * -ENOMEM (nothing evictable for alloc_wait_ms) is allowed and counted.
 * Both lookup modes run, each for half the time.  At the end: evictions and
 * truncates happened, no pin leaked (every frame allocatable again).
 *
 * Usage: stress_pin_evict [--seed N]; LPC_STRESS_SECONDS (default 4).
 * Exit: 0 pass, 1 fail, 77 skip.
 */
#include <sched.h>

#include "../common/stress.h"
#include "cache/cache.h"

#define PS 4096u
#define WPP (PS / 8u)		/* words per page */
#define FRAMES 128u
#define APAGES 1024u		/* 8x the cache */
#define TPAGES 64u
#define HOT 160u		/* A's hot pages */
#define MAXP 12u
#define NPIN 3u
#define TAG_A 0xa1u
#define TAG_T 0x71u

static struct lpc_cache *cache;
static struct lpc_file *fa, *ft;
static char patha[600], patht[600];
static _Atomic uint64_t n_pins, n_tpins, n_enomem, n_enxio, n_truncs;

static uint64_t stamp(unsigned tag, uint64_t pos)
{
	return (1ull << 63) | ((uint64_t)tag << 40) | (pos >> 3);
}

/* Writes pages [first, last) of path's file with their stamps. */
static void stamp_file(const char *path, unsigned tag, uint64_t first, uint64_t last)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	uint64_t buf[WPP];

	REQUIRE(fd >= 0, "open %s: %s", path, strerror(errno));
	for (uint64_t i = first; i < last; i++) {
		for (unsigned k = 0; k < WPP; k++)
			buf[k] = stamp(tag, i * PS + 8u * k);
		REQUIRE(pwrite(fd, buf, PS, (off_t)(i * PS)) == (ssize_t)PS, "stamp %s", path);
	}
	close(fd);
}

/* Checks page `index` of the file tagged tag: every word its stamp (or 0,
 * if zero_ok).  Return: 0, or 1 + the first bad word. */
static unsigned check_words(unsigned tag, uint64_t index, const void *data, bool zero_ok)
{
	const uint64_t *w = data;

	for (unsigned k = 0; k < WPP; k++)
		if (w[k] != stamp(tag, index * PS + 8u * k) && !(zero_ok && w[k] == 0))
			return k + 1;
	return 0;
}

/* Checks pinned pages [first, first + n) of f.  copy: NULL for A (exact
 * stamps); for T, n pages to compare with (fill: store them first).
 * Return: true if every one is right. */
static bool check_pins(struct lpc_file *f, uint64_t first, struct lpc_page **pages,
		       unsigned n, bool identity, unsigned char *copy, bool fill)
{
	bool isa = f == fa, ok = true;

	for (unsigned i = 0; i < n; i++) {
		struct lpc_page *p = pages[i];
		const void *d = lpc_page_data(p);
		unsigned bad = check_words(isa ? TAG_A : TAG_T, first + i, d, !isa);
		uint32_t ref = atomic_load(&p->ref);

		ok &= CHECK(bad == 0, "%c page %llu: word %u is %#llx, not its stamp",
			    isa ? 'A' : 'T', (unsigned long long)(first + i), bad - 1,
			    bad ? (unsigned long long)((const uint64_t *)d)[bad - 1] : 0ull);
		ok &= CHECK(ref >= LPC_PIN_BIAS, "%c page %llu not pinned (ref %u)",
			    isa ? 'A' : 'T', (unsigned long long)(first + i), ref);
		ok &= CHECK(atomic_load(&p->flags) & LPC_PG_UPTODATE, "page not UPTODATE");
		if (identity)
			ok &= CHECK(atomic_load(&p->file) == f && atomic_load(&p->index) == first + i,
				    "descriptor identity of %c page %llu", isa ? 'A' : 'T',
				    (unsigned long long)(first + i));
		if (copy && fill)
			memcpy(copy + (size_t)i * PS, d, PS);
		else if (copy)
			ok &= CHECK(memcmp(copy + (size_t)i * PS, d, PS) == 0,
				    "T page %llu changed while pinned",
				    (unsigned long long)(first + i));
	}
	return ok;
}

static void *pinner(void *arg)
{
	uint64_t s = tst_seed ^ ((uintptr_t)arg + 1) * 0x9e37;
	unsigned char *copy = malloc((size_t)MAXP * PS);
	struct lpc_page *pages[MAXP];

	REQUIRE(copy);
	while (!tst_stopping()) {
		bool ona = tst_rnd(&s) % 3 != 0;
		struct lpc_file *f = ona ? fa : ft;
		uint64_t fsize = (uint64_t)(ona ? APAGES : TPAGES) * PS;
		/* Half of A's ranges in its first HOT pages (a bit more than the
		 * cache): fast pins of cached pages racing their eviction. */
		uint64_t off = tst_rnd(&s) % (ona && tst_rnd(&s) % 2 ? (uint64_t)HOT * PS : fsize);
		size_t len = 1 + (size_t)(tst_rnd(&s) % (MAXP * PS - PS));
		uint64_t first = off / PS;
		uint64_t end = off + len > fsize ? fsize : off + len;
		int want = (int)((end - 1) / PS - first + 1);
		int n = lpc_pin(f, off, len, LPC_PIN_READ, pages, MAXP);

		if (n == -ENOMEM) {
			atomic_fetch_add(&n_enomem, 1);
			sched_yield();
			continue;
		}
		if (!ona && n == -ENXIO) { /* at or past a cut of T */
			atomic_fetch_add(&n_enxio, 1);
			continue;
		}
		/* T may be shorter than its full size for a while. */
		if (!CHECK(ona ? n == want : n >= 1 && n <= want, "pin %c [%llu, +%zu) = %d, want %d",
			   ona ? 'A' : 'T', (unsigned long long)off, len, n, want)) {
			if (n > 0)
				lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
			continue;
		}
		check_pins(f, first, pages, (unsigned)n, ona, ona ? NULL : copy, true);
		if (tst_rnd(&s) % 4 == 0)
			sched_yield();
		check_pins(f, first, pages, (unsigned)n, ona, ona ? NULL : copy, false);
		lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
		atomic_fetch_add(ona ? &n_pins : &n_tpins, 1);
	}
	free(copy);
	return NULL;
}

static void *truncater(void *arg)
{
	uint64_t s = tst_seed ^ 0x7a7a ^ (uintptr_t)arg;
	unsigned char *copy = malloc((size_t)MAXP * PS);
	unsigned char *buf = malloc(PS);
	struct lpc_page *pages[MAXP], *p;

	REQUIRE(copy && buf);
	while (!tst_stopping()) {
		uint64_t cut = 1 + tst_rnd(&s) % (TPAGES - 1); /* in pages */
		uint64_t pfirst = cut >= 2 ? cut - 2 : 0;
		int n = lpc_pin(ft, pfirst * PS, 4 * PS, LPC_PIN_READ, pages, MAXP);

		if (n == -ENOMEM) {
			atomic_fetch_add(&n_enomem, 1);
			n = 0;
		} else if (!CHECK(n > 0 && n <= 4, "truncater's pin = %d", n)) {
			break;
		}
		if (n > 0)
			check_pins(ft, pfirst, pages, (unsigned)n, true, copy, true);

		/* 2: shrink; nothing past the cut is found. */
		if (!CHECK_EQ(lpc_truncate(ft, cut * PS), 0, "shrink T to %llu pages",
			      (unsigned long long)cut))
			break;
		for (uint64_t i = cut; i < TPAGES; i += 1 + tst_rnd(&s) % 4) {
			int rc = lpc_page_find(ft, i, &p);

			if (!CHECK(rc < 0, "find of T page %llu past the cut at %llu",
				   (unsigned long long)i, (unsigned long long)cut))
				lpc_page_put(p);
		}
		CHECK_EQ(lpc_pin(ft, cut * PS, PS, LPC_PIN_READ, pages + 4, MAXP - 4), -ENXIO,
			 "pin past the cut at %llu", (unsigned long long)cut);
		CHECK_EQ(lpc_pread(ft, buf, PS, cut * PS), (ssize_t)0, "pread past the cut");
		if (n > 0) /* the pins kept their pages through the cut (I.2) */
			check_pins(ft, pfirst, pages, (unsigned)n, false, copy, false);

		/* 3: regrow; what was past the cut reads zeros (J.4). */
		if (!CHECK_EQ(lpc_truncate(ft, (uint64_t)TPAGES * PS), 0, "regrow T"))
			break;
		for (uint64_t i = cut; i < TPAGES; i += 1 + tst_rnd(&s) % 3) {
			ssize_t r = lpc_pread(ft, buf, PS, i * PS);
			unsigned bad = 0;

			if (r == -ENOMEM) {
				atomic_fetch_add(&n_enomem, 1);
				continue;
			}
			if (!CHECK_EQ(r, (ssize_t)PS, "pread of regrown T page %llu",
				      (unsigned long long)i))
				continue;
			for (unsigned k = 0; k < WPP && !bad; k++)
				if (((uint64_t *)buf)[k] != 0)
					bad = k + 1;
			CHECK(bad == 0, "T page %llu, cut at %llu and regrown: word %u is %#llx, not 0",
			      (unsigned long long)i, (unsigned long long)cut, bad - 1,
			      bad ? (unsigned long long)((uint64_t *)buf)[bad - 1] : 0ull);
		}

		/* 4: the pinned pages are still ours, unchanged; those past the
		 * cut left the cache (the pin kept the frame, not the slot). */
		if (n > 0) {
			check_pins(ft, pfirst, pages, (unsigned)n, false, copy, false);
			for (int i = 0; i < n; i++)
				if (pfirst + (uint64_t)i >= cut)
					CHECK(atomic_load(&pages[i]->file) != ft ||
						      (atomic_load(&pages[i]->flags) &
						       LPC_PG_REMOVED),
					      "pinned T page %llu still cached past the cut",
					      (unsigned long long)(pfirst + (uint64_t)i));
			lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
		}

		/* 5: stamp what the cut dropped, behind lpc's back. */
		stamp_file(patht, TAG_T, cut, TPAGES);
		atomic_fetch_add(&n_truncs, 1);
		if (tst_rnd(&s) % 2)
			tst_sleep_us(200);
	}
	free(copy);
	free(buf);
	return NULL;
}

/* The work the checks after the run need: pins of both files, a truncate,
 * an eviction. */
static bool pin_evict_enough(void *arg)
{
	struct lpc_stats st;

	lpc_stats(arg, &st);
	return atomic_load(&n_pins) > 0 && atomic_load(&n_tpins) > 0 &&
	       atomic_load(&n_truncs) > 0 && st.evictions > 0;
}

static void run(int mode, double secs)
{
	struct tst_threads th = { 0 };
	struct lpc_stats st;

	atomic_store(&n_pins, 0);
	atomic_store(&n_tpins, 0);
	atomic_store(&n_enomem, 0);
	atomic_store(&n_enxio, 0);
	atomic_store(&n_truncs, 0);
	snprintf(patha, sizeof(patha), "%s/pinev-a-%d", tst_tmpdir(), mode);
	snprintf(patht, sizeof(patht), "%s/pinev-t-%d", tst_tmpdir(), mode);
	stamp_file(patha, TAG_A, 0, APAGES);
	stamp_file(patht, TAG_T, 0, TPAGES);
	cache = tst_cache_create(FRAMES * PS, PS, LPC_IO_SYNC, mode);
	REQUIRE(lpc_file_open(cache, patha, O_RDONLY, 0, &fa) == 0, "open A");
	REQUIRE(lpc_file_open(cache, patht, O_RDWR, 0, &ft) == 0, "open T");
	tst_threads_start(&th, NPIN, pinner, NULL, 0);
	tst_threads_start(&th, 1, truncater, NULL, 0);
	tst_stress_wait_for(secs, pin_evict_enough, cache);
	tst_threads_join(&th);
	lpc_stats(cache, &st);
	printf("  %s: %llu ranges of A and %llu of T pinned and checked, %llu truncates, "
	       "%llu -ENXIO, %llu -ENOMEM; evictions %llu direct_reclaims %llu "
	       "reclaimer_wakeups %llu skipped_held %llu pin_fast %llu pin_slow %llu\n",
	       mode ? "LOCKED" : "lockless", (unsigned long long)n_pins,
	       (unsigned long long)n_tpins, (unsigned long long)n_truncs,
	       (unsigned long long)n_enxio, (unsigned long long)n_enomem,
	       (unsigned long long)st.evictions, (unsigned long long)st.direct_reclaims,
	       (unsigned long long)st.reclaimer_wakeups, (unsigned long long)st.skipped_held,
	       (unsigned long long)st.pin_fast, (unsigned long long)st.pin_slow);
	CHECK(n_pins > 0 && n_tpins > 0, "pins of both files");
	CHECK(n_truncs > 0, "some truncates");
	CHECK(st.evictions > 0, "eviction ran");
	CHECK_EQ(lpc_file_close(fa), 0);
	CHECK_EQ(lpc_file_close(ft), 0);
	/* No pin leaked: destroy would be -EBUSY. */
	CHECK_EQ(tst_frames_allocatable(cache, FRAMES), FRAMES, "every frame free again");
	tst_cache_destroy(cache);
}

int main(int argc, char **argv)
{
	double secs = tst_stress_init(argc, argv, 4);

	run(LPC_LOOKUP_LOCKLESS, secs / 2);
	run(LPC_LOOKUP_LOCKED, secs / 2);
	return tst_finish();
}
