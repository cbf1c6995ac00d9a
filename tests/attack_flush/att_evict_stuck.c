/* SPDX-License-Identifier: MIT */
/*
 * att_evict_stuck - a failed pthread_create at eviction's hand-off (E8,
 * reclaim/evict.c handoff) leaves the file's wb_reclaim true for good:
 * handoff sets it before lpc_wb_kick -> lpc_wb_need fails, and only the
 * flusher's pick clears it.  Later misses find the same dirty pages, see
 * wb_reclaim set ("a pass is asked for already") and never kick again, so
 * with no flusher every miss fails with -ENOMEM after alloc_wait_ms, for
 * good, although pthread_create works again.  F1 allows a miss to fail
 * while the create fails ("as a stuck disk would"), not after.
 * Setup: the SQLite extension's LPC_DIRTY_EXPIRE_NEVER, background and hard
 * limit at 100 % (no other kick), a cache filled with one file's dirty
 * pages, then reads of another file.  Control: create working, the miss
 * succeeds.  Exit 1 while the defect is open.
 */
#include "fl.h"
#include "filemap/filemap.h" /* f->wb_reclaim, to show which flag is stuck */

#define FRAMES 256

/* lpc_page_get: lpc_pread would read around a full cache. */
static ssize_t miss(struct lpc_file *g, uint64_t i)
{
	struct lpc_page *p;
	int rc = lpc_page_get(g, i, 0, &p);

	if (rc)
		return rc;
	lpc_page_put(p);
	return 4096;
}

static void run(bool fail, const char *pa, const char *pb, ssize_t *r1, ssize_t *r2,
		int *threads)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct lpc_file *f, *g;
	struct lpc_stats s;

	lpc_config_init(&cfg);
	cfg.cache_bytes = FRAMES * 4096;
	cfg.page_size = 4096;
	cfg.io_backend = LPC_IO_SYNC;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	cfg.dirty_expire_ms = LPC_DIRTY_EXPIRE_NEVER;
	cfg.dirty_background_pct = 100;
	cfg.dirty_limit_pct = 100;
	cfg.alloc_wait_ms = 200;
	if (lpc_cache_create(&cfg, &c) || lpc_file_open(c, pa, O_RDWR, 0, &f) ||
	    lpc_file_open(c, pb, O_RDONLY, 0, &g)) {
		printf("setup failed\n");
		exit(1);
	}
	/* A moment at the thread limit, from before the cache is full: the
	 * background reclaimer (started as free frames run low) would
	 * otherwise hand the dirty pages to the flusher first. */
	fl_fail_create = fail;
	for (uint64_t i = 0; i < FRAMES; i++)
		fl_write_page(f, i, 4);
	*r1 = miss(g, 0);
	fl_fail_create = 0;
	*r2 = miss(g, 1); /* pthread_create works again */
	if (*r2 != 4096)
		*r2 = miss(g, 2);
	*threads = fl_flushers();
	printf("  %s: file's wb_reclaim %d\n", fail ? "failed create" : "control",
	       (int)atomic_load(&f->wb_reclaim));
	lpc_stats(c, &s);
	printf("  %s: frames %" PRIu64 " dirty_pages %" PRIu64 " alloc_failures %" PRIu64
	       " writeback_pages %" PRIu64 "\n", fail ? "failed create" : "control", s.frames,
	       s.dirty_pages, s.alloc_failures, s.writeback_pages);
	lpc_file_close(g);
	lpc_file_close(f);
	lpc_cache_destroy(c);
}

int main(void)
{
	char pa1[300], pb1[300], pa2[300], pb2[300];
	ssize_t a1, a2, c1, c2;
	int th1, th2;

	att_make_file("a1", 2 << 20, 1, pa1, sizeof(pa1));
	att_make_file("b1", 2 << 20, 1, pb1, sizeof(pb1));
	att_make_file("a2", 2 << 20, 1, pa2, sizeof(pa2));
	att_make_file("b2", 2 << 20, 1, pb2, sizeof(pb2));
	run(false, pa2, pb2, &c1, &c2, &th2);
	run(true, pa1, pb1, &a1, &a2, &th1);
	printf("control (create works): lpc_page_get %zd, next %zd, %d lpc-flusher\n", c1, c2, th2);
	printf("failed create at E8's kick (%d failed): lpc_page_get %zd (allowed), next with create working %zd, %d lpc-flusher\n",
	       (int)fl_failed, a1, a2, th1);
	ATT_CHECK(c1 == 4096 && c2 == 4096, "control: a miss failed");
	ATT_CHECK(a2 == 4096, "misses after pthread_create recovered: %zd (the hand-off is never kicked again)", a2);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
