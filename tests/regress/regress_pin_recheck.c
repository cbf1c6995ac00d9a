/* SPDX-License-Identifier: MIT */
/*
 * regress_pin_recheck.c - why lpc_pin's fast path re-checks the slot (P4,
 * src/filemap/pin.c), told as two stories with a truncate-like removal: the
 * one the last close and (once writes land) truncate do, which deletes the
 * slot and drops the index's reference but leaves holders a valid page.
 *
 * Story (a), G stopped before P3:
 *   1. Page 0 is cached; H (the test) holds a reference on it, P.
 *   2. G pins [0, 1 page): P2 loads P from the slot, and G is stopped.
 *   3. P is removed truncate-like (lpc_filemap_delete): the slot is empty,
 *      ref is H's 1.
 *   4. G resumes: P3 succeeds (ref > 0: H holds it), P4 finds the slot no
 *      longer holds P, unpins it and the slow path reads page 0 again.
 *   G must return a new page, never P (not cached any more: a write pin
 *   through it would be lost).  With P4 removed (tests/mutants, no-p4) the
 *   LPC_DEBUG check LOOKUP-NOT-IN-INDEX fires here, deterministically.
 * Story (b), G stopped after P3 (its pin taken, slot not re-checked): the
 * removal drops the index's reference under G's pin; P4 sees the slot empty.
 *
 * Built only with LPC_DEBUG (yield points P3, P4).
 */
#include <fcntl.h>
#include <pthread.h>

#include "../common/lpc_test.h"
#include "../common/yield_stop.h"
#include "filemap/filemap.h"

struct pinner {
	struct lpc_file *f;
	struct lpc_page *p;
	int rc;
};

static void *g_main(void *arg)
{
	struct pinner *g = arg;

	tst_stop_me();
	g->rc = lpc_pin(g->f, 0, 4096, LPC_PIN_READ, &g->p, 1);
	return NULL;
}

static void story(struct lpc_cache *c, struct lpc_file *f, enum lpc_yield_point at)
{
	struct pinner g = { .f = f };
	struct lpc_stats before, after;
	struct lpc_page *held;
	pthread_t gt;
	char want[4096];

	lpc_invalidate(f, 0, 0);
	REQUIRE(lpc_page_get(f, 0, 0, &held) == 0, "page 0 cached, held by H");
	lpc_stats(c, &before);
	tst_stop_arm(at);
	REQUIRE(pthread_create(&gt, NULL, g_main, &g) == 0, "G");
	REQUIRE(tst_stop_wait(), "G reached the yield point before %s", lpc_yield_name(at));
	CHECK(lpc_filemap_delete(f, held, 0), "truncate-like removal of P");
	tst_stop_release();
	pthread_join(gt, NULL);
	tst_stop_disarm();
	lpc_stats(c, &after);
	CHECK_EQ(g.rc, 1, "G (stopped before %s) pins page 0", lpc_yield_name(at));
	if (g.rc == 1) {
		CHECK(g.p != held, "G's page is not the removed P");
		tst_file_bytes(5, 0, want, sizeof(want));
		CHECK(!memcmp(lpc_page_data(g.p), want, sizeof(want)), "G's page has the data");
		lpc_unpin(&g.p, 1, LPC_PIN_READ);
	}
	CHECK_EQ(after.pin_slow - before.pin_slow, 1, "G took the slow path");
	CHECK_EQ(after.reads - before.reads, 1, "G read page 0 again");
	CHECK_EQ(atomic_load(&held->ref), 1, "P: H's reference alone, G's pin dropped");
	lpc_page_put(held);
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
	REQUIRE(tst_make_file("a", 4 * 4096, 5, path, sizeof(path)) == 0, "file");
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &f) == 0, "open");
	story(c, f, LPC_YP_P3);
	story(c, f, LPC_YP_P4);
	lpc_file_close(f);
	CHECK_EQ(lpc_cache_destroy(c), 0, "destroy");
	tst_rm_dir();
	return tst_finish();
}
