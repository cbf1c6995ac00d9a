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

/* A story's cache and files.  a (tag 1) is the file the gate counts; b
 * (tag 2) the other one, or NULL. */
struct qs_files {
	struct lpc_file *a, *b;
	char pa[300], pb[300];
};

/* A cache of `bytes` on backend (lockless, readahead_max_kb 32: a job or
 * run is QS_JOB pages) with qd's gate over it counting file a_name (a_size
 * bytes), and file b_name (b_size bytes) where b_name is not NULL: both
 * made, the gate installed (qd_install: before the files open, no I/O in
 * flight), then both opened into *fs.  Exit 77 where one does not open. */
static inline struct lpc_cache *qs_open(int backend, size_t bytes, const char *a_name,
					uint64_t a_size, const char *b_name, uint64_t b_size,
					struct qs_files *fs)
{
	struct lpc_cache *c = att_cache(bytes, QS_PS, backend, LPC_LOOKUP_LOCKLESS, 0, 32);

	att_make_file(a_name, a_size, 1, fs->pa, sizeof(fs->pa));
	if (b_name)
		att_make_file(b_name, b_size, 2, fs->pb, sizeof(fs->pb));
	qd_install(c, qd_ino(fs->pa));
	fs->b = NULL;
	if (lpc_file_open(c, fs->pa, O_RDONLY, 0, &fs->a) ||
	    (b_name && lpc_file_open(c, fs->pb, O_RDONLY, 0, &fs->b))) {
		printf("open failed\n");
		exit(77);
	}
	return c;
}

/* Closes qs_open's files and destroys its cache (checked). */
static inline void qs_close(struct lpc_cache *c, struct qs_files *fs)
{
	lpc_file_close(fs->a);
	if (fs->b)
		lpc_file_close(fs->b);
	ATT_CHECK(lpc_cache_destroy(c) == 0, "destroy");
}

/* Every read held (qd_set(true, ...)); four WILLNEED windows of f (jobs
 * 0-3, QS_JOB pages each) each reach the gate, so each found no idle thread
 * and a new one was started, to LPC_RA_PER_FILE; then one WILLNEED queues
 * jobs 4-15, held back by the per-file cap.  The gate is left closed. */
static inline void qs_hold_jobs(struct lpc_file *f, const char *bn)
{
	qd_set(true, false, 0);
	for (unsigned k = 0; k < 4; k++) {
		lpc_fadvise(f, (uint64_t)k * QS_JOB * QS_PS, QS_JOB * QS_PS, LPC_FADV_WILLNEED);
		ATT_CHECK(qd_wait_entered(k + 1, QS_WAIT_MS), "%s: job %u held at the device", bn,
			  k);
	}
	lpc_fadvise(f, 4u * QS_JOB * QS_PS, 12u * QS_JOB * QS_PS, LPC_FADV_WILLNEED);
}

/* Every read of fc held (qd_hold2), fc's WILLNEED windows (len bytes each,
 * stride bytes apart, at most n) fill the readahead queue: then 64 jobs
 * wait and every thread reading fc (at most its cap) is at the gate, which
 * also sends a lpc_page_get_batch to GB3.  Return: whether that state was
 * reached within QS_WAIT_MS. */
static inline bool qs_fill_queue(struct lpc_cache *c, struct lpc_file *fc, const char *pc,
				 unsigned n, uint64_t stride, uint64_t len)
{
	qd_hold2(qd_ino(pc), true);
	for (unsigned k = 0; k < n && qs_ra(c, NULL).queued < 64; k++)
		lpc_fadvise(fc, (uint64_t)k * stride, len, LPC_FADV_WILLNEED);
	return QS_WAIT_UNTIL(qs_ra(c, NULL).queued == 64 && qd_entered() == qs_ra(c, fc).reading,
			     QS_WAIT_MS);
}

/* Checks the bytes of each page a lpc_page_get_batch of file tag 1 returned
 * (pages[i] is page idx[i], NULL where none), puts it and clears its slot. */
static inline void qs_check_put(struct lpc_page **pages, const uint64_t *idx, unsigned n,
				const char *bn)
{
	for (unsigned i = 0; i < n; i++) {
		if (!pages[i])
			continue;
		ATT_CHECK(att_bad_word(lpc_page_data(pages[i]), QS_PS, idx[i] * QS_PS, 1) < 0,
			  "%s: batch page %" PRIu64 ": wrong bytes", bn, idx[i]);
		lpc_page_put(pages[i]);
		pages[i] = NULL;
	}
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
