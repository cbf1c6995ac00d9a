/* SPDX-License-Identifier: MIT */
/*
 * att_queue.c - one read stream against another thread's sequential reads
 * of another file.
 *
 * lpc.h: the stream reads "within readahead's share ... so neither ever
 * makes another thread wait": short of room it reads less ahead.  The
 * readahead threads' queue (LPC_RA_QUEUE, 64 jobs) is shared by the whole
 * cache, and a job of a random list is one page.  Here slow.h holds every
 * read 5 ms; thread 1 walks 2048 scattered cold pages of file A with a
 * stream of the default distance (64, max_pages 64: within the quarter of
 * a 1024-frame cache); the main thread reads file B (4 MiB, cold)
 * sequentially with lpc_pread, 16 KiB at a time, with lpc's default
 * readahead, alone and then beside the stream.
 *
 * Observed: the stream keeps up to 64 one-page jobs of A queued (the
 * readahead pool reads only 4 of one file at a time), so the queue is full
 * and B's asynchronous windows (marker hits) are refused: B's reader waits
 * for each window itself, several times longer than alone.  Exit 1 when B
 * takes more than 2x its time alone, or lost most of its async windows.
 *
 * Run: cmake --build ../../build-asan --target lpc_static && make && out-asan/att_queue
 */
#include "att.h"
#include "slow.h"

#define PS 4096u
#define APAGES 8192u
#define NA 2048u
#define BPAGES 1024u

static struct lpc_file *fa;
static uint64_t alist[NA];
static _Atomic int stop_a;

static void *t1(void *arg)
{
	struct lpc_stream *s;
	struct lpc_page *p;
	unsigned k = 0;

	(void)arg;
	if (lpc_stream_open(fa, NULL, NULL, &(struct lpc_stream_opts){ .indices = alist, .n = NA },
			    &s))
		return NULL;
	while (!atomic_load(&stop_a) && lpc_stream_next(s, &p, NULL) == 1) {
		if (att_bad_word(lpc_page_data(p), PS, alist[k] * PS, 1) >= 0)
			printf("  A: wrong bytes\n");
		lpc_page_put(p);
		k++;
	}
	lpc_stream_close(s);
	return NULL;
}

static double read_b(struct lpc_cache *c, struct lpc_file *fb, uint64_t *async)
{
	static char buf[16384];
	struct lpc_stats s0, s1;
	double t0 = slow_secs();

	(void)lpc_invalidate(fb, 0, 0);
	lpc_stats(c, &s0);
	for (uint64_t off = 0; off < (uint64_t)BPAGES * PS; off += sizeof(buf)) {
		ssize_t r = lpc_pread(fb, buf, sizeof(buf), off);

		ATT_CHECK(r == (ssize_t)sizeof(buf), "B pread %zd", r);
		ATT_CHECK(att_bad_word(buf, sizeof(buf), off, 2) < 0, "B bytes");
	}
	lpc_stats(c, &s1);
	*async = s1.ra_async - s0.ra_async;
	return slow_secs() - t0;
}

int main(void)
{
	char pa[512], pb[512];
	struct lpc_cache *c;
	struct lpc_file *fb;
	pthread_t th;
	double alone, beside;
	uint64_t as_alone, as_beside;

	att_make_file("a", (uint64_t)APAGES * PS, 1, pa, sizeof(pa));
	att_make_file("b", (uint64_t)BPAGES * PS, 2, pb, sizeof(pb));
	for (unsigned i = 0; i < NA; i++)
		alist[i] = ((uint64_t)i * 1237u % (APAGES / 2)) * 2u;
	c = att_cache(1024u * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 0, 0);
	slow_install(c);
	if (lpc_file_open(c, pa, O_RDONLY, 0, &fa) || lpc_file_open(c, pb, O_RDONLY, 0, &fb))
		return 1;
	(void)lpc_fadvise(fa, 0, 0, LPC_FADV_RANDOM);
	slow.delay_us = 5000;
	alone = read_b(c, fb, &as_alone);
	pthread_create(&th, NULL, t1, NULL);
	usleep(300000);
	beside = read_b(c, fb, &as_beside);
	atomic_store(&stop_a, 1);
	pthread_join(th, NULL);
	printf("B sequential, 4 MiB: alone %.3f s (%" PRIu64 " async windows); beside one stream "
	       "on A %.3f s (%" PRIu64 " async windows): %.2fx\n",
	       alone, as_alone, beside, as_beside, beside / alone);
	ATT_CHECK(beside <= 2 * alone && as_beside * 2 >= as_alone,
		  "one stream on A makes B's sequential reader %.2fx slower", beside / alone);
	lpc_file_close(fa);
	lpc_file_close(fb);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
