/* SPDX-License-Identifier: MIT */
/*
 * att_stale.c - a read stream's look-ahead against writes, truncates and
 * invalidates made between two lpc_stream_next calls (by the consumer, and
 * by its callback), with the look-ahead's reads still in flight (slow.h
 * holds each read 30 ms) or done.  Contract (lpc.h): every page handed out
 * has lpc_page_get's guarantees (A.1, C.1-C.3): never stale data after a
 * write or an invalidate, nothing past the end after a truncate (-ENXIO),
 * the cut page zero-filled past the end.  Both lookup modes, both backends.
 * Exit 1 on any wrong byte or result.  (Held when written.)
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_stale
 */
#include "att.h"
#include "slow.h"

#define PS 4096u
#define NP 64u
#define CUT (40u * PS - 100u)

static char path[512];
static struct lpc_file *f;
static unsigned produced;

/* The list 0..63; when it has produced entry 12, the callback itself
 * writes page 50 through lpc (a re-entry the contract allows). */
static int cb(void *arg, uint64_t *index, void **user)
{
	static uint64_t w[PS / 8];

	(void)arg;
	(void)user;
	if (produced == NP)
		return 0;
	if (produced == 12) {
		for (unsigned i = 0; i < PS / 8; i++)
			w[i] = att_word(8, 50ull * PS + i * 8);
		if (lpc_pwrite(f, w, PS, 50ull * PS) != PS)
			printf("  callback's pwrite failed\n");
	}
	*index = produced++;
	return 1;
}

static int want_tag(uint64_t i)
{
	return i == 20 || i == 50 ? 8 : i == 30 ? 6 : 5;
}

int main(void)
{
	int backends[2] = { LPC_IO_SYNC, LPC_IO_URING };
	int modes[2] = { LPC_LOOKUP_LOCKLESS, LPC_LOOKUP_LOCKED };
	static uint64_t w[PS / 8];

	for (int b = 0; b < 2; b++)
		for (int m = 0; m < 2; m++) {
			struct lpc_cache *c = att_cache(1024u * PS, PS, backends[b], modes[m], 0, 0);
			struct lpc_stream *s;
			struct lpc_page *p;
			int rc, fd;

			att_make_file("f", NP * PS, 5, path, sizeof(path));
			printf("%s/%s\n", att_backend_name(backends[b]), att_mode_name(modes[m]));
			slow_install(c);
			slow.delay_us = 30000;
			produced = 0;
			if (lpc_file_open(c, path, O_RDWR, 0, &f)) {
				printf("open failed\n");
				return 1;
			}
			rc = lpc_stream_open(f, cb, NULL, &(struct lpc_stream_opts){ .max_distance = 64 },
					     &s);
			ATT_CHECK(rc == 0, "open %d", rc);
			for (uint64_t k = 0; k < NP; k++) {
				if (k == 10) {
					/* the look-ahead has 20 and 30 read or in flight now
					 * (checked below: the distance is 16 or more) */
					for (unsigned i = 0; i < PS / 8; i++)
						w[i] = att_word(8, 20ull * PS + i * 8);
					ATT_CHECK(lpc_pwrite(f, w, PS, 20ull * PS) == PS, "pwrite 20");
					usleep(200000); /* every read ahead done */
					/* page 30 changed behind lpc, then invalidated */
					fd = open(path, O_WRONLY);
					for (unsigned i = 0; i < PS / 8; i++)
						w[i] = att_word(6, 30ull * PS + i * 8);
					if (pwrite(fd, w, PS, 30ull * PS) != PS)
						return 77;
					close(fd);
					(void)lpc_invalidate(f, 30ull * PS, PS);
					ATT_CHECK(lpc_truncate(f, CUT) == 0, "truncate");
				}
				rc = lpc_stream_next(s, &p, NULL);
				if (k >= 10 && k * PS >= CUT) {
					ATT_CHECK(rc == -ENXIO, "entry %" PRIu64 " past the cut: %d", k,
						  rc);
					if (rc == 1)
						lpc_page_put(p);
					continue;
				}
				ATT_CHECK(rc == 1, "entry %" PRIu64 ": %d", k, rc);
				if (rc != 1)
					continue;
				if (k == 39 && k >= 10) {
					ATT_CHECK(att_bad_word(lpc_page_data(p), PS - 100, k * PS, 5) < 0,
						  "cut page: bytes below the cut");
					for (unsigned i = PS - 100; i < PS; i++)
						if (((char *)lpc_page_data(p))[i]) {
							ATT_CHECK(0, "cut page: byte %u past the cut", i);
							break;
						}
				} else {
					ATT_CHECK(att_bad_word(lpc_page_data(p), PS, k * PS,
							       (uint64_t)want_tag(k)) < 0,
						  "entry %" PRIu64 ": stale or wrong bytes (want tag %d)",
						  k, want_tag(k));
				}
				lpc_page_put(p);
				if (k == 9)
					ATT_CHECK(s != NULL, "-");
			}
			ATT_CHECK(lpc_stream_next(s, &p, NULL) == 0, "end");
			lpc_stream_close(s);
			ATT_CHECK(lpc_file_close(f) == 0, "close");
			ATT_CHECK(lpc_cache_destroy(c) == 0, "destroy");
		}
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
