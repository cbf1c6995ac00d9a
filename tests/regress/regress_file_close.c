/* SPDX-License-Identifier: MIT */
/*
 * regress_file_close.c - the last lpc_file_close racing with lookups already
 * running on the file (commit dcab7c1, "free struct
 * lpc_file after a grace period; close cannot fail"), and close's contract.
 *
 * The rule (include/lpc/lpc.h, lpc_file_close): an lpc_page_find that began
 * before the last close began is safe, and returns 0 with a valid, UPTODATE
 * page (which the close may have removed from the cache: it stays the
 * caller's until lpc_page_put) or -ENOENT.  struct lpc_file is freed only
 * after a grace period (yield point FILE_FREE, where this program counts the
 * frees), so a lookup inside its read section never reads freed memory.
 *
 * The interleaving, in each story:
 *   1. Page 0 of the file is cached, held by the index only.
 *   2. A thread A, warmed up so that it takes the lockless fast path, looks
 *      page 0 up and is parked at a yield point (a hook, not a sleep) inside
 *      its read section.
 *   3. The main thread closes the file (the last close: the index is emptied,
 *      the struct handed to call_rcu) and waits 200 ms, time for a grace
 *      period that must not end: the struct must not be freed meanwhile.
 *      The old close freed it at once.
 *   4. A goes on and returns; then the struct is freed, once.
 * Where A is parked, and what it must get:
 *   story 1  R2 (lockless mode), before the walk.  The old close had freed
 *            the struct: A walked freed memory (ASan: heap-use-after-free).
 *            Now: -ENOENT, the index is empty.
 *   story 2  R4: A holds a reference on page 0 and the close deletes the slot
 *            and drops the index's reference.  A's re-check sees the slot
 *            changed (-ENOENT) or, if it still reads the detached leaf,
 *            returns the page: still valid and holding the right data.
 *   story 3  R2 of the LOCKED mode, before taking the file's rwlock, which the
 *            close must not destroy under A.  -ENOENT.
 * Then: lpc_file_close(NULL) is -EINVAL; a close from a thread that never
 * called lpc before (no thread block) succeeds and frees the file; with every
 * frame back, the cache's destroy succeeds.
 *
 * Usage: regress_file_close [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "core/debug.h"

#define PS 4096u
#define FSIZE (16 * PS)

static _Atomic int park_at = -1;
static _Atomic bool parked, go;
static _Atomic unsigned files_freed;
static __thread bool is_a;

/* Runs at the armed yield points (R2, R4, FILE_FREE), in any thread:
 * FILE_FREE in liburcu's call_rcu thread. */
static void hook(enum lpc_yield_point yp)
{
	int want = (int)yp;

	if (yp == LPC_YP_FILE_FREE)
		atomic_fetch_add(&files_freed, 1);
	if (!is_a || !atomic_compare_exchange_strong(&park_at, &want, -1))
		return;
	atomic_store(&parked, true);
	while (!atomic_load(&go))
		tst_sleep_us(1000);
}

struct lookup {
	struct lpc_file *f;
	uint64_t id;
	int point; /* where A parks, armed once its warm-up is done */
	int rc;
	struct lpc_page *page;
	bool data_ok;
};

static void *a_main(void *arg)
{
	struct lookup *l = arg;
	struct lpc_page *p;
	static unsigned char want[PS];

	is_a = true;
	/* Warm up: this thread's block exists, so the lookup below takes the
	 * lockless fast path of lpc_page_find. */
	if (lpc_page_find(l->f, 0, &p) == 0)
		lpc_page_put(p);
	atomic_store(&park_at, l->point); /* armed after the warm-up */
	l->rc = lpc_page_find(l->f, 0, &l->page);
	if (l->rc == 0) {
		tst_null_expect(l->id, 0, PS, FSIZE, want);
		l->data_ok = memcmp(lpc_page_data(l->page), want, PS) == 0;
		lpc_page_put(l->page); /* after the close: the page is no longer cached */
	}
	return NULL;
}

