/* SPDX-License-Identifier: MIT */
/*
 * test_page_read.c - lpc_page_read, the optimistic page API, and the
 * optimistic path of lpc_pread (guarantees K.1 and K.2 of lpc.h; the races
 * are tests/stress/stress_optimistic.c's).
 *
 *  - args: -EINVAL for a NULL file or function and for unknown flags;
 *  - k2_hit_takes_no_reference: on a cached page fn runs once, sees the
 *    page's bytes, and the page's ref stays the index's alone while it runs;
 *    counted in optimistic_hits and hits; lpc_pread of it too;
 *  - miss_reads: an absent page is read (fallback), -ENXIO past the end;
 *  - k1_waits_for_writer: a page whose writer is inside its seq section (page
 *    locked, seq odd) is not returned until the writer is done, and then
 *    with the writer's version;
 *  - locked_mode: a LOCKED cache always takes the referenced path.
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "filemap/filemap.h"

#define PS 4096u

static struct lpc_file *mk_file(struct lpc_cache *c, const char *name, uint64_t size,
				uint64_t *id)
{
	char path[600];
	struct lpc_file *f = NULL;

	REQUIRE(tst_make_sparse(name, size, path, sizeof(path)) == 0, "file %s", name);
	*id = tst_file_id(path);
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &f) == 0, "open %s", path);
	return f;
}

struct seen {
	struct lpc_page *page; /* if set: its ref while fn runs */
	unsigned runs;
	uint32_t ref;
	uint64_t stamp[2];
	size_t len;
};

static void look(const void *data, size_t len, void *arg)
{
	struct seen *s = arg;

	s->runs++;
	s->len = len;
	memcpy(s->stamp, data, sizeof(s->stamp));
	if (s->page)
		s->ref = atomic_load(&s->page->ref);
}

