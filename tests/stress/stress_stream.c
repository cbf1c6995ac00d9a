/* SPDX-License-Identifier: MIT */
/*
 * stress_stream.c - read streams and batched gets (filemap/stream.c GB1-GB4,
 * ST1-ST7) racing each other, invalidation and eviction, on both disk
 * backends and both lookup modes, with a file 8x the cache.
 *
 * Threads: two stream consumers (each opens a stream over a random list:
 * uniform, clustered and repeated pages, through a callback or an array,
 * with a random look-ahead and frame bound, takes entries up to a random
 * point or the end, and closes it: often with its look-ahead still in
 * flight), a batch thread (lpc_page_get_batch of 1-48 such pages), a
 * reader (lpc_pread of one page, so plain misses meet the streams' runs), and
 * an invalidator (lpc_invalidate and lpc_fadvise DONTNEED of random ranges,
 * dropping the pages the others read ahead).  Every page handed out must
 * carry its own position's bytes (the file is read-only: any other page's
 * bytes, zeros or a torn page fail); every entry must succeed (all pages lie
 * inside the file); entries come in list order with their user pointers.
 * At the end of each variant: close and lpc_cache_destroy return 0 (no
 * reference or lock leaked by a stream closed mid-flight).
 *
 * Usage: stress_stream [--seed N]   Exit: 0 pass, 1 fail, 77 skip.
 * LPC_STRESS_SECONDS: seconds for the whole run, shared by the variants
 * (default 6); LPC_TEST_IO=sync runs the sync backend's variants only.
 */
#include <pthread.h>

#include "../common/stress.h"

#define PS 4096u
#define FRAMES 128
#define NPAGES 1024 /* 8x the cache */

static struct lpc_file *g_f;
static struct tst_expect g_e;
static _Atomic uint64_t g_pages, g_streams, g_closed_early;

struct gen {
	uint64_t rng;
	unsigned left;
	uint64_t last;
	uint64_t pos;
	uint64_t *log; /* the indices handed to the stream, in order */
};

static uint64_t pick(uint64_t *rng, uint64_t last)
{
	uint64_t r = tst_rnd(rng);

	switch (r % 4) {
	case 0: return last; /* a repeat */
	case 1: return (last + 1) % NPAGES; /* clustered */
	default: return (r >> 8) % NPAGES;
	}
}

static int gen_cb(void *arg, uint64_t *index, void **user)
{
	struct gen *g = arg;

	if (!g->left)
		return 0;
	g->left--;
	g->last = pick(&g->rng, g->last);
	g->log[g->pos] = g->last;
	*user = &g->log[g->pos];
	g->pos++;
	*index = g->last;
	return 1;
}

static bool check(uint64_t index, struct lpc_page *p, const char *who)
{
	return CHECK(tst_check_page(&g_e, index, lpc_page_data(p)), "%s: page %" PRIu64, who,
		     index);
}

static void *streamer(void *arg)
{
	uint64_t rng = tst_seed * 31 + (uintptr_t)arg, log[256];
	void *users[256];

	while (!tst_stopping() && atomic_load(&tst_failed) == 0) {
		struct gen g = { .rng = tst_rnd(&rng), .left = 1 + tst_rnd(&rng) % 256,
				 .last = tst_rnd(&rng) % NPAGES, .log = log };
		struct lpc_stream_opts o = { .max_distance = (uint32_t)(tst_rnd(&rng) % 80),
					     .max_pages = (uint32_t)(tst_rnd(&rng) % 40) };
		bool array = tst_rnd(&rng) % 2;
		unsigned stop_at = (unsigned)(tst_rnd(&rng) % 300), i = 0;
		struct lpc_stream *s = NULL;
		int rc;

		if (array) {
			/* The list made first: the array form. */
			uint64_t idx;
			void *u;

			while (gen_cb(&g, &idx, &u) == 1)
				;
			for (unsigned k = 0; k < g.pos; k++)
				users[k] = &log[k];
			o.indices = log;
			o.users = users;
			o.n = g.pos;
			rc = lpc_stream_open(g_f, NULL, NULL, &o, &s);
		} else {
			rc = lpc_stream_open(g_f, gen_cb, &g, &o, &s);
		}
		if (!CHECK_EQ(rc, 0, "lpc_stream_open"))
			break;
		atomic_fetch_add(&g_streams, 1);
		for (;; i++) {
			struct lpc_page *p;
			void *u;

			if (i == stop_at) {
				atomic_fetch_add(&g_closed_early, 1);
				break; /* the consumer stops: close with reads in flight */
			}
			rc = lpc_stream_next(s, &p, &u);
			if (rc == 0) {
				CHECK_EQ(i, (unsigned)(array ? o.n : g.pos), "entries handed out");
				break;
			}
			if (!CHECK_EQ(rc, 1, "lpc_stream_next entry %u", i))
				break;
			if (CHECK(u == &log[i], "entry %u: user pointer", i))
				check(log[i], p, "stream");
			lpc_page_put(p);
			atomic_fetch_add_explicit(&g_pages, 1, memory_order_relaxed);
		}
		lpc_stream_close(s);
	}
	return NULL;
}

