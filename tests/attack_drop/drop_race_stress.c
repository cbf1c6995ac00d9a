/* SPDX-License-Identifier: MIT */
/*
 * drop_race_stress.c - drop-behind racing everything that could lose or
 * stale data.  A file of 8x the cache on a real disk backend (sync; uring
 * with DRS_IO=uring), 16-page readahead windows so that streams hit their
 * markers and drop behind them all the time.  Every 8-byte word of the
 * file is a stamp (position, generation): a reader that sees a word with
 * the wrong position, or a generation older than the one the word's last
 * lpc_pwrite (or write pin) published before the read began, has read
 * stale or misplaced data.
 *
 * Threads:
 *   - 2 scanners: lpc_pread sequentially from 0 to the end in calls of
 *     4 KiB, 12 KiB + 8 or 64 KiB (the bulk-read path and the streams that
 *     drop), checking every word;
 *   - 2 writers, each owning every 8th page (offsets 1 and 5): whole-page
 *     and partial lpc_pwrite, and write pins (lpc_pin LPC_PIN_WRITE) of one
 *     page, publishing the word generations after each call returns;
 *   - a "holder": lpc_page_get, lpc_pin (read) of up to 8 pages,
 *     lpc_page_get_batch and an lpc_stream over pages just behind a
 *     scanner, checking the bytes while it holds them;
 *   - a random reader (lpc_pread of single pages, lpc_page_read);
 *   - fsync, invalidate (random small ranges) and a truncate thread that
 *     cuts and regrows the last 64 pages (which nobody else writes) and
 *     checks that the regrown tail reads zeros.
 * At the end: lpc_fsync, and the file read with a fresh kernel descriptor
 * must hold every word's last published generation (a dirty page a drop
 * took would show as an older one); then every page is invalidated, the
 * file closed, and every frame must be free (lpc_pool_census, frames_free).
 *
 * Usage: drop_race_stress [--seed N]; DRS_SECONDS (default 6) per lookup
 * mode; DRS_MODE=lockless|locked|both (default both).
 * Exit: 0 pass, 1 fail.
 */
#include <pthread.h>
#include <sched.h>

#include "../common/write_test.h"
#include "cache/cache.h"
#include "filemap/filemap.h"
#include "page/pool.h"

#define PS 4096u
#define WPP (PS / 8)       /* words per page */
#define FRAMES 256u
#define PAGES (8u * FRAMES) /* the file: 8x the cache */
#define TAIL 64u           /* the truncate thread's zone: the last pages */
#define LOW (PAGES - TAIL)

static struct lpc_cache *g_c;
static struct lpc_file *g_f;
static char g_path[600];
static _Atomic bool g_stop;
static _Atomic unsigned g_gen[PAGES * WPP]; /* published generation of each word */
static _Atomic uint64_t g_reads, g_writes, g_bad;

static uint64_t stamp(uint64_t pos, uint64_t gen)
{
	return (1ull << 63) | (gen << 40) | (pos >> 3);
}

/* Word w read at byte pos: its position right and its generation not older
 * than min_gen.  Words of the truncate zone may also be 0 (cut and regrown). */
static bool word_ok(uint64_t pos, uint64_t w, unsigned min_gen)
{
	if (pos >= (uint64_t)LOW * PS && w == 0)
		return true;
	if (!(w >> 63) || (w & ((1ull << 40) - 1)) != (pos >> 3))
		return false;
	return ((w >> 40) & 0x7fffff) >= min_gen;
}

static void report_bad(const char *who, uint64_t pos, uint64_t w, unsigned min_gen)
{
	if (atomic_fetch_add(&g_bad, 1) < 10)
		fprintf(stderr,
			"FAIL %s: word at %" PRIu64 " (page %" PRIu64 ") = %016" PRIx64
			": position %" PRIu64 " gen %" PRIu64 ", want position %" PRIu64
			" gen >= %u\n",
			who, pos, pos / PS, w, (uint64_t)((w & ((1ull << 40) - 1)) << 3),
			(uint64_t)((w >> 40) & 0x7fffff),
			pos, min_gen);
}

/* Snapshot the published generations of [off, off + len) (word aligned). */
static void snap(uint64_t off, size_t len, unsigned *out)
{
	for (size_t i = 0; i < len / 8; i++)
		out[i] = atomic_load_explicit(&g_gen[off / 8 + i], memory_order_acquire);
}

