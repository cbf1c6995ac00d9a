/* SPDX-License-Identifier: MIT */
/*
 * att_depth.c - how many reads one read stream really has at the device.
 *
 * lpc.h ("Many misses in flight from one thread") and lpc_stream_open(3)
 * say the stream looks up to max_distance entries ahead and that "the reads
 * go to the device at once through the cache's readahead threads".  Here a
 * backend wrapper (slow.h) delays every read by 5 ms and counts the reads
 * in flight at once.  One thread walks 256 scattered (never adjacent) cold
 * pages of a file bigger than the cache with a stream (max_distance 64,
 * max_pages 64, within the quarter of a 1024-frame cache), and, for
 * comparison, 256 other cold pages with lpc_pread page by page.
 *
 * Found (reviewed at `stream` 6129d59): the readahead pool took at most
 * LPC_RA_PER_FILE (4) jobs of one file at a time (ra_worker.c Q2) and the
 * consumer read the head itself (Q6), so the peak was 5 on both backends
 * whatever max_distance was.  Since io_uring's threads take a file's jobs
 * in batches (Q2, lpc_io_readv_batch) its peak is the look-ahead (63 of
 * 64); the sync backend reads one run per thread, and its bound of four
 * threads per file plus the consumer's own read is now the contract
 * (lpc.h "Many misses in flight from one thread", lpc_stream_open(3)).
 * Checked, what that contract promises: io_uring, at least 16 reads in
 * flight at once (a quarter of the distance); sync, at most 5 (four
 * threads and the consumer) and at least 4 (the threads do overlap).
 * Exit 1 when either fails.
 * Also checked (held so far): every byte, and that the pages read ahead of the
 * consumer never exceed max_pages (the frame bound), with max_pages 8.
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_depth
 *      (make VARIANT=release for timings without ASan)
 */
#include "att.h"
#include "slow.h"

#define FILE_PAGES 2048u
#define NLIST 256u
#define PS 4096u

static uint64_t list[NLIST], list2[NLIST];

static int run_stream(struct lpc_file *f, const uint64_t *idx, unsigned n, uint32_t maxd,
		      uint32_t maxp, double *secs)
{
	struct lpc_stream_opts o = { .max_distance = maxd, .max_pages = maxp, .indices = idx,
				     .n = n };
	struct lpc_stream *s;
	struct lpc_page *p;
	unsigned got = 0;
	double t0 = slow_secs();
	int rc;

	rc = lpc_stream_open(f, NULL, NULL, &o, &s);
	if (rc) {
		printf("lpc_stream_open: %d\n", rc);
		return -1;
	}
	while ((rc = lpc_stream_next(s, &p, NULL)) != 0) {
		if (rc < 0) {
			ATT_CHECK(0, "entry %u: %d", got, rc);
			got++;
			continue;
		}
		atomic_fetch_add(&slow.taken, 1);
		ATT_CHECK(att_bad_word(lpc_page_data(p), PS, idx[got] * PS, 7) < 0,
			  "entry %u (page %" PRIu64 "): wrong bytes", got, idx[got]);
		lpc_page_put(p);
		got++;
	}
	lpc_stream_close(s);
	*secs = slow_secs() - t0;
	ATT_CHECK(got == n, "stream handed out %u entries of %u", got, n);
	return 0;
}

int main(void)
{
	char path[512];
	static char buf[PS];
	int backends[2] = { LPC_IO_SYNC, LPC_IO_URING };
	int peaks[2] = { 0, 0 };

	att_make_file("f", (uint64_t)FILE_PAGES * PS, 7, path, sizeof(path));
	/* 512 distinct pages, two apart at least, in a scattered order. */
	for (unsigned i = 0; i < NLIST; i++) {
		list[i] = ((uint64_t)i * 389u % 512u) * 2u;	/* even pages */
		list2[i] = ((uint64_t)i * 389u % 512u) * 2u + 1u; /* odd pages */
	}
	for (int b = 0; b < 2; b++) {
		struct lpc_cache *c = att_cache(1024u * PS, PS, backends[b], LPC_LOOKUP_LOCKLESS,
						0, 0);
		struct lpc_file *f;
		double ts, tp, t0;
		int rc;

		slow_install(c);
		slow.delay_us = 5000;
		rc = lpc_file_open(c, path, O_RDONLY, 0, &f);
		if (rc) {
			printf("open: %d\n", rc);
			return 1;
		}
		(void)lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM);

		slow_reset();
		if (run_stream(f, list, NLIST, 64, 64, &ts))
			return 1;
		int peak = atomic_load(&slow.peak);
		uint64_t reads = atomic_load(&slow.reads);

		slow_reset();
		t0 = slow_secs();
		for (unsigned i = 0; i < NLIST; i++) {
			ssize_t r = lpc_pread(f, buf, PS, list2[i] * PS);

			ATT_CHECK(r == PS, "pread page %" PRIu64 ": %zd", list2[i], r);
			ATT_CHECK(att_bad_word(buf, PS, list2[i] * PS, 7) < 0, "pread bytes");
		}
		tp = slow_secs() - t0;
		printf("%s: stream (max_distance 64): %u pages in %.3f s, %" PRIu64
		       " reads, peak %d in flight; pread page by page: %.3f s (%.1fx)\n",
		       att_backend_name(backends[b]), NLIST, ts, reads, peak, tp, tp / ts);
		peaks[b] = peak;

		/* The frame bound: max_pages 8 on a cold range. */
		(void)lpc_invalidate(f, 0, 0);
		slow_reset();
		if (run_stream(f, list, NLIST, 64, 8, &ts))
			return 1;
		printf("%s: max_pages 8: at most %" PRId64 " pages read ahead of the consumer, "
		       "peak %d in flight\n",
		       att_backend_name(backends[b]), (int64_t)atomic_load(&slow.max_ahead),
		       atomic_load(&slow.peak));
		ATT_CHECK(atomic_load(&slow.max_ahead) <= 8, "frame bound max_pages 8 exceeded");
		lpc_file_close(f);
		lpc_cache_destroy(c);
	}
	ATT_CHECK(peaks[1] >= 16,
		  "uring: one stream with max_distance 64 had at most %d reads in flight "
		  "(want >= 16)", peaks[1]);
	ATT_CHECK(peaks[0] >= 4 && peaks[0] <= 5,
		  "sync: one stream had at most %d reads in flight (the contract: four "
		  "readahead threads per file and the consumer's own, want 4-5)", peaks[0]);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
