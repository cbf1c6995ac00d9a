/* SPDX-License-Identifier: MIT */
/*
 * att_share.c - the frames a batch locks for its reads, against readahead's
 * share (a quarter of the frames).
 *
 * lpc.h: batched gets and streams read "with free frames only, within
 * readahead's share of the cache (a quarter of the frames), so neither ever
 * makes another thread wait for a frame".  Here a 128-frame cache (share:
 * 32) and a backend wrapper (slow.h) that holds every read of file A for
 * 100 ms and counts the pages being read at once.  Thread 1 calls
 * lpc_page_get_batch on 64 adjacent cold pages of A (one chunk, one run).
 * Once A's read is at the device, the main thread gets 80 pages of file B
 * (not slowed) and holds them: 80 + 32 + the pool's reserve fit in 128
 * frames, so within the share B never waits for A's device.
 *
 * Observed: GB2 hands the whole run to lpc_filemap_ra_window, whose Q5
 * reservation is checked once per run (npages < a quarter) and whose run
 * is capped by run_max (1 MiB), not by the share: the batch locks 64 frames
 * (half the cache) in one read; B's gets find no free frame and nothing
 * evictable, wait, and (the batch's GB4 then takes its 64 references)
 * 16 of them fail with -ENOMEM after alloc_wait_ms (1 s).  (GB3 would
 * bypass the share too: the runs Q5 refused are read at once by the caller,
 * with no reservation.)  Exit 1 when more than 32 pages of A were being read
 * at once, or a get of B waited over 50 ms or failed.
 * Then the same with a read stream (max_distance 4096: max_pages is capped to
 * the share): it holds (29 pages at most, B never waits).
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_share
 */
#include "att.h"
#include "slow.h"

#define PS 4096u
#define FRAMES 128u
#define SHARE (FRAMES / 4)
#define NB 80u

static struct lpc_file *fa, *fb;
static uint64_t aidx[64];
static struct lpc_page *apages[64];
static int aerrs[64], arc;
static int use_stream;

static void *t1(void *arg)
{
	(void)arg;
	if (!use_stream) {
		arc = lpc_page_get_batch(fa, aidx, 64, 0, apages, aerrs);
		return NULL;
	}
	struct lpc_stream_opts o = { .max_distance = 4096, .indices = aidx, .n = 64 };
	struct lpc_stream *s;
	struct lpc_page *p;
	int rc;

	arc = 0;
	if (lpc_stream_open(fa, NULL, NULL, &o, &s))
		return NULL;
	while ((rc = lpc_stream_next(s, &p, NULL)) == 1) {
		if (att_bad_word(lpc_page_data(p), PS, aidx[arc] * PS, 3) < 0)
			arc++;
		lpc_page_put(p);
	}
	lpc_stream_close(s);
	return NULL;
}

static void round_(const char *what, const char *pa, const char *pb)
{
	static struct lpc_page *bp[NB];
	pthread_t th;
	double worst = 0;
	unsigned worst_i = 0;
	struct lpc_cache *c;
	struct stat st;

	/* A fresh cache each round: every frame free, none waiting for a
	 * grace period. */
	c = att_cache(FRAMES * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 0, 0);
	slow_install(c);
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pb, O_RDONLY, 0, &fb)) {
		printf("open failed\n");
		exit(1);
	}
	(void)lpc_fadvise(fb, 0, 0, LPC_FADV_RANDOM);
	stat(pa, &st);
	slow.only_id = (uint64_t)st.st_ino;
	slow.delay_us = 100000;
	slow_reset();
	pthread_create(&th, NULL, t1, NULL);
	while (atomic_load(&slow.now) == 0)
		usleep(1000);
	for (unsigned i = 0; i < NB; i++) {
		double t0 = slow_secs(), dt;
		int rc = lpc_page_get(fb, i, 0, &bp[i]);

		dt = slow_secs() - t0;
		if (dt > worst) {
			worst = dt;
			worst_i = i;
		}
		ATT_CHECK(rc == 0, "%s: get of B page %u: %d", what, i, rc);
		if (rc)
			bp[i] = NULL;
	}
	/* B is done: its frames go back before the batch's GB4 needs them. */
	for (unsigned i = 0; i < NB; i++)
		if (bp[i])
			lpc_page_put(bp[i]);
	pthread_join(th, NULL);
	if (!use_stream)
		for (unsigned i = 0; i < 64; i++)
			if (apages[i])
				lpc_page_put(apages[i]);
	printf("%s: %d of 64 pages of A got; at most %" PRId64
	       " pages of A being read at once (share %u); the slowest get of B (its page %u) took %.1f ms\n",
	       what, arc, (int64_t)atomic_load(&slow.pages_peak), SHARE, worst_i, worst * 1e3);
	ATT_CHECK(arc == 64, "%s: A's pages: %d of 64", what, arc);
	ATT_CHECK(atomic_load(&slow.pages_peak) <= SHARE,
		  "%s: %" PRId64 " frames locked by reads at once, share %u", what,
		  (int64_t)atomic_load(&slow.pages_peak), SHARE);
	ATT_CHECK(worst < 0.050, "%s: a demand get of another file waited %.1f ms", what,
		  worst * 1e3);
	lpc_file_close(fa);
	lpc_file_close(fb);
	ATT_CHECK(lpc_cache_destroy(c) == 0, "destroy");
}

int main(void)
{
	char pa[512], pb[512];

	att_make_file("a", 256u * PS, 3, pa, sizeof(pa));
	att_make_file("b", 256u * PS, 4, pb, sizeof(pb));
	for (unsigned i = 0; i < 64; i++)
		aidx[i] = 100 + i;
	use_stream = 0;
	round_("batch", pa, pb);
	use_stream = 1;
	round_("stream", pa, pb);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
