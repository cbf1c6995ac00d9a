/* ra_loop.c - an idle hot set A (A_PCT % of the cache, made active as in
 * tests/attack_target/stale_loop.c), then a file region B (B_PCT %) re-read
 * sequentially PASSES times, as a user re-reads a file: with lpc_pread in
 * 128 KiB calls (MODE pread) or lpc_page_get page by page (MODE get), with
 * lpc's default readahead (RA 1) or none (RA 0).  Prints per pass the pages
 * read from storage, the target, nactive, refaults and ra_wasted.
 * PRESCAN=X in the environment: before A (A_PCT may be 0), one sequential
 * lpc_pread pass over X times the cache (a backup, a report, a copy).
 * usage: ra_loop FILE B_PCT A_PCT CACHE_MIB RA MODE PASSES */
#include "probe.h"

int main(int argc, char **argv)
{
	if (argc < 8) { fprintf(stderr, "usage: ra_loop FILE B_PCT A_PCT CACHE_MIB RA MODE PASSES\n"); return 2; }
	unsigned bpct = atoi(argv[2]), apct = atoi(argv[3]);
	uint64_t N = strtoull(argv[4], 0, 0) * 256;
	int ra = atoi(argv[5]), pr = !strcmp(argv[6], "pread"), passes = atoi(argv[7]);
	uint64_t A = N * apct / 100, B = N * bpct / 100;
	uint64_t prescan = getenv("PRESCAN") ? strtoull(getenv("PRESCAN"), 0, 0) : 0;
	mkfile(argv[1], (8 + prescan) * N);
	struct lpc_cache *c = mkcache(N, ra, -1);
	struct lpc_file *f;
	struct lpc_stats s0, s1;
	static char buf[128 << 10];
	if (lpc_file_open(c, argv[1], O_RDONLY, 0, &f)) return 1;
	for (uint64_t off = 0; off < prescan * N * 4096; off += sizeof buf)
		if (lpc_pread(f, buf, sizeof buf, 8 * N * 4096 + off) <= 0) { fprintf(stderr, "pread\n"); return 1; }
	uint64_t cold = 4 * N;
	for (int round = 0; round < 8 && A; round++)
		for (uint64_t k = 0; k < 2 * A; k++) {
			get(f, rnd() % A);
			if (k % 4 == 0) { get(f, cold++); if (cold == 8 * N) cold = 4 * N; }
		}
	printf("%s: cache %" PRIu64 " frames, readahead %s, %s; idle A %" PRIu64 " pages (%u%%), loop B %" PRIu64
	       " pages (%u%%); target %u nactive %u\n", VARIANT, N, ra ? "default" : "off", pr ? "lpc_pread 128 KiB" : "lpc_page_get",
	       A, apct, B, bpct, ws_target(c), atomic_load(&c->pool.nactive));
	uint64_t tot = 0;
	for (int pass = 0; pass < passes; pass++) {
		lpc_stats(c, &s0);
		if (pr) {
			for (uint64_t off = 0; off < B * 4096; off += sizeof buf)
				if (lpc_pread(f, buf, sizeof buf, 2 * N * 4096 + off) <= 0) { fprintf(stderr, "pread\n"); return 1; }
		} else
			for (uint64_t i = 0; i < B; i++) get(f, 2 * N + i);
		lpc_stats(c, &s1);
		if (pass) tot += s1.read_pages - s0.read_pages;
		if (pass < 4 || pass % 5 == 4 || pass == passes - 1)
			printf("pass %2d: pages read %6" PRIu64 " (%.2f of B)  target %5u (%2.0f%%) nactive %5u refaults %" PRIu64
			       " (active %" PRIu64 ") ra_wasted %" PRIu64 "\n", pass, s1.read_pages - s0.read_pages,
			       (double)(s1.read_pages - s0.read_pages) / B, ws_target(c), 100.0 * ws_target(c) / N,
			       atomic_load(&c->pool.nactive), ws_refaults(c), ws_refaults_active(c), s1.ra_wasted);
	}
	unsigned stillA = 0; struct lpc_page *p;
	for (uint64_t i = 0; i < A; i++) if (lpc_page_find(f, i, &p) == 0) { stillA++; lpc_page_put(p); }
	printf("SUMMARY %s ra_loop prescan %" PRIu64 "x B %u%% A %u%% %" PRIu64 " MiB ra %d %s: pages read in passes 1-%d: %.2f x B; idle A cached %u of %" PRIu64 "\n",
	       VARIANT, prescan, bpct, apct, N / 256, ra, argv[6], passes - 1, (double)tot / B, stillA, A);
	lpc_file_close(f); lpc_cache_destroy(c); unlink(argv[1]);
	return 0;
}
