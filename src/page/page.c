/* SPDX-License-Identifier: MIT */
/*
 * page.c - the public calls on a page: put and data (lpc_page_alloc takes
 * a cache: cache/cache.c); a read-ahead page's first use (lpc_page_ra_used).
 *
 * lpc_page_put is where the page-free fast path lives: a private page (never
 * published in an index since it was allocated) has one user, so the put that
 * frees it needs no atomic read-modify-write: plain stores put it on the
 * thread's free list.  A published page is released with an atomic decrement,
 * and the last reference frees it only after an RCU grace period.
 *
 * lpc_page_describe: the LPC_DEBUG build's words for a page in a broken
 * rule's report (core/debug.h's describer, set by lpc_pool_init).
 */
#include <stdio.h>

#include <lpc/lpc.h>

#include "page/pool.h"

LPC_EXPORT void lpc_page_put(struct lpc_page *p)
{
	if (unlikely(!p))
		return;
	lpc_debug_check(atomic_load_explicit(&p->ref, memory_order_relaxed) != 0, "PUT-FREE-PAGE",
			p, "lpc_page_put on a page with ref 0");
	/* Relaxed: PUBLISHED was set by this page's owner before anyone else
	 * could see it, and is cleared only when it is freed. */
	if (unlikely(!(atomic_load_explicit(&p->flags, memory_order_relaxed) &
		       LPC_PG_PUBLISHED))) {
		lpc_page_free_private(p);
		return;
	}
	lpc_page_release(p);
}

/* A read-ahead page's first use: page.h, lpc_page_mark_referenced; it
 * becomes ONCE unless it refaulted. */
void lpc_page_ra_used(struct lpc_page *p)
{
	struct lpc_tcache *t;

	uint32_t old = atomic_fetch_and_explicit(&p->flags, ~LPC_PG_RA, memory_order_relaxed);

	if (!(old & LPC_PG_RA))
		return;
	/* Only the thread that cleared RA: a second RMW, once per page read
	 * ahead.  A drop-behind that loaded the flags between the two skips
	 * the page (neither RA nor ONCE yet: not taken), a policy miss.  Not
	 * a page that refaulted: it was used before. */
	if (!(old & LPC_PG_REFAULTED))
		atomic_fetch_or_explicit(&p->flags, LPC_PG_ONCE, memory_order_relaxed);
	/* The thread reads through this cache: its block is current. */
	t = lpc_self.cur_id == p->pool->owner.id ? lpc_self.cur : NULL;
	if (t)
		lpc_count(t, LPC_C_RA_USED);
}

/* A page's first use after a demand run read it for a later page of its
 * caller's range: page.h, lpc_page_mark_referenced. */
void lpc_page_fresh_used(struct lpc_page *p)
{
	atomic_fetch_and_explicit(&p->flags, ~LPC_PG_FRESH, memory_order_relaxed);
}

LPC_EXPORT void *lpc_page_data(const struct lpc_page *p)
{
	return p ? lpc_page_frame(p) : NULL;
}

#if LPC_DEBUG
void lpc_page_describe(const void *obj, char *buf, size_t len)
{
	const struct lpc_page *p = obj;

	snprintf(buf, len, "page id %u ref %u flags 0x%x file %p index %llu", p->id,
		 atomic_load_explicit(&p->ref, memory_order_relaxed),
		 atomic_load_explicit(&p->flags, memory_order_relaxed),
		 (void *)atomic_load_explicit(&p->file, memory_order_relaxed),
		 (unsigned long long)atomic_load_explicit(&p->index, memory_order_relaxed));
}
#endif
