/* SPDX-License-Identifier: MIT */
/*
 * rbd.h - the backend review's helpers for liblpc_rbd over a real cluster:
 * LPC_CEPH_CONF=DIR/ceph.conf (scripts/ceph-cluster.sh up DIR prints it);
 * without it the programs exit 77.  A direct librbd connection of its own
 * reads images back (the oracle).
 */
#ifndef ATT_RBD_H
#define ATT_RBD_H
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rados/librados.h>
#include <rbd/librbd.h>

#include <lpc/lpc.h>
#include <lpc/lpc_rbd.h>

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: setup failed: %s\n", __FILE__, __LINE__, #x); exit(2); } } while (0)

static const char *att_conf;
static rados_t att_cl;
static rados_ioctx_t att_io;

static inline void att_rbd_init(void)
{
	att_conf = getenv("LPC_CEPH_CONF");
	if (!att_conf || !*att_conf) {
		fprintf(stderr, "skipped: set LPC_CEPH_CONF=DIR/ceph.conf (scripts/ceph-cluster.sh up DIR)\n");
		exit(77);
	}
	CHECK(rados_create(&att_cl, NULL) == 0);
	CHECK(rados_conf_read_file(att_cl, att_conf) == 0);
	CHECK(rados_connect(att_cl) == 0);
	CHECK(rados_ioctx_create(att_cl, "lpc", &att_io) == 0);
}

/* A new image lpc/att-TAG-PID of size bytes; its lpc name in name. */
static inline void att_image(const char *tag, uint64_t size, char *img, char *name)
{
	int order = 22;

	sprintf(img, "att-%s-%d", tag, (int)getpid());
	rbd_remove(att_io, img);
	CHECK(rbd_create(att_io, img, size, &order) == 0);
	sprintf(name, "rbd:lpc/%s", img);
}

static inline struct lpc_cache *att_cache(void)
{
	struct lpc_config cfg;
	struct lpc_cache *c;

	lpc_config_init(&cfg);
	CHECK(lpc_cache_create(&cfg, &c) == 0);
	return c;
}
#endif
