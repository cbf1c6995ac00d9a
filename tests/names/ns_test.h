/* SPDX-License-Identifier: MIT */
/*
 * ns_test.h - helpers of the name-cache tests (header only, one translation
 * unit per program): random trees with modes, owners, POSIX ACLs and
 * symlinks; random credentials; the kernel oracle, a thread that chroots
 * (after unshare(CLONE_FS), so only it) into the tree and switches its
 * fsuid, fsgid and groups with the raw per-thread system calls before each
 * faccessat(AT_EACCESS) / fstatat / openat.
 */
#ifndef LPC_TESTS_NAMES_NS_TEST_H
#define LPC_TESTS_NAMES_NS_TEST_H

#include <pthread.h>
#include <sched.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include "../common/lpc_test.h"

static const uid_t ns_uids[] = { 0, 1001, 1002, 1003 };
static const gid_t ns_gids[] = { 0, 2001, 2002, 2003 };
#define NS_NIDS 4

struct ns_tcred {
	struct lpc_cred c;
	gid_t groups[3];
};

static inline void ns_rand_cred(uint64_t *rs, struct ns_tcred *t)
{
	t->c.uid = tst_rnd(rs) % 4 == 0 ? 0 : ns_uids[1 + tst_rnd(rs) % 3];
	t->c.gid = ns_gids[tst_rnd(rs) % NS_NIDS];
	t->c.ngroups = (unsigned)(tst_rnd(rs) % 3);
	for (unsigned i = 0; i < t->c.ngroups; i++)
		t->groups[i] = ns_gids[tst_rnd(rs) % NS_NIDS];
	t->c.groups = t->groups;
}

/* A raw system.posix_acl_access value from entries (sorted by the caller). */
static inline int ns_set_acl_raw(const char *path, const struct lpc_acl_entry *e, unsigned n)
{
	unsigned char buf[4 + 8 * 16];
	uint32_t v = 2;

	memcpy(buf, &v, 4);
	for (unsigned i = 0; i < n; i++) {
		uint32_t id = e[i].tag == LPC_ACL_USER || e[i].tag == LPC_ACL_GROUP ? e[i].id
										    : (uint32_t)-1;

		memcpy(buf + 4 + 8 * i, &e[i].tag, 2);
		memcpy(buf + 6 + 8 * i, &e[i].perm, 2);
		memcpy(buf + 8 + 8 * i, &id, 4);
	}
	return setxattr(path, "system.posix_acl_access", buf, 4 + 8 * n, 0) ? -errno : 0;
}

/* A random valid ACL with named users and groups and a mask. */
static inline unsigned ns_rand_acl(uint64_t *rs, struct lpc_acl_entry *e)
{
	unsigned n = 0;

	e[n++] = (struct lpc_acl_entry){ LPC_ACL_USER_OBJ, (uint16_t)(tst_rnd(rs) % 8), 0 };
	for (unsigned i = 1; i < NS_NIDS; i++)
		if (tst_rnd(rs) % 3 == 0)
			e[n++] = (struct lpc_acl_entry){ LPC_ACL_USER, (uint16_t)(tst_rnd(rs) % 8),
							 ns_uids[i] };
	e[n++] = (struct lpc_acl_entry){ LPC_ACL_GROUP_OBJ, (uint16_t)(tst_rnd(rs) % 8), 0 };
	for (unsigned i = 0; i < NS_NIDS; i++)
		if (tst_rnd(rs) % 3 == 0)
			e[n++] = (struct lpc_acl_entry){ LPC_ACL_GROUP, (uint16_t)(tst_rnd(rs) % 8),
							 ns_gids[i] };
	e[n++] = (struct lpc_acl_entry){ LPC_ACL_MASK, (uint16_t)(tst_rnd(rs) % 8), 0 };
	e[n++] = (struct lpc_acl_entry){ LPC_ACL_OTHER, (uint16_t)(tst_rnd(rs) % 8), 0 };
	return n;
}

