/* SPDX-License-Identifier: MIT */
/*
 * stress_same_page_miss.c - concurrent misses on the same page (miss.c M1-M6):
 * exactly one backend read per page however many threads miss on it at once,
 * and a failed read reaches every thread that waited for it.
 *
 * K threads meet at a barrier each round and then lpc_page_get the same
 * absent page(s).  Round kinds, in turn:
 *  a  M pages, each thread in a rotated order: every get returns 0, all K
 *     threads get the same descriptor per page with the right bytes, and
 *     stats.reads grows by exactly M;
 *  b  one page through a gated backend held until all K threads hold the
 *     page in flight (so all K really overlap): one read, same page;
 *  c  one page with every read failing (fault EIO, count 0): every thread
 *     gets -EIO, read_errors == reads, nothing is cached (find: -ENOENT);
 *     after clearing, one get reads again and returns the right data;
 *  d  one page whose first read fails (count 1): threads that shared it get
 *     -EIO, a thread that came after it reads again (reads is then 2) and
 *     gets the page; with one read, every thread got -EIO;
 *  e  the gated read of (b) failing: all K threads get -EIO.  Usually there
 *     is one read; but a thread that main counted as a holder may still be
 *     between its speculative increment and its re-check (lookup.c R3-R4;
 *     it takes a preemption there): if the failed page is deleted first, its
 *     re-check fails, it misses and reads again, and that read fails too.
 *     So each round checks reads == read_errors == reads at the gate, all
 *     -EIO, at most one read per thread; and over the run, such re-reads
 *     must stay rare (a lost "shared the failure" would make every round
 *     read K times).
 * Pages are fresh each round; when the file is used up, lpc_invalidate drops
 * exactly the pages the rounds cached, and they start over.  Both lookup
 * modes run, each for half the time.
 *
 * Usage: stress_same_page_miss [--seed N]; LPC_STRESS_SECONDS (default 4).
 * Exit: 0 pass, 1 fail, 77 skip.
 */
#include <sched.h>

#include "../common/gate_io.h"
#include "../common/stress.h"
#include "cache/cache.h"

#define PS 4096u
#define NP 1024u /* pages in the file */
#define M 4      /* pages per round of kind a */
#define KMAX 16

static struct lpc_cache *cache;
static struct lpc_file *file;
static uint64_t file_id, file_size;
static unsigned K;
static pthread_barrier_t b_start, b_end, b_put, b_done;

/* Set by the main thread before b_start (and tst_stop, at the end). */
static char kind;
static uint64_t first; /* the round's first page */
static unsigned npages;

struct res {
	int rc[M];
	struct lpc_page *p[M];
	bool data_ok[M];
};
static struct res res[KMAX];

static void *worker(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	unsigned char *scratch = malloc(PS);

	for (;;) {
		pthread_barrier_wait(&b_start);
		if (tst_stopping())
			break;
		for (unsigned j = 0; j < npages; j++) {
			unsigned k = (j + t) % npages; /* rotated order */
			struct lpc_page *p = NULL;
			int rc = lpc_page_get(file, first + k, 0, &p);

			res[t].rc[k] = rc;
			res[t].p[k] = rc == 0 ? p : NULL;
			res[t].data_ok[k] = rc == 0 && tst_null_check_page(file_id, first + k, PS,
									   file_size,
									   lpc_page_data(p),
									   scratch) == 0;
		}
		pthread_barrier_wait(&b_end);
		/* The main thread checks the results here. */
		pthread_barrier_wait(&b_put);
		for (unsigned j = 0; j < npages; j++)
			if (res[t].rc[j] == 0)
				lpc_page_put(res[t].p[j]);
		pthread_barrier_wait(&b_done);
	}
	free(scratch);
	return NULL;
}

struct tally {
	unsigned long rounds[5], pages, reads, shared_fail_all, fail_then_read, e_reread;
};

static void arm(int err, uint64_t count)
{
	struct lpc_io_fault f = { .ops = LPC_IO_READ, .count = count, .err = err };

	REQUIRE(lpc_io_fault_set(&cache->io, &f) == 0);
}

