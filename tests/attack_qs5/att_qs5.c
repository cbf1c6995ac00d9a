/* SPDX-License-Identifier: MIT */
/*
 * att_qs5.c - ra_worker.c QS5 (8dad5df: lpc_ra_forget at the last close):
 * does it take out only the closed file's streams, keep ra_room while two
 * streams or more are left, and leave nothing behind?
 *
 * Part 1, keys (both lookup modes, deterministic; the act table is read
 * under w->lock, keys compared as numbers as QS1 does):
 *   file A holds two streams (misses 0,1 and 1000,1001), B, C and D one
 *   each; ra_room set to the share (as a cut window sets it, QS4).  Close
 *   C, then D: A's two entries and B's stay stamped, C's and D's go, the
 *   room stays (three streams left).  Then 64 cycles of a file X opened on
 *   the same path each time (a new copy each time, ZC; an RCU barrier
 *   after each close frees the old struct, call_rcu, so the new one may
 *   land where it was: the count is printed), a stream made on X (two misses, more sizings
 *   as the stream ramps: X reads 24 pages), A's and B's streams sized once
 *   (lpc_ra_window_cap with their own keys: what their next marker does),
 *   ra_room set to the share, X closed: after each close A's and B's
 *   entries are all there, none of X's, and the room is the share.  Then
 *   B closed (A's two streams left: two streams, the room stays), then A
 *   (none: 0).
 * Part 2, stress (both modes): two scanners over slices of A and B (32768
 *   pages each, 4096 frames, LPC_IO_NULL: windows split and cut, ra_room
 *   grown, QS4), a third thread opening C, reading 64 pages of it in turn
 *   and closing it, again and again, and a sampler of ra_room; every read
 *   checked, a watchdog for a hang (w->lock in file_free).  Afterwards
 *   every file closed: no entry stamped in act, ra_room 0.  Run once with
 *   C kept open (no QS5 run; lockless) and with C closed after every 64
 *   pages (both modes); the sampler's count of ra_room 0 is printed for
 *   both (a figure to compare, not checked: 2 shared CPUs).
 *
 * Exit 0: QS5 held; 1: a check failed.
 * Run: make && out-release/att_qs5
 */
#include <fcntl.h>
#include <pthread.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"
#include "core/rcu.h"

#define PS 4096u

static uint32_t room(struct lpc_cache *c)
{
	return atomic_load_explicit(&c->pool.ra_room, memory_order_relaxed);
}

static void set_room(struct lpc_cache *c, uint32_t v)
{
	atomic_store_explicit(&c->pool.ra_room, v, memory_order_relaxed);
}

static bool in_file(const void *key, uintptr_t lo)
{
	uintptr_t k = (uintptr_t)key;
	struct lpc_file *f = NULL;

	return k >= lo && k < lo + sizeof(f->ra_streams);
}

/* Entries stamped with a key among f's stream slots (lo: the address of
 * f->ra_streams, kept as a number: f may be freed); keys[] gets them. */
static unsigned live_of(struct lpc_cache *c, uintptr_t lo, const void **keys)
{
	struct lpc_ra_worker *w = &c->files.ra;
	unsigned n = 0;

	pthread_mutex_lock(&w->lock);
	for (unsigned k = 0; k < LPC_RA_ACTIVE; k++)
		if (w->act[k].stamp && in_file(w->act[k].key, lo)) {
			if (keys)
				keys[n] = w->act[k].key;
			n++;
		}
	pthread_mutex_unlock(&w->lock);
	return n;
}

static unsigned live_all(struct lpc_cache *c)
{
	struct lpc_ra_worker *w = &c->files.ra;
	unsigned n = 0;

	pthread_mutex_lock(&w->lock);
	for (unsigned k = 0; k < LPC_RA_ACTIVE; k++)
		n += w->act[k].stamp != 0;
	pthread_mutex_unlock(&w->lock);
	return n;
}

static uintptr_t lo_of(struct lpc_file *f)
{
	return (uintptr_t)&f->ra_streams[0];
}

static void read_pages(struct lpc_file *f, uint64_t from, uint64_t n)
{
	char buf[PS];

	for (uint64_t i = from; i < from + n; i++)
		REQUIRE(lpc_pread(f, buf, PS, i * PS) == (ssize_t)PS, "read of page %llu",
			(unsigned long long)i);
}

