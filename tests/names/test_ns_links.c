/* SPDX-License-Identifier: MIT */
/*
 * test_ns_links.c - what the name cache knows after its own changes (N.1:
 * "changes made through lpc_ns_* are known when their call returns"), and
 * lpc_ns_open against the cache's files, answered as the kernel answers
 * (the chrooted oracle of ns_test.h) under another user's credential.
 *
 *  1. Hard links (src/names/dcache.c ns_stale_links_locked).  Files a and b
 *     are one inode, both names cached.  Through a: lpc_ns_chmod (0600),
 *     then lpc_ns_setacl (user 1001 may read), lpc_ns_unlink of a; a rename
 *     over a third link.  After each, lpc_ns_access(b, R_OK) and
 *     lpc_ns_stat(b) for uid 1001 equal the kernel's (mode, link count).
 *     The revalidation interval is the largest the option takes (UINT64_MAX
 *     ns: a snapshot is never old by age), so only lpc's own knowledge
 *     counts, whatever the machine's uptime (walk.c fresh(): a stale
 *     snapshot's stamp 0 must not pass for fresh while the clock since boot
 *     is below the interval, which a shorter interval tests only on a
 *     machine up for less than it).  The old cache changed only a's snapshot: access(b) said 0
 *     where the kernel said -EACCES, stat(b) showed 0644 and two links.
 *  2. O_CREAT|O_TRUNC of a file the cache holds (ns.c lpc_ns_open): -EBUSY,
 *     as O_TRUNC alone, the kernel's file and the cached copy untouched.
 *     The old open truncated the kernel's file behind the copy, which read
 *     its 8192 old bytes.  Once closed, the truncating open truncates, and
 *     lpc_ns_stat, through either link, shows size 0.  O_RDONLY|O_TRUNC
 *     (with and without O_CREAT) needs write permission, as the kernel's.
 *  3. A truncating open (O_TRUNC, O_CREAT|O_TRUNC) of a file with one link
 *     (ns.c truncated_known): its cached name shows size 0 after, and no
 *     pass over every dentry was made (ns->link_scans): the old open made
 *     one per truncating open, 9 ms with 60,000 names cached.  Through a
 *     symlink (the name opened is not the file's): one pass, and both
 *     names agree with the kernel.
 *  4. O_CREAT of an existing FIFO, O_RDONLY and O_WRONLY: -EINVAL at once
 *     (lpc hands out regular files), and a mutation on another thread
 *     (lpc_ns_chmod) is not held up.  The old open blocked in openat until
 *     the FIFO's other end opened, holding ns->lock (and its read section):
 *     the chmod waited with it.  The test opens the other end itself after
 *     2 s so that the old code ends too.
 *  4. POSIX locks: a read lock taken through a plain descriptor stays held
 *     across lpc_ns_open with O_CREAT of the file, not cached and then
 *     cached, and a plain lpc_ns_open of it (another process checks with
 *     F_GETLK).  The old O_CREAT open closed its own descriptor of the file
 *     after handing it to the cache, which dropped the lock.
 *
 * Skips (77) unless root with ACLs.
 * Usage: test_ns_links [--seed N]     Exit: 0 pass, 1 fail, 77 skip.
 */
#include <sys/wait.h>

#include "ns_test.h"
#include "names/names.h"

static char root[600];
static struct lpc_ns *ns;
static const struct lpc_cred root_cred = { 0, 0, 0, NULL };

static void other(struct ns_tcred *t)
{
	memset(t, 0, sizeof(*t));
	t->c.uid = 1001;
	t->c.gid = 2001;
	t->c.groups = t->groups;
}

/* lpc's answers for path under uid 1001 against the kernel's. */
static void agree(const char *path, const char *what)
{
	struct ns_case k[2];
	struct ns_tcred o;
	struct stat st;
	int rc;

	other(&o);
	memset(k, 0, sizeof(k));
	k[0].op = NS_OP_ACCESS;
	k[0].arg = R_OK;
	k[1].op = NS_OP_STAT;
	for (int i = 0; i < 2; i++) {
		snprintf(k[i].path, sizeof(k[i].path), "%s", path);
		other(&k[i].cred);
	}
	REQUIRE(ns_oracle_run(root, k, 2) == 0, "oracle");
	CHECK_EQ(lpc_ns_access(ns, &o.c, path, R_OK), k[0].rc, "%s: access(%s, R_OK) as 1001",
		 what, path);
	memset(&st, 0, sizeof(st));
	rc = lpc_ns_stat(ns, &o.c, path, &st);
	CHECK_EQ(rc, k[1].rc, "%s: stat(%s) as 1001", what, path);
	if (rc == 0 && k[1].rc == 0) {
		CHECK_EQ(st.st_mode, k[1].st.st_mode, "%s: stat(%s).st_mode", what, path);
		CHECK_EQ(st.st_nlink, k[1].st.st_nlink, "%s: stat(%s).st_nlink", what, path);
		CHECK_EQ(st.st_size, k[1].st.st_size, "%s: stat(%s).st_size", what, path);
	}
}

