/* SPDX-License-Identifier: MIT */
/*
 * idx_gang_frozen.c - a shrinking lpc_truncate takes a reference on a page
 * that a concurrent lpc_invalidate has frozen (leaf lock only), and the
 * invalidate then frees it: the truncate "holds" a freed frame and drops
 * its reference a second time (a double free of the frame).
 *
 * Contract: writeback/dirty.c lpc_wb_gang_tag_get: "Under the index lock a
 * page in the tree holds the index's reference (removers freeze and delete
 * under it): a plain increment is safe."  Branch idx (remove.c
 * invalidate_one_fast, radix.c FD1-FD3) freezes (A) and deletes (B) under
 * the leaf's lock alone, with no index lock, so a gang under tree_lock can
 * see a frozen page (ref 0) still in its slot and increment it to 1; B then
 * removes it and C frees it while the gang's caller uses it.  Callers with
 * LPC_WB_ANY (no tag, so FD2 does not refuse): truncate.c truncate_pages
 * (step 2 and the partial last page).
 *
 * Story (LPC_DEBUG build, yield hook): 4 clean pages cached (one leaf,
 * count 4).  Thread I: lpc_invalidate(f, 0, 0); its first B (page 0,
 * frozen, leaf lock held) parks until thread T has run its gang.  Thread T:
 * lpc_truncate(f, 0): truncate_pages' gang (tree_lock) increments page 0's
 * ref from 0 to 1; T's page lock (L1) lets I go on.  I deletes page 0 and
 * frees it; T locks it, lpc_wb_truncate_page finds it gone, and
 * lpc_page_release drops the count to 0 again: a second free of one frame.
 *
 * Exit 1 when T's gang ran while page 0 was frozen and I then freed it
 * (or the frame count comes out wrong); 0 when fixed (the gang must not
 * resurrect a frozen page: lpc_page_try_get, or removers of a leaf's slot
 * excluded from gangs under tree_lock).
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make VARIANT=asan &&
 *      ASAN_OPTIONS=detect_leaks=0 out-asan/idx_gang_frozen
 */
#include <semaphore.h>
#include <sys/wait.h>

#if !LPC_DEBUG
#include <stdio.h>
int main(void)
{
	printf("idx_gang_frozen needs an LPC_DEBUG build (yield hooks): make VARIANT=asan\n");
	return 77;
}
#else

#include "core/debug.h"
#include "../attack_miss/mh.h"

#define PS 4096u
#define NF 256u

static __thread int role; /* 1: invalidator, 2: truncator */
static sem_t frozen, ganged;
static _Atomic int b_seen, l1_seen, parked_ok;

static int timed_wait(sem_t *s, double secs)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)secs;
	return sem_timedwait(s, &ts);
}

static void hook(enum lpc_yield_point yp)
{
	if (role == 1 && yp == LPC_YP_B && atomic_fetch_add(&b_seen, 1) == 0) {
		sem_post(&frozen);
		/* The leaf lock is held here: T's gang runs under tree_lock
		 * and needs no leaf lock. */
		if (timed_wait(&ganged, 3.0) == 0)
			atomic_store(&parked_ok, 1);
	} else if (role == 2 && yp == LPC_YP_L1 && atomic_fetch_add(&l1_seen, 1) == 0) {
		sem_post(&ganged); /* the gang has returned: its increments are done */
	}
}

static struct lpc_file *f;
static int inval_rc, trunc_rc;

static void *inval_thread(void *arg)
{
	(void)arg;
	role = 1;
	inval_rc = lpc_invalidate(f, 0, 0);
	return NULL;
}

static void *trunc_thread(void *arg)
{
	(void)arg;
	role = 2;
	if (timed_wait(&frozen, 3.0)) {
		trunc_rc = -999;
		return NULL;
	}
	trunc_rc = lpc_truncate(f, 0);
	return NULL;
}

static int story(void)
{
	struct lpc_cache *c = att_cache(NF * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
	char path[512];
	pthread_t ti, tt;
	uint64_t nf;
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	att_make_file("f", 4 * PS, 1, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDWR, 0, &f))
		return 2;
	for (unsigned i = 0; i < 4; i++) {
		struct lpc_page *p;

		if (lpc_page_get(f, i, 0, &p))
			return 2;
		lpc_page_put(p);
	}
	sem_init(&frozen, 0, 0);
	sem_init(&ganged, 0, 0);
	if (lpc_yield_arm("B,L1", 1.0, 1) < 0) {
		printf("not an LPC_DEBUG build\n");
		return 77;
	}
	lpc_yield_set_hook(hook);
	pthread_create(&ti, NULL, inval_thread, NULL);
	pthread_create(&tt, NULL, trunc_thread, NULL);
	pthread_join(ti, NULL);
	pthread_join(tt, NULL);
	lpc_yield_set_hook(NULL);
	lpc_yield_arm(NULL, 0, 0);
	printf("  lpc_invalidate dropped %d; lpc_truncate rc %d; truncate's gang ran while "
	       "page 0 was frozen (I parked at B until T's L1): %s\n",
	       inval_rc, trunc_rc, atomic_load(&parked_ok) ? "yes" : "no");
	if (atomic_load(&parked_ok) && inval_rc >= 1) {
		printf("  FAIL: the truncate took a reference on page 0 (frozen, ref 0 -> 1) "
		       "and the invalidate then freed it (dropped %d)\n", inval_rc);
		fails++;
	}
	nf = mh_wait_all_free(c, 2.0);
	printf("  frames_free after 2 s quiet: %" PRIu64 "/%u\n", nf, NF);
	if (nf != NF) {
		printf("  FAIL: frame count off by %lld (a frame freed twice)\n",
		       (long long)nf - (long long)NF);
		fails++;
	}
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}

/* The story runs in a child: the LPC_DEBUG build stops it at the double
 * free (rule FREE-FRAME-REF: the invalidate's free of page 0 finds the
 * gang's reference on it), and that abort is the defect too. */
int main(void)
{
	pid_t pid;
	int st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	(void)att_tmpdir(); /* the parent removes it */
	pid = fork();
	if (pid == 0)
		_exit(story());
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 2;
	if (WIFSIGNALED(st)) {
		printf("  FAIL: the story died of signal %d (an LPC_DEBUG rule above: the frame "
		       "freed with the gang's reference on it)\nDEFECT\n", WTERMSIG(st));
		att_cleanup();
		return 1;
	}
	return WEXITSTATUS(st);
}
#endif
