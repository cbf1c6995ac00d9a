/* SPDX-License-Identifier: MIT */
/*
 * rw_fork.c - does a child of a process that created a cache (and never
 * calls lpc, as lpc(7) asks) still get working call_rcu of its own?
 * liburcu 0.13's default call_rcu data survives fork() as a pointer to a
 * worker the child does not have: a child's call_rcu queues for nobody and
 * its rcu_barrier waits forever, unless the program calls liburcu's
 * urcu_memb_call_rcu_before_fork/after_fork_child around fork().
 *   rw_fork cacheonly   parent: create + destroy a cache, no file
 *   rw_fork openclose   parent: also opens, reads and closes a file
 *   rw_fork hooks       cacheonly, with liburcu's fork hooks
 *   rw_fork exitonly    cacheonly; the child only calls exit(0) (lpc's and
 *                       liburcu's exit-time code must not hang)
 * Child: a new thread registers, call_rcu + rcu_barrier under alarm(3); then exit().
 * Exit 1 when the child's callback never ran (killed by SIGALRM).
 */
#include "rw.h"

static int ran;
static void cb(struct rcu_head *h)
{
	(void)h;
	__atomic_store_n(&ran, 1, __ATOMIC_RELEASE);
}

static void *child_thread(void *arg)
{
	static struct rcu_head head;

	(void)arg;
	urcu_memb_register_thread();
	urcu_memb_call_rcu(&head, cb);
	urcu_memb_barrier();
	urcu_memb_unregister_thread();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "cacheonly";
	bool hooks = !strcmp(mode, "hooks");
	struct lpc_cache *c;
	int st;
	pid_t p;

	tst_init(1, argv, 60);
	tst_require_tmpdir();
	c = rw_cache();
	if (!strcmp(mode, "openclose"))
		rw_evict_run(c, "rw-fork");
	tst_cache_destroy(c);
	fflush(stdout);
	if (hooks)
		urcu_memb_call_rcu_before_fork();
	p = fork();
	REQUIRE(p >= 0, "fork");
	if (p == 0) {
		pthread_t t;

		if (hooks)
			urcu_memb_call_rcu_after_fork_child();
		alarm(3);
		if (!strcmp(mode, "exitonly"))
			exit(0);
		/* a fresh thread: the main thread is still registered (lpc's
		 * persistent registration is copied into the child) */
		pthread_create(&t, NULL, child_thread, NULL);
		pthread_join(t, NULL);
		exit(__atomic_load_n(&ran, __ATOMIC_ACQUIRE) ? 0 : 3);
	}
	if (hooks)
		urcu_memb_call_rcu_after_fork_parent();
	REQUIRE(waitpid(p, &st, 0) == p, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "%s: child's call_rcu + rcu_barrier: %s %d", mode,
	      WIFSIGNALED(st) ? "killed by signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) :
	      WEXITSTATUS(st));
	return tst_finish();
}
