/* SPDX-License-Identifier: MIT */
/*
 * sess_afterexit - the SQLite opener used by an exit handler that runs
 * after sq_openers_exit (835583f: rbd.c; any atexit handler the program
 * registered before its first opener runs after it, atexit's reverse
 * order; e.g. a handler that closes or finishes a database, whose journal
 * is then removed through the opener).
 *
 * Contract: lpc_rbd.h lpc_rbd_sqlite_opener: the admin connection is kept
 * "until the process ends (an exit handler shuts it down before Ceph's
 * libraries are torn down: left running, its threads crashed the exit)";
 * lpc_sqlite.h: arg is "the opener's until the process ends".  After the
 * handler, sq_ioctx finds o->up false and makes a new admin connection,
 * which nobody shuts down: its threads run into Ceph's static destructors,
 * the SIGSEGV after main that 835583f set out to end.
 *
 * Steps: atexit(late); opener; exists() (admin up); main returns.  late()
 * counts /proc/self/task, calls exists() again, counts again, and ends the
 * process with _exit: 1 when exists() made a connection whose threads are
 * running now (more tasks than before), 0 when not (the opener refused, or
 * left nothing running).  LPC_CEPH_CONF=DIR/ceph.conf; 77 without.
 *
 * The scenario runs in a child (this program exec'd with "run", so no
 * state is inherited); the parent reads its end: 0 ok, anything else (a
 * signal, a sanitizer's report, exit 1 from late) is the defect.
 *
 * Seen (int 1907d0f, asan, one-node cluster):
 *   main: exists() = 0, 16 task(s); returning
 *   ==ERROR: AddressSanitizer: heap-use-after-free ... WRITE of size 27
 *     md_config_t::parse_config_files <- rados_conf_read_file <-
 *     conf_apply (src/rbd/rbd.c:526) <- sq_ioctx (rbd.c:815) <- sq_exists
 *     <- late <- __run_exit_handlers; freed by librbd.so (a static of
 *     Ceph's, destroyed at exit before late ran)
 *   child: exit status 1 / DEFECT
 * sq_openers_exit sets o->up false, so the next use builds a whole new
 * connection (rados_create, conf parsing, connect) while Ceph's statics are
 * being torn down; before 835583f the same call reused the running one
 * (rbd.c with 835583f reverted: "exists() = 0", the child exits 0).
 * A fix: sq_openers_exit leaves each opener shut (o->up false and a flag
 * that makes sq_ioctx fail, e.g. -ESHUTDOWN), or it shuts down what a
 * later use makes.
 */
#include <dirent.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include <lpc/lpc_rbd.h>
#include <lpc/lpc_sqlite.h>

static struct lpc_sqlite_opener op;
static char name[128];

static int tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void late(void)
{
	int before = tasks(), r = op.exists(op.arg, name), after;

	/* the connection's threads take a moment to start */
	usleep(200000);
	after = tasks();
	printf("late handler: %d task(s) before exists(), exists() = %d, %d task(s) after\n",
	       before, r, after);
	if (after > before) {
		printf("DEFECT: a new admin connection running after sq_openers_exit\n");
		fflush(stdout);
		_exit(1);
	}
	printf("ok\n");
	fflush(stdout);
	_exit(0);
}

int main(int argc, char **argv)
{
	const char *conf = getenv("LPC_CEPH_CONF");
	int r;

	if (!conf || !*conf) {
		fprintf(stderr, "skipped: set LPC_CEPH_CONF=DIR/ceph.conf\n");
		return 77;
	}
	if (argc < 2 || strcmp(argv[1], "run") != 0) {
		char *cargv[] = { argv[0], "run", NULL };
		pid_t pid;
		int st;

		if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, cargv, environ) != 0)
			return 2;
		if (waitpid(pid, &st, 0) != pid)
			return 2;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			printf("child: exited 0\nok\n");
			return 0;
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
			return 2;
		if (WIFSIGNALED(st))
			printf("child: killed by signal %d\nDEFECT\n", WTERMSIG(st));
		else
			printf("child: exit status %d\nDEFECT\n", WEXITSTATUS(st));
		return 1;
	}
	if (atexit(late) != 0)
		return 2;
	if (lpc_rbd_sqlite_opener(conf, &op) != 0)
		return 2;
	snprintf(name, sizeof(name), "rbd:lpc/sess-none-%d", (int)getpid());
	r = op.exists(op.arg, name);
	if (r != 0) {
		fprintf(stderr, "setup: exists() = %d (want 0)\n", r);
		return 2;
	}
	printf("main: exists() = %d, %d task(s); returning\n", r, tasks());
	fflush(stdout);
	return 0;
}
