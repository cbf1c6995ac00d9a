/* SPDX-License-Identifier: MIT */
/*
 * test_page_alloc.c - private pages (lpc_page_alloc): every frame and then -ENOMEM,
 * aligned, disjoint frames, puts that return them at once; and frames left
 * on other (parked) threads' private lists are still allocated before
 * -ENOMEM; and frames freed as a chain in any order are handed out again
 * back to back, in the arena's order (page/alloc.c SG0).
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_page_alloc [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

/* --- private pages --- */
static void t_alloc(size_t ps)
{
	enum { N = 12 };
	struct lpc_cache *c = tst_cache_create(N * ps, ps, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	struct lpc_page *pg[N + 1];
	struct lpc_stats st, st0;
	unsigned char *d[N];

	lpc_stats(c, &st0);
	CHECK_EQ(st0.frames, N);
	CHECK_EQ(st0.frames_free, N);
	/* One alloc/put. */
	REQUIRE(lpc_page_alloc(c, &pg[0]) == 0);
	CHECK(lpc_page_data(pg[0]) != NULL);
	memset(lpc_page_data(pg[0]), 0x5a, ps);
	lpc_page_put(pg[0]);
	/* Every frame, then -ENOMEM. */
	for (int i = 0; i < N; i++) {
		if (!CHECK_EQ(lpc_page_alloc(c, &pg[i]), 0, "alloc %d of %d", i, N)) {
			tst_cache_destroy(c);
			return;
		}
		d[i] = lpc_page_data(pg[i]);
		CHECK(((uintptr_t)d[i] & ((ps < 4096 ? ps : 4096) - 1)) == 0, "frame aligned");
		memset(d[i], i + 1, ps);
	}
	for (int i = 0; i < N; i++) {
		for (int j = 0; j < N; j++)
			if (i != j)
				CHECK(d[i] + ps <= d[j] || d[j] + ps <= d[i],
				      "frames %d and %d overlap", i, j);
		CHECK(d[i][0] == i + 1 && d[i][ps - 1] == i + 1, "frame %d overwritten", i);
	}
	lpc_stats(c, &st0);
	CHECK_EQ(st0.frames_free, 0);
	CHECK_EQ(lpc_page_alloc(c, &pg[N]), -ENOMEM, "alloc with every frame held");
	lpc_stats(c, &st);
	CHECK_EQ(st.alloc_failures - st0.alloc_failures, 1, "alloc_failures");
	CHECK_EQ(lpc_cache_destroy(c), -EBUSY);
	for (int i = 0; i < N; i++)
		lpc_page_put(pg[i]);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, N, "private puts return every frame at once");
	for (int i = 0; i < N; i++)
		CHECK_EQ(lpc_page_alloc(c, &pg[i]), 0, "alloc after put");
	for (int i = 0; i < N; i++)
		lpc_page_put(pg[i]);
	tst_cache_destroy(c);
}

/* --- frames on other threads' private lists are not lost to -ENOMEM --- */
struct hoarder {
	struct lpc_cache *c;
	pthread_barrier_t *parked, *release;
	int got;
};

/* Allocates a few frames and frees them again, which leaves them on this
 * thread's private list, then parks until released. */
static void *hoard(void *arg)
{
	struct hoarder *h = arg;
	struct lpc_page *pg[16];

	h->got = 0;
	while (h->got < 16 && lpc_page_alloc(h->c, &pg[h->got]) == 0)
		h->got++;
	for (int i = 0; i < h->got; i++)
		lpc_page_put(pg[i]);
	pthread_barrier_wait(h->parked);
	pthread_barrier_wait(h->release);
	return NULL;
}

