/* SPDX-License-Identifier: MIT */
/*
 * att_ra_frames - readahead held at a slow device keeps its frames, and a
 * demand pin of another file fails for want of a frame.  Cache 4 MiB (1024
 * frames); a WILLNEED of a held file's 4 MiB queues its windows, which take
 * every free frame above the readahead reserve (run.c U2: 1/64 of the
 * cache); then lpc_pin of 2 MiB (512 pages) of a fast file, which an idle
 * cache of 1024 frames serves at once.  Issue 18: readahead "never makes a
 * demand read fail or wait for a frame".
 * Usage: att_ra_frames [sync|uring] [control: the pin alone, exit 0 if it pins 512]
 *    Exit: 0 held, 1 defect.
 */
#include "att.h"
#include "g2.h"

static struct lpc_file *fa;

static void *willneed(void *arg)
{
	(void)arg;
	lpc_fadvise(fa, 0, 0, LPC_FADV_WILLNEED);
	return NULL;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "sync") ? LPC_IO_SYNC : LPC_IO_URING;
	char pa[300], pc[300];
	struct lpc_cache *c = att_cache(4 << 20, 4096, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
	struct lpc_file *fc;
	static struct lpc_page *pages[512];
	struct g2_call call = { willneed, NULL };
	struct lpc_stats s;
	double t0;
	struct timespec ts;
	int n;
	bool control = argc > 2 && !strcmp(argv[2], "control");

	att_make_file("a", 4 << 20, 1, pa, sizeof(pa));
	att_make_file("c", 4 << 20, 3, pc, sizeof(pc));
	g2_install(c);
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pc, O_RDONLY, 0, &fc)) {
		printf("open failed\n");
		return 77;
	}
	g2_close(g2_id(pa));
	if (control) {
		/* The same pin with the held file's WILLNEED not made. */
		n = lpc_pin(fc, 0, 2 << 20, LPC_PIN_READ, pages, 512);
		printf("  control: lpc_pin(c, 2 MiB) with no readahead held = %d\n", n);
		att_cleanup();
		return n == 512 ? 0 : 1;
	}
	printf("  WILLNEED(a, 4 MiB) returned within 2 s: %s\n",
	       g2_returns_within(&call, 2000) ? "yes" : "no");
	lpc_stats(c, &s);
	printf("  reads held %u; ra_pages so far %" PRIu64 "\n", g2_entered_after(100), s.ra_pages);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	n = lpc_pin(fc, 0, 2 << 20, LPC_PIN_READ, pages, 512);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("  lpc_pin(c, 2 MiB) = %d after %.2f s\n", n, ts.tv_sec + ts.tv_nsec / 1e9 - t0);
	ATT_CHECK(n == 512, "a demand pin failed while readahead of a held file kept the frames");
	if (n > 0)
		lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
	g2_open();
	pthread_join(call.th, NULL);
	lpc_file_close(fa);
	lpc_file_close(fc);
	lpc_cache_destroy(c);
	att_cleanup();
	printf(att_fails ? "DEFECT: readahead in flight starves a demand pin (%s)\n" : "held (%s)\n",
	       att_backend_name(backend));
	return att_fails ? 1 : 0;
}
