/* SPDX-License-Identifier: MIT */
/*
 * regress_trunc_regrow.c - stories: a read in flight across a shrinking
 * lpc_truncate must not keep bytes from before the cut once the file has
 * grown again (filemap.h trunc_seq; miss.c M4-M5, run.c U4-U5).
 *
 * The interleaving (a file of three pages on disk, none cached):
 *   1. R, a reader, asks for page 2 (lpc_page_get, or lpc_pread of pages
 *      1-2: a run of two absent pages) and passes its size check (the file
 *      is three pages); it is parked at M3, before it inserts its page.
 *   2. T calls lpc_truncate(1 page): lpc's size is one page, the removal
 *      pass finds nothing past it (R's page is not in the index yet), and
 *      T is parked at SZ4, before its ftruncate: the disk still holds the
 *      old pages.
 *   3. R goes on: it inserts its page(s) and reads them from the disk -
 *      the bytes from before the cut - and is parked at M4D, before the
 *      size check that follows the read.
 *   4. T goes on: ftruncate(1 page), returns 0.
 *   5. The test grows the file again: lpc_truncate(3 pages) returns 0;
 *      the bytes past one page now read as zeros (J.4).
 *   6. R goes on.  Broken: its size check saw three pages, so the old
 *      bytes were kept as valid and R (and every later read) got them
 *      (stress_pin_evict under TSan: "T page 29, cut at 27 and regrown:
 *      word 0 is ..., not 0").  Fixed: R saw trunc_seq odd after its
 *      insert, dropped its pages with no ERROR and looked up again: zeros.
 * Both stories, both backends, both lookup modes, 512 B and 4 KiB pages;
 * readahead off (the single-page story must stay single), the flusher kept
 * out.  Deterministic: R and T are parked by a yield-point hook, one point
 * at a time each.
 */
#include <fcntl.h>
#include <semaphore.h>

#include "../common/write_test.h"
#include "core/debug.h"

enum role { NONE, READER, TRUNCATER, NROLES };

/* Each role parks at the points of its list, in order, once each. */
static struct {
	enum lpc_yield_point at[2];
	unsigned nat, next;
	sem_t reached, go;
} roles[NROLES];
static __thread enum role my_role;

static void hook(enum lpc_yield_point yp)
{
	enum role r = my_role;

	if (r == NONE || roles[r].next >= roles[r].nat || yp != roles[r].at[roles[r].next])
		return;
	roles[r].next++;
	sem_post(&roles[r].reached);
	while (sem_wait(&roles[r].go) != 0)
		;
}

/* Return: true once role r is parked at its next point; false after 10 s. */
static bool parked(enum role r)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	while (sem_timedwait(&roles[r].reached, &ts) != 0)
		if (errno != EINTR)
			return false;
	return true;
}

struct story {
	struct lpc_file *f;
	size_t ps;
	bool run;		/* lpc_pread of pages 1-2, else lpc_page_get(2) */
	unsigned char *got;	/* R's bytes of page 2 */
	int rc;
};

static void *r_main(void *arg)
{
	struct story *s = arg;

	my_role = READER;
	if (s->run) {
		ssize_t n = lpc_pread(s->f, s->got, 2 * s->ps, s->ps);

		s->rc = n == (ssize_t)(2 * s->ps) ? 0 : n < 0 ? (int)n : -1;
	} else {
		struct lpc_page *p;

		s->rc = lpc_page_get(s->f, 2, 0, &p);
		if (!s->rc) {
			memcpy(s->got + s->ps, lpc_page_data(p), s->ps);
			lpc_page_put(p);
		}
	}
	return NULL;
}

static void *t_main(void *arg)
{
	struct story *s = arg;

	my_role = TRUNCATER;
	s->rc = lpc_truncate(s->f, s->ps);
	return NULL;
}

