/* SPDX-License-Identifier: MIT */
/*
 * att_qd_gb3share - GB3's batch holds every run's grant until the batch is
 * read, so its own earlier runs take the share from its later ones: with
 * less than a batch left of readahead's share, the later runs are refused
 * and read by GB4 one page per request, though no other reader holds that
 * part of the share.
 *
 * stream.c GB3: the runs refused by the threads "are offered to the window
 * reader again ... still through Q5's page reservation, so this thread
 * reads only the pages it is granted (... a share taken grants nothing, and
 * the rest is left to GB4's per-page misses"; lpc.h lpc_page_get_batch:
 * the absent pages are read "as readahead reads a window: adjacent ones in
 * one I/O".  Before 709d776 GB3 read each run and gave its grant back
 * before it reserved the next, so every run whose size was left of the
 * share was read in one request; now (run.c ra_window with a batch) each
 * run's grant is held to lpc_filemap_batch_flush, which runs only when the
 * batch is full (LPC_RUN_BATCH runs or LPC_RUN_BATCH_PAGES pages) or the
 * call ends: a reservation of 0 ends the window, and its pages go to GB4.
 *
 * Setup: a 432-frame cache (share 108), readahead_max_kb 32 (runs of 8).
 * File C's one-page WILLNEED windows fill the queue (its reads held), which
 * also sends the batch to GB3; what is left of the share is measured; then
 * lpc_page_get_batch of file A (RANDOM) with (left / 8) + 3 runs of 8
 * adjacent pages, gaps between them.  Expected: one request per run.
 *
 * Usage: att_qd_gb3share [sync|uring]    Exit: 0 held, 1 defect, 77 setup.
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_qd_gb3share sync
 */
#include "../attack/att.h"
#include "qd.h"

#define PS 4096u
#define RUN 8u
#define MAXN (32u * RUN)

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "sync") ? LPC_IO_SYNC : LPC_IO_URING;
	char pa[300], pc[300];
	struct lpc_cache *c = att_cache(432u * PS, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 32);
	struct lpc_file *fa, *fc;
	static struct lpc_page *pages[MAXN];
	static uint64_t idx[MAXN];
	static int errs[MAXN];
	uint64_t share, used;
	unsigned q = 0, nruns, n, reqs;
	int rc;

	att_make_file("a", 4u << 20, 1, pa, sizeof(pa));
	att_make_file("c", 4u << 20, 2, pc, sizeof(pc));
	qd_install(c, qd_ino(pa));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pc, O_RDONLY, 0, &fc)) {
		printf("open failed\n");
		return 77;
	}
	(void)lpc_fadvise(fa, 0, 0, LPC_FADV_RANDOM);
	qd_hold2(qd_ino(pc), true);
	for (unsigned k = 0; k < 200 && q < 64; k++) {
		lpc_fadvise(fc, (uint64_t)k * 2 * PS, PS, LPC_FADV_WILLNEED);
		pthread_mutex_lock(&c->files.ra.lock);
		q = c->files.ra.n;
		pthread_mutex_unlock(&c->files.ra.lock);
	}
	usleep(100000);
	pthread_mutex_lock(&c->files.ra.lock);
	q = c->files.ra.n;
	used = c->files.ra.npages + c->files.ra.respages;
	share = c->pool.nframes / 4;
	pthread_mutex_unlock(&c->files.ra.lock);
	nruns = (unsigned)((share - used) / RUN) + 3;
	printf("  C's jobs queued %u of 64; share %" PRIu64 ", used %" PRIu64 ", left %" PRIu64
	       "; the batch: %u runs of %u pages\n", q, share, used, share - used, nruns, RUN);
	if (q < 64 || used >= share || nruns > 32) {
		printf("  setup not reached\n");
		return 77;
	}
	n = nruns * RUN;
	for (unsigned r = 0; r < nruns; r++)
		for (unsigned i = 0; i < RUN; i++)
			idx[r * RUN + i] = (uint64_t)r * 2 * RUN + i;
	qd.count_id = qd_ino(pa);
	rc = lpc_page_get_batch(fa, idx, n, 0, pages, errs);
	reqs = atomic_load(&qd.reqs);
	printf("  lpc_page_get_batch: %d of %u pages; requests of A: %u for %u runs\n", rc, n,
	       reqs, nruns);
	ATT_CHECK(rc == (int)n, "lpc_page_get_batch returned %d", rc);
	for (unsigned i = 0; i < n; i++) {
		if (!pages[i])
			continue;
		ATT_CHECK(att_bad_word(lpc_page_data(pages[i]), PS, idx[i] * PS, 1) < 0,
			  "page %" PRIu64 ": wrong bytes", idx[i]);
		lpc_page_put(pages[i]);
	}
	ATT_CHECK(reqs <= nruns, "%u requests for %u runs that each fit in what was left of "
		  "the share: the batch's own held grants refused its later runs (GB4 read them "
		  "one page each)", reqs, nruns);
	qd_hold2(qd_ino(pc), false);
	lpc_file_close(fa);
	lpc_file_close(fc);
	lpc_cache_destroy(c);
	att_cleanup();
	printf(att_fails ? "DEFECT: GB3's batch refuses its own later runs (%s)\n"
			 : "held (%s)\n", att_backend_name(backend));
	return att_fails ? 1 : 0;
}
