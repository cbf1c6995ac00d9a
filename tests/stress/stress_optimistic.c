/* SPDX-License-Identifier: MIT */
/*
 * stress_optimistic.c - the optimistic read (filemap/optimistic.h, O1-O6)
 * against writers and against removal and reuse: guarantee K.1 of lpc.h.
 *
 * Part 1, torn copies.  A file of NW pages, all cached.  Writer threads pick
 * a page, get it, take its page lock, open a seq write section (the test
 * does what the write path will do, through the internal header), and
 * rewrite the page's three stamps {index, version} - at its start, in its
 * middle and at its end, yielding in between now and then - then close the
 * section and unlock.  Reader threads read whole pages with lpc_pread and
 * look at the three stamps with lpc_page_read, and check that all three
 * agree and name the page: a copy that mixes two versions (no seq re-check,
 * or a writer without a section) fails with "rule OPTIMISTIC-TORN violated".
 *
 * Part 2, reuse.  A small cache (64 frames) and files whose pages outnumber
 * the frames: removers invalidate random ranges of a hot set, churners read
 * cold pages and drop them at once, so frames come back with other
 * identities all the time, while readers lpc_pread and lpc_page_read pages
 * of the hot set and check the null backend's stamp {file id, index} and
 * pattern.  Another page's bytes fail with "rule OPTIMISTIC-REUSED
 * violated".  (A copy of a page removed before its re-check is caught by
 * the debug build's rule OPTIMISTIC-NOT-IN-INDEX, here and in the mutants.)
 *
 * Both parts check that the optimistic path was taken (optimistic_hits) and
 * that it fell back at times (optimistic_fallbacks): a test that never
 * raced would prove nothing.
 *
 * Usage: stress_optimistic [--seed N]; LPC_STRESS_SECONDS (default 4) is the
 * total run time.  Exit: 0 pass, 1 fail, 77 skip.
 */
#include <sched.h>

#include "../common/stress.h"
#include "cache/cache.h"

#define PS 4096u
#define NW 16 /* pages of part 1's file */

struct stamp {
	uint64_t index, version;
};

#define MID (PS / 2)
#define END (PS - sizeof(struct stamp))

struct counts {
	uint64_t reads, page_reads, writes, torn, reused, bad_rc;
};

struct worker {
	int kind; /* part 1: 0 reader, 1 writer; part 2: 0 reader, 1 remover, 2 churner */
	uint64_t rng;
	struct counts n;
	unsigned char *buf, *scratch;
};

static struct lpc_cache *cache;
static struct lpc_file *wfile;

/* ---- part 1 ---- */

static void write_stamp(unsigned char *frame, size_t off, uint64_t index, uint64_t version)
{
	struct stamp s = { index, version };

	memcpy(frame + off, &s, sizeof(s));
}

/* A user's in-place change: lpc_page_lock opens the page's seq write
 * section (lock.c X1), lpc_page_unlock closes it (X2). */
static void rewrite_page(struct worker *w, uint64_t index)
{
	struct lpc_page *p;
	unsigned char *frame;
	uint64_t version;
	struct stamp old;

	if (lpc_page_get(wfile, index, 0, &p)) {
		w->n.bad_rc++;
		return;
	}
	lpc_page_lock(p);
	frame = lpc_page_data(p);
	memcpy(&old, frame, sizeof(old));
	version = old.version + 1;
	write_stamp(frame, 0, index, version);
	if ((w->rng & 3) == 0)
		sched_yield();
	write_stamp(frame, MID, index, version);
	if ((w->rng & 12) == 0)
		sched_yield();
	write_stamp(frame, END, index, version);
	lpc_page_unlock(p);
	lpc_page_put(p);
	w->n.writes++;
}

struct three {
	struct stamp s[3];
};

static void get_three(const void *data, size_t len, void *arg)
{
	struct three *t = arg;
	const unsigned char *d = data;

	(void)len;
	memcpy(&t->s[0], d, sizeof(struct stamp));
	memcpy(&t->s[1], d + MID, sizeof(struct stamp));
	memcpy(&t->s[2], d + END, sizeof(struct stamp));
}

static void check_three(struct worker *w, const struct stamp *s, uint64_t index, const char *how)
{
	if (s[0].index == index && s[1].index == index && s[2].index == index &&
	    s[0].version == s[1].version && s[1].version == s[2].version)
		return;
	if (w->n.torn++ < 5)
		fprintf(stderr,
			"lpc test: rule OPTIMISTIC-TORN violated: %s of page %" PRIu64
			" returned stamps {%" PRIu64 ",%" PRIu64 "} {%" PRIu64 ",%" PRIu64
			"} {%" PRIu64 ",%" PRIu64 "}\n",
			how, index, s[0].index, s[0].version, s[1].index, s[1].version, s[2].index,
			s[2].version);
}

