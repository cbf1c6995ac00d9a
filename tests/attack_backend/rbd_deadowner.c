/* SPDX-License-Identifier: MIT */
/*
 * rbd_deadowner - a writer that dies (SIGKILL) while it holds the image's
 * exclusive lock, and the next read-write lpc_rbd_open of the image.
 * lpc_rbd.h: "A client that dies keeps its exclusive lock until the
 * cluster notices (its watch times out, 30 s by default)" and "-EBUSY when
 * another client holds the image's lock".  Observed: the open blocks for
 * about 30 s and then fails with -ESHUTDOWN (-108; librbd: "failed to
 * break lock ... client blocklisted"): an errno the contract does not
 * name for this case, after a wait it does not mention, and a caller that
 * retries on -EBUSY gives up.  The open after it succeeds.
 * Fixed: the first open returns 0 (the dead owner's lock broken) or -EBUSY.
 *   scripts/ceph-cluster.sh up /tmp/c; cd tests/attack_backend &&
 *   make out-release/rbd_deadowner && LPC_CEPH_CONF=/tmp/c/ceph.conf out-release/rbd_deadowner
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "rbd.h"

int main(void)
{
	char img[128], name[256];
	int p[2], rc = -1, st;
	pid_t pid;

	att_rbd_init();
	att_image("dead", 1 << 20, img, name);
	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		struct lpc_cache *c = att_cache();
		struct lpc_file *f;

		rc = lpc_rbd_open(c, name, att_conf, O_RDWR, &f);
		if (write(p[1], &rc, sizeof(rc)) != sizeof(rc))
			_exit(2);
		pause();
		_exit(0);
	}
	CHECK(read(p[0], &rc, sizeof(rc)) == sizeof(rc) && rc == 0);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);

	struct lpc_cache *c = att_cache();
	struct lpc_file *f;
	time_t t0 = time(NULL);
	int r = lpc_rbd_open(c, name, att_conf, O_RDWR, &f);
	long took = (long)(time(NULL) - t0);

	printf("read-write open after the lock holder's SIGKILL: %d after %ld s\n", r, took);
	if (r == 0)
		lpc_file_close(f);
	lpc_cache_destroy(c);
	/* Let the next run's image go: wait for the lock to be free. */
	for (int t = 0; t < 60; t++) {
		c = att_cache();
		int r2 = lpc_rbd_open(c, name, att_conf, O_RDWR, &f);
		if (r2 == 0)
			lpc_file_close(f);
		lpc_cache_destroy(c);
		if (r2 == 0)
			break;
		sleep(1);
	}
	rbd_remove(att_io, img);
	if (r != 0 && r != -EBUSY) {
		printf("DEFECT: neither the lock nor -EBUSY: %d (%s)\n", r, strerror(-r));
		return 1;
	}
	return 0;
}
