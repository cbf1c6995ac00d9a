/* SPDX-License-Identifier: MIT */
/*
 * debug.c - the LPC_DEBUG build's failure report and yield injection
 * (debug.h).  Empty in other builds.  It includes no part above core/: the
 * page a broken rule names is described by the describer page/ registers.
 */
#include "core/debug.h"

#if LPC_DEBUG

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Atomic unsigned char lpc_yield_armed[LPC_YP_NR];
__thread int lpc_debug_frozen;
__thread int lpc_debug_page_locks;

static const char *const yield_names[LPC_YP_NR] = {
#define LPC_YP_NAME(name) #name,
	LPC_YIELD_POINTS(LPC_YP_NAME)
#undef LPC_YP_NAME
};

static double yield_prob = 0.05;
static uint64_t yield_seed;
static _Atomic uint64_t yield_threads;
static void (*_Atomic yield_hook)(enum lpc_yield_point yp);

static _Atomic lpc_debug_describe_fn describer;

static __thread uint64_t tls_rng;
static __thread uint64_t tls_tid;

void lpc_debug_set_describer(lpc_debug_describe_fn fn)
{
	atomic_store(&describer, fn);
}

void lpc_debug_fail(const char *rule, const void *obj, const char *file, int line,
		    const char *fmt, ...)
{
	lpc_debug_describe_fn describe = atomic_load(&describer);
	char msg[512], what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (obj) {
		if (describe)
			describe(obj, what, sizeof(what));
		else
			snprintf(what, sizeof(what), "object %p", obj);
		fprintf(stderr, "lpc debug: rule %s violated: %s (%s) at %s:%d\n", rule, msg, what,
			file, line);
	} else {
		fprintf(stderr, "lpc debug: rule %s violated: %s at %s:%d\n", rule, msg, file, line);
	}
	fflush(stderr);
	abort();
}

uint64_t lpc_debug_tid(void)
{
	if (!tls_tid)
		tls_tid = (uint64_t)syscall(SYS_gettid);
	return tls_tid;
}

const char *lpc_yield_name(enum lpc_yield_point yp)
{
	return (unsigned)yp < LPC_YP_NR ? yield_names[yp] : "?";
}

/* Fills want[] from a comma list.  Return: 0, or -EINVAL on an unknown name. */
static int yield_parse(const char *list, unsigned char want[LPC_YP_NR])
{
	const char *s = list;

	memset(want, 0, LPC_YP_NR);
	if (!list)
		return 0;
	if (!strcmp(list, "all")) {
		memset(want, 1, LPC_YP_NR);
		return 0;
	}
	while (*s) {
		size_t len = strcspn(s, ",");
		unsigned i;

		for (i = 0; i < LPC_YP_NR; i++)
			if (strlen(yield_names[i]) == len && !strncmp(s, yield_names[i], len))
				break;
		if (len && i == LPC_YP_NR)
			return -EINVAL;
		if (len)
			want[i] = 1;
		s += len;
		if (*s == ',')
			s++;
	}
	return 0;
}

int lpc_yield_arm(const char *list, double prob, uint64_t seed)
{
	unsigned char want[LPC_YP_NR];

	if (yield_parse(list, want))
		return -EINVAL;
	yield_prob = prob;
	yield_seed = seed;
	for (unsigned i = 0; i < LPC_YP_NR; i++)
		atomic_store(&lpc_yield_armed[i], want[i]);
	return 0;
}

void lpc_yield_set_hook(void (*hook)(enum lpc_yield_point yp))
{
	atomic_store(&yield_hook, hook);
}

/* splitmix64: each thread's generator starts from the seed and its number. */
static uint64_t rng_next(void)
{
	uint64_t z;

	if (!tls_rng)
		tls_rng = yield_seed ^ (atomic_fetch_add(&yield_threads, 1) + 1) *
					       UINT64_C(0x9e3779b97f4a7c15);
	z = (tls_rng += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void lpc_yield_slow(enum lpc_yield_point yp)
{
	void (*hook)(enum lpc_yield_point) = atomic_load(&yield_hook);
	uint64_t r;

	if (hook) {
		hook(yp);
		return;
	}
	r = rng_next();
	if ((double)(r >> 11) * 0x1p-53 >= yield_prob)
		return;
	if (r & 1) {
		sched_yield();
	} else {
		struct timespec ts = { 0, (long)(1000 + (r >> 40) % 49000) };

		nanosleep(&ts, NULL);
	}
}

/* Reads LPC_YIELD, LPC_YIELD_PROB and LPC_YIELD_SEED once, at load. */
__attribute__((constructor)) static void yield_from_env(void)
{
	const char *list = getenv("LPC_YIELD");
	const char *prob = getenv("LPC_YIELD_PROB");
	const char *seed = getenv("LPC_YIELD_SEED");
	double pr = 0.05;
	uint64_t sd;

	if (!list || !*list)
		return;
	if (prob && *prob)
		pr = strtod(prob, NULL);
	sd = seed && *seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL) ^ (uint64_t)getpid();
	if (lpc_yield_arm(list, pr, sd)) {
		fprintf(stderr, "lpc debug: LPC_YIELD=%s names an unknown step; ignored\n", list);
		return;
	}
	fprintf(stderr, "lpc debug: yield injection at %s, probability %g, seed %llu\n", list, pr,
		(unsigned long long)sd);
}

#else
/* ISO C forbids an empty translation unit. */
typedef int lpc_debug_unused;
#endif /* LPC_DEBUG */
