/* scan.c - does a one-time sequential scan promote its own pages?  One
 * thread reads a file of TIMES x the cache once, front to back, with
 *   pread BYTES   lpc_pread calls of BYTES bytes at contiguous offsets
 *                 (BYTES need not be a multiple of the page: records)
 *   pin PAGES     lpc_pin of PAGES pages then lpc_unpin, contiguous
 * default readahead, null backend, nothing else.  Every byte is read once,
 * so no page is used twice by a later call... except the page two calls
 * share when BYTES is not a page multiple.  Prints the active count, the
 * cached pages' ACTIVE / REFERENCED / FRESH (bit 13, 00a9888 only) counts
 * and the target after the pass.
 * usage: scan FILE CACHE_MIB MODE N [TIMES (4)] */
#include "probe.h"
#include "page/page.h"

int main(int argc, char **argv)
{
	if (argc < 5) { fprintf(stderr, "usage: scan FILE CACHE_MIB pread|pin N [TIMES]\n"); return 2; }
	uint64_t N = strtoull(argv[2], 0, 0) * 256;
	int pin = !strcmp(argv[3], "pin");
	uint64_t n = strtoull(argv[4], 0, 0);
	int times = argc > 5 ? atoi(argv[5]) : 4;
	uint64_t total = (uint64_t)times * N * 4096;
	size_t chunk = pin ? n * 4096 : n;
	char *buf = malloc(chunk);
	struct lpc_page *pages[1024];
	mkfile(argv[1], (uint64_t)times * N);
	struct lpc_cache *c = mkcache(N, 1, -1);
	struct lpc_file *f;
	struct lpc_stats s;
	if (lpc_file_open(c, argv[1], O_RDONLY, 0, &f)) return 1;
	for (uint64_t off = 0; off < total; off += chunk) {
		size_t len = total - off < chunk ? total - off : chunk;
		if (pin) {
			int k = lpc_pin(f, off, len, LPC_PIN_READ, pages, 1024);
			if (k <= 0) { fprintf(stderr, "lpc_pin %d\n", k); return 1; }
			lpc_unpin(pages, (unsigned)k, LPC_PIN_READ);
		} else if (lpc_pread(f, buf, len, off) != (ssize_t)len) { fprintf(stderr, "pread\n"); return 1; }
	}
	unsigned act = 0, ref = 0, fresh = 0, cached = 0;
	for (uint32_t i = 0; i < c->pool.nframes; i++) {
		uint32_t fl = atomic_load(&c->pool.pages[i].flags);
		if (!(fl & LPC_PG_PUBLISHED)) continue;
		cached++;
		act += !!(fl & LPC_PG_ACTIVE);
		ref += !!(fl & LPC_PG_REFERENCED);
		fresh += !!(fl & (1u << 13));
	}
	lpc_stats(c, &s);
	printf("%-30s %s %6" PRIu64 "%s: nactive %5u (%4.1f%% of frames) cached %5u ACTIVE %5u REFERENCED %5u FRESH %5u target %5u | read_pages %.2fx ra_pages %" PRIu64 " ra_wasted %" PRIu64 " refaults %" PRIu64 "\n",
	       VARIANT, pin ? "pin" : "pread", n, pin ? " pages" : " B    ", atomic_load(&c->pool.nactive),
	       100.0 * atomic_load(&c->pool.nactive) / N, cached, act, ref, fresh, ws_target(c),
	       (double)s.read_pages / (total / 4096), s.ra_pages, s.ra_wasted, ws_refaults(c));
	lpc_file_close(f); lpc_cache_destroy(c); unlink(argv[1]);
	return 0;
}
