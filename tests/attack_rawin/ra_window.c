/* Probe: the default largest readahead window (readahead_max_kb = 0) and
 * what hangs on it (reclaimer's ra_high, CLOCK2's active max, readahead's
 * share) over cache sizes and page sizes.  Built against the internals of
 * the library under test (-I<tree>/src, liblpc.a). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "cache/cache.h"

static void one(size_t cache, size_t ps)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	lpc_config_init(&cfg);
	cfg.cache_bytes = cache;
	cfg.page_size = ps;
	cfg.io_backend = LPC_IO_NULL;
	int rc = lpc_cache_create(&cfg, &c);
	if (rc) {
		printf("cache %zu B page %zu: rc %d\n", cache, ps, rc);
		return;
	}
	uint32_t n = c->pool.nframes;
	uint64_t ra = c->files.ra_max;
	printf("cache %10.3f MiB (%zu B) page %7zu: frames %8u ra_max %6" PRIu64
	       " pages = %8.1f KiB (%5.2f%% of frames, cache/ra %6.2f) ra_init %u run_max %u high %u ra_high %u (free kept %.1f MiB) active_max %u (%.1f%%) share %u\n",
	       cache / 1048576.0, cache, ps, n, ra, ra * ps / 1024.0, 100.0 * ra / n, (double)n / ra,
	       c->files.ra_init, c->files.run_max, c->reclaim.high, c->reclaim.ra_high,
	       c->reclaim.ra_high * (double)ps / 1048576, c->pool.ws.max, 100.0 * c->pool.ws.max / n, n / 4);
	lpc_cache_destroy(c);
}

int main(int argc, char **argv)
{
	if (argc == 3) {
		one(strtoull(argv[1], 0, 0), strtoull(argv[2], 0, 0));
		return 0;
	}
	static const double mib[] = { 0.25, 1, 2, 4, 8, 32, 63, 64, 64.5, 65, 96, 127, 128, 128.001, 129, 160, 192, 200, 255, 256, 257, 384, 512, 1024, 4096, 65536 };
	static const size_t ps[] = { 512, 4096, 65536, 2 << 20 };
	for (size_t j = 0; j < sizeof(ps) / sizeof(ps[0]); j++) {
		for (size_t i = 0; i < sizeof(mib) / sizeof(mib[0]); i++) {
			size_t b = (size_t)(mib[i] * 1048576);
			if (b < ps[j]) continue;
			one(b, ps[j]);
		}
		printf("\n");
	}
	return 0;
}
