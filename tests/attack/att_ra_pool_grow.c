/* SPDX-License-Identifier: MIT */
/*
 * att_ra_pool_grow - the readahead pool grows by one thread only at a
 * submit that finds no idle thread (ra_worker.c Q1: `w->nidle == 0`), and
 * an idle thread counts as idle from the moment it is signalled until it
 * wakes and takes the lock.  Two windows started back to back (a slow
 * file's, then a fast file's) find the one thread "idle" both times: no
 * second thread starts, the thread takes the oldest job (the slow file's)
 * and blocks at the device, and the fast file's job, its page inserted
 * LOCKED (Q0), waits in the queue with no thread to take it.  A demand read
 * of that page then waits for the slow file's device (head-of-line with a
 * single slow file).  Nothing starts a thread later but another submit.
 * Each round: a fresh cache, WILLNEED(a, page 0) then WILLNEED(c, page 0),
 * then pread(c, page 0) with a 1 s limit.
 * Usage: att_ra_pool_grow [sync|uring] [rounds]    Exit: 0 held, 1 defect.
 */
#include "att.h"
#include "g2.h"
#include "filemap/filemap.h"

static const size_t PS = 4096;
static struct lpc_file *fc;
static ssize_t got;
static uint64_t buf[512];

static void *read_c(void *arg)
{
	(void)arg;
	got = lpc_pread(fc, buf, PS, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	int backend = argc > 1 && !strcmp(argv[1], "sync") ? LPC_IO_SYNC : LPC_IO_URING;
	int rounds = argc > 2 ? atoi(argv[2]) : 10, stuck = 0;
	char pa[300], pc[300];

	att_make_file("a", 1 << 20, 1, pa, sizeof(pa));
	att_make_file("c", 1 << 20, 3, pc, sizeof(pc));
	for (int r = 0; r < rounds; r++) {
		struct lpc_cache *c = att_cache(64 << 20, PS, backend, LPC_LOOKUP_LOCKLESS, 0, 0);
		struct lpc_file *fa;
		struct g2_call call = { read_c, NULL };
		unsigned threads, queued;
		bool ok;

		g2.nids = 0;
		g2_install(c);
		if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pc, O_RDONLY, 0, &fc)) {
			printf("open failed\n");
			return 77;
		}
		g2_close(g2_id(pa));
		lpc_fadvise(fa, 0, PS, LPC_FADV_WILLNEED);
		lpc_fadvise(fc, 0, PS, LPC_FADV_WILLNEED);
		ok = g2_returns_within(&call, 1000);
		pthread_mutex_lock(&c->files.ra.lock);
		threads = c->files.ra.nthreads;
		queued = c->files.ra.n;
		pthread_mutex_unlock(&c->files.ra.lock);
		if (!ok) {
			stuck++;
			printf("  round %d: pread(c, page 0) still waiting after 1 s; readahead threads %u,"
			       " jobs queued %u\n", r, threads, queued);
		}
		g2_open();
		pthread_join(call.th, NULL);
		ATT_CHECK(got == (ssize_t)PS && att_bad_word(buf, PS, 0, 3) < 0, "wrong bytes");
		lpc_file_close(fa);
		lpc_file_close(fc);
		lpc_cache_destroy(c);
	}
	att_cleanup();
	printf("  %d of %d rounds: a fast file's read waited behind one slow file's window\n",
	       stuck, rounds);
	ATT_CHECK(stuck == 0, "the pool did not grow for a job queued behind a held one");
	printf(att_fails ? "DEFECT: readahead pool does not grow under a burst (%s)\n" : "held (%s)\n",
	       att_backend_name(backend));
	return att_fails ? 1 : 0;
}
