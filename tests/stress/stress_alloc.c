/* SPDX-License-Identifier: MIT */
/*
 * stress_alloc.c - the frame allocator under contention (page/alloc.c): no
 * frame is handed to two owners at once, and no allocation fails while a
 * frame is free anywhere, however the free frames are spread over threads'
 * private lists, the shared list and the pages waiting for a grace period.
 *
 * T threads each hold at most Q frames at a time and one more thread one
 * frame, with T * Q + 1 < N, so
 * every lpc_page_alloc must succeed.  Each thread, in rounds: allocates a
 * random number (1..Q) of private pages, stamps every frame with (thread,
 * round, slot) at both ends, sometimes sleeps or yields while holding them
 * (so other threads drain their lists and must take this one's), checks
 * every stamp, and puts them all (the private free: to its own list while
 * frames are plenty).  One more thread keeps the deferred free busy: it
 * gets a page of a file and invalidates it, so published pages keep going
 * through the pending list and call_rcu.  A taker that ignored an owner still
 * on its list (alloc.c S1-S3, T1-T4) hands one frame to two threads: the
 * stamps catch it.  At the end every frame is free again.
 *
 * Usage: stress_alloc [--seed N]; LPC_STRESS_SECONDS (default 4).
 * Exit: 0 pass, 1 fail, 77 skip.
 */
#include <sched.h>

#include "../common/stress.h"

#define N 256u   /* frames in the cache */
#define T 4u     /* allocating threads */
#define Q 63u    /* frames one thread holds at most: T * Q + 1 < N */
#define PS 4096u

static struct lpc_cache *cache;
static struct lpc_file *file;
static _Atomic unsigned long allocs, enomems, bad_stamps, cycled;

struct stamp {
	uint64_t thread, round, slot;
};

static void stamp_write(unsigned char *d, const struct stamp *s)
{
	memcpy(d, s, sizeof(*s));
	memcpy(d + PS - sizeof(*s), s, sizeof(*s));
}

static bool stamp_ok(const unsigned char *d, const struct stamp *s)
{
	return memcmp(d, s, sizeof(*s)) == 0 && memcmp(d + PS - sizeof(*s), s, sizeof(*s)) == 0;
}

static void *allocator(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	uint64_t rng = tst_seed ^ (0x9e3779b97f4a7c15ull * (me + 1));
	struct lpc_page *held[Q];

	for (uint64_t round = 0; !tst_stopping(); round++) {
		unsigned k = 1 + (unsigned)(tst_rnd(&rng) % Q), n = 0;

		for (; n < k; n++) {
			int rc = lpc_page_alloc(cache, &held[n]);

			if (rc) {
				CHECK_EQ(rc, -ENOMEM);
				atomic_fetch_add(&enomems, 1);
				CHECK(0, "thread %u round %" PRIu64 ": alloc %u of %u failed, yet "
				      "the others hold at most %u of %u frames", me, round, n, k,
				      (T - 1) * Q + 1, N);
				break;
			}
			struct stamp s = { me, round, n };

			stamp_write(lpc_page_data(held[n]), &s);
		}
		atomic_fetch_add_explicit(&allocs, n, memory_order_relaxed);
		switch (tst_rnd(&rng) % 8) {
		case 0:
			tst_sleep_us(50 + (unsigned)(tst_rnd(&rng) % 500));
			break;
		case 1:
			sched_yield();
			break;
		}
		for (unsigned i = 0; i < n; i++) {
			struct stamp s = { me, round, i };

			if (!stamp_ok(lpc_page_data(held[i]), &s)) {
				atomic_fetch_add(&bad_stamps, 1);
				CHECK(0, "thread %u round %" PRIu64 " slot %u: another thread "
				      "wrote this frame", me, round, i);
			}
			lpc_page_put(held[i]);
		}
		if (tst_failed >= 20)
			break;
	}
	return NULL;
}

/* Sends published pages through the deferred free, one at a time. */
static void *cycler(void *arg)
{
	uint64_t index = 0;
	struct lpc_page *p;

	(void)arg;
	while (!tst_stopping() && tst_failed < 20) {
		int rc = lpc_page_get(file, index, 0, &p);

		/* Checks count only failures here: a passing CHECK is an atomic
		 * RMW on a shared counter, and TSan would see it order threads. */
		if (rc) {
			CHECK(0, "cycler: get %" PRIu64 " = %d", index, rc);
			break;
		}
		lpc_page_put(p);
		rc = lpc_invalidate(file, index * PS, PS);
		/* 0: the reclaimer evicted it first (frames run low here);
		 * it went through the deferred free all the same. */
		if (rc != 1 && rc != 0)
			CHECK(0, "cycler: invalidate %" PRIu64 " = %d", index, rc);
		index = (index + 1) % 64;
		atomic_fetch_add_explicit(&cycled, 1, memory_order_relaxed);
	}
	return NULL;
}

/* Checks guarantee E.1 of include/lpc/lpc.h. */
int main(int argc, char **argv)
{
	struct tst_threads th = { 0 };
	struct lpc_stats st;
	double secs;

	secs = tst_stress_init(argc, argv, 4.0);
	_Static_assert(T * Q + 1 < N, "demand must fit the cache");
	cache = tst_cache_create((size_t)N * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	file = tst_stress_file(cache, 64 * PS, NULL, "alloc");

	tst_threads_start(&th, T, allocator, NULL, 0);
	tst_threads_start(&th, 1, cycler, NULL, 0);
	tst_stress_wait(secs);
	tst_threads_join(&th);

	lpc_stats(cache, &st);
	printf("%u threads x %u frames of %u: %lu allocations, %lu -ENOMEM, %lu bad stamps; "
	       "%lu pages through the deferred free\n",
	       T, Q, N, atomic_load(&allocs), atomic_load(&enomems), atomic_load(&bad_stamps),
	       atomic_load(&cycled));
	CHECK(atomic_load(&allocs) > 0 && atomic_load(&cycled) > 0, "too little ran");
	CHECK_EQ(st.alloc_failures, 0);
	CHECK_EQ(lpc_file_close(file), 0);
	/* Every frame is free again, wherever it waits: all N can be had. */
	CHECK_EQ(tst_frames_allocatable(cache, N), N, "frames allocated at the end");
	CHECK_EQ(lpc_cache_destroy(cache), 0);
	return tst_finish();
}
