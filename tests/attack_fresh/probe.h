/* probe.h - shared helpers of the attack_ws probes.  Built twice by build.sh:
 * against the change (V3: 00a9888 (FRESH); WS: 42328fc
 * active target) and against the base (3946151: the fixed 50 % target). */
#ifndef ATTACK_WS_PROBE_H
#define ATTACK_WS_PROBE_H
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <lpc/lpc.h>
#include "cache/cache.h"

#ifdef WS
#ifdef V3
#define VARIANT "new (00a9888, FRESH)"
#else
#define VARIANT "rev2 (42328fc, moving target)"
#endif
static inline uint32_t ws_target(struct lpc_cache *c) { return lpc_pool_ws_target(&c->pool.ws); }
static inline uint32_t ws_max(struct lpc_cache *c) { return c->pool.ws.max; }
static inline uint64_t ws_refaults(struct lpc_cache *c) { return c->pool.ws.refaults; }
static inline uint64_t ws_refaults_active(struct lpc_cache *c) { return c->pool.ws.refaults_active; }
#else
#define VARIANT "base (3946151, fixed 50 %)"
static inline uint32_t ws_target(struct lpc_cache *c) { return c->reclaim.active_target; }
static inline uint32_t ws_max(struct lpc_cache *c) { return c->reclaim.active_target; }
static inline uint64_t ws_refaults(struct lpc_cache *c) { (void)c; return 0; }
static inline uint64_t ws_refaults_active(struct lpc_cache *c) { (void)c; return 0; }
#endif

static uint64_t rs = 88172645463325252ull;
static inline uint64_t rnd(void) { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return rs; }
static inline double rndu(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

static inline double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline void get(struct lpc_file *f, uint64_t i)
{
	struct lpc_page *p;
	int rc = lpc_page_get(f, i, 0, &p);
	if (rc) { fprintf(stderr, "lpc_page_get(%" PRIu64 ") = %d\n", i, rc); exit(1); }
	lpc_page_put(p);
}

static inline int mkfile(const char *path, uint64_t pages)
{
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(pages * 4096))) { perror(path); exit(1); }
	close(fd);
	return 0;
}

static inline struct lpc_cache *mkcache(uint64_t frames, int ra, int policy)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	lpc_config_init(&cfg);
	cfg.cache_bytes = frames * 4096;
	cfg.io_backend = LPC_IO_NULL;
	cfg.readahead_kb = ra ? 0 : LPC_READAHEAD_OFF;
	if (policy >= 0)
		cfg.reclaim_policy = policy;
	int rc = lpc_cache_create(&cfg, &c);
	if (rc) { fprintf(stderr, "lpc_cache_create = %d\n", rc); exit(1); }
	return c;
}

/* Zipf(s) over m ranks: a CDF, drawn by binary search; rank r maps to a
 * scattered page (r * odd constant mod m is a permutation when m is a power of
 * two; otherwise the plain rank). */
struct zipf { uint64_t m; double *cdf; };
static inline void zipf_init(struct zipf *z, uint64_t m, double s)
{
	double sum = 0;
	z->m = m;
	z->cdf = malloc(m * sizeof(double));
	for (uint64_t i = 0; i < m; i++) { sum += 1.0 / pow((double)(i + 1), s); z->cdf[i] = sum; }
	for (uint64_t i = 0; i < m; i++) z->cdf[i] /= sum;
}
static inline uint64_t zipf_draw(struct zipf *z)
{
	double u = rndu();
	uint64_t lo = 0, hi = z->m - 1;
	while (lo < hi) { uint64_t mid = (lo + hi) / 2; if (z->cdf[mid] < u) lo = mid + 1; else hi = mid; }
	return (lo * 0x9E3779B1ull) % z->m;
}
#endif
