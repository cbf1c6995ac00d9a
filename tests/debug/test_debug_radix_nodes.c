/* SPDX-License-Identifier: MIT */
/*
 * test_debug_radix_nodes.c - the LPC_DEBUG rule RADIX-NODES-USED can fire.
 *
 * The rule: a radix insert uses exactly the nodes it allocated in step I1
 * (an internal count no caller can break).  This program is built with its
 * own copy of src/index/radix.c compiled with LPC_RADIX_BREAK_NODE_COUNT,
 * which makes I1 allocate one node too many; a child inserts one entry and
 * must die of SIGABRT with "rule RADIX-NODES-USED violated" on stderr.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "index/radix.h"

#ifdef LPC_TSAN
char lpc_rcu_tsan_token; /* core/rcu.h: thread.c's, which this program does not link */
#endif

int main(void)
{
	static char entry[8] __attribute__((aligned(8)));
	char out[4096];
	size_t len = 0;
	ssize_t r;
	int fds[2], status;
	pid_t pid;

	if (pipe(fds) != 0)
		return 1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		struct lpc_radix_root root;

		close(fds[0]);
		dup2(fds[1], 2);
		lpc_radix_init(&root);
		lpc_radix_insert(&root, 1000, entry);
		fprintf(stderr, "the rule did not fire\n");
		_exit(0);
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 && (r = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = 0;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
	    strstr(out, "rule RADIX-NODES-USED violated")) {
		printf("ok RADIX-NODES-USED: %s", strstr(out, "lpc debug:"));
		printf("1 passed, 0 failed\n");
		return 0;
	}
	printf("FAIL RADIX-NODES-USED: child %s %d, stderr:\n%s\n0 passed, 1 failed\n",
	       WIFSIGNALED(status) ? "died of signal" : "exited",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), out);
	return 1;
}
