/* SPDX-License-Identifier: MIT */
/*
 * stress_pin.c - range pins (src/filemap/pin.c, P1-P5 and the slow path)
 * racing with lpc_invalidate, file close and frame reuse (guarantees I.1,
 * I.2 of include/lpc/lpc.h).
 *
 * A small cache (160 frames) and a null-backend file A of 256 pages, so
 * frames are recycled all the time:
 *  - pinners pin random ranges of A (1 to 12 pages, unaligned, some across
 *    the 64-page leaves), check each page (its stamp {file id, index} and
 *    every byte, its descriptor's identity, UPTODATE, a pin on its count),
 *    hold them a moment, check the stamps again (a frame reused while pinned
 *    shows), and unpin;
 *  - a remover invalidates random ranges of A (now and then all of it),
 *    freezing and removing pages under the pinners' feet: pinned pages
 *    must survive (a pinned page is never frozen);
 *  - a closer opens file B, pins a range of it, closes B while pinned (the
 *    last close removes its pages, truncate-like), checks the pinned pages'
 *    stamps after the close, unpins, and opens B again.
 * A pin that takes a frozen page (P3 without "unless zero"), or a fast path
 * that returns a removed page (no P4), hands out a page whose stamp is
 * another page's; in the LPC_DEBUG build the checks RESURRECT and
 * LOOKUP-NOT-IN-INDEX name the broken step.  -ENOMEM (every frame cached
 * or pinned, no eviction yet) is allowed and counted.  Both lookup modes run,
 * each for half the time.  At the end: no page left pinned, every frame
 * allocatable again.
 *
 * Usage: stress_pin [--seed N]; LPC_STRESS_SECONDS (default 4).
 * Exit: 0 pass, 1 fail, 77 skip.
 */
#include <sched.h>

#include "../common/stress.h"
#include "cache/cache.h"

#define PS 4096u
#define FRAMES 160u
#define APAGES 256u
#define BPAGES 24u
#define MAXP 12u

static struct lpc_cache *cache;
static struct lpc_file *fa;
static uint64_t ida, idb;
static char pathb[600];
static _Atomic uint64_t n_pins, n_enomem, n_closes;

/* Checks the pinned pages of [first, first + n) of f (id).  Return: true if
 * every one is right. */
static bool check_pins(struct lpc_file *f, uint64_t id, uint64_t fsize, uint64_t first,
		       struct lpc_page **pages, unsigned n, bool identity, void *scratch)
{
	bool ok = true;

	for (unsigned i = 0; i < n; i++) {
		struct lpc_page *p = pages[i];
		int bad = tst_null_check_page(id, first + i, PS, fsize, lpc_page_data(p), scratch);

		ok &= CHECK(bad == 0, "page %llu: %s", (unsigned long long)(first + i),
			    bad == 1 ? "another page's stamp" : "wrong bytes");
		ok &= CHECK(atomic_load(&p->ref) >= LPC_PIN_BIAS, "page %llu not pinned (ref %u)",
			    (unsigned long long)(first + i), atomic_load(&p->ref));
		ok &= CHECK(atomic_load(&p->flags) & LPC_PG_UPTODATE, "page not UPTODATE");
		if (identity)
			ok &= CHECK(atomic_load(&p->file) == f && atomic_load(&p->index) == first + i,
				    "descriptor identity of page %llu", (unsigned long long)(first + i));
	}
	return ok;
}

static void *pinner(void *arg)
{
	uint64_t s = tst_seed ^ (uintptr_t)arg * 0x9e37;
	void *scratch = malloc(PS);
	struct lpc_page *pages[MAXP];

	REQUIRE(scratch);
	while (!tst_stopping()) {
		uint64_t off = tst_rnd(&s) % ((uint64_t)APAGES * PS);
		size_t len = 1 + (size_t)(tst_rnd(&s) % (MAXP * PS - PS));
		uint64_t first = off / PS;
		int n = lpc_pin(fa, off, len, LPC_PIN_READ, pages, MAXP);

		if (n == -ENOMEM) {
			atomic_fetch_add(&n_enomem, 1);
			sched_yield();
			continue;
		}
		uint64_t end = off + len > (uint64_t)APAGES * PS ? (uint64_t)APAGES * PS : off + len;

		if (!CHECK_EQ(n, (int)((end - 1) / PS - first + 1), "pin [%llu, +%zu)",
			      (unsigned long long)off, len))
			continue;
		check_pins(fa, ida, (uint64_t)APAGES * PS, first, pages, (unsigned)n, true, scratch);
		if (tst_rnd(&s) % 4 == 0)
			sched_yield();
		check_pins(fa, ida, (uint64_t)APAGES * PS, first, pages, (unsigned)n, true, scratch);
		lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
		atomic_fetch_add(&n_pins, 1);
	}
	free(scratch);
	return NULL;
}