static void *part1_main(void *arg)
{
	struct worker *w = arg;

	while (!tst_stopping()) {
		uint64_t r = tst_rnd(&w->rng), index = r % NW;

		if (w->kind == 1) {
			rewrite_page(w, index);
			continue;
		}
		if ((r >> 32) & 1) {
			ssize_t n = lpc_pread(wfile, w->buf, PS, index * PS);
			struct stamp s[3];

			w->n.reads++;
			if (n != PS) {
				w->n.bad_rc++;
				continue;
			}
			memcpy(&s[0], w->buf, sizeof(s[0]));
			memcpy(&s[1], w->buf + MID, sizeof(s[1]));
			memcpy(&s[2], w->buf + END, sizeof(s[2]));
			check_three(w, s, index, "lpc_pread");
		} else {
			struct three t;

			w->n.page_reads++;
			if (lpc_page_read(wfile, index, 0, get_three, &t)) {
				w->n.bad_rc++;
				continue;
			}
			check_three(w, t.s, index, "lpc_page_read");
		}
	}
	return NULL;
}

static void sum(struct worker *ws, unsigned nw, struct counts *tot)
{
	memset(tot, 0, sizeof(*tot));
	for (unsigned i = 0; i < nw; i++) {
		tot->reads += ws[i].n.reads;
		tot->page_reads += ws[i].n.page_reads;
		tot->writes += ws[i].n.writes;
		tot->torn += ws[i].n.torn;
		tot->reused += ws[i].n.reused;
		tot->bad_rc += ws[i].n.bad_rc;
	}
}

static struct worker *workers(unsigned nw, const int *kinds, uint64_t seed)
{
	struct worker *ws = calloc(nw, sizeof(*ws));

	REQUIRE(ws);
	for (unsigned i = 0; i < nw; i++) {
		ws[i].kind = kinds[i];
		ws[i].rng = seed + 0x1000 * (i + 1);
		ws[i].buf = aligned_alloc(4096, PS);
		ws[i].scratch = malloc(PS);
		REQUIRE(ws[i].buf && ws[i].scratch);
	}
	return ws;
}

