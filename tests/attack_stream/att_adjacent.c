/* SPDX-License-Identifier: MIT */
/*
 * att_adjacent.c - "adjacent absent pages ... are read with one I/O".
 *
 * lpc_page_get_batch(3): "adjacent absent pages (in any order in the array)
 * are read with one I/O"; lpc.h for streams: "Adjacent absent pages of the
 * look-ahead are read with one I/O".  slow.h counts the backend's read calls
 * (each holds 2 ms).  A 1024-frame cache (share 256; run_max 256 pages), a
 * cold file, three lists:
 *   a) a batch of the 128 pages 0..127 given as 0,2,4,...,126,1,3,...,127
 *   b) a batch of the 64 pages 0..63 given backwards (one chunk)
 *   c) a stream (max_distance 64) over the 256 pages 511..256, backwards
 * Observed: a) the batch sorts and merges within each chunk of 64 entries
 * only (LPC_BATCH_CHUNK, GB1-GB2): 128 reads of one page for 128 adjacent
 * pages; b) holds (1 read); c) the stream extends its pending run only by
 * the index that follows its end (ST2: index == run_e), so a list in
 * descending order is read one page per I/O: 256 reads, though the look-ahead
 * holds up to 64 adjacent absent pages.  Exit 1 when a) needs more than 2
 * reads or c) more than 32 (its distance starts at 1 and doubles: the first
 * reads are single pages anyway).
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_adjacent
 */
#include "att.h"
#include "slow.h"

#define PS 4096u

int main(void)
{
	char path[512];
	struct lpc_cache *c;
	struct lpc_file *f;
	static uint64_t idx[256];
	static struct lpc_page *pg[256];
	static int errs[256];
	struct lpc_stream *s;
	struct lpc_page *p;
	uint64_t ra, rb, rcs;
	int rc;
	unsigned k = 0;

	att_make_file("f", 1024u * PS, 5, path, sizeof(path));
	c = att_cache(1024u * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 0, 0);
	slow_install(c);
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 1;
	(void)lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM);
	slow.delay_us = 2000;

	for (unsigned i = 0; i < 64; i++) {
		idx[i] = 2 * i;
		idx[64 + i] = 2 * i + 1;
	}
	slow_reset();
	rc = lpc_page_get_batch(f, idx, 128, 0, pg, errs);
	ra = atomic_load(&slow.reads);
	ATT_CHECK(rc == 128, "batch a: %d", rc);
	for (unsigned i = 0; i < 128; i++)
		if (pg[i])
			lpc_page_put(pg[i]);

	for (unsigned i = 0; i < 64; i++)
		idx[i] = 64 + 63 - i + 128;	/* pages 191..128 */
	slow_reset();
	rc = lpc_page_get_batch(f, idx, 64, 0, pg, errs);
	rb = atomic_load(&slow.reads);
	ATT_CHECK(rc == 64, "batch b: %d", rc);
	for (unsigned i = 0; i < 64; i++)
		if (pg[i])
			lpc_page_put(pg[i]);

	for (unsigned i = 0; i < 256; i++)
		idx[i] = 511 - i;
	slow_reset();
	rc = lpc_stream_open(f, NULL, NULL,
			     &(struct lpc_stream_opts){ .max_distance = 64, .indices = idx, .n = 256 },
			     &s);
	ATT_CHECK(rc == 0, "open");
	while ((rc = lpc_stream_next(s, &p, NULL)) == 1) {
		ATT_CHECK(att_bad_word(lpc_page_data(p), PS, idx[k] * PS, 5) < 0, "bytes %u", k);
		lpc_page_put(p);
		k++;
	}
	lpc_stream_close(s);
	rcs = atomic_load(&slow.reads);
	ATT_CHECK(k == 256, "stream: %u entries", k);
	/* d) for contrast, not checked: the same stream forwards (pages 512..767) */
	for (unsigned i = 0; i < 256; i++)
		idx[i] = 512 + i;
	slow_reset();
	k = 0;
	rc = lpc_stream_open(f, NULL, NULL,
			     &(struct lpc_stream_opts){ .max_distance = 64, .indices = idx, .n = 256 },
			     &s);
	while (rc == 0 && lpc_stream_next(s, &p, NULL) == 1) {
		lpc_page_put(p);
		k++;
	}
	lpc_stream_close(s);
	printf("d) stream, 256 adjacent pages forwards: %" PRIu64 " reads (%u entries)\n",
	       (uint64_t)atomic_load(&slow.reads), k);
	printf("a) batch, 128 adjacent pages interleaved: %" PRIu64 " reads\n"
	       "b) batch, 64 adjacent pages backwards: %" PRIu64 " reads\n"
	       "c) stream, 256 adjacent pages backwards: %" PRIu64 " reads\n",
	       ra, rb, rcs);
	ATT_CHECK(ra <= 2, "a) %" PRIu64 " reads for 128 adjacent absent pages", ra);
	ATT_CHECK(rb <= 1, "b) %" PRIu64 " reads for 64 adjacent absent pages", rb);
	ATT_CHECK(rcs <= 32, "c) %" PRIu64 " reads for 256 adjacent pages in a 64-deep look-ahead",
		  rcs);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
