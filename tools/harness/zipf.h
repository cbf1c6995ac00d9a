/* SPDX-License-Identifier: MIT */
/*
 * zipf.h - Zipf-distributed page numbers: rank k (0-based) of n is drawn with
 * probability proportional to 1 / (k + 1)^theta.
 *
 * The generator is Gray et al.'s ("Quickly generating billion-record
 * synthetic databases", SIGMOD 1994, the method YCSB uses): zeta(n, theta) is
 * summed once at setup (O(n)), then each draw costs one uniform double and
 * one pow().  It is exact for the two hottest ranks and a close
 * approximation of the tail.
 *
 * Ranks are not pages: rank k is page perm[k], a permutation of the file's
 * pages drawn once from the seed (Fisher-Yates), so that the hot pages are
 * spread over the whole file instead of crowding its first megabytes, and
 * so that every run with the same seed has the same hot pages.
 */
#ifndef LPCBENCH_ZIPF_H
#define LPCBENCH_ZIPF_H

#include <math.h>
#include <stdint.h>

struct zipf {
	uint32_t n;
	double theta, alpha, zetan, eta, half_pow_theta;
	uint32_t *perm; /* [n]: rank -> page */
};

/* Sets z up for n pages (n >= 2) and 0 < theta < 1; perm from seed.  Dies
 * on a bad argument or no memory. */
void zipf_init(struct zipf *z, uint32_t n, double theta, uint64_t seed);
void zipf_destroy(struct zipf *z);

/* The share of all draws that fall on the `top` hottest ranks (exact, from
 * the distribution, not from the generator): for the config echo. */
double zipf_top_share(const struct zipf *z, uint32_t top);

/* The rank of one draw, u uniform in [0, 1). */
static inline uint32_t zipf_rank(const struct zipf *z, double u)
{
	double uz = u * z->zetan;
	double r;

	if (uz < 1.0)
		return 0;
	if (uz < 1.0 + z->half_pow_theta)
		return 1;
	r = (double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha);
	return r >= (double)z->n ? z->n - 1 : (uint32_t)r;
}

/* One Zipf page. */
static inline uint32_t zipf_page(const struct zipf *z, double u)
{
	return z->perm[zipf_rank(z, u)];
}

#endif /* LPCBENCH_ZIPF_H */
