/* SPDX-License-Identifier: MIT */
/*
 * att_entries.c - each entry's own result, for lpc_page_get_batch and a read
 * stream: a run of adjacent cold pages where one page's reads always fail
 * (slow.h's bad index: -EIO on every read that covers it), duplicates of the
 * bad and of good pages, past-EOF and UINT64_MAX indices, n = 0, and a
 * callback that ends its list with an error.  Contract (lpc.h): errs[i] /
 * lpc_stream_next's result is that entry's own (-EIO only for the bad page,
 * -ENXIO past the end), an index k times in the array holds k references,
 * every good page has the file's bytes, the callback's error comes once
 * after the entries before it, then 0.  Both lookup modes, both backends.
 * Exit 1 on any entry with the wrong result or bytes.
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_entries
 */
#include "att.h"
#include "slow.h"

#define PS 4096u
#define FILE_PAGES 64u
#define BAD 13u

static const uint64_t idx[] = { 10, 11, 12, 13, 14, 15, 16, 13, 11, 63, 64, 1000,
				UINT64_MAX, UINT64_MAX - 1, (UINT64_MAX >> 12) + 1, 17, 17 };
#define N (sizeof(idx) / sizeof(idx[0]))

static int expect(uint64_t i)
{
	if (i >= FILE_PAGES)
		return -ENXIO;
	return i == BAD ? -EIO : 0;
}

struct cbarg { unsigned pos; };
static int cb(void *arg, uint64_t *index, void **user)
{
	struct cbarg *a = arg;

	if (a->pos == N)
		return -ECANCELED;
	*user = (void *)(uintptr_t)(a->pos + 1);
	*index = idx[a->pos++];
	return 1;
}

int main(void)
{
	char path[512];
	int backends[2] = { LPC_IO_SYNC, LPC_IO_URING };
	int modes[2] = { LPC_LOOKUP_LOCKLESS, LPC_LOOKUP_LOCKED };

	att_make_file("f", (uint64_t)FILE_PAGES * PS, 9, path, sizeof(path));
	for (int b = 0; b < 2; b++)
		for (int m = 0; m < 2; m++) {
			struct lpc_cache *c = att_cache(256u * PS, PS, backends[b], modes[m], 0, 0);
			struct lpc_page *pages[N];
			int errs[N], rc;
			struct lpc_file *f;
			struct lpc_stream *s;
			struct cbarg a = { 0 };
			unsigned k = 0;
			void *u;

			printf("%s/%s\n", att_backend_name(backends[b]), att_mode_name(modes[m]));
			slow_install(c);
			slow.bad_index = BAD;
			atomic_store(&slow.bad_armed, 1);
			rc = lpc_file_open(c, path, O_RDONLY, 0, &f);
			if (rc) {
				printf("open: %d\n", rc);
				return 1;
			}
			ATT_CHECK(lpc_page_get_batch(f, idx, 0, 0, NULL, NULL) == 0, "n = 0");
			rc = lpc_page_get_batch(f, idx, N, 0, pages, errs);
			int want = 0;
			for (unsigned i = 0; i < N; i++) {
				want += expect(idx[i]) == 0;
				ATT_CHECK(errs[i] == expect(idx[i]),
					  "batch entry %u (page %" PRIu64 "): %d, want %d", i, idx[i],
					  errs[i], expect(idx[i]));
				ATT_CHECK((errs[i] == 0) == (pages[i] != NULL), "batch entry %u page",
					  i);
				if (pages[i]) {
					ATT_CHECK(att_bad_word(lpc_page_data(pages[i]), PS, idx[i] * PS,
							       9) < 0,
						  "batch entry %u: wrong bytes", i);
					lpc_page_put(pages[i]);
				}
			}
			ATT_CHECK(rc == want, "batch returned %d, want %d", rc, want);

			(void)lpc_invalidate(f, 0, 0);
			rc = lpc_stream_open(f, cb, &a, &(struct lpc_stream_opts){ .max_distance = 8 },
					     &s);
			ATT_CHECK(rc == 0, "stream open %d", rc);
			for (;;) {
				struct lpc_page *p;

				rc = lpc_stream_next(s, &p, &u);
				if (k == N) {
					ATT_CHECK(rc == -ECANCELED, "callback's error: %d", rc);
					break;
				}
				ATT_CHECK(rc == (expect(idx[k]) ? expect(idx[k]) : 1),
					  "stream entry %u (page %" PRIu64 "): %d, want %d", k, idx[k],
					  rc, expect(idx[k]) ? expect(idx[k]) : 1);
				ATT_CHECK(u == (void *)(uintptr_t)(k + 1), "stream entry %u: user %p", k,
					  u);
				if (rc == 1) {
					ATT_CHECK(att_bad_word(lpc_page_data(p), PS, idx[k] * PS, 9) < 0,
						  "stream entry %u: wrong bytes", k);
					lpc_page_put(p);
				} else {
					ATT_CHECK(p == NULL, "stream entry %u: page on error", k);
				}
				if (rc == 0 || ++k > N)
					break;
			}
			rc = lpc_stream_next(s, &(struct lpc_page *){ NULL }, NULL);
			ATT_CHECK(rc == 0, "after the error: %d", rc);
			lpc_stream_close(s);
			atomic_store(&slow.bad_armed, 0);
			ATT_CHECK(lpc_file_close(f) == 0, "close");
			ATT_CHECK(lpc_cache_destroy(c) == 0, "destroy (a reference leaked?)");
		}
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
