/* SPDX-License-Identifier: MIT */
/*
 * att_batch_fuzz.c - GB0's plan (lpc_page_get_batch across chunks) against
 * lpc_page_get, entry by entry, on random arrays.
 *
 * lpc.h "Many misses in flight" / lpc_page_get_batch(3): each entry gets
 * what lpc_page_get would give it ("errors only from a read of that page
 * alone, nothing past the end of the file"); adjacent absent pages are
 * read once.  Each round: a fresh cache (RANDOM advice, slow.h counting),
 * an array of n in {0, 1, 2, 63, 64, 65, 127, 129, 300, 1000, 5000}
 * entries mixing in-file indices (duplicates, evens then odds, descending
 * runs), indices at and past EOF and near UINT64_MAX, some pages cached
 * first; one page armed to fail with EIO in half the rounds.  Checked:
 * the return is the count of errs == 0; each page's bytes are its index's;
 * an entry's err equals lpc_page_get's on the same index afterwards (EIO
 * only for the armed page's entries; past EOF as lpc_page_get answers);
 * two entries of one index get the same page; pages read <= distinct
 * absent in-file indices (unarmed rounds; an armed run that fails is
 * re-read page by page, GB4, which is what per-page errors need).  Also
 * LOCKED mode.
 * Exit 1 on the first mismatch.
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_batch_fuzz
 */
#include "../attack_stream/att.h"
#include "../attack_stream/slow.h"
#include "../attack_miss/mh.h"

#define PS 4096u
#define FP 3000u /* file pages */

static uint64_t seed = 88172645463325252ull;

static int round1(const char *path, size_t n, int mode, bool arm, int r)
{
	struct lpc_cache *c = att_cache(4096u * PS, PS, LPC_IO_SYNC, mode, 0, 0);
	struct lpc_file *f;
	uint64_t *idx = calloc(n + 1, 8), distinct_absent = 0, bad = 0;
	struct lpc_page **pg = calloc(n + 1, sizeof(*pg));
	int *errs = calloc(n + 1, sizeof(int)), got, want = 0, fails = 0;
	uint8_t *cached = calloc(FP, 1), *seen = calloc(FP, 1);

	slow_install(c);
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 1;
	(void)lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM);
	for (unsigned k = 0; k < 20; k++) { /* some cached first */
		uint64_t i = mh_rand(&seed) % FP;
		struct lpc_page *p;

		if (!lpc_page_get(f, i, 0, &p)) {
			lpc_page_put(p);
			cached[i] = 1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t x = mh_rand(&seed), k = x % 16;

		if (k < 4)
			idx[i] = (i * 2) % FP; /* evens */
		else if (k < 7)
			idx[i] = (i * 2 + 1) % FP; /* odds */
		else if (k < 9)
			idx[i] = (FP - 1 - i % 200); /* descending near EOF */
		else if (k < 10)
			idx[i] = i ? idx[mh_rand(&seed) % i] : 5; /* duplicate */
		else if (k < 11)
			idx[i] = FP + x % 4; /* at / past EOF */
		else if (k < 12)
			idx[i] = UINT64_MAX - (x >> 8) % 3; /* near 2^64 */
		else
			idx[i] = (x >> 8) % FP;
	}
	for (size_t i = 0; i < n; i++)
		if (idx[i] < FP && !cached[idx[i]] && !seen[idx[i]]) {
			seen[idx[i]] = 1;
			distinct_absent++;
			bad = idx[i];
		}
	if (arm && distinct_absent) {
		slow.bad_index = bad;
		atomic_store(&slow.bad_armed, 1);
	}
	slow_reset();
	got = lpc_page_get_batch(f, idx, n, 0, pg, errs);
	uint64_t pages_read = atomic_load(&slow.pages);
	for (size_t i = 0; i < n; i++) {
		struct lpc_page *p;
		int e;

		if (!errs[i]) {
			want++;
			if (!pg[i] ||
			    att_bad_word(lpc_page_data(pg[i]), idx[i] == FP - 1 ? PS - 104 : PS, idx[i] * PS, 7) >= 0) {
				printf("  FAIL r%d n=%zu: entry %zu (index %" PRIu64 ") wrong page/bytes\n",
				       r, n, i, idx[i]);
				fails++;
			}
		}
		e = lpc_page_get(f, idx[i], 0, &p);
		if (!e)
			lpc_page_put(p);
		if (e != errs[i] && !(arm && idx[i] == bad && errs[i] == -EIO)) {
			printf("  FAIL r%d n=%zu mode %d: entry %zu (index %" PRIu64
			       ") err %d, lpc_page_get says %d (armed %d at %" PRIu64 ")\n",
			       r, n, mode, i, idx[i], errs[i], e, arm, bad);
			fails++;
		}
		if (arm && idx[i] != bad && errs[i] == -EIO) {
			printf("  FAIL r%d: entry %zu (index %" PRIu64 ") got the EIO of page %" PRIu64 "\n",
			       r, i, idx[i], bad);
			fails++;
		}
	}
	for (size_t i = 0; i < n && !fails; i++)
		for (size_t j = i + 1; j < n && j < i + 200; j++)
			if (idx[i] == idx[j] && !errs[i] && !errs[j] && pg[i] != pg[j]) {
				printf("  FAIL r%d: entries %zu and %zu (index %" PRIu64 ") got different pages\n",
				       r, i, j, idx[i]);
				fails++;
				break;
			}
	if (got != want) {
		printf("  FAIL r%d n=%zu: returned %d, %d entries without error\n", r, n, got, want);
		fails++;
	}
	if (!arm && pages_read > distinct_absent) {
		printf("  FAIL r%d n=%zu mode %d: %" PRIu64 " pages read for %" PRIu64
		       " distinct absent in-file indices (armed %d)\n", r, n, mode, pages_read, distinct_absent, arm);
		fails++;
	}
	for (size_t i = 0; i < n; i++)
		if (pg[i])
			lpc_page_put(pg[i]);
	atomic_store(&slow.bad_armed, 0);
	lpc_file_close(f);
	if (lpc_cache_destroy(c)) {
		printf("  FAIL r%d: destroy\n", r);
		fails++;
	}
	free(idx); free(pg); free(errs); free(cached); free(seen);
	return fails;
}

int main(void)
{
	static const size_t ns[] = { 0, 1, 2, 63, 64, 65, 127, 129, 300, 1000, 5000 };
	char path[512];
	int fails = 0, r = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(300);
	att_make_file("f", (uint64_t)FP * PS - 100, 7, path, sizeof(path));
	for (int mode = 0; mode < 2; mode++)
		for (int rep = 0; rep < 3; rep++)
			for (unsigned k = 0; k < sizeof(ns) / sizeof(ns[0]); k++)
				fails += round1(path, ns[k], mode ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS,
						(r & 1) != 0, r), r++;
	att_cleanup();
	printf("%d rounds; %s\n", r, fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}