static void part_keys(int mode)
{
	const char *name = mode == LPC_LOOKUP_LOCKED ? "LOCKED" : "lockless";
	const unsigned frames = 1024;
	const uint32_t share = frames / 4;
	struct lpc_cache *c;
	struct lpc_file *fa, *fb, *fc, *fd;
	char pa[512], pb[512], pc[512], pd[512], px[512];
	const void *ka[LPC_RA_ACTIVE], *kb[LPC_RA_ACTIVE];
	uintptr_t la, lb, lc, ld, seen[64];
	unsigned reused = 0, na, nb;

	tst_readahead_kb = 0;
	c = tst_cache_create((size_t)frames * PS, PS, LPC_IO_NULL, mode);
	REQUIRE(tst_make_sparse(mode ? "ka" : "kal", 2000 * PS, pa, sizeof(pa)) == 0);
	REQUIRE(tst_make_sparse(mode ? "kb" : "kbl", 2000 * PS, pb, sizeof(pb)) == 0);
	REQUIRE(tst_make_sparse(mode ? "kc" : "kcl", 2000 * PS, pc, sizeof(pc)) == 0);
	REQUIRE(tst_make_sparse(mode ? "kd" : "kdl", 2000 * PS, pd, sizeof(pd)) == 0);
	REQUIRE(tst_make_sparse(mode ? "kx" : "kxl", 2000 * PS, px, sizeof(px)) == 0);
	fa = tst_file_open(c, pa, O_RDONLY);
	fb = tst_file_open(c, pb, O_RDONLY);
	fc = tst_file_open(c, pc, O_RDONLY);
	fd = tst_file_open(c, pd, O_RDONLY);
	la = lo_of(fa), lb = lo_of(fb), lc = lo_of(fc), ld = lo_of(fd);
	read_pages(fa, 0, 2);
	read_pages(fa, 1000, 2);
	read_pages(fb, 0, 2);
	read_pages(fc, 0, 2);
	read_pages(fd, 0, 2);
	lpc_ra_quiesce(fa), lpc_ra_quiesce(fb), lpc_ra_quiesce(fc), lpc_ra_quiesce(fd);
	REQUIRE(live_of(c, la, NULL) == 2 && live_of(c, lb, NULL) == 1 &&
			live_of(c, lc, NULL) == 1 && live_of(c, ld, NULL) == 1,
		"%s: setup: A %u B %u C %u D %u streams stamped (want 2 1 1 1)", name,
		live_of(c, la, NULL), live_of(c, lb, NULL), live_of(c, lc, NULL),
		live_of(c, ld, NULL));
	set_room(c, share);
	CHECK_EQ(lpc_file_close(fc), 0);
	CHECK_EQ(live_of(c, la, NULL), 2, "%s: C closed: A's two streams stay", name);
	CHECK_EQ(live_of(c, lb, NULL), 1, "%s: C closed: B's stream stays", name);
	CHECK_EQ(live_of(c, ld, NULL), 1, "%s: C closed: D's stream stays", name);
	CHECK_EQ(live_of(c, lc, NULL), 0, "%s: C closed: C's stream gone", name);
	CHECK_EQ(room(c), share, "%s: C closed, four streams left: room stays", name);
	CHECK_EQ(lpc_file_close(fd), 0);
	CHECK_EQ(live_of(c, la, NULL), 2, "%s: D closed: A's two streams stay", name);
	CHECK_EQ(live_of(c, lb, NULL), 1, "%s: D closed: B's stream stays", name);
	CHECK_EQ(live_all(c), 3, "%s: D closed: three entries", name);
	CHECK_EQ(room(c), share, "%s: D closed, three streams left: room stays", name);

	na = live_of(c, la, ka);
	nb = live_of(c, lb, kb);
	for (unsigned cyc = 0; cyc < 64; cyc++) {
		struct lpc_file *fx = tst_file_open(c, px, O_RDONLY);
		uintptr_t lx = lo_of(fx);

		for (unsigned k = 0; k < cyc; k++)
			if (seen[k] == lx) {
				reused++;
				break;
			}
		seen[cyc] = lx;
		read_pages(fx, 0, 24); /* a stream and its ramp's sizings */
		lpc_ra_quiesce(fx);
		CHECK(live_of(c, lx, NULL) >= 1, "%s: cycle %u: X's stream stamped", name, cyc);
		/* A's and B's next windows (their markers' sizings, QS1). */
		for (unsigned k = 0; k < na; k++)
			(void)lpc_ra_window_cap(&c->files, ka[k], false);
		for (unsigned k = 0; k < nb; k++)
			(void)lpc_ra_window_cap(&c->files, kb[k], false);
		set_room(c, share);
		CHECK_EQ(lpc_file_close(fx), 0);
		{
			/* The copy's struct freed now (call_rcu), so the next
			 * copy may take its address. */
			bool scoped = lpc_rcu_scope_enter();

			lpc_rcu_barrier();
			lpc_rcu_scope_exit(scoped);
		}
		CHECK_EQ(live_of(c, lx, NULL), 0, "%s: cycle %u: X's entries gone", name, cyc);
		CHECK_EQ(live_of(c, la, NULL), 2, "%s: cycle %u: A's two streams stay", name, cyc);
		CHECK_EQ(live_of(c, lb, NULL), 1, "%s: cycle %u: B's stream stays", name, cyc);
		CHECK_EQ(room(c), share, "%s: cycle %u: X closed, three streams left: room stays",
			 name, cyc);
	}
	printf("%s: 64 copies of X, %u of them at an address a closed copy had\n", name, reused);
	CHECK_EQ(lpc_file_close(fb), 0);
	CHECK_EQ(live_of(c, la, NULL), 2, "%s: B closed: A's two streams stay", name);
	CHECK_EQ(room(c), share, "%s: B closed, A's two streams left: room stays", name);
	CHECK_EQ(lpc_file_close(fa), 0);
	CHECK_EQ(live_all(c), 0, "%s: all closed: no entry", name);
	CHECK_EQ(room(c), 0, "%s: all closed: room 0", name);
	tst_cache_destroy(c);
}

