/* ws_keys.c - the shadow table's keys before (82ef274) and after (4b0b03f):
 * for several access patterns, how many of the last d evictions' shadows
 * a table of S slots (the next power of two >= nframes) still holds when
 * the pages are missed again (true refaults found), how many slots the
 * evictions spread over, and how often a page never evicted matches a
 * shadow (false refaults).  Standalone: copies of the two key functions
 * and of both fingerprints; the table is simulated as workingset.c keeps
 * it (a store overwrites its slot).
 *
 * cc -O2 -o ws_keys ws_keys.c && ./ws_keys [nframes]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WS_FP_SHIFT 33

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return x;
}

static uint64_t file_id(uint64_t dev, uint64_t ino)
{
	return mix(dev * 0xff51afd7ed558ccdull, ino);
}

static uint64_t key_old(uint64_t f, uint64_t i) { return mix(f, i); }
static uint64_t key_new(uint64_t f, uint64_t i) { return (mix(f, i >> 3) & ~7ull) | (i & 7); }
/* A possible remedy (not in the tree): the page's place within its line
 * permuted by bits of the group's hash that the slot does not use, so one
 * page per group still spreads over the eight words; neighbours still
 * share the line. */
static uint64_t key_fix(uint64_t f, uint64_t i)
{
	uint64_t h = mix(f, i >> 3);

	return (h & ~7ull) | ((i ^ (h >> 58)) & 7);
}
static uint64_t fp_old(uint64_t k) { return (k >> WS_FP_SHIFT) | 1; }
static uint64_t fp_new(uint64_t k) { return ((k >> WS_FP_SHIFT) ^ ((k & 7) << 1)) | 1; }

struct page { uint64_t file, index; };

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

enum pat { RANDOM, SEQ, STRIDE2, STRIDE4, STRIDE8, STRIDE64, SMALLFILES1, SMALLFILES3,
	   ONEPERFILE_SEQID, NPAT };
static const char *pname[NPAT] = {
	"random pages of one 1 TiB file", "sequential, one file", "stride 2 pages",
	"stride 4 pages", "stride 8 pages (32 KiB)", "stride 64 pages",
	"1-page files (index 0), inode-keyed", "3-page files, all pages",
	"1-page files, ids as file.c numbers them (dev 0, id n)",
};

/* The n-th distinct evicted page of a pattern (and, with n past the
 * evictions, pages never evicted). */
static struct page page_of(enum pat p, uint64_t n, uint64_t f0)
{
	struct page pg = { f0, 0 };

	switch (p) {
	case RANDOM: pg.index = rnd() & ((1ull << 28) - 1); break;
	case SEQ: pg.index = n; break;
	case STRIDE2: pg.index = 2 * n; break;
	case STRIDE4: pg.index = 4 * n; break;
	case STRIDE8: pg.index = 8 * n; break;
	case STRIDE64: pg.index = 64 * n; break;
	case SMALLFILES1: pg.file = file_id(2049, 1000000 + n * 7); pg.index = 0; break;
	case SMALLFILES3: pg.file = file_id(2049, 1000000 + (n / 3) * 7); pg.index = n % 3; break;
	case ONEPERFILE_SEQID: pg.file = file_id(0, n + 1); pg.index = 0; break;
	default: break;
	}
	return pg;
}

