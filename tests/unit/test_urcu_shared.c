/* SPDX-License-Identifier: MIT */
/*
 * test_urcu_shared.c - lpc shares liburcu's reader registry with the
 * application (src/core/thread.c, "Sharing liburcu"): a thread the
 * application registered with urcu-memb itself calls lpc (lpc must not
 * register it again: liburcu asserts on that and aborts), then the
 * application unregisters it before it exits; lpc's exit work still frees
 * through RCU (it registers the thread for its duration), and every frame
 * comes back.  A second thread that lpc registered exits as before.
 *
 * Usage: test_urcu_shared [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <pthread.h>
#include <urcu/urcu-memb.h>

#include "cache/cache.h"
#include "../common/lpc_test.h"

#define NPAGES 16

struct user {
	struct lpc_cache *c;
	struct lpc_file *f;
	bool app_registers;
	int got;
};

static void *user_main(void *arg)
{
	struct user *u = arg;
	struct lpc_page *p;

	if (u->app_registers)
		urcu_memb_register_thread();
	for (unsigned i = 0; i < NPAGES; i++) {
		if (lpc_page_get(u->f, i, 0, &p) == 0) {
			u->got++;
			lpc_page_put(p);
		}
	}
	/* Private frames stay on this thread's list until it exits. */
	for (unsigned i = 0; i < 4; i++) {
		if (lpc_page_alloc(u->c, &p) == 0)
			lpc_page_put(p);
	}
	if (u->app_registers) {
		/* lpc's registration must not be the one counted here: after
		 * this the thread is no reader, and lpc's key destructor
		 * runs later, at exit. */
		urcu_memb_unregister_thread();
	}
	return NULL;
}

static void run(struct lpc_cache *c, struct lpc_file *f, bool app_registers)
{
	struct user u = { .c = c, .f = f, .app_registers = app_registers };
	struct lpc_page *pages[64];
	pthread_t th;
	unsigned n;

	REQUIRE(pthread_create(&th, NULL, user_main, &u) == 0, "thread");
	pthread_join(th, NULL);
	CHECK_EQ(u.got, NPAGES, "%s: every get succeeded",
		 app_registers ? "app-registered" : "lpc-registered");
	/* Every frame but the cached pages' can be had (E.1: frames in
	 * transit from the last round's invalidate are waited for). */
	for (n = 0; n < 64; n++)
		if (lpc_page_alloc(c, &pages[n]) != 0)
			break;
	CHECK_EQ(n, 64 - NPAGES, "%s: every frame came back after the thread exited",
		 app_registers ? "app-registered" : "lpc-registered");
	for (unsigned i = 0; i < n; i++)
		lpc_page_put(pages[i]);
	CHECK_EQ(lpc_invalidate(f, 0, 0), NPAGES, "every page cached and unheld");
}

int main(int argc, char **argv)
{
	struct lpc_cache *c;
	struct lpc_file *f;
	char path[512];

	tst_init(argc, argv, 60);
	c = tst_cache_create(64 * 4096, 4096, LPC_IO_NULL, LPC_LOOKUP_LOCKLESS);
	c->pool.evict = NULL; /* exact frame counts: no background reclaimer */
	c->pool.wake = NULL;
	REQUIRE(tst_make_sparse("u", NPAGES * 4096, path, sizeof(path)) == 0, "file");
	REQUIRE(lpc_file_open(c, path, O_RDONLY, 0, &f) == 0, "open");
	run(c, f, true);
	run(c, f, false);
	run(c, f, true);
	CHECK_EQ(lpc_file_close(f), 0, "close");
	CHECK_EQ(lpc_cache_destroy(c), 0, "destroy");
	tst_rm_dir();
	return tst_finish();
}
