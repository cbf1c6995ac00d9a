/* phase.c - a hot set's hit ratio beside a scanner, after an earlier phase
 * that moved the active target.  Null backend, one thread, lpc_page_get.
 * usage: phase FILE CACHE_MIB RA PRE H SCAN
 *   PRE   what runs first, 20x the cache in accesses:
 *           none      nothing
 *           loopra    a sequential loop over 1.1x the cache (another region)
 *           hotloop   a hot set of 0.4x the cache 1:1 with a loop over 0.8x
 *           uniform4  uniform random over 4x the cache
 *   then, 40x the cache in accesses: a hot set of H x the cache (uniform,
 *   pages [0, H*N)), 1:1 with SCAN: "once" (a sequential scan that never
 *   repeats) or "loop" (a loop over 1.0x the cache).
 * Prints the hot set's hit ratio per tenth of the second phase. */
#include "probe.h"

static int acc(struct lpc_file *f, uint64_t i)
{
	struct lpc_page *p;
	if (lpc_page_find(f, i, &p) == 0) { lpc_page_put(p); return 1; }
	get(f, i);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 7) { fprintf(stderr, "usage: phase FILE CACHE_MIB RA PRE H SCAN\n"); return 2; }
	uint64_t N = strtoull(argv[2], 0, 0) * 256;
	int ra = atoi(argv[3]);
	const char *pre = argv[4], *scan = argv[6];
	double h = atof(argv[5]);
	uint64_t H = (uint64_t)(h * N);
	mkfile(argv[1], 64 * N);
	struct lpc_cache *c = mkcache(N, ra, -1);
	struct lpc_file *f;
	struct lpc_stats s0, s1;
	if (lpc_file_open(c, argv[1], O_RDONLY, 0, &f)) return 1;
	uint64_t cur = 0;
	for (uint64_t k = 0; k < 20 * N; k++) {
		if (!strcmp(pre, "none")) break;
		else if (!strcmp(pre, "loopra")) { get(f, 2 * N + cur); if (++cur == N * 11 / 10) cur = 0; }
		else if (!strcmp(pre, "hotloop")) {
			get(f, 2 * N + rnd() % (N * 4 / 10));
			get(f, 4 * N + cur); if (++cur == N * 8 / 10) cur = 0; k++;
		} else if (!strcmp(pre, "uniform4")) get(f, 2 * N + rnd() % (4 * N));
		else { fprintf(stderr, "PRE?\n"); return 2; }
	}
	lpc_stats(c, &s0);
	printf("%s: cache %" PRIu64 " frames ra %d, after %s: target %u (%.0f%%) nactive %u; hot %.2f beside scan %s\n",
	       VARIANT, N, ra, pre, ws_target(c), 100.0 * ws_target(c) / N, atomic_load(&c->pool.nactive), h, scan);
	uint64_t hh = 0, hn = 0, all_h = 0, all_n = 0;
	cur = 0;
	uint64_t sbase = 8 * N;
	for (int tenth = 0; tenth < 10; tenth++) {
		hh = hn = 0;
		for (uint64_t k = 0; k < 2 * N; k++) {
			hh += acc(f, rnd() % H); hn++;
			if (!strcmp(scan, "once")) { get(f, sbase + cur); if (++cur == 48 * N) cur = 0; }
			else { get(f, sbase + cur); if (++cur == N) cur = 0; }
		}
		all_h += hh; all_n += hn;
		printf("  tenth %d: hot hit %.3f target %u (%.0f%%) nactive %u refaults %" PRIu64 " (active %" PRIu64 ")\n",
		       tenth, (double)hh / hn, ws_target(c), 100.0 * ws_target(c) / N, atomic_load(&c->pool.nactive),
		       ws_refaults(c), ws_refaults_active(c));
	}
	lpc_stats(c, &s1);
	printf("SUMMARY %s phase %s MiB ra %d pre %s hot %.2f scan %s: hot hit %.3f, pages read %" PRIu64 "\n",
	       VARIANT, argv[2], ra, pre, h, scan, (double)all_h / all_n, s1.read_pages - s0.read_pages);
	lpc_file_close(f); lpc_cache_destroy(c); unlink(argv[1]);
	return 0;
}
