/* SPDX-License-Identifier: MIT */
/*
 * att_linger_race.c - RL1-RL4's no-lost-kick argument under concurrency:
 * 4 threads each read a page and invalidate it (one page per invalidate,
 * pending always short of a batch) for 300 ms, then all stop; after 2 s
 * quiet frames_free must be whole.  20 rounds, with the stop at varied
 * points of the 20 ms linger.
 *
 * lpc_invalidate(3): "fewer than 64 frames wait up to 20 ms for more
 * first, so a quiet cache's frames_free comes back whole".
 * Exit 1 when a round ends short (a kick lost between RL1's load and
 * RL2's store of `lingering`, or a drain that missed late frees).
 *
 * Run: cmake --build ../../build-tsan --target lpc_static && make VARIANT=tsan && out-tsan/att_linger_race
 */
#include <pthread.h>

#include "../attack_miss/mh.h"

#define PS 4096u
#define NF 1024u
#define NT 4

static struct lpc_file *f;
static _Atomic int stop;

static void *worker(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg * 7919 + 1, i;
	struct lpc_page *p;

	while (!atomic_load(&stop)) {
		i = (uint64_t)(uintptr_t)arg * 1000 + mh_rand(&s) % 500;
		if (!lpc_page_get(f, i, 0, &p))
			lpc_page_put(p);
		(void)lpc_invalidate(f, i * PS, PS);
		if (mh_rand(&s) % 8 == 0)
			usleep(mh_rand(&s) % 3000);
	}
	return NULL;
}

int main(void)
{
	struct lpc_cache *c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
	char path[512];
	pthread_t th[NT];
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(200);
	mh_hole_file("f", 8192ull * PS, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 1;
	for (int r = 0; r < 20; r++) {
		uint64_t nf;

		atomic_store(&stop, 0);
		for (int k = 0; k < NT; k++)
			pthread_create(&th[k], NULL, worker, (void *)(uintptr_t)k);
		usleep(300000 + (unsigned)r * 1000);
		atomic_store(&stop, 1);
		for (int k = 0; k < NT; k++)
			pthread_join(th[k], NULL);
		/* no invalidate here: each worker dropped what it read, and
		 * a last kick would hide a lost one */
		nf = mh_wait_all_free(c, 2.0);
		if (nf != NF) {
			printf("  FAIL round %d: frames_free %" PRIu64 "/%u after 2 s quiet\n", r, nf, NF);
			fails++;
		}
	}
	printf("  20 rounds of 4 threads' one-page invalidates\n");
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}
