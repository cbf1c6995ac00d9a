/* stale_loop.c - a hot set A that filled the active side goes idle; the
 * workload then loops (sequentially, over and over) over a set B of
 * B_PCT % of the cache.  Null backend; readahead off and a 64 MiB cache unless told.
 * Prints the hit ratio of each pass over B.
 * usage: stale_loop FILE [B_PCT] [A_PCT] [CACHE_MIB (64)] [RA: 0 off (default), 1 lpc's default readahead] */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lpc/lpc.h>

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }

static void get(struct lpc_file *f, uint64_t i)
{
	struct lpc_page *p;
	int rc = lpc_page_get(f, i, 0, &p);
	if (rc) { fprintf(stderr, "lpc_page_get(%" PRIu64 ") = %d\n", i, rc); exit(1); }
	lpc_page_put(p);
}

int main(int argc, char **argv)
{
	const uint64_t N = (argc > 4 ? strtoull(argv[4], 0, 0) : 64) * 256; /* frames */
	int ra = argc > 5 ? atoi(argv[5]) : 0;
	unsigned bpct = argc > 2 ? atoi(argv[2]) : 30, apct = argc > 3 ? atoi(argv[3]) : 85;
	uint64_t A = N * apct / 100, B = N * bpct / 100, filepages = 8 * N;
	struct lpc_config cfg; struct lpc_cache *c; struct lpc_file *f; struct lpc_stats s0, s1;
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(filepages * 4096))) { perror("file"); return 1; }
	close(fd);
	lpc_config_init(&cfg);
	cfg.cache_bytes = N * 4096; cfg.io_backend = LPC_IO_NULL; cfg.readahead_kb = ra ? 0 : LPC_READAHEAD_OFF;
	if (lpc_cache_create(&cfg, &c) || lpc_file_open(c, argv[1], O_RDONLY, 0, &f)) return 1;
	/* Phase A: A = pages [0, A) hit in random order, interleaved with cold
	 * pages [4N, 8N) so the hand runs and promotes them. */
	uint64_t cold = 4 * N;
	for (int round = 0; round < 8; round++) {
		for (uint64_t k = 0; k < 2 * A; k++) {
			get(f, rnd() % A);
			if (k % 4 == 0) { get(f, cold++); if (cold == 8 * N) cold = 4 * N; }
		}
	}
	lpc_stats(c, &s0);
	printf("readahead %s, ra_wasted so far %" PRIu64 "\n", ra ? "default" : "off", s0.ra_wasted);
	printf("cache %" PRIu64 " frames, A = %" PRIu64 " pages idle from now, loop over B = %" PRIu64 " pages (%u%% of cache)\n", N, A, B, bpct);
	/* Phase B: loop over [2N, 2N + B) */
	for (int pass = 0; pass < 12; pass++) {
		lpc_stats(c, &s0);
		for (uint64_t i = 0; i < B; i++) get(f, 2 * N + i);
		lpc_stats(c, &s1);
		printf("pass %2d: hit ratio %.3f  pages read from storage %6" PRIu64 "  evictions %6" PRIu64 "\n", pass,
		       (double)(s1.hits - s0.hits) / (double)(s1.lookups - s0.lookups),
		       s1.read_pages - s0.read_pages, s1.evictions - s0.evictions);
	}
	unsigned stillA = 0; struct lpc_page *p;
	for (uint64_t i = 0; i < A; i++) if (lpc_page_find(f, i, &p) == 0) { stillA++; lpc_page_put(p); }
	printf("pages of idle A still cached: %u of %" PRIu64 "\n", stillA, A);
	lpc_file_close(f); lpc_cache_destroy(c);
	return 0;
}