/* One round of `k`.  Return: pages it left cached. */
static unsigned round_run(char k, struct tally *ty, unsigned round)
{
	struct lpc_stats s0, s1;
	struct lpc_page *p;
	unsigned neio = 0, nok = 0;
	bool gated = k == 'b' || k == 'e';

	kind = k;
	npages = k == 'a' ? M : 1;
	if (k == 'c')
		arm(EIO, 0);
	else if (k == 'd')
		arm(EIO, 1);
	if (gated)
		tst_gate_close();
	for (unsigned t = 0; t < K; t++)
		memset(&res[t], 0, sizeof(res[t]));
	lpc_stats(cache, &s0);

	pthread_barrier_wait(&b_start);
	if (gated) {
		/* One read at the gate, and every thread has missed: all K are
		 * on this page (waiting on it or about to). */
		bool in = tst_gate_wait_entered(1, 10000);

		CHECK(in, "round %u (%c): the read never started", round, k);
		CHECK(tst_wait_page_holders(file, first, K, 10000),
		      "round %u (%c): not every thread is on the page in flight", round, k);
		tst_gate_open(k == 'e' ? EIO : 0);
	}
	pthread_barrier_wait(&b_end);
	lpc_stats(cache, &s1);
	if (k == 'c' || k == 'd')
		lpc_io_fault_set(&cache->io, NULL);
	if (gated) {
		tst_gate_clear_error();
		CHECK_EQ(tst_gate_entered(), s1.reads - s0.reads, "round %u (%c): reads at the gate",
			 round, k);
	}

	for (unsigned j = 0; j < npages; j++) {
		struct lpc_page *same = NULL;

		neio = nok = 0;
		for (unsigned t = 0; t < K; t++) {
			int rc = res[t].rc[j];

			if (rc == 0) {
				nok++;
				if (!same)
					same = res[t].p[j];
				CHECK(res[t].p[j] == same, "round %u (%c) page %" PRIu64
				      ": two descriptors for one page", round, k, first + j);
				CHECK(res[t].data_ok[j], "round %u (%c) page %" PRIu64 ": bad data",
				      round, k, first + j);
			} else if (rc == -EIO) {
				neio++;
			} else {
				CHECK(0, "round %u (%c) thread %u: get = %d", round, k, t, rc);
			}
		}
		switch (k) {
		case 'a':
		case 'b':
			CHECK_EQ(nok, K, "round %u (%c): gets that failed", round, k);
			break;
		case 'c':
		case 'e':
			CHECK_EQ(neio, K, "round %u (%c): every waiter must get -EIO", round, k);
			break;
		case 'd':
			CHECK(neio >= 1 && neio + nok == K, "round %u (d): %u -EIO, %u ok", round,
			      neio, nok);
			break;
		}
	}
	switch (k) {
	case 'a':
		CHECK_EQ(s1.reads - s0.reads, M, "round %u (a): reads for %d pages", round, M);
		CHECK_EQ(s1.read_errors - s0.read_errors, 0);
		break;
	case 'b':
		CHECK_EQ(s1.reads - s0.reads, 1, "round %u (b): reads", round);
		break;
	case 'c':
		CHECK(s1.reads - s0.reads >= 1, "round %u (c): no read", round);
		CHECK_EQ(s1.read_errors - s0.read_errors, s1.reads - s0.reads,
			 "round %u (c): every read failed", round);
		break;
	case 'd':
		/* The failed read, then at most one more that succeeded. */
		CHECK(s1.reads - s0.reads == 1 || s1.reads - s0.reads == 2,
		      "round %u (d): %" PRIu64 " reads", round, s1.reads - s0.reads);
		CHECK_EQ(s1.read_errors - s0.read_errors, 1, "round %u (d)", round);
		CHECK_EQ(s1.reads - s0.reads == 1, nok == 0,
			 "round %u (d): one read, yet %u threads got the page", round, nok);
		if (nok == 0)
			ty->shared_fail_all++;
		else
			ty->fail_then_read++;
		break;
	case 'e':
		CHECK(s1.reads - s0.reads >= 1 && s1.reads - s0.reads <= K,
		      "round %u (e): %" PRIu64 " reads", round, s1.reads - s0.reads);
		CHECK_EQ(s1.read_errors - s0.read_errors, s1.reads - s0.reads,
			 "round %u (e): every read failed", round);
		if (s1.reads - s0.reads > 1)
			ty->e_reread++;
		break;
	}
	/* After a failure with nothing cached: find misses, the next get reads. */
	if (k == 'c' || k == 'e' || (k == 'd' && nok == 0)) {
		CHECK_EQ(lpc_page_find(file, first, &p), -ENOENT,
			 "round %u (%c): a failed read left a page", round, k);
		lpc_stats(cache, &s0);
		if (CHECK_EQ(lpc_page_get(file, first, 0, &p), 0, "round %u (%c): get after",
			     round, k)) {
			unsigned char scratch[PS];

			CHECK_EQ(tst_null_check_page(file_id, first, PS, file_size, lpc_page_data(p),
						     scratch), 0);
			lpc_page_put(p);
		}
		lpc_stats(cache, &s1);
		CHECK_EQ(s1.reads - s0.reads, 1, "round %u (%c): the next get read again", round,
			 k);
	}
	pthread_barrier_wait(&b_put);
	pthread_barrier_wait(&b_done); /* every page put again */
	ty->rounds[k - 'a']++;
	ty->pages += npages;
	return npages;
}

