/* SPDX-License-Identifier: MIT */
/*
 * att_age_retry - a failed pthread_create at a file's first dirty page
 * (dirty_inc, flusher.c F1/F2) is never retried for that file: its later
 * dirty pages do not "need" the flusher (only nrdirty 0 -> 1 does), so with
 * writeback by age on (dirty_expire_ms = 100) the file's pages stay dirty
 * in the process for as long as it stays open, although J.5 says they are
 * written after dirty_expire_ms and F1 says "the next need tries again".
 * Control: the same writes with pthread_create working are in the kernel's
 * file within the same wait.  Exit 1 while the defect is open.
 */
#include "fl.h"

static uint64_t run(bool fail, const char *path, int *threads)
{
	struct lpc_cache *c = fl_cache(16u << 20, 100, 0, 0);
	struct lpc_file *f;
	uint64_t good;

	if (lpc_file_open(c, path, O_RDWR, 0, &f)) {
		printf("open failed\n");
		exit(1);
	}
	fl_fail_create = fail; /* a moment at the thread limit */
	fl_write_page(f, 0, 2);
	fl_fail_create = 0;
	/* More writes to the same file, for 2 s: pthread_create works again. */
	for (int s = 0; s < 20; s++) {
		fl_write_page(f, 1 + (uint64_t)s, 2);
		usleep(100000);
	}
	usleep(1000000); /* 10 x dirty_expire_ms after the last write */
	good = fl_kernel_pages(path, 21, 2);
	*threads = fl_flushers();
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return good;
}

int main(void)
{
	char p1[300], p2[300];
	int th1, th2;
	uint64_t g1, g2;

	att_make_file("a", 1 << 20, 1, p1, sizeof(p1));
	att_make_file("b", 1 << 20, 1, p2, sizeof(p2));
	g2 = run(false, p2, &th2);
	g1 = run(true, p1, &th1);
	printf("control (create works): %" PRIu64 "/21 pages in the kernel's file 1 s after the last write, %d lpc-flusher\n",
	       g2, th2);
	printf("one failed create at the first dirty page (%d failed): %" PRIu64
	       "/21 pages in the kernel's file, %d lpc-flusher\n",
	       (int)fl_failed, g1, th1);
	ATT_CHECK(g2 == 21, "control: writeback by age did not write the pages");
	ATT_CHECK(g1 == 21, "pages dirty %" PRIu64 " of 21 after 10x dirty_expire_ms: the flusher was never retried",
		  21 - g1);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
