/* SPDX-License-Identifier: MIT */
/*
 * att_qd_direct - a batch on a device that refuses direct transfers: only
 * the first refused run is read again buffered; every other run of the
 * batch keeps -EINVAL and its pages are dropped.
 *
 * io.h, lpc_io_readv_batch: "EINVAL on an O_DIRECT file moves it off
 * O_DIRECT and the run is read again buffered" (each run).  io.c: the
 * front's loop calls direct_off(f) for each run that returned -EINVAL, and
 * direct_off is true only for the call that cleared f->direct: the first
 * run.  Runs 2.. of the batch keep -EINVAL (their requests were made on
 * O_DIRECT before any was retried), so run.c drops their pages and counts
 * read errors; GB4 then reads each of those pages alone (one request per
 * page).  lpc_io_readv (one run per request, before the batch) retried
 * every run it saw refused.
 *
 * Setup: the device refuses every request of file A while A is on
 * O_DIRECT (qd.h's einval device: a 512 B page on a 4Kn disk refuses
 * them so).  File C fills the readahead queue (its reads held), so
 * lpc_page_get_batch's windows go to GB3's batch.  lpc_page_get_batch of
 * A's pages 0-7, 16-23, 32-39 (three runs, RANDOM advice): every page must
 * come back right, with at most 4 requests of A (3 runs + the retry of the
 * first) and no read error.  Observed: 2 runs dropped, 16 more one-page
 * requests, read_errors 2.
 *
 * Usage: att_qd_direct [sync|uring]    Exit: 0 held, 1 defect, 77 skip
 * (no O_DIRECT on the file system).
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_qd_direct sync
 */
#include "../attack/att.h"
#include "qd.h"

#define PS 4096u
#define RUN 8u
#define N (3 * RUN)

static unsigned queued(struct lpc_cache *c)
{
	unsigned n;

	pthread_mutex_lock(&c->files.ra.lock);
	n = c->files.ra.n;
	pthread_mutex_unlock(&c->files.ra.lock);
	return n;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "sync") ? LPC_IO_SYNC : LPC_IO_URING;
	char pa[300], pc[300];
	struct lpc_cache *c = att_cache(64u << 20, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 32);
	struct lpc_file *fa, *fc;
	struct lpc_page *pages[N];
	struct lpc_stats s0, s1;
	uint64_t idx[N];
	int errs[N], rc;
	unsigned q, reqs;

	att_make_file("a", 1u << 20, 1, pa, sizeof(pa));
	att_make_file("c", 8u << 20, 2, pc, sizeof(pc));
	qd_install(c, qd_ino(pa));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pc, O_RDONLY, 0, &fc)) {
		printf("open failed\n");
		return 77;
	}
	if (!atomic_load(&fa->io.direct)) {
		printf("  file A is not on O_DIRECT here: skip\n");
		return 77;
	}
	(void)lpc_fadvise(fa, 0, 0, LPC_FADV_RANDOM);
	qd_hold2(qd_ino(pc), true);
	for (unsigned k = 0; k < 8 && queued(c) < 64; k++) {
		lpc_fadvise(fc, (uint64_t)k * 128u * RUN * PS, 128u * RUN * PS, LPC_FADV_WILLNEED);
		usleep(100000);
	}
	q = queued(c);
	printf("  file C's jobs queued (reads held): %u of 64\n", q);
	for (unsigned r = 0; r < 3; r++)
		for (unsigned i = 0; i < RUN; i++)
			idx[r * RUN + i] = r * 16u + i;
	qd.count_id = qd_ino(pa);
	qd.einval = true;
	lpc_stats(c, &s0);
	rc = lpc_page_get_batch(fa, idx, N, 0, pages, errs);
	lpc_stats(c, &s1);
	reqs = atomic_load(&qd.reqs);
	printf("  lpc_page_get_batch: %d of %u; requests of A: %u (refused -EINVAL: %u); "
	       "read_errors %" PRIu64 ", direct_fallbacks %" PRIu64 "\n",
	       rc, N, reqs, atomic_load(&qd.einvals), s1.read_errors - s0.read_errors,
	       s1.direct_fallbacks - s0.direct_fallbacks);
	ATT_CHECK(q == 64, "the queue did not fill: GB3 not reached (test setup)");
	ATT_CHECK(rc == (int)N, "lpc_page_get_batch returned %d", rc);
	for (unsigned i = 0; i < N; i++) {
		if (!pages[i]) {
			ATT_CHECK(0, "page %" PRIu64 ": error %d", idx[i], errs[i]);
			continue;
		}
		ATT_CHECK(att_bad_word(lpc_page_data(pages[i]), PS, idx[i] * PS, 1) < 0,
			  "page %" PRIu64 ": wrong bytes", idx[i]);
		lpc_page_put(pages[i]);
	}
	/* A batch submits its 3 runs together, so each may be refused once
	 * (3) and read again buffered (3); more means pages read one by one. */
	ATT_CHECK(reqs <= 6, "%u requests for 3 runs: the runs refused after the first were "
		  "dropped, not read again buffered, and GB4 read their pages one by one", reqs);
	ATT_CHECK(s1.read_errors == s0.read_errors,
		  "%" PRIu64 " read errors counted for a device that only refused O_DIRECT",
		  s1.read_errors - s0.read_errors);
	qd_hold2(qd_ino(pc), false);
	lpc_file_close(fa);
	lpc_file_close(fc);
	lpc_cache_destroy(c);
	att_cleanup();
	printf(att_fails ? "DEFECT: a batch's refused direct runs are dropped (%s)\n"
			 : "held (%s)\n", att_backend_name(backend));
	return att_fails ? 1 : 0;
}
