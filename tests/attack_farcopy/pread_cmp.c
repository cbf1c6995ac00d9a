/* SPDX-License-Identifier: MIT */
/*
 * pread_cmp.c - lpc_pread against pread(2), byte for byte, for random
 * (offset, length) pairs over every page size lpc accepts, both lookup
 * modes and two backends, with a cache that holds the file and one that
 * does not (eviction), and with every frame held (read-around).
 *
 * Each call: a destination at a random misalignment inside a buffer whose
 * guard bytes before and after are checked (a copy of the wrong length, or
 * to the wrong place, shows there), the return value against pread(2)'s,
 * and the bytes.  Then a phase of lpc_pwrite calls at random ranges, each
 * mirrored into a reference image, with lpc_pread checked against the
 * image, and at the end lpc_fsync and pread(2) of the file against it.
 *
 * Usage: pread_cmp [seed [calls]]   (defaults 1, 3000 calls per config)
 * Exit: 0 when every byte matched, 1 otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lpc/lpc.h>

#define GUARD 96
#define GBYTE 0xA5

static uint64_t rng;
static unsigned long failures, calls_total;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const char *cfgname;

static void fail(const char *what, uint64_t off, size_t len, long long a, long long b)
{
	if (failures++ < 20)
		printf("FAIL [%s] %s: off=%" PRIu64 " len=%zu lpc=%lld want=%lld\n", cfgname, what,
		       off, len, a, b);
}

/* Reference read: pread(2) of the file, or the image after writes. */
static ssize_t ref_read(int fd, const unsigned char *img, uint64_t fsize, void *dst, size_t len,
			uint64_t off)
{
	if (img) {
		if (off >= fsize)
			return 0;
		if (len > fsize - off)
			len = (size_t)(fsize - off);
		memcpy(dst, img + off, len);
		return (ssize_t)len;
	}
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)dst + done, len - done, (off_t)(off + done));

		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

/* A length of one of the shapes pread_slow sees. */
static size_t pick_len(size_t ps, uint64_t fsize)
{
	switch (rnd() % 8) {
	case 0:
		return 1 + rnd() % 64;			/* tiny */
	case 1:
		return 1 + rnd() % ps;			/* up to one page */
	case 2:
		return ps * (1 + rnd() % 5);		/* whole pages (offset may be off) */
	case 3:
		return 2048 + rnd() % 64 - 32;		/* around the rep movsb threshold */
	case 4:
		return ps * (1 + rnd() % 4) + rnd() % ps; /* several pages, ragged */
	case 5:
		return 1 + rnd() % (fsize + ps);	/* anything, past EOF too */
	case 6:
		return 2047 + rnd() % 3;
	default:
		return 1 + rnd() % (3 * ps + 4096);
	}
}

static uint64_t pick_off(size_t ps, uint64_t fsize)
{
	switch (rnd() % 6) {
	case 0:
		return (rnd() % (fsize / ps + 1)) * ps;		/* page aligned */
	case 1:
		return (rnd() % (fsize / ps + 1)) * ps + ps - 1 - rnd() % 8; /* page end */
	case 2:
		return fsize - rnd() % (3 * ps < fsize ? 3 * ps : fsize); /* near EOF */
	case 3:
		return fsize + rnd() % ps;				/* at/after EOF */
	case 4: /* 2 KiB left in the page (pages larger than 2 KiB) */
		if (ps > 2048)
			return (rnd() % (fsize / ps + 1)) * ps + ps - 2048 + rnd() % 4;
		return (rnd() % (fsize / ps + 1)) * ps + rnd() % 4;
	default:
		return rnd() % fsize;
	}
}