/* Skips (77) unless root on a file system with ACLs. */
static inline void ns_require(const char *dir)
{
	char p[600];
	struct lpc_acl_entry e[4] = { { LPC_ACL_USER_OBJ, 7, 0 }, { LPC_ACL_USER, 5, 1001 },
				      { LPC_ACL_GROUP_OBJ, 5, 0 }, { LPC_ACL_MASK, 5, 0 } };
	struct lpc_acl_entry e2[5];
	int fd, rc;

	if (geteuid() != 0)
		tst_skip("not root: the oracle switches fsuid/fsgid/groups and chroots");
	snprintf(p, sizeof(p), "%s/.acltest", dir);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		tst_skip("cannot create a file in the test directory");
	close(fd);
	memcpy(e2, e, sizeof(e));
	e2[4] = (struct lpc_acl_entry){ LPC_ACL_OTHER, 4, 0 };
	rc = ns_set_acl_raw(p, e2, 5);
	unlink(p);
	if (rc == -EOPNOTSUPP)
		tst_skip("the test directory's file system has no POSIX ACLs (mount -o acl)");
	if (rc)
		tst_skip("cannot set an ACL in the test directory");
}

/* ---- random trees ---- */

#define NS_MAXNODES 128

struct ns_node {
	char path[256]; /* relative to the root, "" for the root */
	char name[16];
	int parent;
	int type;       /* 'd', 'f', 'l' */
};

struct ns_tree {
	char root[512];
	int n;
	struct ns_node node[NS_MAXNODES];
};

static const char *const ns_names[] = { "a", "b", "c", "d", "e", "f" };

static inline void ns_tree_abs(const struct ns_tree *t, const char *rel, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", t->root, rel);
}

/* A symlink target: relative paths of names, "." and "..", sometimes
 * absolute (the root of the namespace), sometimes itself (a loop). */
static inline void ns_rand_target(uint64_t *rs, const struct ns_tree *t, int self, char *out,
				  size_t len)
{
	unsigned k = (unsigned)(tst_rnd(rs) % 4) + 1;
	size_t o = 0;

	out[0] = 0;
	if (tst_rnd(rs) % 16 == 0) {
		snprintf(out, len, "%s", t->node[self].name); /* itself: ELOOP */
		return;
	}
	if (tst_rnd(rs) % 5 == 0)
		o += (size_t)snprintf(out + o, len - o, "/");
	for (unsigned i = 0; i < k && o < len - 8; i++) {
		unsigned r = (unsigned)(tst_rnd(rs) % 10);
		const char *c = r < 7 ? ns_names[tst_rnd(rs) % 6] : r < 9 ? ".." : ".";

		o += (size_t)snprintf(out + o, len - o, "%s%s", i ? "/" : "", c);
	}
	if (tst_rnd(rs) % 6 == 0 && o < len - 2)
		snprintf(out + o, len - o, "/");
}

static inline mode_t ns_rand_mode(uint64_t *rs, int type)
{
	mode_t m = (mode_t)(tst_rnd(rs) % 01000);

	if (type == 'd' && tst_rnd(rs) % 3)
		m |= 0111; /* more searchable dirs */
	if (type == 'f' && tst_rnd(rs) % 2)
		m |= 0644;
	if (type == 'd' && tst_rnd(rs) % 8 == 0)
		m |= S_ISVTX | 0002;
	return m;
}

