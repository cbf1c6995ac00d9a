/* SPDX-License-Identifier: MIT */
/*
 * regress_qd_gb3share.c - GB3's batch never refuses its own later runs
 * readahead's share (stream.c GB3, run.c ra_window, ra_worker.c Q5; the
 * review's att_qd_gb3share).
 *
 * The story: a 432-frame cache (share 108 pages), readahead_max_kb 32 (runs
 * of 8).  File C's one-page WILLNEED windows fill the queue (every read of C
 * held, every thread at the gate), which also sends the batch to GB3; then
 * lpc_page_get_batch of file A (RANDOM) with (left / 8) + 3 runs of 8
 * adjacent pages, gaps between them: every run fits in what is left of the
 * share, alone.  Expected: one request per run.  When each run's grant was
 * held to the batch's flush, the batch's first runs took the share and the
 * later ones were refused: GB4 read their pages one request each.
 */
#include "qd_story.h"

#define RUN QS_JOB
#define MAXN (32u * RUN)

static void story(int backend)
{
	const char *bn = att_backend_name(backend);
	struct qs_files fs;
	struct lpc_cache *c = qs_open(backend, 432u * QS_PS, "a", 4u << 20, "c", 4u << 20, &fs);
	struct lpc_file *fa = fs.a, *fc = fs.b;
	static struct lpc_page *pages[MAXN];
	static uint64_t idx[MAXN];
	static int errs[MAXN];
	uint64_t share, used;
	unsigned nruns, n, reqs;
	bool full;
	int rc;

	(void)lpc_fadvise(fa, 0, 0, LPC_FADV_RANDOM);
	/* C's one-page windows, a page apart, fill the queue (its reads held). */
	full = qs_fill_queue(c, fc, fs.pb, 200, 2u * QS_PS, QS_PS);
	pthread_mutex_lock(&c->files.ra.lock);
	used = c->files.ra.npages + c->files.ra.respages;
	share = c->pool.nframes / 4;
	pthread_mutex_unlock(&c->files.ra.lock);
	nruns = (unsigned)((share - used) / RUN) + 3;
	printf("  %s: share %" PRIu64 ", used %" PRIu64 "; the batch: %u runs of %u pages\n", bn,
	       share, used, nruns, RUN);
	ATT_CHECK(full && used < share && nruns <= 32, "%s: setup not reached", bn);
	if (!full || used >= share || nruns > 32)
		exit(1);
	n = nruns * RUN;
	for (unsigned r = 0; r < nruns; r++)
		for (unsigned i = 0; i < RUN; i++)
			idx[r * RUN + i] = (uint64_t)r * 2 * RUN + i;
	qd.count_id = qd_ino(fs.pa);
	rc = lpc_page_get_batch(fa, idx, n, 0, pages, errs);
	reqs = atomic_load(&qd.reqs);
	printf("  %s: lpc_page_get_batch: %d of %u pages; requests of A: %u for %u runs\n", bn, rc,
	       n, reqs, nruns);
	ATT_CHECK(rc == (int)n, "%s: lpc_page_get_batch returned %d", bn, rc);
	qs_check_put(pages, idx, n, bn);
	ATT_CHECK(reqs <= nruns, "%s: %u requests for %u runs that each fit in what was left of "
		  "the share: the batch's own grants refused its later runs", bn, reqs, nruns);
	qd_hold2(qd_ino(fs.pb), false);
	qs_close(c, &fs);
}

int main(void)
{
	return qs_main(story);
}
