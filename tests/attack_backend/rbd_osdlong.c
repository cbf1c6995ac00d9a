/* SPDX-License-Identifier: MIT */
/*
 * rbd_osdlong - the OSD down for longer than the client's watch timeout
 * (35 s; tests/rbd's osd case stops it for a few seconds), with a page
 * written before (durable), rewritten while the OSD is down (its writeback
 * times out: rados_osd_op_timeout=3), and rewritten again.  After the OSD
 * is back: lpc_fsync must succeed (at most one error first, J.3), nothing
 * dirty dropped, the image must hold the LAST version (never the timed-out
 * write applied late), and a miss must work (the lock and the watch
 * recovered).
 *   scripts/ceph-cluster.sh up /tmp/c; cd tests/attack_backend &&
 *   make out-release/rbd_osdlong &&
 *   LPC_CEPH_DIR=/tmp/c LPC_CEPH_CONF=/tmp/c/ceph.conf out-release/rbd_osdlong
 * (stops and starts the cluster's OSD with ../../scripts/ceph-cluster.sh)
 */
#include <time.h>
#include "rbd.h"

static void cluster(const char *verb)
{
	char cmd[4400];
	const char *dir = getenv("LPC_CEPH_DIR");

	if (!dir) {
		fprintf(stderr, "skipped: set LPC_CEPH_DIR too\n");
		exit(77);
	}
	snprintf(cmd, sizeof(cmd), "../../scripts/ceph-cluster.sh %s %s >/dev/null", verb, dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	char img[128], name[256], opts[4400], buf[4096], got[4096];
	struct lpc_cache *c;
	struct lpc_file *f;
	int bad = 0, r, r2 = 0;

	att_rbd_init();
	att_image("osdlong", 1 << 20, img, name);
	snprintf(opts, sizeof(opts), "conf=%s;rados_osd_op_timeout=3", att_conf);
	c = att_cache();
	CHECK(lpc_rbd_open(c, name, opts, O_RDWR, &f) == 0);
	memset(buf, 'X', 4096);
	CHECK(lpc_pwrite(f, buf, 4096, 0) == 4096 && lpc_fsync(f) == 0);
	cluster("osd-stop");
	memset(buf, 'Y', 4096);
	lpc_pwrite(f, buf, 4096, 0);
	r = lpc_fsync(f);
	printf("OSD down: fsync=%d\n", r);
	memset(buf, 'Z', 4096);
	lpc_pwrite(f, buf, 4096, 0);
	r = lpc_fsync(f);
	printf("OSD down: fsync=%d; waiting 35 s\n", r);
	sleep(35);
	cluster("osd-start");
	r = lpc_fsync(f);
	if (r < 0)
		r2 = lpc_fsync(f);
	ssize_t n = lpc_pread(f, got, 4096, 512 * 1024);
	printf("OSD back: fsync=%d then %d; a miss=%zd\n", r, r2, n);
	if ((r < 0 && r2 < 0) || n != 4096)
		bad = 1;
	int rc = lpc_file_close(f);
	lpc_cache_destroy(c);
	rbd_image_t im;
	CHECK(rbd_open_read_only(att_io, img, &im, NULL) == 0);
	ssize_t rn = rbd_read(im, 0, 4096, got);
	rbd_close(im);
	printf("close=%d; image page 0: read=%zd first byte=%c (want Z)\n", rc, rn, got[0]);
	if (rn != 4096 || got[0] != 'Z' || got[4095] != 'Z')
		bad = 1;
	rbd_remove(att_io, img);
	if (bad)
		printf("DEFECT: after the OSD came back the page's last version is not on the image, or lpc stays failed\n");
	return bad;
}
