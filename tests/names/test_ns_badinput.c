/* SPDX-License-Identifier: MIT */
/*
 * test_ns_badinput.c - bad and extreme paths, answered as the kernel answers
 * them (the chrooted oracle of ns_test.h): the empty path, "//", a trailing
 * '/' on a file, ".." at the root, names of 255 and 256 bytes, paths of 4095
 * and 4096 bytes, NUL-free garbage, symlink loops, chains of 40 and 41
 * symlinks, dangling links; as root and as an ordinary credential; then
 * argument errors (-EINVAL).  Skips (77) unless root with ACLs.
 */
#include "ns_test.h"

#define NCASE 512

static struct ns_case cases[NCASE];
static int ncase;
static char big[8][64];

static void add(int op, int arg, const char *path, uid_t uid)
{
	for (int pass = 0; pass < 2 && ncase < NCASE; pass++) {
		struct ns_case *k = &cases[ncase++];

		k->op = op;
		k->arg = arg;
		size_t l = strnlen(path, sizeof(k->path) - 1);

		memcpy(k->path, path, l);
		k->path[l] = 0;
		k->cred.c.uid = pass ? 1001 : uid;
		k->cred.c.gid = pass ? 2001 : 0;
		k->cred.c.ngroups = 0;
		k->cred.c.groups = k->cred.groups;
	}
}