static void args(void)
{
	struct lpc_cache *c = tst_cache_create(16 * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	uint64_t id;
	struct lpc_file *f = mk_file(c, "pr-args", 4 * PS, &id);
	struct seen s = { 0 };

	CHECK_EQ(lpc_page_read(NULL, 0, 0, look, &s), -EINVAL);
	CHECK_EQ(lpc_page_read(f, 0, 0, NULL, &s), -EINVAL);
	CHECK_EQ(lpc_page_read(f, 0, 1, look, &s), -EINVAL);
	CHECK_EQ(s.runs, 0, "fn ran on a refused call");
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

static void k2_hit_takes_no_reference(void)
{
	struct lpc_cache *c = tst_cache_create(16 * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	uint64_t id;
	struct lpc_file *f = mk_file(c, "pr-hit", 4 * PS, &id);
	struct lpc_stats a, b;
	struct lpc_page *p;
	struct seen s = { 0 };
	char buf[PS];

	REQUIRE(lpc_page_get(f, 2, 0, &p) == 0);
	lpc_page_put(p); /* cached, held by the index only: ref 1 */
	s.page = p;
	lpc_stats(c, &a);
	CHECK_EQ(lpc_page_read(f, 2, 0, look, &s), 0);
	lpc_stats(c, &b);
	CHECK_EQ(s.runs, 1, "fn runs once on a quiet hit");
	CHECK_EQ(s.len, PS);
	CHECK_EQ(s.ref, 1, "the hit took a reference (K.2)");
	CHECK(s.stamp[0] == id && s.stamp[1] == 2, "fn saw {%llu, %llu}",
	      (unsigned long long)s.stamp[0], (unsigned long long)s.stamp[1]);
	CHECK_EQ(b.optimistic_hits - a.optimistic_hits, 1);
	CHECK_EQ(b.optimistic_fallbacks - a.optimistic_fallbacks, 0);
	CHECK_EQ(b.hits - a.hits, 1, "an optimistic hit is a hit");
	CHECK_EQ(b.lookups, b.hits + b.misses, "F.1");
	CHECK_EQ(b.reads, a.reads, "a hit read the page");

	CHECK_EQ(lpc_pread(f, buf, PS, 2 * PS), PS);
	lpc_stats(c, &a);
	CHECK_EQ(a.optimistic_hits - b.optimistic_hits, 1, "lpc_pread's hit");
	CHECK(tst_null_check_page(id, 2, PS, 4 * PS, buf, (char[PS]){ 0 }) == 0, "pread bytes");
	CHECK_EQ(atomic_load(&p->ref), 1);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

static void miss_reads(void)
{
	struct lpc_cache *c = tst_cache_create(16 * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	uint64_t id;
	struct lpc_file *f = mk_file(c, "pr-miss", 4 * PS, &id);
	struct lpc_stats a, b;
	struct seen s = { 0 };

	lpc_stats(c, &a);
	CHECK_EQ(lpc_page_read(f, 3, 0, look, &s), 0);
	lpc_stats(c, &b);
	CHECK_EQ(s.runs, 1);
	CHECK(s.stamp[0] == id && s.stamp[1] == 3);
	CHECK_EQ(b.reads - a.reads, 1, "the miss reads the page");
	CHECK_EQ(b.optimistic_fallbacks - a.optimistic_fallbacks, 1);
	CHECK_EQ(b.misses - a.misses, 1);
	CHECK_EQ(b.lookups, b.hits + b.misses, "F.1");
	s.runs = 0;
	CHECK_EQ(lpc_page_read(f, 3, 0, look, &s), 0, "now cached");
	lpc_stats(c, &a);
	CHECK_EQ(a.optimistic_hits - b.optimistic_hits, 1);
	CHECK_EQ(lpc_page_read(f, 4, 0, look, &s), -ENXIO, "past the end");
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

struct reader {
	struct lpc_file *f;
	struct seen s;
	int rc;
	_Atomic bool done;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	r->rc = lpc_page_read(r->f, 1, 0, look, &r->s);
	atomic_store(&r->done, true);
	return NULL;
}

static void k1_waits_for_writer(void)
{
	struct lpc_cache *c = tst_cache_create(16 * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	uint64_t id, v = 77;
	struct lpc_file *f = mk_file(c, "pr-writer", 4 * PS, &id);
	struct reader r = { .f = f };
	struct lpc_page *p;
	pthread_t th;

	REQUIRE(lpc_page_get(f, 1, 0, &p) == 0);
	/* A user changing the page in place: lpc_page_lock opens its seq write
	 * section (lock.c X1). */
	lpc_page_lock(p);
	memcpy((char *)lpc_page_data(p) + 8, &v, sizeof(v)); /* half of a new stamp */
	REQUIRE(pthread_create(&th, NULL, reader_main, &r) == 0);
	tst_sleep_us(100000);
	CHECK(!atomic_load(&r.done), "lpc_page_read returned while a writer was inside");
	memcpy(lpc_page_data(p), &v, sizeof(v)); /* the other half */
	lpc_page_unlock(p); /* X2 closes the section */
	pthread_join(th, NULL);
	CHECK_EQ(r.rc, 0);
	CHECK(r.s.stamp[0] == 77 && r.s.stamp[1] == 77, "saw {%llu, %llu}, want the new version",
	      (unsigned long long)r.s.stamp[0], (unsigned long long)r.s.stamp[1]);
	CHECK(r.s.runs >= 1 && r.s.runs <= 3, "fn ran %u times", r.s.runs);
	lpc_page_put(p);
	CHECK_EQ(lpc_invalidate(f, 0, 0), 1);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

static void locked_mode(void)
{
	struct lpc_cache *c = tst_cache_create(16 * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKED);
	uint64_t id;
	struct lpc_file *f = mk_file(c, "pr-locked", 4 * PS, &id);
	struct lpc_stats st;
	struct seen s = { 0 };
	char buf[64];

	for (int i = 0; i < 3; i++) {
		CHECK_EQ(lpc_page_read(f, 0, 0, look, &s), 0);
		CHECK_EQ(lpc_pread(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	}
	CHECK(s.stamp[0] == id && s.stamp[1] == 0);
	lpc_stats(c, &st);
	CHECK_EQ(st.optimistic_hits, 0, "LOCKED mode read optimistically");
	CHECK_EQ(st.optimistic_fallbacks, 0);
	CHECK_EQ(st.hits, 5);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	TST_RUN(args());
	TST_RUN(k2_hit_takes_no_reference());
	TST_RUN(miss_reads());
	TST_RUN(k1_waits_for_writer());
	TST_RUN(locked_mode());
	return tst_finish();
}
