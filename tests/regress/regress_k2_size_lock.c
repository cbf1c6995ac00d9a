/* SPDX-License-Identifier: MIT */
/*
 * regress_k2_size_lock.c - story: lpc_fsync's WB_SYNC pass must not flush
 * its batch while it holds a page lock (writeback/writeback.c K2), because
 * the flush may take f->size_lock (lpc_wb_publish_size), which lpc_truncate
 * holds while it waits for page locks (truncate.c step 2).  Fixed in 8befe9c
 * ("writeback K2: unlock the page before flushing the batch"), found as a
 * hang of stress_write under ASan.
 *
 * The file has four pages, 0-3 (16 KiB).  The interleaving:
 *   1. Page 3 is dirty.  W, a background pass (WB_ASYNC, the flusher's),
 *      moves it DIRTY -> WRITEBACK (K3) and is parked before its write (K4).
 *   2. Pages 0-3 are written again: 0-2 DIRTY, 3 DIRTY|WRITEBACK (a write
 *      during writeback re-dirties the page, it does not wait).
 *   3. S calls lpc_fsync.  Its pass (WB_SYNC) moves pages 0-2 to WRITEBACK
 *      and adds them to its batch (K3, not yet submitted), then locks page
 *      3, sees it under writeback and is parked at K2: page 3 locked, a
 *      batch to flush whose last page (2) will end past the size T sets.
 *   4. T calls lpc_truncate(10 KiB): it takes size_lock, stores the size and
 *      waits for page 3's lock (the test sees WAITERS set on page 3).
 *   5. S and W go on.  Fixed: S unlocks page 3, flushes pages 0-2 and waits
 *      for size_lock (the batch ends at 12 KiB > 10 KiB: lpc_wb_publish_size);
 *      T gets page 3's lock, waits for W's write, removes page 3, zeroes page
 *      2's tail, ftruncates and lets size_lock go; S finishes its fsync.
 *      Broken (8befe9c reverted): S flushes with page 3 locked and waits for
 *      size_lock, T holds size_lock and waits for page 3: a deadlock, which
 *      the test reports after DEADLOCK_S seconds (exit 1) rather than hang.
 *      Since rule PAGE-LOCK-HELD (core/debug.h) exists, the LPC_DEBUG build
 *      this story needs aborts S at that flush instead, before the wait.
 *   6. Both return 0; lpc and the file read through a fresh kernel
 *      descriptor hold 10 KiB of the data of step 2.
 * Deterministic: W and S are parked by a yield-point hook (their own, below:
 * two threads at two points), T's wait is seen on the page's flags.  The
 * flusher is kept out (age 2^32 ms, thresholds 100 %).  About 0.1 s when it
 * passes.
 */
#include <fcntl.h>

#include "../common/write_test.h"
#include "core/debug.h"
#include "page/page.h"
#include "writeback/writeback.h"

#define PS 4096
#define NEW_SIZE (2 * PS + PS / 2)
#define DEADLOCK_S 10

static struct lpc_file *file;

/* --- parking two threads at two points (yield_stop.h parks one) --- */

enum role { ROLE_NONE, ROLE_W, ROLE_S };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static __thread enum role my_role;
static __thread unsigned my_k2;
static bool parked[3], go[3];

static void park(enum role r)
{
	pthread_mutex_lock(&mu);
	parked[r] = true;
	pthread_cond_broadcast(&cv);
	while (!go[r])
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

/* W parks at its K4 (page 3 in WRITEBACK, not written); S at its fourth K2
 * (pages 0-2 visited, page 3 locked).  Every other thread passes. */
static void hook(enum lpc_yield_point yp)
{
	if (my_role == ROLE_W && yp == LPC_YP_K4 && !parked[ROLE_W])
		park(ROLE_W);
	else if (my_role == ROLE_S && yp == LPC_YP_K2 && ++my_k2 == 4)
		park(ROLE_S);
}

/* Return: true once r is parked; false after 10 s. */
static bool wait_parked(enum role r)
{
	struct timespec ts;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&mu);
	while (!parked[r] && pthread_cond_timedwait(&cv, &mu, &ts) == 0)
		;
	ok = parked[r];
	pthread_mutex_unlock(&mu);
	return ok;
}

