/* SPDX-License-Identifier: MIT */
/*
 * att_args.c - arguments and re-entry: lpc_stream_open's -EINVAL cases
 * (max_distance 4097, NULL indices with n > 0, NULL f/out), opts NULL (an
 * empty list: 0 at once, and again), max_distance 4096 on an 8-frame cache
 * (max_pages capped at 2), lpc_page_get_batch's -EINVAL (flags, NULL
 * arrays, n > INT32_MAX), and a callback that itself runs a batch and a
 * whole nested stream on the same file (lpc.h: "it may call lpc, but not
 * this stream"), in both lookup modes.  Exit 1 on a wrong result or bytes.
 * (Held when written.)
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_args
 */
#include "att.h"

#define PS 4096u

static struct lpc_file *f;
static unsigned pos;

static int cb(void *arg, uint64_t *index, void **user)
{
	uint64_t idx[3] = { pos + 40, pos + 41, pos + 40 };
	struct lpc_page *pg[3], *p;
	struct lpc_stream *s;
	int errs[3], n = 0;

	(void)arg;
	(void)user;
	if (pos == 32)
		return 0;
	if (lpc_page_get_batch(f, idx, 3, 0, pg, errs) != 3)
		att_fails++, printf("  FAIL nested batch\n");
	for (int i = 0; i < 3; i++)
		if (pg[i])
			lpc_page_put(pg[i]);
	if (lpc_stream_open(f, NULL, NULL, &(struct lpc_stream_opts){ .indices = idx, .n = 3 },
			    &s) == 0) {
		while (lpc_stream_next(s, &p, NULL) == 1) {
			if (att_bad_word(lpc_page_data(p), PS, idx[n] * PS, 6) >= 0)
				att_fails++, printf("  FAIL nested stream bytes\n");
			lpc_page_put(p);
			n++;
		}
		lpc_stream_close(s);
	}
	if (n != 3)
		att_fails++, printf("  FAIL nested stream: %d entries\n", n);
	*index = pos++;
	return 1;
}

int main(void)
{
	char path[512];
	int modes[2] = { LPC_LOOKUP_LOCKLESS, LPC_LOOKUP_LOCKED };
	uint64_t one = 0;
	struct lpc_page *pg;
	int err;

	att_make_file("f", 128u * PS, 6, path, sizeof(path));
	for (int m = 0; m < 2; m++) {
		struct lpc_cache *c = att_cache(8u * PS, PS, LPC_IO_URING, modes[m], 0, 0);
		struct lpc_stream *s;
		struct lpc_page *p;
		unsigned k = 0;
		int rc;

		if (lpc_file_open(c, path, O_RDONLY, 0, &f))
			return 1;
		ATT_CHECK(lpc_stream_open(f, NULL, NULL,
					  &(struct lpc_stream_opts){ .max_distance = 4097 }, &s) ==
				  -EINVAL,
			  "max_distance 4097");
		ATT_CHECK(lpc_stream_open(f, NULL, NULL, &(struct lpc_stream_opts){ .n = 1 }, &s) ==
				  -EINVAL,
			  "NULL indices");
		ATT_CHECK(lpc_stream_open(NULL, NULL, NULL, NULL, &s) == -EINVAL, "NULL f");
		ATT_CHECK(lpc_stream_open(f, NULL, NULL, NULL, NULL) == -EINVAL, "NULL out");
		ATT_CHECK(lpc_stream_next(NULL, &p, NULL) == -EINVAL, "next NULL s");
		ATT_CHECK(lpc_page_get_batch(f, &one, 1, 1, &pg, &err) == -EINVAL, "flags");
		ATT_CHECK(lpc_page_get_batch(f, NULL, 1, 0, &pg, &err) == -EINVAL, "NULL indices");
		ATT_CHECK(lpc_page_get_batch(f, &one, (size_t)INT32_MAX + 1, 0, &pg, &err) ==
				  -EINVAL,
			  "n > INT32_MAX");
		ATT_CHECK(lpc_page_get_batch(NULL, &one, 1, 0, &pg, &err) == -EINVAL, "NULL f");
		lpc_stream_close(NULL);
		rc = lpc_stream_open(f, NULL, NULL, NULL, &s);
		ATT_CHECK(rc == 0, "opts NULL: %d", rc);
		if (!rc) {
			ATT_CHECK(lpc_stream_next(s, &p, NULL) == 0, "empty list");
			ATT_CHECK(lpc_stream_next(s, &p, NULL) == 0, "empty list, again");
			lpc_stream_close(s);
		}
		pos = 0;
		rc = lpc_stream_open(f, cb, NULL, &(struct lpc_stream_opts){ .max_distance = 4096 },
				     &s);
		ATT_CHECK(rc == 0, "open 4096: %d", rc);
		if (rc)
			s = NULL;
		while (s && (rc = lpc_stream_next(s, &p, NULL)) == 1) {
			ATT_CHECK(att_bad_word(lpc_page_data(p), PS, (uint64_t)k * PS, 6) < 0,
				  "entry %u bytes", k);
			lpc_page_put(p);
			k++;
		}
		ATT_CHECK(rc == 0 && k == 32, "%s: stream: rc %d after %u entries",
			  att_mode_name(modes[m]), rc, k);
		if (s)
			lpc_stream_close(s);
		ATT_CHECK(lpc_file_close(f) == 0, "close");
		ATT_CHECK(lpc_cache_destroy(c) == 0, "destroy");
	}
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
