/* SPDX-License-Identifier: MIT */
/*
 * regress_qd_gb3hol.c - a demand read of a page in lpc_page_get_batch's GB3
 * batch waits for its own run's request, not for another run of the batch
 * (stream.c GB3, run.c runs_end, io.c RQ3; the review's att_qd_gb3hol).
 *
 * The story: file C's WILLNEED windows fill the readahead queue (64 jobs,
 * every read of C held), so the batch's windows are refused a slot and GB3
 * reads them in the caller.  Thread X: lpc_page_get_batch of file A's pages
 * 0-7 and 16-23 (two runs, inserted LOCKED together, then read as one
 * batch on io_uring); the request covering A's page 0 is held.  Then an
 * lpc_pread of A's page 16 (its own request not held) must return while
 * run 0-7 is still held.  Before the per-run ends, page 16 stayed LOCKED
 * until run 0-7's CQE was reaped too.
 */
#include "qd_story.h"

#define RUN QS_JOB

static struct lpc_file *fa, *fc;
static uint64_t buf[QS_PS / 8];
static ssize_t got;
static int xrc;
static struct lpc_page *pages[2 * RUN];
static int errs[2 * RUN];
static uint64_t idx[2 * RUN];

static void *batch(void *arg)
{
	(void)arg;
	xrc = lpc_page_get_batch(fa, idx, 2 * RUN, 0, pages, errs);
	return NULL;
}

static void *demand(void *arg)
{
	(void)arg;
	got = lpc_pread(fa, buf, QS_PS, 16u * QS_PS);
	return NULL;
}

static void story(int backend)
{
	const char *bn = att_backend_name(backend);
	struct qs_files fs;
	struct lpc_cache *c;
	struct qd_call call = { .fn = demand };
	pthread_t x;
	unsigned before;
	bool full, entered, ok;

	memset(pages, 0, sizeof(pages));
	xrc = -1;
	c = qs_open(backend, 64u << 20, "a", 1u << 20, "c", 8u << 20, &fs);
	fa = fs.a;
	fc = fs.b;
	(void)lpc_fadvise(fa, 0, 0, LPC_FADV_RANDOM);
	/* C's windows of 128 runs fill the queue (its reads held). */
	full = qs_fill_queue(c, fc, fs.pb, 8, 128u * RUN * QS_PS, 128u * RUN * QS_PS);
	ATT_CHECK(full, "%s: setup: C's jobs did not fill the queue (%u)", bn,
		  qs_ra(c, NULL).queued);
	for (unsigned i = 0; i < RUN; i++) {
		idx[i] = i;
		idx[RUN + i] = 16 + i;
	}
	before = qd_entered();
	qd_set(false, true, 0); /* the request covering A's page 0 is slow */
	pthread_create(&x, NULL, batch, NULL);
	entered = qd_wait_entered(before + 1, QS_WAIT_MS);
	ATT_CHECK(entered, "%s: the batch's run 0-7 held", bn);
	ok = qd_returns_within(&call, QS_WAIT_MS);
	printf("  %s: pread of A's page 16 with GB3's run 0-7 held: %s\n", bn,
	       ok ? "returned" : "waits");
	qd_set(false, false, 0);
	qd_hold2(qd_ino(fs.pb), false);
	pthread_join(call.th, NULL);
	pthread_join(x, NULL);
	ATT_CHECK(ok, "%s: a demand read waited for another run of GB3's batch", bn);
	ATT_CHECK(got == (ssize_t)QS_PS && att_bad_word(buf, QS_PS, 16u * QS_PS, 1) < 0,
		  "%s: pread: wrong bytes (got %zd)", bn, got);
	ATT_CHECK(xrc == 2 * RUN, "%s: lpc_page_get_batch returned %d", bn, xrc);
	qs_check_put(pages, idx, 2 * RUN, bn);
	qs_close(c, &fs);
}

int main(void)
{
	return qs_main(story);
}
