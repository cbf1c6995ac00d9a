/* SPDX-License-Identifier: MIT */
/*
 * rbd_openrace - two threads of one process open the same image read-write
 * in the same cache at the same time.  lpc_rbd.h: "In one cache the name
 * is the identity: opening an open name again returns the same lpc_file
 * over the same connection"; lpc_file_open_backend gives one copy per name
 * to concurrent opens.  But lpc_rbd_open looks its registry up (RB3), finds
 * nothing, and both threads connect; the second one's rbd_lock_acquire
 * meets the first one's exclusive lock and the open fails with -EBUSY, as
 * if another client held the image.
 * Fixed: both opens return 0 with the same lpc_file, in every round.
 *   scripts/ceph-cluster.sh up /tmp/c; cd tests/attack_backend &&
 *   make out-release/rbd_openrace && LPC_CEPH_CONF=/tmp/c/ceph.conf out-release/rbd_openrace
 */
#include "rbd.h"

static struct lpc_cache *c;
static char name[256];
static pthread_barrier_t bar;

struct res { int rc; struct lpc_file *f; };

static void *opener(void *arg)
{
	struct res *r = arg;

	pthread_barrier_wait(&bar);
	r->rc = lpc_rbd_open(c, name, att_conf, O_RDWR, &r->f);
	return NULL;
}

int main(void)
{
	char img[128];
	int fails = 0, rounds = 5;

	att_rbd_init();
	att_image("race", 4 << 20, img, name);
	c = att_cache();
	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < rounds; i++) {
		struct res a = { 0 }, b = { 0 };
		pthread_t ta, tb;

		pthread_create(&ta, NULL, opener, &a);
		pthread_create(&tb, NULL, opener, &b);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		printf("round %d: open A=%d open B=%d same file=%d\n", i, a.rc, b.rc,
		       a.rc == 0 && b.rc == 0 && a.f == b.f);
		if (a.rc || b.rc || a.f != b.f)
			fails++;
		if (a.rc == 0)
			lpc_file_close(a.f);
		if (b.rc == 0)
			lpc_file_close(b.f);
	}
	lpc_cache_destroy(c);
	rbd_remove(att_io, img);
	if (fails)
		printf("DEFECT: %d of %d rounds: a concurrent read-write open of an open name failed\n",
		       fails, rounds);
	return fails ? 1 : 0;
}
