/* SPDX-License-Identifier: MIT */
/*
 * att_scan_resist - CLOCK2's scan resistance with readahead on: a hot set
 * (128 pages of file H, each read 4 times between scans) and a cold scan of
 * file S, 8x the cache, in 4 KiB, 16 KiB and 128 KiB calls, rounds of (hot
 * pass, scan slice).  Reports the hot set's hit ratio (hits on H / reads of
 * H) with readahead on and off.  Also a random reader on a third file with
 * readahead on: ra_windows must stay 0.
 * Usage: att_scan_resist    Exit: 0 held, 1 readahead worse by > 5 points,
 * or readahead on random access.
 */
#include "att.h"

static const size_t PS = 4096;
#define CACHE 512

static double hot_ratio(uint32_t ra_kb, size_t call, const char *ph, const char *ps)
{
	struct lpc_cache *c = att_cache(CACHE * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, ra_kb, 0);
	struct lpc_file *h, *s;
	uint64_t *buf = aligned_alloc(4096, 131072);
	uint64_t hot_reads = 0, hot_miss = 0, pos = 0;
	struct lpc_stats a, b;

	if (lpc_file_open(c, ph, O_RDONLY, 0, &h) || lpc_file_open(c, ps, O_RDONLY, 0, &s))
		exit(1);
	for (int round = 0; round < 64; round++) {
		for (int rep = 0; rep < 4; rep++)
			for (uint64_t i = 0; i < 128; i++) {
				lpc_stats(c, &a);
				lpc_pread(h, buf, PS, i * PS);
				lpc_stats(c, &b);
				hot_reads++;
				hot_miss += b.misses - a.misses;
			}
		/* A slice of the scan: CACHE/2 pages. */
		for (uint64_t k = 0; k < CACHE / 2 * PS; k += call) {
			lpc_pread(s, buf, call, pos);
			pos = (pos + call) % (8 * CACHE * PS);
		}
	}
	lpc_file_close(h);
	lpc_file_close(s);
	lpc_cache_destroy(c);
	free(buf);
	return 1.0 - (double)hot_miss / (double)hot_reads;
}

int main(void)
{
	char ph[400], ps[400], pr[400];
	size_t calls[] = { 4096, 16384, 131072 };
	int bad = 0;

	att_make_file("hot", 128 * PS, 1, ph, sizeof(ph));
	att_make_file("scan", 8 * CACHE * PS, 2, ps, sizeof(ps));
	att_make_file("rnd", 64 * CACHE * PS, 3, pr, sizeof(pr));
	for (int i = 0; i < 3; i++) {
		double on = hot_ratio(0, calls[i], ph, ps);
		double off = hot_ratio(LPC_READAHEAD_OFF, calls[i], ph, ps);

		printf("  scan calls %6zu: hot-set hit ratio readahead on %.3f, off %.3f\n", calls[i],
		       on, off);
		if (on < off - 0.05)
			bad = 1;
	}
	for (uint64_t span = 2 * CACHE; span <= 64 * CACHE; span *= 32) {
		struct lpc_cache *c = att_cache(CACHE * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 0, 0);
		struct lpc_file *r;
		struct lpc_stats st;
		uint64_t buf[512], x = 12345;

		if (lpc_file_open(c, pr, O_RDONLY, 0, &r))
			return 1;
		for (int i = 0; i < 20000; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			lpc_pread(r, buf, PS, ((x >> 20) % span) * PS);
		}
		lpc_stats(c, &st);
		printf("  20000 uniform random 4 KiB reads over %" PRIu64 " pages: misses %" PRIu64
		       " ra_windows %" PRIu64 " ra_pages %" PRIu64 " (LPC_RA_STREAMS candidates: "
		       "a miss confirms one with probability 8/%" PRIu64 ")\n",
		       span, st.misses, st.ra_windows, st.ra_pages, span);
		if (st.ra_windows)
			bad = 1;
		lpc_file_close(r);
		lpc_cache_destroy(c);
	}
	att_cleanup();
	printf(bad ? "DEFECT (minor): readahead fired on uniform random access\n" : "held\n");
	return bad;
}
