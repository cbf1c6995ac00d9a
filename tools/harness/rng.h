/* SPDX-License-Identifier: MIT */
/*
 * rng.h - the random page numbers of every benchmark: xorshift64* for the
 * stream, splitmix64 to turn (seed, thread) into unrelated states.
 */
#ifndef LPCBENCH_RNG_H
#define LPCBENCH_RNG_H

#include <stdint.h>

/* xorshift64* (Vigna): fast, and good enough to spread pages uniformly. */
static inline uint64_t xorshift64s(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* splitmix64 turns (seed, thread) into unrelated, never-zero states. */
static inline uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x ? x : 1;
}

/* The high 32 bits, scaled by a multiply (Lemire): no modulo bias worth the
 * name for n far below 2^32, and no division. */
static inline uint32_t rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((xorshift64s(s) >> 32) * n) >> 32);
}

/* A double uniform in [0, 1): the top 53 bits. */
static inline double rng_unit(uint64_t *s)
{
	return (double)(xorshift64s(s) >> 11) * 0x1.0p-53;
}

#endif /* LPCBENCH_RNG_H */
