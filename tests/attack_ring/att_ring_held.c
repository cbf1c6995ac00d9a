/* SPDX-License-Identifier: MIT */
/*
 * att_ring_held - what held in the review of 13311ea (uring.c R0/UB0), no
 * fault injected (ring_inj.h only counts the submissions carrying pieces):
 *  1. end of file inside a later piece: files of 2 MiB + 1000 B,
 *     3 MiB + 12 KiB + 17 B and 5 MiB + 123 B, read whole by lpc_pread,
 *     O_DIRECT and buffered: every byte the file's, each pread's count
 *     stops at the size, nothing past it;
 *  2. scattered frames: an 8 MiB cache (4 chunks) reading a 32 MiB file
 *     twice in order and 2000 random 256 KiB reads, so frames are reused
 *     out of order (runs over several stretches, more than 4, descending):
 *     every byte right, no read error.
 * Usage: att_ring_held    Exit: 0 held, 1 defect.
 */
#include "../attack/att.h"
#include "ring_inj.h"
#include "cache/cache.h"

#define PS 4096u

static void whole(struct lpc_cache *c, uint64_t size, bool direct, uint64_t tag)
{
	char pa[300], name[32];
	struct lpc_file *f;
	char *buf = malloc(size + 65536);
	uint64_t got = 0;

	snprintf(name, sizeof(name), "e%" PRIu64, tag);
	att_make_file(name, size, tag, pa, sizeof(pa));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &f)) {
		ATT_CHECK(0, "open");
		return;
	}
	if (!direct)
		atomic_store(&f->io.direct, 0);
	for (uint64_t off = 0; off < size + 65536; off += 65536) {
		ssize_t n = lpc_pread(f, buf + off, 65536, off);
		uint64_t want = off >= size ? 0 : size - off < 65536 ? size - off : 65536;

		ATT_CHECK(n == (ssize_t)want, "size %" PRIu64 " pread(%" PRIu64 ") = %zd, want %" PRIu64,
			  size, off, n, want);
		if (n > 0)
			got += (uint64_t)n;
	}
	ATT_CHECK(got == size, "size %" PRIu64 ": read %" PRIu64, size, got);
	ATT_CHECK(att_bad_word(buf, size & ~7ull, 0, tag) < 0, "size %" PRIu64 ": wrong bytes",
		  size);
	lpc_file_close(f);
	free(buf);
}

int main(void)
{
	struct lpc_cache *c = att_cache(64u << 20, PS, LPC_IO_URING, LPC_LOOKUP_LOCKLESS, 1024, 4096);
	const uint64_t sizes[] = { (2u << 20) + 1000, (3u << 20) + 12288 + 17, (5u << 20) + 123 };
	struct lpc_stats s0, s1;
	unsigned tag = 10, p1;

	for (unsigned d = 0; d < 2; d++)
		for (unsigned i = 0; i < 3; i++)
			whole(c, sizes[i], d == 0, tag++);
	p1 = atomic_load(&inj_pieces_seen);
	printf("  part 1: submissions with pieces %u\n", p1);
	lpc_cache_destroy(c);

	c = att_cache(8u << 20, PS, LPC_IO_URING, LPC_LOOKUP_LOCKLESS, 1024, 4096);
	{
		char pa[300];
		struct lpc_file *f;
		static char buf[256 * 1024];
		long bad = 0;

		att_make_file("big", 32u << 20, 3, pa, sizeof(pa));
		if (lpc_file_open(c, pa, O_RDONLY, 0, &f))
			return 77;
		lpc_stats(c, &s0);
		srand(1);
		for (unsigned k = 0; k < 2 * 128 + 2000; k++) {
			uint64_t off = k < 256 ? (uint64_t)(k % 128) * sizeof(buf)
					       : (uint64_t)(rand() % (32 * 4 - 1)) * sizeof(buf) +
							 (uint64_t)(rand() % 64) * PS;
			ssize_t n = lpc_pread(f, buf, sizeof(buf), off);

			if (n != (ssize_t)sizeof(buf) || att_bad_word(buf, sizeof(buf), off, 3) >= 0)
				bad++;
		}
		lpc_stats(c, &s1);
		printf("  part 2: submissions with pieces %u, wrong reads %ld, read_errors +%" PRIu64
		       "\n", atomic_load(&inj_pieces_seen) - p1, bad, s1.read_errors - s0.read_errors);
		ATT_CHECK(bad == 0, "%ld reads wrong", bad);
		ATT_CHECK(s1.read_errors == s0.read_errors, "read errors");
		lpc_file_close(f);
	}
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "held");
	return att_fails ? 1 : 0;
}
