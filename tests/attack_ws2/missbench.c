/* missbench.c - throughput of demand misses (and of hits), null backend,
 * readahead off.  T threads read uniformly at random over X * the cache
 * (X = 2: about half the reads miss, and about half of those refault, the
 * case where the change adds a CAS on the shadow word, fetch_adds on
 * ws->refaults and a CAS on ws->target; X = 8: most reads miss, fewer
 * refault; X = 0.5: all hits, the hit path).
 * usage: missbench FILE X THREADS SECONDS [CACHE_MIB (64)]
 * prints: ops/s misses/s hit-ratio */
#include <pthread.h>
#include <stdatomic.h>
#include "probe.h"

static struct lpc_file *f;
static uint64_t span;
static atomic_bool stop;
static atomic_ulong total;

static void *worker(void *arg)
{
	uint64_t s = (uintptr_t)arg * 0x9E3779B97F4A7C15ull | 1, n = 0;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int k = 0; k < 256; k++) {
			s ^= s << 13; s ^= s >> 7; s ^= s << 17;
			get(f, s % span);
		}
		n += 256;
	}
	atomic_fetch_add(&total, n);
	return NULL;
}

int main(int argc, char **argv)
{
	double x = atof(argv[2]), secs = atof(argv[4]);
	int nt = atoi(argv[3]);
	uint64_t N = (argc > 5 ? strtoull(argv[5], 0, 0) : 64) * 256;
	span = (uint64_t)(x * N);
	mkfile(argv[1], span + 1);
	struct lpc_cache *c = mkcache(N, 0, -1);
	if (lpc_file_open(c, argv[1], O_RDONLY, 0, &f)) return 1;
	/* warm: two passes' worth of reads */
	for (uint64_t k = 0; k < 2 * span; k++) get(f, rnd() % span);
	struct lpc_stats s0, s1;
	pthread_t t[64];
	lpc_stats(c, &s0);
	double t0 = now_s();
	for (int i = 0; i < nt; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, true);
	for (int i = 0; i < nt; i++) pthread_join(t[i], NULL);
	double dt = now_s() - t0;
	lpc_stats(c, &s1);
	double miss = (double)(s1.lookups - s1.hits - (s0.lookups - s0.hits));
	printf("%s x %.2f threads %d: ops/s %.0f misses/s %.0f hit %.3f refaults %" PRIu64 "\n", VARIANT, x, nt,
	       total / dt, miss / dt, (double)(s1.hits - s0.hits) / (double)(s1.lookups - s0.lookups), ws_refaults(c));
	lpc_file_close(f);
	lpc_cache_destroy(c);
	unlink(argv[1]);
	return 0;
}
