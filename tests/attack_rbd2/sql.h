/* SPDX-License-Identifier: MIT */
/*
 * sql.h - rev23's helpers for SQLite databases on RBD images through the
 * VFS "lpc" and liblpc_rbd's opener: LPC_CEPH_CONF=DIR/ceph.conf (exit 77
 * without it), images in pool lpc named att2-TAG-PID, looked at through
 * librbd directly.
 */
#ifndef ATT_SQL_H
#define ATT_SQL_H
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rados/librados.h>
#include <rbd/librbd.h>
#include <sqlite3.h>

#include <lpc/lpc_rbd.h>
#include <lpc/lpc_sqlite.h>

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: setup failed: %s\n", __FILE__, __LINE__, #x); exit(2); } } while (0)

static const char *sq_conf;
static rados_t sq_cl;
static rados_ioctx_t sq_io;

static inline void sq_conf_get(void)
{
	sq_conf = getenv("LPC_CEPH_CONF");
	if (!sq_conf || !*sq_conf) {
		fprintf(stderr, "skipped: set LPC_CEPH_CONF=DIR/ceph.conf (scripts/ceph-cluster.sh up DIR)\n");
		exit(77);
	}
}

/* A direct connection (the oracle; never in a process that forks). */
static inline void sq_direct(void)
{
	CHECK(rados_create(&sq_cl, NULL) == 0);
	CHECK(rados_conf_read_file(sq_cl, sq_conf) == 0);
	CHECK(rados_connect(sq_cl) == 0);
	CHECK(rados_ioctx_create(sq_cl, "lpc", &sq_io) == 0);
}

static inline int sq_image_exists(const char *img)
{
	rbd_image_t im;
	int r = rbd_open_read_only(sq_io, img, &im, NULL);

	if (r == 0)
		rbd_close(im);
	return r == 0;
}

static inline void sq_vfs(void)
{
	struct lpc_sqlite_opener op;

	CHECK(lpc_rbd_sqlite_opener(sq_conf, &op) == 0);
	CHECK(lpc_sqlite_set_opener(LPC_RBD_PREFIX, &op) == SQLITE_OK);
}

static inline int sq_open(const char *img, const char *params, int flags, sqlite3 **db)
{
	char uri[512];

	snprintf(uri, sizeof(uri), "file:rbd:lpc/%s?vfs=lpc%s", img, params ? params : "");
	return sqlite3_open_v2(uri, db, flags | SQLITE_OPEN_URI, NULL);
}

static inline int sq_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);

	if (rc != SQLITE_OK)
		fprintf(stderr, "  sql \"%.60s\": %d %s\n", sql, rc, err ? err : "");
	sqlite3_free(err);
	return rc;
}

/* One integer answer of sql, or INT64_MIN on an error. */
static inline int64_t sq_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = NULL;
	int64_t v = INT64_MIN;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* "ok" from PRAGMA integrity_check, into out. */
static inline void sq_integrity(sqlite3 *db, char *out, size_t n)
{
	sqlite3_stmt *s = NULL;

	snprintf(out, n, "(no answer: %s)", sqlite3_errmsg(db));
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		snprintf(out, n, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
}

/* Removes the database's images (db, -journal, -wal). */
static inline void sq_fresh(const char *img)
{
	char n[300];

	rbd_remove(sq_io, img);
	snprintf(n, sizeof(n), "%s-journal", img);
	rbd_remove(sq_io, n);
	snprintf(n, sizeof(n), "%s-wal", img);
	rbd_remove(sq_io, n);
}
#endif
