/* SPDX-License-Identifier: MIT */
/*
 * test_debug_wpin_self.c - the forbidden self-waits of a write pin's holder
 * (lpc.h I.8) are named by a rule in the LPC_DEBUG build, never a silent
 * hang: rule WPIN-SELF-WAIT (page/lock.c for a page's lock, filemap/file.c
 * for a file's write pins) and WPIN-OWNER for a write pin unpinned without
 * LPC_PIN_WRITE (writeback/wpin.c).  Each case runs in a child with a 5 s
 * watchdog: the child must die of SIGABRT with the rule's name in its
 * stderr.  Before the rule the holder's call slept for ever.
 *
 * Cases, the holder (this thread) holding page 0's write pin:
 *   pin        a second write pin of page 0
 *   pwrite     lpc_pwrite of a byte of page 0
 *   page_lock  lpc_page_lock of page 0
 *   pread      lpc_pread of page 0
 *   page_read  lpc_page_read of page 0
 *   fsync      lpc_fsync with page 0 dirty from before the pin (I.6: the
 *              fsync waits for the unpin)
 *   truncate   lpc_truncate of the file (WC6 waits for every write pin)
 *   close      the last lpc_file_close (ZW waits for every write pin)
 *   unpin_rd   lpc_unpin(LPC_PIN_READ), then lpc_pread (the lock would stay
 *              held with no holder; WPIN-OWNER fires at the unpin)
 * And what the rules must let through (the child returns 0, no rule):
 *   ok_other   another thread unpins the holder's pin, then the holder
 *              reads and locks the page
 *   ok_rdpin   the holder read-pins its own write-pinned page, reads it
 *              through the pin and read-unpins it, then write-unpins
 *   ok_other_file  the holder truncates another file
 * The write pins' adversarial review showed five of these hanging (its
 * program att_wpin_selfpin, branch attwpin).
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "../common/lpc_test.h"

static const size_t PS = 4096;

static void *watchdog(void *a)
{
	(void)a;
	sleep(5);
	_exit(3);
}

static void read_nothing(const void *data, size_t len, void *arg)
{
	(void)data, (void)len, (void)arg;
}

static void *unpin_main(void *arg)
{
	lpc_unpin(arg, 1, LPC_PIN_WRITE);
	return NULL;
}

/* Return: 0 when the call returned (the "ok" cases); a forbidden case dies. */
static int child(const char *what, int backend)
{
	struct lpc_cache *c = tst_cache_create(64 * PS, PS, backend, LPC_LOOKUP_LOCKLESS);
	struct lpc_file *f, *g;
	struct lpc_page *p, *q = NULL;
	char path[512], path2[512], buf[4096];
	pthread_t tw, tu;

	REQUIRE(tst_make_file("self", 4 * PS, 1, path, sizeof(path)) == 0, "make file");
	REQUIRE(lpc_file_open(c, path, O_RDWR, 0, &f) == 0, "open");
	REQUIRE(lpc_pread(f, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf), "page 0 cached");
	if (!strcmp(what, "fsync"))
		REQUIRE(lpc_pwrite(f, "d", 1, 0) == 1, "page 0 dirty before the pin");
	REQUIRE(lpc_pin(f, 0, PS, LPC_PIN_WRITE, &p, 1) == 1, "write pin of page 0");
	pthread_create(&tw, NULL, watchdog, NULL);
	if (!strcmp(what, "pin"))
		lpc_pin(f, 10, 10, LPC_PIN_WRITE, &q, 1);
	else if (!strcmp(what, "pwrite"))
		lpc_pwrite(f, "x", 1, 10);
	else if (!strcmp(what, "page_lock"))
		lpc_page_lock(p);
	else if (!strcmp(what, "pread"))
		lpc_pread(f, buf, PS, 0);
	else if (!strcmp(what, "page_read"))
		lpc_page_read(f, 0, 0, read_nothing, NULL);
	else if (!strcmp(what, "fsync"))
		lpc_fsync(f);
	else if (!strcmp(what, "truncate"))
		lpc_truncate(f, 100);
	else if (!strcmp(what, "close"))
		lpc_file_close(f);
	else if (!strcmp(what, "unpin_rd")) {
		lpc_unpin(&p, 1, LPC_PIN_READ);
		lpc_pread(f, buf, PS, 0);
	} else if (!strcmp(what, "ok_other")) {
		REQUIRE(pthread_create(&tu, NULL, unpin_main, &p) == 0, "unpinner");
		pthread_join(tu, NULL);
		CHECK_EQ(lpc_pread(f, buf, PS, 0), (ssize_t)PS, "read after the unpin");
		lpc_page_lock(p);
		lpc_page_unlock(p);
		return tst_finish();
	} else if (!strcmp(what, "ok_rdpin")) {
		CHECK_EQ(lpc_pin(f, 0, 8, LPC_PIN_READ, &q, 1), 1, "read pin of its own page");
		memcpy(lpc_page_data(p), "SELF", 4);
		CHECK(!memcmp(lpc_page_data(q), "SELF", 4), "the read pin sees the bytes");
		lpc_unpin(&q, 1, LPC_PIN_READ);
		lpc_unpin(&p, 1, LPC_PIN_WRITE);
		CHECK_EQ(lpc_pread(f, buf, 4, 0), 4, "read after the unpin");
		CHECK(!memcmp(buf, "SELF", 4), "the pin's bytes");
		return tst_finish();
	} else if (!strcmp(what, "ok_other_file")) {
		REQUIRE(tst_make_file("other", 4 * PS, 2, path2, sizeof(path2)) == 0, "make file");
		REQUIRE(lpc_file_open(c, path2, O_RDWR, 0, &g) == 0, "open");
		CHECK_EQ(lpc_truncate(g, 100), 0, "truncate of another file");
		CHECK_EQ(lpc_file_close(g), 0, "close of another file");
		lpc_unpin(&p, 1, LPC_PIN_WRITE);
		return tst_finish();
	}
	return 0;
}

