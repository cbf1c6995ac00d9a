/* SPDX-License-Identifier: MIT */
/*
 * test_debug_radix_kept.c - the LPC_DEBUG rule RADIX-KEPT can fire.
 *
 * The rule: when a tree is destroyed, its count of kept leaves (root->kept)
 * is the number of linked leaves whose count is 0 (index/radix.c KL1-KL3;
 * an internal count no caller can break).  This program is built with its
 * own copy of src/index/radix.c compiled with LPC_RADIX_BREAK_KEPT, whose
 * fast delete (KL1) forgets to count the leaf it keeps; a child inserts one
 * entry, deletes it the fast way (the leaf stays, empty), destroys the tree
 * and must die of SIGABRT with "rule RADIX-KEPT violated" on stderr.
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
		if (lpc_radix_insert(&root, 1000, entry))
			_exit(3);
		leaf = lpc_radix_leaf_lock(&root, 1000);
		if (!leaf || !lpc_radix_leaf_delete(&root, leaf, 1000))
			_exit(4);
		lpc_radix_leaf_unlock(leaf);
		lpc_radix_destroy(&root);
		fprintf(stderr, "the rule did not fire\n");
		_exit(0);
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 && (r = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)r;
	out[len] = 0;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
	    strstr(out, "rule RADIX-KEPT violated")) {
		printf("ok RADIX-KEPT: %s", strstr(out, "lpc debug:"));
		printf("1 passed, 0 failed\n");
		return 0;
	}
	printf("FAIL RADIX-KEPT: child %s %d, stderr:\n%s\n0 passed, 1 failed\n",
	       WIFSIGNALED(status) ? "died of signal" : "exited",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), out);
	return 1;
}
