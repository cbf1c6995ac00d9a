/* SPDX-License-Identifier: MIT */
/*
 * two_copies.c LIB - a program that uses liblpc.so and loads the extension
 * liblpc_sqlite.so (LIB), which carries its own copy of lpc: both copies
 * use RCU from the same threads and share liburcu's one reader registry,
 * which asserts on a thread registered twice (src/core/thread.c, "Sharing
 * liburcu").  The main thread and a second thread use lpc, then SQLite
 * through the VFS "lpc", then lpc again, and exit; every value read back
 * must be the one written.  (lpcbench all did this, and aborted.)
 *
 * Exit: 0 pass, 1 fail, 77 skip.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lpc/lpc.h>

static const char *lib;
static char dir[] = "/var/tmp/lpc-two-copies-XXXXXX";
static int failed;

#define FAIL(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); failed = 1; } while (0)

static void use_lpc(const char *name)
{
	struct lpc_config cfg;
	struct lpc_cache *c;
	struct lpc_file *f;
	char path[256], buf[4096], back[4096];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	lpc_config_init(&cfg);
	cfg.cache_bytes = 1 << 20;
	if ((rc = lpc_cache_create(&cfg, &c)) != 0) {
		FAIL("lpc_cache_create = %d", rc);
		return;
	}
	if ((rc = lpc_file_open(c, path, O_RDWR | O_CREAT, 0644, &f)) != 0) {
		FAIL("lpc_file_open %s = %d", path, rc);
		lpc_cache_destroy(c);
		return;
	}
	memset(buf, name[0], sizeof(buf));
	if (lpc_pwrite(f, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) ||
	    lpc_pread(f, back, sizeof(back), 0) != (ssize_t)sizeof(back) ||
	    memcmp(buf, back, sizeof(buf)))
		FAIL("lpc round trip on %s", path);
	if (lpc_file_close(f) != 0 || lpc_cache_destroy(c) != 0)
		FAIL("close or destroy");
}

static void use_sqlite(const char *name)
{
	char path[256], *err = NULL;
	sqlite3 *boot, *db;
	sqlite3_stmt *st;

	snprintf(path, sizeof(path), "%s/%s.db", dir, name);
	if (sqlite3_open(":memory:", &boot) != SQLITE_OK ||
	    sqlite3_enable_load_extension(boot, 1) != SQLITE_OK ||
	    sqlite3_load_extension(boot, lib, NULL, &err) != SQLITE_OK) {
		FAIL("loading %s: %s", lib, err ? err : sqlite3_errmsg(boot));
		sqlite3_free(err);
		return;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "lpc") !=
	    SQLITE_OK) {
		FAIL("open %s through lpc: %s", path, sqlite3_errmsg(db));
		return;
	}
	if (sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (4242);", NULL, NULL,
			 &err) != SQLITE_OK) {
		FAIL("exec: %s", err);
		sqlite3_free(err);
	}
	if (sqlite3_prepare_v2(db, "SELECT x FROM t", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW || sqlite3_column_int(st, 0) != 4242)
		FAIL("read back through lpc");
	sqlite3_finalize(st);
	sqlite3_close(db);
	sqlite3_close(boot);
}

static void *second(void *arg)
{
	(void)arg;
	use_lpc("b");
	use_sqlite("b");
	use_lpc("c");
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc != 2) {
		fprintf(stderr, "usage: two_copies LIB\n");
		return 2;
	}
	lib = argv[1];
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 77;
	}
	use_lpc("a");
	use_sqlite("a");
	use_lpc("d");
	if (pthread_create(&th, NULL, second, NULL) == 0)
		pthread_join(th, NULL);
	else
		FAIL("pthread_create");
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		FAIL("removing %s", dir);
	if (!failed)
		printf("PASS: liblpc.so and liblpc_sqlite.so on the same threads\n");
	return failed;
}