#define SCAN_PAGES 32768u
#define FRAMES 4096u

struct scanner {
	struct lpc_file *f;
	_Atomic bool *stop;
	uint64_t bad, passes;
};

static void *scan_main(void *arg)
{
	struct scanner *s = arg;
	char buf[4 * PS];

	/* Slices of 2048 pages, never to the end (a window that reaches it
	 * stops counting, QS1), again and again. */
	while (!atomic_load(s->stop)) {
		uint64_t from = (s->passes % 15) * 2048;

		for (uint64_t off = from * PS; off < (from + 2048) * PS; off += sizeof(buf))
			if (lpc_pread(s->f, buf, sizeof(buf), off) != (ssize_t)sizeof(buf))
				s->bad++;
		s->passes++;
	}
	return NULL;
}

struct churn {
	struct lpc_cache *c;
	const char *path;
	_Atomic bool *stop;
	bool reopen; /* close C after each 64 pages (QS5 runs), or keep it open */
	uintptr_t la, lb; /* the scanners' files' stream slots */
	uint64_t bad, cycles;
	uint64_t cleared;   /* closes across which ra_room went from set to 0 */
	uint64_t cleared2;  /* ... with both scanners' streams fresh after it */
};

/* Both files' streams stamped within the last LPC_RA_ACTIVE_AGE - 1
 * sizings (active for QS1, one sizing to spare). */
static bool both_fresh(struct lpc_cache *c, uintptr_t la, uintptr_t lb)
{
	struct lpc_ra_worker *w = &c->files.ra;
	bool a = false, b = false;

	pthread_mutex_lock(&w->lock);
	for (unsigned k = 0; k < LPC_RA_ACTIVE; k++) {
		if (!w->act[k].stamp || w->wclock - w->act[k].stamp >= LPC_RA_ACTIVE_AGE - 1)
			continue;
		a |= in_file(w->act[k].key, la);
		b |= in_file(w->act[k].key, lb);
	}
	pthread_mutex_unlock(&w->lock);
	return a && b;
}

