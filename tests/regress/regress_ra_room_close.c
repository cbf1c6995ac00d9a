/* SPDX-License-Identifier: MIT */
/*
 * regress_ra_room_close.c - the streams' refill room goes when their files
 * do (ra_worker.c QS4-QS5).
 *
 * A split window cut short sets the pool's ra_room to the share (QS4), and
 * the reclaimer's refills for readahead then evict to that room plus RF4's
 * slack beyond it (reclaimer.c).  Only a window's sizing put it back to 0,
 * on seeing fewer than two streams active (QS1); once the scanners' files
 * were closed nothing sized a window, so ra_room stayed at the share, and
 * a refill for readahead with no stream at all (lpc_fadvise WILLNEED)
 * evicted some 1,300 cached pages of 4,096 frames for a read of 128
 * (tests/attack_scan3 att_ra_room).  The story, both lookup modes:
 *   1. three streams sized on three files (two misses each: S1's window);
 *   2. ra_room set to the share, as a cut window sets it (A4);
 *   3. the first file closed: two streams are left, the room stays;
 *   4. the second closed: one stream left (QS5): the room is 0.
 * Without QS5 the room stays at the share at step 4 (checked when written).
 */
#include <fcntl.h>

#include "../common/lpc_test.h"
#include "cache/cache.h"

#define PS 4096u
#define FRAMES 1024u

static void read_one(struct lpc_file *f, uint64_t index)
{
	char buf[PS];

	REQUIRE(lpc_pread(f, buf, PS, index * PS) == (ssize_t)PS, "read of page %llu",
		(unsigned long long)index);
}

static uint32_t room(struct lpc_cache *c)
{
	return atomic_load_explicit(&c->pool.ra_room, memory_order_relaxed);
}

static void story(int mode)
{
	const char *name = mode == LPC_LOOKUP_LOCKED ? "LOCKED" : "lockless";
	struct lpc_cache *c;
	struct lpc_file *f[3];
	char path[512];

	tst_readahead_kb = 0; /* readahead on: the default */
	c = tst_cache_create(FRAMES * PS, PS, LPC_IO_NULL, mode);
	for (int i = 0; i < 3; i++) {
		char base[16];

		snprintf(base, sizeof(base), "r%d%s", i, mode == LPC_LOOKUP_LOCKED ? "_l" : "");
		REQUIRE(tst_make_sparse(base, 2000 * PS, path, sizeof(path)) == 0, "file %d", i);
		f[i] = tst_file_open(c, path, O_RDONLY);
		/* 1: a stream sized on file i (its synchronous window). */
		read_one(f[i], 0);
		read_one(f[i], 1);
	}
	for (int i = 0; i < 3; i++)
		lpc_ra_quiesce(f[i]);
	/* 2 */
	atomic_store_explicit(&c->pool.ra_room, FRAMES / 4, memory_order_relaxed);
	/* 3 */
	CHECK_EQ(lpc_file_close(f[0]), 0);
	CHECK_EQ(room(c), FRAMES / 4, "%s: two streams left: their room stays", name);
	/* 4 */
	CHECK_EQ(lpc_file_close(f[1]), 0);
	CHECK_EQ(room(c), 0, "%s: one stream left: the room of one window (QS5)", name);
	CHECK_EQ(lpc_file_close(f[2]), 0);
	CHECK_EQ(room(c), 0, "%s: no stream left", name);
	tst_cache_destroy(c);
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 60);
	tst_require_tmpdir();
	story(LPC_LOOKUP_LOCKLESS);
	story(LPC_LOOKUP_LOCKED);
	return tst_finish();
}