static void release(enum role r)
{
	pthread_mutex_lock(&mu);
	go[r] = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* --- the three threads --- */

static _Atomic int w_rc = 1, s_rc = 1, t_rc = 1;
static _Atomic bool s_done, t_done;

static void *w_main(void *arg)
{
	(void)arg;
	my_role = ROLE_W;
	atomic_store(&w_rc, lpc_wb_file(file, LPC_WB_ASYNC, 0, lpc_file_tcache(file)));
	return NULL;
}

static void *s_main(void *arg)
{
	(void)arg;
	my_role = ROLE_S;
	atomic_store(&s_rc, lpc_fsync(file));
	atomic_store(&s_done, true);
	return NULL;
}

static void *t_main(void *arg)
{
	(void)arg;
	atomic_store(&t_rc, lpc_truncate(file, NEW_SIZE));
	atomic_store(&t_done, true);
	return NULL;
}

/* Waits until cond holds, for at most ms milliseconds. */
#define WAIT_FOR(cond, ms)                                                      \
	({                                                                      \
		uint64_t end_ = tst_now_ns() + (uint64_t)(ms) * 1000000ull;     \
		while (!(cond) && tst_now_ns() < end_)                          \
			tst_sleep_us(1000);                                     \
		(cond);                                                         \
	})

int main(int argc, char **argv)
{
	unsigned char data[4 * PS], back[4 * PS];
	struct lpc_page *p3;
	struct lpc_cache *c;
	char path[512];
	pthread_t wt, st, tt;

	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	tst_require_tmpdir();
	REQUIRE(tst_make_file("k2_size_lock", 4 * PS, 5, path, sizeof(path)) == 0);
	c = tst_wcache_create(16, PS, LPC_IO_SYNC, UINT32_MAX, 100, 100);
	file = tst_file_open(c, path, O_RDWR);
	lpc_yield_set_hook(hook);
	REQUIRE(lpc_yield_arm("K2,K4", 1.0, 1) == 0, "arm K2, K4");

	memset(data, 0x11, sizeof(data));					/* 1 */
	REQUIRE(lpc_pwrite(file, data + 3 * PS, PS, 3 * PS) == PS, "lpc_pwrite page 3");
	REQUIRE(pthread_create(&wt, NULL, w_main, NULL) == 0);
	REQUIRE(wait_parked(ROLE_W), "W never reached K4");
	REQUIRE(lpc_page_find(file, 3, &p3) == 0, "page 3 cached");

	for (size_t i = 0; i < sizeof(data); i++)				/* 2 */
		data[i] = (unsigned char)(0xa0 + i / PS + i * 7);
	REQUIRE(lpc_pwrite(file, data, sizeof(data), 0) == (ssize_t)sizeof(data),
		"lpc_pwrite pages 0-3");
	CHECK_EQ(lpc_page_flags(p3) & (LPC_PG_DIRTY | LPC_PG_WRITEBACK),
		 LPC_PG_DIRTY | LPC_PG_WRITEBACK, "page 3 dirty again under W's write");

	REQUIRE(pthread_create(&st, NULL, s_main, NULL) == 0);			/* 3 */
	REQUIRE(wait_parked(ROLE_S), "S never reached K2 of page 3");
	CHECK(lpc_page_flags(p3) & LPC_PG_LOCKED, "S holds page 3's lock at K2");
	for (uint64_t i = 0; i < 3; i++) {
		struct lpc_page *p;

		REQUIRE(lpc_page_find(file, i, &p) == 0, "page %llu cached", (unsigned long long)i);
		CHECK_EQ(lpc_page_flags(p) & (LPC_PG_DIRTY | LPC_PG_WRITEBACK), LPC_PG_WRITEBACK,
			 "page %llu in S's batch", (unsigned long long)i);
		lpc_page_put(p);
	}

	REQUIRE(pthread_create(&tt, NULL, t_main, NULL) == 0);			/* 4 */
	REQUIRE(WAIT_FOR(lpc_page_flags(p3) & LPC_PG_WAITERS, 10000),
		"T never waited for page 3's lock");
	CHECK_EQ(atomic_load(&file->size), NEW_SIZE, "T stored the new size");

	release(ROLE_S);							/* 5 */
	release(ROLE_W);
	if (!WAIT_FOR(atomic_load(&s_done) && atomic_load(&t_done), DEADLOCK_S * 1000)) {
		CHECK(false, "deadlock: after %d s lpc_fsync %s and lpc_truncate %s (S flushes "
			     "with page 3 locked and waits for size_lock, T holds size_lock and "
			     "waits for page 3)",
		      DEADLOCK_S, atomic_load(&s_done) ? "returned" : "still runs",
		      atomic_load(&t_done) ? "returned" : "still runs");
		tst_finish();
		_exit(1); /* the threads cannot be joined */
	}
	pthread_join(wt, NULL);
	pthread_join(st, NULL);
	pthread_join(tt, NULL);
	lpc_yield_arm(NULL, 0, 0);
	lpc_yield_set_hook(NULL);
	lpc_page_put(p3);

	CHECK_EQ(atomic_load(&w_rc), 0, "W's pass");				/* 6 */
	CHECK_EQ(atomic_load(&s_rc), 0, "lpc_fsync");
	CHECK_EQ(atomic_load(&t_rc), 0, "lpc_truncate");
	CHECK_EQ(atomic_load(&file->size), NEW_SIZE, "lpc's size");
	memset(back, 0xee, sizeof(back));
	CHECK_EQ(lpc_pread(file, back, sizeof(back), 0), NEW_SIZE, "lpc_pread to the end");
	CHECK_EQ(tst_first_diff(back, data, NEW_SIZE), -1, "lpc's bytes");
	CHECK_EQ(lpc_fsync(file), 0, "a second lpc_fsync");
	memset(back, 0xee, sizeof(back));
	CHECK_EQ(tst_kernel_read(path, back, sizeof(back)), NEW_SIZE, "the file's size");
	CHECK_EQ(tst_first_diff(back, data, NEW_SIZE), -1, "the file's bytes");
	CHECK_EQ(lpc_file_close(file), 0, "close");
	tst_cache_destroy(c);
	return tst_finish();
}
