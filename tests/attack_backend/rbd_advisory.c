/* SPDX-License-Identifier: MIT */
/*
 * rbd_advisory - the one-writer rule on an image WITHOUT the exclusive-lock
 * feature (lpc_rbd.h: "it takes librbd's advisory exclusive lock
 * (rbd_lock_exclusive, cookie "lpc"), which other lpc_rbd clients ...
 * honour"; "A second lpc_rbd_open for writing, in another process or
 * another cache, returns -EBUSY").  Cache 1 opens read-write; cache 2's
 * read-write open must get -EBUSY, its read-only open 0; after cache 1's
 * last close the lock is gone (rbd_list_lockers) and cache 2 opens
 * read-write.
 *   scripts/ceph-cluster.sh up /tmp/c; cd tests/attack_backend &&
 *   make out-release/rbd_advisory && LPC_CEPH_CONF=/tmp/c/ceph.conf out-release/rbd_advisory
 */
#include "rbd.h"

static int lockers(const char *img)
{
	rbd_image_t im;
	int excl = 0;
	char tag[256], clients[1024], cookies[1024], addrs[1024];
	size_t tl = sizeof(tag), cl = sizeof(clients), kl = sizeof(cookies), al = sizeof(addrs);

	CHECK(rbd_open_read_only(att_io, img, &im, NULL) == 0);
	ssize_t n = rbd_list_lockers(im, &excl, tag, &tl, clients, &cl, cookies, &kl, addrs, &al);
	rbd_close(im);
	return (int)n;
}

int main(void)
{
	char img[128], name[256];
	struct lpc_cache *c1, *c2;
	struct lpc_file *f1, *f2, *f3;
	int order = 22, bad = 0;

	att_rbd_init();
	sprintf(img, "att-adv-%d", (int)getpid());
	rbd_remove(att_io, img);
	CHECK(rbd_create2(att_io, img, 1 << 20, RBD_FEATURE_LAYERING, &order) == 0);
	sprintf(name, "rbd:lpc/%s", img);
	c1 = att_cache();
	c2 = att_cache();
	int r1 = lpc_rbd_open(c1, name, att_conf, O_RDWR, &f1);
	int n1 = lockers(img);
	int r2 = lpc_rbd_open(c2, name, att_conf, O_RDWR, &f2);
	int r3 = lpc_rbd_open(c2, name, att_conf, O_RDONLY, &f3);
	if (r2 == 0)
		lpc_file_close(f2);
	if (r3 == 0)
		lpc_file_close(f3);
	if (r1 == 0) {
		lpc_pwrite(f1, "a", 1, 0);
		lpc_file_close(f1);
	}
	int n2 = lockers(img);
	int r4 = lpc_rbd_open(c2, name, att_conf, O_RDWR, &f2);
	if (r4 == 0)
		lpc_file_close(f2);
	int n3 = lockers(img);
	printf("rw open=%d (lockers %d); second cache rw=%d ro=%d; after close lockers=%d; second cache rw=%d; lockers at the end=%d\n",
	       r1, n1, r2, r3, n2, r4, n3);
	if (r1 || n1 != 1 || r2 != -EBUSY || r3 || n2 != 0 || r4 || n3 != 0)
		bad = 1;
	lpc_cache_destroy(c1);
	lpc_cache_destroy(c2);
	rbd_remove(att_io, img);
	if (bad)
		printf("DEFECT: the advisory one-writer rule does not hold as lpc_rbd.h says\n");
	return bad;
}