/* Builds a random tree of about n nodes under dir/tree.  Return: 0 or -errno. */
static inline int ns_tree_build(uint64_t *rs, const char *dir, int n, struct ns_tree *t)
{
	char abs[800];

	memset(t, 0, sizeof(*t));
	snprintf(t->root, sizeof(t->root), "%s/tree", dir);
	if (mkdir(t->root, 0755))
		return -errno;
	t->n = 1;
	t->node[0].type = 'd';
	t->node[0].parent = -1;
	/*
	 * Each node goes under a directory that still has a free name (of
	 * the six), and the last free name left anywhere makes a directory,
	 * so the tree always reaches n nodes: picking any node as the parent
	 * and giving up after a number of tries once left a seed with 7 nodes
	 * (the root's six names taken by files and links), too few for the
	 * checks that use the tree (103921443608945).
	 */
	unsigned char used[NS_MAXNODES] = { 0 }; /* names taken, a bit each */

	for (int tries = 0; t->n < n && t->n < NS_MAXNODES && tries < 10 * n; tries++) {
		int dirs[NS_MAXNODES], ndirs = 0, nfree = 0, p, k;
		struct ns_node *nd = &t->node[t->n];
		unsigned r = (unsigned)(tst_rnd(rs) % 10);
		int rc;

		for (int i = 0; i < t->n; i++)
			if (t->node[i].type == 'd' && used[i] != 0x3f &&
			    strlen(t->node[i].path) <= 200) {
				dirs[ndirs++] = i;
				nfree += 6 - __builtin_popcount(used[i]);
			}
		if (!ndirs)
			break;
		p = dirs[tst_rnd(rs) % (uint64_t)ndirs];
		do
			k = (int)(tst_rnd(rs) % 6);
		while (used[p] & (1u << k));
		used[p] |= (unsigned char)(1u << k);
		snprintf(nd->name, sizeof(nd->name), "%s", ns_names[k]);
		{
			char pp[256], nm[16];

			memcpy(pp, t->node[p].path, sizeof(pp));
			memcpy(nm, nd->name, sizeof(nm));
			size_t l = strnlen(pp, 210);

			memcpy(nd->path, pp, l);
			if (l)
				nd->path[l++] = '/';
			memcpy(nd->path + l, nm, strnlen(nm, 15) + 1);
		}
		if (nfree == 1)
			r = 0; /* the last free name: a directory, with six more */
		ns_tree_abs(t, nd->path, abs, sizeof(abs));
		nd->parent = p;
		nd->type = r < 5 ? 'd' : r < 8 ? 'f' : 'l';
		if (nd->type == 'd') {
			rc = mkdir(abs, 0700);
		} else if (nd->type == 'f') {
			int fd = open(abs, O_CREAT | O_EXCL | O_WRONLY, 0600);

			rc = fd < 0 ? -1 : 0;
			if (fd >= 0) {
				if (write(fd, "hello", 5) != 5)
					rc = -1;
				close(fd);
			}
		} else {
			char target[200];

			ns_rand_target(rs, t, t->n, target, sizeof(target));
			rc = symlink(target, abs);
		}
		if (rc)
			continue; /* not made (its name stays taken) */
		t->n++;
	}
	/* Owners, modes and ACLs, deepest first does not matter as root. */
	for (int i = 0; i < t->n; i++) {
		struct ns_node *nd = &t->node[i];
		uid_t u = ns_uids[tst_rnd(rs) % NS_NIDS];
		gid_t g = ns_gids[tst_rnd(rs) % NS_NIDS];

		ns_tree_abs(t, nd->path, abs, sizeof(abs));
		if (lchown(abs, u, g))
			return -errno;
		if (nd->type == 'l')
			continue;
		if (i == 0) {
			if (chmod(abs, 0755 | (mode_t)(tst_rnd(rs) % 2 ? 0 : S_ISVTX)))
				return -errno;
		} else if (chmod(abs, ns_rand_mode(rs, nd->type))) {
			return -errno;
		}
		if (tst_rnd(rs) % 3 == 0) {
			struct lpc_acl_entry e[16];
			unsigned k = ns_rand_acl(rs, e);
			int rc = ns_set_acl_raw(abs, e, k);

			if (rc)
				return rc;
		}
	}
	return 0;
}

/* A random path: a walk down the tree with detours (".", "..", missing
 * names, doubled and trailing slashes, a leading slash). */
