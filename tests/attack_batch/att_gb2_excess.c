/* SPDX-License-Identifier: MIT */
/*
 * att_gb2_excess.c - GB2 pulls more later pages into a run than Q5's
 * window takes; the excess is marked DONE and falls to GB4, one page per
 * read: a plain sorted array of cold pages is read in 66 reads, 64 of
 * them one page, where the per-chunk code before 31f672a read it in 4.
 *
 * lpc_page_get_batch(3) / commit 31f672a: adjacent absent pages "in any
 * order in the array are read with one I/O" ... "short of frames, they
 * read less ahead, and each page is then read as lpc_page_get reads it";
 * GB2: "a sorted array is read in runs of up to that plus a chunk".
 * Here the cache is not short of frames: 512 frames, all free (share
 * 128), file A's reads counted (slow.h); lpc_page_get_batch of 256 cold
 * pages, first sorted 0..255, then evens then odds.
 *
 * Observed (LOCKLESS; LOCKED reads 3):
 *   sorted 0..255: 66 reads, 256 pages  (old per-chunk code: 4 reads)
 *   evens, odds:   66 reads, 256 pages  (old: 256)
 * Cause: issue_planned (src/filemap/stream.c, GB2) extends chunk 0's run
 * over its 64 own pages plus budget = min(run_max, nframes/4) = 128 later
 * ones: [0, 192), past the share; lpc_filemap_ra_window queues [0, 128)
 * (Q5), GB3 finds the share held by that read and is granted nothing, and
 * pages 128..191, already DONE in the plan, are never offered to a later
 * chunk's run: GB4 reads them one page each.  (The budget counts only
 * later pages, not the chunk's own, and plan_take marks pages DONE before
 * the window says whether it took them.)
 * Exit 1 while either order takes more than 8 reads.
 *
 * Run: cmake --build ../../build-release --target lpc_static && make VARIANT=release && out-release/att_gb2_excess
 */
#include "../attack_stream/att.h"
#include "../attack_stream/slow.h"

#define PS 4096u
#define NF 512u
#define N 256u

int main(void)
{
	char pa[512];
	struct lpc_cache *c;
	struct lpc_file *fa;
	struct stat st;
	uint64_t idx[N];
	struct lpc_page *pg[N];
	int errs[N], rc;

	att_make_file("a", 1024u * PS, 3, pa, sizeof(pa));
	for (int order = 0; order < 2; order++) {
		for (unsigned i = 0; i < N; i++)
			idx[i] = order ? (i < N / 2 ? 2 * i : 2 * (i - N / 2) + 1) : i;
		c = att_cache(NF * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 0, 0);
		slow_install(c);
		if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || stat(pa, &st))
			return 1;
		(void)lpc_fadvise(fa, 0, 0, LPC_FADV_RANDOM);
		slow.only_id = (uint64_t)st.st_ino;
		slow_reset();
		rc = lpc_page_get_batch(fa, idx, N, 0, pg, errs);
		ATT_CHECK(rc == (int)N, "batch: %d", rc);
		for (unsigned i = 0; i < N; i++)
			if (pg[i]) {
				ATT_CHECK(att_bad_word(lpc_page_data(pg[i]), PS, idx[i] * PS, 3) < 0,
					  "bytes of entry %u", i);
				lpc_page_put(pg[i]);
			}
		printf("%s: %" PRIu64 " reads, %" PRIu64 " pages read, 512 frames free\n",
		       order ? "evens then odds" : "sorted 0..255", (uint64_t)atomic_load(&slow.reads),
		       (uint64_t)atomic_load(&slow.pages));
		ATT_CHECK(atomic_load(&slow.reads) <= 8, "%" PRIu64 " reads for 256 adjacent cold pages",
			  (uint64_t)atomic_load(&slow.reads));
		lpc_file_close(fa);
		ATT_CHECK(lpc_cache_destroy(c) == 0, "destroy");
	}
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "held");
	return att_fails ? 1 : 0;
}
