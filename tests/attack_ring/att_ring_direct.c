/* SPDX-License-Identifier: MIT */
/*
 * att_ring_direct - on an O_DIRECT file, a run cut into READ_FIXED pieces
 * (uring.c R0/UB0) whose second piece fails (-EFAULT, a stale
 * registration: ring_inj.h) while the first reads in full: pieces_res
 * gives the first piece's bytes, and then lpc_io_read_ends (io.h: "on an
 * O_DIRECT descriptor the kernel cuts a read short only at the end of the
 * file") takes that prefix for the end of the file.  uring_readv returns
 * `done` (the comment "H5; the rest again" is never reached), ub_cqe ends
 * the run with lpc_io_rrun_done instead of UB_REST: the pages of the
 * failed piece and after are not read again unregistered.  Before 13311ea
 * a run over several chunks was one READV, and a failed READ_FIXED was
 * retried whole.
 *
 * What must hold: every byte lpc_pread returns for the file (8 MiB, read
 * start to end with readahead, so runs span 2 MiB chunks) is the file's,
 * and no read error is counted for a registration fault lpc says it
 * recovers from (H5: "again, unregistered").
 *
 * Usage: att_ring_direct [buffered] [miss]  ("miss": RANDOM advice, 768 KiB
 * preads (frames taken in order cross 2 MiB chunks), so the faulted run is the caller's own, uring_readv's path)  ("buffered": the file taken off
 * O_DIRECT after open, as io.c's direct_off does: the control, which holds)    Exit: 0 held, 1 defect, 77 skip (no O_DIRECT,
 * no io_uring, no pieces submitted).
 */
#include "../attack/att.h"
#include "ring_inj.h"
#include "cache/cache.h"

#define PS 4096u
#define SIZE (8u << 20)

int main(int argc, char **argv)
{
	bool buffered = false, miss = false;

	for (int i = 1; i < argc; i++) {
		buffered |= !strcmp(argv[i], "buffered");
		miss |= !strcmp(argv[i], "miss");
	}
	char pa[300];
	struct lpc_cache *c = att_cache(64u << 20, PS, LPC_IO_URING, LPC_LOOKUP_LOCKLESS, 1024, 4096);
	struct lpc_file *f;
	struct lpc_stats s0, s1;
	static char buf[SIZE];
	long bad_pages = 0, short_reads = 0, first_bad = -1;

	att_make_file("a", SIZE, 7, pa, sizeof(pa));
	if (lpc_file_open(c, pa, O_RDONLY, 0, &f)) {
		printf("open failed\n");
		return 77;
	}
	if (buffered) { /* the control: as after io.c's fallback (direct_off) */
		int fd = atomic_load(&f->io.fd);

		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_DIRECT);
		atomic_store(&f->io.direct, 0);
	}
	if (!buffered && !atomic_load(&f->io.direct)) {
		printf("  not on O_DIRECT here: skip\n");
		return 77;
	}
	lpc_stats(c, &s0);
	atomic_store(&inj_armed, 1);
	if (miss) {
		/* No readahead: the caller's own runs (lpc_io_readv, uring_readv). */
		(void)lpc_fadvise(f, 0, 0, LPC_FADV_RANDOM);
		for (uint64_t off = 0; off < SIZE; off += 768u << 10) {
			size_t len = SIZE - off < (768u << 10) ? SIZE - off : 768u << 10;
			ssize_t n = lpc_pread(f, buf + off, len, off);

			if (n != (ssize_t)len) {
				short_reads++;
				printf("  lpc_pread(off %" PRIu64 ") = %zd\n", off, n);
			}
		}
	}
	for (uint64_t off = 0; !miss && off < SIZE; off += 64 * 1024) {
		ssize_t n = lpc_pread(f, buf + off, 64 * 1024, off);

		if (n != 64 * 1024) {
			short_reads++;
			printf("  lpc_pread(off %" PRIu64 ") = %zd\n", off, n);
		}
	}
	lpc_stats(c, &s1);
	for (uint64_t p = 0; p < SIZE / PS; p++)
		if (att_bad_word(buf + p * PS, PS, p * PS, 7) >= 0) {
			if (first_bad < 0)
				first_bad = (long)p;
			bad_pages++;
		}
	printf("  file on O_DIRECT: %d\n", atomic_load(&f->io.direct));
	printf("  submissions with pieces: %u, fault injected: %d (%s)\n",
	       atomic_load(&inj_pieces_seen), atomic_load(&inj_done),
	       atomic_load(&inj_main) ? "main thread: a miss's run, uring_readv"
				      : "readahead thread: a batch, ub_cqe");
	printf("  pages with wrong bytes: %ld (first %ld), short preads %ld, read_errors +%" PRIu64
	       ", uring_unregistered +%" PRIu64 "\n",
	       bad_pages, first_bad, short_reads, s1.read_errors - s0.read_errors,
	       s1.uring_unregistered - s0.uring_unregistered);
	printf("  requests (reads) +%" PRIu64 ", pages read +%" PRIu64 "\n", s1.reads - s0.reads,
	       s1.read_pages - s0.read_pages);
	if (!atomic_load(&inj_done)) {
		printf("  no run was cut into pieces: skip\n");
		att_cleanup();
		return 77;
	}
	ATT_CHECK(bad_pages == 0, "%ld pages read wrong", bad_pages);
	ATT_CHECK(short_reads == 0, "%ld short preads inside the file", short_reads);
	ATT_CHECK(s1.read_errors == s0.read_errors, "read errors for a recoverable fault");
	lpc_file_close(f);
	lpc_cache_destroy(c);
	att_cleanup();
	printf("%s\n", att_fails ? "DEFECT" : "held");
	return att_fails ? 1 : 0;
}
