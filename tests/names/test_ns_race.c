/* SPDX-License-Identifier: MIT */
/*
 * test_ns_race.c - rcu-walks racing the writers (N.1, N.2).
 *
 * The tree: p/ (0700, uid 1001) holding f (ino PF), q/ (0755, uid 1002)
 * holding f (ino QF); c/ toggled by chmod (0700 <-> 0755) and setacl (a
 * named-user entry for 1002 or none); u/f unlinked and created again.  A
 * renamer swaps p and q (RENAME_EXCHANGE) again and again.  Walkers with
 * credential 1002 stat "p/f" and "q/f": the kernel answers -EACCES (the
 * name is on the 0700 directory) or QF (it is on the 0755 one); any other
 * answer, above all PF (the permission of one directory with the child of
 * the other: a mix of before and after) or -ENOENT, is a failure.  "c/f":
 * -EACCES or 0.  "u/f": -ENOENT or 0.  Runs LPC_STRESS_SECONDS (default 2);
 * prints the seed; skips (77) unless root with ACLs.
 */
#include "core/debug.h"
#include "ns_test.h"

static struct lpc_ns *ns;
static ino_t pf, qf;
static _Atomic bool stop;
static _Atomic unsigned long nanswers, nrenames;
static const struct lpc_cred root_cred = { 0, 0, 0, NULL };
static const gid_t g1002[] = { 2002 };
static const struct lpc_cred user = { 1002, 2002, 1, g1002 };

static void *walker(void *arg)
{
	uint64_t rs = tst_seed ^ (uintptr_t)arg;
	struct stat st;

	while (!atomic_load(&stop)) {
		unsigned r = (unsigned)(tst_rnd(&rs) % 4);
		const char *path = r == 0 ? "p/f" : r == 1 ? "q/f" : r == 2 ? "c/f" : "u/f";
		int rc = lpc_ns_stat(ns, &user, path, &st);

		if (r < 2) {
			if (rc == 0)
				CHECK(st.st_ino == qf, "%s: inode %lu, not q's f (%lu); p's f is %lu", path,
				      (unsigned long)st.st_ino, (unsigned long)qf, (unsigned long)pf);
			else
				CHECK_EQ(rc, -EACCES, "%s", path);
		} else if (r == 2) {
			CHECK(rc == 0 || rc == -EACCES, "c/f: %d", rc);
		} else {
			CHECK(rc == 0 || rc == -ENOENT, "u/f: %d", rc);
		}
		atomic_fetch_add(&nanswers, 1);
	}
	return NULL;
}

static void *renamer(void *arg)
{
	while (!atomic_load(&stop)) {
		CHECK_EQ(lpc_ns_rename(ns, &root_cred, "p", "q", RENAME_EXCHANGE), 0, "exchange");
		atomic_fetch_add(&nrenames, 1);
	}
	return NULL;
}

