/* SPDX-License-Identifier: MIT */
/*
 * sql_threads.c - several connections of one process, on threads, write
 * one database on an RBD image at once (held: exit 0).
 *
 * Contract (lpc_sqlite_set_opener(3), "Locking: one process"): "The VFS
 * keeps SQLite's locks among this process's connections itself (the lock
 * table of lpc_coherence=exclusive)"; lpc_rbd.h: "In one cache the name is
 * the identity ... the same lpc_file over the same connection"; each
 * journal an image (remote.c RJ1-RJ3, registry.c XJ1).
 *
 * 4 threads, each its own connection (busy_timeout 20 s), each 15
 * transactions of 10 rows in DELETE mode, then 4 more connections opened
 * and closed at once from 4 threads (concurrent opens of one name);
 * checks: every transaction's SQLite result OK, count = 4 * 15 * 10,
 * each thread's rows all there, integrity_check "ok", no journal image
 * left.
 *
 * Run: LPC_CEPH_CONF=DIR/ceph.conf out-release/sql_threads
 */
#include <pthread.h>

#include "sql.h"

#define NT 4
#define TX 15
#define ROWS 10

static char img[64];
static _Atomic int errors;

static void *writer(void *p)
{
	int t = (int)(intptr_t)p;
	sqlite3 *db = NULL;
	char sql[200];

	if (sq_open(img, NULL, SQLITE_OPEN_READWRITE, &db) != SQLITE_OK) {
		fprintf(stderr, "thread %d: open: %s\n", t, sqlite3_errmsg(db));
		errors++;
		return NULL;
	}
	sqlite3_busy_timeout(db, 20000);
	for (int x = 0; x < TX; x++) {
		if (sq_exec(db, "BEGIN IMMEDIATE")) {
			errors++;
			continue;
		}
		for (int i = 0; i < ROWS; i++) {
			snprintf(sql, sizeof(sql), "INSERT INTO t(th, tx, pad) VALUES(%d, %d, randomblob(1500))", t, x);
			if (sq_exec(db, sql))
				errors++;
		}
		if (sq_exec(db, "COMMIT")) {
			errors++;
			sq_exec(db, "ROLLBACK");
		}
	}
	if (sqlite3_close(db) != SQLITE_OK)
		errors++;
	return NULL;
}

static void *opener(void *p)
{
	sqlite3 *db = NULL;
	int rc = sq_open(img, NULL, SQLITE_OPEN_READWRITE, &db);

	(void)p;
	if (rc == SQLITE_OK)
		rc = sq_int(db, "SELECT count(*) FROM t") >= 0 ? SQLITE_OK : sqlite3_errcode(db);
	if (rc != SQLITE_OK) {
		fprintf(stderr, "concurrent open: %d %s\n", rc, sqlite3_errmsg(db));
		errors++;
	}
	sqlite3_close(db);
	return NULL;
}

int main(void)
{
	pthread_t th[NT];
	sqlite3 *db = NULL;
	char ic[256], j[100];
	int fails = 0;

	sq_conf_get();
	sq_direct();
	sq_vfs();
	setvbuf(stdout, NULL, _IONBF, 0);
	snprintf(img, sizeof(img), "att2-th-%d", (int)getpid());
	sq_fresh(img);
	CHECK(sq_open(img, NULL, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &db) == SQLITE_OK);
	CHECK(sq_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, th INT, tx INT, pad BLOB)") == 0);
	CHECK(sqlite3_close(db) == SQLITE_OK);
	for (int t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, writer, (void *)(intptr_t)t);
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, opener, NULL);
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	CHECK(sq_open(img, NULL, SQLITE_OPEN_READWRITE, &db) == SQLITE_OK);
	int64_t cnt = sq_int(db, "SELECT count(*) FROM t");
	sq_integrity(db, ic, sizeof(ic));
	for (int t = 0; t < NT; t++) {
		char q[100];
		snprintf(q, sizeof(q), "SELECT count(*) FROM t WHERE th = %d", t);
		int64_t n = sq_int(db, q);
		if (n != TX * ROWS) {
			printf("thread %d: %lld rows, expected %d\n", t, (long long)n, TX * ROWS);
			fails++;
		}
	}
	sqlite3_close(db);
	snprintf(j, sizeof(j), "%s-journal", img);
	bool jleft = sq_image_exists(j);
	bool ok = !fails && !errors && cnt == NT * TX * ROWS && !strcmp(ic, "ok") && !jleft;
	printf("sql_threads: %s: %lld rows (expected %d), %d SQL errors, integrity %s, journal image %s\n",
	       ok ? "ok" : "FAIL", (long long)cnt, NT * TX * ROWS, (int)errors, ic, jleft ? "left" : "gone");
	sq_fresh(img);
	return ok ? 0 : 1;
}
