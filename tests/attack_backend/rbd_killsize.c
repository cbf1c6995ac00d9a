/* SPDX-License-Identifier: MIT */
/*
 * rbd_killsize - fsync durability with the size: a child writes inside an
 * image and past its end (the file grows, BK6/RB1), lpc_fsync returns 0,
 * and the child is SIGKILLed at once.  The image, read back through
 * librbd, must hold every byte and have lpc's size (J.2: "lpc_fsync
 * returns 0 only when every byte written ... is on the file"; J.7: fsync
 * extends the file to lpc's size and cuts back the tail of its whole-page
 * write).  Then the same after a shrinking lpc_truncate and a write.
 * (Held.  Between the steps it waits until a read-write open succeeds
 * again; what that first reopen returns is rbd_deadowner's subject.)
 *   scripts/ceph-cluster.sh up /tmp/c; cd tests/attack_backend &&
 *   make out-release/rbd_killsize && LPC_CEPH_CONF=/tmp/c/ceph.conf out-release/rbd_killsize
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "rbd.h"

#define MB (1u << 20)

static int child(const char *name, int wfd, int step)
{
	struct lpc_cache *c = att_cache();
	struct lpc_file *f;
	char buf[300];
	int rc;

	memset(buf, 'A' + step, sizeof(buf));
	rc = lpc_rbd_open(c, name, att_conf, O_RDWR, &f);
	if (rc) {
		fprintf(stderr, "child open %d\n", rc);
		_exit(2);
	}
	if (step == 0) {
		lpc_pwrite(f, buf, 300, 12345);        /* inside */
		lpc_pwrite(f, buf, 150, MB + 50);      /* past the end: size MB + 200 */
	} else {
		lpc_truncate(f, MB / 2 + 10);          /* shrink */
		lpc_pwrite(f, buf, 10, MB / 2);        /* rewrite the new tail */
	}
	rc = lpc_fsync(f);
	if (write(wfd, &rc, sizeof(rc)) != sizeof(rc))
		_exit(2);
	pause();
	_exit(0);
}

int main(void)
{
	char img[128], name[256];
	int bad = 0;
	uint64_t want_size[2] = { MB + 200, MB / 2 + 10 };

	att_rbd_init();
	att_image("kill", MB, img, name);
	for (int step = 0; step < 2; step++) {
		int p[2], rc = -1, st;
		pid_t pid;

		CHECK(pipe(p) == 0);
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			child(name, p[1], step);
		}
		close(p[1]);
		CHECK(read(p[0], &rc, sizeof(rc)) == sizeof(rc));
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		close(p[0]);

		rbd_image_t im;
		uint64_t size = 0;
		char got[300];
		CHECK(rbd_open_read_only(att_io, img, &im, NULL) == 0);
		rbd_get_size(im, &size);
		int ok = rc == 0 && size == want_size[step];
		if (step == 0) {
			ok &= rbd_read(im, 12345, 300, got) == 300 && memcmp(got, "AAAA", 4) == 0 &&
			      got[299] == 'A';
			ok &= rbd_read(im, MB + 50, 150, got) == 150 && got[0] == 'A' && got[149] == 'A';
		} else {
			ok &= rbd_read(im, MB / 2, 10, got) == 10 && got[0] == 'B' && got[9] == 'B';
		}
		rbd_close(im);
		printf("step %d: lpc_fsync=%d, after SIGKILL image size=%llu (lpc's %llu): %s\n", step, rc,
		       (unsigned long long)size, (unsigned long long)want_size[step],
		       ok ? "ok" : "WRONG");
		bad |= !ok;
		/* The dead client's lock: wait until the next open can take it. */
		if (step == 0) {
			struct lpc_cache *c = att_cache();
			struct lpc_file *f;
			int r = -EBUSY;
			time_t t0 = time(NULL);
			for (int t = 0; t < 90 && r != 0; t++) {
				time_t t1 = time(NULL);
				r = lpc_rbd_open(c, name, att_conf, O_RDWR, &f);
				printf("  reopen after the kill, at %ld s: %d (took %ld s)\n",
				       (long)(t1 - t0), r, (long)(time(NULL) - t1));
				if (r)
					sleep(1);
			}
			CHECK(r == 0);
			lpc_file_close(f);
			lpc_cache_destroy(c);
		}
	}
	rbd_remove(att_io, img);
	if (bad)
		printf("DEFECT: an image after lpc_fsync returned 0 and a SIGKILL lacks bytes or has another size\n");
	return bad;
}
