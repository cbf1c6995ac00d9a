/* SPDX-License-Identifier: MIT */
/*
 * att_pagesizes - page sizes 512 B .. 2 MiB, both backends, both lookup
 * modes: a sequential scan of a file whose size is not a page multiple (the
 * last window crosses end of file), in 4 KiB and 128 KiB calls, then a
 * backward pass; every byte checked; stats printed (pages per read I/O).
 * Usage: att_pagesizes    Exit: 0 held, 1 wrong bytes or errors.
 */
#include "att.h"

int main(void)
{
	size_t sizes[] = { 512, 4096, 65536, 2u << 20 };
	int backends[] = { LPC_IO_SYNC, LPC_IO_URING };
	char path[400];
	const uint64_t fsize = 24u * 1024 * 1024 + 4096 + 1000; /* not page aligned */
	uint64_t *buf = aligned_alloc(4096, 131072);
	int bad = 0;

	att_make_file("ps", fsize, 9, path, sizeof(path));
	for (int si = 0; si < 4; si++)
		for (int b = 0; b < 2; b++)
			for (int m = 0; m < 2; m++) {
				size_t ps = sizes[si];
				struct lpc_cache *c = att_cache(8u << 20, ps, backends[b], m, 0, 0);
				struct lpc_file *f;
				struct lpc_stats s;
				size_t call = m ? 131072 : 4096;
				char what[120];

				if (lpc_file_open(c, path, O_RDONLY, 0, &f))
					return 1;
				for (uint64_t off = 0; off < fsize; off += call) {
					size_t want = fsize - off < call ? (size_t)(fsize - off) : call;
					ssize_t r = lpc_pread(f, buf, call, off);

					if (r != (ssize_t)want || att_bad_word(buf, want & ~7u, off, 9) >= 0) {
						printf("  ps %zu %s/%s: bad read at %" PRIu64 " (%zd)\n", ps,
						       att_backend_name(backends[b]), att_mode_name(m), off, r);
						bad = 1;
						break;
					}
				}
				for (uint64_t off = (fsize - 1) & ~(uint64_t)4095;; off -= 4096) {
					size_t want = fsize - off < 4096 ? (size_t)(fsize - off) : 4096;
					ssize_t r = lpc_pread(f, buf, 4096, off);

					if (r != (ssize_t)want || att_bad_word(buf, want & ~7u, off, 9) >= 0) {
						printf("  ps %zu: bad backward read at %" PRIu64 "\n", ps, off);
						bad = 1;
						break;
					}
					if (!off)
						break;
				}
				lpc_stats(c, &s);
				snprintf(what, sizeof(what), "ps %7zu %s/%s calls %zu", ps,
					 att_backend_name(backends[b]), att_mode_name(m), call);
				att_print_stats(c, what);
				if (s.read_errors)
					bad = 1;
				lpc_file_close(f);
				lpc_cache_destroy(c);
			}
	att_cleanup();
	free(buf);
	printf(bad ? "DEFECT\n" : "held\n");
	return bad;
}
