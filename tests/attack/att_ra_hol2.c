/* SPDX-License-Identifier: MIT */
/*
 * att_ra_hol2 - head-of-line across files: two slow files (their reads held
 * at the gate) with LPC_RA_PER_FILE windows each take all LPC_RA_THREADS
 * readahead threads; a fast file's WILLNEED window is queued behind them
 * with its pages inserted LOCKED (ra_worker.c Q0/Q1), so a demand read of
 * the fast file waits for the slow files' device.
 * The windows are started 50 ms apart, so that each finds no idle thread
 * and the pool grows to LPC_RA_THREADS (att_ra_pool_grow: a burst does not).
 * Usage: att_ra_hol2 [sync|uring]    Exit: 0 held, 1 defect.
 */
#include "att.h"
#include "g2.h"
#include "filemap/filemap.h"

static const size_t PS = 4096;
static struct lpc_file *fc;
static ssize_t got;
static uint64_t buf[512];

static void *read_c(void *arg)
{
	(void)arg;
	got = lpc_pread(fc, buf, PS, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "sync") ? LPC_IO_SYNC : LPC_IO_URING;
	char pa[300], pb[300], pc[300];
	struct lpc_cache *c = att_cache(64 << 20, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
	struct lpc_file *fa, *fb;
	struct lpc_stats s;
	struct g2_call call = { read_c, NULL };
	unsigned held;
	bool ok;

	att_make_file("a", 1 << 20, 1, pa, sizeof(pa));
	att_make_file("b", 1 << 20, 2, pb, sizeof(pb));
	att_make_file("c", 1 << 20, 3, pc, sizeof(pc));
	g2_install(c);
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pb, O_RDONLY, 0, &fb) ||
	    lpc_file_open(c, pc, O_RDONLY, 0, &fc)) {
		printf("open failed\n");
		return 77;
	}
	g2_close(g2_id(pa));
	g2_close(g2_id(pb));
	/* Four one-page windows per slow file (pages 0, 2, 4, 6): four jobs. */
	for (int k = 0; k < 4; k++) {
		lpc_fadvise(fa, (uint64_t)k * 2 * PS, PS, LPC_FADV_WILLNEED);
		usleep(50000); /* each submit finds no idle thread: one more starts */
		lpc_fadvise(fb, (uint64_t)k * 2 * PS, PS, LPC_FADV_WILLNEED);
		usleep(50000);
	}
	held = g2_entered_after(300);
	printf("  slow files' reads held at the device: %u (threads %u idle %u queued %u; inflight a %u b %u)\n", held, c->files.ra.nthreads, c->files.ra.nidle, c->files.ra.n, fa->ra_inflight, fb->ra_inflight);
	/* The fast file: WILLNEED returns; then a demand read of its page 0. */
	lpc_fadvise(fc, 0, PS, LPC_FADV_WILLNEED);
	ok = g2_returns_within(&call, 2000);
	lpc_stats(c, &s);
	printf("  fast file's pread of page 0 (WILLNEED'd) returned within 2 s: %s"
	       " (ra_windows %" PRIu64 " ra_async %" PRIu64 ")\n",
	       ok ? "yes" : "no, waiting on the slow files' device", s.ra_windows, s.ra_async);
	g2_open();
	pthread_join(call.th, NULL);
	ATT_CHECK(ok, "a demand read of a fast file waited behind two slow files' readahead");
	ATT_CHECK(got == (ssize_t)PS && att_bad_word(buf, PS, 0, 3) < 0, "wrong bytes");
	lpc_file_close(fa);
	lpc_file_close(fb);
	lpc_file_close(fc);
	lpc_cache_destroy(c);
	att_cleanup();
	printf(att_fails ? "DEFECT: head-of-line across files (%s)\n" : "held (%s)\n",
	       att_backend_name(backend));
	return att_fails ? 1 : 0;
}
