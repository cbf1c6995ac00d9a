/* shift.c - a working set that moves: uniform random reads of hot set A
 * (S_PCT % of the cache) until steady, then of a disjoint hot set B of the
 * same size.  Prints B's hit ratio per chunk of a quarter cache's worth of
 * reads after the switch, and how many reads B needed to reach 95 % of A's
 * steady hit ratio.  Null backend (no disk).
 * MIX=1 in the environment: A is first read interleaved with cold pages.
 * usage: shift FILE [S_PCT (70)] [CACHE_MIB (64)] [RA: 0 off (default), 1 default] */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
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

static double chunk(struct lpc_cache *c, struct lpc_file *f, uint64_t base, uint64_t S, uint64_t n)
{
	struct lpc_stats s0, s1;
	lpc_stats(c, &s0);
	for (uint64_t k = 0; k < n; k++) get(f, base + rnd() % S);
	lpc_stats(c, &s1);
	return (double)(s1.hits - s0.hits) / (double)(s1.lookups - s0.lookups);
}

int main(int argc, char **argv)
{
	unsigned spct = argc > 2 ? atoi(argv[2]) : 70;
	const uint64_t N = (argc > 3 ? strtoull(argv[3], 0, 0) : 64) * 256;
	int ra = argc > 4 ? atoi(argv[4]) : 0;
	uint64_t S = N * spct / 100, q = N / 4;
	struct lpc_config cfg; struct lpc_cache *c; struct lpc_file *f;
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(8 * N * 4096))) { perror("file"); return 1; }
	close(fd);
	lpc_config_init(&cfg);
	cfg.cache_bytes = N * 4096; cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = ra ? 0 : LPC_READAHEAD_OFF;
	if (lpc_cache_create(&cfg, &c) || lpc_file_open(c, argv[1], O_RDONLY, 0, &f)) return 1;
	double steady = 0;
	if (getenv("MIX")) { /* MIX=1: A's pages interleaved with 2N cold pages
			      * first, so A's frames are scattered over the pool */
		for (uint64_t k = 0; k < 2 * N; k++) { get(f, rnd() % S); get(f, 6 * N + k); }
	}
	for (int i = 0; i < 40; i++) steady = chunk(c, f, 0, S, q);
	printf("cache %" PRIu64 " frames, hot set %" PRIu64 " pages (%u%%); A's steady hit ratio %.3f\n", N, S, spct, steady);
	uint64_t reads = 0, reached = 0;
	for (int i = 0; i < 80; i++) {
		double h = chunk(c, f, 4 * N, S, q);
		reads += q;
		if (!reached && h >= 0.95 * steady) reached = reads;
		if (i < 8 || i % 8 == 7) printf("  after %7" PRIu64 " reads of B: hit ratio %.3f\n", reads, h);
	}
	printf("B reached 95%% of A's hit ratio after %" PRIu64 " reads (%.1f x the hot set)%s\n", reached,
	       (double)reached / (double)S, reached ? "" : "  (never, within the run)");
	{ /* at the end only: a find marks the page referenced */
		struct lpc_page *p; uint64_t a = 0, b = 0;
		for (uint64_t i = 0; i < S; i++) {
			if (lpc_page_find(f, i, &p) == 0) { a++; lpc_page_put(p); }
			if (lpc_page_find(f, 4 * N + i, &p) == 0) { b++; lpc_page_put(p); }
		}
		printf("at the end: %" PRIu64 " pages of the idle A cached, %" PRIu64 " of B\n", a, b);
	}
	lpc_file_close(f); lpc_cache_destroy(c);
	return 0;
}