/* One lpc_pread checked; returns false on a mismatch. */
static bool one(struct lpc_file *f, int fd, const unsigned char *img, uint64_t fsize,
		unsigned char *area, unsigned char *want, uint64_t off, size_t len)
{
	size_t mis = rnd() % 64;
	unsigned char *dst = area + GUARD + mis;
	ssize_t r, w;
	bool ok = true;

	memset(area, GBYTE, GUARD + mis + len + GUARD);
	r = lpc_pread(f, dst, len, off);
	w = ref_read(fd, img, fsize, want, len, off);
	calls_total++;
	if (r != w) {
		fail("return value", off, len, r, w);
		return false;
	}
	if (r > 0 && memcmp(dst, want, (size_t)r)) {
		size_t k = 0;

		while (dst[k] == want[k])
			k++;
		fail("bytes differ (first at +k, lpc byte vs want byte)", off + k, len, dst[k],
		     want[k]);
		ok = false;
	}
	for (size_t k = 0; k < GUARD + mis; k++)
		if (area[k] != GBYTE) {
			fail("guard before the buffer written", off, len, (long long)k, 0);
			return false;
		}
	for (size_t k = (size_t)(r > 0 ? r : 0); k < len + GUARD; k++)
		if (dst[k] != GBYTE) {
			fail("byte past the returned count written", off, len, (long long)k, r);
			return false;
		}
	return ok;
}

struct cfg {
	size_t ps;
	int backend, lookup;
	bool small; /* a cache of 12 pages: eviction on every long call */
	uint64_t fsize; /* 0: 40 pages and a ragged tail */
};

