/* SPDX-License-Identifier: MIT */
/*
 * idx_trunc_inval.c - idx_gang_frozen's defect without yield hooks: a
 * shrinking lpc_truncate racing lpc_invalidate on the same file, in any
 * build (release included).
 *
 * truncate.c truncate_pages -> lpc_wb_gang_tag_get(LPC_WB_ANY): under
 * tree_lock, lpc_radix_gang reads up to 32 slots, then increments each
 * page's ref with a plain fetch_add ("removers freeze and delete under
 * it").  remove.c invalidate_one_fast freezes (A, ref 1 -> 0) and deletes
 * (B) under the leaf lock alone: a page the gang read before A gets its
 * ref raised 0 -> 1 after A; B and C then free it while the truncate holds
 * it, and the truncate's lpc_page_release frees it a second time.
 *
 * Rounds: 64 pages of f cached (one leaf); thread I lpc_invalidate(f, 0, 0)
 * and thread T lpc_truncate(f, 32 pages) at once; T grows f back to 64
 * pages (zeros past 32).  Each round reads all 64 pages back and checks
 * them (pattern below 32, zeros above), and that frames_free <= frames.
 * A frame freed twice comes back twice from the free list: two pages then
 * share one frame, and one of them reads the other's data.
 *
 * Exit 1 on any wrong byte, a frame count above the pool, or (LPC_DEBUG
 * builds) a rule abort; 0 if SECS seconds (default 30) pass clean: no
 * proof of absence, the window is narrow.
 *
 * Run: cmake --build ../../build-release --target lpc_static && make VARIANT=release &&
 *      out-release/idx_trunc_inval [SECS]
 */
#include <execinfo.h>
#include <signal.h>
#include <sys/wait.h>

#include "../attack_miss/mh.h"

#define PS 4096u
#define NP 64u
#define NF 512u

static struct lpc_file *f;
static pthread_barrier_t go, done;
static _Atomic int stop;

static void *inval_thread(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_barrier_wait(&go);
		if (atomic_load(&stop))
			return NULL;
		(void)lpc_invalidate(f, 0, 0);
		pthread_barrier_wait(&done);
	}
}

static void *trunc_thread(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_barrier_wait(&go);
		if (atomic_load(&stop))
			return NULL;
		(void)lpc_truncate(f, (uint64_t)(NP / 2) * PS);
		(void)lpc_truncate(f, (uint64_t)NP * PS);
		pthread_barrier_wait(&done);
	}
}

/* Where a crash happened (the defect's symptom in a release build). */
static void on_fault(int sig)
{
	void *bt[32];
	int n = backtrace(bt, 32);

	dprintf(1, "  signal %d in:\n", sig);
	backtrace_symbols_fd(bt, n, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int story(double secs)
{
	struct lpc_cache *c = att_cache(NF * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
	char path[512], *buf = malloc(PS), *zero = calloc(1, PS);
	pthread_t ti, tt;
	struct lpc_stats s;
	double t0 = mh_now();
	uint64_t rounds = 0;
	int fails = 0;

	att_make_file("f", (uint64_t)NP * PS, 1, path, sizeof(path));
	/* Below NP / 2 the pattern; above, zeros from the first round on. */
	if (lpc_file_open(c, path, O_RDWR, 0, &f) || lpc_truncate(f, (uint64_t)(NP / 2) * PS) ||
	    lpc_truncate(f, (uint64_t)NP * PS))
		return 2;
	pthread_barrier_init(&go, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	pthread_create(&ti, NULL, inval_thread, NULL);
	pthread_create(&tt, NULL, trunc_thread, NULL);
	while (!fails && mh_now() - t0 < secs) {
		for (unsigned i = 0; i < NP; i++) {
			struct lpc_page *p;

			if (lpc_page_get(f, i, 0, &p) == 0)
				lpc_page_put(p);
		}
		pthread_barrier_wait(&go);
		pthread_barrier_wait(&done);
		rounds++;
		for (unsigned i = 0; i < NP && !fails; i++) {
			ssize_t r = lpc_pread(f, buf, PS, (uint64_t)i * PS);
			long bad = i < NP / 2 ? att_bad_word(buf, PS, (uint64_t)i * PS, 1)
					      : (memcmp(buf, zero, PS) ? 0 : -1);

			if (r != (ssize_t)PS || bad >= 0) {
				printf("  FAIL round %" PRIu64 ": page %u reads wrong (rc %zd, word %ld)\n",
				       rounds, i, r, bad);
				fails++;
			}
		}
		lpc_stats(c, &s);
		if (s.frames_free > s.frames) {
			printf("  FAIL round %" PRIu64 ": frames_free %" PRIu64 " > frames %" PRIu64 "\n",
			       rounds, s.frames_free, s.frames);
			fails++;
		}
	}
	atomic_store(&stop, 1);
	pthread_barrier_wait(&go);
	pthread_join(ti, NULL);
	pthread_join(tt, NULL);
	printf("  %" PRIu64 " rounds in %.1f s\n", rounds, mh_now() - t0);
	if (!fails) {
		uint64_t nf = mh_wait_all_free(c, 2.0);

		(void)lpc_invalidate(f, 0, 0);
		nf = mh_wait_all_free(c, 2.0);
		printf("  frames_free when quiet: %" PRIu64 "/%u\n", nf, NF);
		if (nf != NF) {
			printf("  FAIL: frames_free %" PRIu64 ", not %u\n", nf, NF);
			fails++;
		}
		lpc_file_close(f);
		lpc_cache_destroy(c);
	}
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held (for this long)");
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 30.0;
	pid_t pid;
	int st;

	setvbuf(stdout, NULL, _IOLBF, 0);
	(void)att_tmpdir();
	pid = fork();
	if (pid == 0) {
		signal(SIGSEGV, on_fault);
		signal(SIGBUS, on_fault);
		_exit(story(secs));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 2;
	att_cleanup();
	if (WIFSIGNALED(st)) {
		printf("  FAIL: died of signal %d\nDEFECT\n", WTERMSIG(st));
		return 1;
	}
	return WEXITSTATUS(st);
}
