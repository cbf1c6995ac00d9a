/* SPDX-License-Identifier: MIT */
/*
 * kchild.h - a child process that runs some of a benchmark's rows apart from
 * this process, asked over a pipe, answering over another: in a memory
 * cgroup (the kernel's page cache confined to lpc's budget: read.c's kernel
 * and mmap rows, write.c's kernel rows, sqlite.c's unix rows) or with an lpc
 * cache of its own (sqlite.c's lpc_excl rows).
 *
 * The memory controller charges a page to the cgroup of the process that
 * brought it in, so confined work must run in a process that is in the group
 * before it does anything: the child is forked, waits until this process
 * has moved it into the group (a start word on the command pipe), and only
 * then runs (or execs).
 *
 * Two ways to run it:
 *   fork  the child serves commands in a copy of this process: serve(arg)
 *         and every pointer of this address space are valid in it (its
 *         memory as it was at the fork, never later writes).  Only for a
 *         child that never calls lpc (nor anything else that uses RCU).
 *   exec  the child execs /proc/self/exe as
 *         `lpcbench --kchild BENCH ARG CMD_FD RES_FD <this run's options>`;
 *         main.c parses the options again and calls BENCH's child() (bench.h),
 *         which builds its state from the options and ARG and serves with
 *         kchild_serve().  A child that uses lpc must be started so: a child
 *         forked after this process used RCU inherits liburcu-memb's reader
 *         registry with entries for this process's threads, which it does
 *         not have (urcu-memb has no fork hook for it); one caught inside a
 *         read section at the fork makes every grace period in the child
 *         wait for ever (seen: `lpcbench all` hung in sqlite's lpc_excl child
 *         when other benchmarks had run first).  lpc.h's rule: a forked child
 *         must exec before it calls lpc.
 *
 * Protocol: every command is a 4-byte length (the child's cmd_len; 0: stop)
 * and the command; every answer is res_len bytes, zeroed before serve fills
 * them.  At stop the child calls serve(arg, NULL, NULL) and exits 0.  A
 * child whose parent is gone exits (PR_SET_PDEATHSIG, and a failed pipe).
 *
 * Cleanup: kchild_stop ends the child and removes its group; at exit and on
 * SIGINT/SIGTERM/SIGHUP (cleanup.h) every child still running is killed and
 * its group removed, in the process that started it only.
 */
#ifndef LPCBENCH_KCHILD_H
#define LPCBENCH_KCHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench.h"
#include "memcg.h"
#include "pool.h"

/* argv[1] of an exec'd child (main.c). */
#define KCHILD_EXEC_FLAG "--kchild"
#define KCHILD_MAX 4 /* children at once */

/* Serves one command: fills res (zeroed, res_len bytes) from cmd (cmd_len
 * bytes).  Called with cmd == NULL once, at stop. */
typedef void (*kchild_serve_fn)(void *arg, const void *cmd, void *res);

struct kchild_spec {
	const char *what;     /* for messages: "the read benchmark's kernel rows" */
	const char *cg_name;  /* a memory cgroup of this name to run in; NULL: none */
	uint64_t cg_limit;    /* its limit in bytes */
	size_t cmd_len, res_len;
	/* fork: */
	kchild_serve_fn serve;
	void *arg;
	/* exec (serve NULL): the bench whose child() serves, and its argument */
	const char *bench;
	const char *bench_arg;
};

struct kchild {
	struct memcg cg;
	bool in_cg;
	pid_t pid;
	int cmd_fd, res_fd;
	size_t cmd_len, res_len;
	char what[96];
	void *own; /* kchild_start_pool's state, freed at stop */
};

/* main.c: the options of this run (argv after the command), given again to
 * an exec'd child. */
void kchild_set_args(int argc, char **argv);

/*
 * Starts the child (kchild.h's head).  Return: 0, or -1 when s->cg_name was
 * given and no group could be made (k->cg.why says why; there is no child
 * then).  Dies on other failures.  Context: one caller thread; at most
 * KCHILD_MAX at once.
 */
int kchild_start(struct kchild *k, const struct kchild_spec *s);

/* Sends cmd (cmd_len bytes) and waits for the answer (res_len bytes into
 * res).  Dies, saying how, if the child died (its group's OOM killer?). */
void kchild_call(struct kchild *k, const void *cmd, void *res);

/* Ends the child (stop, then wait) and removes its group; a no-op without a
 * child.  Its k->cg stays readable (path, version, why). */
void kchild_stop(struct kchild *k);

/* The child's loop: serve(arg, ...) per command until stop; never returns.
 * Called by kchild.c in a forked child and by a bench's child() after exec. */
__attribute__((noreturn)) void kchild_serve(int cmd_fd, int res_fd, size_t cmd_len,
					    size_t res_len, kchild_serve_fn serve, void *arg);

/*
 * A forked child in memory cgroup `name` limited to `limit` bytes that runs
 * setup(arg) there (open files), then slices of pool_fn on its own pool of nr
 * workers (pinned if pin), pointers of this process (write.c).  Return as
 * kchild_start.
 */
int kchild_start_pool(struct kchild *k, const char *name, uint64_t limit, unsigned nr, bool pin,
		      void (*setup)(void *arg), void *arg);

/* kchild_start_pool's child: runs fn(id, arg, stop) on `threads` of its
 * workers for slice_ns, as pool_run does here, and fills *out. */
void kchild_slice(struct kchild *k, pool_fn fn, void *arg, unsigned threads, uint64_t slice_ns,
		  struct pool_slice *out);

#endif /* LPCBENCH_KCHILD_H */
