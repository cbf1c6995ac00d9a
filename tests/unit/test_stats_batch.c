/* SPDX-License-Identifier: MIT */
/*
 * test_stats_batch.c - lpc_stats' batch and stream counters (batches,
 * batch_runs, batch_pages, stream_runs, stream_pages: filemap/stream.c
 * count_run), exactly, on a real file with readahead off (only the batch
 * and the stream read ahead), both lookup modes and both backends (the
 * .sync twin):
 *  - a batch of 32 adjacent cold pages, shuffled (GB0 finds the run across
 *    the array): 1 batch, 1 run, 32 pages, and one read of 32 pages;
 *  - the same batch again, every page cached: 1 batch, no run, no page;
 *  - a batch of two clusters of cold pages (10 and 5) and a cached page: 1
 *    batch, 2 runs, 15 pages;
 *  - a batch of no entries counts nothing;
 *  - a stream over 48 sequential cold pages: its runs read what the
 *    consumer did not read itself (stream_pages <= 48, at least one run,
 *    read_pages 48 in all), and the batch counters do not move.
 *
 * Usage: test_stats_batch [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"

#define PS 4096u
#define FPAGES 400u

static int nfile;

struct delta {
	uint64_t batches, runs, pages, sruns, spages, reads, read_pages;
};

static void diff(const struct lpc_stats *a, const struct lpc_stats *b, struct delta *d)
{
	*d = (struct delta){ .batches = b->batches - a->batches,
			     .runs = b->batch_runs - a->batch_runs,
			     .pages = b->batch_pages - a->batch_pages,
			     .sruns = b->stream_runs - a->stream_runs,
			     .spages = b->stream_pages - a->stream_pages,
			     .reads = b->reads - a->reads,
			     .read_pages = b->read_pages - a->read_pages };
}

/* lpc_stats after a call, with the readahead threads' counts of the reads
 * they made for it in (F.1: exact once they are quiet; a thread counts
 * its read after it unlocked the pages the call waited on): polls, up to
 * 2 s, until reads - s0's is `reads`. */
static void stats_quiet(struct lpc_cache *c, const struct lpc_stats *s0, uint64_t reads,
			struct lpc_stats *out)
{
	for (int i = 0; i < 2000; i++) {
		lpc_stats(c, out);
		if (out->reads - s0->reads >= reads)
			return;
		tst_sleep_us(1000);
	}
}

/* lpc_page_get_batch of idx[0..n), every entry checked, then put. */
static void batch(struct lpc_file *f, const struct tst_expect *e, const uint64_t *idx,
		  unsigned n)
{
	struct lpc_page *pages[64];
	int errs[64];

	REQUIRE(n <= 64);
	CHECK_EQ(lpc_page_get_batch(f, idx, n, 0, pages, errs), (int)n, "batch of %u", n);
	for (unsigned i = 0; i < n; i++) {
		if (!CHECK_EQ(errs[i], 0, "entry %u", i))
			continue;
		CHECK(tst_check_page(e, idx[i], lpc_page_data(pages[i])), "index %" PRIu64,
		      idx[i]);
		lpc_page_put(pages[i]);
	}
}

/* The stream's callback: pages first .. first + n - 1, in order. */
struct seq {
	uint64_t next, end;
};

static int seq_cb(void *arg, uint64_t *index, void **user)
{
	struct seq *q = arg;

	(void)user;
	if (q->next >= q->end)
		return 0;
	*index = q->next++;
	return 1;
}

