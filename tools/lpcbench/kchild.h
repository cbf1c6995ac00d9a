/* SPDX-License-Identifier: MIT */
/*
 * kchild.h - a child process inside a memory cgroup that runs timed slices on
 * its own pool of workers, for rows that measure the kernel's page cache at
 * a fixed memory (write.c; read.c has its own child, with more commands).
 *
 * The memory controller charges a page to the cgroup of the process that
 * brought it in, so the confined work must run in a process that is in the
 * group: the child is forked, moved into the group, and only then starts
 * its workers (their stacks and every page they dirty are charged to it).
 * Slices are asked for over a pipe: the function and argument are pointers
 * of the parent's address space, valid in the child because it is a fork
 * (set them up before kchild_start; the child sees the parent's memory as
 * it was at the fork, never later writes).
 *
 * Cleanup: kchild_stop ends the child and removes the group; at exit (and
 * after an error exit) the same runs from an atexit handler in the parent.
 * On a fatal signal datafile.c's handler kills the process; the child dies
 * with it (PR_SET_PDEATHSIG) and the empty group may be left behind.
 */
#ifndef LPCBENCH_KCHILD_H
#define LPCBENCH_KCHILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "memcg.h"
#include "pool.h"

struct kchild {
	struct memcg cg;
	pid_t pid;
	int cmd_fd, res_fd;
};

/*
 * Makes memory cgroup `name` limited to `limit` bytes, forks the child into
 * it, runs setup(arg) there (open files), then starts its pool of nr
 * workers (pinned if pin).  Return: 0, or -1 with k->cg.why saying why there
 * is no group (then there is no child either).  Dies on other failures.
 * Context: before this process starts threads the child would need (it has
 * only the calling thread); one kchild at a time.
 */
int kchild_start(struct kchild *k, const char *name, uint64_t limit, unsigned nr, bool pin,
		 void (*setup)(void *arg), void *arg);

/* Runs fn(id, arg, stop) on `threads` of the child's workers for slice_ns,
 * as pool_run does here, and fills *out. */
void kchild_slice(struct kchild *k, pool_fn fn, void *arg, unsigned threads, uint64_t slice_ns,
		  struct pool_slice *out);

/* Runs fn(arg) once in the child (outside any slice) and waits for it. */
void kchild_call(struct kchild *k, void (*fn)(void *arg), void *arg);

/* Ends the child and removes the group; a no-op without a child. */
void kchild_stop(struct kchild *k);

#endif /* LPCBENCH_KCHILD_H */
