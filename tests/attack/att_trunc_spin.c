/* SPDX-License-Identifier: MIT */
/*
 * att_trunc_spin - while a shrinking lpc_truncate is in progress, every read
 * miss on the file, at ANY index (far below the cut too), is dropped after
 * its I/O and retried at once: run.c U5 and miss.c M5 judge "raced" from
 * trunc_seq alone (odd, or changed), not from the page's index, and
 * lpc_filemap_get_pages loops on -EEXIST.  Truncate's step 2 waits for each
 * page past the cut to be unlocked and out of writeback, so for as long as
 * that takes (a page lock held by the application - lpc_page_lock is public -
 * or a slow write), a reader of page 0 spins doing one read I/O per turn and
 * does not return.
 * Story: U locks page 50 (lpc_page_get + lpc_page_lock); T truncates to 40
 * pages and waits for page 50; R reads page 0 (absent); after 1 s U unlocks.
 * Usage: att_trunc_spin [sync|uring] [locked]    Exit: 0 held, 1 shown.
 */
#include "att.h"
#include <stdatomic.h>
#include <time.h>

static const size_t PS = 4096;
static struct lpc_file *F;
static _Atomic int r_done, t_done;
static ssize_t r_ret;

static void *truncater(void *arg)
{
	(void)arg;
	lpc_truncate(F, 40 * PS);
	atomic_store(&t_done, 1);
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t buf[512];

	(void)arg;
	r_ret = lpc_pread(F, buf, PS, 0);
	if (r_ret == (ssize_t)PS && att_bad_word(buf, PS, 0, 8) >= 0)
		r_ret = -1000;
	atomic_store(&r_done, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	int backend = LPC_IO_SYNC, mode = LPC_LOOKUP_LOCKLESS;
	char path[400];
	struct lpc_cache *c;
	struct lpc_page *p;
	struct lpc_stats s0, s1;
	pthread_t tt, tr;
	int early;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "uring"))
			backend = LPC_IO_URING;
		if (!strcmp(argv[i], "locked"))
			mode = LPC_LOOKUP_LOCKED;
	}
	c = att_cache(1024 * PS, PS, backend, mode, 0, 0);
	att_make_file("ts", 64 * PS, 8, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDWR, 0, &F))
		return 1;
	if (lpc_page_get(F, 50, 0, &p))
		return 1;
	lpc_page_lock(p); /* U */
	pthread_create(&tt, NULL, truncater, NULL);
	usleep(200000); /* T waits for page 50's lock */
	lpc_stats(c, &s0);
	pthread_create(&tr, NULL, reader, NULL);
	usleep(1000000);
	early = atomic_load(&r_done);
	lpc_stats(c, &s1);
	printf("  %s/%s: lpc_pread(page 0) during a truncate to page 40 held on page 50: %s after 1 s;"
	       " read I/Os meanwhile: %" PRIu64 " (read_pages %" PRIu64 ")\n",
	       att_backend_name(backend), att_mode_name(mode), early ? "returned" : "NOT returned",
	       s1.reads - s0.reads, s1.read_pages - s0.read_pages);
	lpc_page_unlock(p);
	lpc_page_put(p);
	pthread_join(tt, NULL);
	pthread_join(tr, NULL);
	printf("  after the unlock: lpc_pread = %zd\n", r_ret);
	lpc_file_close(F);
	lpc_cache_destroy(c);
	att_cleanup();
	if (!early && s1.reads - s0.reads > 100) {
		printf("DEFECT: a read below the cut spins (one I/O per turn) for as long as the truncate takes\n");
		return 1;
	}
	printf("held\n");
	return 0;
}
