/* SPDX-License-Identifier: MIT */
/*
 * att_race.c - read streams and batches racing lpc_pwrite and
 * lpc_invalidate on the same pages (stress_stream races invalidation only).
 *
 * A writer thread rewrites whole pages with a growing version (every word
 * of the page carries it: att_word(version, offset)) through lpc_pwrite and
 * publishes the version once the call returned; an invalidator drops random
 * ranges; the reader walks random lists (duplicates included) with streams
 * (some closed early) and batches, in a 128-frame cache over a 512-page
 * file, every read held 200 us (slow.h), so look-ahead is in flight when the
 * writes come.  Contract: every page handed out has lpc_page_get's
 * guarantees (A.1): a write that returned before lpc_stream_next /
 * lpc_page_get_batch began is never missing from the page (no stale data);
 * the words of the page carry its offset (no page at the wrong index).
 * Both lookup modes, both backends, ~2 s each.  Exit 1 on a stale or
 * misplaced page.  (Held when written.)
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_race
 * (not under TSan: the reader reads a page's bytes while the writer may
 * write it, which lpc allows and TSan reports.)
 */
#include "att.h"
#include "slow.h"

#define PS 4096u
#define NP 512u

static struct lpc_file *f;
static _Atomic uint32_t ver[NP];
static _Atomic int stop;
static _Atomic uint64_t checked, stale;

static void *writer(void *arg)
{
	static uint64_t w[PS / 8];
	unsigned seed = 1;

	(void)arg;
	while (!atomic_load(&stop)) {
		unsigned i = (unsigned)rand_r(&seed) % NP;
		uint32_t v = atomic_load(&ver[i]) + 1;

		for (unsigned k = 0; k < PS / 8; k++)
			w[k] = att_word(v & 0xffff, (uint64_t)i * PS + k * 8);
		if (lpc_pwrite(f, w, PS, (uint64_t)i * PS) != PS) {
			printf("  pwrite failed\n");
			att_fails++;
		}
		atomic_store(&ver[i], v);
		if (rand_r(&seed) % 64 == 0)
			usleep(200);
	}
	return NULL;
}

static void *invalidator(void *arg)
{
	unsigned seed = 2;

	(void)arg;
	while (!atomic_load(&stop)) {
		unsigned i = (unsigned)rand_r(&seed) % NP;

		(void)lpc_invalidate(f, (uint64_t)i * PS, (uint64_t)(1 + rand_r(&seed) % 16) * PS);
		usleep(100);
	}
	return NULL;
}

static void check(struct lpc_page *p, uint64_t index, uint32_t min)
{
	const uint64_t *w = lpc_page_data(p);
	uint64_t tag = w[0] >> 48;

	atomic_fetch_add(&checked, 1);
	if ((w[0] & ((1ull << 48) - 1)) != (index * PS) >> 3) {
		printf("  FAIL page %" PRIu64 ": word 0 says offset %" PRIu64 "\n", index,
		       (uint64_t)((w[0] & ((1ull << 48) - 1)) << 3));
		att_fails++;
	} else if (((tag - (min & 0xffff)) & 0xffff) > 0x8000) {
		if (atomic_fetch_add(&stale, 1) < 5)
			printf("  FAIL page %" PRIu64 ": version %" PRIu64
			       ", but version %u's write returned before the call\n",
			       index, tag, min);
		att_fails++;
	}
}

int main(void)
{
	char path[512];
	int backends[2] = { LPC_IO_SYNC, LPC_IO_URING };
	int modes[2] = { LPC_LOOKUP_LOCKLESS, LPC_LOOKUP_LOCKED };
	unsigned seed = 3;

	for (int b = 0; b < 2; b++)
		for (int m = 0; m < 2; m++) {
			struct lpc_cache *c = att_cache(128u * PS, PS, backends[b], modes[m], 0, 0);
			pthread_t tw, ti;
			double t0;
			uint64_t lists = 0;

			att_make_file("f", NP * PS, 0, path, sizeof(path));
			for (unsigned i = 0; i < NP; i++)
				atomic_store(&ver[i], 0);
			slow_install(c);
			slow.delay_us = 200;
			if (lpc_file_open(c, path, O_RDWR, 0, &f))
				return 1;
			atomic_store(&stop, 0);
			pthread_create(&tw, NULL, writer, NULL);
			pthread_create(&ti, NULL, invalidator, NULL);
			t0 = slow_secs();
			while (slow_secs() - t0 < 2.0) {
				uint64_t idx[48];
				uint32_t min[48];
				unsigned n = 8 + (unsigned)rand_r(&seed) % 40;
				unsigned base = (unsigned)rand_r(&seed) % NP;

				for (unsigned k = 0; k < n; k++)
					idx[k] = rand_r(&seed) % 3 ? (base + k) % NP
								   : (unsigned)rand_r(&seed) % NP;
				lists++;
				if (rand_r(&seed) % 2) {
					struct lpc_page *pg[48];
					int errs[48];

					for (unsigned k = 0; k < n; k++)
						min[k] = atomic_load(&ver[idx[k]]);
					(void)lpc_page_get_batch(f, idx, n, 0, pg, errs);
					for (unsigned k = 0; k < n; k++) {
						if (errs[k]) {
							printf("  FAIL batch entry: %d\n", errs[k]);
							att_fails++;
							continue;
						}
						check(pg[k], idx[k], min[k]);
						lpc_page_put(pg[k]);
					}
				} else {
					struct lpc_stream *s;
					struct lpc_page *p;
					unsigned stop_at = rand_r(&seed) % 4 ? n : n / 2;

					if (lpc_stream_open(f, NULL, NULL,
							    &(struct lpc_stream_opts){
								    .max_distance = 32, .indices = idx,
								    .n = n },
							    &s))
						return 1;
					for (unsigned k = 0; k < stop_at; k++) {
						uint32_t mv = atomic_load(&ver[idx[k]]);
						int rc = lpc_stream_next(s, &p, NULL);

						if (rc != 1) {
							printf("  FAIL stream entry: %d\n", rc);
							att_fails++;
							continue;
						}
						check(p, idx[k], mv);
						lpc_page_put(p);
					}
					lpc_stream_close(s);
				}
			}
			atomic_store(&stop, 1);
			pthread_join(tw, NULL);
			pthread_join(ti, NULL);
			printf("%s/%s: %" PRIu64 " lists, %" PRIu64 " pages checked, %" PRIu64
			       " stale\n",
			       att_backend_name(backends[b]), att_mode_name(modes[m]), lists,
			       atomic_load(&checked), atomic_load(&stale));
			ATT_CHECK(lpc_file_close(f) == 0, "close");
			ATT_CHECK(lpc_cache_destroy(c) == 0, "destroy");
		}
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
