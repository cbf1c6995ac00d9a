/* SPDX-License-Identifier: MIT */
/*
 * rbd_none.c - `lpcbench rbd` in a build without liblpc_rbd (no librbd-dev
 * when it was configured, -DLPC_RBD=OFF, or a sanitizer build; see
 * tools/lpcbench/CMakeLists.txt): it measures nothing and says so, and
 * `lpcbench all` goes on with the other benchmarks.  rbd.c is the real one.
 */
#include <stdio.h>

#include "lpcbench/benches.h"

#define RB_NONE_WHY "not built: this lpcbench was configured without liblpc_rbd (librbd-dev)"

static void rb_none_run(const struct bench_env *env)
{
	(void)env;
	printf("rbd: %s\n\n", RB_NONE_WHY);
	fflush(stdout);
}

static double rb_none_estimate_s(const struct bench_opts *o)
{
	(void)o;
	return 0;
}

const struct bench bench_rbd = {
	.name = "rbd",
	.help = "lpc over a Ceph RBD image vs librbd; " RB_NONE_WHY,
	.run = rb_none_run,
	.estimate_s = rb_none_estimate_s,
};
