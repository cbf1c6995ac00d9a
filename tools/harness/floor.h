/* SPDX-License-Identifier: MIT */
/*
 * floor.h - the floor of the lookup benchmark: what a hit costs with a
 * reference count and no index at all.
 *
 * One 64-byte descriptor per page, in one array mapped as lpc maps its
 * descriptors (anonymous mmap, transparent huge pages asked for), reached by
 * indexing the array with the page number.  A hit takes a reference with the
 * same increment-unless-zero CAS loop as a speculative get and drops it with a
 * release decrement.  Whatever lpc spends above this is its index walk, its
 * slot re-check, its flag tests and its calls: the ratio to the floor is the
 * price of the index.
 *
 * This is lpcbench's own code, inlined into the timed loop, on purpose: the
 * floor must not move when the library's layout changes.  It follows lpc's
 * reference-count algorithm (see floor_get), and only that.
 */
#ifndef LPCBENCH_FLOOR_H
#define LPCBENCH_FLOOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct floor_desc {
	_Alignas(BENCH_CACHELINE) _Atomic uint32_t ref; /* 1: held by the "index" */
	uint32_t flags;
	uint64_t index;
	void *file;
};
_Static_assert(sizeof(struct floor_desc) == BENCH_CACHELINE,
	       "one descriptor per cache line, as lpc's");

struct floor {
	struct floor_desc *desc;
	size_t bytes; /* of the mapping */
};

/* Maps and initialises one descriptor per page.  Dies on failure. */
void floor_create(struct floor *fl, uint64_t nr_pages);
void floor_destroy(struct floor *fl);

/*
 * Increment unless zero, exactly as lpc's speculative get does it
 * (lpc_page_try_get): a CAS that first guesses the count of a page
 * only the index holds (1), so it fetches the line for writing at once, and
 * retries with the count a wrong guess returns.  The floor must use the same
 * algorithm as lpc, so that the ratio prices the index and its bookkeeping,
 * not a different way of counting.  acq_rel on success: acquire so that what
 * the caller reads of the page comes after its reference is visible;
 * release costs nothing more on x86.
 * Return: true with a reference; false if the count was 0.
 */
static inline bool floor_get(struct floor_desc *d)
{
	uint32_t ref = 1;

	while (!atomic_compare_exchange_weak_explicit(&d->ref, &ref, ref + 1,
						      memory_order_acq_rel,
						      memory_order_relaxed)) {
		if (unlikely(ref == 0))
			return false;
	}
	return true;
}

/* Release: the holder's reads of the page happen before its reference goes. */
static inline void floor_put(struct floor_desc *d)
{
	atomic_fetch_sub_explicit(&d->ref, 1, memory_order_release);
}

#endif /* LPCBENCH_FLOOR_H */
