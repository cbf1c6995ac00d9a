/* SPDX-License-Identifier: MIT */
/* qd_story.h - the batched read's stories (regress_qd_*.c): the review's
 * programs (tests/attack_qd/, whose gate qd.h they use) made deterministic:
 * every step waits for the state it needs (a request held at the gate, a
 * queue length, threads idle) instead of sleeping, and a check that a read
 * does not wait gives it 10 s, which only a read held for another run's
 * request ever takes.  Each story runs on io_uring (where a kernel refuses
 * it, the cache's sync fallback) and on sync. */
#ifndef QD_STORY_H
#define QD_STORY_H
#include "../attack/att.h"
#include "../attack_qd/qd.h"

#define QS_PS 4096u
#define QS_JOB 8u      /* readahead_max_kb 32: a job or run is 8 pages */
#define QS_WAIT_MS 10000

/* Polls cond every millisecond for at most ms; its last value. */
#define QS_WAIT_UNTIL(cond, ms)                                                  \
	({                                                                       \
		bool qs_ok_ = (cond);                                            \
		for (int qs_i_ = 0; !qs_ok_ && qs_i_ < (ms); qs_i_++) {          \
			usleep(1000);                                            \
			qs_ok_ = (cond);                                         \
		}                                                                \
		qs_ok_;                                                          \
	})

/* The readahead pool's state, under its lock. */
struct qs_ra {
	unsigned queued, threads, idle, reading, inflight;
};

static inline struct qs_ra qs_ra(struct lpc_cache *c, struct lpc_file *f)
{
	struct qs_ra s;

	pthread_mutex_lock(&c->files.ra.lock);
	s.queued = c->files.ra.n;
	s.threads = c->files.ra.nthreads;
	s.idle = c->files.ra.nidle;
	s.reading = f ? f->ra_reading : 0;
	s.inflight = f ? f->ra_inflight : 0;
	pthread_mutex_unlock(&c->files.ra.lock);
	return s;
}

/* Runs story(backend) on io_uring, then on sync.  Exit: 0 held, 1 defect. */
static inline int qs_main(void (*story)(int backend))
{
	story(LPC_IO_URING);
	qd_reset();
	story(LPC_IO_SYNC);
	att_cleanup();
	printf(att_fails ? "FAIL\n" : "PASS\n");
	return att_fails ? 1 : 0;
}
#endif
