/* SPDX-License-Identifier: MIT */
/*
 * far_copy_ns.c - read.c's measurement behind copy_far, redone: a 512 MiB
 * source copied page by page (4 KiB) into a 128 KiB destination, 5
 * interleaved rounds of each copy: copy_far's bare `rep movsb`, a
 * copy_avx2-like loop, and glibc's memcpy (which on this machine is itself
 * a 64-byte vector store plus `rep movsb` of the other 4032 bytes:
 * memcpy_path).  Prints ns per 4 KiB page for each round.
 *
 * Timing, short: about 1 s in all after the 512 MiB fill.  Run it on a
 * quiet machine; the figures are indicative only.
 * Usage: far_copy_ns   Exit: 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE 4096
#define SRC (512ul << 20)
#define DST (128ul << 10)
#define ROUNDS 5

typedef long long v32 __attribute__((vector_size(32), aligned(1), may_alias));

__attribute__((target("avx2"), noinline)) static void copy_avx2(void *d, const void *s, size_t n)
{
	char *dst = d;
	const char *src = s;
	size_t i;

	for (i = 0; i + 128 <= n; i += 128) {
		v32 a = *(const v32 *)(src + i), b = *(const v32 *)(src + i + 32);
		v32 c = *(const v32 *)(src + i + 64), e = *(const v32 *)(src + i + 96);

		*(v32 *)(dst + i) = a;
		*(v32 *)(dst + i + 32) = b;
		*(v32 *)(dst + i + 64) = c;
		*(v32 *)(dst + i + 96) = e;
	}
	if (i < n)
		memcpy(dst + i, src + i, n - i);
}

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

static double pass(void (*fn)(void *, const void *, size_t), const char *src, char *dst)
{
	double t0 = now();

	for (size_t off = 0; off < SRC; off += PAGE)
		fn(dst + off % DST, src + off, PAGE);
	return (now() - t0) / (SRC / PAGE) * 1e9;
}

int main(void)
{
	char *src = mmap(NULL, SRC, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *dst = aligned_alloc(PAGE, DST);
	static const char *names[] = { "rep movsb", "avx2 loop", "glibc memcpy" };
	void (*fns[])(void *, const void *, size_t) = { copy_movsb, copy_avx2, copy_glibc };

	if (src == MAP_FAILED || !dst)
		return 1;
	setvbuf(stdout, NULL, _IONBF, 0);
	memset(src, 0x3c, SRC);
	memset(dst, 0, DST);
	printf("ns per 4 KiB page, 512 MiB source, 128 KiB destination:\n");
	for (int r = 0; r < ROUNDS; r++) {
		printf("round %d:", r);
		for (int k = 0; k < 3; k++)
			printf("  %s %.1f", names[k], pass(fns[k], src, dst));
		printf("\n");
	}
	return 0;
}
