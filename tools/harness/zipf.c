/* SPDX-License-Identifier: MIT */
/* zipf.c - Gray et al.'s Zipf generator and the rank permutation (zipf.h). */
#include <math.h>
#include <stdlib.h>

#include "rng.h"
#include "util.h"
#include "zipf.h"

static double zeta(uint32_t n, double theta)
{
	double sum = 0;

	/* Smallest terms first: fewer bits lost in the sum. */
	for (uint32_t i = n; i >= 1; i--)
		sum += 1.0 / pow((double)i, theta);
	return sum;
}

void zipf_init(struct zipf *z, uint32_t n, double theta, uint64_t seed)
{
	uint64_t s = splitmix64(seed ^ 0x5a17f00dULL);

	if (n < 2 || !(theta > 0 && theta < 1))
		die("zipf: n = %u, theta = %g: need n >= 2 and 0 < theta < 1", n, theta);
	z->n = n;
	z->theta = theta;
	z->alpha = 1.0 / (1.0 - theta);
	z->zetan = zeta(n, theta);
	z->eta = (1.0 - pow(2.0 / n, 1.0 - theta)) / (1.0 - zeta(2, theta) / z->zetan);
	z->half_pow_theta = pow(0.5, theta);
	z->perm = xmalloc((size_t)n * sizeof(*z->perm));
	for (uint32_t i = 0; i < n; i++)
		z->perm[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = rng_below(&s, i + 1);
		uint32_t t = z->perm[i];

		z->perm[i] = z->perm[j];
		z->perm[j] = t;
	}
}

void zipf_destroy(struct zipf *z)
{
	free(z->perm);
	z->perm = NULL;
}

double zipf_top_share(const struct zipf *z, uint32_t top)
{
	if (top >= z->n)
		return 1.0;
	return zeta(top, z->theta) / z->zetan;
}
