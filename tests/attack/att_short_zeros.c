/* SPDX-License-Identifier: MIT */
/*
 * att_short_zeros - a multi-page read (run.c U4) that comes back short in the
 * middle of the file caches ZEROS as UPTODATE for the pages it did not get,
 * once lpc keeps the file's size (size_kept: any lpc_pwrite or lpc_truncate
 * of the file).  The backends' readv returns a short count "where a later
 * part failed after some bytes came" (io.h; sync_readv and uring_readv both
 * return `done` when a later preadv/request fails), so an EIO on the second
 * part of a run becomes zeros in the cache and in the caller's buffer, and
 * stays there (later reads hit the zero page).  The fault hook's short_bytes
 * gives the backend's exact return value for that case.
 *
 * Control: the same read on a file lpc never wrote (size_kept false) is
 * judged by check_short's fstat and fails with -EIO (correct).
 * Usage: att_short_zeros    Exit: 0 no defect seen, 1 defect shown.
 */
#include "att.h"
#include "cache/cache.h"

static const size_t PS = 4096;

static int one(int backend, int mode, bool kept)
{
	char path[400], name[64];
	struct lpc_cache *c = att_cache(64 * PS, PS, backend, mode, LPC_READAHEAD_OFF, 0);
	struct lpc_file *f;
	struct lpc_page *p;
	uint64_t buf[8 * 4096 / 8];
	ssize_t r;
	int zeros_cached = 0, bad = 0;

	snprintf(name, sizeof(name), "f%d%d%d", backend, mode, kept);
	att_make_file(name, 16 * PS, 7, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDWR, 0, &f)) {
		printf("open failed\n");
		return 1;
	}
	if (kept) {
		/* Rewrite page 15 with the bytes it has: content unchanged,
		 * lpc now keeps the size. */
		uint64_t pg[4096 / 8];

		for (size_t i = 0; i < PS / 8; i++)
			pg[i] = att_word(7, 15 * PS + i * 8);
		r = lpc_pwrite(f, pg, PS, 15 * PS);
		if (r != (ssize_t)PS) {
			printf("pwrite %zd\n", r);
			return 1;
		}
	}
	{
		/* The run's readv returns one page of eight: what sync_readv
		 * returns when the second preadv of the run gets EIO. */
		struct lpc_io_fault flt = { .ops = LPC_IO_READ, .count = 1, .short_bytes = PS };

		lpc_io_fault_set(&((struct lpc_cache *)c)->io, &flt);
	}
	memset(buf, 0xaa, sizeof(buf));
	r = lpc_pread(f, buf, 8 * PS, 0);
	lpc_io_fault_set(&c->io, NULL);
	printf("  %s/%s size_kept=%d: lpc_pread(8 pages) = %zd", att_backend_name(backend),
	       att_mode_name(mode), kept, r);
	if (r > 0) {
		long w = att_bad_word(buf, (size_t)r, 0, 7);

		if (w >= 0) {
			printf(", word %ld (page %ld) = %#" PRIx64 " (want %#" PRIx64 ")", w,
			       w * 8 / (long)PS, buf[w], att_word(7, (uint64_t)w * 8));
			bad = 1;
		}
	}
	/* What is cached now for pages 1..7. */
	for (uint64_t i = 1; i < 8; i++) {
		if (lpc_page_find(f, i, &p) == 0) {
			const uint64_t *d = lpc_page_data(p);

			if (d[0] == 0 && d[PS / 8 - 1] == 0)
				zeros_cached++;
			lpc_page_put(p);
		}
	}
	printf(", pages 1-7 cached as zeros: %d\n", zeros_cached);
	att_print_stats(c, "stats");
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return bad || zeros_cached;
}

/* The same through an async readahead window (ra_worker.c Q2, run.c U5). */
static int async_window(int backend)
{
	char path[400];
	struct lpc_cache *c = att_cache(4096 * PS, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
	struct lpc_file *f;
	uint64_t buf[4096 / 8];
	struct lpc_io_fault flt = { .ops = LPC_IO_READ, .count = 1, .short_bytes = PS };
	long w;
	ssize_t r;

	att_make_file(backend == LPC_IO_SYNC ? "as" : "au", 1024 * PS, 7, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDWR, 0, &f))
		return 1;
	for (size_t i = 0; i < PS / 8; i++)
		buf[i] = att_word(7, 1023 * PS + i * 8);
	if (lpc_pwrite(f, buf, PS, 1023 * PS) != (ssize_t)PS) /* size_kept, bytes unchanged */
		return 1;
	lpc_pread(f, buf, PS, 0);
	lpc_pread(f, buf, PS, PS); /* window [1, 33), marker on 2 */
	lpc_io_fault_set(&c->io, &flt);
	lpc_pread(f, buf, PS, 2 * PS); /* async window [33, 97): its readv returns one page */
	r = lpc_pread(f, buf, PS, 40 * PS);
	lpc_io_fault_set(&c->io, NULL);
	w = r == (ssize_t)PS ? att_bad_word(buf, PS, 40 * PS, 7) : -1;
	printf("  %s async window short after its first page: lpc_pread(page 40) = %zd, %s\n",
	       att_backend_name(backend), r, w >= 0 ? "ZEROS" : "right bytes or an error");
	if (w >= 0)
		printf("    word 0 = %#" PRIx64 " (want %#" PRIx64 ")\n", buf[0], att_word(7, 40 * PS));
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return w >= 0;
}

int main(void)
{
	int defect = 0;
	int backends[] = { LPC_IO_SYNC, LPC_IO_URING };
	int modes[] = { LPC_LOOKUP_LOCKLESS, LPC_LOOKUP_LOCKED };

	for (int b = 0; b < 2; b++)
		for (int m = 0; m < 2; m++) {
			int ctl = one(backends[b], modes[m], false);
			int d = one(backends[b], modes[m], true);

			if (ctl)
				printf("  (control showed it too)\n");
			defect |= d;
		}
	defect |= async_window(LPC_IO_SYNC);
	defect |= async_window(LPC_IO_URING);
	att_cleanup();
	printf(defect ? "DEFECT: zeros returned and cached for pages a short run did not read\n"
		      : "no defect seen\n");
	return defect ? 1 : 0;
}
