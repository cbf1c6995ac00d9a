/* SPDX-License-Identifier: MIT */
/*
 * rbd_fullread.c - reads of an lpc file over an RBD image while the
 * cluster goes full and back (rbd_fullbeside.sh without the test binaries:
 * writers and readers on one file, a 16-frame cache).
 *
 * Contract: lpc_rbd.h, a full cluster: "the OSD refuses those [writes] that
 * need space ... a write-back fails with -ENOSPC ..., the pages stay dirty
 * and lpc_fsync returns it"; nothing fails a read (librbd reads need no
 * space); tests/rbd full: "lpc_pread still returns the new bytes".
 *
 * 4 writers (each its own 34829 bytes, random pwrites of 1..3000 bytes,
 * an lpc_fsync every 8th call, -ENOSPC ignored) and 2 readers
 * (lpc_pread of the whole file) on an image of 4 * 34829 bytes written
 * through librbd first (model_api's rbd_make) for 9 s; as they start
 * (ATT_LOWER_MS later) the full ratio is lowered to 0.1 % (as tests/rbd
 * full does), 5 s later put back.  Exit 1
 * when a read failed (its errno printed, and what librbd itself returns
 * for the same range at that moment), 0 when none did, 77 without a
 * cluster.  The ratios are put back at exit.
 *
 * Run: LPC_CEPH_CONF=DIR/ceph.conf out-release/rbd_fullread
 */
#include <stdbool.h>
#include <time.h>
#include <stdatomic.h>

#include "../attack_backend/rbd.h"

#define PG 4096
#define R 34829
#define NW 4

static struct lpc_file *f;
static _Atomic int stop, read_fail, read_ok, fsync_nospc, fsync_other;
static _Atomic int first_err;
static char img[64], name[128];
static bool lowered;

static int set_ratios(double near, double backfill, double full)
{
	static const char *const what[3] = { "osd set-nearfull-ratio", "osd set-backfillfull-ratio",
					      "osd set-full-ratio" };
	double v[3] = { near, backfill, full };
	bool up = full > 0.5;

	for (int k = 0; k < 3; k++) {
		int i = up ? 2 - k : k, r;
		char cmd[160];
		const char *cmds[1] = { cmd };

		snprintf(cmd, sizeof(cmd), "{\"prefix\": \"%s\", \"ratio\": %.4f}", what[i], v[i]);
		r = rados_mon_command(att_cl, cmds, 1, NULL, 0, NULL, NULL, NULL, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

static void restore(void)
{
	if (lowered && set_ratios(0.85, 0.90, 0.95) == 0)
		lowered = false;
}

static void *writer(void *p)
{
	int t = (int)(intptr_t)p;
	unsigned s = 1234u + (unsigned)t;
	char buf[3000];

	for (int n = 0; !atomic_load(&stop); n++) {
		size_t len = 1 + (size_t)(rand_r(&s) % 3000);
		uint64_t off = (uint64_t)t * R + (uint64_t)(rand_r(&s) % (R - len));

		memset(buf, 'a' + t, len);
		if (lpc_pwrite(f, buf, len, off) != (ssize_t)len)
			fprintf(stderr, "writer %d: pwrite failed\n", t);
		if (n % 8 == 7) {
			int r = lpc_fsync(f);
			if (r == -ENOSPC)
				fsync_nospc++;
			else if (r)
				fsync_other++;
		}
	}
	return NULL;
}

static void *reader(void *p)
{
	unsigned char *buf = malloc(NW * R + PG);

	(void)p;
	while (!atomic_load(&stop)) {
		ssize_t n = lpc_pread(f, buf, NW * R + PG, 0);

		if (n < 0) {
			int z = 0;
			if (atomic_compare_exchange_strong(&first_err, &z, (int)n))
				fprintf(stderr, "reader: lpc_pread = %zd\n", n);
			read_fail++;
		} else {
			read_ok++;
		}
	}
	free(buf);
	return NULL;
}

int main(void)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	pthread_t th[NW + 2];
	int r;

	att_rbd_init();
	atexit(restore);
	setvbuf(stdout, NULL, _IONBF, 0);
	att_image("fullread", NW * R, img, name);
	{
		/* initial bytes, written directly (the model's rbd_make) */
		rbd_image_t im;
		char *b = malloc(NW * R);
		memset(b, 'z', NW * R);
		CHECK(rbd_open(att_io, img, &im, NULL) == 0);
		CHECK(rbd_write(im, 0, NW * R, b) == NW * R);
		rbd_close(im);
		free(b);
	}
	lpc_config_init(&cfg);
	cfg.cache_bytes = 16 * PG;
	CHECK(lpc_cache_create(&cfg, &c) == 0);
	r = lpc_rbd_open(c, name, att_conf, O_RDWR, &f);
	CHECK(r == 0);
	for (int i = 0; i < NW + 2; i++)
		pthread_create(&th[i], NULL, i < NW ? writer : reader, (void *)(intptr_t)i);
	usleep(getenv("ATT_LOWER_MS") ? 1000 * atoi(getenv("ATT_LOWER_MS")) : 0);
	lowered = true;
	CHECK(set_ratios(0.0005, 0.0008, 0.001) == 0);
	printf("rbd_fullread: full ratio lowered\n");
	sleep(5);
	int fail_full = read_fail, ok_full = read_ok;
	CHECK(set_ratios(0.85, 0.90, 0.95) == 0);
	lowered = false;
	printf("rbd_fullread: full ratio back\n");
	sleep(4);
	atomic_store(&stop, 1);
	for (int i = 0; i < NW + 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 60 && (r = lpc_fsync(f)) == -ENOSPC; i++)
		usleep(500000);
	printf("rbd_fullread: reads ok %d, failed %d (%d/%d by the ratio's return), first error %d; "
	       "fsync -ENOSPC %d, other errors %d; final fsync %d\n",
	       (int)read_ok, (int)read_fail, fail_full, ok_full, (int)first_err, (int)fsync_nospc,
	       (int)fsync_other, r);
	lpc_file_close(f);
	lpc_cache_destroy(c);
	rbd_remove(att_io, img);
	return read_fail ? 1 : 0;
}
