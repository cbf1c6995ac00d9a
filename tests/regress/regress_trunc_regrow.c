/* SPDX-License-Identifier: MIT */
/*
 * regress_trunc_regrow.c - stories: a read in flight across a shrinking
 * lpc_truncate must not keep bytes from before the cut once the file has
 * grown again, and must keep what it read below the cut (filemap.h
 * trunc_seq, lpc_filemap_trunc_from; miss.c M4-M5, run.c U4-U5).
 *
 * The interleaving (a file of three pages on disk, none cached):
 *   1. R, a reader, asks for its page(s) (lpc_page_get of one page, or
 *      lpc_pread of two: a run of two absent pages) and passes its size
 *      check (the file is three pages); it is parked at M3, before it
 *      inserts its page.
 *   2. T calls lpc_truncate(cut): lpc's size is the cut, the removal pass
 *      finds nothing past it (R's page is not in the index yet), and T is
 *      parked at SZ4, before its ftruncate: the disk still holds the old
 *      pages.
 *   3. R goes on: it inserts its page(s) and reads them from the disk -
 *      the bytes from before the cut - and is parked at M4D, before the
 *      checks that follow the read.
 *   4. T goes on: ftruncate(cut), returns 0.
 *   5. The test grows the file again: lpc_truncate(3 pages) returns 0;
 *      the bytes past the cut now read as zeros (J.4).
 *   6. R goes on.
 * Three cuts:
 *   past   the cut at page 1: R's pages (2, or 1-2) lie past it.  Broken:
 *          its size check saw three pages, so the old bytes were kept as
 *          valid and R (and every later read) got them (stress_pin_evict
 *          under TSan: "T page 29, cut at 27 and regrown: word 0 is ...,
 *          not 0").  Fixed: R saw trunc_seq odd after its insert, dropped
 *          its pages with no ERROR and looked up again: zeros.
 *   inside the cut in the middle of page 1, R's page (1, or 0-1): R keeps
 *          page 1's bytes below the cut and zeros past it, page 0 whole,
 *          with its one read.
 *   below  the cut in the middle of page 2, R's pages (1, or 0-1) wholly
 *          below it: R keeps them, with its one read.  Broken before
 *          lpc_filemap_trunc_from: any read that saw trunc_seq move was
 *          dropped and read again, wherever its pages were (and while a
 *          truncate waited for a page lock, every miss on the file read
 *          and dropped its pages without end: test_ra_faults t_trunc_held).
 * Every story, both backends, both lookup modes, 512 B and 4 KiB pages;
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

enum cut { PAST, INSIDE, BELOW };

struct story {
	struct lpc_file *f;
	size_t ps;
	uint64_t first;		/* R's first page */
	bool run;		/* lpc_pread of pages first, first + 1, else lpc_page_get */
	uint64_t cut;		/* T's new size */
	unsigned char *got;	/* R's bytes of its pages */
	int rc;
};

static void *r_main(void *arg)
{
	struct story *s = arg;

	my_role = READER;
	if (s->run) {
		ssize_t n = lpc_pread(s->f, s->got, 2 * s->ps, s->first * s->ps);

		s->rc = n == (ssize_t)(2 * s->ps) ? 0 : n < 0 ? (int)n : -1;
	} else {
		struct lpc_page *p;

		s->rc = lpc_page_get(s->f, s->first, 0, &p);
		if (!s->rc) {
			memcpy(s->got, lpc_page_data(p), s->ps);
			lpc_page_put(p);
		}
	}
	return NULL;
}

static void *t_main(void *arg)
{
	struct story *s = arg;

	my_role = TRUNCATER;
	s->rc = lpc_truncate(s->f, s->cut);
	return NULL;
}

/* Byte i of the file's page `index` after the cut and the regrowth: the
 * file's below the cut, zeros from it on. */
static unsigned char want_byte(const struct story *s, uint64_t index, size_t i)
{
	uint64_t off = index * s->ps + i;

	return off < s->cut ? tst_file_byte(7, off) : 0;
}

/* Return: the first byte of buf (page `index`) that is not as it should
 * be, or -1. */
static long first_wrong(const struct story *s, uint64_t index, const unsigned char *buf)
{
	for (size_t i = 0; i < s->ps; i++)
		if (buf[i] != want_byte(s, index, i))
			return (long)i;
	return -1;
}

static void story(int backend, int lookup, size_t ps, bool run, enum cut cut)
{
	static const char *const cuts[] = { "past", "inside", "below" };
	char name[64];
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct story rs = { 0 }, ts = { 0 };
	struct lpc_stats s0, s1;
	unsigned char after[2 * 4096];
	unsigned npages = run ? 2 : 1;
	pthread_t rt, tt;
	char path[512];
	int rc;

	snprintf(name, sizeof(name), "%s, cut %s", run ? "lpc_pread of a run" : "lpc_page_get",
		 cuts[cut]);
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
	switch (cut) {
	case PAST:
		rs.first = run ? 1 : 2;
		rs.cut = ps;
		break;
	case INSIDE:
		rs.first = run ? 0 : 1;
		rs.cut = ps + ps / 2;
		break;
	case BELOW:
		rs.first = run ? 0 : 1;
		rs.cut = 2 * ps + ps / 2;
		break;
	}
	ts.cut = rs.cut;
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

	lpc_stats(c, &s0);
	REQUIRE(pthread_create(&rt, NULL, r_main, &rs) == 0);			/* 1 */
	REQUIRE(parked(READER), "%s: R never reached M3", name);
	REQUIRE(pthread_create(&tt, NULL, t_main, &ts) == 0);			/* 2 */
	REQUIRE(parked(TRUNCATER), "%s: T never reached SZ4", name);
	sem_post(&roles[READER].go);						/* 3 */
	REQUIRE(parked(READER), "%s: R never reached M4D", name);
	sem_post(&roles[TRUNCATER].go);						/* 4 */
	pthread_join(tt, NULL);
	CHECK_EQ(ts.rc, 0, "%s: lpc_truncate(cut)", name);
	CHECK_EQ(lpc_truncate(rs.f, 3 * ps), 0, "%s: lpc_truncate(3 pages)", name);	/* 5 */
	sem_post(&roles[READER].go);						/* 6 */
	pthread_join(rt, NULL);
	lpc_yield_arm(NULL, 0, 0);
	lpc_yield_set_hook(NULL);
	lpc_stats(c, &s1);

	CHECK_EQ(rs.rc, 0, "%s: R's call", name);
	for (unsigned k = 0; k < npages && !rs.rc; k++)
		CHECK_EQ(first_wrong(&rs, rs.first + k, rs.got + k * ps), -1,
			 "%s: page %llu after the cut and the regrowth (R's read)", name,
			 (unsigned long long)(rs.first + k));
	if (cut == PAST)
		CHECK_EQ(s1.reads - s0.reads, 2, "%s: R read its pages past the cut again", name);
	else
		CHECK_EQ(s1.reads - s0.reads, 1, "%s: R kept what it read below the cut", name);
	CHECK_EQ(lpc_pread(rs.f, after, npages * ps, rs.first * ps), (ssize_t)(npages * ps),
		 "%s: lpc_pread after", name);
	for (unsigned k = 0; k < npages; k++)
		CHECK_EQ(first_wrong(&rs, rs.first + k, after + k * ps), -1,
			 "%s: page %llu read again", name, (unsigned long long)(rs.first + k));
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
				for (int k = PAST; k <= BELOW; k++) {
					story(backends[b], lookups[l], sizes[s], false, k);
					story(backends[b], lookups[l], sizes[s], true, k);
				}
			}
	return tst_finish();
}
