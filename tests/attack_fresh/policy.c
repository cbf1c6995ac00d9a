/* policy.c - hit ratios of workloads users run, base (fixed 50 %) vs new
 * (moving target).  Null backend, one thread.
 * usage: policy FILE MODE CACHE_MIB RA [P1 [P2 [P3]]]
 *   uniform  X          uniform random reads over X * cache
 *   zipf     X S        Zipf(S) over X * cache (ranks scattered)
 *   loop     X          a sequential loop over X * cache
 *   hotscan  H S        a hot set of H * cache read uniformly, 1:1 with a
 *                       sequential loop over S * cache (another region)
 *   zipfscan H S        Zipf(1.0) over H * cache, 1:1 with a one-time
 *                       sequential scan (never repeats: scan-mix)
 *   shift    A B        hot set A * cache (uniform), then a new one B * cache
 *   twofile  H S        hot set H * cache in FILE, loop over S * cache in FILE.2
 *   reopen   X          loop over X * cache, the file closed and reopened
 *                       after each pass
 * Prints, every tenth of the run, the hit ratio of that tenth (the hot
 * set's alone where there is one) and the active target; then a summary
 * over the last half. */
#include "probe.h"

static struct lpc_cache *c;
static uint64_t N;
static uint64_t acc_h, acc_n; /* the hot set's (or all) accesses and hits */

static int acc(struct lpc_file *f, uint64_t i)
{
	struct lpc_page *p;
	if (lpc_page_find(f, i, &p) == 0) { lpc_page_put(p); return 1; }
	get(f, i);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 5) { fprintf(stderr, "usage\n"); return 2; }
	const char *path = argv[1], *mode = argv[2];
	N = strtoull(argv[3], 0, 0) * 256;
	int ra = atoi(argv[4]);
	double p1 = argc > 5 ? atof(argv[5]) : 1, p2 = argc > 6 ? atof(argv[6]) : 1;
	uint64_t filepages = 16 * N;
	char path2[4096];
	snprintf(path2, sizeof path2, "%s.2", path);
	mkfile(path, filepages);
	c = mkcache(N, ra, -1);
	struct lpc_file *f, *f2 = NULL;
	if (lpc_file_open(c, path, O_RDONLY, 0, &f)) return 1;
	if (!strcmp(mode, "twofile")) { mkfile(path2, filepages); if (lpc_file_open(c, path2, O_RDONLY, 0, &f2)) return 1; }
	struct zipf z = {0};
	uint64_t ops = 40 * N; /* accesses in the run */
	uint64_t X = (uint64_t)(p1 * N), S = (uint64_t)(p2 * N), cur = 0;
	if (!strcmp(mode, "zipf")) zipf_init(&z, X, p2);
	if (!strcmp(mode, "zipfscan")) zipf_init(&z, X, 1.0);
	if (!strcmp(mode, "shift")) ops = 60 * N;
	printf("%s: %s cache %" PRIu64 " frames ra %d p1 %.2f p2 %.2f, target starts %u (max %u)\n", VARIANT, mode, N,
	       ra, p1, p2, ws_target(c), ws_max(c));
	uint32_t tmin = UINT32_MAX, tmax = 0, tprev = ws_target(c);
	unsigned reversals = 0; int dir = 0;
	uint64_t h_half = 0, n_half = 0;
	for (int tenth = 0; tenth < 10; tenth++) {
		acc_h = acc_n = 0;
		for (uint64_t k = 0; k < ops / 10; k++) {
			if (!strcmp(mode, "uniform")) { acc_h += acc(f, rnd() % X); acc_n++; }
			else if (!strcmp(mode, "zipf")) { acc_h += acc(f, zipf_draw(&z)); acc_n++; }
			else if (!strcmp(mode, "loop")) { acc_h += acc(f, cur); acc_n++; if (++cur == X) cur = 0; }
			else if (!strcmp(mode, "reopen")) {
				acc_h += acc(f, cur); acc_n++;
				if (++cur == X) { cur = 0; lpc_file_close(f); if (lpc_file_open(c, path, O_RDONLY, 0, &f)) return 1; }
			} else if (!strcmp(mode, "hotscan") || !strcmp(mode, "twofile")) {
				acc_h += acc(f, rnd() % X); acc_n++;
				if (f2) get(f2, cur); else get(f, 4 * N + cur);
				if (++cur == S) cur = 0;
			} else if (!strcmp(mode, "zipfscan")) {
				acc_h += acc(f, zipf_draw(&z)); acc_n++;
				get(f, 4 * N + cur); if (++cur == 12 * N) cur = 0;
			} else if (!strcmp(mode, "shift")) {
				uint64_t a = (uint64_t)(p1 * N), b = (uint64_t)(p2 * N);
				if (k + tenth * (ops / 10) < ops / 3) acc_h += acc(f, rnd() % a);
				else acc_h += acc(f, 8 * N + rnd() % b);
				acc_n++;
			} else { fprintf(stderr, "mode?\n"); return 2; }
			if ((k & 255) == 0 && tenth >= 5) {
				uint32_t t = ws_target(c);
				if (t < tmin) tmin = t;
				if (t > tmax) tmax = t;
				int d = t > tprev ? 1 : t < tprev ? -1 : 0;
				if (d && dir && d != dir) reversals++;
				if (d) dir = d;
				tprev = t;
			}
		}
		if (tenth >= 5) { h_half += acc_h; n_half += acc_n; }
		printf("  tenth %d: hit %.3f target %u (%.0f%%) nactive %u refaults %" PRIu64 " (active %" PRIu64 ")\n", tenth,
		       (double)acc_h / acc_n, ws_target(c), 100.0 * ws_target(c) / N,
		       atomic_load(&c->pool.nactive), ws_refaults(c), ws_refaults_active(c));
	}
	struct lpc_stats s;
	lpc_stats(c, &s);
	printf("SUMMARY %s %s: last-half hit %.3f, target last half [%u, %u] (%.0f-%.0f%%), reversals %u, read_pages %" PRIu64
	       " ra_wasted %" PRIu64 "\n",
	       VARIANT, mode, (double)h_half / n_half, tmin, tmax, 100.0 * tmin / N, 100.0 * tmax / N, reversals,
	       s.read_pages, s.ra_wasted);
	lpc_file_close(f);
	if (f2) lpc_file_close(f2);
	lpc_cache_destroy(c);
	unlink(path);
	if (f2) unlink(path2);
	return 0;
}