static void part1(double seconds, uint64_t seed)
{
	static const int kinds[] = { 0, 0, 0, 1, 1 };
	unsigned nw = sizeof(kinds) / sizeof(kinds[0]);
	struct tst_threads th = { 0 };
	struct counts tot;
	struct lpc_stats st;
	struct worker *ws;

	cache = tst_cache_create(64 * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	wfile = tst_stress_file(cache, NW * PS, NULL, "opt-torn");
	/* Version 0 of every page: three stamps that agree. */
	for (uint64_t i = 0; i < NW; i++) {
		struct lpc_page *p;

		REQUIRE(lpc_page_get(wfile, i, 0, &p) == 0);
		lpc_page_lock(p);
		memset(lpc_page_data(p), 0, PS);
		write_stamp(lpc_page_data(p), 0, i, 0);
		write_stamp(lpc_page_data(p), MID, i, 0);
		write_stamp(lpc_page_data(p), END, i, 0);
		lpc_page_unlock(p);
		lpc_page_put(p);
	}
	ws = workers(nw, kinds, seed);
	tst_threads_start(&th, nw, part1_main, ws, sizeof(*ws));
	tst_stress_wait(seconds);
	tst_threads_join(&th);
	sum(ws, nw, &tot);
	lpc_stats(cache, &st);
	printf("part 1 (writers): %" PRIu64 " preads, %" PRIu64 " page reads, %" PRIu64
	       " writes; optimistic hits %" PRIu64 ", fallbacks %" PRIu64 "\n",
	       tot.reads, tot.page_reads, tot.writes, st.optimistic_hits, st.optimistic_fallbacks);
	CHECK_EQ(tot.torn, 0, "torn copies returned");
	CHECK_EQ(tot.bad_rc, 0, "unexpected return codes");
	CHECK(st.optimistic_hits > 0, "no optimistic hit");
	CHECK(tot.writes > 0 && tot.reads + tot.page_reads > 0, "nothing raced");
	CHECK_EQ(st.lookups, st.hits + st.misses);
	for (unsigned i = 0; i < nw; i++) {
		free(ws[i].buf);
		free(ws[i].scratch);
	}
	free(ws);
	CHECK_EQ(lpc_file_close(wfile), 0);
	CHECK_EQ(lpc_cache_destroy(cache), 0);
}

/* ---- part 2 ---- */

#define NFILES 3
#define HOT 8
#define NFRAMES 64

static const uint64_t file_pages[NFILES] = { 300, 200, 500 };
static struct lpc_file *files[NFILES];
static uint64_t ids[NFILES], sizes[NFILES];

struct head {
	uint64_t id, index;
	unsigned char rest[48];
};

static void get_head(const void *data, size_t len, void *arg)
{
	(void)len;
	memcpy(arg, data, sizeof(struct head));
}

static void reused(struct worker *w, int fi, uint64_t index, const char *how, const void *got)
{
	uint64_t s[2];

	memcpy(s, got, sizeof(s));
	if (w->n.reused++ < 5)
		fprintf(stderr,
			"lpc test: rule OPTIMISTIC-REUSED violated: %s of file %d page %" PRIu64
			" returned stamp {%" PRIu64 ", %" PRIu64 "} (want {%" PRIu64 ", %" PRIu64
			"}) or wrong bytes\n",
			how, fi, index, s[0], s[1], ids[fi], index);
}

static void *part2_main(void *arg)
{
	struct worker *w = arg;

	while (!tst_stopping()) {
		uint64_t r = tst_rnd(&w->rng);
		int fi = (int)(r % NFILES);
		uint64_t index = w->kind == 2 ? HOT + (r >> 8) % (file_pages[fi] - HOT) :
						(r >> 8) % HOT;
		int rc;

		switch (w->kind) {
		case 0:
			if ((r >> 40) & 1) {
				ssize_t n = lpc_pread(files[fi], w->buf, PS, index * PS);

				w->n.reads++;
				if (n != PS) {
					/* -ENOMEM cannot happen: pread reads around. */
					w->n.bad_rc++;
					break;
				}
				if (tst_null_check_page(ids[fi], index, PS, sizes[fi], w->buf,
							w->scratch) != 0)
					reused(w, fi, index, "lpc_pread", w->buf);
			} else {
				struct head h;

				w->n.page_reads++;
				rc = lpc_page_read(files[fi], index, 0, get_head, &h);
				if (rc == -ENOMEM)
					break; /* every frame held or in transit: allowed */
				if (rc) {
					w->n.bad_rc++;
					break;
				}
				tst_null_expect(ids[fi], index, PS, sizes[fi], w->scratch);
				if (memcmp(&h, w->scratch, sizeof(h)))
					reused(w, fi, index, "lpc_page_read", &h);
			}
			break;
		case 1:
			rc = lpc_invalidate(files[fi], (r >> 8) % HOT * PS, (1 + (r >> 20) % 4) * PS);
			if (rc < 0)
				w->n.bad_rc++;
			tst_sleep_us(rc > 0 ? 20 : 5);
			break;
		case 2: {
			struct lpc_page *p;

			rc = lpc_page_get(files[fi], index, 0, &p);
			if (rc == 0) {
				lpc_page_put(p);
				lpc_invalidate(files[fi], index * PS, PS);
				tst_sleep_us(30);
			} else if (rc != -ENOMEM) {
				w->n.bad_rc++;
			}
			break;
		}
		}
	}
	return NULL;
}

static void part2(double seconds, uint64_t seed)
{
	static const int kinds[] = { 0, 0, 1, 2 };
	unsigned nw = sizeof(kinds) / sizeof(kinds[0]);
	struct tst_threads th = { 0 };
	struct counts tot;
	struct lpc_stats st;
	struct worker *ws;

	cache = tst_cache_create(NFRAMES * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	for (int i = 0; i < NFILES; i++) {
		sizes[i] = file_pages[i] * PS;
		files[i] = tst_stress_file(cache, sizes[i], &ids[i], "opt-reuse-%d", i);
	}
	ws = workers(nw, kinds, seed ^ 0x77);
	tst_threads_start(&th, nw, part2_main, ws, sizeof(*ws));
	tst_stress_wait(seconds);
	tst_threads_join(&th);
	sum(ws, nw, &tot);
	lpc_stats(cache, &st);
	printf("part 2 (reuse): %" PRIu64 " preads, %" PRIu64 " page reads; reads %" PRIu64
	       ", invalidated %" PRIu64 "; optimistic hits %" PRIu64 ", fallbacks %" PRIu64 "\n",
	       tot.reads, tot.page_reads, st.reads, st.invalidated, st.optimistic_hits,
	       st.optimistic_fallbacks);
	CHECK_EQ(tot.reused, 0, "another page's bytes returned");
	CHECK_EQ(tot.bad_rc, 0, "unexpected return codes");
	CHECK(st.optimistic_hits > 0, "no optimistic hit");
	CHECK(st.optimistic_fallbacks > 0, "no fallback: nothing raced");
	CHECK(st.reads > 2 * NFRAMES, "too few reads (%" PRIu64 ") to recycle frames", st.reads);
	for (unsigned i = 0; i < nw; i++) {
		free(ws[i].buf);
		free(ws[i].scratch);
	}
	free(ws);
	for (int i = 0; i < NFILES; i++)
		CHECK_EQ(lpc_file_close(files[i]), 0);
	CHECK_EQ(lpc_cache_destroy(cache), 0);
}

int main(int argc, char **argv)
{
	double secs = tst_stress_init(argc, argv, 4.0);

	part1(secs / 2, tst_seed);
	part2(secs / 2, tst_seed);
	return tst_finish();
}
