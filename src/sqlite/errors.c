/* SPDX-License-Identifier: MIT */
/*
 * errors.c - lpc's negative errno to a SQLite result code.
 *
 * The pager turns SQLITE_FULL into "database or disk is full" and
 * SQLITE_IOERR_NOMEM into SQLITE_NOMEM; every other failure is the method's
 * own extended I/O error, so that sqlite3_extended_errcode() says which
 * operation failed (SQLITE_IOERR_READ, _WRITE, _FSYNC, _TRUNCATE, _FSTAT).
 * A failed lpc_fsync is SQLITE_IOERR_FSYNC: the pager then fails the commit
 * (and rolls back from the journal, or leaves the WAL frame uncommitted), it
 * never reports success.
 */
#include <errno.h>

#include "sqlite_int.h"

int lpcs_errcode(long rc, int ioerr)
{
	switch (rc) {
	case 0:
		return SQLITE_OK;
	case -ENOSPC:
	case -EDQUOT:
	case -EFBIG:
		return SQLITE_FULL;
	case -ENOMEM:
		return SQLITE_IOERR_NOMEM;
	default:
		return ioerr;
	}
}
