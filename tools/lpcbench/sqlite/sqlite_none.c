/* SPDX-License-Identifier: MIT */
/*
 * sqlite_none.c - `lpcbench sqlite` in a build without SQLite (no
 * libsqlite3-dev when it was configured, or -DLPC_SQLITE=OFF; see
 * tools/lpcbench/CMakeLists.txt): it measures nothing and says so, and
 * `lpcbench all` goes on with the other benchmarks.  sqlite.c is the real one.
 */
#include <stdio.h>

#include "lpcbench/benches.h"

#define SQ_NONE_WHY "not built: this lpcbench was configured without SQLite (libsqlite3-dev)"

static void sq_none_run(const struct bench_env *env)
{
	(void)env;
	printf("sqlite: %s\n\n", SQ_NONE_WHY);
	fflush(stdout);
}

static double sq_none_estimate_s(const struct bench_opts *o)
{
	(void)o;
	return 0;
}

const struct bench bench_sqlite = {
	.name = "sqlite",
	.help = "SQLite through the VFS \"lpc\" against the unix VFS; " SQ_NONE_WHY,
	.run = sq_none_run,
	.estimate_s = sq_none_estimate_s,
};

const struct bench bench_sqlite_small = {
	.name = "sqlite-small",
	.help = "SQLite's small program, unix VFS against lpc's; " SQ_NONE_WHY,
	.run = sq_none_run,
	.estimate_s = sq_none_estimate_s,
};
