/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - starting one of lpc's background threads (the reclaimer, the
 * flusher, a readahead worker), the same way for each:
 *  - every signal blocked around the start: the thread inherits the mask
 *    and runs no application code, so no signal is delivered to it;
 *  - liburcu's call_rcu worker made first, from the starting thread
 *    (core/rcu.h lpc_rcu_worker_ensure: lpc's first background thread is
 *    always started by an application thread, so the worker is one's);
 *  - named at once, before anyone can look (top -H, gdb, the tests that
 *    count threads): a thread inherits its creator's name, which may be
 *    another lpc thread's.
 * In a file of its own, apart from core/thread.c's lpc_rcu_worker_ensure,
 * so that a test or review program can replace that call with
 * -Wl,--wrap (tests/attack_rw's _nofix builds).
 */
#include <pthread.h>
#include <signal.h>

#include "core/rcu.h"
#include "core/thread.h"

int lpc_thread_spawn(pthread_t *thread, void *(*fn)(void *), void *arg, const char *name)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = lpc_rcu_worker_ensure();
	if (rc == 0) {
		rc = -pthread_create(thread, NULL, fn, arg);
		if (rc == 0)
			pthread_setname_np(*thread, name);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
