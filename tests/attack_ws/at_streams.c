/* streams.c - K sequential readers (lpc_pread, 128 KiB calls, each over its
 * own quarter-cache-sized region, repeated) beside a warmed, idle hot set of
 * HOT_PCT % of the cache, default readahead.  Prints readahead's waste, the
 * reads around the cache, the allocation failures and the scanners' MB/s.
 * usage: streams FILE K [CACHE_MIB (256)] [HOT_PCT (85)] [SECONDS (5)] [BACKEND: null|sync (null)] */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <lpc/lpc.h>

static struct lpc_file *f;
static uint64_t N, region;
static atomic_bool stop;
static atomic_uint_fast64_t bytes, errs;
static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }

static void *scanner(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg, off = 0;
	char *buf = malloc(128 << 10);
	while (!atomic_load(&stop)) {
		ssize_t n = lpc_pread(f, buf, 128 << 10, (base + off) * 4096);
		if (n <= 0) { atomic_fetch_add(&errs, 1); fprintf(stderr, "lpc_pread = %zd\n", n); break; }
		atomic_fetch_add(&bytes, (uint64_t)n);
		off += 32;
		if (off >= region) off = 0;
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	int K = atoi(argv[2]);
	N = (argc > 3 ? strtoull(argv[3], 0, 0) : 256) * 256;
	unsigned hot = argc > 4 ? atoi(argv[4]) : 85;
	double secs = argc > 5 ? atof(argv[5]) : 5;
	int sync = argc > 6 && !strcmp(argv[6], "sync");
	uint64_t A = N * hot / 100;
	/* each scanner's region: 16 caches (null), so nothing repeats in the run;
	 * with sync, the file must hold 4 caches + K regions: REGION=n caches */
	region = (getenv("REGION") ? strtoull(getenv("REGION"), 0, 0) : 16) * N;
	struct lpc_config cfg; struct lpc_cache *c; struct lpc_stats s0, s1; struct lpc_page *p;
	uint64_t filepages = 4 * N + (uint64_t)K * region;
	if (!sync) {
		int fd = open(argv[1], O_RDWR | O_CREAT, 0644);
		if (fd < 0 || ftruncate(fd, (off_t)(filepages * 4096))) { perror("file"); return 1; }
		close(fd);
	}
	lpc_config_init(&cfg);
	cfg.cache_bytes = N * 4096; cfg.io_backend = sync ? LPC_IO_SYNC : LPC_IO_NULL;
	if (lpc_cache_create(&cfg, &c) || lpc_file_open(c, argv[1], O_RDONLY, 0, &f)) return 1;
	/* the hot set: random reads of [0, A) with cold pages [2N, 4N) between them */
	for (uint64_t k = 0, cold = 2 * N; k < 6 * A; k++) {
		if (lpc_page_get(f, rnd() % A, 0, &p)) return 1;
		lpc_page_put(p);
		if (k % 3 == 0) { if (lpc_page_get(f, cold, 0, &p)) return 1; lpc_page_put(p); if (++cold == 4 * N) cold = 2 * N; }
	}
	lpc_stats(c, &s0);
	pthread_t th[64];
	for (int i = 0; i < K; i++) pthread_create(&th[i], NULL, scanner, (void *)(uintptr_t)(4 * N + (uint64_t)i * region));
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
	nanosleep(&ts, NULL);
	atomic_store(&stop, true);
	for (int i = 0; i < K; i++) pthread_join(th[i], NULL);
	lpc_stats(c, &s1);
	unsigned kept = 0;
	for (uint64_t i = 0; i < A; i++) if (lpc_page_find(f, i, &p) == 0) { kept++; lpc_page_put(p); }
	printf("K=%d scanners, %" PRIu64 " MiB cache, idle hot set %" PRIu64 " pages: scanners %.0f MB/s; "
	       "ra_pages %" PRIu64 " ra_used %" PRIu64 " ra_wasted %" PRIu64 " (%.3f of ra_pages); read_around %" PRIu64
	       " alloc_failures %" PRIu64 " errors %" PRIu64 "; hot set still cached %u\n",
	       K, N / 256, A, (double)atomic_load(&bytes) / secs / 1e6,
	       s1.ra_pages - s0.ra_pages, s1.ra_used - s0.ra_used, s1.ra_wasted - s0.ra_wasted,
	       (double)(s1.ra_wasted - s0.ra_wasted) / (double)(s1.ra_pages - s0.ra_pages + 1),
	       s1.read_around - s0.read_around, s1.alloc_failures - s0.alloc_failures, atomic_load(&errs), kept);
	lpc_file_close(f); lpc_cache_destroy(c);
	return 0;
}
