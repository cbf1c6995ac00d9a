/* SPDX-License-Identifier: MIT */
/*
 * gp_stress.c - counted grace periods (core/rcu.h GC1-GC3) and the landing
 * of a thread's own deferred frames without a wait of its own (page/alloc.c
 * OD2-OD7, 32a2c87), against lockless readers that found the old pages.
 *
 * Claim attacked: a frame an owner invalidated (OD2: stamped after B) is
 * handed out again (OD3's shortcut, OD5 partial landing, OD7's rest) only
 * after a grace period that began after its removal; no reader that loaded
 * the page in a read section begun before the removal can see it reused.
 *
 * Threads:
 *   owners (NOWN) each own two regions A, B of the file: read A, invalidate
 *     A (its chain kept on t->dfree), read B with misses (landing A's
 *     frames under B's identities), and sometimes lpc_page_alloc a private
 *     page (landing too) and scribble 0xa5 over it with plain stores,
 *     sometimes lpc_pread (NOWAIT: lands only what another wait covered);
 *   readers (NRD) get/find/pread random pages of every region and check
 *     them against the null backend's pattern, also after yields while
 *     held (a frame reused under a reader shows another identity or 0xa5);
 *   a waiter loops lpc_rcu_synchronize (scoped), so that most landings take
 *     OD3's shortcut: a wait another thread paid covers their stamp.
 * Debug builds add rules GRACE-PERIOD (lookup.c: a page found at R2 keeps
 * its identity through R3), DEFERRED-GRACE and RESURRECT (abort), and yield
 * injection with LPC_YIELD=all LPC_YIELD_PROB=0.05.
 *
 * Exit 1 on a wrong page, 0 if every check held.  Run:
 *   cmake --build ../../build-asan --target lpc_static && make && \
 *     LPC_YIELD=all LPC_YIELD_PROB=0.05 out-asan/gp_stress [secs]
 */
#include "cache/cache.h"
#include "core/rcu.h"
#include "../attack_miss/mh.h"

#define PS 4096u
#define NFRAMES 1024u
#define NOWN 2
#define NRD 2
#define REG 48u /* pages per region; regions 2 per owner */

static struct lpc_cache *cache;
static struct lpc_file *file;
static uint64_t fid;
static _Atomic bool stop;
static _Atomic long bad, rounds, landings_priv, reads, waits;

static bool page_ok(const void *buf, uint64_t index, const char *what)
{
	uint64_t e[PS / 8];
	const uint64_t *w = buf;
	size_t k;

	lpc_io_null_pattern(fid, index, e, sizeof(e));
	if (!memcmp(buf, e, PS))
		return true;
	for (k = 0; k < PS / 8 && w[k] == e[k]; k++)
		;
	if (atomic_fetch_add(&bad, 1) < 10)
		printf("  FAIL %s: index %" PRIu64 ": word %zu is %#" PRIx64 ", want %#" PRIx64
		       " (the page holds id %#" PRIx64 " index %" PRIu64 ")\n",
		       what, index, k, w[k], e[k], w[0], w[1]);
	return false;
}

static void read_region(uint64_t first, char *buf, bool pread)
{
	struct lpc_page *p;

	for (uint64_t i = first; i < first + REG; i++) {
		if (pread) {
			ssize_t r = lpc_pread(file, buf, PS, i * PS);

			if (r == (ssize_t)PS)
				page_ok(buf, i, "owner pread");
			else if (r != -ENOMEM && atomic_fetch_add(&bad, 1) < 10)
				printf("  FAIL owner pread: %zd\n", r);
			continue;
		}
		if (lpc_page_get(file, i, 0, &p) == 0) {
			page_ok(lpc_page_data(p), i, "owner get");
			lpc_page_put(p);
		}
	}
}

