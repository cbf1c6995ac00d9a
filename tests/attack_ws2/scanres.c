/* scanres.c - tests/unit/test_evict_scan.c's scenario, parameterised: a hot
 * file of H x the cache read by Zipf(0.99) ("zipf") or uniformly ("uni"),
 * PER lookups per page of a sequential scan of a file 4x the cache (default
 * readahead unless RA 0).  Warm-up as in the test: the hot reader alone,
 * then the cache filled by other pages of the scanned file with hot reads
 * between.  Prints the hot set's hit ratio before, during and after the scan.
 * usage: scanres DIR CACHE_MIB H DIST PER RA */
#include "probe.h"

static double *cdf;
static uint64_t HOT;
static uint64_t hits, looks;

static uint64_t draw(int zipf)
{
	if (!zipf) return rnd() % HOT;
	double u = rndu();
	uint64_t lo = 0, hi = HOT - 1;
	while (lo < hi) { uint64_t mid = (lo + hi) / 2; if (cdf[mid] < u) lo = mid + 1; else hi = mid; }
	return lo;
}

static void hot_lookup(struct lpc_file *f, int zipf)
{
	struct lpc_page *p;
	uint64_t i = draw(zipf);
	looks++;
	if (lpc_page_find(f, i, &p) == 0) { hits++; lpc_page_put(p); return; }
	get(f, i);
}

int main(int argc, char **argv)
{
	if (argc < 7) { fprintf(stderr, "usage: scanres DIR CACHE_MIB H DIST PER RA\n"); return 2; }
	uint64_t N = strtoull(argv[2], 0, 0) * 256;
	double h = atof(argv[3]);
	int zipf = !strcmp(argv[4], "zipf"), per = atoi(argv[5]), ra = atoi(argv[6]);
	char hp[4096], sp[4096];
	HOT = (uint64_t)(h * N);
	snprintf(hp, sizeof hp, "%s/scanres.hot", argv[1]);
	snprintf(sp, sizeof sp, "%s/scanres.scan", argv[1]);
	mkfile(hp, HOT);
	mkfile(sp, 5 * N);
	cdf = malloc(HOT * sizeof(double));
	double sum = 0;
	for (uint64_t i = 0; i < HOT; i++) { sum += 1.0 / pow((double)(i + 1), 0.99); cdf[i] = sum; }
	for (uint64_t i = 0; i < HOT; i++) cdf[i] /= sum;
	struct lpc_cache *c = mkcache(N, ra, -1);
	struct lpc_file *hot, *scan;
	struct lpc_stats s0, s1;
	if (lpc_file_open(c, hp, O_RDONLY, 0, &hot) || lpc_file_open(c, sp, O_RDONLY, 0, &scan)) return 1;
	double r[3];
	for (uint64_t k = 0; k < 4 * N; k++) hot_lookup(hot, zipf);
	for (uint64_t i = 4 * N; i < 5 * N; i++) { get(scan, i); for (int j = 0; j < per; j++) hot_lookup(hot, zipf); }
	hits = looks = 0;
	for (uint64_t k = 0; k < 4 * N; k++) hot_lookup(hot, zipf);
	r[0] = (double)hits / looks;
	hits = looks = 0;
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < 4 * N; i++) { get(scan, i); for (int j = 0; j < per; j++) hot_lookup(hot, zipf); }
	lpc_stats(c, &s1);
	r[1] = (double)hits / looks;
	uint32_t t = ws_target(c), na = atomic_load(&c->pool.nactive);
	hits = looks = 0;
	for (uint64_t k = 0; k < 4 * N; k++) hot_lookup(hot, zipf);
	r[2] = (double)hits / looks;
	printf("SUMMARY %s scanres %s MiB hot %.2f %s per %d ra %d: before %.3f during %.3f after %.3f; target %u (%.0f%%) nactive %u; pages read during %" PRIu64 "\n",
	       VARIANT, argv[2], h, argv[4], per, ra, r[0], r[1], r[2], t, 100.0 * t / N, na, s1.read_pages - s0.read_pages);
	lpc_file_close(hot); lpc_file_close(scan); lpc_cache_destroy(c);
	unlink(hp); unlink(sp);
	return 0;
}
