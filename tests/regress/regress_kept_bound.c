/* SPDX-License-Identifier: MIT */
/*
 * regress_kept_bound.c - story: the bound of kept leaves reached between
 * an invalidate's decision and its delete (index/radix.c KL1; found by
 * review, tests/attack_kl).  invalidate_one_fast (filemap/remove.c) decides
 * with lpc_radix_leaf_delete_ok before the freeze (A) and deletes at B in
 * the same hold.  The decision for a leaf's last entry reads root->kept,
 * which another thread's fast delete of another leaf of the same file
 * raises under that leaf's lock alone.  Story: kept = LPC_RADIX_KEEP - 1;
 * thread A invalidates the single page of leaf 63 and parks at yield point
 * B (page frozen, the decision yes); main invalidates the single page of
 * leaf 64 (kept reaches the bound); A goes on.  When B asked again
 * (lpc_radix_leaf_delete), it was refused and the page A counted as
 * dropped, and freed, stayed in the file's index.  B now acts on the
 * decision (lpc_radix_leaf_take): the page leaves its slot.
 * Exit 0 pass, 1 fail, 77 skip (needs LPC_DEBUG's yield points).
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "../common/yield_stop.h"
#include "cache/cache.h"

#define PS 4096u
#define NFRAMES 512u
#define LEAF ((uint64_t)1 << LPC_RADIX_SHIFT)

static struct lpc_cache *c;
static struct lpc_file *f;
static int a_ret;

static void *a_main(void *arg)
{
	struct lpc_page *p;

	(void)arg;
	if (lpc_page_find(f, 1, &p) == 0) /* registers the thread */
		lpc_page_put(p);
	tst_stop_me();
	a_ret = lpc_invalidate(f, (LPC_RADIX_KEEP - 1) * LEAF * PS, PS);
	return NULL;
}

int main(int argc, char **argv)
{
	char path[512];
	struct lpc_config cfg;
	struct lpc_page *p, *victim = NULL;
	pthread_t th;
	void *e;

	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("kept", (LPC_RADIX_KEEP + 2) * LEAF * PS, path, sizeof(path)) == 0,
		"file");
	lpc_config_init(&cfg);
	cfg.cache_bytes = NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	f = tst_file_open(c, path, O_RDONLY);
	REQUIRE(!f->locked_lookup, "lockless mode");
	lpc_reclaim_stop(&c->reclaim);
	/* One page in each of LPC_RADIX_KEEP + 1 leaves. */
	for (uint64_t i = 0; i <= LPC_RADIX_KEEP; i++) {
		REQUIRE(lpc_page_get(f, i * LEAF, 0, &p) == 0, "get leaf %" PRIu64, i);
		if (i == LPC_RADIX_KEEP - 1)
			victim = p;
		lpc_page_put(p);
	}
	/* Keep LPC_RADIX_KEEP - 1 leaves. */
	for (uint64_t i = 0; i + 1 < LPC_RADIX_KEEP; i++)
		REQUIRE(lpc_invalidate(f, i * LEAF * PS, PS) == 1, "invalidate leaf %" PRIu64, i);
	printf("kept %u\n", atomic_load(&f->tree.kept));
	REQUIRE(atomic_load(&f->tree.kept) == LPC_RADIX_KEEP - 1, "kept = bound - 1");

	tst_stop_arm(LPC_YP_B);
	REQUIRE(pthread_create(&th, NULL, a_main, NULL) == 0, "thread A");
	REQUIRE(tst_stop_wait(), "A parked at B with its page frozen");
	CHECK_EQ(lpc_invalidate(f, LPC_RADIX_KEEP * LEAF * PS, PS), 1, "main keeps leaf 64");
	printf("kept %u after main's invalidate\n", atomic_load(&f->tree.kept));
	tst_stop_release();
	pthread_join(th, NULL);
	tst_stop_disarm();

	printf("A's lpc_invalidate returned %d\n", a_ret);
	lpc_rcu_read_lock();
	e = lpc_radix_lookup(&f->tree, (LPC_RADIX_KEEP - 1) * LEAF, NULL);
	lpc_rcu_read_unlock();
	printf("slot of the victim now %p (victim %p, ref %u)\n", e, (void *)victim,
	       atomic_load(&victim->ref));
	CHECK(!(a_ret == 1 && e == victim),
	      "DEFECT: invalidate dropped (and freed) a page that is still in the index");
	CHECK_EQ(atomic_load(&f->tree.kept), LPC_RADIX_KEEP + 1,
		 "kept: the bound passed by the one delete that had decided");
	if (a_ret == 1 && e == victim)
		return tst_finish(); /* a freed page in the tree: no close */
	lpc_file_close(f);
	REQUIRE(lpc_cache_destroy(c) == 0, "destroy");
	return tst_finish();
}
