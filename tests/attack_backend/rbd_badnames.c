/* SPDX-License-Identifier: MIT */
/*
 * rbd_badnames - lpc_rbd_open with bad names and conf strings: each must
 * fail with lpc_rbd.h's errno (-EINVAL for a name that is not
 * "rbd:POOL/IMAGE" or is 4096 bytes or more, or an option without '=';
 * -ENOENT for a missing pool or image), and a failed open must leave no
 * rados handle behind (its threads, its sockets): the process's threads
 * and descriptors after 10 rounds of every failure are what they were
 * after the first round.
 *   scripts/ceph-cluster.sh up /tmp/c; cd tests/attack_backend &&
 *   make out-release/rbd_badnames && LPC_CEPH_CONF=/tmp/c/ceph.conf out-release/rbd_badnames
 */
#include <dirent.h>
#include "rbd.h"

static int count(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

struct tc { const char *name, *conf; int want; const char *why; };

int main(void)
{
	static char longname[5000], name4095[4096], confopt[8192];
	struct lpc_cache *c;
	struct lpc_file *f;
	int bad = 0, th0 = 0, fd0 = 0;

	att_rbd_init();
	c = att_cache();
	memset(longname, 'a', sizeof(longname) - 1);
	memcpy(longname, "rbd:lpc/", 8);
	memset(name4095, 'b', sizeof(name4095) - 1);
	memcpy(name4095, "rbd:lpc/", 8);
	snprintf(confopt, sizeof(confopt), "conf=%s;no_such_option_xyz=1", att_conf);
	char confbare[8192];
	snprintf(confbare, sizeof(confbare), "conf=%s;rbd_cache", att_conf);
	struct tc cases[] = {
		{ "rbd:", att_conf, -EINVAL, "no pool" },
		{ "rbd:lpc", att_conf, -EINVAL, "no image" },
		{ "rbd:lpc/", att_conf, -EINVAL, "empty image" },
		{ "rbd:/img", att_conf, -EINVAL, "empty pool" },
		{ "lpc/img", att_conf, -EINVAL, "no prefix" },
		{ "rbd:lpc/a/b", att_conf, -EINVAL, "a slash too many" },
		{ longname, att_conf, -EINVAL, "5000 bytes" },
		{ "rbd:lpc/no-such-image-att", att_conf, -ENOENT, "missing image" },
		{ "rbd:no-such-pool-att/img", att_conf, -ENOENT, "missing pool" },
		{ "rbd:lpc/x", confbare, -EINVAL, "an option without '='" },
		{ "rbd:lpc/x", confopt, 0, "unknown option (any error)" },
		{ "rbd:lpc/x", "/no/such/ceph.conf", 0, "missing conf file (any error)" },
		{ name4095, att_conf, 0, "4095 bytes (any error)" },
	};
	int n = (int)(sizeof(cases) / sizeof(cases[0]));

	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < n; i++) {
			for (int m = 0; m < 2; m++) {
				int rc = lpc_rbd_open(c, cases[i].name, cases[i].conf,
						      m ? O_RDWR : O_RDONLY, &f);
				int ok = cases[i].want ? rc == cases[i].want : rc < 0;

				if (rc == 0)
					lpc_file_close(f);
				if (round == 0)
					printf("%-32s %s: %d%s\n", cases[i].why, m ? "rw" : "ro", rc,
					       ok ? "" : "  <- WRONG");
				if (!ok && round == 0)
					bad = 1;
			}
		}
		if (round == 0) {
			th0 = count("/proc/self/task");
			fd0 = count("/proc/self/fd");
		}
	}
	int th1 = count("/proc/self/task"), fd1 = count("/proc/self/fd");
	printf("threads after round 1: %d, after 10: %d; descriptors %d, %d\n", th0, th1, fd0, fd1);
	if (th1 > th0 || fd1 > fd0) {
		printf("DEFECT: failed opens leak threads or descriptors\n");
		bad = 1;
	}
	lpc_cache_destroy(c);
	return bad;
}