static void story(const char *path, enum lpc_lookup_mode mode, enum lpc_yield_point point,
		  const char *name)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_page *p;
	struct lookup l;
	pthread_t at;
	unsigned freed_during;
	uint64_t t0;

	lpc_config_init(&cfg);
	cfg.cache_bytes = 64 * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = mode;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "%s: cache", name);
	memset(&l, 0, sizeof(l));
	l.id = tst_file_id(path);
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &l.f) == 0, "%s: open", name);
	REQUIRE(lpc_page_get(l.f, 0, 0, &p) == 0, "%s: page 0", name);
	lpc_page_put(p); /* cached, held by the index only */

	atomic_store(&parked, false);
	atomic_store(&go, false);
	atomic_store(&files_freed, 0);
	atomic_store(&park_at, -1);
	l.point = (int)point;
	REQUIRE(pthread_create(&at, NULL, a_main, &l) == 0, "%s", name);
	t0 = tst_now_ns();
	while (!atomic_load(&parked)) {
		REQUIRE(tst_now_ns() - t0 < 10000000000ull, "%s: A never parked", name);
		tst_sleep_us(1000);
	}
	CHECK_EQ(lpc_file_close(l.f), 0, "%s: the last close", name);
	tst_sleep_us(200000); /* time for a grace period that must not end */
	freed_during = atomic_load(&files_freed);
	atomic_store(&go, true);
	pthread_join(at, NULL);

	CHECK_EQ(freed_during, 0, "%s: struct lpc_file freed while a lookup was in it", name);
	CHECK(l.rc == 0 || l.rc == -ENOENT, "%s: the racing lookup returned %d", name, l.rc);
	if (point == LPC_YP_R2)
		CHECK_EQ(l.rc, -ENOENT, "%s: the walk began after the close emptied the index",
			 name);
	if (l.rc == 0)
		CHECK(l.data_ok, "%s: the page returned holds page 0's data", name);
	lpc_rcu_barrier(); /* every callback queued so far has run */
	CHECK_EQ(atomic_load(&files_freed), 1, "%s: freed once the lookup left", name);
	CHECK_EQ(lpc_cache_destroy(c), 0, "%s: every frame came back", name);
}

static void *close_main(void *arg)
{
	CHECK_EQ(lpc_file_close(arg), 0, "a close from a thread new to lpc");
	return NULL;
}

static void close_contract(const char *path)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page *p;
	pthread_t t;

	CHECK_EQ(lpc_file_close(NULL), -EINVAL);
	lpc_config_init(&cfg);
	cfg.cache_bytes = 64 * PS;
	cfg.io_backend = LPC_IO_NULL;
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &f) == 0, "open");
	for (uint64_t i = 0; i < FSIZE / PS; i++) {
		REQUIRE(lpc_page_get(f, i, 0, &p) == 0, "page %" PRIu64, i);
		lpc_page_put(p);
	}
	atomic_store(&files_freed, 0);
	REQUIRE(pthread_create(&t, NULL, close_main, f) == 0, "thread");
	pthread_join(t, NULL);
	lpc_rcu_barrier();
	CHECK_EQ(atomic_load(&files_freed), 1, "the close from a new thread freed the file");
	CHECK_EQ(lpc_cache_destroy(c), 0);
}

int main(int argc, char **argv)
{
	char path[600];

	tst_init(argc, argv, 100);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	REQUIRE(tst_make_sparse("closing", FSIZE, path, sizeof(path)) == 0, "file");
	lpc_yield_set_hook(hook);
	REQUIRE(lpc_yield_arm("R2,R4,FILE_FREE", 1.0, 1) == 0, "arm");
	story(path, LPC_LOOKUP_LOCKLESS, LPC_YP_R2, "1 (lockless, parked at R2)");
	story(path, LPC_LOOKUP_LOCKLESS, LPC_YP_R4, "2 (lockless, parked at R4)");
	story(path, LPC_LOOKUP_LOCKED, LPC_YP_R2, "3 (LOCKED, parked at R2 before the rwlock)");
	close_contract(path);
	lpc_yield_arm(NULL, 0, 0);
	lpc_yield_set_hook(NULL);
	return tst_finish();
}