static void mkfile(const char *name, size_t size, mode_t mode)
{
	char p[900];

	REQUIRE(tst_make_file_in(root, name, size, 9, p, sizeof(p)) == 0, "make %s", name);
	REQUIRE(chmod(p, mode) == 0);
}

static void t_links(void)
{
	char pa[900], pb[900], pc[900];
	struct lpc_acl_entry acl[5] = {
		{ LPC_ACL_USER_OBJ, 6, 0 }, { LPC_ACL_USER, 4, 1001 }, { LPC_ACL_GROUP_OBJ, 0, 0 },
		{ LPC_ACL_MASK, 4, 0 },	    { LPC_ACL_OTHER, 0, 0 },
	};

	mkfile("a", 100, 0644);
	snprintf(pa, sizeof(pa), "%s/a", root);
	snprintf(pb, sizeof(pb), "%s/b", root);
	snprintf(pc, sizeof(pc), "%s/c", root);
	REQUIRE(link(pa, pb) == 0 && link(pa, pc) == 0, "links");
	agree("a", "warm");
	agree("b", "warm");
	agree("c", "warm");

	CHECK_EQ(lpc_ns_chmod(ns, &root_cred, "a", 0600), 0, "chmod a");
	agree("b", "chmod a 0600");
	agree("a", "chmod a 0600");

	CHECK_EQ(lpc_ns_setacl(ns, &root_cred, "a", acl, 5), 0, "setacl a");
	agree("b", "setacl a");
	agree("c", "setacl a");

	CHECK_EQ(lpc_ns_unlink(ns, &root_cred, "a", 0), 0, "unlink a");
	agree("b", "unlink a");
	agree("a", "unlink a");

	mkfile("x", 10, 0644);
	agree("x", "warm");
	CHECK_EQ(lpc_ns_rename(ns, &root_cred, "x", "c", 0), 0, "rename x over c");
	agree("b", "rename over c");
	agree("c", "rename over c");
}

static void t_trunc(void)
{
	struct lpc_file *f = NULL, *g = NULL;
	struct ns_tcred o;
	unsigned char buf[8192];
	char p[900], q[900];

	other(&o);
	mkfile("t", sizeof(buf), 0644);
	snprintf(p, sizeof(p), "%s/t", root);
	snprintf(q, sizeof(q), "%s/t2", root);
	REQUIRE(link(p, q) == 0, "link");
	agree("t2", "warm");
	REQUIRE(lpc_ns_open(ns, &root_cred, "t", O_RDWR, 0, &f) == 0, "open t");
	CHECK_EQ(lpc_pread(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf), "read t");

	CHECK_EQ(lpc_ns_open(ns, &root_cred, "t", O_RDWR | O_CREAT | O_TRUNC, 0644, &g), -EBUSY,
		 "O_CREAT|O_TRUNC of a cached file");
	CHECK_EQ(lpc_ns_open(ns, &root_cred, "t", O_RDWR | O_TRUNC, 0, &g), -EBUSY,
		 "O_TRUNC of a cached file");
	CHECK_EQ(tst_file_size(p), (int64_t)sizeof(buf), "the kernel's file after the refusals");
	CHECK_EQ(lpc_pread(f, buf, sizeof(buf), 0), (ssize_t)sizeof(buf), "the copy after them");
	CHECK_EQ(lpc_file_close(f), 0);

	/* Write permission, as the kernel's: 0644 root's, uid 1001. */
	CHECK_EQ(lpc_ns_open(ns, &o.c, "t", O_RDONLY | O_CREAT | O_TRUNC, 0644, &g), -EACCES,
		 "O_RDONLY|O_CREAT|O_TRUNC without write permission");
	CHECK_EQ(lpc_ns_open(ns, &o.c, "t", O_RDONLY | O_TRUNC, 0, &g), -EACCES,
		 "O_RDONLY|O_TRUNC without write permission");
	CHECK_EQ(tst_file_size(p), (int64_t)sizeof(buf), "the kernel's file after EACCES");

	g = NULL;
	CHECK_EQ(lpc_ns_open(ns, &root_cred, "t", O_RDONLY | O_CREAT | O_TRUNC, 0644, &g), 0,
		 "O_CREAT|O_TRUNC, not cached");
	CHECK_EQ(tst_file_size(p), 0, "truncated");
	if (g) {
		CHECK_EQ(lpc_pread(g, buf, sizeof(buf), 0), 0, "the new copy reads empty");
		CHECK_EQ(lpc_file_close(g), 0);
	}
	agree("t", "after the truncating open");
	agree("t2", "after the truncating open");
}

