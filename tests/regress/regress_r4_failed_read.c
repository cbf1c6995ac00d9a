/* SPDX-License-Identifier: MIT */
/*
 * regress_r4_failed_read.c - story (a): round e of stress_same_page_miss
 * (commits 25101f8, 5d5b879).
 *
 * The interleaving, once in about 80,000 gated failing rounds under TSan:
 *   1. M misses on page 0, inserts its locked page P (M3) and reads (M4):
 *      the read is held at the gate.
 *   2. G looks page 0 up: R2 loads P from the slot, R3 takes a reference
 *      (P counts G as a holder now) - and G is preempted before R4.
 *   3. The read fails: M deletes P from the index (B), sets ERROR, unlocks
 *      and returns -EIO.
 *   4. G resumes: R4 finds the slot no longer holds P, drops its reference
 *      and retries from the root: the index is empty, so G misses and reads
 *      the page again - correct, its lookup is ordered after the delete.
 * The stress test once treated G's second read as a bug.  Here G is stopped
 * at the yield point before R4 (a hook, not a sleep) until M has returned,
 * and the test checks that G retried (a retry counted), read again (two
 * reads in all, one failed) and got the right data.
 *
 * Part two is the same with G stopped before R3, while the test holds P
 * (an earlier getter that still has it): R3 then succeeds on a page already
 * out of the index, and only R4 keeps G from returning it.  With R4 removed
 * (tests/mutants, no-r4) the LPC_DEBUG check LOOKUP-NOT-IN-INDEX fires here,
 * deterministically.
 */
#include <fcntl.h>

#include "../common/gate_io.h"
#include "../common/lpc_test.h"
#include "../common/yield_stop.h"

static void *g_main(void *arg)
{
	tst_stop_me();
	return tst_getter_main(arg);
}

static void story(struct lpc_cache *c, struct lpc_file *f, enum lpc_yield_point at,
		  bool hold)
{
	struct tst_getter m = { .f = f, .index = 0 }, g = { .f = f, .index = 0 };
	struct lpc_stats before, after;
	struct lpc_page *held = NULL;
	pthread_t mt, gt;
	char want[4096];

	lpc_invalidate(f, 0, 0);
	tst_stop_arm(at);
	lpc_stats(c, &before);
	tst_gate_close();
	REQUIRE(pthread_create(&mt, NULL, tst_getter_main, &m) == 0, "M");
	REQUIRE(tst_gate_wait_entered(1, 10000), "M's read reached the gate");
	if (hold) {
		held = lpc_filemap_lookup(f, 0, lpc_tcache(&c->pool.owner)); /* an earlier holder of P */
		REQUIRE(held, "P is in the index");
	}
	REQUIRE(pthread_create(&gt, NULL, g_main, &g) == 0, "G");
	REQUIRE(tst_stop_wait(), "G reached the yield point before %s", lpc_yield_name(at));
	tst_gate_open(EIO);			/* M's read fails: B, ERROR, unlock */
	pthread_join(mt, NULL);
	CHECK_EQ(m.rc, -EIO, "M gets the read's error");
	tst_gate_clear_error();
	tst_stop_release();
	pthread_join(gt, NULL);
	if (held)
		lpc_page_put(held);
	lpc_stats(c, &after);
	CHECK_EQ(g.rc, 0, "G (stopped before %s) reads the page again", lpc_yield_name(at));
	if (g.rc == 0) {
		tst_file_bytes(7, 0, want, sizeof(want));
		CHECK(!memcmp(lpc_page_data(g.p), want, sizeof(want)), "G's page has the file's data");
		lpc_page_put(g.p);
	}
	CHECK_EQ(after.reads - before.reads, 2, "one failed read and G's own");
	CHECK_EQ(after.read_errors - before.read_errors, 1, "one failed read");
	CHECK(after.retries > before.retries, "G's lookup retried (R%s)",
	      at == LPC_YP_R4 ? "4 saw the slot changed" : "4 saw the slot changed after R3");
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
	REQUIRE(tst_make_file("a", 4 * 4096, 7, path, sizeof(path)) == 0, "file");
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &f) == 0, "open");
	tst_gate_install(c);
	story(c, f, LPC_YP_R4, false);
	story(c, f, LPC_YP_R3, true);

	tst_stop_disarm();
	lpc_file_close(f);
	lpc_cache_destroy(c);
	tst_rm_dir();
	return tst_finish();
}
