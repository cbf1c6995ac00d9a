/* SPDX-License-Identifier: MIT */
/*
 * att_churn.c - the frame allocator and lpc_invalidate's free path under
 * churn: misses, invalidates of random ranges (chains of up to 256 pages to
 * pending), private pages, short-lived threads (their private frames go
 * back at exit, E.2), on tiny caches (tbatch 1..32: one-frame segments, split
 * segments, whole pops), both lookup modes, null backend, page sizes
 * 512 B .. 2 MiB, 8 workers + thread churn on 2 CPUs.
 *
 * Checked: every page a get/find returns holds its own (file id, index) and
 * the null backend's bytes, and still does after the holder yields (a frame
 * reused while referenced, or before a grace period ended after its page left
 * the index, shows another page's identity: A.1, H.1); every lpc_pread copy
 * (optimistic on a hit, K.1) is the page's bytes; once quiet (threads joined,
 * everything invalidated) frames_free comes back to frames (F.1) and every
 * frame can be allocated again (E.2: none lost, none handed out twice).
 *
 * White-box (cache/cache.h): a checker thread takes free_lock every 0.5 ms
 * and checks the segment stack and pending (check_lists below).
 *
 * Exit 1 on any failure.  Run:
 *   cmake --build ../../build-asan --target lpc_static && make && out-asan/att_churn
 *   (LPC_YIELD=all LPC_YIELD_PROB=0.02 adds yield injection in debug builds;
 *   att_churn PS NFRAMES MODE SECS runs one configuration)
 */
#include "cache/cache.h"
#include "mh.h"

#define NTHREADS 8
#define NFILES 2

struct cfg {
	size_t ps;
	uint32_t nframes;
	int mode;
	double secs;
};

static struct lpc_cache *cache;
static struct lpc_file *files[NFILES];
static uint64_t fids[NFILES], fpages;
static size_t ps;
static _Atomic bool stop;
static _Atomic long bad, ops, enomem;

static bool page_ok(const void *buf, uint64_t id, uint64_t index, const char *what)
{
	const uint64_t *w = buf;
	uint64_t e[3];
	size_t nw = ps / 8;

	lpc_io_null_pattern(id, index, e, sizeof(e));
	if (w[0] != id || w[1] != index || w[2] != e[2] || w[nw - 1] != e[2] - 16 + ps - 8 ||
	    w[nw / 2] != e[2] - 16 + (nw / 2) * 8) {
		if (atomic_fetch_add(&bad, 1) < 10)
			printf("  FAIL %s: file %" PRIu64 " index %" PRIu64 " holds id %" PRIu64
			       " index %" PRIu64 " (word2 %#" PRIx64 ", want %#" PRIx64 ")\n",
			       what, id, index, w[0], w[1], w[2], e[2]);
		return false;
	}
	return true;
}

static void one_op(uint64_t *rs, char *buf)
{
	unsigned fi = (unsigned)(mh_rand(rs) % NFILES);
	struct lpc_file *f = files[fi];
	uint64_t idx = mh_rand(rs) % fpages;
	unsigned op = (unsigned)(mh_rand(rs) % 100);
	struct lpc_page *p;
	int rc;

	if (op < 40) {
		rc = lpc_page_get(f, idx, 0, &p);
		if (rc == -ENOMEM) {
			atomic_fetch_add(&enomem, 1);
			return;
		}
		if (rc) {
			printf("  FAIL get: %d\n", rc);
			atomic_fetch_add(&bad, 1);
			return;
		}
		if (page_ok(lpc_page_data(p), fids[fi], idx, "get") && (op & 3) == 0) {
			for (int i = 0; i < 3; i++)
				sched_yield();
			page_ok(lpc_page_data(p), fids[fi], idx, "get, held across yields");
		}
		lpc_page_put(p);
	} else if (op < 65) {
		ssize_t r = lpc_pread(f, buf, ps, idx * ps);

		if (r == (ssize_t)ps)
			page_ok(buf, fids[fi], idx, "pread");
		else if (r != -ENOMEM) {
			printf("  FAIL pread: %zd\n", r);
			atomic_fetch_add(&bad, 1);
		}
	} else if (op < 80) {
		rc = lpc_page_find(f, idx, &p);
		if (rc == 0) {
			page_ok(lpc_page_data(p), fids[fi], idx, "find");
			sched_yield();
			page_ok(lpc_page_data(p), fids[fi], idx, "find, held across a yield");
			lpc_page_put(p);
		}
	} else if (op < 92) {
		uint64_t len = (op & 1) ? 0 : (1 + mh_rand(rs) % 300) * ps;

		(void)lpc_invalidate(f, (op & 2) ? 0 : idx * ps, len);
	} else {
		if (lpc_page_alloc(cache, &p) == 0) {
			memset(lpc_page_data(p), 0xa5, ps);
			sched_yield();
			for (size_t i = 0; i < ps; i += ps / 4)
				if (((unsigned char *)lpc_page_data(p))[i] != 0xa5) {
					atomic_fetch_add(&bad, 1);
					printf("  FAIL private page changed under its owner\n");
					break;
				}
			lpc_page_put(p);
		} else {
			atomic_fetch_add(&enomem, 1);
		}
	}
	atomic_fetch_add(&ops, 1);
}

