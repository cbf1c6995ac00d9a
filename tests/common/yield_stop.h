/* SPDX-License-Identifier: MIT */
/*
 * yield_stop.h - stop one chosen thread at one yield point (LPC_DEBUG builds),
 * for the deterministic stories under tests/regress/.
 *
 *   tst_stop_arm(LPC_YP_R4);       arms R4 and installs the hook
 *   thread G calls tst_stop_me() first, then lpc: it parks at R4, once
 *   tst_stop_wait()                returns true when G is parked there
 *   ... the test makes the race happen ...
 *   tst_stop_release()             lets G go on
 *   tst_stop_disarm()
 * Only threads that called tst_stop_me() stop, and each stops once per arm.
 */
#ifndef LPC_TESTS_YIELD_STOP_H
#define LPC_TESTS_YIELD_STOP_H

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "core/debug.h"

static pthread_mutex_t tst_stop_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tst_stop_cv = PTHREAD_COND_INITIALIZER;
static enum lpc_yield_point tst_stop_at;
static bool tst_stop_stopped, tst_stop_go;
static __thread bool tst_stop_is_me;

static inline void tst_stop_me(void)
{
	tst_stop_is_me = true;
}

/* Runs at armed yield points: parks the chosen thread once at tst_stop_at. */
static inline void tst_stop_hook(enum lpc_yield_point yp)
{
	if (!tst_stop_is_me || yp != tst_stop_at)
		return;
	pthread_mutex_lock(&tst_stop_mu);
	if (!tst_stop_stopped) {
		tst_stop_stopped = true;
		pthread_cond_broadcast(&tst_stop_cv);
		while (!tst_stop_go)
			pthread_cond_wait(&tst_stop_cv, &tst_stop_mu);
	}
	pthread_mutex_unlock(&tst_stop_mu);
}

static inline void tst_stop_arm(enum lpc_yield_point at)
{
	pthread_mutex_lock(&tst_stop_mu);
	tst_stop_at = at;
	tst_stop_stopped = tst_stop_go = false;
	pthread_mutex_unlock(&tst_stop_mu);
	lpc_yield_set_hook(tst_stop_hook);
	lpc_yield_arm(lpc_yield_name(at), 1.0, 1);
}

static inline void tst_stop_disarm(void)
{
	lpc_yield_arm(NULL, 0, 0);
}

/* Return: true once the chosen thread is parked; false after 10 s. */
static inline bool tst_stop_wait(void)
{
	struct timespec ts;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&tst_stop_mu);
	while (!tst_stop_stopped && pthread_cond_timedwait(&tst_stop_cv, &tst_stop_mu, &ts) == 0)
		;
	ok = tst_stop_stopped;
	pthread_mutex_unlock(&tst_stop_mu);
	return ok;
}

static inline void tst_stop_release(void)
{
	pthread_mutex_lock(&tst_stop_mu);
	tst_stop_go = true;
	pthread_cond_broadcast(&tst_stop_cv);
	pthread_mutex_unlock(&tst_stop_mu);
}

#endif /* LPC_TESTS_YIELD_STOP_H */
