/* SPDX-License-Identifier: MIT */
/* pool.c - worker threads and timed slices (see pool.h for the protocol). */
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "pool.h"
#include "tsc.h"
#include "util.h"

struct pool_worker {
	/* Own cache line: a worker's results are written at the end of each
	 * slice, and must not share a line with another worker's. */
	alignas(BENCH_CACHELINE) struct pool *pool;
	unsigned id;
	int cpu; /* pinned to, or -1 */
	pthread_t thread;
	uint64_t ops, ticks, t0, t1, cpu_ns;
};

struct pool {
	pthread_barrier_t start, end;
	unsigned nr;
	/* The coordinator's scheduling before pool_create raised it. */
	bool coord_rt;
	int coord_policy;
	struct sched_param coord_param;
	/* The job: written by the coordinator before the start barrier. */
	unsigned active;
	pool_fn fn;
	void *arg;
	bool quit;
	/* Read by every worker on every batch, written twice per slice: on a
	 * line of its own, so that job and result writes don't bounce it. */
	alignas(BENCH_CACHELINE) _Atomic unsigned stop;
	alignas(BENCH_CACHELINE) struct pool_worker w[];
};

static cpu_set_t allowed;
static unsigned nr_allowed;
static bool allowed_read;

static void read_allowed(void)
{
	if (allowed_read)
		return;
	allowed_read = true;
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		/* Unknown: act as on one CPU, unpinned. */
		CPU_ZERO(&allowed);
		nr_allowed = 0;
		return;
	}
	nr_allowed = (unsigned)CPU_COUNT(&allowed);
}

unsigned cpus_allowed(void)
{
	read_allowed();
	return nr_allowed ? nr_allowed : 1;
}

int cpu_allowed_nth(unsigned i)
{
	read_allowed();
	if (!nr_allowed)
		return -1;
	i %= nr_allowed;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &allowed) && i-- == 0)
			return cpu;
	return -1;
}

/*
 * The calling thread's CPU time.  Beside the TSC, which counts every tick of
 * the slice, it tells how much of the slice the thread really ran: the rest
 * it was preempted, by its own siblings or by other programs.
 */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *pool_worker_main(void *arg)
{
	struct pool_worker *w = arg;
	struct pool *p = w->pool;

	if (w->cpu >= 0) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(w->cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			w->cpu = -1;
	}
	for (;;) {
		uint64_t c0;

		pthread_barrier_wait(&p->start);
		if (p->quit)
			break;
		if (w->id < p->active) {
			w->cpu_ns = thread_cpu_ns();
			w->t0 = now_ns();
			c0 = tsc_begin();
			w->ops = p->fn(w->id, p->arg, &p->stop);
			w->ticks = tsc_end() - c0;
			w->t1 = now_ns();
			w->cpu_ns = thread_cpu_ns() - w->cpu_ns;
		}
		pthread_barrier_wait(&p->end);
	}
	return NULL;
}

/*
 * The coordinator ends every slice, so it must run as soon as its sleep ends.
 * As an ordinary thread it waits for a CPU behind the workers (and whatever
 * else the machine runs): under oversubscription a 100 ms slice then lasts
 * hundreds of ms.  SCHED_FIFO at the lowest priority lets it preempt them for
 * the microseconds it needs.  Raised only after the workers exist, which
 * would otherwise inherit it; without the privilege it stays as it was.
 */
static void coord_raise(struct pool *p)
{
	struct sched_param rt = { .sched_priority = sched_get_priority_min(SCHED_FIFO) };

	if (pthread_getschedparam(pthread_self(), &p->coord_policy, &p->coord_param))
		return;
	p->coord_rt = !pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt);
}

static void coord_restore(struct pool *p)
{
	if (p->coord_rt)
		pthread_setschedparam(pthread_self(), p->coord_policy, &p->coord_param);
	p->coord_rt = false;
}

bool pool_coord_rt(const struct pool *p)
{
	return p->coord_rt;
}

struct pool *pool_create(unsigned nr, bool pin)
{
	struct pool *p;
	int rc;

	p = xaligned_alloc(BENCH_CACHELINE,
			   sizeof(*p) + (size_t)nr * sizeof(struct pool_worker));
	memset(p, 0, sizeof(*p) + (size_t)nr * sizeof(struct pool_worker));
	p->nr = nr;
	atomic_init(&p->stop, 0);
	/* The coordinator takes part in both barriers. */
	rc = pthread_barrier_init(&p->start, NULL, nr + 1);
	if (!rc)
		rc = pthread_barrier_init(&p->end, NULL, nr + 1);
	if (rc)
		die_err(rc, "pthread_barrier_init");
	for (unsigned i = 0; i < nr; i++) {
		struct pool_worker *w = &p->w[i];

		w->pool = p;
		w->id = i;
		w->cpu = pin ? cpu_allowed_nth(i) : -1;
		rc = pthread_create(&w->thread, NULL, pool_worker_main, w);
		if (rc)
			die_err(rc, "starting worker thread %u of %u", i + 1, nr);
	}
	/* An empty slice: every worker has pinned itself once it returns. */
	p->active = 0;
	pthread_barrier_wait(&p->start);
	pthread_barrier_wait(&p->end);
	coord_raise(p);
	return p;
}

void pool_destroy(struct pool *p)
{
	coord_restore(p);
	p->quit = true;
	pthread_barrier_wait(&p->start);
	for (unsigned i = 0; i < p->nr; i++)
		pthread_join(p->w[i].thread, NULL);
	pthread_barrier_destroy(&p->start);
	pthread_barrier_destroy(&p->end);
	free(p);
}

unsigned pool_pinned(const struct pool *p)
{
	unsigned n = 0;

	for (unsigned i = 0; i < p->nr; i++)
		n += p->w[i].cpu >= 0;
	return n;
}

void pool_run(struct pool *p, unsigned active, pool_fn fn, void *arg,
	      uint64_t slice_ns, struct pool_slice *out)
{
	uint64_t first = UINT64_MAX, last = 0;

	p->active = active;
	p->fn = fn;
	p->arg = arg;
	atomic_store_explicit(&p->stop, 0, memory_order_relaxed);
	pthread_barrier_wait(&p->start);
	sleep_ns(slice_ns);
	atomic_store_explicit(&p->stop, 1, memory_order_relaxed);
	pthread_barrier_wait(&p->end);

	memset(out, 0, sizeof(*out));
	out->ops_min = UINT64_MAX;
	for (unsigned i = 0; i < active; i++) {
		const struct pool_worker *w = &p->w[i];

		out->ops += w->ops;
		out->ticks += w->ticks;
		out->cpu_ns += w->cpu_ns;
		if (w->ops < out->ops_min)
			out->ops_min = w->ops;
		if (w->ops > out->ops_max)
			out->ops_max = w->ops;
		if (w->t0 < first)
			first = w->t0;
		if (w->t1 > last)
			last = w->t1;
	}
	out->wall_ns = last - first;
}
