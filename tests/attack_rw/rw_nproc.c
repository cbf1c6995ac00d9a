/* SPDX-License-Identifier: MIT */
/*
 * rw_nproc.c - ad5f9fa's probe under RLIMIT_NPROC with room for exactly one
 * more thread.  The probe is made and joined, then liburcu makes the worker
 * in the probe's place: but pthread_join returns when the kernel clears the
 * probe's tid (in do_exit), and the probe leaves the user's process count
 * only at release_task, later.  If liburcu's pthread_create comes first it
 * fails with EAGAIN and liburcu aborts the process: the probe did not turn
 * the failure into the start's error.  Each round, a forked child opens a
 * file, drops to uid/gid 65534 (root ignores RLIMIT_NPROC), sets
 * RLIMIT_NPROC to 2 (itself and one thread) and reads 8x its 1 MiB cache:
 * the reclaimer's start runs the probe.
 *   rw_nproc [ROUNDS]   default 100; exit 1 if any child died by a signal
 *   RW_BT=1 rw_nproc N  each aborting child prints its backtrace
 */
#include <execinfo.h>
#include <grp.h>
#include <sys/resource.h>

#include "rw.h"

/* In the child: where the abort came from (link with -rdynamic for names). */
static void on_abrt(int sig)
{
	void *pc[32];
	int n = backtrace(pc, 32);

	backtrace_symbols_fd(pc, n, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100, died = 0, ok = 0, skip = 0;
	char path[600];

	tst_init(1, argv, 300);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("rw-nproc", 8 << 20, path, sizeof(path)) == 0, "file");
	if (geteuid() != 0) {
		printf("skip: needs root (to drop to uid 65534)\n");
		return 77;
	}
	for (int r = 0; r < rounds; r++) {
		int st;
		pid_t p;

		fflush(stdout);
		p = fork();
		REQUIRE(p >= 0, "fork");
		if (p == 0) {
			struct lpc_config cfg;
			struct lpc_cache *c = NULL;
			struct lpc_file *f = NULL;
			struct rlimit rl = { 2, 2 };
			static char buf[64 << 10];

			if (getenv("RW_BT"))
				signal(SIGABRT, on_abrt);
			lpc_config_init(&cfg);
			cfg.cache_bytes = 1 << 20;
			cfg.io_backend = LPC_IO_NULL;
			cfg.readahead_kb = LPC_READAHEAD_OFF;
			if (lpc_cache_create(&cfg, &c) || lpc_file_open(c, path, O_RDONLY, 0, &f))
				_exit(3);
			if (setgroups(0, NULL) || setgid(65534) || setuid(65534) ||
			    setrlimit(RLIMIT_NPROC, &rl))
				_exit(77);
			for (uint64_t off = 0; off < (8u << 20); off += sizeof(buf))
				if (lpc_pread(f, buf, sizeof(buf), (off_t)off) != (ssize_t)sizeof(buf))
					_exit(4);
			lpc_file_close(f);
			lpc_cache_destroy(c);
			_exit(0);
		}
		REQUIRE(waitpid(p, &st, 0) == p, "waitpid");
		if (WIFSIGNALED(st)) {
			if (!died)
				printf("# round %d: child killed by signal %d\n", r, WTERMSIG(st));
			died++;
		} else if (WEXITSTATUS(st) == 77) {
			skip++;
		} else {
			CHECK_EQ(WEXITSTATUS(st), 0, "round %d: child exit", r);
			ok++;
		}
	}
	unlink(path);
	printf("# %d rounds: %d returned, %d killed by a signal, %d skipped\n", rounds, ok, died,
	       skip);
	if (skip == rounds)
		return 77;
	CHECK_EQ(died, 0, "no child aborted (liburcu's urcu_die)");
	return tst_finish();
}
