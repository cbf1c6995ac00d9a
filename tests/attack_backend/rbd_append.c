/* SPDX-License-Identifier: MIT */
/*
 * rbd_append - J.7 and RB1/RB2 together over RBD: one thread appends
 * unaligned chunks (each write past the end: the image grows under the
 * write, RB1, and lpc cuts the tail of its whole-page write back, BK6),
 * another calls lpc_fsync in a loop (the publication's truncate, RB2),
 * the flusher writes pages back every 20 ms.  After a last fsync the
 * image (read with librbd) must equal what was appended, and have its size.
 *   scripts/ceph-cluster.sh up /tmp/c; cd tests/attack_backend &&
 *   make out-release/rbd_append && LPC_CEPH_CONF=/tmp/c/ceph.conf out-release/rbd_append
 */
#include <stdatomic.h>
#include <time.h>
#include "rbd.h"

#define TOTAL (3u << 20)
static unsigned char ref[TOTAL];
static struct lpc_file *f;
static _Atomic int stop;

static void *syncer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		lpc_fsync(f);
	return NULL;
}

int main(void)
{
	char img[128], name[256];
	struct lpc_config cfg;
	struct lpc_cache *c;
	pthread_t ts;
	uint64_t end = 0, seed = 88172645463325252ull;
	int bad = 0;

	att_rbd_init();
	att_image("append", 0, img, name);
	lpc_config_init(&cfg);
	cfg.dirty_expire_ms = 20;
	CHECK(lpc_cache_create(&cfg, &c) == 0);
	CHECK(lpc_rbd_open(c, name, att_conf, O_RDWR, &f) == 0);
	for (size_t i = 0; i < TOTAL; i++) {
		seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
		ref[i] = (unsigned char)seed;
	}
	pthread_create(&ts, NULL, syncer, NULL);
	time_t t0 = time(NULL);
	while (end < TOTAL && time(NULL) - t0 < 20) {
		uint64_t len = 1 + (end * 2654435761u) % 3000;
		if (end + len > TOTAL)
			len = TOTAL - end;
		if (lpc_pwrite(f, ref + end, len, end) != (ssize_t)len) {
			printf("pwrite failed at %llu\n", (unsigned long long)end);
			bad = 1;
			break;
		}
		end += len;
	}
	atomic_store(&stop, 1);
	pthread_join(ts, NULL);
	int rc = lpc_fsync(f);
	if (rc)
		rc = lpc_fsync(f);
	rbd_image_t im;
	uint64_t size = 0;
	static unsigned char got[TOTAL];
	CHECK(rbd_open_read_only(att_io, img, &im, NULL) == 0);
	rbd_get_size(im, &size);
	ssize_t n = size ? rbd_read(im, 0, size < TOTAL ? size : TOTAL, (char *)got) : 0;
	rbd_close(im);
	uint64_t first = UINT64_MAX;
	for (uint64_t i = 0; i < end && i < (uint64_t)(n > 0 ? n : 0); i++)
		if (got[i] != ref[i]) {
			first = i;
			break;
		}
	printf("appended %llu bytes; fsync=%d; image size=%llu, read=%zd, first differing byte: %s%llu\n",
	       (unsigned long long)end, rc, (unsigned long long)size, n,
	       first == UINT64_MAX ? "none " : "", first == UINT64_MAX ? 0ull : (unsigned long long)first);
	if (rc || size != end || n != (ssize_t)end || first != UINT64_MAX)
		bad = 1;
	lpc_file_close(f);
	lpc_cache_destroy(c);
	rbd_remove(att_io, img);
	if (bad)
		printf("DEFECT: the image after fsync is not what was appended\n");
	return bad;
}