static inline void ns_rand_path(uint64_t *rs, const struct ns_tree *t, char *out, size_t len)
{
	int cur = 0;
	size_t o = 0;
	unsigned k = (unsigned)(tst_rnd(rs) % 6) + 1;

	out[0] = 0;
	if (tst_rnd(rs) % 8 == 0)
		o += (size_t)snprintf(out, len, "/");
	for (unsigned i = 0; i < k && o < len - 40; i++) {
		unsigned r = (unsigned)(tst_rnd(rs) % 20);
		const char *c;
		int next = -1;

		if (r < 14) {
			/* A child of cur, if it has any. */
			int kids[NS_MAXNODES], nk = 0;

			for (int j = 1; j < t->n; j++)
				if (t->node[j].parent == cur)
					kids[nk++] = j;
			if (nk) {
				next = kids[tst_rnd(rs) % (uint64_t)nk];
				c = t->node[next].name;
			} else {
				c = ns_names[tst_rnd(rs) % 6];
			}
		} else if (r < 16) {
			c = "..";
			next = cur ? t->node[cur].parent : 0;
		} else if (r < 17) {
			c = ".";
			next = cur;
		} else if (r < 18) {
			c = "zz";
		} else {
			c = ns_names[tst_rnd(rs) % 6];
		}
		o += (size_t)snprintf(out + o, len - o, "%s%s%s", i ? "/" : "",
				      tst_rnd(rs) % 16 == 0 ? "/" : "", c);
		if (next >= 0 && t->node[next].type == 'd')
			cur = next;
		else if (next >= 0 && tst_rnd(rs) % 4)
			break; /* mostly end at a file or a symlink */
	}
	if (tst_rnd(rs) % 8 == 0 && o < len - 2)
		snprintf(out + o, len - o, "/");
}

/* ---- the kernel oracle ---- */

enum { NS_OP_ACCESS, NS_OP_STAT, NS_OP_OPEN, NS_NOPS };

struct ns_case {
	int op;
	int arg; /* access mode or open flags */
	char path[300];
	struct ns_tcred cred;
	/* The kernel's answer. */
	int rc;
	struct stat st;
};

/* Switches this thread to cred (raw per-thread calls). */
static inline int ns_cred_switch(const struct lpc_cred *c)
{
	if (syscall(SYS_setgroups, (size_t)c->ngroups, c->groups))
		return -errno;
	syscall(SYS_setfsgid, c->gid);
	syscall(SYS_setfsuid, c->uid);
	return 0;
}

static inline void ns_cred_root(void)
{
	syscall(SYS_setfsuid, 0);
	syscall(SYS_setfsgid, 0);
	syscall(SYS_setgroups, 0, NULL);
}

/* One case as the kernel answers it; the thread is chrooted. */
static inline void ns_kernel_case(struct ns_case *k)
{
	int fd;

	if (ns_cred_switch(&k->cred.c)) {
		k->rc = -9999;
		return;
	}
	switch (k->op) {
	case NS_OP_ACCESS:
		k->rc = faccessat(AT_FDCWD, k->path, k->arg, AT_EACCESS) ? -errno : 0;
		break;
	case NS_OP_STAT:
		k->rc = fstatat(AT_FDCWD, k->path, &k->st, 0) ? -errno : 0;
		break;
	case NS_OP_OPEN:
		fd = openat(AT_FDCWD, k->path, k->arg | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0) {
			k->rc = -errno;
			break;
		}
		k->rc = fstat(fd, &k->st) ? -errno : 0;
		close(fd);
		/* lpc hands out regular files only. */
		if (!k->rc && S_ISDIR(k->st.st_mode))
			k->rc = -EISDIR;
		else if (!k->rc && !S_ISREG(k->st.st_mode))
			k->rc = -EINVAL;
		break;
	}
	ns_cred_root();
}

struct ns_oracle_job {
	const char *root;
	struct ns_case *cases;
	int n;
	int err;
};

static void *ns_oracle_thread(void *arg)
{
	struct ns_oracle_job *j = arg;

	if (unshare(CLONE_FS) || chroot(j->root) || chdir("/")) {
		j->err = -errno;
		return NULL;
	}
	for (int i = 0; i < j->n; i++)
		ns_kernel_case(&j->cases[i]);
	return NULL;
}

/* Fills every case's kernel answer.  Return: 0, or -errno if the thread
 * could not chroot. */
static inline int ns_oracle_run(const char *root, struct ns_case *cases, int n)
{
	struct ns_oracle_job j = { root, cases, n, 0 };
	pthread_t th;

	if (pthread_create(&th, NULL, ns_oracle_thread, &j))
		return -EAGAIN;
	pthread_join(th, NULL);
	return j.err;
}

#endif /* LPC_TESTS_NAMES_NS_TEST_H */
