/* SPDX-License-Identifier: MIT */
/*
 * rw_sig.c - lpc_cache_create restores the caller's signal mask exactly and
 * loses no signal; the worker never takes one.
 *   1. the caller blocks SIGUSR1, SIGRTMIN+3 and SIGPIPE; SIGUSR2 (blocked)
 *      and SIGRTMIN+3 are pending (thread-directed, tgkill) across the call;
 *      after create the mask is bit for bit what it was, both still pending,
 *      and each is delivered exactly once, to this thread, once unblocked
 *   2. a process-directed SIGUSR1 (kill) sent 200 times during creates on
 *      another thread, while every other thread blocks it: each is handled,
 *      none by the worker (handler's gettid is the main thread's)
 *   3. the worker's SigBlk is full and it has no pending signal (SigPnd 0)
 */
#include "rw.h"

static _Atomic int got_usr2, got_rt, got_usr1, wrong_thread;
static pid_t main_tid;

static void h(int sig)
{
	if (rw_gettid() != main_tid)
		atomic_fetch_add(&wrong_thread, 1);
	if (sig == SIGUSR2)
		atomic_fetch_add(&got_usr2, 1);
	else if (sig == SIGRTMIN + 3)
		atomic_fetch_add(&got_rt, 1);
	else if (sig == SIGUSR1)
		atomic_fetch_add(&got_usr1, 1);
}

static unsigned long long sigpnd(pid_t tid, const char *field)
{
	char path[64], line[256];
	unsigned long long m = ~0ull;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	fp = fopen(path, "r");
	if (!fp)
		return m;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, field, strlen(field)))
			m = strtoull(line + strlen(field), NULL, 16);
	fclose(fp);
	return m;
}

static _Atomic int stop;
static void *creator_loop(void *arg)
{
	sigset_t s;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	pthread_setname_np(pthread_self(), "rw-creator");
	for (int i = 0; i < 30; i++)
		tst_cache_destroy(rw_cache());
	atomic_store(&stop, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = h };
	sigset_t want, now, pend, all;
	struct rw_tids before, after;
	struct lpc_cache *c;
	unsigned count;
	pid_t w;
	int sent = 0;

	tst_init(argc, argv, 60);
	pthread_setname_np(pthread_self(), "rw-sig");
	main_tid = rw_gettid();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGRTMIN + 3, &sa, NULL);

	/* 1 */
	sigemptyset(&want);
	sigaddset(&want, SIGUSR1);
	sigaddset(&want, SIGUSR2);
	sigaddset(&want, SIGRTMIN + 3);
	sigaddset(&want, SIGPIPE);
	pthread_sigmask(SIG_SETMASK, &want, NULL);
	syscall(SYS_tgkill, getpid(), main_tid, SIGUSR2);
	syscall(SYS_tgkill, getpid(), main_tid, SIGRTMIN + 3);
	before = rw_tids();
	c = rw_cache();
	after = rw_tids();
	rw_new_tid(&before, &after, &count);
	CHECK_EQ(count, 0u, "create made no thread (ad5f9fa)");
	/* the reclaimer's start, from this thread, makes the worker first */
	CHECK(rw_evict_run(c, "rw-sig") == 1, "lpc-reclaim ran");
	w = rw_worker_since(&before, &count);
	REQUIRE(count == 1 && w, "the worker exists after the eviction (%u)", count);
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	sigfillset(&all);
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&all, s) == 1)
			CHECK_EQ(sigismember(&now, s), sigismember(&want, s), "signal %d mask bit", s);
	sigpending(&pend);
	CHECK(sigismember(&pend, SIGUSR2) == 1, "SIGUSR2 still pending on the caller");
	CHECK(sigismember(&pend, SIGRTMIN + 3) == 1, "SIGRTMIN+3 still pending");
	CHECK_EQ(atomic_load(&got_usr2) + atomic_load(&got_rt), 0, "nothing delivered while blocked");
	/* 3 */
	CHECK(rw_all_blocked(w), "worker SigBlk %llx", rw_sigblk(w));
	CHECK_EQ(sigpnd(w, "SigPnd:"), 0ull, "worker has nothing pending");
	/* deliver */
	sigemptyset(&now);
	sigaddset(&now, SIGUSR2);
	sigaddset(&now, SIGRTMIN + 3);
	pthread_sigmask(SIG_UNBLOCK, &now, NULL);
	CHECK_EQ(atomic_load(&got_usr2), 1, "SIGUSR2 delivered once");
	CHECK_EQ(atomic_load(&got_rt), 1, "SIGRTMIN+3 delivered once");

	/* 2: main unblocks SIGUSR1; everyone else (creator, worker, lpc) blocks it */
	sigemptyset(&now);
	sigaddset(&now, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &now, NULL);
	{
		pthread_t t;

		pthread_create(&t, NULL, creator_loop, NULL);
		while (!atomic_load(&stop) && sent < 200) {
			kill(getpid(), SIGUSR1);
			sent++;
			while (atomic_load(&got_usr1) < sent && !atomic_load(&stop))
				usleep(100);
		}
		pthread_join(t, NULL);
	}
	for (int i = 0; i < 100 && atomic_load(&got_usr1) < sent; i++)
		usleep(1000);
	CHECK_EQ(atomic_load(&got_usr1), sent, "every process-directed SIGUSR1 handled (%d sent)",
		 sent);
	CHECK_EQ(atomic_load(&wrong_thread), 0, "no handler ran on another thread");
	tst_cache_destroy(c);
	return tst_finish();
}
