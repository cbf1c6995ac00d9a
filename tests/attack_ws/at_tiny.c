/* tiny.c - tiny caches (1..256 frames): a hot page set hit again and again
 * (Zipf-like: page i with weight 1/(i+1) over 4x the cache), with a
 * sequential lpc_pread stream beside it, default readahead, null backend.
 * Prints per size: ops/s, errors of any call, ENOMEM, alloc_failures,
 * read_around, ra_wasted, and the worst single call's latency.
 * RA_OFF=1 in the environment: readahead off.
 * usage: tiny FILE [SECONDS_PER_SIZE (0.5)] */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <lpc/lpc.h>

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 0.5;
	static const unsigned sizes[] = { 1, 2, 3, 4, 5, 8, 16, 32, 64, 128, 256 };
	int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 1 << 30)) { perror("file"); return 1; }
	close(fd);
	for (unsigned si = 0; si < sizeof sizes / sizeof *sizes; si++) {
		unsigned n = sizes[si], hot = 4 * n;
		struct lpc_config cfg; struct lpc_cache *c; struct lpc_file *f; struct lpc_stats st;
		double *cdf = malloc(hot * sizeof *cdf), sum = 0, t0, worst = 0;
		uint64_t ops = 0, errs = 0, enomem = 0, seq = 1 << 16;
		char buf[65536];
		for (unsigned i = 0; i < hot; i++) cdf[i] = (sum += 1.0 / (i + 1));
		lpc_config_init(&cfg);
		cfg.cache_bytes = (size_t)n * 4096; cfg.io_backend = LPC_IO_NULL;
		if (getenv("RA_OFF")) cfg.readahead_kb = LPC_READAHEAD_OFF;
		if (lpc_cache_create(&cfg, &c) || lpc_file_open(c, argv[1], O_RDONLY, 0, &f)) return 1;
		t0 = now();
		while (now() - t0 < secs) {
			double u = (double)(rnd() >> 11) / 9007199254740992.0 * sum, a = now(), d;
			unsigned lo = 0, hi = hot - 1;
			while (lo < hi) { unsigned m = (lo + hi) / 2; if (cdf[m] < u) lo = m + 1; else hi = m; }
			struct lpc_page *p;
			int rc = lpc_page_get(f, lo, 0, &p);
			if (rc == 0) lpc_page_put(p); else { errs++; enomem += rc == -ENOMEM; }
			if (ops % 4 == 0) {
				ssize_t r = lpc_pread(f, buf, 16384, seq * 4096);
				if (r != 16384) { errs++; enomem += r == -ENOMEM; }
				seq += 4;
				if (seq >= (1u << 18) - 8) seq = 1 << 16;
			}
			d = now() - a;
			if (d > worst) worst = d;
			ops++;
		}
		lpc_stats(c, &st);
		printf("%3u frames: %8.0f ops/s errors %" PRIu64 " (ENOMEM %" PRIu64 ") alloc_failures %" PRIu64
		       " read_around %" PRIu64 " ra_wasted %" PRIu64 " hits %.3f worst call %.1f ms\n",
		       n, ops / (now() - t0), errs, enomem, st.alloc_failures, st.read_around, st.ra_wasted,
		       (double)st.hits / (double)(st.lookups ? st.lookups : 1), worst * 1e3);
		lpc_file_close(f); lpc_cache_destroy(c); free(cdf);
	}
	return 0;
}