static void check_buf(const char *who, uint64_t off, const void *buf, size_t len,
		      const unsigned *min)
{
	const uint64_t *w = buf;

	for (size_t i = 0; i < len / 8; i++)
		if (!word_ok(off + 8 * i, w[i], min[i]))
			report_bad(who, off + 8 * i, w[i], min[i]);
}

/* ---- scanners ---- */

static void *scanner(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	static const size_t sizes[] = { PS, 3 * PS + 8, 16 * PS };
	size_t chunk = sizes[id % 3];
	unsigned char *buf = malloc(16 * PS);
	unsigned *min = malloc(16 * WPP * sizeof(unsigned));
	unsigned pass = 0;

	while (!atomic_load(&g_stop)) {
		uint64_t off = 0;

		while (off < (uint64_t)PAGES * PS && !atomic_load(&g_stop)) {
			size_t len = chunk;
			ssize_t r;

			if (off + len > (uint64_t)PAGES * PS)
				len = (size_t)((uint64_t)PAGES * PS - off);
			snap(off, len, min);
			r = lpc_pread(g_f, buf, len, off);
			if (r < 0) {
				if (atomic_fetch_add(&g_bad, 1) < 10)
					fprintf(stderr, "FAIL scanner: lpc_pread(%" PRIu64 ") = %zd\n", off,
						r);
				break;
			}
			check_buf("scanner", off, buf, (size_t)r & ~(size_t)7, min);
			atomic_fetch_add_explicit(&g_reads, 1, memory_order_relaxed);
			if ((size_t)r < len) /* the truncate zone cut: on at its end */
				off += len;
			else
				off += (size_t)r;
		}
		pass++;
		/* Every other pass, the next scanner changes its call size. */
		chunk = sizes[(id + pass) % 3];
	}
	free(buf);
	free(min);
	return NULL;
}

/* ---- writers ---- */

static unsigned g_wgen[PAGES]; /* per page, its writer's own */

static void *writer(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	uint64_t rng = tst_seed ^ (id * 0x1234567);
	uint64_t buf[WPP];

	while (!atomic_load(&g_stop)) {
		uint64_t page = (tst_rnd(&rng) % (LOW / 8)) * 8 + (id ? 5 : 1);
		unsigned gen = ++g_wgen[page];
		unsigned kind = (unsigned)(tst_rnd(&rng) % 4);
		size_t a = 0, b = WPP;

		if (kind == 1 || kind == 2) { /* partial */
			a = (size_t)(tst_rnd(&rng) % WPP);
			b = a + 1 + (size_t)(tst_rnd(&rng) % (WPP - a));
		}
		for (size_t i = a; i < b; i++)
			buf[i] = stamp(page * PS + 8 * i, gen);
		if (kind == 3) { /* a write pin of the page */
			struct lpc_page *pg[1];
			int n = lpc_pin(g_f, page * PS, PS, LPC_PIN_WRITE, pg, 1);

			if (n != 1) {
				if (atomic_fetch_add(&g_bad, 1) < 10)
					fprintf(stderr, "FAIL writer: lpc_pin(W) = %d\n", n);
				continue;
			}
			memcpy(lpc_page_data(pg[0]), buf, PS);
			lpc_unpin(pg, 1, LPC_PIN_WRITE);
		} else {
			ssize_t r = lpc_pwrite(g_f, buf + a, (b - a) * 8, page * PS + 8 * a);

			if (r != (ssize_t)((b - a) * 8)) {
				if (atomic_fetch_add(&g_bad, 1) < 10)
					fprintf(stderr, "FAIL writer: lpc_pwrite = %zd\n", r);
				continue;
			}
		}
		for (size_t i = a; i < b; i++)
			atomic_store_explicit(&g_gen[page * WPP + i], gen, memory_order_release);
		atomic_fetch_add_explicit(&g_writes, 1, memory_order_relaxed);
		if ((tst_rnd(&rng) & 15) == 0)
			sched_yield();
	}
	return NULL;
}

/* ---- holders: page refs, pins, batches, streams ---- */

