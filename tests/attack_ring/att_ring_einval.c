/* SPDX-License-Identifier: MIT */
/*
 * att_ring_einval - an O_DIRECT run cut into READ_FIXED pieces (uring.c
 * R0/UB0) that the device refuses -EINVAL (a direct transfer it cannot
 * do: ring_inj.h's inj_misalign puts each piece 1 B off alignment):
 * pieces_res takes any error but EINTR/EAGAIN for a failed buffer (badbi),
 * so uring_readv / ub_cqe call ring_bad (H5) and the chunk is never used
 * registered on that ring again ("running unregistered"), for a refusal
 * that has nothing to do with the registration (io.c direct_off is the
 * answer to it).  io.h lpc_io_read_ends records that marking a chunk
 * unusable on a direct EINVAL was a defect once already.  Before 13311ea
 * such a run (over several chunks) was one READV and no chunk was lost;
 * a flat run (one READ_FIXED) still does the same (pre-existing), the
 * pieces make it the common case (94 % of readahead's requests).
 *
 * What must hold: uring_unregistered does not grow for a direct refusal.
 *
 * Usage: att_ring_einval    Exit: 0 held, 1 defect, 77 skip.
 */
#include "../attack/att.h"
#include "ring_inj.h"
#include "cache/cache.h"

#define PS 4096u
#define SIZE (8u << 20)

int main(void)
{
	char pa[300];
	struct lpc_cache *c = att_cache(64u << 20, PS, LPC_IO_URING, LPC_LOOKUP_LOCKLESS, 1024, 4096);
	struct lpc_file *f;
	struct lpc_stats s0, s1;
	static char buf[SIZE];
	long bad_pages = 0;

	att_make_file("a", SIZE, 7, pa, sizeof(pa));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &f)) {
		printf("open failed\n");
		return 77;
	}
	if (!atomic_load(&f->io.direct)) {
		printf("  not on O_DIRECT here: skip\n");
		return 77;
	}
	lpc_stats(c, &s0);
	atomic_store(&inj_misalign, 1);
	atomic_store(&inj_armed, 1);
	for (uint64_t off = 0; off < SIZE; off += 64 * 1024)
		if (lpc_pread(f, buf + off, 64 * 1024, off) != 64 * 1024)
			printf("  short pread at %" PRIu64 "\n", off);
	lpc_stats(c, &s1);
	for (uint64_t p = 0; p < SIZE / PS; p++)
		bad_pages += att_bad_word(buf + p * PS, PS, p * PS, 7) >= 0;
	printf("  submissions with pieces: %u, refusal injected: %d\n",
	       atomic_load(&inj_pieces_seen), atomic_load(&inj_done));
	printf("  pages wrong %ld, read_errors +%" PRIu64 ", uring_unregistered +%" PRIu64
	       ", direct_fallbacks +%" PRIu64 "\n",
	       bad_pages, s1.read_errors - s0.read_errors,
	       s1.uring_unregistered - s0.uring_unregistered,
	       s1.direct_fallbacks - s0.direct_fallbacks);
	if (!atomic_load(&inj_done))
		return 77;
	ATT_CHECK(bad_pages == 0, "%ld pages wrong", bad_pages);
	ATT_CHECK(s1.uring_unregistered == s0.uring_unregistered,
		  "a direct refusal (EINVAL) made a registered chunk unusable (H5)");
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "held");
	return att_fails ? 1 : 0;
}
