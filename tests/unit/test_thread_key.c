/* SPDX-License-Identifier: MIT */
/*
 * test_thread_key.c - lpc with the process's pthread keys exhausted (commit
 * 181683e: never touch a pthread key lpc did not create).
 *
 * lpc keeps one pthread key, created on a thread's first call, whose
 * destructor retires the thread's blocks and unregisters it from RCU.  The
 * old code ignored a failed pthread_key_create: lpc_thread_key stayed 0 and
 * lpc's pthread_setspecific wrote its own state into key 0, which belongs to
 * someone else (here: this program, or a sanitizer runtime).  That key's
 * destructor then got lpc's pointer, lpc's never ran, and the dead thread
 * stayed registered with RCU.
 *
 * The story, in one process (lpc must not have made its key yet):
 *  1. Create keys until pthread_key_create fails; every one has a destructor
 *     that records the value it is given.
 *  2. A thread T sets a marker in every key, then calls lpc: open (needs no
 *     thread block), find, get, pread and invalidate each return -ENOMEM
 *     (lpc's design: a thread without its key gets a clean error), alloc
 *     works from the shared list, put, close and cache destroy work (they
 *     need no thread block: a scoped RCU registration).
 *     Every key still holds T's marker; at T's exit every destructor gets
 *     its own marker back, none gets anything else.
 *  3. A grace period from the main thread (an allocation that reclaims)
 *     does not hang or crash on a dead thread left in RCU's registry.
 *  4. Free one key: lpc's next call makes its own and works (find, get,
 *     pread with the right data).
 *
 * Usage: test_thread_key [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <limits.h>
#include <pthread.h>

#include "../common/lpc_test.h"

#define PS 4096u
#define MAXKEYS 2048

static pthread_key_t keys[MAXKEYS];
static unsigned nkeys;
static char markers[MAXKEYS]; /* T's value for keys[i] is &markers[i] */
static _Atomic unsigned dtor_calls, dtor_bad;
static char path[600];

static void dtor(void *v)
{
	char *m = v;

	atomic_fetch_add(&dtor_calls, 1);
	if (m < markers || m >= markers + MAXKEYS) {
		atomic_fetch_add(&dtor_bad, 1);
		return;
	}
	/* The key this marker was set in must be the one being destroyed. */
	if (pthread_getspecific(keys[m - markers]) != NULL)
		atomic_fetch_add(&dtor_bad, 1); /* glibc clears it before the call */
}

/* Every key of this program still holds T's marker. */
static unsigned markers_changed(void)
{
	unsigned bad = 0;

	for (unsigned i = 0; i < nkeys; i++)
		if (pthread_getspecific(keys[i]) != &markers[i])
			bad++;
	return bad;
}

static void *t_main(void *arg)
{
	struct lpc_cache *c = arg;
	struct lpc_file *f;
	struct lpc_page *p;
	char buf[100];
	int rc;

	for (unsigned i = 0; i < nkeys; i++)
		REQUIRE(pthread_setspecific(keys[i], &markers[i]) == 0, "key %u", i);

	rc = lpc_file_open(c, path, O_RDONLY, 0, &f);
	CHECK_EQ(rc, 0, "open needs no thread block");
	if (rc == 0) {
		CHECK_EQ(lpc_page_find(f, 0, &p), -ENOMEM, "find without lpc's key");
		CHECK_EQ(lpc_page_get(f, 0, 0, &p), -ENOMEM, "get without lpc's key");
		CHECK_EQ(lpc_pread(f, buf, sizeof(buf), 0), -ENOMEM, "pread without lpc's key");
		CHECK_EQ(lpc_invalidate(f, 0, 0), -ENOMEM, "invalidate without lpc's key");
		CHECK_EQ(lpc_file_close(f), 0, "close cannot fail");
	}
	/* Alloc needs a block only to reclaim: from the shared list it works. */
	rc = lpc_page_alloc(c, &p);
	CHECK(rc == 0 || rc == -ENOMEM, "alloc without lpc's key: %d", rc);
	if (rc == 0)
		lpc_page_put(p);
	lpc_page_put(NULL);
	CHECK_EQ(markers_changed(), 0, "lpc wrote into a key it did not create");
	return NULL;
}

static void *t2_main(void *arg)
{
	struct lpc_file *f = arg;
	struct lpc_page *p;
	unsigned char buf[PS], want[PS];
	uint64_t id = tst_file_id(path);

	CHECK_EQ(lpc_page_find(f, 1, &p), -ENOENT, "with lpc's key: find works");
	if (CHECK_EQ(lpc_page_get(f, 1, 0, &p), 0, "with lpc's key: get works")) {
		tst_null_expect(id, 1, PS, 8 * PS, want);
		CHECK(memcmp(lpc_page_data(p), want, PS) == 0, "page 1's data");
		lpc_page_put(p);
	}
	CHECK_EQ(lpc_pread(f, buf, PS, 2 * PS), PS, "with lpc's key: pread works");
	tst_null_expect(id, 2, PS, 8 * PS, want);
	CHECK(memcmp(buf, want, PS) == 0, "page 2's data");
	return NULL;
}

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	struct lpc_page *pages[16], *p;
	pthread_t t;
	int rc;

	tst_init(argc, argv, 100);
	REQUIRE(tst_make_sparse("keys", 8 * PS, path, sizeof(path)) == 0, "file");
	lpc_config_init(&cfg);
	cfg.cache_bytes = 16 * PS;
	cfg.page_size = PS;
	cfg.io_backend = LPC_IO_NULL;

	/* 1. No key left (lpc has made none yet: no call needed one). */
	while (nkeys < MAXKEYS && (rc = pthread_key_create(&keys[nkeys], dtor)) == 0)
		nkeys++;
	if (nkeys == MAXKEYS || rc != EAGAIN)
		tst_skip("pthread_key_create never failed with EAGAIN");
	printf("created %u keys before EAGAIN\n", nkeys);

	/* 2. A thread that cannot have lpc's key. */
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	REQUIRE(pthread_create(&t, NULL, t_main, c) == 0, "thread");
	pthread_join(t, NULL);
	CHECK_EQ(atomic_load(&dtor_calls), nkeys, "every key's destructor ran once");
	CHECK_EQ(atomic_load(&dtor_bad), 0, "a destructor got a value that was not its own");
	CHECK_EQ(lpc_cache_destroy(c), 0, "destroy needs no thread block");

	/* 3. The main thread has no key either: a grace period from a scoped
	 * registration, with T dead.  Then free one key for lpc. */
	REQUIRE(lpc_cache_create(&cfg, &c) == 0, "cache");
	rc = lpc_page_alloc(c, &p);
	CHECK(rc == 0 || rc == -ENOMEM, "main thread without lpc's key: %d", rc);
	if (rc == 0)
		lpc_page_put(p);
	REQUIRE(pthread_key_delete(keys[--nkeys]) == 0, "free one key");

	/* 4. lpc makes its key now, and works. */
	for (unsigned i = 0; i < 16; i++)
		CHECK_EQ(lpc_page_alloc(c, &pages[i]), 0, "alloc %u with lpc's key", i);
	CHECK_EQ(lpc_page_alloc(c, &p), -ENOMEM, "full: reclaim ran a grace period");
	for (unsigned i = 0; i < 16; i++)
		lpc_page_put(pages[i]);
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &f) == 0, "open");
	REQUIRE(pthread_create(&t, NULL, t2_main, f) == 0, "thread");
	pthread_join(t, NULL);
	CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lpc_cache_destroy(c), 0);
	return tst_finish();
}