static void check_page(const char *who, uint64_t index, const void *data, const unsigned *min)
{
	/* Writers change owned pages under us (a held page is not stable):
	 * only the pages nobody writes are checked word by word here; the
	 * owned ones get their position checked. */
	const uint64_t *w = data;
	bool owned = (index % 8 == 1 || index % 8 == 5) && index < LOW;

#if defined(__SANITIZE_THREAD__)
	/* A held page's words race with its writer's copy by design (lpc_page_get
	 * gives no stability against writers): TSan would report this test. */
	if (owned)
		return;
#endif
	for (size_t i = 0; i < WPP; i++) {
		uint64_t pos = index * PS + 8 * i;

		if (owned) {
			if (!word_ok(pos, w[i], 0))
				report_bad(who, pos, w[i], 0);
		} else if (!word_ok(pos, w[i], min[i])) {
			report_bad(who, pos, w[i], min[i]);
		}
	}
}

/* lpc_page_read's fn may see a torn view: it copies, and the copy is
 * checked only when lpc_page_read returns 0 (validated). */
static void copy_fn(const void *data, size_t len, void *arg)
{
	memcpy(arg, data, len);
}

static void *holder(void *arg)
{
	uint64_t rng = tst_seed ^ 0xabcdef;
	unsigned min[8 * WPP];
	(void)arg;

	while (!atomic_load(&g_stop)) {
		uint64_t index = tst_rnd(&rng) % (LOW - 8);
		unsigned what = (unsigned)(tst_rnd(&rng) % 4);

		snap(index * PS, 8 * PS, min);
		if (what == 0) {
			struct lpc_page *p;

			if (lpc_page_get(g_f, index, 0, &p) == 0) {
				check_page("page_get", index, lpc_page_data(p), min);
				sched_yield(); /* a scanner may pass and drop meanwhile */
				check_page("page_get (held)", index, lpc_page_data(p), min);
				lpc_page_put(p);
			}
		} else if (what == 1) {
			struct lpc_page *pg[8];
			int n = lpc_pin(g_f, index * PS, 8 * PS, LPC_PIN_READ, pg, 8);

			for (int i = 0; i < n; i++)
				check_page("pin", index + (uint64_t)i, lpc_page_data(pg[i]), min + i * WPP);
			sched_yield();
			for (int i = 0; i < n; i++)
				check_page("pin (held)", index + (uint64_t)i, lpc_page_data(pg[i]),
					   min + i * WPP);
			if (n > 0)
				lpc_unpin(pg, (unsigned)n, LPC_PIN_READ);
		} else if (what == 2) {
			uint64_t idx[8];
			struct lpc_page *pg[8];
			int errs[8];
			int got;

			for (int i = 0; i < 8; i++)
				idx[i] = index + (uint64_t)i;
			got = lpc_page_get_batch(g_f, idx, 8, 0, pg, errs);
			(void)got;
			sched_yield();
			for (int i = 0; i < 8; i++)
				if (!errs[i] && pg[i]) {
					check_page("batch", idx[i], lpc_page_data(pg[i]), min + i * WPP);
					lpc_page_put(pg[i]);
				}
		} else {
			uint64_t idx[8];
			struct lpc_stream_opts o = { .indices = idx, .n = 8, .max_distance = 8 };
			struct lpc_stream *s;
			struct lpc_page *p;
			int k = 0;

			for (int i = 0; i < 8; i++)
				idx[i] = index + (uint64_t)i;
			if (lpc_stream_open(g_f, NULL, NULL, &o, &s) == 0) {
				while (lpc_stream_next(s, &p, NULL) == 1) {
					check_page("stream", idx[k], lpc_page_data(p), min + k * WPP);
					lpc_page_put(p);
					k++;
				}
				lpc_stream_close(s);
			}
		}
	}
	return NULL;
}

static void *random_reader(void *arg)
{
	uint64_t rng = tst_seed ^ 0x777;
	unsigned char buf[PS];
	unsigned min[WPP];
	(void)arg;

	while (!atomic_load(&g_stop)) {
		uint64_t index = tst_rnd(&rng) % LOW;

		snap(index * PS, PS, min);
		if (tst_rnd(&rng) & 1) {
			if (lpc_pread(g_f, buf, PS, index * PS) == PS)
				check_buf("random pread", index * PS, buf, PS, min);
		} else {
			if (lpc_page_read(g_f, index, 0, copy_fn, buf) == 0)
				check_buf("page_read", index * PS, buf, PS, min);
		}
	}
	return NULL;
}

/* ---- fsync, invalidate, truncate ---- */

