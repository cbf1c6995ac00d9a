/* promo.c - does a one-time sequential scan promote its own pages?  One
 * thread reads a file of 4x the cache once, sequentially, with lpc_pread
 * (CHUNK KiB calls) or lpc_page_get, default readahead, nothing else.
 * Every page is read once, so none should be hit again, promoted or active
 * (evict.c Policy: "A sequential scan's pages are never referenced again:
 * they are evicted at first sight").  Prints the active count and the
 * cached pages' flags after each cache's worth.
 * usage: promo FILE CACHE_MIB MODE(pread|get) [CHUNK_KIB (128)] [RA (1)] [TIMES (4)] */
#include "probe.h"

int main(int argc, char **argv)
{
	if (argc < 4) { fprintf(stderr, "usage: promo FILE CACHE_MIB MODE [CHUNK_KIB] [RA]\n"); return 2; }
	uint64_t N = strtoull(argv[2], 0, 0) * 256;
	int pr = !strcmp(argv[3], "pread");
	size_t chunk = (argc > 4 ? strtoull(argv[4], 0, 0) : 128) << 10;
	int ra = argc > 5 ? atoi(argv[5]) : 1;
	int times = argc > 6 ? atoi(argv[6]) : 4;
	char *buf = malloc(chunk);
	mkfile(argv[1], (uint64_t)times * N);
	struct lpc_cache *c = mkcache(N, ra, -1);
	struct lpc_file *f;
	struct lpc_stats s;
	if (lpc_file_open(c, argv[1], O_RDONLY, 0, &f)) return 1;
	printf("%s: cache %" PRIu64 " frames, one sequential pass over %dx, %s %zu KiB, ra %d\n", VARIANT, N, times,
	       pr ? "lpc_pread" : "lpc_page_get", pr ? chunk >> 10 : 4, ra);
	for (int q = 1; q <= times; q++) {
		if (pr) {
			for (uint64_t off = (q - 1) * N * 4096; off < q * N * 4096; off += chunk)
				if (lpc_pread(f, buf, chunk, off) <= 0) { fprintf(stderr, "pread\n"); return 1; }
		} else
			for (uint64_t i = (q - 1) * N; i < q * N; i++) get(f, i);
		if (q > 4 && q % 8 && q != times) continue;
		unsigned act = 0, ref = 0, ws = 0, cached = 0;
		for (uint32_t i = 0; i < c->pool.nframes; i++) {
			struct lpc_page *p = &c->pool.pages[i];
			uint32_t fl = atomic_load(&p->flags);
			if (!(fl & LPC_PG_PUBLISHED)) continue;
			cached++;
			act += !!(fl & LPC_PG_ACTIVE);
			ref += !!(fl & LPC_PG_REFERENCED);
#ifdef WS
			ws += !!(fl & LPC_PG_WORKINGSET);
#endif
		}
		lpc_stats(c, &s);
		printf("  after %dx: nactive %u (%.0f%% of frames), cached %u of which ACTIVE %u REFERENCED %u WORKINGSET %u; target %u; hits %" PRIu64 " lookups %" PRIu64 "\n",
		       q, atomic_load(&c->pool.nactive), 100.0 * atomic_load(&c->pool.nactive) / N, cached, act, ref, ws,
		       ws_target(c), s.hits, s.lookups);
	}
	lpc_file_close(f); lpc_cache_destroy(c); unlink(argv[1]);
	return 0;
}
