/* SPDX-License-Identifier: MIT */
/*
 * test_rcu_worker.c - liburcu's call_rcu worker is made by an application
 * thread, never by one of lpc's background threads (core/rcu.h
 * lpc_rcu_worker_ensure, called before each of them starts).
 *
 * liburcu starts its default call_rcu worker at the process's first
 * call_rcu, and a new thread inherits its creator's name and signal mask.
 * Before, when that first call_rcu came from lpc's reclaimer (a radix leaf
 * emptied by eviction) or flusher, the worker was named "lpc-reclaim" or
 * "lpc-flusher" for the rest of the process (test_write_flusher saw two
 * flushers under TSan on a loaded machine).  Here, in a fresh process whose
 * main thread is named MAIN_NAME:
 *   lazy     lpc_cache_create makes no thread (lpc_sqlite(7): a single-
 *            threaded program stays so while lpc needs none)
 *   first    a file 8x the cache read a page at a time, the threads counted
 *            after every read: when lpc-reclaim is first seen, the worker
 *            exists already (a second thread named MAIN_NAME, blocking
 *            every signal): it was made before the reclaimer, by the thread
 *            that started it; without the fix no call_rcu has run by then
 *            (the reclaimer starts at the low watermark, before it evicts),
 *            so the worker is missing (or, later, named lpc-reclaim)
 *   evict    two passes, with a pause now and then so that the reclaimer
 *            frees leaves first (the review's rw_symptom): never two
 *            lpc-reclaim threads; after destroy no lpc thread, and liburcu's
 *            default worker is named MAIN_NAME
 */
#include <pthread.h>
#include <signal.h>

#include "../common/lpc_test.h"
#include "core/rcu.h"

#define PS 4096u
#define FRAMES 256u
#define MAIN_NAME "t-rcuworker"

struct census {
	unsigned threads, named_main, named_lpc, named_reclaim;
	unsigned main_all_blocked; /* threads named MAIN_NAME blocking every signal */
};

/* SigBlk of /proc/self/task/<tid>/status: all of 1..64 blocked? */
static bool all_blocked(const char *tid)
{
	char path[300], line[256];
	bool all = false;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	fp = fopen(path, "r");
	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "SigBlk:", 7)) {
			unsigned long long m = strtoull(line + 7, NULL, 16);

			/* SIGKILL and SIGSTOP cannot be blocked; glibc keeps
			 * its two internal signals unblockable too. */
			all = (m | (1ull << (SIGKILL - 1)) | (1ull << (SIGSTOP - 1)) |
			       (1ull << 31) | (1ull << 32)) == ~0ull;
		}
	fclose(fp);
	return all;
}

static void census_one(const char *tid, const char *comm, void *arg)
{
	struct census *c = arg;

	c->threads++;
	if (!strcmp(comm, MAIN_NAME)) {
		c->named_main++;
		c->main_all_blocked += all_blocked(tid);
	}
	if (!strncmp(comm, "lpc-", 4))
		c->named_lpc++;
	if (!strcmp(comm, "lpc-reclaim"))
		c->named_reclaim++;
}

static struct census census(void)
{
	struct census c = { 0 };

	tst_threads_each(census_one, &c);
	return c;
}

static void *nop(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	struct census before, now;
	struct lpc_cache *c;
	struct lpc_file *f;
	char path[600], name[32] = "";
	unsigned char buf[PS];
	unsigned most_reclaim = 0, reads = 0;
	bool seen = false;
	pthread_t th;

	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	/* A sanitizer's runtime may start a thread of its own at the first
	 * pthread_create (TSan's background thread): made now, it bears the
	 * program's name, not MAIN_NAME, and is in every census. */
	REQUIRE(pthread_create(&th, NULL, nop, NULL) == 0, "a first thread");
	pthread_join(th, NULL);
	REQUIRE(pthread_setname_np(pthread_self(), MAIN_NAME) == 0, "name the main thread");
	REQUIRE(tst_make_sparse("rcuworker", 8 * FRAMES * PS, path, sizeof(path)) == 0, "file");

	/* lazy */
	before = census();
	tst_readahead_kb = LPC_READAHEAD_OFF; /* no readahead thread: misses only */
	c = tst_cache_create(FRAMES * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	now = census();
	CHECK_EQ(now.threads, before.threads, "lpc_cache_create made no thread");

	/* first, evict */
	f = tst_file_open(c, path, O_RDONLY);
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t off = 0; off < 8ull * FRAMES * PS; off += PS) {
			CHECK_EQ(lpc_pread(f, buf, PS, (off_t)off), (ssize_t)PS, "read at %llu",
				 (unsigned long long)off);
			if (++reads % 32 == 0)
				tst_sleep_us(1000); /* the reclaimer runs ahead */
			now = census();
			if (now.named_reclaim > most_reclaim)
				most_reclaim = now.named_reclaim;
			if (!seen && now.named_reclaim) {
				seen = true;
				CHECK_EQ(now.named_main, before.named_main + 1,
					 "the worker exists when lpc-reclaim first shows, named %s",
					 MAIN_NAME);
				CHECK_EQ(now.main_all_blocked, before.main_all_blocked + 1,
					 "the worker blocks every signal");
			}
		}
	CHECK(seen, "the reclaimer started");
	CHECK_EQ(lpc_file_close(f), 0, "close");
	tst_cache_destroy(c);
	CHECK(most_reclaim <= 1, "at most one lpc-reclaim thread at every sample: %u", most_reclaim);
	now = census();
	CHECK_EQ(now.named_lpc, 0u, "destroy joined every lpc thread");
	CHECK_EQ(now.named_main, before.named_main + 1, "one worker, named %s", MAIN_NAME);
	pthread_getname_np(urcu_memb_get_call_rcu_thread(urcu_memb_get_default_call_rcu_data()),
			   name, sizeof(name));
	CHECK(!strcmp(name, MAIN_NAME), "liburcu's default worker is named %s, want %s", name,
	      MAIN_NAME);
	return tst_finish();
}
