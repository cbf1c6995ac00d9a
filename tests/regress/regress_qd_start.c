/* SPDX-License-Identifier: MIT */
/*
 * regress_qd_start.c - Q1 starts a readahead thread for a file that has
 * fewer than LPC_RA_PER_FILE threads reading it, however many jobs one
 * thread's batch holds (ra_worker.c Q1, Q2, Q7; the review's att_qd_start).
 *
 * The story: file F as in regress_qd_hol: four threads, then jobs 4-15,
 * taken on io_uring as one batch by one thread, held at job 5's request
 * (the other threads idle again).  File D: three WILLNEED windows, each
 * taken by one of the three idle threads and held.  Threads 4 of
 * LPC_RA_THREADS, none idle; F has one thread reading and 12 jobs in
 * flight.  Then one WILLNEED window of F at page 128 (job 16, its request
 * not held) must be taken from the queue (a thread started for it).  When
 * Q1 counted F's jobs (ra_inflight, 12) against the cap of 4, it started
 * none, and job 16 stayed queued until a batch ended.
 */
#include "qd_story.h"

static void story(int backend)
{
	const char *bn = att_backend_name(backend);
	struct qs_files fs;
	struct lpc_cache *c = qs_open(backend, 64u << 20, "f", 4u << 20, "d", 4u << 20, &fs);
	struct lpc_file *f = fs.a, *d = fs.b;
	const char *pd = fs.pb;
	struct qs_ra s;
	bool ok;

	qs_hold_jobs(f, bn);
	qd_set(false, true, 5u * QS_JOB); /* jobs 4-15 go on; job 5 held */
	ATT_CHECK(qd_wait_entered(5, QS_WAIT_MS), "%s: job 5 held", bn);
	/* Every job of F read but job 5; every thread but its reader idle. */
	ok = QS_WAIT_UNTIL((s = qs_ra(c, f)).queued == 0 && s.idle + 1 == s.threads, QS_WAIT_MS);
	ATT_CHECK(ok, "%s: setup: queued %u, threads %u, idle %u", bn, s.queued, s.threads, s.idle);
	qd_hold2(qd_ino(pd), true);
	for (unsigned k = 0; k < 3; k++) {
		lpc_fadvise(d, (uint64_t)k * 2 * QS_JOB * QS_PS, QS_JOB * QS_PS, LPC_FADV_WILLNEED);
		ATT_CHECK(qd_wait_entered(6 + k, QS_WAIT_MS), "%s: D's job %u held", bn, k);
	}
	s = qs_ra(c, f);
	printf("  %s: before: queued %u, threads %u (idle %u); F: %u reading, %u jobs in flight\n",
	       bn, s.queued, s.threads, s.idle, s.reading, s.inflight);
	ATT_CHECK(s.queued == 0 && s.idle == 0 && s.threads < 8 && s.reading == 1,
		  "%s: setup: not the state looked for", bn);
	lpc_fadvise(f, 128u * QS_PS, QS_JOB * QS_PS, LPC_FADV_WILLNEED);
	ok = QS_WAIT_UNTIL((s = qs_ra(c, f)).queued == 0, QS_WAIT_MS);
	printf("  %s: after F's job 16: queued %u, threads %u (idle %u)\n", bn, s.queued,
	       s.threads, s.idle);
	ATT_CHECK(ok, "%s: F's job waits in the queue with %u of 8 threads started and none "
		  "idle; F has %u thread reading (cap 4)", bn, s.threads, s.reading);
	qd_set(false, false, 0);
	qd_hold2(qd_ino(pd), false);
	qs_close(c, &fs);
}

int main(void)
{
	return qs_main(story);
}
