/* SPDX-License-Identifier: MIT */
/*
 * depth_far - how many reads one stream has at the device on io_uring when
 * max_distance is past 64 (0975edb's wording).
 *
 * Contract: lpc.h "Many misses in flight from one thread": "A backend that
 * submits a batch together (io_uring) has the runs of one file taken in
 * batches, each batch in one submission: one stream's look-ahead, up to
 * max_distance runs, is at the device at once."; lpc_stream_open(3): "so
 * the whole look-ahead (up to max_distance runs) can be at the device
 * together".  max_distance may be up to 4096 (lpc_stream_open(3) ERRORS).
 *
 * Steps: tests/attack_stream's slow.h wrapper (every read 5 ms, reads in
 * flight counted); a 16384-frame cache (readahead's quarter: 4096 frames);
 * io_uring; one stream over 1024 scattered single pages (two apart: every
 * page its own run), max_pages = max_distance = D for D in 64, 128, 256,
 * 1024.  Want: the peak in flight at least half of D (the text says all of
 * it).  Exit 1 when a D's peak is under D/2.
 *
 * Seen (int 1907d0f, asan, load ~10 on 2 CPUs; two runs):
 *   uring: max_distance 64, max_pages 64: peak 63 reads in flight
 *   uring: max_distance 128, max_pages 128: peak 125 | 97
 *   uring: max_distance 256, max_pages 256: peak 107 | 128
 *   uring: max_distance 1024, max_pages 1024: peak 120 | 128
 *   FAIL depth_far.c: max_distance 1024: at most 128 reads in flight
 *   DEFECT
 * The cap is LPC_RA_PER_FILE (4) threads x LPC_RUN_BATCH (32) runs a batch
 * (src/filemap/filemap.h; ra_worker.c Q2): io_uring's depth per file is at
 * most 128 reads, not max_distance.  Fix the text (say "up to 128 runs,
 * four batches of 32"), or lift the cap.
 */
#include "../attack_stream/att.h"
#include "../attack_stream/slow.h"

#define FILE_PAGES 4096u
#define NLIST 1024u
#define PS 4096u

static uint64_t list[NLIST];

int main(void)
{
	char path[512];
	unsigned ds[4] = { 64, 128, 256, 1024 };
	int peaks[4];

	att_make_file("f", (uint64_t)FILE_PAGES * PS, 7, path, sizeof(path));
	for (unsigned i = 0; i < NLIST; i++)
		list[i] = ((uint64_t)i * 389u % 2048u) * 2u;
	for (int k = 0; k < 4; k++) {
		struct lpc_cache *c = att_cache(16384u * PS, PS, LPC_IO_URING,
						LPC_LOOKUP_LOCKLESS, 0, 0);
		struct lpc_file *f;
		struct lpc_stream_opts o = { .max_distance = ds[k], .max_pages = ds[k],
					     .indices = list, .n = NLIST };
		struct lpc_stream *s;
		struct lpc_page *p;
		unsigned got = 0;
		int rc;

		slow_install(c);
		slow.delay_us = 5000;
		if (lpc_file_open(c, path, O_RDONLY, 0, &f))
			return 2;
		(void)lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM);
		slow_reset();
		if (lpc_stream_open(f, NULL, NULL, &o, &s))
			return 2;
		while ((rc = lpc_stream_next(s, &p, NULL)) > 0) {
			atomic_fetch_add(&slow.taken, 1);
			ATT_CHECK(att_bad_word(lpc_page_data(p), PS, list[got] * PS, 7) < 0,
				  "entry %u: wrong bytes", got);
			lpc_page_put(p);
			got++;
		}
		ATT_CHECK(rc == 0 && got == NLIST, "stream: rc %d, %u entries", rc, got);
		lpc_stream_close(s);
		peaks[k] = atomic_load(&slow.peak);
		printf("uring: max_distance %u, max_pages %u: peak %d reads in flight, "
		       "%" PRIu64 " reads\n", ds[k], ds[k], peaks[k], atomic_load(&slow.reads));
		/* The text since: "up to max_distance runs and at most 128". */
		unsigned want = (ds[k] < 128 ? ds[k] : 128) / 2;
		ATT_CHECK(peaks[k] >= (int)want,
			  "max_distance %u: at most %d reads in flight (the text: the "
			  "look-ahead up to 128 runs, want >= %u)", ds[k], peaks[k], want);
		lpc_file_close(f);
		lpc_cache_destroy(c);
	}
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
