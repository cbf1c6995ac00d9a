/* SPDX-License-Identifier: MIT */
/*
 * att_bg_stuck - a failed pthread_create at the background kick leaves
 * wb->bg_on true for good: lpc_wb_kick_bg (writeback.h) sets it before
 * lpc_wb_kick -> lpc_wb_need fails, and only the flusher clears it.  Every
 * later writer above dirty_background_pct then skips its kick, so no
 * background writeback happens although pthread_create works again: the
 * dirty pages stay in the process up to the hard limit.  The SQLite
 * extension's configuration (LPC_DIRTY_EXPIRE_NEVER) has no tick to
 * rescue it.  Control: the same writes with pthread_create working are all
 * written back (J.5: "or all while dirty pages pass this %").
 * Exit 1 while the defect is open.
 */
#include "fl.h"

#define PAGES 310 /* 1024 frames: background 102, hard limit 512 */

static uint64_t run(bool fail, const char *path, int *threads, uint64_t *dirty)
{
	struct lpc_cache *c = fl_cache(4u << 20, LPC_DIRTY_EXPIRE_NEVER, 10, 50);
	struct lpc_stats s;
	struct lpc_file *f;
	uint64_t good;

	if (lpc_file_open(c, path, O_RDWR, 0, &f)) {
		printf("open failed\n");
		exit(1);
	}
	fl_fail_create = fail; /* a moment at the thread limit, */
	for (uint64_t i = 0; i < 110; i++)  /* across the background threshold */
		fl_write_page(f, i, 3);
	fl_fail_create = 0;
	for (uint64_t i = 110; i < PAGES; i++) {
		fl_write_page(f, i, 3);
		if (i % 20 == 0)
			usleep(50000);
	}
	usleep(1500000);
	good = fl_kernel_pages(path, PAGES, 3);
	*threads = fl_flushers();
	lpc_stats(c, &s);
	*dirty = s.dirty_pages;
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return good;
}

int main(void)
{
	char p1[300], p2[300];
	int th1, th2;
	uint64_t g1, g2, d1, d2;

	att_make_file("a", 2 << 20, 1, p1, sizeof(p1));
	att_make_file("b", 2 << 20, 1, p2, sizeof(p2));
	g2 = run(false, p2, &th2, &d2);
	g1 = run(true, p1, &th1, &d1);
	printf("control (create works): %" PRIu64 "/%d pages in the kernel's file, dirty_pages %" PRIu64
	       ", %d lpc-flusher\n", g2, PAGES, d2, th2);
	printf("failed create at the background kick (%d failed): %" PRIu64
	       "/%d pages in the kernel's file, dirty_pages %" PRIu64 ", %d lpc-flusher\n",
	       (int)fl_failed, g1, PAGES, d1, th1);
	ATT_CHECK(d2 <= 102, "control: background writeback left %" PRIu64 " dirty", d2);
	ATT_CHECK(d1 <= 102, "%" PRIu64 " pages dirty (background threshold 102) 1.5 s after the writes: bg_on stuck, no kick", d1);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
