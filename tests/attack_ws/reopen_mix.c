/* reopen_mix.c - a Zipf hot set beside a one-time scan (the scan-mix case the
 * change was made for), plus, with REOPEN=1, a small file that is opened,
 * read through and closed over and over (a per-request open: a config file,
 * a small table).  The small file's reads are never hits (its last close
 * drops its pages), but its pages that the hand evicted while it was open
 * leave shadows, and its next incarnation's misses count as refaults of
 * pages never active: the target goes down, to the 10 % floor.
 * usage: reopen_mix FILE REOPEN(0|1) [CACHE_MIB (64)] [HOT (1.0: Zipf over HOT*cache)]
 * One thread, null backend, default readahead. */
#include "probe.h"

int main(int argc, char **argv)
{
	int reopen = atoi(argv[2]);
	uint64_t N = (argc > 3 ? strtoull(argv[3], 0, 0) : 64) * 256;
	double hot = argc > 4 ? atof(argv[4]) : 1.0;
	uint64_t H = (uint64_t)(hot * N), B = N / 4, scan = 0, bi = 0;
	char pb[4096];
	snprintf(pb, sizeof pb, "%s.small", argv[1]);
	mkfile(argv[1], 64 * N);
	mkfile(pb, B);
	struct lpc_cache *c = mkcache(N, 1, -1);
	struct lpc_file *f, *fb;
	if (lpc_file_open(c, argv[1], O_RDONLY, 0, &f) || lpc_file_open(c, pb, O_RDONLY, 0, &fb)) return 1;
	struct zipf z;
	zipf_init(&z, H, 1.0);
	/* warm: the hot set alone */
	for (uint64_t k = 0; k < 8 * N; k++) get(f, zipf_draw(&z));
	printf("%s reopen=%d cache %" PRIu64 " frames, Zipf over %" PRIu64 ", target %u\n", VARIANT, reopen, N, H, ws_target(c));
	uint64_t hh = 0, hn = 0;
	for (int tenth = 0; tenth < 10; tenth++) {
		uint64_t th = 0, tn = 0;
		for (uint64_t k = 0; k < 4 * N; k++) {
			struct lpc_page *p;
			uint64_t i = zipf_draw(&z);
			if (lpc_page_find(f, i, &p) == 0) { lpc_page_put(p); th++; } else get(f, i);
			tn++;
			/* the scanner: 2 pages per hot read, never repeated */
			get(f, 2 * N + scan++); get(f, 2 * N + scan++);
			if (2 * N + scan >= 64 * N) scan = 0;
			if (reopen && (k & 3) == 0) { /* the small file: a page every 4 hot reads */
				get(fb, bi);
				if (++bi == B) { bi = 0; lpc_file_close(fb); if (lpc_file_open(c, pb, O_RDONLY, 0, &fb)) return 1; }
			}
		}
		if (tenth >= 5) { hh += th; hn += tn; }
		printf("  tenth %d: hot-set hit %.3f target %u (%.0f%%) refaults %" PRIu64 "\n", tenth, (double)th / tn,
		       ws_target(c), 100.0 * ws_target(c) / N, ws_refaults(c));
	}
	printf("SUMMARY %s reopen=%d: hot-set hit (last half) %.3f, target at end %.0f%%\n", VARIANT, reopen,
	       (double)hh / hn, 100.0 * ws_target(c) / N);
	lpc_file_close(f);
	lpc_file_close(fb);
	lpc_cache_destroy(c);
	unlink(argv[1]);
	unlink(pb);
	return 0;
}
