/* SPDX-License-Identifier: MIT */
/*
 * att_willneed_block - lpc_fadvise(WILLNEED) waits for the device.  It
 * hands each run of its range to the readahead threads (readahead.c,
 * lpc_fadvise; run.c W2); when the queue is full (LPC_RA_QUEUE jobs) or
 * no thread can be started, lpc_ra_submit says false and the caller reads
 * the run itself (run_finish), so on a slow device a WILLNEED of more than
 * about LPC_RA_QUEUE + LPC_RA_PER_FILE runs (here 80 MiB: 80 runs of
 * 1 MiB) blocks the calling thread until the device answers.  Issue 18:
 * WILLNEED "start reading the range and return at once: the prefetch".
 * The same fallback makes a marker hit read its window synchronously
 * (lpc_ra_on_mark), so an established scanner waits for the device once
 * the queue is full.
 * Usage: att_willneed_block [sync|uring]    Exit: 0 held, 1 defect.
 */
#include "att.h"
#include "g2.h"
#include "filemap/filemap.h"

static struct lpc_file *fa;
static int rc = 1;

static void *willneed(void *arg)
{
	(void)arg;
	rc = lpc_fadvise(fa, 0, 0, LPC_FADV_WILLNEED);
	return NULL;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "sync") ? LPC_IO_SYNC : LPC_IO_URING;
	char pa[300];
	struct lpc_cache *c = att_cache(256 << 20, 4096, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
	struct g2_call call = { willneed, NULL };
	unsigned threads, queued, held;
	bool ok;

	att_make_file("a", 80 << 20, 1, pa, sizeof(pa));
	g2_install(c);
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa)) {
		printf("open failed\n");
		return 77;
	}
	g2_close(g2_id(pa));
	ok = g2_returns_within(&call, 3000);
	held = g2_entered_after(0);
	pthread_mutex_lock(&c->files.ra.lock);
	threads = c->files.ra.nthreads;
	queued = c->files.ra.n;
	pthread_mutex_unlock(&c->files.ra.lock);
	printf("  WILLNEED of 80 MiB on a held file returned within 3 s: %s (reads held %u,"
	       " readahead threads %u, jobs queued %u)\n",
	       ok ? "yes" : "no, the caller is reading at the device", held, threads, queued);
	g2_open();
	pthread_join(call.th, NULL);
	ATT_CHECK(ok, "WILLNEED waited for the device");
	ATT_CHECK(rc == 0, "lpc_fadvise: %d", rc);
	lpc_file_close(fa);
	lpc_cache_destroy(c);
	att_cleanup();
	printf(att_fails ? "DEFECT: WILLNEED blocks on a slow device (%s)\n" : "held (%s)\n",
	       att_backend_name(backend));
	return att_fails ? 1 : 0;
}
