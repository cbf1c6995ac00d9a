/* SPDX-License-Identifier: MIT */
/*
 * ac_stress.c - CLOCK2's active count (reclaim/evict.c AC1-AC3, rule
 * ACTIVE-COUNT) and the new lock order (index lock -> leaf lock at AC1)
 * against every other path that takes a leaf lock or the index lock, at
 * once, in one small cache:
 *   2 hitters   lpc_page_get/put of random pages of F (hits, misses: M3's
 *               fast insert under a leaf lock; REFERENCED for promotions)
 *   evictor     lpc_reclaim_evict, the target 8 (promotions and demotions
 *               all the time), besides the background reclaimer (pressure)
 *   invalidator lpc_invalidate of random ranges of F (fast path FD1-FD3 and
 *               the slow one under the index lock)
 *   writer      lpc_pwrite + lpc_fsync of F (DIRTY tags: radix tag
 *               set/clear under leaf locks, lpc_wb_gang_tag_get's leaf lock
 *               under the index lock)
 *   truncator   lpc_truncate of F down and back up (remove under the index
 *               lock; gang_tag_get LPC_WB_ANY)
 *   closer      open, read, close a second file G (the last close's
 *               remove_all under the index lock, with active pages)
 * Claims: (a) no deadlock: alarm(SECS + 120) turns a hang into exit 1;
 * (b) at quiescence (every thread joined, the reclaimer stopped, frames
 * landed) nactive equals the descriptors held with ACTIVE and no free frame
 * carries ACTIVE; the debug build's rule ACTIVE-COUNT (each step, and at
 * lpc_cache_destroy) never fires (an abort: exit 1).
 * Per lookup mode (lockless, then LOCKED).
 *
 * AC_NOCLOSE=1 leaves F open for lpc_cache_destroy (its close_all, then the
 * ACTIVE-COUNT census).
 *
 * Run (debug build, yield injection everywhere):
 *   LPC_YIELD=all LPC_YIELD_PROB=0.05 ASAN_OPTIONS=detect_leaks=0 \
 *     out-asan/ac_stress [SECS] [SEED]
 * Exit: 1 while a defect stands (hang, count off, rule abort), 0 if SECS
 * seconds per mode pass clean (no proof of absence).
 */
#include <signal.h>
#include <sys/wait.h>

#include "../attack_miss/mh.h"
#include "cache/cache.h"

#define PS 4096u
#define FP 256u /* pages of F */
#define GP 64u	/* pages of G */
#define NF 128u /* frames: pressure */

static struct lpc_cache *c;
static struct lpc_file *F;
static char fpath[512], gpath[512];
static _Atomic int stop;
static double secs = 10;
static uint64_t seed0 = 1;
static _Atomic uint64_t nops[6];

static void *hitter(void *arg)
{
	uint64_t rng = seed0 ^ (uintptr_t)arg;
	struct lpc_page *p;

	while (!atomic_load(&stop)) {
		uint64_t i = mh_rand(&rng) % (mh_rand(&rng) & 1 ? 32 : FP); /* a hot set */

		if (lpc_page_get(F, i, 0, &p) == 0)
			lpc_page_put(p);
		atomic_fetch_add(&nops[0], 1);
	}
	return NULL;
}

static void *evictor(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		struct lpc_tcache *t = lpc_tcache(&c->pool.owner);

		if (t)
			lpc_reclaim_evict(&c->reclaim, 2, t);
		atomic_fetch_add(&nops[1], 1);
	}
	return NULL;
}

static void *invalidator(void *arg)
{
	uint64_t rng = seed0 ^ 0x1234 ^ (uintptr_t)arg;

	while (!atomic_load(&stop)) {
		uint64_t first = mh_rand(&rng) % FP;

		(void)lpc_invalidate(F, first * PS, (1 + mh_rand(&rng) % 24) * PS);
		atomic_fetch_add(&nops[2], 1);
		usleep(50); /* leave pages long enough to be hit and promoted */
	}
	return NULL;
}

static void *writer(void *arg)
{
	uint64_t rng = seed0 ^ 0x777 ^ (uintptr_t)arg;
	char buf[PS];

	memset(buf, 0x5a, sizeof(buf));
	while (!atomic_load(&stop)) {
		uint64_t i = mh_rand(&rng) % FP;

		(void)lpc_pwrite(F, buf, 512, i * PS + 1024);
		if (mh_rand(&rng) % 8 == 0)
			(void)lpc_fsync(F);
		atomic_fetch_add(&nops[3], 1);
	}
	return NULL;
}

