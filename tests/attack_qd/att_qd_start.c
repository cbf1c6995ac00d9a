/* SPDX-License-Identifier: MIT */
/*
 * att_qd_start - Q1/Q7 still count a file's jobs where the cap now counts
 * its threads: a file with one batch of LPC_RA_PER_FILE jobs or more in
 * flight gets no new readahead thread, and its next job waits with threads
 * to spare.
 *
 * ra_worker.c Q7: "a new thread is started when the queued runs outnumber
 * the idle threads"; Q1 starts one unless "f has fewer than
 * LPC_RA_PER_FILE jobs or a queued job waits for a thread" is false, which
 * is right when each job is one thread (before 709d776).  Q2 now lets one
 * thread take up to LPC_RUN_BATCH jobs of a file, and the cap counts
 * threads (f->ra_reading), but lpc_ra_submit still tests f->ra_inflight
 * (jobs): a file with one thread reading a batch of 12 jobs is "at its
 * cap" for Q1 though Q2 would let 3 more threads read it.  Its next job is
 * queued with no thread to take it until a batch somewhere ends; when the
 * batch is at a slow device, the file's readahead stops behind it.
 *
 * Setup: readahead_max_kb 32 (a job = 8 pages).  File F as in att_qd_hol:
 * four threads, then jobs 4-15 taken as one batch by one thread, which
 * waits on job 5's request (held).  File D: three WILLNEED windows, 50 ms
 * apart, each taken by one of the three idle threads, all held (a slow
 * file).  Threads 4 of LPC_RA_THREADS 8, none idle.  Then one WILLNEED
 * window of F at page 128 (job 16, its request not held): within 1 s it
 * must be taken (Q7: a thread started for it).  Observed: still queued.
 *
 * Usage: att_qd_start [sync|uring]    Exit: 0 held, 1 defect.
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_qd_start sync
 */
#include "../attack/att.h"
#include "qd.h"

#define PS 4096u
#define JOB 8u

static void state(struct lpc_cache *c, struct lpc_file *f, unsigned *n, unsigned *threads,
		  unsigned *idle, unsigned *reading, unsigned *inflight)
{
	pthread_mutex_lock(&c->files.ra.lock);
	*n = c->files.ra.n;
	*threads = c->files.ra.nthreads;
	*idle = c->files.ra.nidle;
	*reading = f->ra_reading;
	*inflight = f->ra_inflight;
	pthread_mutex_unlock(&c->files.ra.lock);
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "sync") ? LPC_IO_SYNC : LPC_IO_URING;
	char pf[300], pd[300];
	struct lpc_cache *c = att_cache(64u << 20, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 32);
	struct lpc_file *f, *d;
	unsigned n, th, idle, rd, inf, n2, th2, idle2;

	att_make_file("f", 4u << 20, 1, pf, sizeof(pf));
	att_make_file("d", 4u << 20, 2, pd, sizeof(pd));
	qd_install(c, qd_ino(pf));
	if (lpc_file_open(c, pf, O_RDONLY, 0, &f) || lpc_file_open(c, pd, O_RDONLY, 0, &d)) {
		printf("open failed\n");
		return 77;
	}
	qd_set(true, false, 0);
	for (unsigned k = 0; k < 4; k++) {
		lpc_fadvise(f, (uint64_t)k * JOB * PS, JOB * PS, LPC_FADV_WILLNEED);
		usleep(50000);
	}
	(void)qd_wait_entered(4, 2000);
	lpc_fadvise(f, 4u * JOB * PS, 12u * JOB * PS, LPC_FADV_WILLNEED);
	qd_set(false, true, 5u * JOB); /* one batch 4-15, held at job 5 */
	(void)qd_wait_entered(5, 2000);
	usleep(200000);
	qd_hold2(qd_ino(pd), true);
	for (unsigned k = 0; k < 3; k++) {
		lpc_fadvise(d, (uint64_t)k * 2 * JOB * PS, JOB * PS, LPC_FADV_WILLNEED);
		usleep(50000);
	}
	(void)qd_wait_entered(8, 2000);
	state(c, f, &n, &th, &idle, &rd, &inf);
	printf("  before: queued %u, threads %u (idle %u); F: %u thread(s) reading, %u jobs in flight\n",
	       n, th, idle, rd, inf);
	lpc_fadvise(f, 128u * PS, JOB * PS, LPC_FADV_WILLNEED);
	usleep(1000000);
	state(c, f, &n2, &th2, &idle2, &rd, &inf);
	printf("  1 s after F's job 16 was queued: queued %u, threads %u (idle %u); F: %u reading\n",
	       n2, th2, idle2, rd);
	ATT_CHECK(n == 0 && idle == 0 && th < 8, "setup: not the state looked for");
	ATT_CHECK(n2 == 0, "F's job waits in the queue with %u of 8 threads started and none "
		  "idle; F has %u thread reading (cap 4)", th2, rd);
	qd_set(false, false, 0);
	qd_hold2(qd_ino(pd), false);
	lpc_file_close(f);
	lpc_file_close(d);
	lpc_cache_destroy(c);
	att_cleanup();
	printf(att_fails ? "DEFECT: no thread started for a file reading one batch (%s)\n"
			 : "held (%s)\n", att_backend_name(backend));
	return att_fails ? 1 : 0;
}
