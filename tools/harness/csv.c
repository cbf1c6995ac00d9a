/* SPDX-License-Identifier: MIT */
/* csv.c - the --csv writer (see csv.h for the columns). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "csv.h"
#include "util.h"

struct csv {
	FILE *f;
	const char *path;
};

struct csv *csv_open(const char *path)
{
	struct csv *c = xmalloc(sizeof(*c));

	c->f = fopen(path, "w");
	if (!c->f)
		die_err(errno, "creating the CSV file %s", path);
	c->path = path;
	fputs("bench,record,round,threads,variant,metric,value,min,max,n\n", c->f);
	return c;
}

void csv_close(struct csv *c)
{
	int err;

	if (!c)
		return;
	/* A full disk shows up here, at the latest: check before claiming it. */
	err = ferror(c->f) ? EIO : 0;
	if (fclose(c->f) && !err)
		err = errno;
	if (err)
		die_err(err, "writing the CSV file %s", c->path);
	free(c);
}

/* %.9g: enough digits for a count of a billion ops, few for a ratio. */
void csv_raw(struct csv *c, const struct csv_key *k, double value)
{
	if (!c)
		return;
	fprintf(c->f, "%s,raw,%u,%u,%s,%s,%.9g,,,\n", k->bench, k->round,
		k->threads, k->variant, k->metric, value);
}

void csv_summary(struct csv *c, const struct csv_key *k, const struct summary *s)
{
	if (!c)
		return;
	fprintf(c->f, "%s,summary,,%u,%s,%s,%.9g,%.9g,%.9g,%u\n", k->bench,
		k->threads, k->variant, k->metric, s->med, s->min, s->max, s->n);
}
