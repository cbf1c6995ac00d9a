/* SPDX-License-Identifier: MIT */
/*
 * test_seq.c - the page's seq is a real sequence count (page/page.h): odd
 * while its data or identity changes, even and unchanged while stable, and
 * changed by every change of data or identity.  Optimistic reads
 * (filemap/optimistic.c) rely on exactly this.
 *
 * Cases, each of which fails on a tree where seq is only bumped by 2 after
 * the miss path's read (the code before commit 82b0ff6):
 *  - seq_odd_while_read_in_flight: a page held at the I/O gate (inserted,
 *    locked, data not read yet) has seq odd; after the read, even and
 *    different from before the miss;
 *  - seq_failed_read_closes_section: a read that fails leaves its page with
 *    seq even (the section is closed, so the frame can be recycled);
 *  - seq_recycle_changes_seq: a frame handed out again by the allocator
 *    (private alloc, then a miss of another page) has a new, even seq each
 *    time; a private page's seq is even;
 *  - seq_stable_while_cached: lookups and puts do not change it.
 */
#include <pthread.h>

#include "../common/gate_io.h"
#include "../common/lpc_test.h"
#include "filemap/filemap.h"

#define PS 4096u

static uint32_t seq_of(struct lpc_page *p)
{
	return atomic_load_explicit(&p->seq, memory_order_acquire);
}

/* The page at index of f whatever its state, without a reference (the test
 * keeps it alive by other means).  Context: not in a read section. */
static struct lpc_page *peek(struct lpc_file *f, uint64_t index)
{
	struct lpc_page *p;

	lpc_rcu_read_lock();
	p = lpc_radix_lookup(&f->tree, index, NULL);
	lpc_rcu_read_unlock();
	return p;
}

static struct lpc_file *mk_file(struct lpc_cache *c, const char *name, uint64_t size)
{
	char path[600];
	struct lpc_file *f = NULL;

	REQUIRE(tst_make_sparse(name, size, path, sizeof(path)) == 0, "file %s", name);
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &f) == 0, "open %s", path);
	return f;
}

