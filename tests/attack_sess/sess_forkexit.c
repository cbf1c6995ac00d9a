/* SPDX-License-Identifier: MIT */
/*
 * sess_forkexit - a child forked after the SQLite opener's admin connection
 * is up, calling exit() (835583f: rbd.c sq_openers_exit, the atexit handler).
 *
 * Contract: lpc.h / lpc_rbd.h lpc_rbd_sqlite_opener: the admin connection
 * is "kept, with the opener's state, until the process ends (an exit
 * handler shuts it down before Ceph's libraries are torn down ...)"; nothing
 * says a process using the opener may not fork, and a child that exits
 * must end.  The handler is inherited by every child, with the parent's
 * sq_openers list and o->up true, but not with the connection's threads:
 * the child's exit() calls rados_shutdown on a copy of a client whose
 * messenger/MonClient threads exist only in the parent.
 *
 * Steps: opener; op.exists() on a missing image (makes the admin
 * connection, o->up); fork; the child calls exit(0); the parent waits up to
 * 30 s.  Exit 1 when the child hangs or dies by a signal or exits non-zero,
 * 0 when it exits 0 in time (also checked: the same child with _exit(0)).
 * LPC_CEPH_CONF=DIR/ceph.conf (scripts/ceph-cluster.sh up DIR); 77 without.
 *
 * Seen (int 1907d0f, asan, one-node cluster of scripts/ceph-cluster.sh):
 *   child with _exit(0): exited 0 (0)
 *   child with exit(0), round 0: hung 30 s, killed (30)   (x3)
 *   parent exists() after: 0
 *   DEFECT
 * The hung child's stack (gdb -p): pthread_cond_wait <- librados <-
 * rados_shutdown <- sq_openers_exit (src/rbd/rbd.c:791) <- exit.  Every
 * forked child of a program that used the opener (a shell-out, a
 * daemonizing fork, a pre-fork server) now hangs at exit(); with 835583f
 * reverted in rbd.c all three children exit 0.  A fix: the
 * handler shuts down only in the process that made the connection (the
 * pid at rados_connect), or a pthread_atfork child handler forgets the
 * parent's connections (o->up false, never rados_shutdown on them).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lpc/lpc_rbd.h>
#include <lpc/lpc_sqlite.h>

/* 0: exited 0; 1: hung (killed); 2: signal; 3: non-zero status. */
static int child_fate(int use_exit, int *detail)
{
	pid_t pid = fork();

	if (pid < 0)
		exit(2);
	if (pid == 0) {
		if (use_exit)
			exit(0);
		_exit(0);
	}
	for (int i = 0; i < 300; i++) {
		int st;
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid) {
			if (WIFSIGNALED(st)) {
				*detail = WTERMSIG(st);
				return 2;
			}
			*detail = WEXITSTATUS(st);
			return WEXITSTATUS(st) ? 3 : 0;
		}
		struct timespec ts = { 0, 100000000 };
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	*detail = 30;
	return 1;
}

int main(void)
{
	const char *conf = getenv("LPC_CEPH_CONF");
	struct lpc_sqlite_opener op;
	char name[128];
	int d = 0, fails = 0, r;

	if (!conf || !*conf) {
		fprintf(stderr, "skipped: set LPC_CEPH_CONF=DIR/ceph.conf\n");
		return 77;
	}
	if (lpc_rbd_sqlite_opener(conf, &op) != 0)
		return 2;
	snprintf(name, sizeof(name), "rbd:lpc/sess-none-%d", (int)getpid());
	r = op.exists(op.arg, name);
	if (r != 0) {
		fprintf(stderr, "setup: exists() = %d (want 0)\n", r);
		return 2;
	}
	fflush(stdout);
	fflush(stderr);

	r = child_fate(0, &d);
	printf("child with _exit(0): %s (%d)\n",
	       r == 0 ? "exited 0" : r == 1 ? "hung" : r == 2 ? "signal" : "status", d);
	for (int round = 0; round < 3; round++) {
		r = child_fate(1, &d);
		printf("child with exit(0), round %d: %s (%d)\n", round,
		       r == 0 ? "exited 0" : r == 1 ? "hung 30 s, killed" :
		       r == 2 ? "killed by signal" : "exit status", d);
		fflush(stdout);
		if (r != 0)
			fails++;
	}
	/* The parent still works (its connection is its own). */
	r = op.exists(op.arg, name);
	printf("parent exists() after: %d\n", r);
	if (r != 0)
		fails++;
	printf("%s\n", fails ? "DEFECT" : "ok");
	return fails ? 1 : 0;
}
