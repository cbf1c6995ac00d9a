/* SPDX-License-Identifier: MIT */
/*
 * att_exit_destroy.c - a thread's exit with deferred frames (page/alloc.c
 * OD6: lpc_pool_thread_exit puts them on pending and kicks the reclaimer,
 * under lpc_threads_lock) alone and racing lpc_cache_destroy (retire, then
 * lpc_towner_orphan), and a destroy with the destroying thread's own
 * deferred frames.  Probes; exit 1 on a wrong count, a crash or a
 * sanitizer report (build with make VARIANT=asan / tsan for those).
 *
 * Part 1: 1024 frames; a thread reads 300 pages, lpc_invalidate's them
 * (kept on its deferred list: frames_free 1024 at once), exits: the frames
 * go to pending (frames_free short) and the exit's kick must bring them
 * back to the shared list (frames_free 1024 within 2 s).
 * Part 2: ROUNDS caches; in each a thread reads, invalidates, closes its
 * file and exits while main destroys the cache as soon as the thread says
 * it is done (the exit's kick against the retire, its pending push against
 * the orphan).
 * Part 3: main reads, invalidates and destroys at once (its own deferred
 * list dropped by the orphan), then makes a new cache and uses it (the
 * block of the old owner must not leak frames into the new one).
 *
 * Run: cmake --build ../../build-release --target lpc_static && make && out-release/att_exit_destroy
 */
#include "../attack_miss/mh.h"

#define PS 4096u
#define NF 1024u
#define ROUNDS 40

static char path[512];
static atomic_int done;

struct targ {
	struct lpc_cache *c;
	unsigned n;
	bool close;
};

static void *reader(void *arg)
{
	struct targ *a = arg;
	struct lpc_file *f;
	struct lpc_page *p;

	if (lpc_file_open(a->c, path, O_RDONLY, 0, &f))
		exit(2);
	for (unsigned i = 0; i < a->n; i++) {
		if (lpc_page_get(f, i, 0, &p))
			exit(2);
		lpc_page_put(p);
	}
	if (lpc_invalidate(f, 0, 0) != (int)a->n)
		printf("  (invalidate dropped fewer than %u)\n", a->n);
	if (a->close)
		lpc_file_close(f);
	atomic_store(&done, 1);
	return NULL;
}

int main(void)
{
	struct lpc_cache *c;
	struct lpc_stats s;
	struct targ a;
	pthread_t t;
	uint64_t nf;
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mh_hole_file("x", 4096ull * PS, path, sizeof(path));

	/* Part 1 */
	c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
	a = (struct targ){ .c = c, .n = 300, .close = true };
	pthread_create(&t, NULL, reader, &a);
	pthread_join(t, NULL);
	lpc_stats(c, &s);
	printf("  part 1: thread exited with 300 deferred frames: frames_free at once %" PRIu64 "\n",
	       s.frames_free);
	nf = mh_wait_all_free(c, 2.0);
	printf("  part 1: frames_free after up to 2 s: %" PRIu64 "/%u\n", nf, NF);
	if (nf != NF) {
		printf("  FAIL: %" PRIu64 " frames of an exited thread never came back\n", NF - nf);
		fails++;
	}
	lpc_cache_destroy(c);

	/* Part 2 */
	for (int r = 0; r < ROUNDS; r++) {
		c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
		atomic_store(&done, 0);
		a = (struct targ){ .c = c, .n = 50 + (unsigned)r * 7, .close = r & 1 };
		pthread_create(&t, NULL, reader, &a);
		while (!atomic_load(&done))
			;
		if (lpc_cache_destroy(c)) {
			printf("  FAIL: destroy failed in round %d\n", r);
			fails++;
		}
		pthread_join(t, NULL);
	}
	printf("  part 2: %d rounds of exit against destroy done\n", ROUNDS);

	/* Part 3 */
	for (int r = 0; r < 3; r++) {
		c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
		a = (struct targ){ .c = c, .n = 200, .close = false };
		reader(&a);
		lpc_cache_destroy(c);
	}
	c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
	nf = mh_allocatable(c, NF + 8);
	printf("  part 3: a new cache after destroys with deferred frames: %" PRIu64
	       " frames allocatable\n", nf);
	if (nf != NF) {
		printf("  FAIL: %" PRIu64 " allocatable, want %u\n", nf, NF);
		fails++;
	}
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}
