/* SPDX-License-Identifier: MIT */
/*
 * att_ra_hol - head-of-line blocking in the cache's one readahead thread
 * (ra_worker.c Q2): the thread reads the queued windows one at a time, each
 * with a synchronous read, so a window of file A whose read is slow or hung
 * (A on a stalled device: NFS, FUSE, a failing disk's retries) holds every
 * later window of every other file, already inserted LOCKED (Q0), unread.
 * A reader of file B that reaches its own read-ahead pages then waits on
 * their locks for A's device; lpc_file_close(B) waits at Q3 for the same.
 * B's device is idle the whole time.  (The "a page read ahead ...
 * must become readable when the device completes it": here B's read is not
 * even issued.)
 * Story, deterministic but for the timeout that shows B still blocked:
 *   1 scanner A reads pages 0, 1 (a stream: window [1, 33), marker on 2);
 *     the gate closes for file A's reads; A reads page 2: the marker's
 *     window [33, 161) is queued, the readahead thread takes it and blocks
 *     at the gate; A's call returns at once (correct: async)
 *   2 B reads pages 0, 1, 2 the same way: B's window [33, 161) is queued
 *     behind A's, its pages inserted LOCKED
 *   3 a thread reads B's page 40: no file A byte is involved
 *   4 after 2 s that read has not returned: DEFECT; the gate opens, all end.
 * Usage: att_ra_hol [sync|uring]    Exit: 0 held, 1 defect shown.
 */
#include "att.h"
#include "fgate.h"

static const size_t PS = 4096;
static struct lpc_file *fa, *fb;
static _Atomic int b_done;
static ssize_t b_ret;

static void *read_b(void *arg)
{
	uint64_t buf[512];

	(void)arg;
	b_ret = lpc_pread(fb, buf, PS, 40 * PS);
	if (b_ret == (ssize_t)PS && att_bad_word(buf, PS, 40 * PS, 2) >= 0)
		b_ret = -1000;
	atomic_store(&b_done, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "uring") ? LPC_IO_URING : LPC_IO_SYNC;
	struct lpc_cache *c = att_cache(4096 * PS, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
	char pa[400], pb[400];
	uint64_t buf[512];
	struct lpc_stats s;
	pthread_t th;
	int defect = 0;

	att_make_file("ha", 1024 * PS, 1, pa, sizeof(pa));
	att_make_file("hb", 1024 * PS, 2, pb, sizeof(pb));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pb, O_RDONLY, 0, &fb))
		return 1;
	fg_install(c);
	/* 1 */
	lpc_pread(fa, buf, PS, 0);
	lpc_pread(fa, buf, PS, PS);
	fg_close(fg_file_id(pa));
	lpc_pread(fa, buf, PS, 2 * PS);
	if (!fg_wait_entered(1, 5000)) {
		printf("A's async window never reached the device\n");
		fg_open();
		return 1;
	}
	printf("  1: A's marker window is at the device (held); A's reader returned at once\n");
	/* 2 */
	lpc_pread(fb, buf, PS, 0);
	lpc_pread(fb, buf, PS, PS);
	lpc_pread(fb, buf, PS, 2 * PS);
	lpc_stats(c, &s);
	printf("  2: B's marker window queued (ra_async %" PRIu64 ")\n", s.ra_async);
	/* 3 */
	pthread_create(&th, NULL, read_b, NULL);
	for (int i = 0; i < 200 && !atomic_load(&b_done); i++)
		usleep(10000);
	if (!atomic_load(&b_done)) {
		defect = 1;
		printf("  4: lpc_pread(B, page 40) still blocked after 2 s while only file A's "
		       "reads are held (B's device idle)\n");
	} else {
		printf("  4: lpc_pread(B, page 40) returned %zd without waiting for A\n", b_ret);
	}
	fg_open();
	pthread_join(th, NULL);
	printf("  after the gate opened: lpc_pread(B, page 40) = %zd\n", b_ret);
	lpc_file_close(fa);
	lpc_file_close(fb);
	lpc_cache_destroy(c);
	att_cleanup();
	printf(defect ? "DEFECT: one file's slow read holds every file's readahead\n" : "held\n");
	return defect;
}