static void *churn_main(void *arg)
{
	struct churn *h = arg;
	char buf[PS];

	struct lpc_file *f = NULL;

	while (!atomic_load(h->stop)) {
		if (!f && lpc_file_open(h->c, h->path, O_RDONLY, 0, &f)) {
			h->bad++;
			break;
		}
		for (uint64_t i = 0; i < 64; i++)
			if (lpc_pread(f, buf, PS, ((h->cycles * 64) % 8192 + i) * PS) != (ssize_t)PS)
				h->bad++;
		if (h->reopen) {
			uint32_t before = room(h->c);

			if (lpc_file_close(f))
				h->bad++;
			f = NULL;
			if (before && !room(h->c)) {
				h->cleared++;
				h->cleared2 += both_fresh(h->c, h->la, h->lb);
			}
		}
		h->cycles++;
	}
	if (f && lpc_file_close(f))
		h->bad++;
	return NULL;
}

static void part_stress(int mode, bool reopen, double secs)
{
	const char *name = mode == LPC_LOOKUP_LOCKED ? "LOCKED" : "lockless";
	_Atomic bool stop = false;
	struct scanner sa = { .stop = &stop }, sb = { .stop = &stop };
	struct lpc_cache *c;
	struct churn h;
	char pa[512], pb[512], pc[512];
	pthread_t ta, tb, th;
	uint64_t samples = 0, zero = 0, t_end;

	tst_readahead_kb = 0;
	c = tst_cache_create((size_t)FRAMES * PS, PS, LPC_IO_NULL, mode);
	{
		char n[8];

		snprintf(n, sizeof(n), "sa%d%d", mode, reopen);
		REQUIRE(tst_make_sparse(n, (uint64_t)SCAN_PAGES * PS, pa, sizeof(pa)) == 0);
		snprintf(n, sizeof(n), "sb%d%d", mode, reopen);
		REQUIRE(tst_make_sparse(n, (uint64_t)SCAN_PAGES * PS, pb, sizeof(pb)) == 0);
		snprintf(n, sizeof(n), "sc%d%d", mode, reopen);
		REQUIRE(tst_make_sparse(n, 8192ull * PS, pc, sizeof(pc)) == 0);
	}
	sa.f = tst_file_open(c, pa, O_RDONLY);
	sb.f = tst_file_open(c, pb, O_RDONLY);
	h = (struct churn){ .c = c, .path = pc, .stop = &stop, .reopen = reopen,
			    .la = lo_of(sa.f), .lb = lo_of(sb.f) };
	REQUIRE(pthread_create(&ta, NULL, scan_main, &sa) == 0);
	REQUIRE(pthread_create(&tb, NULL, scan_main, &sb) == 0);
	REQUIRE(pthread_create(&th, NULL, churn_main, &h) == 0);
	t_end = tst_now_ns() + (uint64_t)(secs * 1e9);
	while (tst_now_ns() < t_end) {
		samples++;
		zero += room(c) == 0;
		tst_sleep_us(200);
	}
	atomic_store(&stop, true);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_join(th, NULL);
	CHECK_EQ(sa.bad + sb.bad + h.bad, 0, "%s: failed reads, opens or closes", name);
	printf("%s: %llu+%llu slices scanned, C %s %llu times; "
	       "ra_room 0 in %llu of %llu samples\n",
	       name, (unsigned long long)sa.passes, (unsigned long long)sb.passes,
	       reopen ? "opened, read and closed" : "kept open, read", (unsigned long long)h.cycles, (unsigned long long)zero,
	       (unsigned long long)samples);
	if (reopen)
		printf("%s: %llu closes of C took ra_room to 0, %llu of them with both scanners' "
		       "streams fresh just after\n",
		       name, (unsigned long long)h.cleared, (unsigned long long)h.cleared2);
	CHECK_EQ(lpc_file_close(sa.f), 0);
	CHECK_EQ(lpc_file_close(sb.f), 0);
	CHECK_EQ(live_all(c), 0, "%s: every file closed: no entry stamped", name);
	CHECK_EQ(room(c), 0, "%s: every file closed: ra_room 0", name);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	double secs;

	tst_init(argc, argv, 300);
	tst_require_tmpdir();
	secs = tst_stress_seconds(3.0);
	part_keys(LPC_LOOKUP_LOCKLESS);
	part_keys(LPC_LOOKUP_LOCKED);
	/* The figure to compare: C kept open (no QS5 run) against C closed
	 * after each 64 pages (QS5 at every close). */
	part_stress(LPC_LOOKUP_LOCKLESS, false, secs);
	part_stress(LPC_LOOKUP_LOCKLESS, true, secs);
	part_stress(LPC_LOOKUP_LOCKED, true, secs);
	return tst_finish();
}
