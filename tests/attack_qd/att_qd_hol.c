/* SPDX-License-Identifier: MIT */
/*
 * att_qd_hol - a demand read waits behind a readahead batch's other run
 * (ra_worker.c Q2's batch against Q6).
 *
 * Q6: "a demand read never waits for a readahead thread, only for the
 * device".  Since 709d776 a readahead thread takes every queued job of a
 * file at once (up to LPC_RUN_BATCH runs) and unlocks no page of the batch
 * until every run of it is read (run.c runs_finish: U5 after the whole
 * lpc_io_readv_batch; sync reads the runs one after another, io_uring reaps
 * every CQE first).  A job in a batch is out of the queue, so Q6's steal
 * cannot find it: a reader of its pages waits for the other runs' reads.
 *
 * Setup: readahead_max_kb 32 (a job = 8 pages).  Every read of the file
 * held; four WILLNEED windows (jobs 0-3) take LPC_RA_PER_FILE threads, then
 * one WILLNEED queues jobs 4-15 (held back by the per-file cap).  The gate
 * then lets everything through but the request that covers page 40 (job 5:
 * one slow region of the file, as a bad sector's retries or a stalled
 * object store would be).  The first thread back takes jobs 4-15 as one
 * batch.  A demand lpc_pread of page 80 (job 10: its own request is not
 * slow) must return within 2 s.  Before the batch (one job per take) job
 * 10 was read by another thread or stolen by the reader (Q6).
 *
 * Usage: att_qd_hol [sync|uring]    Exit: 0 held, 1 defect.
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_qd_hol sync
 */
#include "../attack/att.h"
#include "qd.h"

#define PS 4096u
#define JOB 8u

static struct lpc_file *f;
static uint64_t buf[PS / 8];
static ssize_t got;

static void *demand(void *arg)
{
	(void)arg;
	got = lpc_pread(f, buf, PS, 10u * JOB * PS);
	return NULL;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "sync") ? LPC_IO_SYNC : LPC_IO_URING;
	char p[300];
	struct lpc_cache *c = att_cache(64u << 20, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 32);
	struct qd_call call = { demand, NULL };
	unsigned queued;
	bool entered, ok;

	att_make_file("f", 4u << 20, 1, p, sizeof(p));
	qd_install(c, qd_ino(p));
	if (lpc_file_open(c, p, O_RDONLY, 0, &f)) {
		printf("open failed\n");
		return 77;
	}
	qd_set(true, false, 0);
	for (unsigned k = 0; k < 4; k++) {
		lpc_fadvise(f, (uint64_t)k * JOB * PS, JOB * PS, LPC_FADV_WILLNEED);
		usleep(50000); /* each finds no idle thread: one more starts */
	}
	entered = qd_wait_entered(4, 2000);
	lpc_fadvise(f, 4u * JOB * PS, 12u * JOB * PS, LPC_FADV_WILLNEED);
	pthread_mutex_lock(&c->files.ra.lock);
	queued = c->files.ra.n;
	pthread_mutex_unlock(&c->files.ra.lock);
	printf("  jobs 0-3 held at the device: %s; jobs queued behind the cap: %u\n",
	       entered ? "yes" : "no", queued);
	/* Everything passes but the request covering page 40 (job 5). */
	qd_set(false, true, 5u * JOB);
	entered = qd_wait_entered(5, 2000);
	usleep(200000);
	printf("  job 5's request held: %s; batches handed to the backend %u (most runs %u)\n",
	       entered ? "yes" : "no", atomic_load(&qd.batches), atomic_load(&qd.batch_runs_max));
	ok = qd_returns_within(&call, 2000);
	printf("  demand pread of page 80 (job 10, its own request not held) returned within 2 s: %s\n",
	       ok ? "yes" : "no: it waits for job 5's read, in the same batch");
	qd_set(false, false, 0);
	pthread_join(call.th, NULL);
	ATT_CHECK(ok, "a demand read waited for another run of a readahead batch (Q6)");
	ATT_CHECK(got == (ssize_t)PS && att_bad_word(buf, PS, 10u * JOB * PS, 1) < 0,
		  "wrong bytes (got %zd)", got);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf(att_fails ? "DEFECT: demand read behind a readahead batch (%s)\n" : "held (%s)\n",
	       att_backend_name(backend));
	return att_fails ? 1 : 0;
}
