/* SPDX-License-Identifier: MIT */
/*
 * test_foreign_put.c - the last puts of published and private pages from a thread
 * that never called lpc before: they free the frames (handing a batch to
 * call_rcu from that thread), and every frame comes back.
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_foreign_put [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <pthread.h>

#include "../common/lpc_test.h"

/* --- puts from a thread that never called lpc before --- */
struct putter {
	struct lpc_page **pages;
	unsigned n;
};

static void *putter_main(void *arg)
{
	struct putter *pt = arg;

	for (unsigned i = 0; i < pt->n; i++)
		lpc_page_put(pt->pages[i]);
	return NULL;
}

/*
 * The last references of 64 pages of a closed file, and 8 private pages, are
 * dropped by a fresh thread: its puts free them (the 64th hands a batch to
 * call_rcu from that thread, which must be registered with RCU for it), then
 * it exits.  Every frame must come back.
 */
/* Checks guarantee B.3 of include/lpc/lpc.h. */
static void t_foreign_put(void)
{
	enum { N = 64, NP = 8 };
	struct lpc_cache *c = tst_cache_create((N + NP) * 4096, 4096, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	struct lpc_page *pages[N + NP];
	struct putter pt = { pages, N + NP };
	struct lpc_file *f;
	struct lpc_stats st;
	pthread_t th;
	char path[600];
	unsigned n;

	REQUIRE(tst_make_sparse("foreign", N * 4096, path, sizeof(path)) == 0);
	f = tst_file_open(c, path, O_RDONLY);
	for (unsigned i = 0; i < N; i++)
		REQUIRE(lpc_page_get(f, i, 0, &pages[i]) == 0);
	for (unsigned i = N; i < N + NP; i++)
		REQUIRE(lpc_page_alloc(c, &pages[i]) == 0);
	CHECK_EQ(lpc_file_close(f), 0); /* the index lets go: ours are the last */
	REQUIRE(pthread_create(&th, NULL, putter_main, &pt) == 0);
	pthread_join(th, NULL);
	for (n = 0; n < N + NP; n++)
		if (lpc_page_alloc(c, &pages[n]) != 0)
			break;
	CHECK_EQ(n, N + NP, "frames back after a foreign thread's puts");
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(pages[i]);
	lpc_stats(c, &st);
	CHECK_EQ(st.frames_free, N + NP);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_foreign_put());
	return tst_finish();
}