static void story(int backend, int lookup, size_t ps, bool run)
{
	const char *name = run ? "lpc_pread of a run" : "lpc_page_get";
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct story rs = { 0 }, ts = { 0 };
	unsigned char zeros[4096] = { 0 }, after[2 * 4096];
	pthread_t rt, tt;
	char path[512];
	int rc;

	REQUIRE(tst_make_file("trunc_regrow", 3 * ps, 7, path, sizeof(path)) == 0);
	lpc_config_init(&cfg);
	cfg.cache_bytes = 16 * ps;
	cfg.page_size = ps;
	cfg.io_backend = backend;
	cfg.lookup_mode = lookup;
	cfg.readahead_kb = LPC_READAHEAD_OFF;
	cfg.dirty_expire_ms = UINT32_MAX;
	cfg.dirty_background_pct = 100;
	cfg.dirty_limit_pct = 100;
	rc = lpc_cache_create(&cfg, &c);
	REQUIRE(rc == 0 && c, "lpc_cache_create = %d", rc);
	rs.f = ts.f = tst_file_open(c, path, O_RDWR);
	rs.ps = ts.ps = ps;
	rs.run = run;
	rs.got = malloc(2 * ps);
	REQUIRE(rs.got);
	memset(rs.got, 0xee, 2 * ps);

	for (int r = 1; r < NROLES; r++) {
		roles[r].next = 0;
		sem_init(&roles[r].reached, 0, 0);
		sem_init(&roles[r].go, 0, 0);
	}
	roles[READER].at[0] = LPC_YP_M3;
	roles[READER].at[1] = LPC_YP_M4D;
	roles[READER].nat = 2;
	roles[TRUNCATER].at[0] = LPC_YP_SZ4;
	roles[TRUNCATER].nat = 1;
	lpc_yield_set_hook(hook);
	REQUIRE(lpc_yield_arm("M3,M4D,SZ4", 1.0, 1) == 0, "arm M3, M4D, SZ4");

	REQUIRE(pthread_create(&rt, NULL, r_main, &rs) == 0);			/* 1 */
	REQUIRE(parked(READER), "%s: R never reached M3", name);
	REQUIRE(pthread_create(&tt, NULL, t_main, &ts) == 0);			/* 2 */
	REQUIRE(parked(TRUNCATER), "%s: T never reached SZ4", name);
	sem_post(&roles[READER].go);						/* 3 */
	REQUIRE(parked(READER), "%s: R never reached M4D", name);
	sem_post(&roles[TRUNCATER].go);						/* 4 */
	pthread_join(tt, NULL);
	CHECK_EQ(ts.rc, 0, "%s: lpc_truncate(1 page)", name);
	CHECK_EQ(lpc_truncate(rs.f, 3 * ps), 0, "%s: lpc_truncate(3 pages)", name);	/* 5 */
	sem_post(&roles[READER].go);						/* 6 */
	pthread_join(rt, NULL);
	lpc_yield_arm(NULL, 0, 0);
	lpc_yield_set_hook(NULL);

	CHECK_EQ(rs.rc, 0, "%s: R's call", name);
	if (!rs.rc)
		CHECK_EQ(tst_first_diff(rs.got + ps, zeros, ps), -1,
			 "%s: page 2 after the cut and the regrowth is zeros (R's read)", name);
	if (run && !rs.rc)
		CHECK_EQ(tst_first_diff(rs.got, zeros, ps), -1,
			 "%s: page 1 after the cut and the regrowth is zeros (R's read)", name);
	CHECK_EQ(lpc_pread(rs.f, after, 2 * ps, ps), (ssize_t)(2 * ps), "%s: lpc_pread after", name);
	CHECK_EQ(tst_first_diff(after, zeros, ps), -1, "%s: page 1 read again is zeros", name);
	CHECK_EQ(tst_first_diff(after + ps, zeros, ps), -1, "%s: page 2 read again is zeros", name);
	CHECK_EQ(lpc_file_close(rs.f), 0, "%s: close", name);
	CHECK_EQ(tst_file_size(path), (int64_t)(3 * ps), "%s: the kernel's size after close", name);
	for (int r = 1; r < NROLES; r++) {
		sem_destroy(&roles[r].reached);
		sem_destroy(&roles[r].go);
	}
	free(rs.got);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	static const int backends[] = { LPC_IO_SYNC, LPC_IO_URING };
	static const int lookups[] = { LPC_LOOKUP_LOCKLESS, LPC_LOOKUP_LOCKED };
	static const size_t sizes[] = { 512, 4096 };

	tst_init(argc, argv, 60);
	if (!LPC_DEBUG)
		tst_skip("needs -DLPC_DEBUG=ON (yield points)");
	tst_require_tmpdir();
	for (unsigned b = 0; b < 2; b++)
		for (unsigned l = 0; l < 2; l++)
			for (unsigned s = 0; s < 2; s++) {
				printf("# %s, %s lookup, %zu-byte pages\n", tst_backend_name(backends[b]),
				       lookups[l] == LPC_LOOKUP_LOCKED ? "locked" : "lockless",
				       sizes[s]);
				story(backends[b], lookups[l], sizes[s], false);
				story(backends[b], lookups[l], sizes[s], true);
			}
	return tst_finish();
}
