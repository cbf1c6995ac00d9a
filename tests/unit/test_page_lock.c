/* SPDX-License-Identifier: MIT */
/*
 * test_page_lock.c - the page lock (src/page/lock.c): mutual exclusion and no
 * lost wake-ups, on a private page and on a cached one.
 *
 *  - exclusion: T threads each take and drop the lock L times and, inside,
 *    increment a plain (non-atomic) counter and check that nobody else is
 *    inside (an owner word swapped in and out); the counter must come out
 *    exactly T * L.  Some critical sections sleep a little so that waiters
 *    really go to futex_wait (L4/L5) and depend on the unlocker's wake (U2).
 *  - wake-ups: a lost wake-up leaves a waiter asleep for ever; every phase is
 *    bounded, and a watchdog (alarm) fails the program with a message if it
 *    hangs (60 s per phase, before the CTest timeout would).
 *  - lpc_page_wait_unlocked (the miss path's wait, W1-W3): waiters return only
 *    after the holder unlocked (a round number set before the unlock), and all
 *    of them return.
 *  - the flags word: after all of it, LOCKED and WAITERS are clear and the
 *    page's other bits (UPTODATE, PUBLISHED of a cached page) are intact;
 *    trylock fails on a locked page and succeeds on a free one.
 *
 * Usage: test_page_lock [--seed N]     Exit: 0 pass, 1 fail.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "page/page.h"

static struct lpc_page *page;
static unsigned long counter; /* protected by the page lock only */
static _Atomic int owner;     /* 0 or the id of the thread inside */
static _Atomic unsigned long overlaps;
static unsigned iters;
static pthread_barrier_t start;

struct worker {
	int id;
	uint64_t rng;
	unsigned long sleeps;
};

static void *lock_worker(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(&start);
	for (unsigned i = 0; i < iters; i++) {
		uint64_t r = tst_rnd(&w->rng);

		lpc_page_lock(page);
		if (atomic_exchange(&owner, w->id) != 0)
			atomic_fetch_add(&overlaps, 1);
		counter++;
		/* Hold it a while now and then: waiters must sleep and be woken. */
		if ((r & 63) == 0) {
			tst_sleep_us(20 + (unsigned)(r >> 8) % 80);
			w->sleeps++;
		} else if ((r & 7) == 0) {
			sched_yield();
		}
		if (atomic_exchange(&owner, 0) != w->id)
			atomic_fetch_add(&overlaps, 1);
		lpc_page_unlock(page);
		if ((r & 0x300) == 0)
			sched_yield();
	}
	return NULL;
}

/* Checks guarantee G.1 of include/lpc/lpc.h. */
static void run_exclusion(struct lpc_page *p, unsigned nthreads, unsigned n, const char *what)
{
	pthread_t th[16];
	struct worker w[16];
	unsigned long sleeps = 0;
	uint64_t t0 = tst_now_ns();

	page = p;
	counter = 0;
	iters = n;
	atomic_store(&overlaps, 0);
	pthread_barrier_init(&start, NULL, nthreads);
	for (unsigned i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .id = (int)i + 1, .rng = tst_seed + i * 7919 };
		REQUIRE(pthread_create(&th[i], NULL, lock_worker, &w[i]) == 0);
	}
	for (unsigned i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		sleeps += w[i].sleeps;
	}
	pthread_barrier_destroy(&start);
	CHECK_EQ(counter, (unsigned long)nthreads * n, "%s: lost increments", what);
	CHECK_EQ(atomic_load(&overlaps), 0, "%s: two threads inside the lock", what);
	CHECK_EQ(lpc_page_flags(p) & (LPC_PG_LOCKED | LPC_PG_WAITERS), 0,
		 "%s: LOCKED or WAITERS left set", what);
	printf("%s: %u threads x %u lock/unlock, %lu sleeps held, %.0f ms\n", what, nthreads, n,
	       sleeps, (tst_now_ns() - t0) / 1e6);
}

/* lpc_page_wait_unlocked: waiters return after the unlock, all of them. */
static _Atomic unsigned released_round;
static _Atomic unsigned returned;
static _Atomic unsigned early;
static pthread_barrier_t round_start, round_end;
static unsigned nrounds;

