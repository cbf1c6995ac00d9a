/* SPDX-License-Identifier: MIT */
/*
 * memcg.h - a memory cgroup that confines the kernel's page cache for the
 * read benchmark's kernel and mmap rows to the same memory as lpc's cache.
 *
 * The group is made as a child of this process's own memory cgroup (so it
 * nests under whatever limits the machine already sets): cgroup v1, the
 * `memory` controller's hierarchy with memory.limit_in_bytes; cgroup v2, the
 * unified hierarchy with memory.max (the memory controller must be enabled
 * for children of this process's group).  The memory controller charges a
 * page to the cgroup of the process that brought it in, so the reads to be
 * confined must run in a process that joined the group before reading: the
 * read benchmark forks one (read.c).
 *
 * Removal: memcg_remove() rmdirs the group; every process in it must have
 * exited first.  It is also safe from a signal handler (only rmdir).
 */
#ifndef LPCBENCH_MEMCG_H
#define LPCBENCH_MEMCG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct memcg {
	char path[PATH_MAX]; /* the group's directory */
	int version;         /* 1 or 2; 0: none */
	char why[256];       /* why there is none */
	uint64_t parent_limit; /* the enclosing group's limit; UINT64_MAX: none */
};

/* Makes the group with a limit of `limit` bytes.  Return: 0, or -1 with
 * m->why saying why not (not writable, no memory controller, ...). */
int memcg_create(struct memcg *m, const char *name, uint64_t limit);

/* Moves process pid into the group.  Return: 0 or a positive errno. */
int memcg_add(const struct memcg *m, pid_t pid);

/* One value of memory.stat (v1 "cache", "rss", "pgpgin"; v2 "file",
 * "anon"); UINT64_MAX if absent. */
uint64_t memcg_stat(const struct memcg *m, const char *key);

/* memory.usage_in_bytes (v1) or memory.current (v2); UINT64_MAX if unknown. */
uint64_t memcg_usage(const struct memcg *m);

/* Changes the limit (a lower one makes the kernel reclaim down to it).
 * Return: 0 or a positive errno. */
int memcg_set_limit(const struct memcg *m, uint64_t limit);

/* rmdir; async-signal-safe.  A no-op when there is no group. */
void memcg_remove(struct memcg *m);

#endif /* LPCBENCH_MEMCG_H */
