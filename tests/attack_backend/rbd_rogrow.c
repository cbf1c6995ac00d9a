/* SPDX-License-Identifier: MIT */
/*
 * rbd_rogrow - BK5 over RBD: an image open read-only in lpc, grown and
 * written past its old end by another client (librbd directly, which
 * holds the exclusive lock).  BK5: "a look past the end asks size again,
 * so growth by another client is seen"; lpc_rbd.h's size operation is the
 * image's size (rbd_get_size of lpc's read-only handle, refreshed by
 * librbd when the header changes).  The read past the old end must return
 * the other client's bytes.
 *   scripts/ceph-cluster.sh up /tmp/c; cd tests/attack_backend &&
 *   make out-release/rbd_rogrow && LPC_CEPH_CONF=/tmp/c/ceph.conf out-release/rbd_rogrow
 */
#include "rbd.h"

int main(void)
{
	char img[128], name[256], buf[4096];
	struct lpc_cache *c;
	struct lpc_file *f;
	rbd_image_t w;
	int bad = 0;

	att_rbd_init();
	att_image("rogrow", 1 << 20, img, name);
	CHECK(rbd_open(att_io, img, &w, NULL) == 0);
	memset(buf, 'O', sizeof(buf));
	CHECK(rbd_write(w, 0, 4096, buf) == 4096 && rbd_flush(w) == 0);
	c = att_cache();
	CHECK(lpc_rbd_open(c, name, att_conf, O_RDONLY, &f) == 0);
	ssize_t r0 = lpc_pread(f, buf, 4096, 0);
	ssize_t r1 = lpc_pread(f, buf, 4096, 1536 * 1024); /* past the end: 0 */
	CHECK(rbd_resize(w, 2 << 20) == 0);
	memset(buf, 'G', sizeof(buf));
	CHECK(rbd_write(w, 1536 * 1024, 4096, buf) == 4096 && rbd_flush(w) == 0);
	memset(buf, 0, sizeof(buf));
	ssize_t r2 = lpc_pread(f, buf, 4096, 1536 * 1024);
	char b2 = buf[0];
	sleep(3); /* the header's change notification has long arrived */
	memset(buf, 0, sizeof(buf));
	ssize_t r3 = lpc_pread(f, buf, 4096, 1536 * 1024);
	printf("read-only lpc file: pread(0)=%zd, past the 1 MiB end=%zd; another client grows it to 2 MiB and writes 'G' at 1.5 MiB: pread=%zd byte=0x%02x; 3 s later: pread=%zd byte=0x%02x\n",
	       r0, r1, r2, (unsigned char)b2, r3, (unsigned char)buf[0]);
	if (r3 != 4096 || buf[0] != 'G') {
		printf("DEFECT: the growth by another client is not seen\n");
		bad = 1;
	}
	lpc_file_close(f);
	lpc_cache_destroy(c);
	rbd_close(w);
	rbd_remove(att_io, img);
	return bad;
}
