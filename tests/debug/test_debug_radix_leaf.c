/* SPDX-License-Identifier: MIT */
/*
 * test_debug_radix_leaf.c - the LPC_DEBUG rule RADIX-LEAF-COUNT can fire.
 *
 * The rule: whenever a leaf's lock is dropped, its count is the number of
 * its used slots, and a dead leaf has none (index/radix.c; an internal
 * count no caller can break).  This program is built with its own copy of
 * src/index/radix.c compiled with LPC_RADIX_BREAK_LEAF_COUNT, whose fast
 * delete (FD2) forgets to lower the count; a child inserts two entries in
 * one leaf, deletes one the fast way, and must die of SIGABRT with "rule
 * RADIX-LEAF-COUNT violated" on stderr when the leaf is unlocked (FD3).
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
	static char entry[16] __attribute__((aligned(8)));
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
		struct lpc_radix_node *leaf;

		lpc_radix_init(&root);
		if (lpc_radix_insert(&root, 1000, entry) ||
		    lpc_radix_insert_fast(&root, 1001, entry + 8) != 0)
			_exit(3);
		leaf = lpc_radix_leaf_lock(&root, 1001);
		if (!leaf || !lpc_radix_leaf_delete(&root, leaf, 1001))
			_exit(4);
		lpc_radix_leaf_unlock(leaf);
		fprintf(stderr, "the rule did not fire\n");
		_exit(0);
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 && (r = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = 0;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
	    strstr(out, "rule RADIX-LEAF-COUNT violated")) {
		printf("ok RADIX-LEAF-COUNT: %s", strstr(out, "lpc debug:"));
		printf("1 passed, 0 failed\n");
		return 0;
	}
	printf("FAIL RADIX-LEAF-COUNT: child %s %d, stderr:\n%s\n0 passed, 1 failed\n",
	       WIFSIGNALED(status) ? "died of signal" : "exited",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), out);
	return 1;
}
