/* SPDX-License-Identifier: MIT */
/*
 * optimistic.c - lpc_page_read: the optimistic read (optimistic.h) for
 * callers that read a few fields of a page (a B-tree's inner nodes) rather
 * than copy it.  The caller's function runs on the frame itself, inside the
 * read section, and may see a torn view; lpc_page_read returns 0 only for a
 * run whose view it validated.
 *
 * Steps: O1-O6 once (optimistic.h); if that fails, the referenced path:
 *   F1 get the page with a reference (lpc_filemap_get_page: R1-R5, or the
 *      miss path M1-M6 when it is not cached)
 *   F2 s1 = seq (acquire); if even, run fn, acquire fence, and accept if seq
 *      is still s1: the reference keeps the identity, seq the data
 *   F3 otherwise (a writer was inside), take the page lock, which excludes
 *      every writer of the data, run fn once more, unlock
 *   F4 put the page
 * So fn runs at most three times and lpc_page_read never livelocks.
 */
#include <errno.h>

#include "filemap/optimistic.h"

/* lpc_page_read for a thread's first call on the cache, LOCKED mode, and
 * the fallback (F1-F4).  Out of line: the hit path saves fewer registers.
 * `tried`: the optimistic try already ran and failed. */
static __attribute__((noinline)) int page_read_slow(struct lpc_file *f, uint64_t index,
						    lpc_page_read_fn *fn, void *arg, bool tried)
{
	struct lpc_tcache *t = lpc_file_tcache(f); /* registers the thread */
	struct lpc_page *p;
	int rc;

	if (unlikely(!t))
		return -ENOMEM;
	if (!tried && !f->locked_lookup) {
		bool ok;

		lpc_rcu_read_lock();						/* O1 */
		ok = lpc_filemap_read_optimistic(f, index, fn, arg);
		lpc_rcu_read_unlock();						/* O6 */
		if (ok) {
			lpc_count(t, LPC_C_OPT_HITS);
			return 0;
		}
		tried = true;
	}
	if (tried)
		lpc_count(t, LPC_C_OPT_FALLBACKS);
	rc = lpc_filemap_get_page(f, index, t, 0, &p);				/* F1 */
	if (rc)
		return rc;
	lpc_filemap_read_held(p, fn, arg);					/* F2, F3 */
	lpc_page_put(p);							/* F4 */
	return 0;
}

LPC_EXPORT int lpc_page_read(struct lpc_file *f, uint64_t index, unsigned flags,
			     lpc_page_read_fn *fn, void *arg)
{
	/* Three branches rather than one test of three conditions: gcc
	 * computes the latter without branches, 11 instructions on every
	 * call instead of 6. */
	if (unlikely(!f))
		return -EINVAL;
	if (unlikely(!fn))
		return -EINVAL;
	if (unlikely(flags))
		return -EINVAL;
	lpc_debug_file_check(f);
	/* The hit path, for a thread that has its block for f's cache (so it
	 * is registered: O1 counts) in lockless mode. */
	if (unlikely(lpc_self.cur_id != f->hit_id))
		return page_read_slow(f, index, fn, arg, false);
	lpc_rcu_read_lock();							/* O1 */
	if (unlikely(!lpc_filemap_read_optimistic(f, index, fn, arg))) {
		lpc_rcu_read_unlock();						/* O6 */
		return page_read_slow(f, index, fn, arg, true);
	}
	/* Counted inside the section: nothing is left to do after it but
	 * return.  lpc_self.cur is still f's block: only this thread changes
	 * it. */
	lpc_count(lpc_self.cur, LPC_C_OPT_HITS);
	lpc_rcu_read_unlock();							/* O6 */
	return 0;
}
