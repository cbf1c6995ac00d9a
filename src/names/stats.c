/* SPDX-License-Identifier: MIT */
/*
 * stats.c - the name cache's counters: per thread and namespace, summed by
 * lpc_ns_stats.  A thread's block is found through a one-entry per-thread
 * cache keyed by the namespace's id (never reused), made on its first
 * count and linked into ns->tstats under ns->stats_lock; only its thread
 * writes it (relaxed load and store, no read-modify-write), readers sum
 * with relaxed loads.  Counted by walk.c (walks, their fallbacks) and
 * dcache.c (evictions): a leaf that calls no other file of names/.
 */
#include <stdlib.h>
#include <string.h>

#include "names/names.h"

static __thread uint64_t ns_self_id;
static __thread struct ns_tstats *ns_self_stats;

static struct ns_tstats *tstats_slow(struct lpc_ns *ns)
{
	struct ns_tstats *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	pthread_mutex_lock(&ns->stats_lock);
	t->next = ns->tstats;
	ns->tstats = t;
	pthread_mutex_unlock(&ns->stats_lock);
	ns_self_id = ns->id;
	ns_self_stats = t;
	return t;
}

void ns_count(struct lpc_ns *ns, enum ns_counter i)
{
	struct ns_tstats *t = ns_self_id == ns->id ? ns_self_stats : tstats_slow(ns);

	if (unlikely(!t)) {
		/* No memory for this thread's block: count in the shared sums. */
		pthread_mutex_lock(&ns->stats_lock);
		ns->exited[i]++;
		pthread_mutex_unlock(&ns->stats_lock);
		return;
	}
	/* Only this thread writes: a relaxed load and store, no RMW. */
	atomic_store_explicit(&t->c[i], atomic_load_explicit(&t->c[i], memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

LPC_EXPORT void lpc_ns_stats(struct lpc_ns *ns, struct lpc_ns_stats *out)
{
	uint64_t c[NS_NR_COUNTERS];

	if (!ns || !out)
		return;
	pthread_mutex_lock(&ns->stats_lock);
	memcpy(c, ns->exited, sizeof(c));
	for (struct ns_tstats *t = ns->tstats; t; t = t->next)
		for (int i = 0; i < NS_NR_COUNTERS; i++)
			c[i] += atomic_load_explicit(&t->c[i], memory_order_relaxed);
	pthread_mutex_unlock(&ns->stats_lock);
	memset(out, 0, sizeof(*out));
	out->walks = c[NS_C_WALKS];
	out->walk_rcu = c[NS_C_WALK_RCU];
	out->walk_ref = c[NS_C_WALK_REF];
	out->fallback_miss = c[NS_C_FB_MISS];
	out->fallback_seq = c[NS_C_FB_SEQ];
	out->fallback_reval = c[NS_C_FB_REVAL];
	out->evictions = c[NS_C_EVICTIONS];
	pthread_mutex_lock(&ns->lock);
	out->dentries = ns->ndentries;
	pthread_mutex_unlock(&ns->lock);
}
