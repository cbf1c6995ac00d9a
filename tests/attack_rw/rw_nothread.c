/* SPDX-License-Identifier: MIT */
/*
 * rw_nothread.c - lpc when no thread can be made (ad5f9fa's probe).  A forked
 * child limits its address space (RLIMIT_AS: its size now + 6 MiB, less
 * than a thread's 8 MiB stack), then:
 *   rw_nothread create  creates a 1 MiB cache and destroys it: must return
 *                       0 and not die (ad5f9fa: create makes no thread)
 *   rw_nothread fill    also reads a file 8x the cache: the reclaimer's
 *                       start (probe fails, direct reclaim) and the
 *                       application thread's first call_rcu (a freed radix
 *                       leaf): liburcu's abort, pre-existing?
 *   rw_nothread close   opens, reads one page and closes: lpc's first
 *                       call_rcu is the close's (no lpc thread ever starts)
 * Exit 1 if the child was killed by a signal; 0 if every call returned.
 * The child prints how far it got.  Skipped under ASan (its shadow memory
 * defeats RLIMIT_AS).
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

static void say(const char *what, long rc)
{
	printf("# child: %s = %ld\n", what, rc);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "create";
	int st;
	pid_t p;

#if defined(__SANITIZE_ADDRESS__)
	printf("skip: ASan\n");
	return 77;
#endif
	char path[600];

	tst_init(1, argv, 60);
	tst_require_tmpdir();
	REQUIRE(tst_make_sparse("rw-nothread", 8 << 20, path, sizeof(path)) == 0, "file");
	fflush(stdout);
	p = fork();
	REQUIRE(p >= 0, "fork");
	if (p == 0) {
		struct lpc_config cfg;
		struct lpc_cache *c = NULL;
		struct rlimit rl;
		long rc;

		lpc_config_init(&cfg);
		cfg.cache_bytes = 1 << 20;
		cfg.io_backend = LPC_IO_NULL;
		cfg.readahead_kb = LPC_READAHEAD_OFF;
		rl.rlim_cur = rl.rlim_max = (vmsize_kb() + 6 * 1024) * 1024ul;
		if (setrlimit(RLIMIT_AS, &rl) != 0)
			_exit(77);
		rc = lpc_cache_create(&cfg, &c);
		say("lpc_cache_create", rc);
		if (rc == 0 && strcmp(mode, "create")) {
			static char buf[64 << 10];
			struct lpc_file *f = NULL;
			uint64_t end = !strcmp(mode, "fill") ? 8u << 20 : 4096;

			rc = lpc_file_open(c, path, O_RDONLY, 0, &f);
			say("open", rc);
			for (uint64_t off = 0; rc >= 0 && off < end; off += sizeof(buf)) {
				rc = lpc_pread(f, buf, end < sizeof(buf) ? end : sizeof(buf), (off_t)off);
				if (off % (1u << 20) == 0)
					say("pread at MiB", (long)(off >> 20));
			}
			say("last pread", rc);
			say("close", lpc_file_close(f));
			printf("# child: lpc-reclaim seen: %u\n", rw_census().reclaim);
		}
		if (c)
			say("destroy", lpc_cache_destroy(c));
		_exit(0);
	}
	REQUIRE(waitpid(p, &st, 0) == p, "waitpid");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
		printf("skip: setrlimit\n");
		return 77;
	}
	unlink(path);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s under a tight RLIMIT_AS: child %s %d", mode,
	      WIFSIGNALED(st) ? "killed by signal" : "exit",
	      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	return tst_finish();
}