static void *owner(void *arg)
{
	uintptr_t o = (uintptr_t)arg;
	uint64_t a = (2 * o) * REG, b = (2 * o + 1) * REG, rs = o * 77 + 3;
	char *buf = aligned_alloc(4096, PS);

	while (!atomic_load(&stop)) {
		unsigned r = (unsigned)(mh_rand(&rs) % 8);

		read_region(a, buf, false);
		(void)lpc_invalidate(file, a * PS, (uint64_t)REG * PS);		/* OD2 */
		if (r == 0) {
			struct lpc_page *p;

			/* A private page from the deferred list: plain stores. */
			for (int k = 0; k < 8; k++)
				if (lpc_page_alloc(cache, &p) == 0) {
					memset(lpc_page_data(p), 0xa5, PS);
					atomic_fetch_add(&landings_priv, 1);
					lpc_page_put(p);
				}
		}
		read_region(b, buf, r & 1);					/* OD3-OD5 */
		(void)lpc_invalidate(file, b * PS, (uint64_t)REG * PS);
		read_region(a, buf, r & 2);
		atomic_fetch_add(&rounds, 1);
	}
	free(buf);
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t rs = (uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
	char *buf = aligned_alloc(4096, PS);
	struct lpc_page *p;

	while (!atomic_load(&stop)) {
		uint64_t i = mh_rand(&rs) % (2 * NOWN * REG);
		unsigned op = (unsigned)(mh_rand(&rs) % 3);

		if (op == 0) {
			ssize_t r = lpc_pread(file, buf, PS, i * PS);

			if (r == (ssize_t)PS)
				page_ok(buf, i, "reader pread");
		} else if ((op == 1 ? lpc_page_find(file, i, &p) : lpc_page_get(file, i, 0, &p)) == 0) {
			if (page_ok(lpc_page_data(p), i, "reader get/find")) {
				sched_yield();
				page_ok(lpc_page_data(p), i, "reader, held across a yield");
			}
			lpc_page_put(p);
		}
		atomic_fetch_add(&reads, 1);
	}
	free(buf);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		bool entered = lpc_rcu_scope_enter();

		lpc_rcu_synchronize();
		lpc_rcu_scope_exit(entered);
		atomic_fetch_add(&waits, 1);
		usleep(50);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 20;
	struct lpc_config cfg;
	pthread_t own[NOWN], rd[NRD], w;
	char path[512];
	struct lpc_page *p;
	uint64_t gp0;
	double t0;

	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)NFRAMES * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = LPC_LOOKUP_LOCKLESS;
	cfg.readahead_kb = 0;
	cfg.alloc_wait_ms = 2000;
	if (lpc_cache_create(&cfg, &cache)) {
		printf("create failed\n");
		return 1;
	}
	mh_hole_file("g", (uint64_t)2 * NOWN * REG * PS, path, sizeof(path));
	if (lpc_file_open(cache, path, O_RDONLY, 0, &file) || lpc_page_get(file, 0, 0, &p)) {
		printf("open failed\n");
		return 1;
	}
	fid = ((uint64_t *)lpc_page_data(p))[0];
	lpc_page_put(p);
	gp0 = atomic_load(&lpc_rcu_gp_begun);
	for (uintptr_t i = 0; i < NOWN; i++)
		pthread_create(&own[i], NULL, owner, (void *)i);
	for (uintptr_t i = 0; i < NRD; i++)
		pthread_create(&rd[i], NULL, reader, (void *)(i + 1));
	pthread_create(&w, NULL, waiter, NULL);
	t0 = mh_now();
	while (mh_now() - t0 < secs && atomic_load(&bad) == 0)
		usleep(100000);
	atomic_store(&stop, true);
	for (int i = 0; i < NOWN; i++)
		pthread_join(own[i], NULL);
	for (int i = 0; i < NRD; i++)
		pthread_join(rd[i], NULL);
	pthread_join(w, NULL);
	printf("gp_stress: %.0f s, owner rounds %ld (each: 2 invalidates of %u pages, %u misses), "
	       "private pages %ld, reader ops %ld, waiter's waits %ld, grace periods in all %" PRIu64
	       ", wrong pages %ld\n",
	       mh_now() - t0, atomic_load(&rounds), REG, 2 * REG, atomic_load(&landings_priv),
	       atomic_load(&reads), atomic_load(&waits), atomic_load(&lpc_rcu_gp_begun) - gp0,
	       atomic_load(&bad));
	lpc_file_close(file);
	lpc_cache_destroy(cache);
	att_cleanup();
	return atomic_load(&bad) ? 1 : 0;
}
