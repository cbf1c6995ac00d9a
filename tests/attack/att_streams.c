/* SPDX-License-Identifier: MIT */
/*
 * att_streams - k scanners on disjoint parts of one file at once (4 KiB
 * calls; a cache that holds the whole file): the stream table (readahead.c
 * S1-S3, LPC_RA_STREAMS slots under a trylock'd ra_lock) should keep each
 * stream's ramp, so reads per scanner stay near a lone scanner's.  A miss
 * or a marker hit that finds ra_lock taken reads no window and leaves its
 * slot behind (S1 then never matches: the stream restarts as a candidate).
 * Prints reads and pages per read for k = 1, 2, 4, 8, 12 (12 > LPC_RA_STREAMS).
 * Usage: att_streams [sync|uring]    Exit: 0 (a measurement; see README).
 */
#include "att.h"

static const size_t PS = 4096;
#define PART 2048u
static struct lpc_file *F;

static void *scan(void *arg)
{
	uint64_t first = (uint64_t)(uintptr_t)arg * PART, buf[512];

	for (uint64_t i = first; i < first + PART; i++)
		if (lpc_pread(F, buf, PS, i * PS) != (ssize_t)PS || att_bad_word(buf, PS, i * PS, 6) >= 0) {
			printf("bad read\n");
			exit(1);
		}
	return NULL;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "uring") ? LPC_IO_URING : LPC_IO_SYNC;
	unsigned ks[] = { 1, 2, 4, 8, 12 };
	char path[400];

	att_make_file("st", 12 * PART * PS, 6, path, sizeof(path));
	for (int i = 0; i < 5; i++) {
		struct lpc_cache *c = att_cache(16 * PART * PS, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
		pthread_t th[12];
		struct lpc_stats s;

		if (lpc_file_open(c, path, O_RDONLY, 0, &F))
			return 1;
		for (unsigned k = 0; k < ks[i]; k++)
			pthread_create(&th[k], NULL, scan, (void *)(uintptr_t)k);
		for (unsigned k = 0; k < ks[i]; k++)
			pthread_join(th[k], NULL);
		lpc_stats(c, &s);
		printf("  %2u scanners x %u pages: reads %5" PRIu64 " (%.1f per scanner, %.1f pages/read)"
		       " windows %" PRIu64 " async %" PRIu64 " ra_wasted %" PRIu64 "\n",
		       ks[i], PART, s.reads, (double)s.reads / ks[i],
		       (double)s.read_pages / (double)s.reads, s.ra_windows, s.ra_async, s.ra_wasted);
		lpc_file_close(F);
		lpc_cache_destroy(c);
	}
	att_cleanup();
	return 0;
}