static void *syncer(void *arg)
{
	uint64_t rng = tst_seed ^ 0x5151;
	(void)arg;

	while (!atomic_load(&g_stop)) {
		if (tst_rnd(&rng) & 1) {
			int rc = lpc_fsync(g_f);

			if (rc && atomic_fetch_add(&g_bad, 1) < 10)
				fprintf(stderr, "FAIL lpc_fsync = %d\n", rc);
		} else {
			uint64_t i = tst_rnd(&rng) % LOW;

			(void)lpc_invalidate(g_f, i * PS, 16 * PS);
		}
		tst_sleep_us(200);
	}
	return NULL;
}

/* The last TAIL pages: cut to a random size, regrown, checked to read zeros
 * past the cut, then written back with stamps of generation 1. */
static void *trunc_thread(void *arg)
{
	uint64_t rng = tst_seed ^ 0x7777;
	uint64_t buf[WPP];
	(void)arg;

	while (!atomic_load(&g_stop)) {
		uint64_t cut = (uint64_t)LOW * PS + (tst_rnd(&rng) % (TAIL * PS)) / 8 * 8;
		int rc = lpc_truncate(g_f, cut);

		if (rc) {
			if (atomic_fetch_add(&g_bad, 1) < 10)
				fprintf(stderr, "FAIL lpc_truncate(%" PRIu64 ") = %d\n", cut, rc);
			break;
		}
		rc = lpc_truncate(g_f, (uint64_t)PAGES * PS);
		if (rc) {
			if (atomic_fetch_add(&g_bad, 1) < 10)
				fprintf(stderr, "FAIL lpc_truncate(grow) = %d\n", rc);
			break;
		}
		for (uint64_t pos = cut; pos < (uint64_t)PAGES * PS; pos += 8) {
			uint64_t w;

			if (lpc_pread(g_f, &w, 8, pos) != 8 || w != 0) {
				if (atomic_fetch_add(&g_bad, 1) < 10)
					fprintf(stderr,
						"FAIL truncate: word at %" PRIu64 " past the cut %" PRIu64
						" reads %016" PRIx64 "\n",
						pos, cut, w);
				break;
			}
			pos += 8 * (tst_rnd(&rng) % 64); /* a sample */
		}
		for (uint64_t p = cut / PS; p < PAGES; p++) {
			for (size_t i = 0; i < WPP; i++)
				buf[i] = stamp(p * PS + 8 * i, 1);
			if (p * PS < cut) {
				size_t from = (size_t)(cut - p * PS);

				(void)lpc_pwrite(g_f, (char *)buf + from, PS - from, cut);
			} else {
				(void)lpc_pwrite(g_f, buf, PS, p * PS);
			}
		}
		tst_sleep_us(500);
	}
	return NULL;
}

