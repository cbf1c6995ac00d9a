/* SPDX-License-Identifier: MIT */
/*
 * att_share_x.c - GB0's cross-chunk runs against readahead's share.
 *
 * lpc.h / lpc_page_get_batch(3): the absent pages are read "within
 * readahead's share of the cache (a quarter of the frames)"; GB2: a chunk
 * pulls in "at most min(run_max, a quarter of the frames) pages" of later
 * entries.  Here a 512-frame cache (share 128), file A's reads held 30 ms
 * each and counted (slow.h): lpc_page_get_batch of 256 cold pages given as
 * evens 0..254 then odds 1..255 (4 chunks; every run crosses chunks).
 * Checked: pages of A being read at once <= 128; every page read once
 * (256 pages read); every entry's bytes right.  Exit 1 otherwise.
 *
 * Env: DELAY=us (default 30000) per read, SORTED=1 for 0..255 in order.
 * Observed: at most 128 pages read at once, each once: holds (66 reads:
 * see att_gb2_excess).
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_share_x
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
	int errs[N], rc, mode;

	att_make_file("a", 1024u * PS, 3, pa, sizeof(pa));
	for (unsigned i = 0; i < N / 2; i++) {
		idx[i] = 2 * i;
		idx[N / 2 + i] = 2 * i + 1;
	}
	if (getenv("SORTED"))
		for (unsigned i = 0; i < N; i++)
			idx[i] = i;
	for (mode = 0; mode < 2; mode++) {
		c = att_cache(NF * PS, PS, LPC_IO_SYNC,
			      mode ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS, 0, 0);
		slow_install(c);
		if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || stat(pa, &st))
			return 1;
		(void)lpc_fadvise(fa, 0, 0, LPC_FADV_RANDOM);
		slow.only_id = (uint64_t)st.st_ino;
		slow.delay_us = getenv("DELAY") ? (unsigned)atoi(getenv("DELAY")) : 30000;
		slow_reset();
		atomic_store(&slow.pages_peak, 0);
		rc = lpc_page_get_batch(fa, idx, N, 0, pg, errs);
		ATT_CHECK(rc == (int)N, "batch: %d", rc);
		for (unsigned i = 0; i < N; i++)
			if (pg[i]) {
				ATT_CHECK(att_bad_word(lpc_page_data(pg[i]), PS, idx[i] * PS, 3) < 0,
					  "bytes of entry %u", i);
				lpc_page_put(pg[i]);
			}
		printf("%s: %" PRIu64 " reads, %" PRIu64 " pages read (want %u), at most %" PRId64
		       " pages being read at once (share %u)\n", mode ? "LOCKED" : "LOCKLESS",
		       (uint64_t)atomic_load(&slow.reads), (uint64_t)atomic_load(&slow.pages), N,
		       (int64_t)atomic_load(&slow.pages_peak), NF / 4);
		ATT_CHECK(atomic_load(&slow.pages) == N, "pages read %" PRIu64,
			  (uint64_t)atomic_load(&slow.pages));
		ATT_CHECK(atomic_load(&slow.pages_peak) <= NF / 4, "share exceeded: %" PRId64,
			  (int64_t)atomic_load(&slow.pages_peak));
		lpc_file_close(fa);
		ATT_CHECK(lpc_cache_destroy(c) == 0, "destroy");
	}
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "held");
	return att_fails ? 1 : 0;
}
