/* Probe: a hot set beside sequential scanners, null backend, public API only.
 * usage: hotscan CACHE_MB HOT_PCT RA_MAX_KB SCANNERS SECONDS [CALL_KB] [READERS]
 *   hot set: HOT_PCT % of the cache's frames of file "hot", read uniformly
 *   at random in 4 KiB lpc_pread by READERS threads (default 1), each read
 *   counted a hit when lpc_page_find finds the page first (as lpcbench read
 *   scan-mix does); SCANNERS threads each scan their own 4 GiB file
 *   sequentially in CALL_KB (128) calls, round after round.
 *   Warm: the hot set read twice over, then SECONDS of the mix; the hit ratio
 *   of the second half is printed, with the counters.
 *   HOTSCAN_MBPS=R throttles each scanner to R MiB/s (a device's rate). */
#define _GNU_SOURCE
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

#define PG 4096u
static struct lpc_file *hotf, *scanf_[16];
static uint64_t hot_pages;
static size_t call_kb = 128;
static double scan_mbps; /* env HOTSCAN_MBPS: each scanner's rate, 0 unthrottled */
static atomic_bool stop, measure;
static atomic_uint_fast64_t m_reads, m_hits, m_scan_bytes;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *reader(void *arg)
{
	uint64_t x = 88172645463325252ull ^ (uintptr_t)arg;
	char buf[PG];
	uint64_t r = 0, h = 0;
	while (!atomic_load(&stop)) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		uint64_t pg = x % hot_pages;
		struct lpc_page *p;
		bool hit = lpc_page_find(hotf, pg, &p) == 0;
		if (hit)
			lpc_page_put(p);
		if (lpc_pread(hotf, buf, PG, pg * PG) != PG) {
			fprintf(stderr, "hot read failed\n");
			exit(1);
		}
		if (atomic_load_explicit(&measure, memory_order_relaxed)) {
			r++;
			h += hit;
		}
	}
	atomic_fetch_add(&m_reads, r);
	atomic_fetch_add(&m_hits, h);
	return NULL;
}

static void *scanner(void *arg)
{
	struct lpc_file *f = arg;
	size_t len = call_kb << 10;
	char *buf = malloc(len);
	uint64_t off = 0, size = 4ull << 30, b = 0, done = 0;
	double t0 = now();
	while (!atomic_load(&stop)) {
		if (scan_mbps > 0) { /* throttled: the rate of a device */
			double ahead = done / (scan_mbps * 1048576.0) - (now() - t0);
			if (ahead > 0) {
				struct timespec ts = { 0, (long)(ahead * 1e9) };
				nanosleep(&ts, 0);
			}
		}
		ssize_t n = lpc_pread(f, buf, len, off);
		if (n <= 0) {
			fprintf(stderr, "scan read %zd\n", n);
			exit(1);
		}
		off += n;
		done += n;
		if (off >= size)
			off = 0;
		if (atomic_load_explicit(&measure, memory_order_relaxed))
			b += n;
	}
	atomic_fetch_add(&m_scan_bytes, b);
	free(buf);
	return NULL;
}