static void t_counts(int mode)
{
	struct lpc_cache *c;
	struct lpc_file *f;
	struct tst_expect e;
	struct lpc_stats s0, s1;
	struct delta d;
	uint64_t idx[32], two[16];
	char path[600], name[48];
	uint64_t seed = tst_seed + (uint64_t)mode;

	tst_readahead_kb = LPC_READAHEAD_OFF;
	c = tst_cache_create(1024 * PS, PS, LPC_IO_SYNC, mode);
	snprintf(name, sizeof(name), "stb%d", nfile++);
	e = (struct tst_expect){ .backend = LPC_IO_SYNC, .salt = 77 + (uint64_t)nfile,
				 .size = FPAGES * PS, .ps = PS };
	REQUIRE(tst_make_file(name, e.size, e.salt, path, sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = tst_file_open(c, path, O_RDONLY);

	/* 32 adjacent cold pages, 10..41, shuffled. */
	for (unsigned i = 0; i < 32; i++)
		idx[i] = 10 + i;
	for (unsigned i = 31; i > 0; i--) {
		unsigned j = (unsigned)(tst_rnd(&seed) % (i + 1));
		uint64_t x = idx[i];

		idx[i] = idx[j];
		idx[j] = x;
	}
	lpc_stats(c, &s0);
	batch(f, &e, idx, 32);
	stats_quiet(c, &s0, 1, &s1);
	diff(&s0, &s1, &d);
	CHECK_EQ(d.batches, 1, "mode %d: batches", mode);
	CHECK_EQ(d.runs, 1, "mode %d: batch_runs of 32 adjacent cold pages", mode);
	CHECK_EQ(d.pages, 32, "mode %d: batch_pages", mode);
	CHECK_EQ(d.reads, 1, "mode %d: reads", mode);
	CHECK_EQ(d.read_pages, 32, "mode %d: read_pages", mode);
	CHECK_EQ(d.sruns + d.spages, 0, "mode %d: stream counters", mode);

	/* The same, cached. */
	lpc_stats(c, &s0);
	batch(f, &e, idx, 32);
	lpc_stats(c, &s1);
	diff(&s0, &s1, &d);
	CHECK_EQ(d.batches, 1, "mode %d: batches (cached)", mode);
	CHECK_EQ(d.runs, 0, "mode %d: batch_runs (cached)", mode);
	CHECK_EQ(d.pages, 0, "mode %d: batch_pages (cached)", mode);
	CHECK_EQ(d.reads, 0, "mode %d: reads (cached)", mode);

	/* Two clusters, 100..109 and 200..204, and page 10 (cached). */
	for (unsigned i = 0; i < 10; i++)
		two[i] = 100 + i;
	for (unsigned i = 0; i < 5; i++)
		two[10 + i] = 204 - i;
	two[15] = 10;
	lpc_stats(c, &s0);
	batch(f, &e, two, 16);
	stats_quiet(c, &s0, 2, &s1);
	diff(&s0, &s1, &d);
	CHECK_EQ(d.batches, 1, "mode %d: batches (two runs)", mode);
	CHECK_EQ(d.runs, 2, "mode %d: batch_runs (two runs)", mode);
	CHECK_EQ(d.pages, 15, "mode %d: batch_pages (two runs)", mode);
	CHECK_EQ(d.reads, 2, "mode %d: reads (two runs)", mode);
	CHECK_EQ(d.read_pages, 15, "mode %d: read_pages (two runs)", mode);

	/* No entries. */
	lpc_stats(c, &s0);
	CHECK_EQ(lpc_page_get_batch(f, NULL, 0, 0, NULL, NULL), 0);
	lpc_stats(c, &s1);
	diff(&s0, &s1, &d);
	CHECK_EQ(d.batches + d.runs + d.pages, 0, "mode %d: an empty batch counted", mode);

	/* A stream over 48 sequential cold pages, 300..347. */
	{
		struct seq q = { .next = 300, .end = 348 };
		struct lpc_stream *st = NULL;
		struct lpc_page *p;
		uint64_t want = 300;
		int rc;

		lpc_stats(c, &s0);
		REQUIRE(lpc_stream_open(f, seq_cb, &q,
					&(struct lpc_stream_opts){ .max_distance = 16 }, &st) == 0);
		while ((rc = lpc_stream_next(st, &p, NULL)) == 1) {
			CHECK(tst_check_page(&e, want, lpc_page_data(p)), "stream page %" PRIu64,
			      want);
			want++;
			lpc_page_put(p);
		}
		CHECK_EQ(rc, 0, "mode %d: the stream's end", mode);
		CHECK_EQ(want, 348, "mode %d: pages the stream handed out", mode);
		lpc_stream_close(st);
		for (int i = 0; i < 2000; i++) {
			lpc_stats(c, &s1);
			if (s1.read_pages - s0.read_pages >= 48)
				break;
			tst_sleep_us(1000);
		}
		diff(&s0, &s1, &d);
		CHECK(d.sruns >= 1 && d.sruns <= d.spages && d.spages <= 48,
		      "mode %d: stream_runs %" PRIu64 " stream_pages %" PRIu64, mode, d.sruns,
		      d.spages);
		CHECK_EQ(d.read_pages, 48, "mode %d: read_pages (stream)", mode);
		CHECK_EQ(d.batches + d.runs + d.pages, 0, "mode %d: the stream counted batches",
			 mode);
	}
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	TST_RUN(t_counts(LPC_LOOKUP_LOCKLESS));
	TST_RUN(t_counts(LPC_LOOKUP_LOCKED));
	return tst_finish();
}