static void *remover(void *arg)
{
	uint64_t s = tst_seed ^ 0x5151 ^ (uintptr_t)arg;

	while (!tst_stopping()) {
		if (tst_rnd(&s) % 16 == 0) {
			lpc_invalidate(fa, 0, 0);
		} else {
			uint64_t first = tst_rnd(&s) % APAGES;

			lpc_invalidate(fa, first * PS, (1 + tst_rnd(&s) % 16) * PS);
		}
		tst_sleep_us(50);
	}
	return NULL;
}

static void *closer(void *arg)
{
	uint64_t s = tst_seed ^ 0xc105e ^ (uintptr_t)arg;
	void *scratch = malloc(PS);
	struct lpc_page *pages[MAXP];

	REQUIRE(scratch);
	while (!tst_stopping()) {
		struct lpc_file *fb;
		uint64_t first = tst_rnd(&s) % (BPAGES - 4);
		unsigned want = 1 + (unsigned)(tst_rnd(&s) % 4);
		int n;

		REQUIRE(lpc_file_open(cache, pathb, O_RDONLY, 0, &fb) == 0, "open B");
		n = lpc_pin(fb, first * PS, want * PS, LPC_PIN_READ, pages, MAXP);
		CHECK_EQ(lpc_file_close(fb), 0, "close B while pinned");
		if (n == -ENOMEM) {
			atomic_fetch_add(&n_enomem, 1);
			continue;
		}
		if (!CHECK_EQ(n, (int)want, "pin of B"))
			continue;
		/* The file is gone; its pages are still ours (I.2). */
		check_pins(NULL, idb, (uint64_t)BPAGES * PS, first, pages, (unsigned)n, false, scratch);
		sched_yield();
		check_pins(NULL, idb, (uint64_t)BPAGES * PS, first, pages, (unsigned)n, false, scratch);
		lpc_unpin(pages, (unsigned)n, LPC_PIN_READ);
		atomic_fetch_add(&n_closes, 1);
	}
	free(scratch);
	return NULL;
}

static void run(int mode, double secs)
{
	struct tst_threads th = { 0 };
	struct lpc_stats st;
	struct lpc_file *fb;
	uint64_t closes;

	atomic_store(&n_pins, 0);
	atomic_store(&n_enomem, 0);
	atomic_store(&n_closes, 0);
	cache = tst_cache_create(FRAMES * PS, PS, LPC_IO_NULL, mode);
	fa = tst_stress_file(cache, (uint64_t)APAGES * PS, &ida, "pin-a-%d", mode);
	fb = tst_stress_file(cache, (uint64_t)BPAGES * PS, &idb, "pin-b-%d", mode);
	snprintf(pathb, sizeof(pathb), "%s/pin-b-%d", tst_tmpdir(), mode);
	CHECK_EQ(lpc_file_close(fb), 0); /* the closer's closes are the last ones */
	tst_threads_start(&th, 2, pinner, NULL, 0);
	tst_threads_start(&th, 1, remover, NULL, 0);
	tst_threads_start(&th, 1, closer, NULL, 0);
	tst_stress_wait(secs);
	tst_threads_join(&th);
	lpc_stats(cache, &st);
	printf("  %s: %llu ranges pinned and checked, %llu closes of B while pinned, %llu -ENOMEM; "
	       "pin_fast %llu pin_slow %llu pages %llu invalidated %llu\n",
	       mode ? "LOCKED" : "lockless", (unsigned long long)n_pins,
	       (unsigned long long)n_closes, (unsigned long long)n_enomem,
	       (unsigned long long)st.pin_fast, (unsigned long long)st.pin_slow,
	       (unsigned long long)st.pages_pinned, (unsigned long long)st.invalidated);
	CHECK(n_pins > 0, "some pins");
	closes = n_closes;
	CHECK(st.pin_slow >= closes, "every pin of a freshly opened B is slow");
	CHECK_EQ(st.pin_fast + st.pin_slow, n_pins + n_closes, "every successful pin counted once");
	CHECK_EQ(lpc_file_close(fa), 0);
	/* No pin leaked: destroy would be -EBUSY. */
	CHECK_EQ(tst_frames_allocatable(cache, FRAMES), FRAMES, "every frame free again");
	tst_cache_destroy(cache);
}

int main(int argc, char **argv)
{
	double secs = tst_stress_init(argc, argv, 4);

	run(LPC_LOOKUP_LOCKLESS, secs / 2);
	run(LPC_LOOKUP_LOCKED, secs / 2);
	return tst_finish();
}