static void run_mode(int mode, double seconds)
{
	struct tally ty;
	struct lpc_stats st;
	struct tst_threads th = { 0 };
	unsigned cached = 0, round = 0;
	uint64_t t0, evicted = 0;
	static const char kinds[] = "abacadae";

	memset(&ty, 0, sizeof(ty));
	/* Twice the file: the free list seldom falls to the reclaimer's low
	 * watermark (only when freed frames wait long for their grace
	 * period), and the count below subtracts what it evicted. */
	cache = tst_cache_create(2 * NP * PS, PS, LPC_IO_NULL, mode);
	file_size = (uint64_t)NP * PS;
	file = tst_stress_file(cache, file_size, &file_id, "same-%d", mode);
	tst_gate_install(cache);

	pthread_barrier_init(&b_start, NULL, K + 1);
	pthread_barrier_init(&b_end, NULL, K + 1);
	pthread_barrier_init(&b_put, NULL, K + 1);
	pthread_barrier_init(&b_done, NULL, K + 1);
	tst_threads_start(&th, K, worker, NULL, 0);

	first = 0;
	t0 = tst_now_ns();
	while (tst_now_ns() - t0 < (uint64_t)(seconds * 1e9) && tst_failed < 20) {
		char k = kinds[round % (sizeof(kinds) - 1)];

		if (first + M > NP) {
			struct lpc_stats e1;
			int r;

			/* The reclaimer may evict some of them first: frames
			 * that invalidate and failed reads free come back only
			 * after a grace period, and under load the free list can
			 * meet the low watermark before they do.  Those pages
			 * are gone, not dropped; every other one must be. */
			r = lpc_invalidate(file, 0, 0);
			/* An eviction is counted just after its page left the
			 * tree: give one in that window time to be counted. */
			for (int w = 0; w < 100; w++) {
				lpc_stats(cache, &e1);
				if ((uint64_t)r + (e1.evictions - evicted) >= cached)
					break;
				usleep(1000);
			}
			CHECK_EQ((uint64_t)r + (e1.evictions - evicted), cached,
				 "invalidate: pages the rounds cached (%" PRIu64 " evicted)",
				 e1.evictions - evicted);
			evicted = e1.evictions;
			cached = 0;
			first = 0;
		}
		cached += round_run(k, &ty, round);
		first += npages;
		round++;
	}
	atomic_store(&tst_stop, true);
	pthread_barrier_wait(&b_start);
	tst_threads_join(&th);
	pthread_barrier_destroy(&b_start);
	pthread_barrier_destroy(&b_end);
	pthread_barrier_destroy(&b_put);
	pthread_barrier_destroy(&b_done);

	lpc_stats(cache, &st);
	printf("%s: %u threads, %u rounds (a %lu, b %lu, c %lu, d %lu, e %lu), %lu pages; "
	       "d: all shared the failure %lu, a later thread read again %lu; "
	       "e: a thread re-checked after the failure and read again %lu\n",
	       mode ? "LOCKED" : "LOCKLESS", K, round, ty.rounds[0], ty.rounds[1], ty.rounds[2],
	       ty.rounds[3], ty.rounds[4], ty.pages, ty.shared_fail_all, ty.fail_then_read,
	       ty.e_reread);
	printf("  stats: lookups %" PRIu64 " hits %" PRIu64 " misses %" PRIu64 " reads %" PRIu64
	       " read_errors %" PRIu64 " retries %" PRIu64 "\n",
	       st.lookups, st.hits, st.misses, st.reads, st.read_errors, st.retries);
	CHECK(ty.rounds[0] > 0 && ty.rounds[4] > 0, "too few rounds ran");
	/* A re-read needs a preemption inside R3-R4 (the story of
	 * tests/regress/regress_r4_failed_read.c): rare without yield injection
	 * (seen about once in 80,000 e rounds under TSan), but with LPC_YIELD
	 * widening that window it grew to 21 of 388 rounds at probability 0.1
	 * (scripts/soak.sh).  A waiter that did not share the failed read
	 * would re-read in every round, so the bound is 1 in 20 unarmed and
	 * half the rounds when yields are armed.  LOCKED mode has no
	 * speculative reference, so never. */
	unsigned long bound = getenv("LPC_YIELD") ? ty.rounds[4] / 2 : 1 + ty.rounds[4] / 20;

	CHECK(ty.e_reread <= bound && (mode == LPC_LOOKUP_LOCKLESS || ty.e_reread == 0),
	      "%lu of %lu e rounds read more than once (bound %lu)", ty.e_reread, ty.rounds[4], bound);
	CHECK_EQ(lpc_file_close(file), 0);
	CHECK_EQ(lpc_cache_destroy(cache), 0);
}

/* Checks guarantees C.1, C.2 of include/lpc/lpc.h. */
int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double secs;

	/* One page's protocol, read by read: readahead (test_readahead) would
	 * read the next round's pages with this one's. */
	tst_readahead_kb = LPC_READAHEAD_OFF;
	secs = tst_stress_init(argc, argv, 4.0);
	K = ncpu * 2 < 4 ? 4 : ncpu * 2 > 8 ? 8 : (unsigned)ncpu * 2;
	run_mode(LPC_LOOKUP_LOCKLESS, secs / 2);
	run_mode(LPC_LOOKUP_LOCKED, secs / 2);
	return tst_finish();
}
