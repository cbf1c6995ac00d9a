/* SPDX-License-Identifier: MIT */
/*
 * test_config.c - lpc_config_init and lpc_cache_create: the defaults, every
 * invalid configuration (page sizes, budgets, backends, modes, reserved
 * fields) refused with -EINVAL without writing *out, and the valid edges
 * (512 B and 2 MiB pages, a one-page cache, a budget of whole frames only).
 *
 * Files live in a mkdtemp directory under $TMPDIR (else /var/tmp), made and
 * removed by tests/common/lpc_test.h.
 *
 * Usage: test_config [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>

#include "../common/lpc_test.h"

#define MiB (1024ull * 1024ull)

/* --- configurations --- */
static void t_config(void)
{
	struct lpc_config cfg, bad;
	struct lpc_cache *c = (struct lpc_cache *)0x1;
	static const size_t bad_ps[] = { 0, 1, 3, 256, 511, 513, 1000, 4097, 3 * 4096,
					 (2u << 20) + 4096, 4u << 20, 1ull << 40 };

	lpc_config_init(NULL); /* must not crash */
	memset(&cfg, 0xff, sizeof(cfg));
	lpc_config_init(&cfg);
	CHECK_EQ(cfg.cache_bytes, 64 * MiB);
	CHECK_EQ(cfg.page_size, 4096);
	CHECK_EQ(cfg.io_backend, LPC_IO_URING);
	CHECK_EQ(cfg.lookup_mode, LPC_LOOKUP_LOCKLESS);
	CHECK_EQ(cfg.alloc_wait_ms, 0);
	CHECK_EQ(cfg.reclaim_policy, LPC_RECLAIM_CLOCK2);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(cfg.reserved[i], 0, "reserved[%d]", i);
	CHECK_EQ(cfg.readahead_kb, 0);
	CHECK_EQ(cfg.readahead_max_kb, 0);
	CHECK_EQ(cfg.dirty_expire_ms, 0);
	CHECK_EQ(cfg.dirty_background_pct, 0);
	CHECK_EQ(cfg.dirty_limit_pct, 0);
	CHECK_EQ(cfg.reserved_wb, 0);

	CHECK_EQ(lpc_cache_create(NULL, &c), -EINVAL);
	CHECK_EQ(lpc_cache_create(&cfg, NULL), -EINVAL);

	for (size_t i = 0; i < sizeof(bad_ps) / sizeof(bad_ps[0]); i++) {
		bad = cfg;
		bad.page_size = bad_ps[i];
		bad.cache_bytes = 64 * MiB;
		CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "page size %zu", bad_ps[i]);
	}
	/* Budget smaller than one page. */
	bad = cfg;
	bad.cache_bytes = 0;
	CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "cache_bytes 0");
	bad.cache_bytes = 4095;
	CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "cache_bytes 4095 < page 4096");
	bad.page_size = 65536;
	bad.cache_bytes = 65535;
	CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "cache_bytes 65535 < page 65536");
	/* Unknown backend and mode (backend 2 is LPC_IO_URING). */
	int bad_vals[] = { -1, 3, 4, 1000 };
	for (size_t i = 0; i < 4; i++) {
		bad = cfg;
		bad.io_backend = bad_vals[i] == LPC_IO_URING ? 4 : bad_vals[i];
		CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "backend %d", bad.io_backend);
		bad = cfg;
		bad.lookup_mode = bad_vals[i];
		CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "mode %d", bad_vals[i]);
		bad = cfg;
		bad.reclaim_policy = bad_vals[i];
		CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "policy %d", bad_vals[i]);
	}
	for (int i = 0; i < 2; i++) {
		bad = cfg;
		bad.reserved[i] = 1ull << (i * 7);
		CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "reserved[%d] != 0", i);
	}
	/* The write limits (dirty_expire_ms, dirty_background_pct, dirty_limit_pct). */
	bad = cfg;
	bad.reserved_wb = 1;
	CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "reserved_wb != 0");
	bad = cfg;
	bad.dirty_background_pct = 101;
	CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "background 101 %%");
	bad = cfg;
	bad.dirty_limit_pct = 101;
	CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "limit 101 %%");
	bad = cfg;
	bad.dirty_background_pct = 50;
	bad.dirty_limit_pct = 40;
	CHECK_EQ(lpc_cache_create(&bad, &c), -EINVAL, "background above the limit");
	CHECK(c == (struct lpc_cache *)0x1, "a failed create wrote *out");

	/* The edges that are valid: 512 B and 2 MiB pages, a one-page cache. */
	static const size_t ok_ps[] = { 512, 1024, 4096, 65536, 2u << 20 };
	for (size_t i = 0; i < sizeof(ok_ps) / sizeof(ok_ps[0]); i++) {
		struct lpc_stats st;

		bad = cfg;
		bad.page_size = ok_ps[i];
		bad.cache_bytes = ok_ps[i];
		c = NULL;
		if (!CHECK_EQ(lpc_cache_create(&bad, &c), 0, "page size %zu, one page", ok_ps[i]))
			continue;
		lpc_stats(c, &st);
		CHECK_EQ(st.frames, 1, "one frame");
		CHECK_EQ(st.frames_free, 1, "one free frame");
		tst_cache_destroy(c);
	}
	/* A budget that is not a multiple of the page: whole frames only. */
	bad = cfg;
	bad.cache_bytes = 10 * 4096 + 4095;
	c = NULL;
	if (CHECK_EQ(lpc_cache_create(&bad, &c), 0)) {
		struct lpc_stats st;

		lpc_stats(c, &st);
		CHECK_EQ(st.frames, 10);
		tst_cache_destroy(c);
	}
	/* Every backend and mode. */
	for (int b = 0; b < 3; b++)
		for (int m = 0; m < 2; m++) {
			bad = cfg;
			bad.cache_bytes = 1 * MiB;
			bad.io_backend = b;
			bad.lookup_mode = m;
			c = NULL;
			if (CHECK_EQ(lpc_cache_create(&bad, &c), 0, "backend %d mode %d", b, m))
				tst_cache_destroy(c);
		}
}

int main(int argc, char **argv)
{
	tst_init(argc, argv, 100);
	tst_require_tmpdir();

	TST_RUN(t_config());
	return tst_finish();
}