static uint64_t link_scans(void)
{
	uint64_t n;

	pthread_mutex_lock(&ns->lock);
	n = ns->link_scans;
	pthread_mutex_unlock(&ns->lock);
	return n;
}

/* A truncating open of one file, with oflags, through name; then name's and
 * target's answers against the kernel's, and the passes over every dentry
 * it made (want_scans). */
static void trunc_one(const char *name, const char *target, int oflags, uint64_t want_scans,
		      const char *what)
{
	struct lpc_file *g = NULL;
	uint64_t s0;

	mkfile(target, 8192, 0644);
	agree(name, what);  /* both names cached, with size 8192 */
	agree(target, what);
	s0 = link_scans();
	CHECK_EQ(lpc_ns_open(ns, &root_cred, name, oflags, 0644, &g), 0, "%s: the open", what);
	CHECK_EQ(link_scans() - s0, want_scans, "%s: passes over every dentry", what);
	if (g)
		CHECK_EQ(lpc_file_close(g), 0, "%s: close", what);
	agree(target, what); /* first: a walk of name may refresh target's */
	agree(name, what);
}

static void t_trunc_one_link(void)
{
	char p[900];

	/* One link: the open's own name is marked, no pass over the cache. */
	trunc_one("s1", "s1", O_RDWR | O_TRUNC, 0, "O_TRUNC, one link");
	trunc_one("s2", "s2", O_RDWR | O_CREAT | O_TRUNC, 0, "O_CREAT|O_TRUNC, one link");
	/* Through a symlink: the name opened is not the file's. */
	snprintf(p, sizeof(p), "%s/l3", root);
	REQUIRE(symlink("s3", p) == 0, "symlink");
	trunc_one("l3", "s3", O_RDWR | O_TRUNC, 1, "O_TRUNC through a symlink");
	snprintf(p, sizeof(p), "%s/l4", root);
	REQUIRE(symlink("s4", p) == 0, "symlink");
	trunc_one("l4", "s4", O_RDWR | O_CREAT | O_TRUNC, 1, "O_CREAT|O_TRUNC through a symlink");
}

#define lock_held(path) tst_read_lock_held(path, 100, 10)

static void t_locks(void)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 100, .l_len = 10 };
	struct lpc_file *f = NULL, *g = NULL, *h = NULL;
	char p[900];
	int fd;

	mkfile("l", 8192, 0644);
	snprintf(p, sizeof(p), "%s/l", root);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	REQUIRE(fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0, "F_SETLK");
	REQUIRE(lock_held(p) == 1, "the probe does not see the lock");
	CHECK_EQ(lpc_ns_open(ns, &root_cred, "l", O_RDWR | O_CREAT, 0644, &f), 0,
		 "O_CREAT, not cached");
	CHECK_EQ(lock_held(p), 1, "lock dropped by lpc_ns_open(O_CREAT) of a file not cached");
	REQUIRE(fcntl(fd, F_SETLK, &fl) == 0, "F_SETLK");
	CHECK_EQ(lpc_ns_open(ns, &root_cred, "l", O_RDWR | O_CREAT, 0644, &g), 0,
		 "O_CREAT, cached");
	CHECK(g == f, "O_CREAT of a cached file: %p != %p", (void *)g, (void *)f);
	CHECK_EQ(lock_held(p), 1, "lock dropped by lpc_ns_open(O_CREAT) of a cached file");
	REQUIRE(fcntl(fd, F_SETLK, &fl) == 0, "F_SETLK");
	CHECK_EQ(lpc_ns_open(ns, &root_cred, "l", O_RDONLY, 0, &h), 0, "open, cached");
	CHECK_EQ(lock_held(p), 1, "lock dropped by lpc_ns_open of a cached file");
	REQUIRE(fcntl(fd, F_SETLK, &fl) == 0, "F_SETLK");
	if (h)
		CHECK_EQ(lpc_file_close(h), 0);
	if (g)
		CHECK_EQ(lpc_file_close(g), 0);
	CHECK_EQ(lock_held(p), 1, "lock dropped by a close not the last");
	if (f)
		CHECK_EQ(lpc_file_close(f), 0);
	CHECK_EQ(lock_held(p), 0, "the last close closes lpc's descriptors (lpc.h)");
	close(fd);
}

