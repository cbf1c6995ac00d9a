/* SPDX-License-Identifier: MIT */
/*
 * test_locked_miss.c - LOCKED mode's miss (src/filemap/miss.c): a miss holds
 * the file's rwlock for reading across its insert and read, so
 *  - lpc_invalidate (which takes it for writing) waits for a read in flight
 *    (held at the gate of tests/common/gate_io.h) and returns only once it
 *    has ended; in lockless mode it returns at once, leaving the page alone;
 *  - misses on other pages of the same file run beside it: a second read
 *    reaches the backend while the first is held;
 *  - a failed read still leaves nothing cached (the delete, under the write
 *    lock, after the read lock is dropped).
 *
 * Usage: test_locked_miss [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <pthread.h>

#include "../common/lpc_test.h"
#include "../common/gate_io.h"

struct inval {
	struct lpc_file *f;
	_Atomic int done;
	int rc;
};

static void *inval_main(void *arg)
{
	struct inval *v = arg;

	v->rc = lpc_invalidate(v->f, 0, 0);
	atomic_store(&v->done, 1);
	return NULL;
}

static void t_invalidate_waits(int mode)
{
	const size_t ps = 4096;
	struct lpc_cache *c = tst_cache_create(64 * ps, ps, LPC_IO_NULL, mode);
	struct tst_getter a, b;
	struct lpc_page *p;
	struct inval v = { 0 };
	pthread_t ta, tb, tv;
	char path[600];

	REQUIRE(tst_make_sparse(mode ? "lm-locked" : "lm", 8 * ps, path, sizeof(path)) == 0);
	v.f = tst_file_open(c, path, O_RDONLY);
	REQUIRE(lpc_page_get(v.f, 7, 0, &p) == 0, "page 7 cached");
	lpc_page_put(p);
	tst_gate_install(c);
	tst_gate_close();
	a = (struct tst_getter){ .f = v.f, .index = 5 };
	b = (struct tst_getter){ .f = v.f, .index = 6 };
	REQUIRE(pthread_create(&ta, NULL, tst_getter_main, &a) == 0);
	REQUIRE(tst_gate_wait_entered(1, 5000), "the read of page 5 reached the backend");
	REQUIRE(pthread_create(&tb, NULL, tst_getter_main, &b) == 0);
	CHECK(tst_gate_wait_entered(2, 5000), "a miss on page 6 runs beside the read of 5");
	REQUIRE(pthread_create(&tv, NULL, inval_main, &v) == 0);
	if (mode == LPC_LOOKUP_LOCKED) {
		tst_sleep_us(50000);
		CHECK_EQ(atomic_load(&v.done), 0, "LOCKED invalidate waits for the reads in flight");
	} else {
		/* Returns while both reads are still held at the gate: polled
		 * (up to 10 s), not a fixed 50 ms, which a loaded machine
		 * can spend before the thread even runs. */
		for (unsigned ms = 0; ms < 10000 && !atomic_load(&v.done); ms++)
			tst_sleep_us(1000);
		CHECK_EQ(atomic_load(&v.done), 1, "lockless invalidate does not wait");
	}
	tst_gate_open(0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_join(tv, NULL);
	CHECK_EQ(a.rc, 0, "reader of 5");
	CHECK_EQ(b.rc, 0, "reader of 6");
	if (mode == LPC_LOOKUP_LOCKED)
		CHECK(v.rc == 1 || v.rc == 3, "invalidate dropped page 7 (and 5, 6 if unheld): %d", v.rc);
	else
		CHECK_EQ(v.rc, 1, "invalidate dropped page 7 only (5 and 6 were in flight)");
	if (a.rc == 0)
		lpc_page_put(a.p);
	if (b.rc == 0)
		lpc_page_put(b.p);

	/* A failed read: nothing cached, and the next get reads again. */
	lpc_invalidate(v.f, 0, 0);
	tst_gate_close();
	a = (struct tst_getter){ .f = v.f, .index = 3 };
	REQUIRE(pthread_create(&ta, NULL, tst_getter_main, &a) == 0);
	REQUIRE(tst_gate_wait_entered(1, 5000), "the read of page 3 reached the backend");
	tst_gate_open(EIO);
	pthread_join(ta, NULL);
	tst_gate_clear_error();
	CHECK_EQ(a.rc, -EIO, "failed read");
	CHECK_EQ(lpc_page_find(v.f, 3, &p), -ENOENT, "nothing cached");
	CHECK_EQ(lpc_page_get(v.f, 3, 0, &p), 0, "read again");
	lpc_page_put(p);
	CHECK_EQ(lpc_file_close(v.f), 0);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_invalidate_waits(LPC_LOOKUP_LOCKLESS));
	TST_RUN(t_invalidate_waits(LPC_LOOKUP_LOCKED));
	return tst_finish();
}
