/* SPDX-License-Identifier: MIT */
/*
 * att_close_pend.c - frames freed by paths other than lpc_invalidate and
 * a shrinking lpc_truncate after 9bd1384: the last lpc_file_close of a
 * file with 40 cached pages (lpc_filemap_remove_all, filemap/file.c
 * file_free) puts their frames on pending and kicks nothing (pre-existing;
 * 9bd1384 added the kick to lpc_invalidate and lpc_truncate only).
 *
 * F.1: "frames_free is a gauge, exact when all is quiet"; 9bd1384:
 * "after a small invalidate (or truncate) on a quiet cache frames_free
 * stayed short for ever" (fixed for those two callers only).
 * Here: 1024 frames; read 40 pages, close the file, wait 2 s quiet:
 * frames_free should be 1024 (observed 984/1024; a one-page invalidate
 * of another file then brings all back: they were on pending).  Exit 1
 * while it ends short.
 *
 * Run: cmake --build ../../build-release --target lpc_static && make VARIANT=release && out-release/att_close_pend
 */
#include "../attack_miss/mh.h"

#define PS 4096u
#define NF 1024u

int main(void)
{
	struct lpc_cache *c = att_cache(NF * PS, PS, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS, LPC_READAHEAD_OFF, 0);
	struct lpc_file *f;
	struct lpc_page *p;
	char path[512];
	uint64_t nf;
	int fails = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mh_hole_file("f", 4096ull * PS, path, sizeof(path));
	if (lpc_file_open(c, path, O_RDONLY, 0, &f))
		return 1;
	for (unsigned i = 0; i < 40; i++) {
		if (lpc_page_get(f, i, 0, &p))
			return 1;
		lpc_page_put(p);
	}
	lpc_file_close(f);
	nf = mh_wait_all_free(c, 2.0);
	printf("  40 pages cached, file closed: frames_free after 2 s: %" PRIu64 "/%u\n", nf, NF);
	if (nf != NF) {
		printf("  FAIL: %" PRIu64 " frames never came back\n", NF - nf);
		fails++;
	}
	{
		struct lpc_file *g;

		if (lpc_file_open(c, path, O_RDONLY, 0, &g) || lpc_page_get(g, 0, 0, &p))
			return 1;
		lpc_page_put(p);
		(void)lpc_invalidate(g, 0, 0);
		nf = mh_wait_all_free(c, 2.0);
		printf("  after a one-page invalidate (its kick): frames_free %" PRIu64 "/%u\n", nf, NF);
		lpc_file_close(g);
	}
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", fails ? "DEFECT: see FAIL lines" : "held");
	return fails ? 1 : 0;
}
