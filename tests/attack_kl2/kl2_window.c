/* SPDX-License-Identifier: MIT */
/*
 * kl2_window.c - attack on the window between lpc_radix_leaf_delete_ok and
 * lpc_radix_leaf_take (index/radix.c KL1, filemap/remove.c
 * invalidate_one_fast).  Thread A locks the leaf of index V (its only
 * entry), asks delete_ok (yes), and holds the leaf lock for 200 ms before
 * take.  Meanwhile thread B, under the index lock, sets tag 0 on V
 * (lpc_radix_tag_set), and thread C fast-inserts index V+1 into the same
 * leaf (lpc_radix_insert_fast).  If either could act inside the window,
 * take would act on a stale structural answer: a tag bit left on an empty
 * slot (and its parents), or a leaf counted as kept that holds an entry.
 * Checks: B and C finish only after A unlocks; no tag anywhere; kept == 0
 * (kept once by A's take, refilled by C: KL2); V+1 present; destroy's
 * RADIX-KEPT rule holds.  Exit 0: held; 1: defect.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "index/radix.h"
#include <urcu/urcu-memb.h>

#include "core/rcu.h"

#define V 5u

static struct lpc_radix_root root;
static pthread_mutex_t ilock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int a_in_window, a_done, b_done_in_window, c_done_in_window;
static int c_rc;
static long ent[4];

static void *a_main(void *arg)
{
	struct lpc_radix_node *leaf;
	bool ok;

	(void)arg;
	urcu_memb_register_thread();
	lpc_rcu_read_lock();
	leaf = lpc_radix_leaf_lock(&root, V);
	if (!leaf) {
		printf("A: no live leaf\n");
		exit(1);
	}
	ok = lpc_radix_leaf_delete_ok(&root, leaf, V);
	printf("A: delete_ok %d\n", ok);
	if (!ok)
		exit(1);
	atomic_store(&a_in_window, 1);
	usleep(200000);
	atomic_store(&a_in_window, 0);
	lpc_radix_leaf_take(&root, leaf, V);
	lpc_radix_leaf_unlock(leaf);
	lpc_rcu_read_unlock();
	atomic_store(&a_done, 1);
	urcu_memb_unregister_thread();
	return NULL;
}

static void *b_main(void *arg)
{
	(void)arg;
	urcu_memb_register_thread();
	pthread_mutex_lock(&ilock);
	lpc_radix_tag_set(&root, V, 0);
	pthread_mutex_unlock(&ilock);
	if (atomic_load(&a_in_window))
		atomic_store(&b_done_in_window, 1);
	urcu_memb_unregister_thread();
	return NULL;
}

static void *c_main(void *arg)
{
	(void)arg;
	urcu_memb_register_thread();
	lpc_rcu_read_lock();
	c_rc = lpc_radix_insert_fast(&root, V + 1, &ent[1]);
	lpc_rcu_read_unlock();
	if (atomic_load(&a_in_window))
		atomic_store(&c_done_in_window, 1);
	urcu_memb_unregister_thread();
	return NULL;
}

int main(void)
{
	pthread_t a, b, c;
	int fail = 0;

	urcu_memb_register_thread();
	lpc_radix_init(&root);
	/* A second leaf so the tree has an inner root (parents to tag). */
	if (lpc_radix_insert(&root, V, &ent[0]) || lpc_radix_insert(&root, 1000, &ent[2]))
		return 1;
	pthread_create(&a, NULL, a_main, NULL);
	while (!atomic_load(&a_in_window))
		usleep(1000);
	pthread_create(&b, NULL, b_main, NULL);
	pthread_create(&c, NULL, c_main, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_join(c, NULL);

	lpc_rcu_read_lock();
	void *ev = lpc_radix_lookup(&root, V, NULL);
	void *ev1 = lpc_radix_lookup(&root, V + 1, NULL);
	lpc_rcu_read_unlock();
	bool tv = lpc_radix_tag_get(&root, V, 0), tany = lpc_radix_tagged(&root, 0);
	unsigned kept = atomic_load(&root.kept);

	printf("B done in A's window %d, C done in A's window %d, C rc %d\n",
	       atomic_load(&b_done_in_window), atomic_load(&c_done_in_window), c_rc);
	printf("slot V %p, slot V+1 %p (want %p), tag_get(V) %d, tagged(0) %d, kept %u, count %llu\n",
	       ev, ev1, (void *)&ent[1], tv, tany, kept,
	       (unsigned long long)lpc_radix_count(&root));
	if (atomic_load(&b_done_in_window) || atomic_load(&c_done_in_window)) {
		printf("DEFECT: a structural writer acted inside the decision window\n");
		fail = 1;
	}
	if (ev || tv || tany) {
		printf("DEFECT: V left with an entry or a tag on its empty slot\n");
		fail = 1;
	}
	if (c_rc || ev1 != &ent[1] || kept != 0 || lpc_radix_count(&root) != 2) {
		printf("DEFECT: kept/count wrong after take + refill\n");
		fail = 1;
	}
	pthread_mutex_lock(&ilock);
	lpc_radix_destroy(&root); /* RADIX-KEPT checked here */
	pthread_mutex_unlock(&ilock);
	printf("%s\n", fail ? "FAIL" : "held");
	urcu_memb_unregister_thread();
	return fail;
}
