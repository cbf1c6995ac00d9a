/* SPDX-License-Identifier: MIT */
/*
 * att_busy_restart - lpc_cache_destroy returning -EBUSY (a page reference
 * held) stops the flusher and lets it start again (F0).
 *  1. held: dirty_expire_ms = 100, the flusher running, destroy -> -EBUSY:
 *     dirty pages written after that are still written back by age.
 *  2. LPC_DIRTY_EXPIRE_NEVER with one dirty page (far below the background
 *     threshold) and no thread: destroy -> -EBUSY starts lpc-flusher,
 *     because F0 starts it whenever a page is dirty (it does not look at
 *     wb->timed); J.5 and LPC_DIRTY_EXPIRE_NEVER say such a cache "starts
 *     no thread" (the SQLite extension's pay-for-use).
 * Exit 1 while case 2 is open.
 */
#include "fl.h"

int main(void)
{
	char p1[300], p2[300];
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page *pg;
	uint64_t good;
	int th0, th1, rc;

	att_make_file("a", 1 << 20, 1, p1, sizeof(p1));
	att_make_file("b", 1 << 20, 1, p2, sizeof(p2));

	c = fl_cache(16u << 20, 100, 0, 0);
	if (lpc_file_open(c, p1, O_RDWR, 0, &f) || lpc_page_get(f, 100, 0, &pg))
		return 1;
	fl_write_page(f, 0, 5);
	rc = lpc_cache_destroy(c);
	fl_write_page(f, 1, 5);
	fl_write_page(f, 2, 5); /* already dirty file: no need of its own */
	usleep(1000000);
	good = fl_kernel_pages(p1, 3, 5);
	printf("1. timed, destroy -> %d: %" PRIu64 "/3 pages written by age after it, %d lpc-flusher\n",
	       rc, good, fl_flushers());
	ATT_CHECK(rc == -EBUSY && good == 3, "timed: pages not written by age after -EBUSY");
	lpc_page_put(pg);
	lpc_file_close(f);
	lpc_cache_destroy(c);

	c = fl_cache(16u << 20, LPC_DIRTY_EXPIRE_NEVER, 0, 0);
	if (lpc_file_open(c, p2, O_RDWR, 0, &f) || lpc_page_get(f, 100, 0, &pg))
		return 1;
	fl_write_page(f, 0, 6);
	th0 = fl_flushers();
	rc = lpc_cache_destroy(c);
	th1 = fl_flushers();
	printf("2. NEVER, 1 dirty page of 4096 frames: lpc-flusher %d before, destroy -> %d, %d after\n",
	       th0, rc, th1);
	ATT_CHECK(th0 == 0 && th1 == 0, "a thread started that nothing needs (F0 ignores wb->timed)");
	lpc_page_put(pg);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