static void make_file(void)
{
	const char *dir = tst_tmpdir();
	uint64_t *buf = malloc(64 * PS);
	int fd;

	REQUIRE(dir);
	snprintf(g_path, sizeof(g_path), "%s/dropfile", dir);
	fd = open(g_path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	REQUIRE(fd >= 0);
	for (uint64_t p = 0; p < PAGES; p += 64) {
		for (size_t i = 0; i < 64 * WPP; i++)
			buf[i] = stamp(p * PS + 8 * i, 0);
		REQUIRE(pwrite(fd, buf, 64 * PS, (off_t)(p * PS)) == (ssize_t)(64 * PS));
	}
	close(fd);
	free(buf);
}

static void run(int mode, double secs)
{
	struct lpc_config cfg;
	pthread_t th[9];
	unsigned nth = 0;
	struct lpc_stats st;
	const char *io = getenv("DRS_IO");
	int rc;

	memset(g_gen, 0, sizeof(g_gen));
	memset(g_wgen, 0, sizeof(g_wgen));
	make_file();
	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)FRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = io && !strcmp(io, "uring") ? LPC_IO_URING : LPC_IO_SYNC;
	cfg.lookup_mode = mode;
	cfg.readahead_max_kb = 16 * PS / 1024;
	cfg.dirty_expire_ms = 20;
	if (getenv("DRS_CLOCK"))
		cfg.reclaim_policy = LPC_RECLAIM_CLOCK;
	rc = lpc_cache_create(&cfg, &g_c);
	REQUIRE(rc == 0, "lpc_cache_create = %d", rc);
	g_f = tst_file_open(g_c, g_path, O_RDWR);
	atomic_store(&g_stop, false);
	atomic_store(&g_bad, 0);
	pthread_create(&th[nth++], NULL, scanner, (void *)0);
	pthread_create(&th[nth++], NULL, scanner, (void *)1);
	pthread_create(&th[nth++], NULL, writer, (void *)0);
	pthread_create(&th[nth++], NULL, writer, (void *)1);
	pthread_create(&th[nth++], NULL, holder, NULL);
	pthread_create(&th[nth++], NULL, random_reader, NULL);
	pthread_create(&th[nth++], NULL, syncer, NULL);
	pthread_create(&th[nth++], NULL, trunc_thread, NULL);
	tst_sleep_us((unsigned)(secs * 1e6));
	atomic_store(&g_stop, true);
	for (unsigned i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	lpc_stats(g_c, &st);
	printf("  %s: %" PRIu64 " reads, %" PRIu64 " writes, ra_dropped %" PRIu64
	       ", evictions %" PRIu64 ", read_pages %" PRIu64 ", bad %" PRIu64 "\n",
	       mode == LPC_LOOKUP_LOCKED ? "LOCKED" : "lockless", atomic_load(&g_reads),
	       atomic_load(&g_writes), st.ra_dropped, st.evictions, st.read_pages,
	       atomic_load(&g_bad));
	CHECK(st.ra_dropped > 0, "drop-behind ran");
	CHECK_EQ(atomic_load(&g_bad), 0, "stale, misplaced or failed reads");

	/* Durability: what every writer published is on the file. */
	CHECK_EQ(lpc_fsync(g_f), 0);
	{
		uint64_t *file = malloc((size_t)PAGES * PS);
		unsigned shown = 0;
		int64_t sz;

		REQUIRE(file);
		sz = tst_kernel_read(g_path, file, (size_t)PAGES * PS);
		CHECK_EQ(sz, (int64_t)PAGES * PS);
		for (uint64_t i = 0; i < (uint64_t)LOW * WPP; i++) {
			uint64_t want = stamp(i * 8, atomic_load(&g_gen[i]));

			if (file[i] != want && shown++ < 5)
				fprintf(stderr,
					"FAIL durability: word at %" PRIu64 " (page %" PRIu64
					") on disk %016" PRIx64 ", last published %016" PRIx64 "\n",
					i * 8, i / WPP, file[i], want);
		}
		CHECK_EQ(shown, 0, "words on disk older than their last write");
		free(file);
	}
	/* Accounting: with everything put, every frame is free again. */
	lpc_ra_quiesce(g_f);
	for (int k = 0; k < 2000 && lpc_file_nrpages(g_f); k++) {
		(void)lpc_invalidate(g_f, 0, 0);
		if (lpc_file_nrpages(g_f))
			tst_sleep_us(1000);
	}
	CHECK_EQ(lpc_file_nrpages(g_f), 0, "pages left after invalidating all");
	CHECK_EQ(lpc_file_close(g_f), 0);
	{
		struct lpc_pool_census cs;
		int crc;

		for (int i = 0; i < 2000 && (crc = lpc_pool_census(&g_c->pool, 0, &cs)) == -EAGAIN;
		     i++)
			tst_sleep_us(1000);
		CHECK_EQ(crc, 0, "frames in transit");
		CHECK_EQ(cs.total, FRAMES, "census: %u shared %u fresh %u private %u pending",
			 cs.shared, cs.fresh, cs.private_frames, cs.pending);
		CHECK_EQ(cs.counted, FRAMES);
		printf("  census: %u shared, %u fresh, %u private, %u pending\n", cs.shared, cs.fresh,
		       cs.private_frames, cs.pending);
		/* Pending frames wait for the reclaimer's drain (a grace period,
		 * and up to 20 ms for more): frames_free comes back whole after. */
		for (int i = 0; i < 2000; i++) {
			lpc_stats(g_c, &st);
			if (st.frames_free == FRAMES)
				break;
			tst_sleep_us(1000);
		}
		CHECK_EQ(st.frames_free, FRAMES, "frames_free at quiescence (2 s after)");
	}
	CHECK_EQ(lpc_cache_destroy(g_c), 0);
}

int main(int argc, char **argv)
{
	const char *m = getenv("DRS_MODE");
	const char *s = getenv("DRS_SECONDS");
	double secs = s ? strtod(s, NULL) : 6.0;

	tst_init(argc, argv, (unsigned)(4 * secs + 120));
	tst_require_tmpdir();
	if (!m || strcmp(m, "locked"))
		run(LPC_LOOKUP_LOCKLESS, secs);
	if (!m || strcmp(m, "lockless"))
		run(LPC_LOOKUP_LOCKED, secs);
	return tst_finish();
}
