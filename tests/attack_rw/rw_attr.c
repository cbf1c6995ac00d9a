/* SPDX-License-Identifier: MIT */
/*
 * rw_attr.c - what else the worker inherits from lpc_cache_create's caller:
 * CPU affinity (and, not tried here for want of privileges, a real-time
 * policy).  The caller pins itself to one CPU, creates the cache and unpins:
 * the process's call_rcu worker stays pinned to that CPU for the process's
 * life.  Not a claim of the change; exit 1 marks a surprise to document
 * (lpc(7) "Threads and RCU" names only the name and the signal mask).
 * Skips (77) on a one-CPU machine.
 */
#include <sched.h>

#include "rw.h"

int main(int argc, char **argv)
{
	cpu_set_t one, all, w_set;
	struct rw_tids before, after;
	struct lpc_cache *c;
	unsigned count;
	pid_t w;

	tst_init(argc, argv, 60);
	REQUIRE(sched_getaffinity(0, sizeof(all), &all) == 0, "getaffinity");
	if (CPU_COUNT(&all) < 2) {
		printf("skip: one CPU\n");
		return 77;
	}
	CPU_ZERO(&one);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &all)) {
			CPU_SET(i, &one);
			break;
		}
	REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0, "pin");
	before = rw_tids();
	c = rw_cache();
	after = rw_tids();
	rw_new_tid(&before, &after, &count);
	CHECK_EQ(count, 0u, "create made no thread (ad5f9fa)");
	CHECK(rw_evict_run(c, "rw-attr") == 1, "lpc-reclaim ran (started by this pinned thread)");
	REQUIRE(sched_setaffinity(0, sizeof(all), &all) == 0, "unpin");
	w = rw_worker_since(&before, &count);
	REQUIRE(count == 1 && w, "the worker exists after the eviction (%u)", count);
	REQUIRE(sched_getaffinity(w, sizeof(w_set), &w_set) == 0, "worker affinity");
	printf("# worker %d: %d CPU(s) allowed of %d\n", (int)w, CPU_COUNT(&w_set), CPU_COUNT(&all));
	/* lpc(7) since ad5f9fa: the worker inherits its creator's CPU affinity */
	CHECK(CPU_EQUAL(&w_set, &one), "the worker inherited its creator's CPU (lpc(7))");
	tst_cache_destroy(c);
	return tst_finish();
}
