/* SPDX-License-Identifier: MIT */
/*
 * sqlite_test.h - helpers of the SQLite VFS tests (header only): open a
 * database through "lpc" or "unix", run SQL that must succeed, hash a
 * table's contents, read the integrity check.
 */
#ifndef LPC_TESTS_SQLITE_SQLITE_TEST_H
#define LPC_TESTS_SQLITE_SQLITE_TEST_H

#include <sqlite3.h>

#include <lpc/lpc_sqlite.h>

#include "lpc_test.h"

/* Sanitizer builds run a smaller share of each test's rounds (CI time). */
#if defined(LPC_TSAN) || defined(__SANITIZE_ADDRESS__)
#define SQT_SCALE(n) ((n) / 3 > 0 ? (n) / 3 : 1)
#else
#define SQT_SCALE(n) (n)
#endif

/* Registers "lpc" (not as the default). */
static inline void sqt_register(void)
{
	int rc = lpc_sqlite_register(0);

	REQUIRE(rc == SQLITE_OK, "lpc_sqlite_register = %d", rc);
}

/* A test's start: tst_init (timeout_s), the VFS registered, and the
 * directory its databases go in (removed at exit).  Return: the directory. */
static inline const char *sqt_start(int argc, char **argv, unsigned timeout_s)
{
	const char *dir;

	tst_init(argc, argv, timeout_s);
	sqt_register();
	dir = tst_tmpdir();
	REQUIRE(dir, "tmpdir");
	return dir;
}

/* Opens path through vfs ("lpc" or "unix"), with a busy timeout. */
static inline sqlite3 *sqt_open(const char *path, const char *vfs)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(path, &db,
				 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, vfs);

	REQUIRE(rc == SQLITE_OK, "open %s through %s: %s", path, vfs,
		db ? sqlite3_errmsg(db) : "no memory");
	sqlite3_busy_timeout(db, 10000);
	sqlite3_extended_result_codes(db, 1);
	return db;
}

/* Runs sql; returns SQLite's (extended) code. */
static inline int sqt_try(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

#define sqt_exec(db, sql)                                                          \
	do {                                                                       \
		const char *sqt_s_ = (sql);                                        \
		int sqt_rc_ = sqt_try((db), sqt_s_);                               \
		REQUIRE(sqt_rc_ == SQLITE_OK, "%s: %d %s", sqt_s_, sqt_rc_,       \
			sqlite3_errmsg(db));                                       \
	} while (0)

/* The first column of the first row of sql as an integer (-1: no row). */
static inline int64_t sqt_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	REQUIRE(rc == SQLITE_OK, "prepare %s: %s", sql, sqlite3_errmsg(db));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	else
		REQUIRE(rc == SQLITE_DONE, "step %s: %d %s", sql, rc, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return v;
}

/* PRAGMA integrity_check's rows, joined; "ok" when sound. */
static inline void sqt_integrity(sqlite3 *db, char *out, size_t len)
{
	sqlite3_stmt *st;
	size_t n = 0;
	int rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL);

	out[0] = 0;
	if (rc != SQLITE_OK) {
		snprintf(out, len, "prepare: %d %s", rc, sqlite3_errmsg(db));
		return;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && n + 1 < len)
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "; " : "",
				      (const char *)sqlite3_column_text(st, 0));
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		snprintf(out + n, len - n, " step: %d %s", rc, sqlite3_errmsg(db));
	sqlite3_finalize(st);
}

#define sqt_check_integrity(db, what)                                               \
	({                                                                          \
		char sqt_ic_[512];                                                  \
		sqt_integrity((db), sqt_ic_, sizeof(sqt_ic_));                      \
		CHECK(!strcmp(sqt_ic_, "ok"), "%s: integrity_check: %s", (what), sqt_ic_); \
	})

/* FNV-1a of every column of every row of sql (in its order), and the rows. */
static inline uint64_t sqt_hash(sqlite3 *db, const char *sql, int64_t *rows)
{
	sqlite3_stmt *st;
	uint64_t h = 0xcbf29ce484222325ull;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	REQUIRE(rc == SQLITE_OK, "prepare %s: %s", sql, sqlite3_errmsg(db));
	*rows = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const unsigned char *p = sqlite3_column_blob(st, i);
			int n = sqlite3_column_bytes(st, i);

			h = (h ^ (uint64_t)sqlite3_column_type(st, i)) * 0x100000001b3ull;
			for (int k = 0; k < n; k++)
				h = (h ^ p[k]) * 0x100000001b3ull;
		}
		++*rows;
	}
	REQUIRE(rc == SQLITE_DONE, "step %s: %d %s", sql, rc, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return h;
}

#endif /* LPC_TESTS_SQLITE_SQLITE_TEST_H */