static void seq_odd_while_read_in_flight(void)
{
	struct lpc_cache *c = tst_cache_create(16 * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f = mk_file(c, "seq-flight", 8 * PS);
	struct tst_getter g = { .f = f, .index = 3 };
	struct lpc_page *p = NULL;
	uint32_t during = 0;
	pthread_t th;

	tst_gate_install(c);
	tst_gate_close();
	REQUIRE(pthread_create(&th, NULL, tst_getter_main, &g) == 0);
	if (CHECK(tst_gate_wait_entered(1, 5000), "read never started")) {
		p = peek(f, 3);
		if (CHECK(p != NULL, "page in flight not in the index")) {
			during = seq_of(p);
			CHECK(during & 1, "seq %u even while the page is being read", during);
		}
	}
	tst_gate_open(0);
	pthread_join(th, NULL);
	if (CHECK_EQ(g.rc, 0) && p) {
		uint32_t after = seq_of(g.p);

		CHECK(g.p == p);
		CHECK(!(after & 1), "seq %u odd after the read", after);
		CHECK(after == during + 1, "seq %u after the read, %u during it", after, during);
		lpc_page_put(g.p);
	}
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

static void seq_failed_read_closes_section(void)
{
	struct lpc_cache *c = tst_cache_create(16 * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f = mk_file(c, "seq-fail", 8 * PS);
	struct tst_getter g = { .f = f, .index = 2 };
	struct lpc_page *p = NULL, *q;
	uint32_t during = 0;
	pthread_t th;

	tst_gate_install(c);
	tst_gate_close();
	REQUIRE(pthread_create(&th, NULL, tst_getter_main, &g) == 0);
	if (CHECK(tst_gate_wait_entered(1, 5000), "read never started")) {
		p = peek(f, 2);
		/* Hold it, so that its frame is not recycled before we look. */
		if (p && lpc_page_try_get(p))
			during = seq_of(p);
		else
			p = NULL;
		CHECK(p != NULL && (during & 1), "page in flight missing or seq even");
	}
	tst_gate_open(EIO);
	pthread_join(th, NULL);
	CHECK_EQ(g.rc, -EIO, "the gated read fails");
	if (p) {
		uint32_t after = seq_of(p);

		CHECK(!(after & 1), "seq %u odd after a failed read: the section stays open", after);
		CHECK(after != during);
		lpc_page_put(p);
	}
	tst_gate_clear_error();
	CHECK_EQ(lpc_page_get(f, 2, 0, &q), 0, "the next get reads again");
	if (q) {
		CHECK(!(seq_of(q) & 1));
		lpc_page_put(q);
	}
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

/* A cache of 4 frames and a file of 64 pages: every get past the fourth
 * recycles a frame once the others are invalidated. */
static void seq_recycle_changes_seq(void)
{
	struct lpc_cache *c = tst_cache_create(4 * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f = mk_file(c, "seq-recycle", 64 * PS);
	uint32_t last[4] = { 0 };
	struct lpc_page *base = NULL;
	unsigned recycled = 0;

	for (uint64_t i = 0; i < 64; i++) {
		struct lpc_page *p;
		uint32_t s;

		if (!CHECK_EQ(lpc_page_get(f, i, 0, &p), 0, "get %llu", (unsigned long long)i))
			break;
		s = seq_of(p);
		CHECK(!(s & 1), "cached page with seq %u odd", s);
		if (!base || p < base)
			base = p;
		for (unsigned k = 0; k < 4; k++) {
			/* Frames are identified by their descriptor's id. */
			if (p->id % 4 != k)
				continue;
			if (last[k]) {
				CHECK(s > last[k], "frame %u recycled with seq %u, was %u", p->id, s,
				      last[k]);
				recycled++;
			}
			last[k] = s;
		}
		lpc_page_put(p);
		/* Drop it so its frame is reused; the background reclaimer may
		 * have evicted it first (a cache of 4 frames runs low at once). */
		int dropped = lpc_invalidate(f, i * PS, PS);

		CHECK(dropped == 0 || dropped == 1, "drop %llu: %d", (unsigned long long)i, dropped);
	}
	CHECK(recycled >= 32, "only %u recycled frames seen", recycled);

	/* A private page: even; handed out again, a new even seq. */
	for (int round = 0; round < 8; round++) {
		struct lpc_page *p, *q;
		uint32_t s;

		REQUIRE(lpc_page_alloc(c, &p) == 0);
		s = seq_of(p);
		CHECK(!(s & 1), "private page with seq %u odd", s);
		lpc_page_put(p);
		REQUIRE(lpc_page_alloc(c, &q) == 0);
		if (q == p)
			CHECK(seq_of(q) == s + 2, "the same frame again: seq %u, was %u", seq_of(q),
			      s);
		lpc_page_put(q);
	}
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

static void seq_stable_while_cached(void)
{
	struct lpc_cache *c = tst_cache_create(16 * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f = mk_file(c, "seq-stable", 8 * PS);
	struct lpc_page *p, *q;
	char buf[64];
	uint32_t s;

	REQUIRE(lpc_page_get(f, 5, 0, &p) == 0);
	s = seq_of(p);
	for (int i = 0; i < 100; i++) {
		REQUIRE(lpc_page_find(f, 5, &q) == 0);
		lpc_page_put(q);
		CHECK_EQ(lpc_pread(f, buf, sizeof(buf), 5 * PS + 8), (ssize_t)sizeof(buf));
	}
	CHECK_EQ(seq_of(p), s, "a lookup or a read changed seq");
	lpc_page_put(p);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	TST_RUN(seq_odd_while_read_in_flight());
	TST_RUN(seq_failed_read_closes_section());
	TST_RUN(seq_recycle_changes_seq());
	TST_RUN(seq_stable_while_cached());
	return tst_finish();
}