static void run(uint64_t nframes, enum pat p)
{
	uint64_t slots = 1, mask, nev = 4 * nframes;
	uint64_t *t[3];
	struct page *pages = malloc(nev * sizeof(*pages));

	while (slots < nframes)
		slots <<= 1;
	mask = slots - 1;
	for (int v = 0; v < 3; v++)
		t[v] = calloc(slots, 8);
	for (uint64_t n = 0; n < nev; n++)
		pages[n] = page_of(p, n, file_id(2049, 12345));
	for (uint64_t n = 0; n < nev; n++) {
		uint64_t ko = key_old(pages[n].file, pages[n].index);
		uint64_t kn = key_new(pages[n].file, pages[n].index);

		t[0][ko & mask] = fp_old(ko);
		t[1][kn & mask] = fp_new(kn);
		kn = key_fix(pages[n].file, pages[n].index);
		t[2][kn & mask] = fp_new(kn);
	}
	printf("%-55s", pname[p]);
	for (int v = 0; v < 3; v++) {
		uint64_t used = 0;

		for (uint64_t s = 0; s < slots; s++)
			used += t[v][s] != 0;
		/* Of the last d evictions (d = nframes/4, /2, 1), the shadows
		 * still there. */
		double found[3];
		uint64_t ds[3] = { nframes / 4, nframes / 2, nframes };
		for (int j = 0; j < 3; j++) {
			uint64_t hit = 0;

			for (uint64_t n = nev - ds[j]; n < nev; n++) {
				uint64_t k = v == 2 ? key_fix(pages[n].file, pages[n].index)
					     : v ? key_new(pages[n].file, pages[n].index)
						 : key_old(pages[n].file, pages[n].index);
				hit += t[v][k & mask] == (v ? fp_new(k) : fp_old(k));
			}
			found[j] = (double)hit / (double)ds[j];
		}
		printf(" | %s used %5.1f%% found@N/4 %.3f @N/2 %.3f @N %.3f",
		       v == 2 ? "remedy" : v ? "new" : "old",
		       100.0 * (double)used / (double)slots, found[0], found[1], found[2]);
	}
	printf("\n");
	for (int v = 0; v < 3; v++)
		free(t[v]);
	free(pages);
}

/* False refaults: pages never evicted that match a shadow, for the
 * random pattern in a full table (4*nframes evictions). */
static void false_matches(uint64_t nframes)
{
	uint64_t slots = 1, mask, fp[2] = { 0, 0 }, probes = 1ull << 24;
	uint64_t *t[2];
	uint64_t f = file_id(2049, 777);

	while (slots < nframes)
		slots <<= 1;
	mask = slots - 1;
	for (int v = 0; v < 2; v++)
		t[v] = calloc(slots, 8);
	/* evicted: even groups' pages of a file; probed: odd groups' */
	for (uint64_t n = 0; n < 4 * nframes; n++) {
		uint64_t i = (rnd() & ((1ull << 30) - 1)) & ~8ull;
		uint64_t ko = key_old(f, i), kn = key_new(f, i);

		t[0][ko & mask] = fp_old(ko);
		t[1][kn & mask] = fp_new(kn);
	}
	for (uint64_t n = 0; n < probes; n++) {
		uint64_t i = (rnd() & ((1ull << 30) - 1)) | 8ull;
		uint64_t ko = key_old(f, i), kn = key_new(f, i);

		fp[0] += t[0][ko & mask] == fp_old(ko);
		fp[1] += t[1][kn & mask] == fp_new(kn);
	}
	printf("false refaults per 2^24 misses of never-evicted pages: old %lu new %lu "
	       "(expected about 2^24/2^30 = 0.016 each)\n",
	       (unsigned long)fp[0], (unsigned long)fp[1]);
	/* fingerprint never 0, and fp_new differs for the 8 places of a key */
	uint64_t zero = 0, same = 0;
	for (uint64_t n = 0; n < (1ull << 22); n++) {
		uint64_t k = rnd();

		zero += fp_new(k) == 0;
		for (uint64_t a = 0; a < 8; a++)
			for (uint64_t b = a + 1; b < 8; b++)
				same += fp_new((k & ~7ull) | a) == fp_new((k & ~7ull) | b);
	}
	printf("fp_new == 0: %lu of 2^22 keys; two places of one group with one fingerprint: %lu\n",
	       (unsigned long)zero, (unsigned long)same);
	for (int v = 0; v < 2; v++)
		free(t[v]);
}

int main(int argc, char **argv)
{
	uint64_t sizes[] = { 16384, 65536, 262144 };
	int ns = 3;

	if (argc > 1) {
		sizes[0] = strtoull(argv[1], NULL, 0);
		ns = 1;
	}
	for (int s = 0; s < ns; s++) {
		printf("== nframes %lu (%lu MiB of 4 KiB frames), 4*nframes distinct evictions; "
		       "expected for a uniform table (mean of exp(-x/S) over the last d): found@N/4 %.3f @N/2 %.3f @N %.3f\n",
		       (unsigned long)sizes[s], (unsigned long)(sizes[s] >> 8), 0.885, 0.787, 0.632);
		for (int p = 0; p < NPAT; p++)
			run(sizes[s], (enum pat)p);
	}
	false_matches(65536);
	return 0;
}
