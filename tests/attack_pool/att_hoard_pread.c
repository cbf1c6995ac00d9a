/* SPDX-License-Identifier: MIT */
/*
 * att_hoard_pread.c - one thread, lpc_pread only: its lpc_invalidate keeps
 * the frames for it (page/alloc.c OD2), but lpc_pread allocates with
 * LPC_ALLOC_NOWAIT and OD3 lands the deferred list only for an allocation
 * that may wait, so this thread never takes them back; the background
 * reclaimer sees neither them nor the thread's hoard (reclaim/reclaimer.c
 * refill counts the shared list and pending) and evicts the thread's own
 * cached pages instead.  Same effect as att_hoard without a second thread:
 * the cache is smaller by up to half its frames for as long as the thread
 * lives.
 *
 * 1024 frames, readahead off, null backend.  lpc_pread 500 pages of X,
 * lpc_invalidate X, then lpc_pread 700 pages of Y three times (20 us a
 * page).  Before OD1-OD6 the 500 came back through pending, Y's 700 stay
 * cached, passes 2 and 3 read nothing.  Exit 1 when Y's pages are evicted.
 *
 * Run: cmake --build ../../build-release --target lpc_static && make && out-release/att_hoard_pread
 */
#include "../attack_miss/mh.h"

#define PS 4096u
#define NF 1024u
#define NA 500u
#define NB 700u

int main(void)
{
	struct lpc_cache *c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
	struct lpc_file *fx, *fy;
	struct lpc_stats s0, s1, s2;
	char px[512], py[512], buf[PS];
	uint64_t miss3 = 0;
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mh_hole_file("x", 4096ull * PS, px, sizeof(px));
	mh_hole_file("y", 4096ull * PS, py, sizeof(py));
	if (lpc_file_open(c, px, O_RDONLY, 0, &fx) || lpc_file_open(c, py, O_RDONLY, 0, &fy))
		return 2;
	for (unsigned i = 0; i < NA; i++)
		if (lpc_pread(fx, buf, PS, (uint64_t)i * PS) != PS)
			return 2;
	printf("  %d pages of X dropped by lpc_invalidate\n", lpc_invalidate(fx, 0, 0));
	usleep(200000); /* the linger's drain, had they gone to pending */
	lpc_stats(c, &s0);
	printf("  frames_free %" PRIu64 "/%u, evictions %" PRIu64 "\n", s0.frames_free, NF,
	       s0.evictions);
	for (int pass = 0; pass < 3; pass++) {
		lpc_stats(c, &s1);
		for (unsigned i = 0; i < NB; i++) {
			if (lpc_pread(fy, buf, PS, (uint64_t)i * PS) != PS)
				return 2;
			usleep(20);
		}
		lpc_stats(c, &s2);
		printf("  pass %d over %u pages of Y: %" PRIu64 " read from the backend, evictions %" PRIu64
		       ", frames_free %" PRIu64 "\n",
		       pass + 1, NB, s2.reads - s1.reads, s2.evictions - s0.evictions, s2.frames_free);
		if (pass == 2)
			miss3 = s2.reads - s1.reads;
	}
	if (s2.evictions != s0.evictions) {
		printf("  FAIL: %" PRIu64 " of Y's pages evicted (pass 3 read %" PRIu64
		       " again) while this thread's deferred list held X's frames: %u + %u fit %u\n",
		       s2.evictions - s0.evictions, miss3, NA, NB, NF);
		fails++;
	}
	lpc_file_close(fx);
	lpc_file_close(fy);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}
