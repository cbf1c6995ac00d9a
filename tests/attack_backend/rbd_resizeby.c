/* SPDX-License-Identifier: MIT */
/*
 * rbd_resizeby - another client resizes the image while lpc has it open
 * read-write.  lpc_rbd.h: "lpc keeps [the exclusive lock] until the file's
 * last close and does not hand it over when another client asks, so
 * another client's write, resize or lock request fails (librbd: -EROFS, or
 * -EBUSY at its open) while this file is open."  But librbd forwards a
 * maintenance operation (resize) of a client without the lock to the lock
 * owner, and the owner - lpc's own librbd handle - carries it out: the
 * image is shrunk behind lpc's back (BK5 "once lpc has written ... the
 * file, lpc's size is its own", so lpc still reports the old size).
 * Here `rbd resize --allow-shrink` (the CLI, another client) cuts a 4 MiB
 * image that lpc wrote to 1 MiB: the page lpc_fsync made durable at 3 MiB
 * is gone from the image (lpc's last close extends it again, J.7, with
 * zeros) while lpc_pread still returns it from the cache.
 * Fixed: the other client's resize fails and the image keeps its 4 MiB.
 *   scripts/ceph-cluster.sh up /tmp/c; cd tests/attack_backend &&
 *   make out-release/rbd_resizeby && LPC_CEPH_CONF=/tmp/c/ceph.conf out-release/rbd_resizeby
 */
#include "rbd.h"

int main(void)
{
	char img[128], name[256], cmd[4400], buf[4096];
	struct lpc_cache *c;
	struct lpc_file *f;
	uint64_t size = 0;
	int bad = 0;

	att_rbd_init();
	att_image("resizeby", 4 << 20, img, name);
	c = att_cache();
	CHECK(lpc_rbd_open(c, name, att_conf, O_RDWR, &f) == 0);
	memset(buf, 'L', sizeof(buf));
	CHECK(lpc_pwrite(f, buf, 4096, 3 << 20) == 4096 && lpc_fsync(f) == 0);
	snprintf(cmd, sizeof(cmd), "timeout 60 rbd -c %s resize --size 1M --allow-shrink lpc/%s >/dev/null 2>&1",
		 att_conf, img);
	int st = system(cmd);
	int rc_cli = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	rbd_image_t im;
	CHECK(rbd_open_read_only(att_io, img, &im, NULL) == 0);
	rbd_get_size(im, &size);
	rbd_close(im);
	ssize_t n = lpc_pread(f, buf, 4096, 3 << 20);
	printf("other client's `rbd resize --size 1M` while lpc holds the image: exit %d; image size now %llu; lpc_pread(3 MiB)=%zd\n",
	       rc_cli, (unsigned long long)size, n);
	if (rc_cli == 0 || size != (4u << 20)) {
		printf("DEFECT: another client resized the image lpc has open read-write\n");
		bad = 1;
	}
	int rcc = lpc_file_close(f);
	char got[4096] = { 0 };
	CHECK(rbd_open_read_only(att_io, img, &im, NULL) == 0);
	rbd_get_size(im, &size);
	ssize_t rn = size >= (3u << 20) + 4096 ? rbd_read(im, 3 << 20, 4096, got) : -1;
	rbd_close(im);
	printf("after lpc's last close (=%d): image size %llu, the fsync'd page at 3 MiB: %s\n", rcc,
	       (unsigned long long)size, rn == 4096 && got[0] == 'L' ? "'L' (kept)" : "gone");
	if (!(rn == 4096 && got[0] == 'L')) {
		printf("DEFECT: bytes lpc_fsync made durable are gone from the image\n");
		bad = 1;
	}
	lpc_cache_destroy(c);
	rbd_remove(att_io, img);
	return bad;
}
