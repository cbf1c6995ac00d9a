/* SPDX-License-Identifier: MIT */
/*
 * test_page_find.c - lpc_page_find on a read in flight (held at the gate of
 * tests/common/gate_io.h): -EAGAIN, not -ENOENT, and lpc_invalidate leaves
 * the page alone; a second lpc_page_get waits for the first one's read rather
 * than issuing its own, in both lookup modes.
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_page_find [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <pthread.h>

#include "../common/lpc_test.h"
#include "../common/gate_io.h"

/* --- lpc_page_find on a read in flight (gated backend) --- */

/* Checks guarantee A.2 of include/lpc/lpc.h. */
static void t_find_in_flight(int mode)
{
	const size_t ps = 4096;
	struct lpc_cache *c = tst_cache_create(64 * ps, ps, LPC_IO_NULL, mode);
	struct tst_expect e = { .backend = LPC_IO_NULL, .size = 8 * ps, .ps = ps };
	struct lpc_file *f;
	struct lpc_page *p = NULL;
	struct lpc_stats s0, s1;
	struct tst_getter a, b;
	pthread_t ta, tb;
	char path[600];

	REQUIRE(tst_make_sparse(mode ? "inflight-locked" : "inflight", e.size, path,
				sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = tst_file_open(c, path, O_RDONLY);
	tst_gate_install(c);
	tst_gate_close();
	lpc_stats(c, &s0);
	a = (struct tst_getter){ .f = f, .index = 5 };
	b = (struct tst_getter){ .f = f, .index = 5 };
	REQUIRE(pthread_create(&ta, NULL, tst_getter_main, &a) == 0);
	if (!CHECK(tst_gate_wait_entered(1, 5000), "the read never reached the backend")) {
		tst_gate_open(0);
		pthread_join(ta, NULL);
		return;
	}
	/* The page is inserted, locked, not uptodate. */
	CHECK_EQ(lpc_page_find(f, 5, &p), -EAGAIN, "find on a read in flight");
	CHECK_EQ(lpc_page_find(f, 5, &p), -EAGAIN, "find on a read in flight, again");
	CHECK_EQ(lpc_page_find(f, 4, &p), -ENOENT, "find next to it");
	/* LOCKED mode: invalidate waits for the read in flight (miss.c), which
	 * the gate holds; tests/unit/test_locked_miss.c checks that wait. */
	if (mode == LPC_LOOKUP_LOCKLESS)
		CHECK_EQ(lpc_invalidate(f, 0, 0), 0, "invalidate dropped a page in flight");
	/* A second getter waits for it (its miss is counted before it sleeps). */
	lpc_stats(c, &s1);
	REQUIRE(pthread_create(&tb, NULL, tst_getter_main, &b) == 0);
	CHECK(tst_wait_misses(c, s1.misses + 1, 5000), "second getter never missed");
	tst_sleep_us(20000);
	CHECK_EQ(tst_gate_entered(), 1, "second getter issued its own read");
	tst_gate_open(0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_EQ(a.rc, 0, "reader");
	CHECK_EQ(b.rc, 0, "waiter");
	if (a.rc == 0 && b.rc == 0) {
		CHECK(a.p == b.p, "two pages for one index");
		CHECK(tst_check_page(&e, 5, lpc_page_data(b.p)), "waiter's data");
	}
	lpc_stats(c, &s1);
	CHECK_EQ(s1.reads - s0.reads, 1, "one read for two getters");
	if (CHECK_EQ(lpc_page_find(f, 5, &p), 0, "find after the read")) {
		CHECK(p == a.p);
		lpc_page_put(p);
	}
	if (a.rc == 0)
		lpc_page_put(a.p);
	if (b.rc == 0)
		lpc_page_put(b.p);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_find_in_flight(LPC_LOOKUP_LOCKLESS));
	TST_RUN(t_find_in_flight(LPC_LOOKUP_LOCKED));
	return tst_finish();
}
