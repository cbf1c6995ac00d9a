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
	char pa[300], pc[300];
	struct lpc_cache *c = att_cache(432u * QS_PS, QS_PS, backend, LPC_LOOKUP_LOCKLESS, 0, 32);
	struct lpc_file *fa, *fc;
	static struct lpc_page *pages[MAXN];
	static uint64_t idx[MAXN];
	static int errs[MAXN];
	uint64_t share, used;
	unsigned nruns, n, reqs;
	bool full;
	int rc;

	att_make_file("a", 4u << 20, 1, pa, sizeof(pa));
	att_make_file("c", 4u << 20, 2, pc, sizeof(pc));
	qd_install(c, qd_ino(pa));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pc, O_RDONLY, 0, &fc)) {
		printf("open failed\n");
		exit(77);
	}
	(void)lpc_fadvise(fa, 0, 0, LPC_FADV_RANDOM);
	qd_hold2(qd_ino(pc), true);
	for (unsigned k = 0; k < 200 && qs_ra(c, NULL).queued < 64; k++)
		lpc_fadvise(fc, (uint64_t)k * 2 * QS_PS, QS_PS, LPC_FADV_WILLNEED);
	full = QS_WAIT_UNTIL(qs_ra(c, NULL).queued == 64 &&
				     qd_entered() == qs_ra(c, fc).reading,
			     QS_WAIT_MS);
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
	qd.count_id = qd_ino(pa);
	rc = lpc_page_get_batch(fa, idx, n, 0, pages, errs);
	reqs = atomic_load(&qd.reqs);
	printf("  %s: lpc_page_get_batch: %d of %u pages; requests of A: %u for %u runs\n", bn, rc,
	       n, reqs, nruns);
	ATT_CHECK(rc == (int)n, "%s: lpc_page_get_batch returned %d", bn, rc);
	for (unsigned i = 0; i < n; i++) {
		if (!pages[i])
			continue;
		ATT_CHECK(att_bad_word(lpc_page_data(pages[i]), QS_PS, idx[i] * QS_PS, 1) < 0,
			  "%s: page %" PRIu64 ": wrong bytes", bn, idx[i]);
		lpc_page_put(pages[i]);
		pages[i] = NULL;
	}
	ATT_CHECK(reqs <= nruns, "%s: %u requests for %u runs that each fit in what was left of "
		  "the share: the batch's own grants refused its later runs", bn, reqs, nruns);
	qd_hold2(qd_ino(pc), false);
	lpc_file_close(fa);
	lpc_file_close(fc);
	ATT_CHECK(lpc_cache_destroy(c) == 0, "destroy");
}

int main(void)
{
	return qs_main(story);
}