static struct lpc_file *mkfile(struct lpc_cache *c, const char *dir, const char *name, uint64_t size)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size)) {
		perror(path);
		exit(1);
	}
	close(fd);
	struct lpc_file *f;
	int rc = lpc_file_open(c, path, O_RDONLY, 0, &f);
	if (rc) {
		fprintf(stderr, "open %s: %d\n", path, rc);
		exit(1);
	}
	return f;
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: hotscan CACHE_MB HOT_PCT RA_MAX_KB SCANNERS SECONDS [CALL_KB] [READERS]\n");
		return 2;
	}
	size_t cache_mb = strtoul(argv[1], 0, 0);
	double hot_pct = atof(argv[2]);
	unsigned ra_kb = strtoul(argv[3], 0, 0), ns = strtoul(argv[4], 0, 0);
	double secs = atof(argv[5]);
	if (argc > 6) call_kb = strtoul(argv[6], 0, 0);
	unsigned nr = argc > 7 ? strtoul(argv[7], 0, 0) : 1;
	if (getenv("HOTSCAN_MBPS")) scan_mbps = atof(getenv("HOTSCAN_MBPS"));
	const char *dir = getenv("HOTSCAN_DIR") ? getenv("HOTSCAN_DIR") : "/tmp";
	struct lpc_config cfg;
	struct lpc_cache *c;
	lpc_config_init(&cfg);
	cfg.cache_bytes = cache_mb << 20;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_max_kb = ra_kb;
	if (lpc_cache_create(&cfg, &c)) {
		fprintf(stderr, "create\n");
		return 1;
	}
	hot_pages = (uint64_t)((cache_mb << 20) / PG * hot_pct / 100);
	hotf = mkfile(c, dir, "hotscan.hot", hot_pages * PG);
	for (unsigned i = 0; i < ns; i++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "hotscan.scan%u", i);
		scanf_[i] = mkfile(c, dir, nm, 4ull << 30);
	}
	/* warm: the hot set twice (second pass promotes) */
	char buf[PG];
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t p = 0; p < hot_pages; p++)
			if (lpc_pread(hotf, buf, PG, p * PG) != PG)
				return 1;
	pthread_t tr[16], ts[16];
	for (unsigned i = 0; i < nr; i++)
		pthread_create(&tr[i], 0, reader, (void *)(uintptr_t)(i + 1));
	for (unsigned i = 0; i < ns; i++)
		pthread_create(&ts[i], 0, scanner, scanf_[i]);
	struct timespec half = { (time_t)(secs / 2), (long)((secs / 2 - (time_t)(secs / 2)) * 1e9) };
	nanosleep(&half, 0);
	struct lpc_stats s0, s1;
	lpc_stats(c, &s0);
	double t0 = now();
	atomic_store(&measure, true);
	nanosleep(&half, 0);
	atomic_store(&stop, true);
	double t1 = now();
	lpc_stats(c, &s1);
	for (unsigned i = 0; i < nr; i++)
		pthread_join(tr[i], 0);
	for (unsigned i = 0; i < ns; i++)
		pthread_join(ts[i], 0);
	printf("cache %zu MiB hot %.1f%% (%" PRIu64 " pages) ra_max_kb %u scanners %u call %zu KiB readers %u: "
	       "hot hit %.4f (%" PRIu64 " reads) scan %.0f MiB/s evictions %" PRIu64 " direct_reclaims %" PRIu64
	       " ra_wasted %" PRIu64 " alloc_failures %" PRIu64 " wakeups %" PRIu64 " miss_ns_alloc/miss %.0f misses %" PRIu64 " miss_ns_alloc_ms %.1f ra_windows %" PRIu64 " ra_pages %" PRIu64 "\n",
	       cache_mb, hot_pct, hot_pages, ra_kb, ns, call_kb, nr,
	       (double)m_hits / (m_reads ? m_reads : 1), (uint64_t)m_reads, m_scan_bytes / 1048576.0 / (t1 - t0),
	       s1.evictions - s0.evictions, s1.direct_reclaims - s0.direct_reclaims, s1.ra_wasted - s0.ra_wasted,
	       s1.alloc_failures - s0.alloc_failures, s1.reclaimer_wakeups - s0.reclaimer_wakeups,
	       (double)(s1.miss_ns_alloc - s0.miss_ns_alloc) / ((s1.misses - s0.misses) ? (s1.misses - s0.misses) : 1),
	       s1.misses - s0.misses, (s1.miss_ns_alloc - s0.miss_ns_alloc) / 1e6, s1.ra_windows - s0.ra_windows, s1.ra_pages - s0.ra_pages);
	lpc_file_close(hotf);
	for (unsigned i = 0; i < ns; i++)
		lpc_file_close(scanf_[i]);
	lpc_cache_destroy(c);
	return 0;
}
