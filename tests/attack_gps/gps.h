/* SPDX-License-Identifier: MIT */
/*
 * gps.h - the grace-period counters' review (attack_gps/): an independent
 * tally of every wait lpc makes, to check lpc_stats' grace_periods and
 * grace_period_ns against.
 *
 * The programs link liblpc.a with ld's --wrap (Makefile GPS_WRAP):
 *  - urcu_memb_synchronize_rcu and urcu_memb_barrier: every wait lpc's own
 *    code makes (core/rcu.h lpc_rcu_synchronize, lpc_rcu_barrier; liburcu's
 *    internal ones, its call_rcu thread's, are not lpc's references and
 *    stay unwrapped), timed inside lpc's own timing;
 *  - lpc_page_alloc_frame, lpc_page_pending_drain, lpc_page_deferred_take:
 *    the only entry points (from other objects) to page/alloc.c's counted
 *    waits (OD4 and reclaim() inside the first), so that the wait is
 *    tallied for the pool whose call is on this thread's stack.
 * A wait with no such call on the stack is tallied as "unattributed"
 * (lpc_cache_destroy's barrier, a test's own lpc_rcu_synchronize).
 * Claim checked with it: for each cache, lpc_stats' grace_periods grows by
 * exactly the waits tallied for its pool, grace_period_ns by at least their
 * time (lpc's clock reads enclose the wrapper's).
 */
#ifndef GPS_H
#define GPS_H
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>

#include "cache/cache.h"
#include "core/rcu.h"
#include "core/thread.h"
#include "reclaim/reclaim.h"
#include "../attack_miss/mh.h"

#define GPS_MAXPOOL 4

struct gps_tally {
	_Atomic uint64_t sync, barrier, ns;
};

/* [0]: unattributed; [i + 1]: gps_pool[i] */
static struct gps_tally gps_tally[GPS_MAXPOOL + 1];
static struct lpc_pool *gps_pool[GPS_MAXPOOL];
static __thread struct lpc_pool *gps_cur;
/* every wait's time by kind, attributed or not */
static _Atomic uint64_t gps_sync_ns, gps_barrier_ns;
/* waits by threads that set gps_marked (a program's own threads) */
static __thread bool gps_marked;
static _Atomic uint64_t gps_marked_waits;

static unsigned gps_idx(const struct lpc_pool *p)
{
	for (unsigned i = 0; p && i < GPS_MAXPOOL; i++)
		if (gps_pool[i] == p)
			return i + 1;
	return 0;
}

static uint64_t gps_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void __real_urcu_memb_synchronize_rcu(void);
void __real_urcu_memb_barrier(void);
int __real_lpc_page_alloc_frame(struct lpc_pool *c, unsigned flags, struct lpc_page **out);
uint32_t __real_lpc_page_pending_drain(struct lpc_pool *c);
uint32_t __real_lpc_page_deferred_take(struct lpc_pool *c, uint32_t *free, uint32_t *pend);
void __wrap_urcu_memb_synchronize_rcu(void);
void __wrap_urcu_memb_barrier(void);
int __wrap_lpc_page_alloc_frame(struct lpc_pool *c, unsigned flags, struct lpc_page **out);
uint32_t __wrap_lpc_page_pending_drain(struct lpc_pool *c);
uint32_t __wrap_lpc_page_deferred_take(struct lpc_pool *c, uint32_t *free, uint32_t *pend);

void __wrap_urcu_memb_synchronize_rcu(void)
{
	struct gps_tally *g = &gps_tally[gps_idx(gps_cur)];
	uint64_t t0 = gps_ns();

	__real_urcu_memb_synchronize_rcu();
	t0 = gps_ns() - t0;
	atomic_fetch_add(&g->ns, t0);
	atomic_fetch_add(&gps_sync_ns, t0);
	if (gps_marked)
		atomic_fetch_add(&gps_marked_waits, 1);
	atomic_fetch_add(&g->sync, 1);
}

void __wrap_urcu_memb_barrier(void)
{
	struct gps_tally *g = &gps_tally[gps_idx(gps_cur)];
	uint64_t t0 = gps_ns();

	__real_urcu_memb_barrier();
	t0 = gps_ns() - t0;
	atomic_fetch_add(&g->ns, t0);
	atomic_fetch_add(&gps_barrier_ns, t0);
	if (gps_marked)
		atomic_fetch_add(&gps_marked_waits, 1);
	atomic_fetch_add(&g->barrier, 1);
}

