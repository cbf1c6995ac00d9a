/* SPDX-License-Identifier: MIT */
/*
 * movsb_align.c - the cost of a 4 KiB copy from a page-aligned source (a
 * frame) by copy_far's bare `rep movsb`, by a copy_avx2-like loop and by
 * glibc's memcpy, as a function of the destination's alignment.  Sources
 * are in L1/L2 (a 64 KiB set of frames, cycled), as for a page that a
 * scan's call reads soon after the cache got it, or a hot page.
 *
 * copy_far (read.c) issues `rep movsb` at whatever address the caller's
 * buffer has: lpc_pread(f, buf, len, off) copies page k of the call to
 * buf + (page_size - off % page_size) + (k - 1) * page_size, so when off is
 * not a multiple of 64, or buf is not 64-byte aligned (malloc gives 16),
 * every page's copy after the first has a destination that is not
 * 64-byte aligned.  AMD's `rep movsb` is known to be much slower for such
 * destinations on Zen 3 and 4 (glibc BZ 30994; glibc's memcpy aligns the
 * destination to 64 bytes before its `rep movsb` for this reason).
 *
 * A short measurement: about 2 s in all, one thread, median of 7 rounds of
 * 20000 copies per case.  Prints ns per 4 KiB copy.
 * Usage: movsb_align   Exit: 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096
#define FRAMES 16
#define ITER 20000
#define ROUNDS 7

typedef long long v32 __attribute__((vector_size(32), aligned(1), may_alias));

__attribute__((target("avx2"), noinline)) static void copy_avx2(char *dst, const char *src,
								 size_t n)
{
	size_t i;

	for (i = 0; i + 128 <= n; i += 128) {
		v32 a = *(const v32 *)(src + i), b = *(const v32 *)(src + i + 32);
		v32 c = *(const v32 *)(src + i + 64), d = *(const v32 *)(src + i + 96);

		*(v32 *)(dst + i) = a;
		*(v32 *)(dst + i + 32) = b;
		*(v32 *)(dst + i + 64) = c;
		*(v32 *)(dst + i + 96) = d;
	}
	if (i < n)
		memcpy(dst + i, src + i, n - i);
}

/* copy_far's copy, as read.c has it. */
__attribute__((noinline)) static void copy_movsb(void *dst, const void *src, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static void *(*volatile glibc_memcpy)(void *, const void *, size_t) = memcpy;

__attribute__((noinline)) static void copy_glibc(void *dst, const void *src, size_t n)
{
	glibc_memcpy(dst, src, n);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double measure(void (*fn)(void *, const void *, size_t), char *src, char *dst)
{
	double r[ROUNDS];

	for (int k = 0; k < ROUNDS; k++) {
		double t0 = now();

		for (int i = 0; i < ITER; i++)
			fn(dst + (size_t)(i % 8) * 8192, src + (size_t)(i % FRAMES) * N, N);
		r[k] = (now() - t0) / ITER * 1e9;
	}
	qsort(r, ROUNDS, sizeof(r[0]), cmpd);
	return r[ROUNDS / 2];
}

int main(void)
{
	static const int aligns[] = { 0, 1, 8, 15, 16, 32, 48, 63 };
	char *src = aligned_alloc(4096, FRAMES * N), *dbuf = aligned_alloc(4096, 8 * 8192 + 4096);

	setvbuf(stdout, NULL, _IONBF, 0);
	memset(src, 0x5a, FRAMES * N);
	memset(dbuf, 0, 8 * 8192 + 4096);
	printf("ns per 4 KiB copy, page-aligned source (hot), destination at 64*k + a:\n");
	printf("%4s %12s %12s %12s\n", "a", "rep movsb", "avx2 loop", "glibc memcpy");
	for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++) {
		char *dst = dbuf + aligns[i];

		printf("%4d %12.1f %12.1f %12.1f\n", aligns[i], measure(copy_movsb, src, dst),
		       measure((void (*)(void *, const void *, size_t))copy_avx2, src, dst),
		       measure(copy_glibc, src, dst));
	}
	return 0;
}