static void *changer(void *arg)
{
	struct lpc_acl_entry acl[5] = { { LPC_ACL_USER_OBJ, 7, 0 }, { LPC_ACL_USER, 5, 1002 },
					{ LPC_ACL_GROUP_OBJ, 0, 0 }, { LPC_ACL_MASK, 5, 0 },
					{ LPC_ACL_OTHER, 0, 0 } };
	unsigned i = 0;

	while (!atomic_load(&stop)) {
		struct lpc_file *f;

		switch (i++ % 4) {
		case 0:
			CHECK_EQ(lpc_ns_chmod(ns, &root_cred, "c", 0755), 0, "chmod");
			break;
		case 1:
			CHECK_EQ(lpc_ns_chmod(ns, &root_cred, "c", 0700), 0, "chmod");
			break;
		case 2:
			CHECK_EQ(lpc_ns_setacl(ns, &root_cred, "c", acl, 5), 0, "setacl");
			CHECK_EQ(lpc_ns_unlink(ns, &root_cred, "u/f", 0), 0, "unlink");
			break;
		case 3:
			CHECK_EQ(lpc_ns_setacl(ns, &root_cred, "c", NULL, 0), 0, "setacl none");
			CHECK_EQ(lpc_ns_open(ns, &root_cred, "u/f", O_CREAT | O_EXCL | O_RDWR, 0644, &f),
				 0, "create");
			lpc_file_close(f);
			break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	char root[600], p[900];
	pthread_t th[5];
	struct lpc_ns_stats s;
	struct lpc_cache *c;
	struct stat st;
	const char *dir;
	double secs;
	int fd;

	tst_init(argc, argv, 120);
	secs = tst_stress_seconds(2);
	dir = tst_tmpdir();
	if (!dir)
		tst_skip("no temporary directory");
	ns_require(dir);
	snprintf(root, sizeof(root), "%s/tree", dir);
	REQUIRE(mkdir(root, 0755) == 0, "mkdir");
#define MK(x) (snprintf(p, sizeof(p), "%s/%s", root, x), p)
	REQUIRE(mkdir(MK("p"), 0700) == 0 && chown(p, 1001, 2001) == 0, "p");
	REQUIRE(mkdir(MK("q"), 0755) == 0 && chown(p, 1002, 2002) == 0, "q");
	REQUIRE(mkdir(MK("c"), 0700) == 0 && chown(p, 1001, 2001) == 0, "c");
	REQUIRE(mkdir(MK("u"), 0755) == 0, "u");
	for (int i = 0; i < 4; i++) {
		const char *f[] = { "p/f", "q/f", "c/f", "u/f" };

		fd = open(MK(f[i]), O_CREAT | O_WRONLY, 0644);
		REQUIRE(fd >= 0, "%s", f[i]);
		REQUIRE(fstat(fd, &st) == 0, "fstat");
		if (i == 0)
			pf = st.st_ino;
		if (i == 1)
			qf = st.st_ino;
		close(fd);
	}
	c = tst_cache_create(1 << 20, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	REQUIRE(lpc_ns_create(c, root, &ns) == 0, "lpc_ns_create");
	/* A short interval: ref-walks refill (and rebind) dentries while
	 * rcu-walks read them. */
	REQUIRE(lpc_ns_setopt(ns, LPC_NS_OPT_REVALIDATE_NS, 2000000) == 0, "setopt");
#if LPC_DEBUG
	/* The debug build widens the windows between the walk's steps. */
	REQUIRE(lpc_yield_arm("Q2,Q3,Q4,Q5,V2,V3", 0.05, tst_seed) == 0, "arm");
#endif
	for (long i = 0; i < 3; i++)
		REQUIRE(pthread_create(&th[i], NULL, walker, (void *)(i + 1)) == 0, "walker");
	REQUIRE(pthread_create(&th[3], NULL, renamer, NULL) == 0, "renamer");
	REQUIRE(pthread_create(&th[4], NULL, changer, NULL) == 0, "changer");
	tst_sleep_us((unsigned)(secs * 1e6));
	atomic_store(&stop, true);
	for (int i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	lpc_ns_stats(ns, &s);
	printf("%lu answers, %lu renames; walks %" PRIu64 ": rcu %" PRIu64 ", ref %" PRIu64
	       ", fallbacks miss %" PRIu64 " seq %" PRIu64 " reval %" PRIu64 "\n",
	       atomic_load(&nanswers), atomic_load(&nrenames), s.walks, s.walk_rcu, s.walk_ref,
	       s.fallback_miss, s.fallback_seq, s.fallback_reval);
	CHECK(atomic_load(&nanswers) > 100 && atomic_load(&nrenames) > 10, "the race ran");
	CHECK(s.walk_rcu > 0, "some walks completed in RCU mode");
	CHECK_EQ(lpc_ns_destroy(ns), 0, "destroy");
	tst_cache_destroy(c);
	return tst_finish();
}
