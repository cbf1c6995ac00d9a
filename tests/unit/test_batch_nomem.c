/* SPDX-License-Identifier: MIT */
/*
 * test_batch_nomem.c - lpc_page_get_batch when GB0's plan cannot be
 * allocated (filemap/stream.c GB0: an array of more than LPC_BATCH_CHUNK
 * entries has its plan, 9 bytes an entry, from one malloc; when that fails
 * the call goes on chunk by chunk, GB1-GB3 alone, and never fails for it).
 *
 * Linked with -Wl,--wrap=malloc (as test_write_flusher_start wraps
 * pthread_create): while `fail_size` is set, the library's malloc of
 * exactly that many bytes returns NULL (counted in `failed`); every other
 * allocation, the library's and libc's own, goes through.  The same batch
 * (evens then odds of a 280-page file, indices past its end, duplicates:
 * 320 entries, a plan of 2880 bytes) on a cold cache, once with the plan
 * and once with its malloc failing, in both lookup modes and both
 * backends (the .sync twin):
 *  - the failure happened, exactly once per armed call;
 *  - the call returns the same count as without it, every entry the same
 *    error (-ENXIO past the end, else 0) and, for each 0, its page, byte
 *    for byte the file's; duplicates one reference each;
 *  - the pages are all cached afterwards (a second batch reads nothing).
 *
 * Usage: test_batch_nomem [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"

#define PS 4096u
#define FPAGES 280u /* the file's pages; the list reaches 300 */
#define N 320u      /* entries: more than LPC_BATCH_CHUNK (64) */

static _Atomic size_t fail_size;
static _Atomic unsigned failed;

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_malloc(size_t size)
{
	size_t want = atomic_load(&fail_size);

	if (want && size == want) {
		atomic_fetch_add(&failed, 1);
		return NULL;
	}
	return __real_malloc(size);
}

static int nfile;

/* One call of the batch v[0..N) on a fresh cold cache; fail: with GB0's
 * malloc failing.  Fills errs (and checks each page against the file),
 * returns the call's result. */
static int one(int mode, bool fail, const uint64_t *v, int *errs)
{
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page **pages = calloc(N, sizeof(*pages));
	struct tst_expect e;
	struct lpc_stats s0, s1;
	char path[600], name[48];
	unsigned f0;
	int got, got2;

	REQUIRE(pages);
	tst_readahead_kb = LPC_READAHEAD_OFF; /* only the batch reads */
	c = tst_cache_create(1024 * PS, PS, LPC_IO_SYNC, mode);
	snprintf(name, sizeof(name), "nomem%d", nfile++);
	e = (struct tst_expect){ .backend = LPC_IO_SYNC, .salt = 4711 + (uint64_t)nfile,
				 .size = FPAGES * PS - 100, .ps = PS };
	REQUIRE(tst_make_file(name, e.size, e.salt, path, sizeof(path)) == 0);
	e.id = tst_file_id(path);
	f = tst_file_open(c, path, O_RDONLY);

	f0 = atomic_load(&failed);
	atomic_store(&fail_size, fail ? (size_t)N * (sizeof(uint64_t) + 1) : 0);
	got = lpc_page_get_batch(f, v, N, 0, pages, errs);
	atomic_store(&fail_size, 0);
	CHECK_EQ(atomic_load(&failed) - f0, fail ? 1u : 0u,
		 "mode %d: GB0's malloc failed (armed: %d)", mode, fail);
	for (unsigned i = 0; i < N; i++) {
		if (errs[i]) {
			CHECK(pages[i] == NULL, "entry %u: an error with a page", i);
			continue;
		}
		if (CHECK(pages[i] != NULL, "entry %u: 0 without a page", i))
			CHECK(tst_check_page(&e, v[i], lpc_page_data(pages[i])),
			      "mode %d fail %d: entry %u index %" PRIu64 " has wrong bytes", mode,
			      fail, i, v[i]);
	}
	for (unsigned i = 0; i < N; i++)
		if (pages[i])
			lpc_page_put(pages[i]);
	/* Every page the batch returned is cached: again, no read. */
	lpc_stats(c, &s0);
	got2 = lpc_page_get_batch(f, v, N, 0, pages, errs);
	lpc_stats(c, &s1);
	CHECK_EQ(got2, got, "mode %d fail %d: the second batch", mode, fail);
	CHECK_EQ(s1.reads - s0.reads, 0, "mode %d fail %d: the second batch read", mode, fail);
	for (unsigned i = 0; i < N; i++)
		if (pages[i])
			lpc_page_put(pages[i]);
	CHECK_EQ(lpc_file_close(f), 0);
	tst_cache_destroy(c);
	free(pages);
	return got;
}

static void t_nomem(int mode)
{
	uint64_t v[N];
	int errs_ok[N], errs_fail[N], got_ok, got_fail, want = 0;
	unsigned n = 0;

	for (uint64_t i = 0; i < 300; i += 2) /* evens: one chunk's run is */
		v[n++] = i;                   /* the whole array's with a plan */
	for (uint64_t i = 1; i < 300; i += 2)
		v[n++] = i;
	while (n < N) /* duplicates, in a later chunk */
		v[n] = v[(n * 7) % 300], n++;
	for (unsigned i = 0; i < N; i++)
		want += v[i] < FPAGES;
	got_ok = one(mode, false, v, errs_ok);
	got_fail = one(mode, true, v, errs_fail);
	CHECK_EQ(got_ok, want, "mode %d: the planned call", mode);
	CHECK_EQ(got_fail, got_ok, "mode %d: without its plan", mode);
	for (unsigned i = 0; i < N; i++) {
		CHECK_EQ(errs_ok[i], v[i] < FPAGES ? 0 : -ENXIO, "entry %u index %" PRIu64, i,
			 v[i]);
		CHECK_EQ(errs_fail[i], errs_ok[i], "mode %d: entry %u index %" PRIu64, mode, i,
			 v[i]);
	}
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	TST_RUN(t_nomem(LPC_LOOKUP_LOCKLESS));
	TST_RUN(t_nomem(LPC_LOOKUP_LOCKED));
	return tst_finish();
}
