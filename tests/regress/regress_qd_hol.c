/* SPDX-License-Identifier: MIT */
/*
 * regress_qd_hol.c - a demand read waits for its own run's request, never
 * for another run of a readahead thread's batch (ra_worker.c Q2 and Q6;
 * io.c RQ3, uring.c UB2; the review's att_qd_hol, tests/attack_qd/).
 *
 * The story: every read of file F held; four WILLNEED windows (jobs 0-3,
 * 8 pages each) each reach the gate, so each found no idle thread and a new
 * one was started, to LPC_RA_PER_FILE; one WILLNEED then queues jobs 4-15,
 * held back by the per-file cap.  The gate lets everything through but the
 * request that covers page 40 (job 5: a slow region of the file).  The
 * first thread back takes jobs 4-15 (on io_uring as one batch, Q2; on sync
 * one job at a time).  A demand lpc_pread of page 80 (job 10, its own
 * request not held) must return while job 5 is still held.  Before each run
 * of a batch was ended at its own completion, job 10's pages stayed locked
 * until every CQE of the batch was reaped: the pread waited for job 5.
 */
#include "qd_story.h"

static struct lpc_file *f;
static uint64_t buf[QS_PS / 8];
static ssize_t got;

static void *demand(void *arg)
{
	(void)arg;
	got = lpc_pread(f, buf, QS_PS, 10u * QS_JOB * QS_PS);
	return NULL;
}

static void story(int backend)
{
	struct qs_files fs;
	struct lpc_cache *c = qs_open(backend, 64u << 20, "f", 4u << 20, NULL, 0, &fs);
	struct qd_call call = { .fn = demand };
	struct qs_ra s;
	bool entered, ok;

	f = fs.a;
	qs_hold_jobs(f, att_backend_name(backend));
	s = qs_ra(c, f);
	ATT_CHECK(s.queued == 12 && s.reading == 4,
		  "%s: setup: %u jobs queued behind the cap, %u threads reading (12, 4)",
		  att_backend_name(backend), s.queued, s.reading);
	qd_set(false, true, 5u * QS_JOB); /* only job 5's request is slow */
	entered = qd_wait_entered(5, QS_WAIT_MS);
	ATT_CHECK(entered, "%s: job 5's request held", att_backend_name(backend));
	ok = qd_returns_within(&call, QS_WAIT_MS);
	printf("  %s: batches %u (most runs %u); pread of page 80 with job 5 held: %s\n",
	       att_backend_name(backend), atomic_load(&qd.batches),
	       atomic_load(&qd.batch_runs_max), ok ? "returned" : "waits");
	qd_set(false, false, 0);
	pthread_join(call.th, NULL);
	ATT_CHECK(ok, "%s: a demand read waited for another run of a readahead batch (Q6)",
		  att_backend_name(backend));
	ATT_CHECK(got == (ssize_t)QS_PS && att_bad_word(buf, QS_PS, 10u * QS_JOB * QS_PS, 1) < 0,
		  "%s: wrong bytes (got %zd)", att_backend_name(backend), got);
	qs_close(c, &fs);
}

int main(void)
{
	return qs_main(story);
}
