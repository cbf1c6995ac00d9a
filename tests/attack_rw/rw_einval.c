/* SPDX-License-Identifier: MIT */
/*
 * rw_einval.c - lpc_cache_create with a bad config returns -EINVAL and
 * starts no thread (config_check runs before lpc_rcu_worker_ensure); NULL
 * cfg or out: -EINVAL, no thread.  Since ad5f9fa a good create starts no
 * thread either (the _nofix build passes too: create never called it).
 */
#include "rw.h"

int main(int argc, char **argv)
{
	struct lpc_config cfg;
	struct lpc_cache *c = NULL;
	struct rw_tids before, after;
	unsigned count;

	tst_init(argc, argv, 60);
	before = rw_tids();
	lpc_config_init(&cfg);
	cfg.cache_bytes = 1 << 20;
	cfg.page_size = 3000; /* not a power of two */
	CHECK_EQ(lpc_cache_create(&cfg, &c), -EINVAL, "bad page size");
	lpc_config_init(&cfg);
	cfg.cache_bytes = 1 << 20;
	cfg.page_size = 4096;
	cfg.io_backend = 99;
	CHECK_EQ(lpc_cache_create(&cfg, &c), -EINVAL, "bad backend");
	CHECK_EQ(lpc_cache_create(NULL, &c), -EINVAL, "NULL cfg");
	cfg.io_backend = LPC_IO_NULL;
	CHECK_EQ(lpc_cache_create(&cfg, NULL), -EINVAL, "NULL out");
	after = rw_tids();
	rw_new_tid(&before, &after, &count);
	CHECK_EQ(count, 0u, "no thread after -EINVAL creates");
	CHECK_EQ(lpc_cache_create(&cfg, &c), 0, "good create");
	after = rw_tids();
	rw_new_tid(&before, &after, &count);
	CHECK_EQ(count, 0u, "the good create made no thread either (ad5f9fa)");
	CHECK_EQ(lpc_cache_destroy(c), 0, "destroy");
	return tst_finish();
}