struct fifo_job {
	const char *path;
	int oflags;
	int rc;
	_Atomic bool done;
};

static void *fifo_open(void *arg)
{
	struct fifo_job *j = arg;
	struct lpc_file *f = NULL;

	j->rc = lpc_ns_open(ns, &root_cred, j->path, j->oflags, 0644, &f);
	if (j->rc == 0)
		lpc_file_close(f);
	atomic_store(&j->done, true);
	return NULL;
}

static void *chmod_other(void *arg)
{
	struct fifo_job *j = arg;

	j->rc = lpc_ns_chmod(ns, &root_cred, j->path, 0640);
	atomic_store(&j->done, true);
	return NULL;
}

static bool wait_done(_Atomic bool *done, uint64_t ns_max)
{
	uint64_t t0 = tst_now_ns();

	while (!atomic_load(done) && tst_now_ns() - t0 < ns_max)
		tst_sleep_us(1000);
	return atomic_load(done);
}

static void t_fifo(int oflags, const char *what)
{
	char p[900];
	struct fifo_job o = { "p", oflags | O_CREAT, 1, false }, m = { "m", 0, 1, false };
	pthread_t ot, mt;

	snprintf(p, sizeof(p), "%s/p", root);
	unlink(p);
	REQUIRE(mkfifo(p, 0666) == 0, "mkfifo");
	mkfile("m", 10, 0644);
	REQUIRE(pthread_create(&ot, NULL, fifo_open, &o) == 0);
	tst_sleep_us(100000);
	REQUIRE(pthread_create(&mt, NULL, chmod_other, &m) == 0);
	CHECK(wait_done(&m.done, 2000000000ull),
	      "%s: lpc_ns_chmod of another file held up by lpc_ns_open of a FIFO", what);
	CHECK(atomic_load(&o.done), "%s: lpc_ns_open(O_CREAT) of a FIFO blocked", what);
	if (!atomic_load(&o.done)) {
		/* The old code: the FIFO's other end lets it go. */
		int fd = open(p, ((oflags & O_ACCMODE) == O_RDONLY ? O_WRONLY : O_RDONLY) |
					 O_NONBLOCK | O_CLOEXEC);

		wait_done(&o.done, 5000000000ull);
		if (fd >= 0)
			close(fd);
	}
	pthread_join(ot, NULL);
	pthread_join(mt, NULL);
	CHECK_EQ(o.rc, -EINVAL, "%s: lpc_ns_open(O_CREAT) of a FIFO", what);
	CHECK_EQ(m.rc, 0, "%s: the chmod", what);
	unlink(p);
}

int main(int argc, char **argv)
{
	struct lpc_cache *c;
	const char *dir;

	tst_init(argc, argv, 120);
	dir = tst_tmpdir();
	if (!dir)
		tst_skip("no temporary directory");
	ns_require(dir);
	snprintf(root, sizeof(root), "%s/tree", dir);
	REQUIRE(mkdir(root, 0755) == 0, "mkdir");
	c = tst_cache_create(64 * 4096, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	REQUIRE(lpc_ns_create(c, root, &ns) == 0, "ns");
	REQUIRE(lpc_ns_setopt(ns, LPC_NS_OPT_REVALIDATE_NS, UINT64_MAX) == 0);

	TST_RUN(t_links());
	TST_RUN(t_trunc());
	TST_RUN(t_trunc_one_link());

	TST_RUN(t_locks());
	TST_RUN(t_fifo(O_RDONLY, "O_RDONLY"));
	TST_RUN(t_fifo(O_WRONLY, "O_WRONLY"));

	CHECK_EQ(lpc_ns_destroy(ns), 0);
	tst_cache_destroy(c);
	return tst_finish();
}
