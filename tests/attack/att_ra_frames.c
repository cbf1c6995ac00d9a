/* SPDX-License-Identifier: MIT */
/*
 * att_ra_frames - an asynchronous window in flight holds frames that a demand
 * read then cannot get: issue 18's rule "readahead never ... makes a demand
 * read fail or wait for a frame".  Readahead takes free frames only (run.c
 * U2, NORECLAIM) but as many as a whole window (ra_max, 128 pages at 4 KiB)
 * whatever the cache's size, and keeps them locked (unevictable) for the
 * whole read.  In a 161-frame cache where the application holds 33 pages
 * (pins: 20% of the cache), one marker window takes all 128 free frames;
 * while its read is in flight (a held gate: a slow device) lpc_page_get of
 * another file waits alloc_wait_ms and fails -ENOMEM.  The same cache with
 * readahead off serves it at once.
 * Seen on the way (the stats line): the window's NORECLAIM allocations wake
 * the background reclaimer (alloc.c), which evicts the stream's own pages
 * read ahead a moment before (RA, inactive: first to go): ra_wasted 30, and
 * the pin's slow path reads them again (read_pages 63 instead of 34).
 * Only the window's read is held (fgate.h min_index 33).
 * Usage: att_ra_frames    Exit: 0 held, 1 defect shown.
 */
#include "att.h"
#include "fgate.h"

static const size_t PS = 4096;

static int run(bool ra, int *get_rc, double *ms)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *fa, *fb;
	struct lpc_page *pins[64], *p = NULL;
	char pa[400], pb[400];
	uint64_t buf[512];
	struct timespec t0, t1;
	int n;

	lpc_config_init(&cfg);
	cfg.cache_bytes = 97 * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_SYNC;
	cfg.alloc_wait_ms = 300;
	cfg.readahead_kb = ra ? 0 : LPC_READAHEAD_OFF;
	if (lpc_cache_create(&cfg, &c))
		return 1;
	att_make_file("fa", 1024 * PS, 1, pa, sizeof(pa));
	att_make_file("fb", 1024 * PS, 2, pb, sizeof(pb));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pb, O_RDONLY, 0, &fb))
		return 1;
	fg_install(c);
	/* A stream on A: pages 0, 1 (window [1, 33) with readahead). */
	lpc_pread(fa, buf, PS, 0);
	lpc_pread(fa, buf, PS, PS);
	if (ra) {
		fg_close(fg_file_id(pa));
		fg.min_index = 33; /* the marker's window only */
	}
	/* The application pins A's pages 0..32; page 2 is the marker (with
	 * readahead): the pin's slow path starts the next window, queued and
	 * its read held at the gate. */
	n = lpc_pin(fa, 0, 33 * PS, LPC_PIN_READ, pins, 64);
	if (n != 33) {
		printf("pin %d\n", n);
		return 1;
	}
	if (ra && !fg_wait_entered(1, 5000)) {
		printf("no window at the device\n");
		return 1;
	}
	printf("    nframes %u nfree %u before the demand read\n", c->pool.nframes,
	       (unsigned)atomic_load(&c->pool.nfree));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	*get_rc = lpc_page_get(fb, 500, 0, &p);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (*get_rc == 0)
		lpc_page_put(p);
	att_print_stats(c, ra ? "readahead on" : "readahead off");
	fg_open();
	lpc_unpin(pins, 33, LPC_PIN_READ);
	lpc_file_close(fa);
	lpc_file_close(fb);
	lpc_cache_destroy(c);
	return 0;
}

int main(void)
{
	int rc_off = 0, rc_on = 0;
	double ms_off = 0, ms_on = 0;

	if (run(false, &rc_off, &ms_off) || run(true, &rc_on, &ms_on))
		return 1;
	printf("  readahead off: lpc_page_get(B, 500) = %d in %.1f ms\n", rc_off, ms_off);
	printf("  readahead on, one window in flight: lpc_page_get(B, 500) = %d in %.1f ms\n",
	       rc_on, ms_on);
	att_cleanup();
	if (rc_on != 0 && rc_off == 0) {
		printf("DEFECT: a window in flight made a demand read wait and fail\n");
		return 1;
	}
	printf("held\n");
	return 0;
}
