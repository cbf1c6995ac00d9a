/* SPDX-License-Identifier: MIT */
/*
 * depth_sync - the sync backend's bound per file (0975edb's wording) with
 * one stream, two streams of two threads on one file, and
 * lpc_page_get_batch.
 *
 * Contract: lpc.h "Many misses in flight from one thread": "The sync
 * backend reads one run per readahead thread, and at most four threads
 * read one file at once ...: with it, one file has at most four reads
 * ahead in flight, plus the one its consumer reads itself"; 
 * lpc_page_get_batch(3): "on the sync backend at most four runs of one
 * file are read at once (one per readahead thread), and the calling thread
 * reads a run no thread has taken when it reaches it".
 *
 * Steps: slow.h (5 ms a read, in flight counted), sync backend, a
 * 4096-frame cache; (a) one stream, max_distance 64, over 256 scattered
 * single pages; (b) two threads, each its own stream over its own 256
 * pages of the same file; (c) lpc_page_get_batch of 64 scattered pages.
 * Want: (a) and (c) at most 5, at least 4; (b) at most 6 (four threads and
 * two consumers).  Exit 1 when one is out.
 *
 * Seen (int 1907d0f, asan, load ~10): one stream 4, two streams of one
 * file 6, lpc_page_get_batch 5: held.
 */
#include <pthread.h>

#include "../attack_stream/att.h"
#include "../attack_stream/slow.h"

#define FILE_PAGES 4096u
#define NLIST 256u
#define PS 4096u

static uint64_t lists[2][NLIST];
static struct lpc_file *f;

static void *consume(void *arg)
{
	const uint64_t *idx = arg;
	struct lpc_stream_opts o = { .max_distance = 64, .max_pages = 64, .indices = idx,
				     .n = NLIST };
	struct lpc_stream *s;
	struct lpc_page *p;
	unsigned got = 0;
	int rc;

	if (lpc_stream_open(f, NULL, NULL, &o, &s))
		exit(2);
	while ((rc = lpc_stream_next(s, &p, NULL)) > 0) {
		ATT_CHECK(att_bad_word(lpc_page_data(p), PS, idx[got] * PS, 7) < 0,
			  "entry %u: wrong bytes", got);
		lpc_page_put(p);
		got++;
	}
	ATT_CHECK(rc == 0 && got == NLIST, "stream: rc %d, %u entries", rc, got);
	lpc_stream_close(s);
	return NULL;
}

int main(void)
{
	char path[512];
	struct lpc_cache *c;
	pthread_t th[2];
	int pa, pb, pc;

	att_make_file("f", (uint64_t)FILE_PAGES * PS, 7, path, sizeof(path));
	for (unsigned i = 0; i < NLIST; i++) {
		lists[0][i] = ((uint64_t)i * 389u % 1024u) * 4u;
		lists[1][i] = ((uint64_t)i * 389u % 1024u) * 4u + 2u;
	}
	c = att_cache(4096u * PS, PS, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS, 0, 0);
	slow_install(c);
	slow.delay_us = 5000;
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 2;
	(void)lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM);

	slow_reset();
	consume(lists[0]);
	pa = atomic_load(&slow.peak);
	printf("sync: one stream: peak %d in flight\n", pa);

	(void)lpc_invalidate(f, 0, 0);
	slow_reset();
	for (int k = 0; k < 2; k++)
		pthread_create(&th[k], NULL, consume, lists[k]);
	for (int k = 0; k < 2; k++)
		pthread_join(th[k], NULL);
	pb = atomic_load(&slow.peak);
	printf("sync: two streams of one file: peak %d in flight\n", pb);

	(void)lpc_invalidate(f, 0, 0);
	slow_reset();
	{
		struct lpc_page *pages[64];
		int errs[64];
		int rc = lpc_page_get_batch(f, lists[0], 64, 0, pages, errs);

		ATT_CHECK(rc == 64, "lpc_page_get_batch: %d of 64", rc);
		for (int k = 0; k < 64; k++)
			if (errs[k] == 0) {
				ATT_CHECK(att_bad_word(lpc_page_data(pages[k]), PS,
						       lists[0][k] * PS, 7) < 0, "batch bytes");
				lpc_page_put(pages[k]);
			}
	}
	pc = atomic_load(&slow.peak);
	printf("sync: lpc_page_get_batch of 64: peak %d in flight\n", pc);
	ATT_CHECK(pa >= 4 && pa <= 5, "one stream: peak %d (want 4-5)", pa);
	ATT_CHECK(pb <= 6, "two streams of one file: peak %d (want <= 6: four threads a file "
		  "and two consumers)", pb);
	ATT_CHECK(pc >= 4 && pc <= 5, "get_batch: peak %d (want 4-5)", pc);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "ok");
	return att_fails ? 1 : 0;
}