int main(int argc, char **argv)
{
	char root[600], p[900], name255[256], name256[257];
	struct lpc_cache *c;
	struct lpc_ns *ns;
	struct lpc_cred rc0 = { 0, 0, 0, NULL };
	struct stat st;
	const char *dir;
	uint64_t rs;
	int fd;

	tst_init(argc, argv, 120);
	rs = tst_seed;
	dir = tst_tmpdir();
	if (!dir)
		tst_skip("no temporary directory");
	ns_require(dir);
	snprintf(root, sizeof(root), "%s/tree", dir);
	REQUIRE(mkdir(root, 0755) == 0, "mkdir");
	memset(name255, 'n', 255);
	name255[255] = 0;
	memset(name256, 'n', 256);
	name256[256] = 0;
#define MK(fmt, ...) (snprintf(p, sizeof(p), "%s/" fmt, root, __VA_ARGS__), p)
	REQUIRE(mkdir(MK("%s", "d"), 0755) == 0, "mkdir d");
	fd = open(MK("%s", "f"), O_CREAT | O_WRONLY, 0644);
	REQUIRE(fd >= 0, "create f");
	close(fd);
	fd = open(MK("%s", name255), O_CREAT | O_WRONLY, 0644);
	REQUIRE(fd >= 0, "create a 255-byte name");
	close(fd);
	REQUIRE(symlink("loop2", MK("%s", "loop1")) == 0, "symlink");
	REQUIRE(symlink("loop1", MK("%s", "loop2")) == 0, "symlink");
	REQUIRE(symlink("nowhere", MK("%s", "dangling")) == 0, "symlink");
	REQUIRE(symlink("f/", MK("%s", "fslash")) == 0, "symlink");
	REQUIRE(symlink("/d/../f", MK("%s", "abs")) == 0, "symlink");
	/* l0 -> f, l1 -> l0, ..., l41 -> l40: l39 needs 40 links, l40 41. */
	REQUIRE(symlink("f", MK("%s", "l0")) == 0, "symlink");
	for (int i = 1; i <= 41; i++) {
		char t[16];

		snprintf(t, sizeof(t), "l%d", i - 1);
		REQUIRE(symlink(t, MK("l%d", i)) == 0, "symlink");
	}
	/* The link in a sticky world-writable directory owned by another. */
	REQUIRE(mkdir(MK("%s", "tmp"), 01777) == 0 && chown(p, 1002, 2002) == 0, "sticky dir");
	REQUIRE(symlink("../f", MK("%s", "tmp/lnk")) == 0 && lchown(p, 1003, 2003) == 0,
		"link in the sticky dir");

	const char *paths[] = { "", "/", "//", "///f", ".", "..", "../..", "/..", "../f", "f/",
				"f/.", "f/..", "f//", "d/", "d/.", "d/..", "d/../..", "d//..//f",
				"./d/./../f", "loop1", "loop1/x", "dangling", "dangling/",
				"fslash", "fslash/", "abs", "l38", "l39", "l40", "l41", "l39/",
				"tmp/lnk", "tmp/lnk/", "tmp/./lnk", "zz/..", name255, name256,
				"d/zz", "d/zz/" };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		add(NS_OP_STAT, 0, paths[i], 0);
		add(NS_OP_ACCESS, R_OK, paths[i], 0);
		add(NS_OP_OPEN, O_RDONLY, paths[i], 0);
		add(NS_OP_OPEN, O_RDONLY | O_NOFOLLOW, paths[i], 0);
	}
	/* NUL-free garbage: random bytes 1..255. */
	for (int i = 0; i < 8; i++) {
		size_t n = 1 + tst_rnd(&rs) % 40;

		for (size_t j = 0; j < n; j++)
			big[i][j] = (char)(1 + tst_rnd(&rs) % 255);
		big[i][n] = 0;
		add(NS_OP_STAT, 0, big[i], 0);
	}
	REQUIRE(ncase <= NCASE, "too many cases");
	REQUIRE(ns_oracle_run(root, cases, ncase) == 0, "oracle");

	c = tst_cache_create(1 << 20, 4096, LPC_IO_SYNC, LPC_LOOKUP_LOCKLESS);
	REQUIRE(lpc_ns_create(c, root, &ns) == 0, "lpc_ns_create");
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < ncase; i++) {
			struct ns_case *k = &cases[i];
			struct lpc_file *f;
			int r;

			if (k->op == NS_OP_STAT)
				r = lpc_ns_stat(ns, &k->cred.c, k->path, &st);
			else if (k->op == NS_OP_ACCESS)
				r = lpc_ns_access(ns, &k->cred.c, k->path, k->arg);
			else if ((r = lpc_ns_open(ns, &k->cred.c, k->path, k->arg, 0, &f)) == 0)
				lpc_file_close(f);
			CHECK_EQ(r, k->rc, "pass %d: op %d arg %#x path \"%.60s\" (%zu bytes) uid %u",
				 pass, k->op, k->arg, k->path, strlen(k->path), k->cred.c.uid);
		}
	}

	/* Paths of 4095 and 4096 bytes (longer than a case holds). */
	{
		char *lp = malloc(4097);

		REQUIRE(lp != NULL, "malloc");
		for (int i = 0; i < 4094; i += 2)
			memcpy(lp + i, "./", 2);
		lp[4094] = 'f';
		lp[4095] = 0; /* 4095 bytes: walks to f */
		CHECK_EQ(lpc_ns_stat(ns, &rc0, lp, &st), 0, "a path of 4095 bytes");
		CHECK_EQ(stat(MK("%s", "f"), &st) == 0 ? 0 : -1, 0, "stat f");
		memset(lp, '/', 4096);
		lp[4096] = 0; /* 4096 bytes: too long */
		CHECK_EQ(lpc_ns_stat(ns, &rc0, lp, &st), -ENAMETOOLONG, "a path of 4096 bytes");
		free(lp);
	}
	/* Argument errors. */
	CHECK_EQ(lpc_ns_stat(NULL, &rc0, "f", &st), -EINVAL, "NULL ns");
	CHECK_EQ(lpc_ns_stat(ns, NULL, "f", &st), -EINVAL, "NULL cred");
	CHECK_EQ(lpc_ns_stat(ns, &rc0, NULL, &st), -EINVAL, "NULL path");
	CHECK_EQ(lpc_ns_stat(ns, &rc0, "f", NULL), -EINVAL, "NULL stat");
	CHECK_EQ(lpc_ns_access(ns, &rc0, "f", 0100), -EINVAL, "bad access mode");
	CHECK_EQ(lpc_ns_open(ns, &rc0, "f", O_APPEND, 0, &(struct lpc_file *){ NULL }), -EINVAL,
		 "O_APPEND");
	CHECK_EQ(lpc_ns_setopt(ns, 99, 0), -EINVAL, "unknown option");
	CHECK_EQ(lpc_ns_setopt(ns, LPC_NS_OPT_MAX_DENTRIES, 1), -EINVAL, "bound below 16");
	CHECK_EQ(lpc_ns_create(c, MK("%s", "f"), &(struct lpc_ns *){ NULL }), -ENOTDIR,
		 "root not a directory");
	CHECK_EQ(lpc_ns_destroy(NULL), -EINVAL, "destroy NULL");
	CHECK_EQ(lpc_ns_destroy(ns), 0, "destroy");
	tst_cache_destroy(c);
	return tst_finish();
}
