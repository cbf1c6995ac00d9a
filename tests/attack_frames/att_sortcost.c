/* att_sortcost.c - the cost of SG0 (page/alloc.c chain_sort) on a large
 * chain in random frame order (a random-read workload's pages, freed by an
 * invalidate in page order, come to lpc_page_free_chain so: the reclaimer's
 * drain and reclaim() run it under reclaim_lock) against the same chain in
 * frame order (what the cut before SG0 cost: one walk).
 * Usage: att_sortcost [frames]   (default 262144: 1 GiB of 4 KiB frames)
 * Prints the times, and one walk of the shuffled chain (the cost of SG1's cut
 * alone, what lpc_page_free_chain did before SG0); exits 1 when freeing the
 * shuffled chain costs more than 10 such walks, 0 otherwise. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double walk_ms; /* one walk of the chain about to be freed: SG1's cut, the cost before SG0 */

static double free_all(struct lpc_cache *c, struct lpc_page **pg, unsigned n, int shuffle)
{
	uint64_t rng = 12345;
	volatile unsigned sink = 0;
	double t0;

	for (unsigned i = 0; i < n; i++)
		REQUIRE(lpc_page_alloc(c, &pg[i]) == 0, "frame %u of %u", i, n);
	if (shuffle)
		for (unsigned i = n - 1; i > 0; i--) {
			unsigned j = (unsigned)(tst_rnd(&rng) % (i + 1));
			struct lpc_page *x = pg[i];

			pg[i] = pg[j];
			pg[j] = x;
		}
	for (unsigned i = 0; i < n; i++) {
		atomic_store_explicit(&pg[i]->ref, 0, memory_order_relaxed);
		atomic_store_explicit(&pg[i]->flags, 0, memory_order_relaxed);
#if LPC_DEBUG
		atomic_store_explicit(&pg[i]->dbg_state, LPC_DBG_FREE, memory_order_relaxed);
#endif
		pg[i]->next = i + 1 < n ? pg[i + 1] : NULL;
	}
	t0 = now_ms();
	for (struct lpc_page *q = pg[0]; q; q = q->next)
		sink += q->id;
	walk_ms = now_ms() - t0;
	(void)sink;
	t0 = now_ms();
	lpc_page_free_chain(&c->pool, pg[0], pg[n - 1], n);
	return now_ms() - t0;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 262144;
	struct lpc_page **pg = calloc(n, sizeof(*pg));
	struct lpc_cache *c = tst_cache_create((size_t)n * 4096, 4096, LPC_IO_NULL,
					       LPC_LOOKUP_LOCKLESS);
	double ord = 1e9, shuf = 1e9, walk = 1e9, t;

	for (int r = 0; r < 3; r++) {
		t = free_all(c, pg, n, 0);
		ord = t < ord ? t : ord;
		t = free_all(c, pg, n, 1);
		shuf = t < shuf ? t : shuf;
		walk = walk_ms < walk ? walk_ms : walk;
	}
	printf("frames %u: lpc_page_free_chain ordered %.2f ms, shuffled %.2f ms; one walk of the "
	       "shuffled chain %.2f ms (sort = x%.1f walks), best of 3\n",
	       n, ord, shuf, walk, shuf / walk);
	tst_cache_destroy(c);
	free(pg);
	return shuf > 10 * walk ? 1 : 0;
}
