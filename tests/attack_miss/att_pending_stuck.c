/* SPDX-License-Identifier: MIT */
/*
 * att_pending_stuck.c - frames lpc_invalidate drops stay on pending, out of
 * frames_free, for ever, when fewer than 64 wait (pre-existing: main has the
 * same lpc_page_pending_kick threshold; not from 227a154/43cf51a).
 *
 * lpc_invalidate(3): "never waits for a grace period: the dropped frames are
 * freed after one by the cache's background reclaimer, which it wakes";
 * F.1: "frames_free is a gauge, exact when all is quiet".  The wake
 * (lpc_page_pending_kick) is skipped while npending < LPC_FREE_BATCH (64),
 * and nothing else moves pending to the free list but an allocation that
 * finds the free list empty (reclaim()) or a reclaimer turn.  So after a
 * small invalidate on an idle cache the frames never come back: frames_free
 * stays short by the pages dropped, however long one waits.
 *
 * Here: 1024 frames; read 40 pages, invalidate them, wait 2 s: frames_free
 * should be 1024.  Then 40 more (80 pending, past the threshold): the
 * reclaimer drains them all.  Exit 1 while the first wait ends short.
 *
 * Run: cmake --build ../../build-release --target lpc_static && make VARIANT=release && out-release/att_pending_stuck
 */
#include "mh.h"

#define PS 4096u
#define NF 1024u

int main(void)
{
	struct lpc_cache *c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
	struct lpc_file *f;
	struct lpc_page *p;
	char path[512];
	uint64_t nf1, nf2;
	int d1, d2, fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mh_hole_file("f", 4096ull * PS, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 1;
	for (unsigned i = 0; i < 40; i++) {
		if (lpc_page_get(f, i, 0, &p))
			return 1;
		lpc_page_put(p);
	}
	d1 = lpc_invalidate(f, 0, 0);
	nf1 = mh_wait_all_free(c, 2.0);
	printf("  40 pages cached and invalidated (dropped %d): frames_free after 2 s: %" PRIu64
	       "/%u\n", d1, nf1, NF);
	if (nf1 != NF) {
		printf("  FAIL: %" PRIu64 " frames never came back from pending\n", NF - nf1);
		fails++;
	}
	for (unsigned i = 100; i < 140; i++) {
		if (lpc_page_get(f, i, 0, &p))
			return 1;
		lpc_page_put(p);
	}
	d2 = lpc_invalidate(f, 0, 0);
	nf2 = mh_wait_all_free(c, 2.0);
	printf("  40 more invalidated (dropped %d; pending now past 64): frames_free after 2 s: "
	       "%" PRIu64 "/%u\n", d2, nf2, NF);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}