static void *batcher(void *arg)
{
	uint64_t rng = tst_seed * 37 + (uintptr_t)arg, v[48], last = 0;
	struct lpc_page *pages[48];
	int errs[48];

	while (!tst_stopping() && atomic_load(&tst_failed) == 0) {
		unsigned n = 1 + (unsigned)(tst_rnd(&rng) % 48);
		int got;

		for (unsigned i = 0; i < n; i++)
			v[i] = last = pick(&rng, last);
		got = lpc_page_get_batch(g_f, v, n, 0, pages, errs);
		CHECK_EQ(got, (int)n, "lpc_page_get_batch of %u", n);
		for (unsigned i = 0; i < n; i++) {
			if (CHECK_EQ(errs[i], 0, "entry %u", i))
				check(v[i], pages[i], "batch");
			lpc_page_put(pages[i]);
		}
		atomic_fetch_add_explicit(&g_pages, n, memory_order_relaxed);
	}
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t rng = tst_seed * 41 + (uintptr_t)arg;
	unsigned char *buf = malloc(PS);

	REQUIRE(buf);
	while (!tst_stopping() && atomic_load(&tst_failed) == 0) {
		uint64_t i = tst_rnd(&rng) % NPAGES, bad = 0;
		ssize_t n = lpc_pread(g_f, buf, PS, i * PS);

		if (CHECK_EQ(n, (ssize_t)PS, "lpc_pread page %" PRIu64, i))
			CHECK(tst_check_bytes(&g_e, i * PS, buf, PS, &bad), "pread at %" PRIu64, bad);
	}
	free(buf);
	return NULL;
}

static void *invalidator(void *arg)
{
	uint64_t rng = tst_seed * 43 + (uintptr_t)arg;

	while (!tst_stopping() && atomic_load(&tst_failed) == 0) {
		uint64_t a = tst_rnd(&rng) % NPAGES, n = 1 + tst_rnd(&rng) % 64;

		if (tst_rnd(&rng) % 2)
			CHECK(lpc_invalidate(g_f, a * PS, n * PS) >= 0, "invalidate");
		else
			CHECK_EQ(lpc_fadvise(g_f, a * PS, n * PS, LPC_FADV_DONTNEED), 0);
		tst_sleep_us(200);
	}
	return NULL;
}

static void variant(int backend, int lookup, double secs)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct tst_threads th = { 0 };
	char path[600], name[32];
	int rc;

	lpc_config_init(&cfg);
	cfg.cache_bytes = FRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = backend;
	cfg.lookup_mode = lookup;
	rc = lpc_cache_create(&cfg, &c);
	REQUIRE(rc == 0 && c, "lpc_cache_create = %d", rc);
	snprintf(name, sizeof(name), "ss%d%d", backend, lookup);
	g_e = (struct tst_expect){ .backend = LPC_IO_SYNC, .salt = 4242 + (uint64_t)backend,
				   .size = (uint64_t)NPAGES * PS, .ps = PS };
	REQUIRE(tst_make_file(name, g_e.size, g_e.salt, path, sizeof(path)) == 0);
	g_f = tst_file_open(c, path, O_RDONLY);
	atomic_store(&g_pages, 0);
	atomic_store(&g_streams, 0);
	atomic_store(&g_closed_early, 0);
	tst_threads_start(&th, 2, streamer, NULL, 0);
	tst_threads_start(&th, 1, batcher, NULL, 0);
	tst_threads_start(&th, 1, reader, NULL, 0);
	tst_threads_start(&th, 1, invalidator, NULL, 0);
	tst_stress_wait(secs);
	tst_threads_join(&th);
	printf("  %s %s: %" PRIu64 " pages, %" PRIu64 " streams (%" PRIu64 " closed early)\n",
	       backend == LPC_IO_SYNC ? "sync" : "uring", lookup ? "locked" : "lockless",
	       atomic_load(&g_pages), atomic_load(&g_streams), atomic_load(&g_closed_early));
	CHECK(atomic_load(&g_pages) > 0, "no page handed out");
	CHECK_EQ(lpc_file_close(g_f), 0, "close");
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	const char *io = getenv("LPC_TEST_IO");
	bool sync_only = io && !strcmp(io, "sync");
	int nb = sync_only ? 1 : 2;
	double secs = tst_stress_init(argc, argv, 6) / (2 * nb);

	static const int backends[] = { LPC_IO_SYNC, LPC_IO_URING };

	for (int b = 0; b < nb; b++)
		for (int l = 0; l < 2; l++)
			variant(backends[b], l ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS, secs);
	return tst_finish();
}
