/* SPDX-License-Identifier: MIT */
/* stats.c - median and range of a series (see stats.h). */
#include <stdlib.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct summary summarize(double *v, unsigned n)
{
	struct summary s = { __builtin_nan(""), __builtin_nan(""), __builtin_nan(""), 0 };
	unsigned k = 0;

	/* Move the numbers to the front: NaN breaks qsort's ordering. */
	for (unsigned i = 0; i < n; i++)
		if (v[i] == v[i])
			v[k++] = v[i];
	if (!k)
		return s;
	qsort(v, k, sizeof(*v), cmp_double);
	s.n = k;
	s.min = v[0];
	s.max = v[k - 1];
	s.med = k & 1 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	return s;
}
