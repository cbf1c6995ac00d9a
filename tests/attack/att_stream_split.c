/* SPDX-License-Identifier: MIT */
/*
 * att_stream_split - a sequential scan over a file with a few pages already
 * cached (every 16th: an index page a query touched, a hot page) loses its
 * readahead stream at every cached page.  A window (readahead.c S2, A2) is
 * one run (run.c U1) that ends at the first cached page, but the stream slot
 * expects its next miss at the window's full end (s->next = index + nr +
 * ra); the reader's next miss, just past the cached page, matches no slot,
 * takes one as a new candidate (S3), and the ramp starts again from nothing
 * (a 1-page read, then ra_init).  The kernel's page_cache_ra_unbounded skips
 * cached pages and reads the rest of the window.
 * Compares a cold scan with the same scan after every 16th page was cached
 * (readahead off while caching them).  4 KiB pread calls.  Default stride 64.
 * Usage: att_stream_split [pages] [stride]    Exit: 0 fine, 1 pathology.
 */
#include "att.h"

static const size_t PS = 4096;

struct res {
	uint64_t reads, read_pages, windows, async, ra_pages;
};

static struct res scan(int backend, int mode, uint64_t npages, uint64_t stride, const char *path)
{
	struct lpc_cache *c = att_cache(2 * npages * PS, PS, backend, mode, 0, 0);
	struct lpc_file *f;
	struct lpc_stats s0, s1;
	uint64_t buf[512];
	struct res r = { 0 };

	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		exit(1);
	if (stride) {
		lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM);
		for (uint64_t i = 0; i < npages; i += stride)
			if (lpc_pread(f, buf, PS, i * PS) != (ssize_t)PS)
				exit(1);
		lpc_fadvise(f, 0, 0, LPC_FADV_NORMAL);
	}
	lpc_stats(c, &s0);
	for (uint64_t i = 0; i < npages; i++) {
		if (lpc_pread(f, buf, PS, i * PS) != (ssize_t)PS || att_bad_word(buf, PS, i * PS, 5) >= 0) {
			printf("bad read at page %" PRIu64 "\n", i);
			exit(1);
		}
	}
	lpc_stats(c, &s1);
	r.reads = s1.reads - s0.reads;
	r.read_pages = s1.read_pages - s0.read_pages;
	r.windows = s1.ra_windows - s0.ra_windows;
	r.async = s1.ra_async - s0.ra_async;
	r.ra_pages = s1.ra_pages - s0.ra_pages;
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return r;
}

int main(int argc, char **argv)
{
	uint64_t npages = argc > 1 ? strtoull(argv[1], NULL, 0) : 8192;
	uint64_t stride = argc > 2 ? strtoull(argv[2], NULL, 0) : 64;
	char path[400];
	int bad = 0;
	int backends[] = { LPC_IO_SYNC, LPC_IO_URING };

	att_make_file("s", npages * PS, 5, path, sizeof(path));
	for (int b = 0; b < 2; b++) {
		struct res a = scan(backends[b], LPC_LOOKUP_LOCKLESS, npages, 0, path);
		struct res s = scan(backends[b], LPC_LOOKUP_LOCKLESS, npages, stride, path);
		uint64_t absent = npages - (npages + stride - 1) / stride;
		/* At best each gap of stride-1 absent pages takes ceil((stride-1) /
		 * 128) reads (128: the default run_max, 512 KiB). */
		uint64_t best = ((npages + stride - 1) / stride) * ((stride - 1 + 127) / 128);

		printf("  %s cold scan of %" PRIu64 " pages: reads %" PRIu64 " (%.1f pages/read) "
		       "windows %" PRIu64 " async %" PRIu64 "\n",
		       att_backend_name(backends[b]), npages, a.reads,
		       (double)a.read_pages / (double)a.reads, a.windows, a.async);
		printf("  %s same scan, every %" PRIu64 "th page cached (%" PRIu64 " absent): reads %" PRIu64
		       " (%.1f pages/read; at best %" PRIu64 " reads of %" PRIu64 ") windows %" PRIu64
		       " async %" PRIu64 "\n",
		       att_backend_name(backends[b]), stride, absent, s.reads,
		       (double)s.read_pages / (double)s.reads, best,
		       stride - 1, s.windows, s.async);
		/* Over twice the best: the stream restarted in each gap. */
		if (s.reads > 2 * best)
			bad = 1;
	}
	att_cleanup();
	printf(bad ? "PATHOLOGY: the stream restarts at every cached page\n" : "held\n");
	return bad;
}
