/* SPDX-License-Identifier: MIT */
/*
 * mpriv_reuse_wrap.c - can model_api's OP_PRIVATE check fail?  Linked into
 * branch mpriv's model_api with -Wl,--wrap=lpc_page_alloc (see
 * mpriv_mutant.sh): every 3rd private page is put back to the cache right
 * after it is handed out, as a broken lpc_page_alloc that let its frame be
 * reused while held would.  model_api must then report "private page ...
 * the frame was reused while held" (exit 1).
 */
#include <lpc/lpc.h>

int __real_lpc_page_alloc(struct lpc_cache *c, struct lpc_page **out);
int __wrap_lpc_page_alloc(struct lpc_cache *c, struct lpc_page **out);

int __wrap_lpc_page_alloc(struct lpc_cache *c, struct lpc_page **out)
{
	static unsigned calls;
	int rc = __real_lpc_page_alloc(c, out);

	/* the frame goes back while the caller holds it: the next miss or
	 * alloc may take it and write over the caller's bytes */
	if (rc == 0 && ++calls % 3 == 0)
		lpc_page_put(*out);
	return rc;
}
