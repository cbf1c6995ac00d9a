/* SPDX-License-Identifier: MIT */
/*
 * att_hits.c - the look-ahead of a read stream whose list is half hits.
 *
 * lpc_stream_open(3): the distance "doubles (up to max_distance) each time
 * the consumer would wait for a page, and shrinks by one each time it takes
 * a page that was cached", "a list that hits costs no look-ahead", and the
 * reads go "to the device at once".  Here the list alternates a cached page
 * and a cold one (scattered, never adjacent), 256 entries; slow.h holds
 * every read 5 ms.  The 128 cold pages read with lpc_pread one by one take
 * 128 x 5 ms; the stream should overlap them (several in flight, as it
 * does for an all-cold list: att_depth, 4 at once).
 *
 * Observed: each cached entry takes the distance down by one as fast as
 * each wait doubles it (1 -> 2 -> 1 -> 2 ...), so every cold page is issued
 * one entry before it is taken and the consumer waits for nearly all of
 * its read: the stream is no faster than lpc_pread page by page, with 1
 * read in flight at a time.  Exit 1 when the stream is not at least 2x
 * faster than pread on the cold pages, or never had 2 reads in flight.
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_hits
 */
#include "att.h"
#include "slow.h"

#define PS 4096u
#define N 256u

int main(void)
{
	char path[512];
	static uint64_t list[N], cold2[N / 2];
	static char buf[PS];
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_stream *s;
	struct lpc_page *p;
	double t0, ts, tp;
	unsigned k = 0;
	int rc, peak;

	att_make_file("f", 2048u * PS, 1, path, sizeof(path));
	c = att_cache(1024u * PS, PS, LPC_IO_URING, LPC_LOOKUP_LOCKLESS, 0, 0);
	slow_install(c);
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 1;
	(void)lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM);
	for (unsigned i = 0; i < N / 2; i++) {
		list[2 * i] = 1500 + i;				/* cached below */
		list[2 * i + 1] = ((uint64_t)i * 37u % 128u) * 4u; /* cold, scattered */
		cold2[i] = ((uint64_t)i * 37u % 128u) * 4u + 2u;
		ATT_CHECK(lpc_pread(f, buf, PS, (1500ull + i) * PS) == PS, "warm");
	}
	slow.delay_us = 5000;
	slow_reset();
	t0 = slow_secs();
	rc = lpc_stream_open(f, NULL, NULL,
			     &(struct lpc_stream_opts){ .max_distance = 64, .indices = list, .n = N },
			     &s);
	ATT_CHECK(rc == 0, "open");
	while ((rc = lpc_stream_next(s, &p, NULL)) == 1) {
		ATT_CHECK(att_bad_word(lpc_page_data(p), PS, list[k] * PS, 1) < 0, "bytes %u", k);
		lpc_page_put(p);
		k++;
	}
	lpc_stream_close(s);
	ts = slow_secs() - t0;
	peak = atomic_load(&slow.peak);
	ATT_CHECK(rc == 0 && k == N, "stream: rc %d after %u entries", rc, k);
	t0 = slow_secs();
	for (unsigned i = 0; i < N / 2; i++)
		ATT_CHECK(lpc_pread(f, buf, PS, cold2[i] * PS) == PS, "pread");
	tp = slow_secs() - t0;
	printf("half hits: stream %.3f s (peak %d reads in flight), pread of the %u cold pages %.3f "
	       "s: %.2fx\n",
	       ts, peak, N / 2, tp, tp / ts);
	ATT_CHECK(tp / ts >= 2.0 && peak >= 2,
		  "the stream's look-ahead gains %.2fx over pread with %d reads in flight at most",
		  tp / ts, peak);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
