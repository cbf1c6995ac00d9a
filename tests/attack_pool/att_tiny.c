/* SPDX-License-Identifier: MIT */
/*
 * att_tiny.c - a tiny cache (64 frames, tbatch 1, low_free 4) where an idle
 * thread's deferred list (page/alloc.c OD2) holds 30 frames and every other
 * frame is held by the main thread: its next allocations (lpc_page_get,
 * which may wait, and lpc_pread, LPC_ALLOC_NOWAIT) find nothing on the
 * shared list or pending and nothing evictable, and must reach the idle
 * thread's frames through reclaim()'s steal (OD6: to pending, -EAGAIN, the
 * next round's grace period) rather than fail with -ENOMEM or wait out
 * alloc_wait_ms.  Probe: exit 1 on a failure or a call slower than 500 ms.
 *
 * Run: cmake --build ../../build-release --target lpc_static && make && out-release/att_tiny
 */
#include "../attack_miss/mh.h"

#define PS 4096u
#define NF 64u
#define NA 30u

static struct lpc_file *fx;
static atomic_int stage;

static void *thread_a(void *arg)
{
	struct lpc_page *p;

	(void)arg;
	for (unsigned i = 0; i < NA; i++) {
		if (lpc_page_get(fx, i, 0, &p))
			exit(2);
		lpc_page_put(p);
	}
	printf("  A: %d pages dropped by lpc_invalidate; idle\n", lpc_invalidate(fx, 0, 0));
	atomic_store(&stage, 1);
	while (atomic_load(&stage) != 2)
		usleep(1000);
	return NULL;
}

int main(void)
{
	struct lpc_cache *c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
	struct lpc_page *held[NF];
	struct lpc_file *fy;
	struct lpc_stats s;
	char px[512], py[512], buf[PS];
	unsigned nh = 0;
	pthread_t a;
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mh_hole_file("x", 4096ull * PS, px, sizeof(px));
	mh_hole_file("y", 4096ull * PS, py, sizeof(py));
	if (lpc_file_open(c, px, O_RDONLY, 0, &fx) || lpc_file_open(c, py, O_RDONLY, 0, &fy))
		return 2;
	pthread_create(&a, NULL, thread_a, NULL);
	while (atomic_load(&stage) != 1)
		usleep(1000);
	lpc_stats(c, &s);
	printf("  frames_free %" PRIu64 "/%u\n", s.frames_free, NF);
	/* Hold every frame not on A's list. */
	while (nh < NF - NA) {
		if (lpc_page_get(fy, nh, 0, &held[nh])) {
			printf("  holding: get %u failed\n", nh);
			break;
		}
		nh++;
	}
	printf("  main holds %u pages\n", nh);
	for (int k = 0; k < 4; k++) {
		double t0 = mh_now(), dt;
		int rc;
		ssize_t r = 0;

		if (k & 1) {
			r = lpc_pread(fy, buf, PS, (uint64_t)(1000 + k) * PS);
			rc = r == PS ? 0 : (int)r;
		} else {
			rc = lpc_page_get(fy, nh, 0, &held[nh]);
			if (!rc)
				nh++;
		}
		dt = mh_now() - t0;
		printf("  %s of a new page: rc %d in %.1f ms\n", k & 1 ? "lpc_pread" : "lpc_page_get",
		       rc, dt * 1e3);
		if (rc || dt > 0.5) {
			printf("  FAIL: an allocation failed or stalled with A's frames deferred\n");
			fails++;
		}
	}
	for (unsigned i = 0; i < nh; i++)
		lpc_page_put(held[i]);
	atomic_store(&stage, 2);
	pthread_join(a, NULL);
	lpc_file_close(fx);
	lpc_file_close(fy);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}
