/* SPDX-License-Identifier: MIT */
/*
 * d1_foreign_ref.c - F1: a stale lookup of one file's page holds, for a
 * moment, a reference on ANOTHER file's page, and lpc_invalidate of that
 * other page drops nothing (guarantee D.1, lpc.h: "a page in the range that
 * nobody held or locked while the call ran is gone when it returns").
 *
 * Before MR1-MR5 a lookup's R3 could succeed only on the page it loaded
 * (a grace period kept the frame's identity through its read section), so
 * the only transient references on a page were lookups OF that page.  Now
 * a frame removed by lpc_invalidate is cached again at once, for another
 * file, by its thread's miss, and a getter that loaded it from its old slot
 * wins R3 on the new page and holds it until its R4 fails.  The story:
 *   1. f's page 0 is cached in frame p, nobody holds it; no background
 *      reclaimer (pool.wake NULL); the test thread's private list is
 *      emptied (lpc_page_alloc, held).
 *   2. G looks up f's page 0 and parks at R3 (p loaded at R2).
 *   3. The test thread invalidates f's page 0 (p on its deferred list) and
 *      gets g's page 5: the miss reuses p (MR1), reads it, the test puts it.
 *      Nobody holds g's page 5 from here on.
 *   4. G's R3 succeeds on p (g's page 5 now, ref 1 -> 2); G parks at R4.
 *   5. The test thread invalidates g's page 5: must return 1 and leave the
 *      page uncached (D.1).  It returns 0: the freeze (A) failed on G's
 *      reference, taken by a lookup of a page of f.
 *   6. G goes on: R4 fails, it puts p and returns -ENOENT.
 * Exit: 0 when D.1 holds (or D.1 is changed to allow it and this program
 * with it), 1 while the defect stands, 77 if the frame was not reused.
 *
 * D1_PIN=1 in the environment: G is lpc_pin's fast path instead (parked at
 * P3, then P4: a speculative pin, LPC_PIN_BIAS references, on g's page), and
 * its slow path then reads f's page 0 itself (G's lpc_pin returns 1).
 *
 * Usage: [D1_PIN=1] d1_foreign_ref [--seed N]
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "core/debug.h"

#define PS 4096u
#define NFRAMES 512u
#define NPRIV 64u

static _Atomic int stage, parked;
static bool use_pin; /* D1_PIN=1: G is lpc_pin's fast path (P3, P4) */
static __thread bool is_g;
static struct lpc_file *f, *g;
static int g_rc = 1;

static void hook(enum lpc_yield_point yp)
{
	if (!is_g)
		return;
	if (yp == (use_pin ? LPC_YP_P3 : LPC_YP_R3) && atomic_load(&parked) == 0) {
		atomic_store(&parked, 1);
		while (atomic_load(&stage) < 1)
			tst_sleep_us(1000);
	} else if (yp == (use_pin ? LPC_YP_P4 : LPC_YP_R4) && atomic_load(&parked) == 1) {
		atomic_store(&parked, 2);
		while (atomic_load(&stage) < 2)
			tst_sleep_us(1000);
	}
}

static void *g_main(void *arg)
{
	struct lpc_page *p;

	(void)arg;
	/* Register with the cache first (find_slow): the real lookup then
	 * takes the lockless path. */
	if (lpc_page_find(f, 3, &p) == 0)
		lpc_page_put(p);
	is_g = true;
	if (use_pin) {
		/* P4 fails, the slow path reads f's page 0 into a frame of
		 * G's own: 1 page pinned. */
		g_rc = lpc_pin(f, 0, PS, LPC_PIN_READ, &p, 1);
		if (g_rc == 1)
			lpc_unpin(&p, 1, LPC_PIN_READ);
		return NULL;
	}
	g_rc = lpc_page_find(f, 0, &p);
	if (g_rc == 0)
		lpc_page_put(p);
	return NULL;
}

static bool wait_parked(int v)
{
	uint64_t t0 = tst_now_ns();

	while (atomic_load(&parked) != v)
		if (tst_now_ns() - t0 > 10000000000ull)
			return false;
		else
			tst_sleep_us(1000);
	return true;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_page *p, *q, *priv[NPRIV];
	struct lpc_tcache *t;
	char fpath[600], gpath[600];
	unsigned npriv = 0;
	pthread_t gt;
	int rc;

	use_pin = getenv("D1_PIN") && atoi(getenv("D1_PIN"));
	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("d1-f", 8 * PS, fpath, sizeof(fpath)) == 0, "file f");
	REQUIRE(tst_make_sparse("d1-g", 8 * PS, gpath, sizeof(gpath)) == 0, "file g");
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = LPC_LOOKUP_LOCKLESS;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	c->pool.wake = NULL; /* no background reclaimer, no drain */
	f = tst_file_open(c, fpath, O_RDONLY);
	g = tst_file_open(c, gpath, O_RDONLY);

	/* 1. */
	REQUIRE(lpc_page_get(f, 0, 0, &p) == 0, "f's page 0");
	lpc_page_put(p);
	t = lpc_tcache(&c->pool.owner);
	REQUIRE(t, "thread block");
	while (atomic_load(&t->nfree) && npriv < NPRIV)
		REQUIRE(lpc_page_alloc(c, &priv[npriv++]) == 0, "private page");
	REQUIRE(atomic_load(&t->nfree) == 0, "the private list is not empty");

	/* 2. */
	lpc_yield_set_hook(hook);
	REQUIRE(lpc_yield_arm(use_pin ? "P3,P4" : "R3,R4", 1.0, 1) == 0, "arm");
	REQUIRE(pthread_create(&gt, NULL, g_main, NULL) == 0, "G");
	REQUIRE(wait_parked(1), "G never reached R3");

	/* 3. */
	CHECK_EQ(lpc_invalidate(f, 0, PS), 1, "invalidate of f's page 0");
	REQUIRE(lpc_page_get(g, 5, 0, &q) == 0, "g's page 5");
	if (q != p) {
		printf("SKIP: the miss did not reuse f's frame (MR1 absent?)\n");
		lpc_page_put(q);
		atomic_store(&stage, 2);
		pthread_join(gt, NULL);
		return 77;
	}
	lpc_page_put(q);

	/* 4. */
	atomic_store(&stage, 1);
	REQUIRE(wait_parked(2), "G's R3 failed on the reused frame (it never reached R4)");
	printf("G (a %s of f's page 0) holds frame %u, now g's page 5: ref %u\n", use_pin ? "pin" : "lookup", p->id,
	       atomic_load(&p->ref));

	/* 5. D.1: nobody holds or locks g's page 5. */
	rc = lpc_invalidate(g, 5 * PS, PS);
	printf("lpc_invalidate(g, page 5) = %d (want 1)\n", rc);
	CHECK_EQ(rc, 1, "D.1: invalidate dropped nothing: g's page 5 held by a lookup of f");
	rc = lpc_page_find(g, 5, &q);
	CHECK_EQ(rc, -ENOENT, "D.1: g's page 5 still cached after the invalidate returned");
	if (rc == 0)
		lpc_page_put(q);

	/* 6. */
	atomic_store(&stage, 2);
	pthread_join(gt, NULL);
	lpc_yield_arm(NULL, 0, 0);
	lpc_yield_set_hook(NULL);
	CHECK_EQ(g_rc, use_pin ? 1 : -ENOENT, "G's lookup (or pin) of f's page 0");

	for (unsigned i = 0; i < npriv; i++)
		lpc_page_put(priv[i]);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_file_close(g), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	return tst_finish();
}
