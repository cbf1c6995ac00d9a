/* SPDX-License-Identifier: MIT */
/*
 * rw_raflush.c - an lpc thread starting another: with readahead on, the
 * application thread (rw-main) starts lpc-readahead (which makes the
 * worker first), and the readahead worker's allocations then start
 * lpc-reclaim from an lpc thread.  Afterwards: exactly one thread made since
 * create that is not lpc-* (the worker), named rw-main, every signal
 * blocked; no sample saw a thread whose name is not rw-main or lpc-*.
 *   rw_raflush
 */
#include "rw.h"

int main(int argc, char **argv)
{
	static unsigned char buf[16 * RW_PS];
	struct rw_tids before, after;
	struct lpc_cache *c;
	struct lpc_file *f;
	char path[600];
	unsigned nw = 0, reclaim = 0, ra = 0;
	pid_t w = 0;

	tst_init(1, argv, 120);
	tst_require_tmpdir();
	pthread_setname_np(pthread_self(), "rw-main");
	before = rw_tids();
	c = tst_cache_create(RW_FRAMES * RW_PS, RW_PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	REQUIRE(tst_make_sparse("rw-raflush", 16ull * RW_FRAMES * RW_PS, path, sizeof(path)) == 0,
		"file");
	f = tst_file_open(c, path, O_RDONLY);
	for (uint64_t off = 0; off < 16ull * RW_FRAMES * RW_PS; off += sizeof(buf)) {
		CHECK_EQ(lpc_pread(f, buf, sizeof(buf), (off_t)off), (ssize_t)sizeof(buf), "read");
		struct rw_tids s = rw_tids();

		for (unsigned i = 0; i < s.n; i++) {
			char comm[32];

			rw_comm(s.t[i], comm, sizeof(comm));
			reclaim |= !strcmp(comm, "lpc-reclaim");
			ra |= !strcmp(comm, "lpc-readahead");
			if (comm[0] && strcmp(comm, "rw-main") && strncmp(comm, "lpc-", 4) &&
			    strncmp(comm, "iou-", 4))
				CHECK(0, "thread %d named '%s'", (int)s.t[i], comm);
		}
	}
	CHECK_EQ(lpc_file_close(f), 0, "close");
	rw_list();
	tst_cache_destroy(c);
	unlink(path);
	CHECK(ra && reclaim, "lpc-readahead (%u) and lpc-reclaim (%u) both ran", ra, reclaim);
	after = rw_tids();
	for (unsigned i = 0; i < after.n; i++) {
		bool old = false;

		for (unsigned j = 0; j < before.n; j++)
			old |= after.t[i] == before.t[j];
		if (!old) {
			nw++;
			w = after.t[i];
		}
	}
	CHECK_EQ(nw, 1u, "one thread left of those made since create (the worker)");
	if (w) {
		char comm[32];

		rw_comm(w, comm, sizeof(comm));
		CHECK(!strcmp(comm, "rw-main"), "worker %d named '%s', want rw-main", (int)w, comm);
		CHECK(rw_all_blocked(w), "worker blocks every signal: SigBlk %llx", rw_sigblk(w));
	}
	rw_list();
	return tst_finish();
}
