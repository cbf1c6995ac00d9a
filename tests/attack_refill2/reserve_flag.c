/* SPDX-License-Identifier: MIT */
/*
 * reserve_flag.c - review of 00ec20b: when does lpc_ra_reserve set
 * *queue_full (the flag that makes lpc_ra_on_mark skip QS4's room growth,
 * through ra_window's queue_cut)?  filemap.h says "set ... if the share had
 * room and the queue had none"; readahead.c says the window "ended for
 * want of a queue slot alone".  White-box: the worker's counters are set
 * by hand under w->lock (no readahead thread has started: nothing is
 * queued), lpc_ra_reserve is called as run.c's ra_window calls it (a run of
 * WANT pages, with a slot), and the counters are put back.
 *
 *   stop     w->stop (a stopping cache), queue empty
 *   failed   w->failed (a readahead thread could not start), queue empty
 *   short    the queue full (LPC_RA_QUEUE slots reserved) and 1 page of
 *            the share left for a run of WANT pages: the same call with a
 *            free slot is granted 1 page, so the window would have been
 *            cut by the share at its next run anyway
 *   full     the queue full, the share empty (control: flag must stay clear)
 *   noslot   slot false (LOCKED mode / !async), queue full (control)
 *
 * Exit: 1 when the flag comes out true in a case where the queue alone was
 * not what refused (stop, failed, short); 0 otherwise.  Release build.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define WANT 64u

static struct lpc_cache *cache;

struct saved {
	unsigned nres;
	uint64_t respages;
	bool stop, failed;
};

static uint64_t try_case(const char *name, unsigned nres, uint64_t respages, bool stop,
			 bool failed, bool slot, bool *qf)
{
	struct lpc_ra_worker *w = &cache->files.ra;
	struct saved sv;
	uint64_t got;

	pthread_mutex_lock(&w->lock);
	sv = (struct saved){ w->nres, w->respages, w->stop, w->failed };
	w->nres = nres;
	w->respages = respages;
	w->stop = stop;
	w->failed = failed;
	pthread_mutex_unlock(&w->lock);
	*qf = false;
	got = lpc_ra_reserve(&cache->files, WANT, slot, qf);
	if (got)
		lpc_ra_unreserve(&cache->files, got, slot);
	pthread_mutex_lock(&w->lock);
	w->nres = sv.nres;
	w->respages = sv.respages;
	w->stop = sv.stop;
	w->failed = sv.failed;
	pthread_mutex_unlock(&w->lock);
	printf("  %-7s queued %u + reserved %u slots of %u, share left %4" PRIu64
	       ", slot %d: granted %2" PRIu64 ", queue_full %d\n",
	       name, cache->files.ra.n, nres, LPC_RA_QUEUE,
	       cache->pool.nframes / 4 - respages, slot, got, *qf);
	return got;
}

int main(void)
{
	struct lpc_config cfg;
	uint64_t share, got;
	bool qf;
	int ret = 0;

	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)4096 * 4096;
	cfg.page_size = 4096;
	cfg.io_backend = LPC_IO_NULL;
	if (lpc_cache_create(&cfg, &cache) || !cache)
		return 2;
	share = cache->pool.nframes / 4;
	printf("share %" PRIu64 " pages, run of %u pages, readahead threads started: %u\n", share,
	       WANT, cache->files.ra.nthreads);

	try_case("stop", 0, 0, true, false, true, &qf);
	if (qf) {
		printf("  DEFECT: queue_full set for a stopping cache whose queue had every slot free\n");
		ret = 1;
	}
	try_case("failed", 0, 0, false, true, true, &qf);
	if (qf) {
		printf("  DEFECT: queue_full set after a failed thread start, queue had every slot free\n");
		ret = 1;
	}
	try_case("short", LPC_RA_QUEUE, share - 1, false, false, true, &qf);
	got = try_case("short'", 0, share - 1, false, false, true, &(bool){ false });
	if (qf && got < WANT) {
		printf("  DEFECT: queue_full (\"the queue alone\") set while the share had %" PRIu64
		       " of the run's %u pages: with a slot the run is granted %" PRIu64
		       " and the window's next run is refused by the share (a QS4 cut)\n",
		       share - (share - 1), WANT, got);
		ret = 1;
	}
	try_case("full", LPC_RA_QUEUE, share, false, false, true, &qf);
	if (qf) {
		printf("  unexpected: queue_full with no share left\n");
		ret = 1;
	}
	try_case("noslot", LPC_RA_QUEUE, 0, false, false, false, &qf);
	if (qf) {
		printf("  unexpected: queue_full without a slot asked for\n");
		ret = 1;
	}
	/* Added after the review: the case the flag is for, the queue full
	 * and the share with room for the whole run. */
	try_case("queue", LPC_RA_QUEUE, 0, false, false, true, &qf);
	if (!qf) {
		printf("  DEFECT: queue_full not set when the queue alone refused\n");
		ret = 1;
	}
	lpc_cache_destroy(cache);
	return ret;
}
