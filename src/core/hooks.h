/* SPDX-License-Identifier: MIT */
/*
 * hooks.h - test-only hooks: named points inside race windows where a unit
 * test can park a thread, so that the interleaving it tests happens every
 * run rather than once in a while.
 *
 * Compiled in only with LPC_TEST_HOOKS, which only the lpc_hooks library
 * defines (src/CMakeLists.txt: the same sources, linked by the unit tests
 * that list it in tests/unit/CMakeLists.txt).  liblpc.so and liblpc.a have
 * no hook: lpc_hook() is then ((void)0) and its operands are not evaluated.
 *
 * Where a point matches a protocol step it is named after the step's label;
 * the debug build's yield points (core/debug.h, lpc_yield_point and
 * lpc_yield_set_hook) can take these over once they cover every window here.
 */
#ifndef LPC_CORE_HOOKS_H
#define LPC_CORE_HOOKS_H

enum lpc_hook_point {
	LPC_HOOK_R2,           /* lookup: inside R1, before the walk (obj: file) */
	LPC_HOOK_R4,           /* lookup: reference taken, slot not re-checked (obj: page) */
	LPC_HOOK_RELEASE_LAST, /* a put brought ref to 0; frame not yet on pending (obj: page) */
	LPC_HOOK_SUBMIT,       /* a pending batch counted in flight, not yet given to call_rcu (obj: cache) */
	LPC_HOOK_T2,           /* a reclaimer about to wait for its grace period (obj: cache) */
	LPC_HOOK_FILE_FREE,    /* struct lpc_file about to be freed (obj: file) */
	LPC_HOOK_NR,
};

#ifdef LPC_TEST_HOOKS
#include <stdatomic.h>

typedef void lpc_hook_fn(enum lpc_hook_point point, const void *obj);
/* Set by a test; NULL (the default): no hook. */
extern lpc_hook_fn *_Atomic lpc_test_hook;

static inline void lpc_hook(enum lpc_hook_point point, const void *obj)
{
	lpc_hook_fn *fn = atomic_load_explicit(&lpc_test_hook, memory_order_acquire);

	if (fn)
		fn(point, obj);
}
#else
#define lpc_hook(point, obj) ((void)0)
#endif

#endif /* LPC_CORE_HOOKS_H */
