/* SPDX-License-Identifier: MIT */
/* cleanup.c - exit and signal clean-up of the benchmarks (see cleanup.h). */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "util.h"

static void (*fns[CLEANUP_MAX])(void);
static unsigned nfns;
static pid_t owner;
static struct sigaction old_sa[3];
static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };

static void run_all(void)
{
	if (getpid() != owner)
		return;
	for (unsigned i = 0; i < nfns; i++)
		fns[i]();
}

static void on_signal(int sig)
{
	int i;

	run_all();
	for (i = 0; i < 3 && sigs[i] != sig; i++)
		;
	if (i < 3 && old_sa[i].sa_handler != SIG_DFL && old_sa[i].sa_handler != SIG_IGN) {
		old_sa[i].sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void cleanup_arm(void (*fn)(void))
{
	struct sigaction sa;

	owner = getpid();
	for (unsigned i = 0; i < nfns; i++)
		if (fns[i] == fn)
			return;
	if (nfns == CLEANUP_MAX)
		die("too many clean-up handlers");
	fns[nfns++] = fn;
	if (nfns > 1)
		return;
	if (atexit(run_all))
		die("cannot register the benchmarks' clean-up");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old_sa[i]);
}

uint64_t thread_read_bytes(int *fd)
{
	char buf[512], *p;
	ssize_t n;

	if (*fd < 0) {
		*fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
		if (*fd < 0)
			return 0;
	}
	n = pread(*fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "\nread_bytes:");
	return p ? strtoull(p + 12, NULL, 10) : 0;
}
