/* SPDX-License-Identifier: MIT */
/*
 * kchild.c - a child process that runs rows apart, in a memory cgroup or
 * exec'd with an lpc cache of its own (kchild.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "kchild.h"
#include "util.h"

#define KC_START 0x6b637374u /* the start word: moved into the group, go */

static struct kchild *kc_live[KCHILD_MAX];
static int kc_argc;
static char **kc_argv;

void kchild_set_args(int argc, char **argv)
{
	kc_argc = argc;
	kc_argv = argv;
}

/* Moves len bytes over fd.  Return: 0, or a positive errno (EPIPE: the
 * other end is gone).  In a child (child) any failure exits: its parent is
 * gone or broke the protocol. */
static int kc_io(int fd, void *p, size_t len, bool out, bool child)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? write(fd, (char *)p + done, len - done) :
				  read(fd, (char *)p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (child)
				_exit(1);
			return n < 0 ? errno : EPIPE;
		}
		done += (size_t)n;
	}
	return 0;
}

void kchild_serve(int cmd_fd, int res_fd, size_t cmd_len, size_t res_len, kchild_serve_fn serve,
		  void *arg)
{
	void *cmd = xcalloc(1, cmd_len), *res = xcalloc(1, res_len);
	uint32_t len;

	for (;;) {
		kc_io(cmd_fd, &len, sizeof(len), false, true);
		if (!len) {
			serve(arg, NULL, NULL);
			_exit(0);
		}
		if (len != cmd_len)
			_exit(1); /* not our parent's protocol */
		kc_io(cmd_fd, cmd, cmd_len, false, true);
		memset(res, 0, res_len);
		serve(arg, cmd, res);
		kc_io(res_fd, res, res_len, true, true);
	}
}

/* Async-signal-safe (cleanup.h): kill, waitpid, rmdir. */
static void kc_cleanup_now(void)
{
	for (unsigned i = 0; i < KCHILD_MAX; i++) {
		struct kchild *k = kc_live[i];

		if (!k)
			continue;
		kc_live[i] = NULL;
		if (k->pid > 0) {
			kill(k->pid, SIGKILL);
			waitpid(k->pid, NULL, 0);
			k->pid = 0;
		}
		if (k->in_cg)
			memcg_remove(&k->cg);
	}
}

/* The exec'd child's argv (built before the fork: no allocation after it). */
static char **kc_exec_argv(const struct kchild_spec *s, char fds[2][16], int cmd_fd, int res_fd)
{
	char **av = xcalloc((size_t)kc_argc + 7, sizeof(*av));
	int n = 0;

	snprintf(fds[0], sizeof(fds[0]), "%d", cmd_fd);
	snprintf(fds[1], sizeof(fds[1]), "%d", res_fd);
	av[n++] = (char *)"lpcbench";
	av[n++] = (char *)KCHILD_EXEC_FLAG;
	av[n++] = (char *)s->bench;
	av[n++] = (char *)(s->bench_arg ? s->bench_arg : "");
	av[n++] = fds[0];
	av[n++] = fds[1];
	for (int i = 0; i < kc_argc; i++)
		av[n++] = kc_argv[i];
	av[n] = NULL;
	return av;
}

static __attribute__((noreturn)) void kc_child(const struct kchild_spec *s, int cmd_fd,
					       int res_fd, pid_t parent, char **av)
{
	uint32_t go;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	/* The other children's pipes are not this one's (a fork copies them). */
	for (unsigned i = 0; i < KCHILD_MAX; i++)
		if (kc_live[i]) {
			close(kc_live[i]->cmd_fd);
			close(kc_live[i]->res_fd);
			kc_live[i] = NULL;
		}
	/* Wait until the parent has moved this process into the group. */
	kc_io(cmd_fd, &go, sizeof(go), false, true);
	if (go != KC_START)
		_exit(1);
	if (!av)
		kchild_serve(cmd_fd, res_fd, s->cmd_len, s->res_len, s->serve, s->arg);
	/* exec: these two, and only these, stay open across it. */
	if (fcntl(cmd_fd, F_SETFD, 0) || fcntl(res_fd, F_SETFD, 0))
		_exit(126);
	execv("/proc/self/exe", av);
	_exit(127);
}

