/* SPDX-License-Identifier: MIT */
/*
 * regress_waiter_recheck.c - story (b): the waiters of a failed read in
 * test_io_errors (commit e287d25).
 *
 * test_io_errors started W waiters on a page whose read was held at the gate,
 * waited until all W held a reference on the page, then failed the read and
 * expected every waiter to share the failure: W x -EIO and one read.  Once in
 * a while a waiter read the page again.  The interleaving:
 *   1. M misses on page 0, inserts its locked page P (M3) and reads (M4): the
 *      read is held at the gate.
 *   2. W1 looks page 0 up: R2 loads P, R3 takes a reference - W1 now counts
 *      as a holder of P - and W1 is preempted before its re-check (R4).
 *   3. W2 looks page 0 up, re-checks (R4), finds P in flight, counts a miss
 *      and sleeps on P's lock (M6).
 *   4. The test sees its holders, fails the read: M deletes P (B), sets
 *      ERROR, unlocks.  W2 wakes, sees ERROR: -EIO, sharing M's read.
 *   5. W1 resumes: R4 finds the slot no longer holds P, so W1 drops P and
 *      looks up again from the root - correctly, its lookup is now ordered
 *      after the delete - misses, and reads the page itself.
 * Holding a reference is not the same as having re-checked.  The fix in
 * test_io_errors waits until every waiter has counted its miss, which a
 * waiter does only after R4.  Here W1 is parked at its R4 yield point, not
 * slept past it, and the test checks both outcomes: W2 shares the failed read
 * (-EIO), W1 reads again and gets the file's data; two reads, one failed.
 */
#include <fcntl.h>

#include "../common/gate_io.h"
#include "../common/lpc_test.h"
#include "../common/yield_stop.h"

static void *w1_main(void *arg)
{
	tst_stop_me();
	return tst_getter_main(arg);
}

static void story(struct lpc_cache *c, struct lpc_file *f)
{
	struct tst_getter m = { .f = f, .index = 0 }, w1 = m, w2 = m;
	struct lpc_stats before, after;
	pthread_t mt, w1t, w2t;
	char want[4096];

	lpc_stats(c, &before);
	tst_stop_arm(LPC_YP_R4);
	tst_gate_close();
	REQUIRE(pthread_create(&mt, NULL, tst_getter_main, &m) == 0, "M");
	REQUIRE(tst_gate_wait_entered(1, 10000), "M's read reached the gate");
	REQUIRE(pthread_create(&w1t, NULL, w1_main, &w1) == 0, "W1");
	REQUIRE(tst_stop_wait(), "W1 parked before R4");
	REQUIRE(pthread_create(&w2t, NULL, tst_getter_main, &w2) == 0, "W2");
	/* M's miss and W2's, counted after W2's re-check; W1 counts none yet. */
	REQUIRE(tst_wait_misses(c, before.misses + 2, 10000), "W2 re-checked and waits");
	REQUIRE(tst_wait_page_holders(f, 0, 2, 10000), "W1 and W2 hold P");
	tst_gate_open(EIO);			/* M's read fails: B, ERROR, unlock */
	pthread_join(mt, NULL);
	pthread_join(w2t, NULL);
	tst_gate_clear_error();
	tst_stop_release();
	pthread_join(w1t, NULL);
	tst_stop_disarm();
	lpc_stats(c, &after);

	CHECK_EQ(m.rc, -EIO, "M gets its read's error");
	CHECK_EQ(w2.rc, -EIO, "W2, past its re-check, shares the failed read");
	CHECK_EQ(w1.rc, 0, "W1, parked before its re-check, reads the page again");
	if (w1.rc == 0) {
		tst_file_bytes(7, 0, want, sizeof(want));
		CHECK(!memcmp(lpc_page_data(w1.p), want, sizeof(want)), "W1's page has the file's data");
		lpc_page_put(w1.p);
	}
	CHECK_EQ(after.reads - before.reads, 2, "M's failed read and W1's own");
	CHECK_EQ(after.read_errors - before.read_errors, 1, "one failed read");
	CHECK(after.retries > before.retries, "W1's R4 saw the slot changed and retried");
}

int main(int argc, char **argv)
{
	struct lpc_cache *c;
	struct lpc_file *f;
	char path[512];

	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	c = tst_cache_create(64 * 4096, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	REQUIRE(tst_make_file("b", 4 * 4096, 7, path, sizeof(path)) == 0, "file");
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &f) == 0, "open");
	tst_gate_install(c);

	story(c, f);

	lpc_file_close(f);
	lpc_cache_destroy(c);
	tst_rm_dir();
	return tst_finish();
}