/* Checks guarantees E.1, E.2 of include/lpc/lpc.h. */
static void t_hoarded_frames(void)
{
	enum { N = 256, H = 3 };
	struct lpc_cache *c = tst_cache_create(N * 4096, 4096, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	struct lpc_page **pg = calloc(N + 1, sizeof(*pg));
	struct hoarder h[H];
	pthread_t th[H];
	pthread_barrier_t parked, release;
	struct lpc_stats st;
	int n = 0;

	REQUIRE(pg);
	pthread_barrier_init(&parked, NULL, H + 1);
	pthread_barrier_init(&release, NULL, H + 1);
	for (int i = 0; i < H; i++) {
		h[i] = (struct hoarder){ .c = c, .parked = &parked, .release = &release };
		REQUIRE(pthread_create(&th[i], NULL, hoard, &h[i]) == 0);
	}
	pthread_barrier_wait(&parked);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, N, "every frame free while the hoarders park");
	/* Every frame, the hoarded ones included, before -ENOMEM. */
	while (n <= N && lpc_page_alloc(c, &pg[n]) == 0)
		n++;
	CHECK_EQ(n, N, "frames allocated before -ENOMEM (hoarders got %d %d %d)", h[0].got,
		 h[1].got, h[2].got);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, 0);
	for (int i = 0; i < n; i++)
		lpc_page_put(pg[i]);
	pthread_barrier_wait(&release);
	for (int i = 0; i < H; i++)
		pthread_join(th[i], NULL);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, N, "every frame free again");
	pthread_barrier_destroy(&parked);
	pthread_barrier_destroy(&release);
	free(pg);
	tst_cache_destroy(c);
}

/* --- SG0: a freed chain comes back out in frame order --- */
/* Every frame of a cache taken, freed as one chain in a random order (or
 * in reverse: a private list's order), then taken again: each allocation
 * gets the frame after the previous one's; a chain of 512 frames is merged
 * as it is, one of 12288 dealt into buckets first (alloc.c chain_sort).
 * Before SG0 the frames came out in the order freed, and a run of pages
 * read into them was one stretch per page (uring.c io_pieces: READV past
 * URING_PIECES stretches). */
static void t_free_order(bool reverse, bool long_chain)
{
	enum { MAXN = 12288 };
	const unsigned N = long_chain ? MAXN : 512;
	struct lpc_cache *c = tst_cache_create(N * 4096, 4096, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	static struct lpc_page *pg[MAXN];
	uint64_t rng = tst_seed;
	unsigned out = 0, down = 0;

	for (unsigned i = 0; i < N; i++)
		REQUIRE(lpc_page_alloc(c, &pg[i]) == 0, "frame %u of %u", i, N);
	for (unsigned i = N - 1; i > 0; i--) {
		unsigned j = reverse ? N - 1 - i : (unsigned)(tst_rnd(&rng) % (i + 1));
		struct lpc_page *x = pg[i];

		if (reverse && j >= i)
			break;
		pg[i] = pg[j];
		pg[j] = x;
	}
	/* As a free path hands its chain over (ref 0, not in any list). */
	for (unsigned i = 0; i < N; i++) {
		atomic_store_explicit(&pg[i]->ref, 0, memory_order_relaxed);
		atomic_store_explicit(&pg[i]->flags, 0, memory_order_relaxed);
#if LPC_DEBUG
		atomic_store_explicit(&pg[i]->dbg_state, LPC_DBG_FREE, memory_order_relaxed);
#endif
		pg[i]->next = i + 1 < N ? pg[i + 1] : NULL;
	}
	lpc_page_free_chain(&c->pool, pg[0], pg[N - 1], N);
	for (unsigned i = 0; i < N; i++)
		REQUIRE(lpc_page_alloc(c, &pg[i]) == 0, "frame %u of %u again", i, N);
	for (unsigned i = 1; i < N; i++) {
		out += pg[i]->id != pg[i - 1]->id + 1;
		down += pg[i]->id < pg[i - 1]->id;
	}
	CHECK_EQ(out, 0,
		 "rule FRAMES-IN-ORDER violated: frames not handed out after the previous one "
		 "(%u steps back of %u; %s%s chain freed)",
		 down, N, reverse ? "a reversed" : "a shuffled", long_chain ? " long" : "");
	for (unsigned i = 0; i < N; i++)
		lpc_page_put(pg[i]);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_alloc(4096));
	TST_RUN(t_alloc(512));
	TST_RUN(t_hoarded_frames());
	TST_RUN(t_free_order(false, false));
	TST_RUN(t_free_order(true, false));
	TST_RUN(t_free_order(false, true));
	TST_RUN(t_free_order(true, true));
	return tst_finish();
}
