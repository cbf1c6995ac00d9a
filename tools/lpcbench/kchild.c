/* SPDX-License-Identifier: MIT */
/*
 * kchild.c - a child process in a memory cgroup that runs slices (kchild.h).
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

#include "kchild.h"
#include "util.h"

enum { KC_SLICE, KC_CALL, KC_QUIT };

struct kc_cmd {
	int op;
	unsigned threads;
	uint64_t slice_ns;
	pool_fn fn;
	void (*call)(void *arg);
	void *arg;
};

static struct kchild *kc_live;
static pid_t kc_owner;

static void xfer(int fd, void *p, size_t len, bool out)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? write(fd, (char *)p + done, len - done) :
				  read(fd, (char *)p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (getpid() != kc_owner)
				_exit(1); /* the child: the parent is gone */
			die_err(n < 0 ? errno : EPIPE, "the kernel rows' child pipe");
		}
		done += (size_t)n;
	}
}

static __attribute__((noreturn)) void child_main(int cmd_fd, int res_fd, unsigned nr, bool pin)
{
	struct pool *pool = NULL;
	struct kc_cmd c;
	struct pool_slice s;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	for (;;) {
		xfer(cmd_fd, &c, sizeof(c), false);
		memset(&s, 0, sizeof(s));
		switch (c.op) {
		case KC_SLICE:
			if (!pool)
				pool = pool_create(nr, pin);
			pool_run(pool, c.threads, c.fn, c.arg, c.slice_ns, &s);
			break;
		case KC_CALL:
			c.call(c.arg);
			break;
		default:
			_exit(0);
		}
		xfer(res_fd, &s, sizeof(s), true);
	}
}

static void kc_at_exit(void)
{
	if (kc_live && getpid() == kc_owner)
		kchild_stop(kc_live);
}

static void kc_roundtrip(struct kchild *k, struct kc_cmd *c, struct pool_slice *out)
{
	struct pool_slice s;

	xfer(k->cmd_fd, c, sizeof(*c), true);
	xfer(k->res_fd, &s, sizeof(s), false);
	if (out)
		*out = s;
}

int kchild_start(struct kchild *k, const char *name, uint64_t limit, unsigned nr, bool pin,
		 void (*setup)(void *arg), void *arg)
{
	static bool registered;
	int cmd[2], res[2], err;

	memset(k, 0, sizeof(*k));
	if (memcg_create(&k->cg, name, limit))
		return -1;
	if (!registered) {
		registered = true;
		if (atexit(kc_at_exit))
			die("cannot register the kernel rows' cleanup");
	}
	kc_owner = getpid();
	if (pipe2(cmd, O_CLOEXEC) || pipe2(res, O_CLOEXEC))
		die_err(errno, "pipe");
	fflush(NULL);
	k->pid = fork();
	if (k->pid < 0)
		die_err(errno, "fork");
	if (k->pid == 0) {
		close(cmd[1]);
		close(res[0]);
		child_main(cmd[0], res[1], nr, pin);
	}
	close(cmd[0]);
	close(res[1]);
	k->cmd_fd = cmd[1];
	k->res_fd = res[0];
	kc_live = k;
	err = memcg_add(&k->cg, k->pid);
	if (err)
		die_err(err, "moving the kernel rows' process into %s", k->cg.path);
	/* Inside the group from here: setup's pages and the pool's stacks. */
	if (setup)
		kchild_call(k, setup, arg);
	return 0;
}

void kchild_slice(struct kchild *k, pool_fn fn, void *arg, unsigned threads, uint64_t slice_ns,
		  struct pool_slice *out)
{
	struct kc_cmd c = { .op = KC_SLICE, .threads = threads, .slice_ns = slice_ns,
			    .fn = fn, .arg = arg };

	kc_roundtrip(k, &c, out);
}

void kchild_call(struct kchild *k, void (*fn)(void *arg), void *arg)
{
	struct kc_cmd c = { .op = KC_CALL, .call = fn, .arg = arg };

	kc_roundtrip(k, &c, NULL);
}

void kchild_stop(struct kchild *k)
{
	struct kc_cmd c = { .op = KC_QUIT };

	if (k->pid > 0) {
		/* A failed write means the child is gone already. */
		if (write(k->cmd_fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
			kill(k->pid, SIGKILL);
		waitpid(k->pid, NULL, 0);
		k->pid = 0;
		close(k->cmd_fd);
		close(k->res_fd);
	}
	memcg_remove(&k->cg);
	if (kc_live == k)
		kc_live = NULL;
}