static void *wait_worker(void *arg)
{
	(void)arg;
	for (unsigned r = 1; r <= nrounds; r++) {
		pthread_barrier_wait(&round_start); /* the holder has the lock */
		lpc_page_wait_unlocked(page);
		if (atomic_load(&released_round) < r)
			atomic_fetch_add(&early, 1);
		atomic_fetch_add(&returned, 1);
		pthread_barrier_wait(&round_end);
	}
	return NULL;
}

/* Checks guarantee G.2 of include/lpc/lpc.h. */
static void run_wait_unlocked(struct lpc_page *p, unsigned nthreads, unsigned rounds)
{
	pthread_t th[16];

	page = p;
	nrounds = rounds;
	atomic_store(&released_round, 0);
	atomic_store(&returned, 0);
	atomic_store(&early, 0);
	pthread_barrier_init(&round_start, NULL, nthreads + 1);
	pthread_barrier_init(&round_end, NULL, nthreads + 1);
	for (unsigned i = 0; i < nthreads; i++)
		REQUIRE(pthread_create(&th[i], NULL, wait_worker, NULL) == 0);
	for (unsigned r = 1; r <= rounds; r++) {
		/* Odd rounds: a user's lock (a seq write section on a cached
		 * page); even rounds: lpc's own, as the miss path pairs it. */
		if (r & 1)
			lpc_page_lock(p);
		else
			lpc_page_lock_noseq(p);
		pthread_barrier_wait(&round_start);
		/* Vary how long they wait: 0 (they may not sleep at all) to 2 ms. */
		if (r % 4)
			tst_sleep_us((r * 397) % 2000);
		atomic_store(&released_round, r);
		if (r & 1)
			lpc_page_unlock(p);
		else
			lpc_page_unlock_set(p, 0); /* the miss path's unlock */
		pthread_barrier_wait(&round_end);
	}
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&round_start);
	pthread_barrier_destroy(&round_end);
	CHECK_EQ(atomic_load(&returned), nthreads * rounds, "wait_unlocked returns");
	CHECK_EQ(atomic_load(&early), 0, "wait_unlocked returned while locked");
	CHECK_EQ(lpc_page_flags(p) & (LPC_PG_LOCKED | LPC_PG_WAITERS), 0);
	printf("wait_unlocked: %u waiters x %u rounds\n", nthreads, rounds);
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page *priv, *cached;
	char path[600];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nthreads = ncpu < 4 ? 4 : ncpu > 8 ? 8 : (unsigned)ncpu;
	uint32_t before;

	tst_init(argc, argv, 100);
	lpc_config_init(&cfg);
	cfg.cache_bytes = 64 * 4096;
	cfg.io_backend = LPC_IO_NULL;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0);
	REQUIRE(lpc_page_alloc(c, &priv) == 0);

	/* trylock and the bits of the word. */
	CHECK(lpc_page_trylock(priv), "trylock of a free lock");
	CHECK(!lpc_page_trylock(priv), "trylock of a held lock succeeded");
	CHECK(lpc_page_flags(priv) & LPC_PG_LOCKED);
	lpc_page_unlock(priv);
	CHECK_EQ(lpc_page_flags(priv) & LPC_PG_LOCKED, 0);
	lpc_page_lock(priv);
	CHECK(!lpc_page_trylock(priv), "trylock after lock succeeded");
	lpc_page_unlock(priv);

	/* Each phase re-arms the watchdog: a lost wake-up hangs one. */
	alarm(60);
	run_exclusion(priv, nthreads, 20000, "private page");
	alarm(60);
	run_exclusion(priv, 2, 50000, "private page, 2 threads");
	alarm(60);
	run_wait_unlocked(priv, nthreads, 200);

	if (!tst_tmpdir() || tst_make_sparse("lockfile", 16 * 4096, path, sizeof(path)) != 0)
		tst_skip("no temporary file");
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &f) == 0);
	REQUIRE(lpc_page_get(f, 3, 0, &cached) == 0);
	before = lpc_page_flags(cached) & ~(uint32_t)LPC_PG_REFERENCED;
	CHECK(before & LPC_PG_UPTODATE, "cached page not UPTODATE");
	alarm(60);
	run_exclusion(cached, nthreads, 20000, "cached page");
	alarm(60);
	run_wait_unlocked(cached, nthreads, 100);
	CHECK_EQ(lpc_page_flags(cached) & ~(uint32_t)LPC_PG_REFERENCED, before,
		 "lock/unlock changed other bits of the flags word");
	lpc_page_put(cached);

	lpc_page_put(priv);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	return tst_finish();
}
