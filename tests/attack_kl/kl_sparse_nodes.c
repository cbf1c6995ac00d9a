/* SPDX-License-Identifier: MIT */
/*
 * kl_sparse_nodes.c - what kept leaves hold alive.  radix.h says 64 kept
 * leaves of 4 KiB pages are "about 36 KiB of nodes"; that counts the leaves
 * alone.  Each kept leaf counts as a used slot of its parent (KL "Why no
 * entry is lost"), so N3 frees no inner node above it: in a sparse file
 * (pages far apart, e.g. a database's or a VM image's scattered reads, then
 * lpc_invalidate of each) every kept leaf keeps its own chain of inner
 * nodes.  Before KL1 the same tree, emptied, held no node at all.
 * Page indices below 2^52 (4 KiB pages of a 2^64-byte offset space).
 * Exit 1 while an empty tree holds more than the documented 36 KiB.
 */
#include <stdint.h>
#include <stdio.h>
#include <urcu/urcu-memb.h>

#include "core/rcu.h"
#include "index/radix.h"

#define E(i) ((void *)(uintptr_t)(((i) + 1) << 4))

int main(void)
{
	struct lpc_radix_root tree;
	struct lpc_radix_node *leaf;
	uint64_t nodes, bytes, height;

	urcu_memb_register_thread();
	lpc_radix_init(&tree);
	/* 64 indices whose leaves share only the root: i << 46, i < 64. */
	for (uint64_t i = 0; i < LPC_RADIX_KEEP; i++)
		if (lpc_radix_insert(&tree, i << 46, E(i))) {
			printf("insert failed\n");
			return 2;
		}
	printf("full: %llu entries, %llu nodes\n", (unsigned long long)lpc_radix_count(&tree),
	       (unsigned long long)atomic_load(&tree.nodes));
	/* Each page dropped by the fast delete (lpc_invalidate's path). */
	for (uint64_t i = 0; i < LPC_RADIX_KEEP; i++) {
		lpc_rcu_read_lock();
		leaf = lpc_radix_leaf_lock(&tree, i << 46);
		if (!leaf || !lpc_radix_leaf_delete(&tree, leaf, i << 46)) {
			printf("fast delete %llu refused\n", (unsigned long long)i);
			return 2;
		}
		lpc_radix_leaf_unlock(leaf);
		lpc_rcu_read_unlock();
	}
	nodes = atomic_load(&tree.nodes);
	bytes = nodes * sizeof(struct lpc_radix_node);
	height = atomic_load(&tree.rnode)->shift / LPC_RADIX_SHIFT + 1;
	printf("empty: %llu entries, kept %u, %llu nodes of %zu bytes = %llu KiB "
	       "(radix.h: about 36 KiB)\n",
	       (unsigned long long)lpc_radix_count(&tree), atomic_load(&tree.kept),
	       (unsigned long long)nodes, sizeof(struct lpc_radix_node),
	       (unsigned long long)(bytes >> 10));
	lpc_radix_destroy(&tree);
	urcu_memb_barrier();
#ifdef KL_OLD_DOC
	if (bytes > 36 * 1024) {
		printf("DEFECT (memory bound/doc): an empty tree holds %llu KiB, per open file\n",
		       (unsigned long long)(bytes >> 10));
		return 1;
	}
#else
	/* radix.h since the fix: each kept leaf keeps at most the tree's
	 * height less one inner nodes, so LPC_RADIX_KEEP x height nodes. */
	if (nodes > (uint64_t)LPC_RADIX_KEEP * height) {
		printf("DEFECT: %llu nodes kept, over the documented %u x height %llu\n",
		       (unsigned long long)nodes, LPC_RADIX_KEEP, (unsigned long long)height);
		return 1;
	}
	printf("within radix.h's bound: %llu nodes <= %u x height %llu\n",
	       (unsigned long long)nodes, LPC_RADIX_KEEP, (unsigned long long)height);
#endif
	return 0;
}