static void *truncator(void *arg)
{
	uint64_t rng = seed0 ^ 0x999 ^ (uintptr_t)arg;

	while (!atomic_load(&stop)) {
		uint64_t to = FP / 2 + mh_rand(&rng) % (FP / 2);

		(void)lpc_truncate(F, to * PS);
		usleep(200);
		(void)lpc_truncate(F, (uint64_t)FP * PS);
		atomic_fetch_add(&nops[4], 1);
		usleep(1000);
	}
	return NULL;
}

static void *closer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		struct lpc_file *g;
		struct lpc_page *p;

		if (lpc_file_open(c, gpath, O_RDONLY, 0, &g))
			continue;
		for (int r = 0; r < 3; r++)
			for (uint64_t i = 0; i < GP; i++)
				if (lpc_page_get(g, i, 0, &p) == 0)
					lpc_page_put(p);
		(void)lpc_file_close(g);
		atomic_fetch_add(&nops[5], 1);
	}
	return NULL;
}

static int run(int mode)
{
	void *(*fn[])(void *) = { hitter, hitter, evictor, invalidator, writer, truncator, closer };
	const unsigned nt = sizeof(fn) / sizeof(fn[0]);
	pthread_t th[16];
	uint32_t freed, live, n, maxact = 0;
	int fails = 0;

	c = att_cache((size_t)NF * PS, PS, LPC_IO_SYNC, mode, 0, 0);
	if (lpc_file_open(c, fpath, O_RDWR, 0, &F)) {
		printf("open F failed\n");
		return 2;
	}
	c->reclaim.active_target = 8; /* promotions and demotions both */
	for (unsigned i = 0; i < nt; i++)
		pthread_create(&th[i], NULL, fn[i], (void *)(uintptr_t)(i + 1));
	for (double t0 = mh_now(); mh_now() - t0 < secs; usleep(1000)) {
		uint32_t a = atomic_load(&c->pool.nactive);

		if (a > maxact && a < UINT32_MAX / 2)
			maxact = a;
		if (a >= UINT32_MAX / 2) {
			printf("  FAIL: nactive %u: went below 0\n", a);
			fails++;
			break;
		}
	}
	atomic_store(&stop, 1);
	for (unsigned i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	lpc_reclaim_stop(&c->reclaim);
	(void)mh_wait_all_free; /* frames in transit were prepped already */
	live = lpc_reclaim_active_census(&c->reclaim, &freed);
	n = atomic_load(&c->pool.nactive);
	printf("  %s: ops hit %" PRIu64 " evict %" PRIu64 " inval %" PRIu64 " write %" PRIu64
	       " trunc %" PRIu64 " close %" PRIu64 "; nactive %u (max seen %u), held ACTIVE %u, free ACTIVE %u\n",
	       att_mode_name(mode), nops[0], nops[1], nops[2], nops[3], nops[4], nops[5], n, maxact,
	       live, freed);
	if (maxact == 0) {
		printf("  FAIL (setup): no page was ever promoted\n");
		fails++;
	}
	if (n != live || freed) {
		printf("  FAIL: the active count drifted\n");
		fails++;
	}
	/* AC_NOCLOSE=1: F left open, destroy's close_all removes its active
	 * pages (remove_all) right before the census. */
	if (!getenv("AC_NOCLOSE") && lpc_file_close(F))
		printf("  (close F reported a write error)\n");
	if (lpc_cache_destroy(c)) /* LPC_DEBUG: ACTIVE-COUNT at destroy */
		printf("  (destroy returned an error)\n");
	atomic_store(&stop, 0);
	for (int i = 0; i < 6; i++)
		nops[i] = 0;
	return fails;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char m[] = "FAIL: hang (alarm): a deadlock or a livelock\n";
	if (write(1, m, sizeof(m) - 1) < 0) {
	}
	_exit(1);
}

int main(int argc, char **argv)
{
	int st, fails = 0;
	pid_t pid;

	if (argc > 1)
		secs = atof(argv[1]);
	if (argc > 2)
		seed0 = strtoull(argv[2], NULL, 0) | 1;
	att_make_file("F", (uint64_t)FP * PS, 1, fpath, sizeof(fpath));
	att_make_file("G", (uint64_t)GP * PS, 2, gpath, sizeof(gpath));
	setvbuf(stdout, NULL, _IONBF, 0);
	pid = fork();
	if (pid == 0) {
		signal(SIGALRM, on_alarm);
		alarm((unsigned)(2 * secs + 120));
		fails += run(LPC_LOOKUP_LOCKLESS);
		fails += run(LPC_LOOKUP_LOCKED);
		_exit(fails ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	att_cleanup();
	if (WIFSIGNALED(st)) {
		printf("FAIL: killed by signal %d (a debug rule's abort?)\n", WTERMSIG(st));
		return 1;
	}
	printf("%s\n", WEXITSTATUS(st) ? "FAIL" : "held");
	return WEXITSTATUS(st) ? 1 : 0;
}