static const struct {
	const char *what;
	const char *rule; /* NULL: must return */
} cases[] = {
	{ "pin", "WPIN-SELF-WAIT" },	   { "pwrite", "WPIN-SELF-WAIT" },
	{ "page_lock", "WPIN-SELF-WAIT" }, { "pread", "WPIN-SELF-WAIT" },
	{ "page_read", "WPIN-SELF-WAIT" }, { "fsync", "WPIN-SELF-WAIT" },
	{ "truncate", "WPIN-SELF-WAIT" },  { "close", "WPIN-SELF-WAIT" },
	{ "unpin_rd", "WPIN-OWNER" },	   { "ok_other", NULL },
	{ "ok_rdpin", NULL },		   { "ok_other_file", NULL },
};

int main(int argc, char **argv)
{
	static const int backends[] = { LPC_IO_SYNC, LPC_IO_NULL };

	tst_init(argc, argv, 120);
	REQUIRE(tst_tmpdir(), "temporary directory");
	for (size_t b = 0; b < 2; b++)
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char out[8192], want[128];
			size_t len = 0;
			ssize_t r;
			int fds[2], st;
			pid_t pid;
			bool ok;

			REQUIRE(pipe(fds) == 0, "pipe");
			fflush(NULL);
			pid = fork();
			REQUIRE(pid >= 0, "fork");
			if (pid == 0) {
				close(fds[0]);
				dup2(fds[1], 2);
				dup2(fds[1], 1);
				_exit(child(cases[i].what, backends[b]));
			}
			close(fds[1]);
			while (len < sizeof(out) - 1 &&
			       (r = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
				len += (size_t)r;
			out[len] = 0;
			close(fds[0]);
			waitpid(pid, &st, 0);
			if (cases[i].rule) {
				snprintf(want, sizeof(want), "rule %s violated", cases[i].rule);
				ok = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && strstr(out, want);
			} else {
				ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
				     !strstr(out, "violated");
			}
			CHECK(ok, "backend %d, holder's %s: expected %s; child %s %d (3: hung), "
				  "output:\n%s", backends[b], cases[i].what,
			      cases[i].rule ? cases[i].rule : "a return",
			      WIFSIGNALED(st) ? "died of signal" : "exited",
			      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), out);
			if (ok)
				printf("ok backend %d %s: %s\n", backends[b], cases[i].what,
				       cases[i].rule ? cases[i].rule : "returned, no rule");
		}
	tst_rm_dir();
	return tst_finish();
}
