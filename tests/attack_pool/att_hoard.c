/* SPDX-License-Identifier: MIT */
/*
 * att_hoard.c - frames an idle thread invalidated sit on its deferred list
 * (page/alloc.c OD2) for as long as it allocates nothing, and the
 * background reclaimer, which sees only the shared list and pending
 * (reclaim/reclaimer.c refill: free + pending against `high`), evicts
 * other threads' cached pages instead: the cache is smaller by what the
 * idle thread holds (up to half the frames, OD1's bound), for ever.
 *
 * 1024 frames, readahead off, null backend.  Thread A caches 500 pages of
 * file X, lpc_invalidate's them all (kept: the shared list holds 524), then
 * waits (a thread that serves requests and is idle now).  Thread B (main)
 * reads 700 pages of file Y three times, paced (20 us a page: the
 * reclaimer keeps up, so no allocation finds the shared list empty and
 * reclaim()'s steal never runs).  700 + 500 > 1024, but A's 500 are free:
 * before OD1-OD6 they came back through pending and B's 700 stay cached
 * (passes 2 and 3 all hits, no eviction).  Exit 1 when B's pages were
 * evicted while frames_free counted A's frames as free.
 *
 * Run: cmake --build ../../build-release --target lpc_static && make && out-release/att_hoard
 */
#include "../attack_miss/mh.h"

#define PS 4096u
#define NF 1024u
#define NA 500u
#define NB 700u

static struct lpc_file *fx;
static atomic_int stage;

static void *thread_a(void *arg)
{
	struct lpc_page *p;

	(void)arg;
	for (unsigned i = 0; i < NA; i++) {
		if (lpc_page_get(fx, i, 0, &p)) {
			printf("A: get %u failed\n", i);
			exit(2);
		}
		lpc_page_put(p);
	}
	printf("  A: %d pages dropped by lpc_invalidate; A now idle\n", lpc_invalidate(fx, 0, 0));
	atomic_store(&stage, 1);
	while (atomic_load(&stage) != 2)
		usleep(1000);
	return NULL;
}

int main(void)
{
	struct lpc_cache *c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
	struct lpc_file *fy;
	struct lpc_stats s0, s1, s2;
	struct lpc_page *p;
	char px[512], py[512];
	pthread_t a;
	uint64_t miss3 = 0, minfree = UINT64_MAX;
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mh_hole_file("x", 4096ull * PS, px, sizeof(px));
	mh_hole_file("y", 4096ull * PS, py, sizeof(py));
	if (lpc_file_open(c, px, O_RDONLY, 0, &fx) || lpc_file_open(c, py, O_RDONLY, 0, &fy))
		return 2;
	pthread_create(&a, NULL, thread_a, NULL);
	while (atomic_load(&stage) != 1)
		usleep(1000);
	usleep(200000); /* the linger's drain, had they gone to pending */
	lpc_stats(c, &s0);
	printf("  after A's invalidate: frames_free %" PRIu64 "/%u, evictions %" PRIu64 "\n",
	       s0.frames_free, NF, s0.evictions);
	for (int pass = 0; pass < 3; pass++) {
		uint64_t r0;

		lpc_stats(c, &s1);
		r0 = s1.reads;
		for (unsigned i = 0; i < NB; i++) {
			if (lpc_page_get(fy, i, 0, &p))
				return 2;
			lpc_page_put(p);
			usleep(20);
		}
		lpc_stats(c, &s2);
		if (s2.frames_free < minfree)
			minfree = s2.frames_free;
		printf("  B pass %d over %u pages: %" PRIu64 " read from the backend, evictions %" PRIu64
		       ", frames_free %" PRIu64 "\n",
		       pass + 1, NB, s2.reads - r0, s2.evictions - s0.evictions, s2.frames_free);
		if (pass == 2)
			miss3 = s2.reads - r0;
	}
	lpc_stats(c, &s2);
	if (s2.evictions != s0.evictions) {
		printf("  FAIL: %" PRIu64 " of B's pages evicted (pass 3 read %" PRIu64
		       " again) while A's idle thread kept its invalidated frames: %u + %u pages fit "
		       "%u frames\n",
		       s2.evictions - s0.evictions, miss3, NA, NB, NF);
		fails++;
	}
	atomic_store(&stage, 2);
	pthread_join(a, NULL);
	lpc_stats(c, &s2);
	printf("  A exited: frames_free %" PRIu64 " (cached: %u of Y at most)\n", s2.frames_free, NB);
	lpc_file_close(fx);
	lpc_file_close(fy);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}