/*
 * White-box: under free_lock, the shared list is a stack of segments (each
 * head's seg_n frames chained by next, NULL after the last, 1..tbatch),
 * every frame carved (id < fresh), ref 0, on no other list (pending), met
 * once; and the frames it holds plus the fresh ones are nfree; pending's
 * chain is npending long and ends at pending_tail.
 */
static unsigned char *seen;
static _Atomic long checks;

static void check_lists(void)
{
	struct lpc_pool *c = &cache->pool;
	uint32_t fresh, nfree, nfr = c->nframes, total = 0, np = 0;
	struct lpc_page *last = NULL;
	const char *why = NULL;
	uint32_t bad_id = 0;

	memset(seen, 0, nfr);
	pthread_mutex_lock(&c->free_lock);
	fresh = atomic_load(&c->fresh);
	nfree = atomic_load(&c->nfree);
	for (struct lpc_page *s = c->free; s && !why; s = s->fl.seg_next) {
		uint32_t n = s->fl.seg_n, k = 0;
		struct lpc_page *q = s;

		if (n == 0 || n > c->tbatch)
			why = "segment count out of 1..tbatch";
		for (; q && !why && k <= n; q = q->next, k++) {
			if (q->id >= fresh || q != &c->pages[q->id]) {
				why = "frame on the free list that was never carved";
			} else if (seen[q->id]++) {
				why = "frame twice on the free list";
			} else if (atomic_load(&q->ref) != 0) {
				why = "frame on the free list with ref != 0";
#if LPC_DEBUG
			} else if (atomic_load(&q->dbg_state) != LPC_DBG_FREE) {
				why = "frame on the free list not in state FREE";
#endif
			}
			bad_id = q->id;
		}
		if (!why && k != n)
			why = "segment's chain is not seg_n long";
		total += k;
	}
	for (struct lpc_page *q = c->pending; q && !why && np <= nfr; q = q->next, np++) {
		if (seen[q->id]++)
			why = "frame both pending and free, or pending twice";
		bad_id = q->id;
		last = q;
	}
	if (!why && total + (nfr - fresh) != nfree)
		why = "nfree != frames on the list + fresh";
	if (!why && (np != atomic_load(&c->npending) || last != c->pending_tail))
		why = "pending chain != npending / pending_tail";
	pthread_mutex_unlock(&c->free_lock);
	atomic_fetch_add(&checks, 1);
	if (why && atomic_fetch_add(&bad, 1) < 10)
		printf("  FAIL lists: %s (frame %u; listed %u, fresh %u/%u, nfree %u, pending %u/%u)\n",
		       why, bad_id, total, fresh, nfr, nfree, np, atomic_load(&c->npending));
}

static void *checker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		check_lists();
		usleep(500);
	}
	return NULL;
}

