/* SPDX-License-Identifier: MIT */
/*
 * att_qd_gb3hol - lpc_page_get_batch's GB3 now inserts every refused run
 * LOCKED before it reads any (stream.c GB3 -> run.c lpc_filemap_batch_flush),
 * so another thread's demand read of a page in the batch's second run waits
 * for the first run's read.
 *
 * Before 709d776 GB3 read its refused runs one after another, each run
 * inserted just before its own read: a run not yet read was not in the
 * index, and a demand reader of it read it itself (a miss).  Now the runs
 * of up to LPC_RUN_BATCH windows are all inserted LOCKED first (U1-U3),
 * then read with one lpc_io_readv_batch, then U5 for all of them.  A
 * reader of a page of run 2 waits on its lock (M6) for run 1's device,
 * which it never asked for (Q6: "a demand read never waits for a readahead
 * thread, only for the device"; the pages GB3 reads are not the other
 * thread's demand).
 *
 * Setup: readahead_max_kb 32 (runs of 8 pages).  A second file C fills
 * the readahead queue (its reads all held), so the batch's async windows
 * are refused (no slot, Q5) and GB3 reads them in the caller.  Thread X:
 * lpc_page_get_batch of file A's pages 0-7 and 16-23 (two runs); the
 * request covering A's page 0 is held (a slow region).  Then the main
 * thread calls lpc_pread on A's page 16 (its own request is not held): it must
 * return within 2 s.
 *
 * Usage: att_qd_gb3hol [sync|uring]    Exit: 0 held, 1 defect.
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_qd_gb3hol sync
 */
#include "../attack/att.h"
#include "qd.h"

#define PS 4096u
#define RUN 8u

static struct lpc_file *fa, *fc;
static uint64_t buf[PS / 8];
static ssize_t got;
static int xrc = -1;
static struct lpc_page *pages[2 * RUN];
static int errs[2 * RUN];
static uint64_t idx[2 * RUN];
static _Atomic int xdone;

static void *batch(void *arg)
{
	(void)arg;
	xrc = lpc_page_get_batch(fa, idx, 2 * RUN, 0, pages, errs);
	atomic_store(&xdone, 1);
	return NULL;
}

static void *demand(void *arg)
{
	(void)arg;
	got = lpc_pread(fa, buf, PS, 16u * PS);
	return NULL;
}

static unsigned queued(struct lpc_cache *c)
{
	unsigned n;

	pthread_mutex_lock(&c->files.ra.lock);
	n = c->files.ra.n;
	pthread_mutex_unlock(&c->files.ra.lock);
	return n;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "sync") ? LPC_IO_SYNC : LPC_IO_URING;
	char pa[300], pc[300];
	struct lpc_cache *c = att_cache(64u << 20, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 32);
	struct qd_call call = { demand, NULL };
	pthread_t x;
	unsigned before, q;
	bool entered, ok;

	att_make_file("a", 1u << 20, 1, pa, sizeof(pa));
	att_make_file("c", 8u << 20, 2, pc, sizeof(pc));
	qd_install(c, qd_ino(pa));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pc, O_RDONLY, 0, &fc)) {
		printf("open failed\n");
		return 77;
	}
	(void)lpc_fadvise(fa, 0, 0, LPC_FADV_RANDOM);
	qd_hold2(qd_ino(pc), true);
	/* C's windows fill the queue (its reads held). */
	for (unsigned k = 0; k < 8 && (q = queued(c)) < 64; k++) {
		lpc_fadvise(fc, (uint64_t)k * 128u * RUN * PS, 128u * RUN * PS, LPC_FADV_WILLNEED);
		usleep(100000);
	}
	q = queued(c);
	printf("  file C's jobs queued (reads held): %u of 64\n", q);
	for (unsigned i = 0; i < RUN; i++) {
		idx[i] = i;
		idx[RUN + i] = 16 + i;
	}
	pthread_mutex_lock(&qd.mu);
	before = qd.entered;
	pthread_mutex_unlock(&qd.mu);
	qd_set(false, true, 0); /* the request covering A's page 0 is slow */
	pthread_create(&x, NULL, batch, NULL);
	entered = qd_wait_entered(before + 1, 2000);
	usleep(200000);
	printf("  batch thread's read of A's run 0-7 held: %s; lpc_page_get_batch returned: %s\n",
	       entered ? "yes" : "no", atomic_load(&xdone) ? "yes" : "no");
	ok = qd_returns_within(&call, 2000);
	printf("  demand pread of A's page 16 (its own request not held) returned within 2 s: %s\n",
	       ok ? "yes" : "no: page 16 is LOCKED in GB3's batch, behind run 0-7's read");
	qd_set(false, false, 0);
	qd_hold2(qd_ino(pc), false);
	pthread_join(call.th, NULL);
	pthread_join(x, NULL);
	ATT_CHECK(q == 64, "the queue did not fill: GB3 not reached (test setup)");
	ATT_CHECK(ok, "a demand read waited for another run of GB3's batch");
	ATT_CHECK(got == (ssize_t)PS && att_bad_word(buf, PS, 16u * PS, 1) < 0,
		  "pread: wrong bytes (got %zd)", got);
	ATT_CHECK(xrc == 2 * RUN, "lpc_page_get_batch returned %d", xrc);
	for (unsigned i = 0; i < 2 * RUN; i++) {
		if (!pages[i])
			continue;
		ATT_CHECK(att_bad_word(lpc_page_data(pages[i]), PS, idx[i] * PS, 1) < 0,
			  "batch page %" PRIu64 ": wrong bytes", idx[i]);
		lpc_page_put(pages[i]);
	}
	lpc_file_close(fa);
	lpc_file_close(fc);
	lpc_cache_destroy(c);
	att_cleanup();
	printf(att_fails ? "DEFECT: demand read behind GB3's batch (%s)\n" : "held (%s)\n",
	       att_backend_name(backend));
	return att_fails ? 1 : 0;
}
