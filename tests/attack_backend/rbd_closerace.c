/* SPDX-License-Identifier: MIT */
/*
 * rbd_closerace - two threads of one process, one cache, each opening the
 * same image read-write: thread 0 opens, writes a byte and closes (the last
 * close), thread 1 opens while that close runs (0 to 15 ms after it began).  Every open
 * is of a name this cache has open or is closing, never another client's:
 * lpc_rbd.h ("In one cache the name is the identity") and A.5 (an open of
 * a name in its last close returns that copy) leave no room for -EBUSY.
 * But a last close's release (op_release) takes the connection off rbd.c's
 * registry (RB3) before conn_close gives the exclusive lock back, and an
 * open in that window connects anew and meets the still-held lock: -EBUSY.
 * (rbd_openrace is the same registry's race between two opens; a fix for
 * one need not fix the other.)
 * Fixed: no open fails.
 *   scripts/ceph-cluster.sh up /tmp/c; cd tests/attack_backend &&
 *   make out-release/rbd_closerace && LPC_CEPH_CONF=/tmp/c/ceph.conf out-release/rbd_closerace
 */
#include <stdatomic.h>
#include "rbd.h"

static struct lpc_cache *c;
static char name[256];
static _Atomic int fails, opens;
static _Atomic int errs[2];

static pthread_barrier_t bar;
#define ROUNDS 30

/* Thread 0 holds the image open and closes it (the last close) right after
 * the barrier; thread 1 opens it d microseconds after the barrier, d
 * sweeping the close's length. */
static void *loop(void *arg)
{
	int id = (int)(intptr_t)arg;

	for (int i = 0; i < ROUNDS; i++) {
		struct lpc_file *f = NULL;
		int r = 0;

		if (id == 0) {
			r = lpc_rbd_open(c, name, att_conf, O_RDWR, &f);
			atomic_fetch_add(&opens, 1);
			if (r) {
				atomic_fetch_add(&fails, 1);
				atomic_store(&errs[id], r);
			} else {
				lpc_pwrite(f, "x", 1, 0);
			}
			pthread_barrier_wait(&bar);
			if (!r)
				lpc_file_close(f);
		} else {
			pthread_barrier_wait(&bar);
			usleep((useconds_t)(i * 500));
			r = lpc_rbd_open(c, name, att_conf, O_RDWR, &f);
			atomic_fetch_add(&opens, 1);
			if (r) {
				atomic_fetch_add(&fails, 1);
				atomic_store(&errs[id], r);
			} else {
				lpc_file_close(f);
			}
		}
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

int main(void)
{
	char img[128];
	pthread_t t[2];

	att_rbd_init();
	att_image("closerace", 1 << 20, img, name);
	c = att_cache();
	pthread_barrier_init(&bar, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, loop, (void *)(intptr_t)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	lpc_cache_destroy(c);
	rbd_remove(att_io, img);
	printf("%d of %d read-write opens failed (errors seen: %d, %d)\n", fails, opens, errs[0],
	       errs[1]);
	if (fails) {
		printf("DEFECT: an open of a name open or closing in this cache failed\n");
		return 1;
	}
	return 0;
}