int kchild_start(struct kchild *k, const struct kchild_spec *s)
{
	static bool armed;
	uint32_t go = KC_START;
	char fds[2][16], **av = NULL;
	int cmd[2], res[2], err, slot = -1;
	pid_t parent = getpid();

	memset(k, 0, sizeof(*k));
	snprintf(k->what, sizeof(k->what), "%s", s->what);
	k->cmd_len = s->cmd_len;
	k->res_len = s->res_len;
	for (int i = 0; i < KCHILD_MAX && slot < 0; i++)
		if (!kc_live[i])
			slot = i;
	if (slot < 0)
		die("%s: more than %d children at once", s->what, KCHILD_MAX);
	if (s->cg_name) {
		if (memcg_create(&k->cg, s->cg_name, s->cg_limit))
			return -1;
		k->in_cg = true;
	}
	if (!armed) {
		armed = true;
		cleanup_arm(kc_cleanup_now);
	}
	if (pipe2(cmd, O_CLOEXEC) || pipe2(res, O_CLOEXEC))
		die_err(errno, "%s: pipe", s->what);
	if (!s->serve)
		av = kc_exec_argv(s, fds, cmd[0], res[1]);
	fflush(NULL);
	k->pid = fork();
	if (k->pid < 0)
		die_err(errno, "%s: fork", s->what);
	if (k->pid == 0) {
		close(cmd[1]);
		close(res[0]);
		kc_child(s, cmd[0], res[1], parent, av);
	}
	free(av);
	close(cmd[0]);
	close(res[1]);
	k->cmd_fd = cmd[1];
	k->res_fd = res[0];
	kc_live[slot] = k;
	if (k->in_cg) {
		err = memcg_add(&k->cg, k->pid);
		if (err)
			die_err(err, "%s: moving the process into %s", s->what, k->cg.path);
	}
	err = kc_io(k->cmd_fd, &go, sizeof(go), true, false);
	if (err)
		die_err(err, "%s: starting the child", s->what);
	return 0;
}

/* The child is gone: says how, and dies. */
static __attribute__((noreturn)) void kc_died(struct kchild *k, int err)
{
	int status;

	if (waitpid(k->pid, &status, 0) == k->pid) {
		k->pid = 0;
		if (WIFSIGNALED(status))
			die("%s: the child process died of signal %d%s", k->what, WTERMSIG(status),
			    WTERMSIG(status) == SIGKILL && k->in_cg ?
				    " (the memory cgroup's OOM killer?)" : "");
		die("%s: the child process exited with status %d", k->what, WEXITSTATUS(status));
	}
	die_err(err, "%s: the child's pipe", k->what);
}

void kchild_call(struct kchild *k, const void *cmd, void *res)
{
	uint32_t len = (uint32_t)k->cmd_len;
	int err = kc_io(k->cmd_fd, &len, sizeof(len), true, false);

	if (!err)
		err = kc_io(k->cmd_fd, (void *)cmd, k->cmd_len, true, false);
	if (!err)
		err = kc_io(k->res_fd, res, k->res_len, false, false);
	if (err)
		kc_died(k, err);
}

void kchild_stop(struct kchild *k)
{
	uint32_t stop = 0;

	for (unsigned i = 0; i < KCHILD_MAX; i++)
		if (kc_live[i] == k)
			kc_live[i] = NULL;
	if (k->pid > 0) {
		/* A failed write means the child is gone already. */
		if (kc_io(k->cmd_fd, &stop, sizeof(stop), true, false))
			kill(k->pid, SIGKILL);
		waitpid(k->pid, NULL, 0);
		k->pid = 0;
		close(k->cmd_fd);
		close(k->res_fd);
	}
	if (k->in_cg)
		memcg_remove(&k->cg);
	free(k->own);
	k->own = NULL;
}

/* ---- kchild_start_pool: slices of this process's functions ---- */

enum { KP_SLICE, KP_CALL };

struct kp_cmd {
	int op;
	unsigned threads;
	uint64_t slice_ns;
	pool_fn fn;
	void (*call)(void *arg);
	void *arg;
};

struct kp_state {
	unsigned nr;
	bool pin;
	struct pool *pool; /* the child's, made at its first slice */
};

/* In the child: st is its copy of the parent's, as at the fork. */
static void kp_serve(void *arg, const void *cmd, void *res)
{
	struct kp_state *st = arg;
	const struct kp_cmd *c = cmd;

	if (!c)
		return;
	if (c->op == KP_CALL) {
		c->call(c->arg);
		return;
	}
	if (!st->pool) /* inside the group: the stacks are charged to it */
		st->pool = pool_create(st->nr, st->pin);
	pool_run(st->pool, c->threads, c->fn, c->arg, c->slice_ns, res);
}

int kchild_start_pool(struct kchild *k, const char *name, uint64_t limit, unsigned nr, bool pin,
		      void (*setup)(void *arg), void *arg)
{
	struct kp_state *st = xcalloc(1, sizeof(*st));
	struct kchild_spec s = {
		.what = "the kernel rows", .cg_name = name, .cg_limit = limit,
		.cmd_len = sizeof(struct kp_cmd), .res_len = sizeof(struct pool_slice),
		.serve = kp_serve, .arg = st,
	};
	struct kp_cmd c = { .op = KP_CALL, .call = setup, .arg = arg };
	struct pool_slice ignored;

	st->nr = nr;
	st->pin = pin;
	if (kchild_start(k, &s)) {
		free(st);
		return -1;
	}
	k->own = st;
	if (setup)
		kchild_call(k, &c, &ignored);
	return 0;
}

void kchild_slice(struct kchild *k, pool_fn fn, void *arg, unsigned threads, uint64_t slice_ns,
		  struct pool_slice *out)
{
	struct kp_cmd c = { .op = KP_SLICE, .threads = threads, .slice_ns = slice_ns,
			    .fn = fn, .arg = arg };

	kchild_call(k, &c, out);
}