int __wrap_lpc_page_alloc_frame(struct lpc_pool *c, unsigned flags, struct lpc_page **out)
{
	struct lpc_pool *save = gps_cur;
	int rc;

	gps_cur = c;
	rc = __real_lpc_page_alloc_frame(c, flags, out);
	gps_cur = save;
	return rc;
}

uint32_t __wrap_lpc_page_pending_drain(struct lpc_pool *c)
{
	struct lpc_pool *save = gps_cur;
	uint32_t n;

	gps_cur = c;
	n = __real_lpc_page_pending_drain(c);
	gps_cur = save;
	return n;
}

uint32_t __wrap_lpc_page_deferred_take(struct lpc_pool *c, uint32_t *free, uint32_t *pend)
{
	struct lpc_pool *save = gps_cur;
	uint32_t n;

	gps_cur = c;
	n = __real_lpc_page_deferred_take(c, free, pend);
	gps_cur = save;
	return n;
}

/* A snapshot: each cache's counters and the tally. */
struct gps_snap {
	uint64_t gp[GPS_MAXPOOL], gp_ns[GPS_MAXPOOL];
	uint64_t sync[GPS_MAXPOOL + 1], barrier[GPS_MAXPOOL + 1], ns[GPS_MAXPOOL + 1];
	uint64_t begun;
};

static struct lpc_cache *gps_cache[GPS_MAXPOOL];
static unsigned gps_ncache;

static void gps_register(struct lpc_cache *c)
{
	gps_pool[gps_ncache] = &c->pool;
	gps_cache[gps_ncache++] = c;
}

static void gps_take(struct gps_snap *s)
{
	struct lpc_stats st;

	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < gps_ncache; i++) {
		lpc_stats(gps_cache[i], &st);
		s->gp[i] = st.grace_periods;
		s->gp_ns[i] = st.grace_period_ns;
	}
	for (unsigned i = 0; i <= GPS_MAXPOOL; i++) {
		s->sync[i] = atomic_load(&gps_tally[i].sync);
		s->barrier[i] = atomic_load(&gps_tally[i].barrier);
		s->ns[i] = atomic_load(&gps_tally[i].ns);
	}
	s->begun = atomic_load(&lpc_rcu_gp_begun);
}

/* Compares what each cache counted between a and b with the tally.
 * Return: the number of mismatches (printed). */
static int gps_compare(const char *what, const struct gps_snap *a, const struct gps_snap *b,
		       int verbose)
{
	int bad = 0;
	uint64_t syncs = 0;

	for (unsigned i = 0; i < gps_ncache; i++) {
		uint64_t got = b->gp[i] - a->gp[i], got_ns = b->gp_ns[i] - a->gp_ns[i];
		uint64_t want = (b->sync[i + 1] - a->sync[i + 1]) +
				(b->barrier[i + 1] - a->barrier[i + 1]);
		uint64_t want_ns = b->ns[i + 1] - a->ns[i + 1];

		syncs += b->sync[i + 1] - a->sync[i + 1];
		if (verbose || got != want || got_ns < want_ns)
			printf("    %s: cache %c: grace_periods +%" PRIu64 " (tallied %" PRIu64
			       ": %" PRIu64 " synchronize, %" PRIu64 " barrier), grace_period_ns +%" PRIu64
			       " (tallied %" PRIu64 ")%s\n",
			       what, 'A' + i, got, want, b->sync[i + 1] - a->sync[i + 1],
			       b->barrier[i + 1] - a->barrier[i + 1], got_ns, want_ns,
			       got != want || got_ns < want_ns ? "  <-- MISMATCH" : "");
		bad += got != want;
		bad += got_ns < want_ns;
	}
	if (b->sync[0] != a->sync[0] || b->barrier[0] != a->barrier[0]) {
		printf("    %s: %" PRIu64 " synchronize, %" PRIu64
		       " barrier with no counted entry point on the stack  <-- MISMATCH\n",
		       what, b->sync[0] - a->sync[0], b->barrier[0] - a->barrier[0]);
		bad++;
	}
	if (b->begun - a->begun != syncs + (b->sync[0] - a->sync[0])) {
		printf("    %s: lpc_rcu_gp_begun +%" PRIu64 ", synchronize calls %" PRIu64
		       "  <-- MISMATCH\n",
		       what, b->begun - a->begun, syncs + (b->sync[0] - a->sync[0]));
		bad++;
	}
	return bad;
}
#endif
