/* SPDX-License-Identifier: MIT */
/*
 * att_willneed_split - lpc_fadvise(WILLNEED) is documented (lpc.h) to read
 * "the range's absent pages", but each window is one run_start (run.c U1)
 * that ends at the first page already cached, and lpc_fadvise then skips the
 * whole window (first += n): one cached page at the start of a window
 * leaves the rest of it unread.  Same for the async marker windows
 * (readahead.c A2) and the sync windows of lpc_ra_on_miss: see
 * att_stream_split.
 * Also: ra_windows counts a window even when it read nothing.
 * Usage: att_willneed_split    Exit: 0 no defect seen, 1 defect shown.
 */
#include "att.h"

static const size_t PS = 4096;

static int one(int backend, int mode, uint64_t cached)
{
	char path[400], name[64];
	struct lpc_cache *c = att_cache(1024 * PS, PS, backend, mode, 0, 0);
	struct lpc_file *f;
	struct lpc_page *p;
	struct lpc_stats s0, s1;
	uint64_t buf[512];
	unsigned present = 0, missing_first = 0;
	const uint64_t N = 128;

	snprintf(name, sizeof(name), "w%d%d%" PRIu64, backend, mode, cached);
	att_make_file(name, N * PS, 3, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 1;
	/* One page cached: page `cached`. */
	if (lpc_pread(f, buf, PS, cached * PS) != (ssize_t)PS)
		return 1;
	lpc_stats(c, &s0);
	int rc = lpc_fadvise(f, 0, N * PS, LPC_FADV_WILLNEED);
	lpc_stats(c, &s1);
	for (uint64_t i = 0; i < N; i++) {
		if (lpc_page_find(f, i, &p) == 0) {
			present++;
			lpc_page_put(p);
		} else if (!missing_first) {
			missing_first = (unsigned)i;
		}
	}
	printf("  %s/%s page %" PRIu64 " cached, WILLNEED(0, %" PRIu64 " pages) = %d: %u of %" PRIu64
	       " pages cached after (first absent: %u); WILLNEED's reads %" PRIu64
	       " read_pages %" PRIu64 " ra_windows %" PRIu64 "\n",
	       att_backend_name(backend), att_mode_name(mode), cached, N, rc, present, N,
	       missing_first, s1.reads - s0.reads, s1.read_pages - s0.read_pages,
	       s1.ra_windows - s0.ra_windows);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return present != N;
}

/* A WILLNEED of a range already cached reads nothing but counts windows. */
static int counted_empty(void)
{
	char path[400];
	struct lpc_cache *c = att_cache(1024 * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 0, 0);
	struct lpc_file *f;
	struct lpc_stats s0, s1;

	att_make_file("wc", 512 * PS, 3, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 1;
	lpc_fadvise(f, 0, 0, LPC_FADV_WILLNEED);
	lpc_stats(c, &s0);
	lpc_fadvise(f, 0, 0, LPC_FADV_WILLNEED); /* all cached now */
	lpc_stats(c, &s1);
	printf("  WILLNEED over a cached 512-page file: reads +%" PRIu64 ", ra_windows +%" PRIu64
	       ", ra_pages +%" PRIu64 "\n",
	       s1.reads - s0.reads, s1.ra_windows - s0.ra_windows, s1.ra_pages - s0.ra_pages);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	return s1.ra_windows != s0.ra_windows;
}

int main(void)
{
	int d = 0, e;

	d |= one(LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 1);
	d |= one(LPC_IO_URING, LPC_LOOKUP_LOCKLESS, 1);
	d |= one(LPC_IO_SYNC, LPC_LOOKUP_LOCKED, 1);
	d |= one(LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 64);
	e = counted_empty();
	att_cleanup();
	if (d)
		printf("DEFECT: WILLNEED left absent pages of its range unread\n");
	if (e)
		printf("DEFECT (counter): ra_windows counts windows that read nothing\n");
	return d || e ? 1 : 0;
}
