/* SPDX-License-Identifier: MIT */
/*
 * rw_retry.c - ad5f9fa's probe fails, then a later start succeeds.  A forked
 * child (rw-main) sets its soft RLIMIT_AS to its size + 6 MiB (no room for
 * an 8 MiB stack; the hard limit stays), writes one page of a file (the
 * flusher's start: the probe fails, lpc_pwrite must still succeed and no
 * thread appear), raises the soft limit back and writes another page (the
 * flusher's start tried again: the worker and lpc-flusher appear).  Checks:
 * the child lives; after the first write no thread; after the second the
 * worker (one non-lpc thread, named rw-main, every signal blocked) and
 * lpc-flusher.  No call_rcu comes before the second write (nothing freed).
 * Exit 1 if a check fails or the child died.  Skipped under ASan.
 */
#include <sys/resource.h>

#include "rw.h"

static unsigned long vmsize_kb(void)
{
	char line[256];
	unsigned long kb = 0;
	FILE *fp = fopen("/proc/self/status", "r");

	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (!strncmp(line, "VmSize:", 7))
			kb = strtoul(line + 7, NULL, 10);
	fclose(fp);
	return kb;
}

int main(int argc, char **argv)
{
	int st;
	pid_t p;

#if defined(__SANITIZE_ADDRESS__)
	printf("skip: ASan\n");
	return 77;
#endif
	char path[600];

	tst_init(1, argv, 60);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("rw-retry", 1 << 20, path, sizeof(path)) == 0, "file");
	fflush(stdout);
	p = fork();
	REQUIRE(p >= 0, "fork");
	if (p == 0) {
		static char page[4096];
		struct lpc_config cfg;
		struct lpc_cache *c = NULL;
		struct lpc_file *f = NULL;
		struct rlimit rl, old;
		struct rw_tids before, after;
		unsigned nw = 0, flusher = 0;
		pid_t w = 0;

		pthread_setname_np(pthread_self(), "rw-main");
		lpc_config_init(&cfg);
		cfg.cache_bytes = 1 << 20;
		cfg.io_backend = LPC_IO_NULL;
		cfg.readahead_kb = LPC_READAHEAD_OFF;
		if (lpc_cache_create(&cfg, &c) || lpc_file_open(c, path, O_RDWR, 0, &f))
			_exit(3);
		before = rw_tids();
		getrlimit(RLIMIT_AS, &old);
		rl.rlim_cur = (vmsize_kb() + 6 * 1024) * 1024ul;
		rl.rlim_max = old.rlim_max;
		if (setrlimit(RLIMIT_AS, &rl) != 0)
			_exit(77);
		CHECK_EQ(lpc_pwrite(f, page, sizeof(page), 0), (ssize_t)sizeof(page),
			 "write 1 (the probe fails)");
		after = rw_tids();
		CHECK_EQ(after.n, before.n, "no thread after the failed start");
		REQUIRE(setrlimit(RLIMIT_AS, &old) == 0, "raise");
		CHECK_EQ(lpc_pwrite(f, page, sizeof(page), 8192), (ssize_t)sizeof(page),
			 "write 2 (the start tried again)");
		after = rw_tids();
		w = 0;
		for (unsigned i = 0; i < after.n; i++) {
			char comm[32];
			bool o = false;

			for (unsigned j = 0; j < before.n; j++)
				o |= after.t[i] == before.t[j];
			if (o)
				continue;
			rw_comm(after.t[i], comm, sizeof(comm));
			if (!strcmp(comm, "lpc-flusher"))
				flusher++;
			else if (strncmp(comm, "lpc-", 4)) {
				nw++;
				w = after.t[i];
			}
		}
		rw_list();
		CHECK_EQ(flusher, 1u, "lpc-flusher started on the second try");
		CHECK_EQ(nw, 1u, "the worker appeared with it");
		if (w) {
			char comm[32];

			rw_comm(w, comm, sizeof(comm));
			CHECK(!strcmp(comm, "rw-main"), "worker named '%s'", comm);
			CHECK(rw_all_blocked(w), "worker blocks every signal");
		}
		CHECK_EQ(lpc_file_close(f), 0, "close");
		CHECK_EQ(lpc_cache_destroy(c), 0, "destroy");
		fflush(stdout);
		_exit(tst_finish());
	}
	REQUIRE(waitpid(p, &st, 0) == p, "waitpid");
	unlink(path);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
		printf("skip: setrlimit\n");
		return 77;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %s %d",
	      WIFSIGNALED(st) ? "killed by signal" : "exit",
	      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	return tst_finish();
}
