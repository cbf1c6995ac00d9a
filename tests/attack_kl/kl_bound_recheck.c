/* SPDX-License-Identifier: MIT */
/*
 * kl_bound_recheck.c - attack on KL1: lpc_radix_leaf_delete_ok is documented
 * (radix.h) to stay true "while the caller holds the leaf lock", and
 * filemap/remove.c invalidate_one_fast relies on it: it checks delete_ok,
 * FREEZES the page (A), then calls lpc_radix_leaf_delete (B) and ignores its
 * result.  But lpc_radix_leaf_delete re-reads root->kept: if another thread
 * kept a leaf of the same tree in between (its own leaf lock, a different
 * leaf), kept reached LPC_RADIX_KEEP and the delete of a leaf's last entry
 * is refused.  The frozen page then stays in its slot while the caller frees
 * it.  Deterministic: the "other thread" runs while main holds its leaf lock.
 * Exit 1 while the defect stands.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <urcu/urcu-memb.h>

#include "core/rcu.h"
#include "index/radix.h"

static struct lpc_radix_root tree;
#define E(i) ((void *)(uintptr_t)(((i) + 1) << 4))

static void *other(void *arg)
{
	uint64_t idx = *(uint64_t *)arg;
	struct lpc_radix_node *leaf;
	bool ok;

	urcu_memb_register_thread();
	lpc_rcu_read_lock();
	leaf = lpc_radix_leaf_lock(&tree, idx);
	ok = leaf && lpc_radix_leaf_delete(&tree, leaf, idx);
	if (leaf)
		lpc_radix_leaf_unlock(leaf);
	lpc_rcu_read_unlock();
	urcu_memb_unregister_thread();
	return (void *)(uintptr_t)ok;
}

int main(void)
{
	const unsigned K = LPC_RADIX_KEEP;
	struct lpc_radix_node *leaf;
	pthread_t th;
	void *r;
	uint64_t victim = (uint64_t)(K - 1) << LPC_RADIX_SHIFT;
	uint64_t last = (uint64_t)K << LPC_RADIX_SHIFT;
	bool ok, deleted;

	urcu_memb_register_thread();
	lpc_radix_init(&tree);
	/* K + 1 leaves, one entry each. */
	for (uint64_t i = 0; i <= K; i++)
		if (lpc_radix_insert(&tree, i << LPC_RADIX_SHIFT, E(i << LPC_RADIX_SHIFT))) {
			printf("setup insert failed\n");
			return 2;
		}
	/* Keep K - 1 of them: kept = K - 1. */
	for (uint64_t i = 0; i + 1 < K; i++) {
		uint64_t idx = i << LPC_RADIX_SHIFT;

		lpc_rcu_read_lock();
		leaf = lpc_radix_leaf_lock(&tree, idx);
		if (!leaf || !lpc_radix_leaf_delete(&tree, leaf, idx)) {
			printf("setup keep %llu refused\n", (unsigned long long)i);
			return 2;
		}
		lpc_radix_leaf_unlock(leaf);
		lpc_rcu_read_unlock();
	}
	printf("kept %u (bound %u)\n", atomic_load(&tree.kept), K);

	/* invalidate_one_fast on the victim leaf: check, (freeze), ... */
	lpc_rcu_read_lock();
	leaf = lpc_radix_leaf_lock(&tree, victim);
	ok = lpc_radix_leaf_delete_ok(&tree, leaf, victim);
	printf("delete_ok(victim) under its lock: %d\n", ok);
	/* ... meanwhile another invalidate keeps another leaf of this file. */
	pthread_create(&th, NULL, other, &last);
	pthread_join(th, &r);
	printf("other thread kept its leaf: %d, kept now %u\n", (int)(uintptr_t)r,
	       atomic_load(&tree.kept));
	/* ... B: the same hold.  After the fix (radix.h) the decided pair is
	 * delete_ok then lpc_radix_leaf_take, which does not ask again; before
	 * it, invalidate_one_fast called lpc_radix_leaf_delete here. */
#ifdef KL_OLD_PAIR
	deleted = lpc_radix_leaf_delete(&tree, leaf, victim);
#else
	if (ok)
		lpc_radix_leaf_take(&tree, leaf, victim);
	deleted = ok && !lpc_radix_leaf_entry(leaf, victim);
#endif
	printf("leaf_delete(victim) in the same hold: %d; slot now %p\n", deleted,
	       lpc_radix_leaf_entry(leaf, victim));
	lpc_radix_leaf_unlock(leaf);
	lpc_rcu_read_unlock();
	if (ok && !deleted) {
		printf("DEFECT: delete_ok said yes, leaf_delete refused in the same hold: "
		       "invalidate_one_fast frees a frozen page left in the tree\n");
		return 1;
	}
	printf("ok\n");
	return 0;
}
