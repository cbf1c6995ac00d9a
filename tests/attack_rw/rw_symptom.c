/* SPDX-License-Identifier: MIT */
/*
 * rw_symptom.c - the symptom 0605786 fixes, made to happen: a reader that
 * pauses 1 ms between 64 KiB reads of a file 8x the cache leaves the
 * evicting (and the call_rcu of emptied radix leaves) to the background
 * reclaimer, whose call_rcu is then the process's first.  The check: after
 * destroy no lpc-* thread is left (the worker named lpc-reclaim would be),
 * and no sample saw two lpc-reclaim threads.  Exit 1 when the worker bears
 * an lpc name.  The _nofix build shows whether this workload reproduces the
 * old symptom; test_rcu_worker's "evict" half does not (README.md).
 */
#include "rw.h"

int main(int argc, char **argv)
{
	static unsigned char buf[16 * RW_PS];
	struct lpc_cache *c;
	struct lpc_file *f;
	char path[600];
	unsigned most = 0;

	tst_init(argc, argv, 120);
	tst_require_tmpdir();
	pthread_setname_np(pthread_self(), "rw-main");
	REQUIRE(tst_make_sparse("rw-symptom", 8ull * RW_FRAMES * RW_PS, path, sizeof(path)) == 0,
		"file");
	c = rw_cache();
	f = tst_file_open(c, path, O_RDONLY);
	for (uint64_t off = 0; off < 8ull * RW_FRAMES * RW_PS; off += sizeof(buf)) {
		struct rw_census n;

		CHECK_EQ(lpc_pread(f, buf, sizeof(buf), (off_t)off), (ssize_t)sizeof(buf), "read");
		usleep(1000);
		n = rw_census();
		if (n.reclaim > most)
			most = n.reclaim;
	}
	rw_list();
	CHECK(most <= 1, "at most one lpc-reclaim at a sample: %u", most);
	CHECK_EQ(lpc_file_close(f), 0, "close");
	tst_cache_destroy(c);
	rw_list();
	CHECK_EQ(rw_census().lpc, 0u, "after destroy no lpc-* thread (a worker named so)");
	unlink(path);
	return tst_finish();
}