static void *worker(void *arg)
{
	uint64_t rs = (uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
	char *buf = aligned_alloc(4096, ps < 4096 ? 4096 : ps);

	while (!atomic_load(&stop))
		one_op(&rs, buf);
	free(buf);
	return NULL;
}

/* A short-lived thread: a few operations, then exit with frames in its
 * private list (lpc_towner's exit path). */
static void *brief(void *arg)
{
	uint64_t rs = (uintptr_t)arg * 0xbf58476d1ce4e5b9ULL + 7;
	char *buf = aligned_alloc(4096, ps < 4096 ? 4096 : ps);
	struct lpc_page *v[4];

	for (int i = 0; i < 20; i++)
		one_op(&rs, buf);
	/* Leave with private frames: alloc some and free them (they go to
	 * this thread's list), then exit. */
	for (int i = 0; i < 4; i++)
		if (lpc_page_alloc(cache, &v[i]))
			v[i] = NULL;
	for (int i = 0; i < 4; i++)
		lpc_page_put(v[i]);
	free(buf);
	return NULL;
}

static int run(const struct cfg *k)
{
	struct lpc_config cfg;
	pthread_t th[NTHREADS], ck;
	char path[512], name[32];
	uint64_t nf, got, inval = 0;
	struct lpc_stats s;
	double t0;
	long b0 = atomic_load(&bad);
	unsigned briefs = 0;
	int rc;

	ps = k->ps;
	lpc_config_init(&cfg);
	cfg.cache_bytes = (size_t)k->nframes * ps;
	cfg.page_size = ps;
	cfg.io_backend = LPC_IO_NULL;
	cfg.lookup_mode = k->mode;
	cfg.alloc_wait_ms = 300;
	rc = lpc_cache_create(&cfg, &cache);
	if (rc) {
		printf("create: %d\n", rc);
		return 1;
	}
	fpages = (uint64_t)k->nframes * 3;
	for (int i = 0; i < NFILES; i++) {
		struct lpc_page *p;

		snprintf(name, sizeof(name), "f%d", i);
		mh_hole_file(name, fpages * ps, path, sizeof(path));
		if (lpc_file_open(cache, path, O_RDONLY, 0, &files[i])) {
			printf("open failed\n");
			return 1;
		}
		if (lpc_page_get(files[i], 0, 0, &p)) {
			printf("first get failed\n");
			return 1;
		}
		fids[i] = ((uint64_t *)lpc_page_data(p))[0];
		lpc_page_put(p);
	}
	atomic_store(&stop, false);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)(i + 1));
	seen = malloc(k->nframes);
	pthread_create(&ck, NULL, checker, NULL);
	t0 = mh_now();
	while (mh_now() - t0 < k->secs) {
		pthread_t b;

		if (pthread_create(&b, NULL, brief, (void *)(uintptr_t)(1000 + briefs++)) == 0)
			pthread_join(b, NULL);
		usleep(2000);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	pthread_join(ck, NULL);
	check_lists();
	for (int i = 0; i < NFILES; i++) {
		rc = lpc_invalidate(files[i], 0, 0);
		inval += rc > 0 ? (uint64_t)rc : 0;
	}
	/* Allocating every frame first takes what waits on pending (reclaim():
	 * a grace period), so that frames_free then counts every frame (the
	 * pending frames of a small invalidate are never drained otherwise:
	 * att_pending_stuck). */
	got = mh_allocatable(cache, k->nframes);
	nf = mh_wait_all_free(cache, 5.0);
	lpc_stats(cache, &s);
	printf("  ps %zu frames %u %s: %ld ops, %ld list checks, %u brief threads, %ld ENOMEM; quiet: frames_free "
	       "%" PRIu64 "/%" PRIu64 ", allocatable %" PRIu64 ", invalidated at the end %" PRIu64
	       ", evictions %" PRIu64 "\n",
	       ps, k->nframes, k->mode == LPC_LOOKUP_LOCKED ? "locked" : "lockless",
	       atomic_load(&ops), atomic_load(&checks), briefs, atomic_load(&enomem), nf, s.frames, got, inval,
	       s.evictions);
	if (nf != s.frames) {
		printf("  FAIL frames_free %" PRIu64 " != frames %" PRIu64 " when quiet\n", nf,
		       s.frames);
		atomic_fetch_add(&bad, 1);
	}
	if (got != k->nframes) {
		printf("  FAIL %" PRIu64 " frames allocatable of %u when quiet\n", got, k->nframes);
		atomic_fetch_add(&bad, 1);
	}
	for (int i = 0; i < NFILES; i++)
		lpc_file_close(files[i]);
	rc = lpc_cache_destroy(cache);
	if (rc) {
		printf("  FAIL destroy: %d\n", rc);
		atomic_fetch_add(&bad, 1);
	}
	free(seen);
	atomic_store(&checks, 0);
	atomic_store(&ops, 0);
	atomic_store(&enomem, 0);
	return atomic_load(&bad) != b0;
}

int main(int argc, char **argv)
{
	static const struct cfg all[] = {
		{ 512, 64, LPC_LOOKUP_LOCKLESS, 2 },   { 512, 300, LPC_LOOKUP_LOCKED, 2 },
		{ 4096, 64, LPC_LOOKUP_LOCKLESS, 3 },  { 4096, 130, LPC_LOOKUP_LOCKLESS, 3 },
		{ 4096, 2100, LPC_LOOKUP_LOCKLESS, 3 }, { 4096, 200, LPC_LOOKUP_LOCKED, 2 },
		{ 65536, 96, LPC_LOOKUP_LOCKLESS, 2 }, { 2u << 20, 16, LPC_LOOKUP_LOCKLESS, 2 },
		{ 2u << 20, 24, LPC_LOOKUP_LOCKED, 2 },
	};
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5) {
		struct cfg k = { strtoul(argv[1], NULL, 0), (uint32_t)strtoul(argv[2], NULL, 0),
				 atoi(argv[3]), atof(argv[4]) };

		fails = run(&k);
	} else {
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			fails += run(&all[i]);
	}
	att_cleanup();
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}
