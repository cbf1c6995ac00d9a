/* SPDX-License-Identifier: MIT */
/*
 * cure.c - a sketch of a narrower lpc_rcu_worker_ensure, linked with
 * -Wl,--wrap=lpc_rcu_worker_ensure into out-V/rw_nproc_cure only: after
 * joining the probe it waits until the probe's tid is gone (tgkill(tid, 0)
 * fails with ESRCH: release_task has run, which takes the probe off
 * RLIMIT_NPROC's count before unhashing it), then calls liburcu.  Not the
 * project's code; it shows what finding 1 in README.md would need.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <urcu/urcu-memb.h>

static _Atomic bool made;

static void *probe_main(void *arg)
{
	*(_Atomic pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

int __wrap_lpc_rcu_worker_ensure(void);
int __wrap_lpc_rcu_worker_ensure(void)
{
	_Atomic pid_t tid = 0;
	sigset_t all, old;
	pthread_t probe;
	int rc;

	if (atomic_load_explicit(&made, memory_order_acquire))
		return 0;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&probe, NULL, probe_main, &tid);
	if (rc == 0) {
		pthread_join(probe, NULL);
		while (syscall(SYS_tgkill, getpid(), (pid_t)tid, 0) == 0)
			sched_yield();
		(void)urcu_memb_get_default_call_rcu_data();
		atomic_store_explicit(&made, true, memory_order_release);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}
