/* SPDX-License-Identifier: MIT */
/*
 * cleanup.h - what a benchmark leaves behind (a child process, a memory
 * cgroup, files) removed at exit and on SIGINT, SIGTERM and SIGHUP.
 *
 * cleanup_arm(fn) runs fn at exit and from those signals' handlers, in the
 * process that armed it only (a forked child inherits the handlers, not the
 * duty); fn must be async-signal-safe (kill, waitpid, unlink, rmdir).  After
 * fn, a signal goes on to whatever handler was there before (datafile's
 * removes its file and dies of the signal), else kills the process.  Arming
 * again replaces fn; up to CLEANUP_MAX benchmarks may arm in one run.
 */
#ifndef LPCBENCH_CLEANUP_H
#define LPCBENCH_CLEANUP_H

#include <stdint.h>

#define CLEANUP_MAX 4

/* Registers fn (once per fn) to run at exit and on a fatal signal. */
void cleanup_arm(void (*fn)(void));

/*
 * This thread's read_bytes so far (/proc/thread-self/io: what it read from
 * storage, not from the page cache).  *fd caches the file; start it at -1.
 * Return: the count, or 0 where /proc cannot tell.
 */
uint64_t thread_read_bytes(int *fd);

#endif /* LPCBENCH_CLEANUP_H */