static int run_cfg(const struct cfg *c, const char *dir, unsigned ncalls)
{
	char name[128], path[4096];
	struct lpc_config lc;
	struct lpc_cache *cache;
	struct lpc_file *f;
	struct lpc_stats st;
	unsigned long before = failures;
	uint64_t fsize;
	size_t maxlen;
	unsigned char *img, *area, *want;
	int fd, rc;

	/* 40 pages and a ragged tail (at most 6 MiB for 2 MiB pages). */
	fsize = c->ps >= (1u << 20) ? 2 * c->ps + c->ps / 3 + 13 : 40 * c->ps + c->ps / 3 + 13;
	if (c->fsize)
		fsize = c->fsize;
	snprintf(name, sizeof(name), "ps=%zu %s %s %s size=%" PRIu64, c->ps,
		 c->backend == LPC_IO_SYNC ? "sync" : "uring",
		 c->lookup == LPC_LOOKUP_LOCKED ? "locked" : "lockless", c->small ? "small" : "big",
		 fsize);
	cfgname = name;
	snprintf(path, sizeof(path), "%s/cmp.%d.dat", dir, (int)getpid());
	img = malloc(fsize);
	for (uint64_t k = 0; k < fsize; k++)
		img[k] = (unsigned char)(rnd() >> 11);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || pwrite(fd, img, fsize, 0) != (ssize_t)fsize) {
		perror("setup");
		return 1;
	}
	fsync(fd);

	lpc_config_init(&lc);
	lc.page_size = c->ps;
	lc.io_backend = c->backend;
	lc.lookup_mode = c->lookup;
	lc.cache_bytes = c->small ? 12 * c->ps : (size_t)(fsize + 8 * c->ps);
	rc = lpc_cache_create(&lc, &cache);
	if (rc) {
		printf("cache_create %s: %d\n", name, rc);
		return 1;
	}
	rc = lpc_file_open(cache, path, O_RDWR, 0, &f);
	if (rc) {
		printf("file_open %s: %d\n", name, rc);
		return 1;
	}
	maxlen = (size_t)fsize + 8 * c->ps + 8192;
	area = malloc(maxlen + 2 * GUARD + 64);
	want = malloc(maxlen);

	/* Read-only: against pread(2).  Every range twice: the first may miss,
	 * the second hits (the optimistic copy). */
	for (unsigned i = 0; i < ncalls; i++) {
		uint64_t off = pick_off(c->ps, fsize);
		size_t len = pick_len(c->ps, fsize);

		one(f, fd, NULL, fsize, area, want, off, len);
		one(f, fd, NULL, fsize, area, want, off, len);
		if (rnd() % 50 == 0)
			lpc_invalidate(f, (rnd() % (fsize / c->ps + 1)) * c->ps, c->ps * (1 + rnd() % 4));
	}

	/* Every frame held but the reads still asked for: read-around. */
	{
		struct lpc_page *held[64];
		unsigned nh = 0;
		uint64_t nframes;

		lpc_stats(cache, &st);
		nframes = st.frames;
		if (nframes <= 64 && nframes * c->ps < fsize) {
			for (uint64_t ix = 0; ix < nframes; ix++)
				if (lpc_page_get(f, ix, 0, &held[nh]) == 0)
					nh++;
			for (unsigned i = 0; i < ncalls / 4; i++) {
				uint64_t off = nframes * c->ps + rnd() % (fsize - nframes * c->ps);
				size_t len = pick_len(c->ps, fsize);

				one(f, fd, NULL, fsize, area, want, off, len);
			}
			lpc_stats(cache, &st);
			if (st.read_around == 0) {
				printf("FAIL [%s] read-around phase never read around\n", name);
				failures++;
			}
			while (nh)
				lpc_page_put(held[--nh]);
		}
	}

	/* Writes: lpc_pwrite mirrored into img; lpc_pread against img. */
	for (unsigned i = 0; i < ncalls; i++) {
		uint64_t off = rnd() % fsize;
		size_t len = 1 + rnd() % (2 * c->ps + 100);
		unsigned char *src = area;

		if (off + len > fsize)
			len = (size_t)(fsize - off);
		for (size_t k = 0; k < len; k++)
			src[k] = (unsigned char)(rnd() >> 23);
		if (lpc_pwrite(f, src, len, off) != (ssize_t)len) {
			printf("FAIL [%s] lpc_pwrite\n", name);
			failures++;
			break;
		}
		memcpy(img + off, src, len);
		for (int k = 0; k < 3; k++) {
			uint64_t ro = k ? pick_off(c->ps, fsize) : off - off % c->ps;

			one(f, fd, img, fsize, area, want, ro, pick_len(c->ps, fsize));
		}
	}
	if (lpc_fsync(f) != 0) {
		printf("FAIL [%s] lpc_fsync\n", name);
		failures++;
	}
	{
		unsigned char *disk = malloc(fsize);

		if (ref_read(fd, NULL, fsize, disk, fsize, 0) != (ssize_t)fsize ||
		    memcmp(disk, img, fsize)) {
			printf("FAIL [%s] file after lpc_fsync differs from the writes\n", name);
			failures++;
		}
		free(disk);
	}
	lpc_stats(cache, &st);
	printf("%-44s %s  optimistic_hits=%" PRIu64 " fallbacks=%" PRIu64
	       " read_around=%" PRIu64 " evictions=%" PRIu64 "\n",
	       name, failures == before ? "ok" : "MISMATCH", st.optimistic_hits,
	       st.optimistic_fallbacks, st.read_around, st.evictions);
	lpc_file_close(f);
	lpc_cache_destroy(cache);
	close(fd);
	unlink(path);
	free(img);
	free(area);
	free(want);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 512, 1024, 2048, 4096, 8192, 65536, 2u << 20 };
	unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
	unsigned ncalls = argc > 2 ? (unsigned)atoi(argv[2]) : 3000;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	rng = 0x9E3779B97F4A7C15ull * (seed + 1);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int b = 0; b < 2; b++)
			for (int l = 0; l < 2; l++)
				for (int sm = 0; sm < 2; sm++) {
					struct cfg c = { sizes[s], b ? LPC_IO_URING : LPC_IO_SYNC,
							 l ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS,
							 sm, 0 };
					unsigned n = sizes[s] >= (1u << 20) ? ncalls / 10 : ncalls;

					if (run_cfg(&c, dir, n))
						return 1;
				}
	/* Short files: smaller than a page, around 2 KiB, a page and a bit. */
	{
		static const uint64_t shorts[] = { 1, 100, 2047, 2048, 2049, 3000, 4097, 5000, 9000 };
		static const size_t sps[] = { 512, 2048, 4096, 8192 };

		for (size_t k = 0; k < sizeof(shorts) / sizeof(shorts[0]); k++)
			for (size_t p = 0; p < sizeof(sps) / sizeof(sps[0]); p++)
				for (int l = 0; l < 2; l++) {
					struct cfg c = { sps[p], LPC_IO_URING,
							 l ? LPC_LOOKUP_LOCKED : LPC_LOOKUP_LOCKLESS,
							 false, shorts[k] };

					if (run_cfg(&c, dir, ncalls / 10))
						return 1;
				}
	}
	printf("%lu calls, %lu mismatches\n%s\n", calls_total, failures,
	       failures ? "DEFECT: lpc_pread differs from pread(2)" : "PASS");
	return failures ? 1 : 0;
}
