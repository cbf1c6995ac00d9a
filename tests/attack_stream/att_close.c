/* SPDX-License-Identifier: MIT */
/*
 * att_close.c - lpc_stream_close with the look-ahead's reads in flight
 * (slow.h holds each read 50 ms), then at once the file's last close and
 * lpc_cache_destroy; and a batch's queued runs met by the last close.
 * Contract (lpc.h): reads a closed stream started complete on their own,
 * their pages stay cached; close waits for nothing; the last close then
 * waits for them (ra_worker.c Q3), and destroy with no reference held
 * returns 0.  Under ASan: no use after free, no leak.  Exit 1 on a wrong
 * result.  (Held when written.)
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_close
 */
#include "att.h"
#include "slow.h"

#define PS 4096u

int main(void)
{
	char path[512];
	int modes[2] = { LPC_LOOKUP_LOCKLESS, LPC_LOOKUP_LOCKED };
	uint64_t idx[256];

	att_make_file("f", 512u * PS, 2, path, sizeof(path));
	for (unsigned i = 0; i < 256; i++)
		idx[i] = (uint64_t)i * 2;
	for (int b = 0; b < 2; b++)
		for (int m = 0; m < 2; m++) {
			struct lpc_cache *c = att_cache(1024u * PS, PS,
							b ? LPC_IO_URING : LPC_IO_SYNC, modes[m], 0, 0);
			struct lpc_file *f;
			struct lpc_stream *s;
			struct lpc_page *p;
			double t0;
			int rc;

			slow_install(c);
			slow.delay_us = 50000;
			slow_reset();
			if (lpc_file_open(c, path, O_RDONLY, 0, &f))
				return 1;
			rc = lpc_stream_open(f, NULL, NULL,
					     &(struct lpc_stream_opts){ .max_distance = 256,
									.indices = idx, .n = 256 },
					     &s);
			ATT_CHECK(rc == 0, "stream open");
			for (int k = 0; k < 6; k++) {
				rc = lpc_stream_next(s, &p, NULL);
				ATT_CHECK(rc == 1, "entry %d: %d", k, rc);
				if (rc == 1) {
					ATT_CHECK(att_bad_word(lpc_page_data(p), PS, idx[k] * PS, 2) <
							  0,
						  "bytes");
					lpc_page_put(p);
				}
			}
			t0 = slow_secs();
			lpc_stream_close(s);
			ATT_CHECK(slow_secs() - t0 < 0.02, "stream close waited %.3f s",
				  slow_secs() - t0);
			printf("%s/%s: closed with %d reads in flight\n", b ? "uring" : "sync",
			       att_mode_name(modes[m]), atomic_load(&slow.now));
			/* a batch whose runs are queued, then the last close */
			struct lpc_page *pg[4];
			int errs[4];
			uint64_t bi[4] = { 301, 303, 305, 307 };

			rc = lpc_page_get_batch(f, bi, 4, 0, pg, errs);
			ATT_CHECK(rc == 4, "batch %d", rc);
			for (int i = 0; i < 4; i++)
				if (pg[i])
					lpc_page_put(pg[i]);
			s = NULL;
			rc = lpc_stream_open(f, NULL, NULL,
					     &(struct lpc_stream_opts){ .indices = idx + 100, .n = 100 },
					     &s);
			for (int k = 0; k < 8 && rc == 0; k++)
				if (lpc_stream_next(s, &p, NULL) == 1)
					lpc_page_put(p);
			lpc_stream_close(s);
			ATT_CHECK(lpc_file_close(f) == 0, "last close");
			ATT_CHECK(atomic_load(&slow.now) == 0, "a read still in flight after the last close");
			ATT_CHECK(lpc_cache_destroy(c) == 0, "destroy");
		}
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
