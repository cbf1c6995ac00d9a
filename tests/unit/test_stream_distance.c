/* SPDX-License-Identifier: MIT */
/*
 * test_stream_distance.c - the read stream's look-ahead distance (stream.c
 * ST3), read from the stream's own state after every lpc_stream_next:
 *  - a list that hits in part (a cached page, then a cold scattered one,
 *    256 entries): the distance never shrinks, and it grows to at least 8
 *    (each cold page taken before its read completed doubles it).  Before
 *    ST3 counted hits in a row, every cached entry took it one smaller, so
 *    it went 1, 2, 1, 2 and every cold page was read one entry before it
 *    was taken: one read in flight, the consumer waiting for each;
 *  - a list whose tail hits (64 cold pages, then 256 cached ones): the
 *    distance earned by the cold part falls back to 1 within the tail (a
 *    list that hits costs no look-ahead);
 *  - every page handed out is the file's, at its index.
 * Reads are slowed by 2 ms (a wrapper of the cache's backend), so a cold
 * page issued a few entries before it is taken is still being read then:
 * the doublings do not depend on the machine's speed.  Both lookup modes
 * (LOCKED mode reads the look-ahead in the consumer: a claimed entry counts
 * as a wait), both backends (the .sync twin).
 *
 * Usage: test_stream_distance [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <time.h>

#include "cache/cache.h"
#include "filemap/stream.h"
#include "../common/lpc_test.h"

#define PS 4096u
#define SLOW_NS 2000000L

static const struct lpc_io_backend_ops *inner;

static void slow(void)
{
	struct timespec ts = { 0, SLOW_NS };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static ssize_t slow_read(struct lpc_io_file *f, void *buf, size_t len, uint64_t off,
			 uint64_t index)
{
	slow();
	return inner->read(f, buf, len, off, index);
}

static ssize_t slow_readv(struct lpc_io_file *f, const struct iovec *iov, int iovcnt,
			  uint64_t off, uint64_t index)
{
	slow();
	if (inner->readv)
		return inner->readv(f, iov, iovcnt, off, index);
	return inner->read(f, iov[0].iov_base, iov[0].iov_len, off, index);
}

static struct lpc_io_backend_ops slow_ops;

/* Wraps c's backend: every read and readv 2 ms slower; the rest forwarded
 * as the inner backend has it.  Context: no I/O yet on c. */
static void slow_install(struct lpc_cache *c)
{
	inner = c->io.ops;
	slow_ops = *inner;
	slow_ops.name = "slow";
	slow_ops.read = slow_read;
	slow_ops.readv = slow_readv;
	c->io.ops = &slow_ops;
}

struct tcase {
	struct lpc_cache *c;
	struct lpc_file *f;
	struct tst_expect e;
	char path[600];
};

static void setup(struct tcase *t, int mode, const char *name, uint64_t pages)
{
	struct lpc_config cfg;
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = 1024u * PS;
	cfg.page_size = PS;
	cfg.io_backend = tst_disk_backend(LPC_IO_URING);
	cfg.lookup_mode = mode;
	cfg.readahead_kb = LPC_READAHEAD_OFF; /* only the stream reads ahead */
	rc = lpc_cache_create(&cfg, &t->c);
	REQUIRE(rc == 0 && t->c, "lpc_cache_create = %d", rc);
	t->e = (struct tst_expect){ .backend = LPC_IO_SYNC, .salt = 4242 + (uint64_t)mode,
				    .size = pages * PS, .ps = PS };
	REQUIRE(tst_make_file(name, t->e.size, t->e.salt, t->path, sizeof(t->path)) == 0);
	t->e.id = tst_file_id(t->path);
	t->f = tst_file_open(t->c, t->path, O_RDONLY);
}

static void teardown(struct tcase *t)
{
	REQUIRE(lpc_file_close(t->f) == 0);
	REQUIRE(lpc_cache_destroy(t->c) == 0);
}

/* Warms page i of t (lpc_pread: cached, then put). */
static void warm(struct tcase *t, uint64_t i)
{
	static char buf[PS];

	REQUIRE(lpc_pread(t->f, buf, PS, i * PS) == (ssize_t)PS, "warm %llu",
		(unsigned long long)i);
}

/* Takes the next entry, checks its page, returns the distance after it. */
static uint32_t take(struct tcase *t, struct lpc_stream *s, uint64_t want)
{
	struct lpc_page *p;
	int rc = lpc_stream_next(s, &p, NULL);

	REQUIRE(rc == 1 && p, "lpc_stream_next = %d (index %llu)", rc, (unsigned long long)want);
	CHECK(tst_check_page(&t->e, want, lpc_page_data(p)), "page %llu's bytes (its place)",
	      (unsigned long long)want);
	lpc_page_put(p);
	return s->distance;
}

/* Half hits: the distance never shrinks and reaches 8. */
static void t_half_hits(int mode)
{
	enum { N = 256 };
	static uint64_t list[N];
	struct tcase t;
	struct lpc_stream *s;
	uint32_t d, prev = 1, top = 1, shrank = 0;

	setup(&t, mode, mode ? "sd_half_locked" : "sd_half", 2048);
	for (unsigned i = 0; i < N / 2; i++) {
		list[2 * i] = 1500 + i; /* cached */
		list[2 * i + 1] = ((uint64_t)i * 37u % 128u) * 4u; /* cold, never adjacent */
		warm(&t, 1500 + i);
	}
	slow_install(t.c);
	REQUIRE(lpc_stream_open(t.f, NULL, NULL,
				&(struct lpc_stream_opts){ .max_distance = 64, .indices = list,
							   .n = N },
				&s) == 0);
	for (unsigned i = 0; i < N; i++) {
		d = take(&t, s, list[i]);
		if (d < prev)
			shrank++;
		if (d > top)
			top = d;
		prev = d;
	}
	CHECK(shrank == 0, "the distance shrank %u times on a list that hits in part", shrank);
	CHECK(top >= 8, "the distance reached only %u on a list that hits in part", top);
	lpc_stream_close(s);
	teardown(&t);
}

/* A cold head, then a tail that hits: back to a distance of 1. */
static void t_hit_tail(int mode)
{
	enum { COLD = 64, HOT = 256, N = COLD + HOT };
	static uint64_t list[N];
	struct tcase t;
	struct lpc_stream *s;
	uint32_t d = 0, top = 1;

	setup(&t, mode, mode ? "sd_tail_locked" : "sd_tail", 1024);
	for (unsigned i = 0; i < COLD; i++)
		list[i] = (uint64_t)i * 7u; /* scattered: < 448 */
	for (unsigned i = 0; i < HOT; i++) {
		list[COLD + i] = 600 + i;
		warm(&t, 600 + i);
	}
	slow_install(t.c);
	REQUIRE(lpc_stream_open(t.f, NULL, NULL,
				&(struct lpc_stream_opts){ .max_distance = 64, .indices = list,
							   .n = N },
				&s) == 0);
	for (unsigned i = 0; i < N; i++) {
		d = take(&t, s, list[i]);
		if (i < COLD && d > top)
			top = d;
	}
	CHECK(top >= 8, "the cold head took the distance to %u only", top);
	CHECK(d == 1, "after %u cached entries in a row the distance is %u, not 1", HOT, d);
	lpc_stream_close(s);
	teardown(&t);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	for (int mode = 0; mode < 2; mode++) {
		TST_RUN(t_half_hits(mode ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS));
		TST_RUN(t_hit_tail(mode ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS));
	}
	return tst_finish();
}
