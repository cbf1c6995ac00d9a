/* SPDX-License-Identifier: MIT */
/*
 * sqlite_child.c - the sqlite benchmark's child processes (kchild.h): the
 * unix side in a memory cgroup and the lpc_excl side with an lpc cache of
 * its own, each exec'd as `lpcbench --kchild sqlite DIR ...` and serving its
 * side's commands (sqlite_side.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#ifdef LPCBENCH_HAVE_LPC_SQLITE
#include <lpc/lpc_sqlite.h>
#endif

#include "harness/kchild.h"
#include "harness/util.h"
#include "harness/zipf.h"
#include "sqlite_run.h"

/* ---- the children: the unix side in the memory cgroup, the lpc_excl side ---- */

/* The lpc_excl child's own VFS: lpc registered in it, counted. */
static void child_lpc_vfs(char *name, size_t len)
{
#ifdef LPCBENCH_HAVE_LPC_SQLITE
	int rc = lpc_sqlite_register(0);

	if (rc)
		die("sqlite: lpc_sqlite_register: %s", sqlite3_errstr(rc));
	rc = sq_vfs_wrap(LPC_SQLITE_VFS_NAME, name, (unsigned)len);
	if (rc)
		die("sqlite: cannot wrap the lpc VFS: %s", sqlite3_errstr(rc));
#else
	snprintf(name, len, "count-lpc");
#endif
}

/* A child's state: its copy of the run's layout, and its side. */
struct sq_kid {
	struct sqctx *x;
	struct side sd;
};

/* The child's commands (kchild_serve); CMD_SETUP says which side it is. */
static void child_serve(void *arg, const void *cmd, void *res)
{
	struct sq_kid *k = arg;
	const struct sq_cmd *c = cmd;
	char name[64] = "count-unix";

	if (!c) { /* stop */
		if (k->sd.open)
			sq_side_close(&k->sd);
		return;
	}
	if (c->op == CMD_SETUP) { /* unix: inside the cgroup now */
		if (c->v != SV_UNIX)
			child_lpc_vfs(name, sizeof(name));
		sq_side_init(k->x, &k->sd, (enum sq_vfs)c->v, name);
	}
	sq_side_cmd(k->x, &k->sd, c, res);
}

/*
 * bench_sqlite.child: `lpcbench --kchild sqlite DIR CMD_FD RES_FD <options>`,
 * exec'd by child_start.  Makes the same layout as the parent's from the same
 * options (sizes, paths under DIR, Zipf ranks: all derived from them) and
 * serves.  An exec, not a fork, because the lpc_excl side uses lpc: a forked
 * child would inherit liburcu's registry of this process's readers (kchild.h).
 */
void sq_child(const struct bench_env *env, const char *dir, int cmd_fd, int res_fd)
{
	struct sq_kid k;
	struct sqctx *x;
	int rc;

	if (!strncmp(dir, "small ", 6))
		sq_small_child(dir + 6); /* the small-program table's process */
	k = (struct sq_kid){ .x = xcalloc(1, sizeof(*k.x)) };
	x = k.x;

	x->env = env;
	if (snprintf(x->dir, sizeof(x->dir), "%s", dir) >= (int)sizeof(x->dir))
		die("sqlite: the directory name %s is too long", dir);
	sq_layout(x, env->opts);
	rc = sq_vfs_install();
	if (rc)
		die("sqlite: cannot install the counting VFS: %s", sqlite3_errstr(rc));
	zipf_init(&x->zipf[0], (uint32_t)x->rows[SD_SMALL], env->opts->zipf_theta, env->opts->seed);
	zipf_init(&x->zipf[1], (uint32_t)x->rows[SD_LARGE], env->opts->zipf_theta, env->opts->seed);
	kchild_serve(cmd_fd, res_fd, sizeof(struct sq_cmd), sizeof(struct sq_res), child_serve, &k);
}

void sq_child_call(struct sqctx *x, enum sq_vfs v, const struct sq_cmd *c, struct sq_res *r)
{
	kchild_call(&x->kid[v], c, r);
}

/* Starts side v's process (exec'd, sq_child): unix in the memory cgroup,
 * whose limit is raised for now (set per phase once the connections are
 * warm); lpc_excl with no cgroup (lpc's budget bounds it).  Return: false
 * if it cannot run (no cgroup for unix). */
bool sq_child_start(struct sqctx *x, enum sq_vfs v, const char *name)
{
	struct sq_cmd c = { .op = CMD_SETUP, .v = (int)v };
	struct sq_res r;
	struct kchild_spec s = {
		.what = v == SV_UNIX ? "sqlite: the unix side" : "sqlite: the lpc_excl side",
		.cg_name = v == SV_UNIX ? name : NULL, .cg_limit = x->lpc_bytes + SQ_OPEN_ROOM,
		.cmd_len = sizeof(struct sq_cmd), .res_len = sizeof(struct sq_res),
		.bench = "sqlite", .bench_arg = x->dir,
	};

	if (kchild_start(&x->kid[v], &s))
		return false;
	sq_child_call(x, v, &c, &r);
	return true;
}

void sq_child_stop(struct sqctx *x, enum sq_vfs v)
{
	kchild_stop(&x->kid[v]);
}
