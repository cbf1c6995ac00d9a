/* SPDX-License-Identifier: MIT */
/*
 * att_gb3.c - a batch when readahead's share is already taken: GB3 reads
 * the refused runs in the caller, outside the share.
 *
 * lpc.h: the absent pages are read "within readahead's share of the cache
 * (a quarter of the frames) ...: short of frames, they read less ahead, and
 * each page is then read as lpc_page_get reads it".  Here a 256-frame cache
 * (share 64); file C's WILLNEED windows take the share, their reads held
 * 500 ms (slow.h hold_id); then lpc_page_get_batch of 64 adjacent cold
 * pages of file A (RANDOM advice: lpc_page_get would read them one page
 * each; A's reads held 50 ms and counted).
 *
 * Observed: Q5 refuses the batch's run (share full), and GB3 reads the
 * whole refused run at once in the calling thread with no reservation: 64
 * more frames locked by one read while the share is already full (half the
 * cache locked by reads).  Exit 1 when the batch had more than one page of
 * A being read at once while C's reads held the share.
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_gb3
 */
#include "att.h"
#include "slow.h"

#define PS 4096u

static uint64_t ino(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

int main(void)
{
	char pa[512], pc[512];
	struct lpc_cache *c;
	struct lpc_file *fa, *fc;
	uint64_t idx[64], share_pages;
	struct lpc_page *pg[64];
	int errs[64], rc;

	att_make_file("a", 256u * PS, 3, pa, sizeof(pa));
	att_make_file("c", 1024u * PS, 4, pc, sizeof(pc));
	for (unsigned i = 0; i < 64; i++)
		idx[i] = 100 + i;
	c = att_cache(256u * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 0, 0);
	slow_install(c);
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pc, O_RDONLY, 0, &fc))
		return 1;
	(void)lpc_fadvise(fa, 0, 0, LPC_FADV_RANDOM);
	slow.only_id = ino(pa);
	slow.delay_us = 50000;
	slow.hold_id = ino(pc);
	slow.hold_us = 500000;
	slow_reset();
	(void)lpc_fadvise(fc, 0, 512u * PS, LPC_FADV_WILLNEED);
	usleep(50000);
	pthread_mutex_lock(&c->files.ra.lock);
	share_pages = c->files.ra.npages;
	pthread_mutex_unlock(&c->files.ra.lock);
	rc = lpc_page_get_batch(fa, idx, 64, 0, pg, errs);
	ATT_CHECK(rc == 64, "batch: %d", rc);
	for (unsigned i = 0; i < 64; i++)
		if (pg[i]) {
			ATT_CHECK(att_bad_word(lpc_page_data(pg[i]), PS, idx[i] * PS, 3) < 0, "bytes");
			lpc_page_put(pg[i]);
		}
	printf("C's WILLNEED reads hold %" PRIu64 " pages (share %u); the batch then had %" PRId64
	       " pages of A being read at once (%" PRIu64 " reads)\n",
	       share_pages, 256u / 4, (int64_t)atomic_load(&slow.pages_peak),
	       (uint64_t)atomic_load(&slow.reads));
	ATT_CHECK(share_pages >= 64, "setup: C's windows did not fill the share");
	ATT_CHECK(atomic_load(&slow.pages_peak) <= 1,
		  "the batch locked %" PRId64 " frames in one read beyond a full share",
		  (int64_t)atomic_load(&slow.pages_peak));
	lpc_file_close(fa);
	lpc_file_close(fc);
	ATT_CHECK(lpc_cache_destroy(c) == 0, "destroy");
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
