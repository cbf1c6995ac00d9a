/* SPDX-License-Identifier: MIT */
/*
 * stream.h - the read stream's state (filemap/stream.c, steps ST1-ST4
 * there), here for the LPC_DEBUG build's death tests, which break its
 * bookkeeping on purpose (rules STREAM-BOUND, STREAM-TWICE).  Only the
 * thread that calls lpc_stream_next touches it.
 */
#ifndef LPC_FILEMAP_STREAM_H
#define LPC_FILEMAP_STREAM_H

#include "filemap/filemap.h"

/* Ring entry flags. */
#define LPC_STREAM_CLAIMED 1u /* absent when taken: a frame of the bound (ST1) */
#define LPC_STREAM_HANDED 2u  /* handed out (ST3; rule STREAM-TWICE) */

struct lpc_stream {
	struct lpc_file *f;
	lpc_stream_cb *cb;
	void *arg;
	const uint64_t *indices; /* array mode (cb NULL) */
	void *const *users;
	size_t n, pos;
	uint32_t max_distance, max_pages, distance;
	uint32_t head, count;	/* the ring: entries [head, head + count) */
	uint32_t claimed;	/* ST1's claims of the entries in the ring */
	uint32_t pend;		/* entries in the pending run */
	uint64_t run_s, run_e;	/* the pending run (ST2), run_s == run_e: none */
	uint64_t taken;		/* entries handed out: the head's number */
	uint64_t run_first;	/* the number of the pending run's first entry */
	uint32_t hits;		/* ST3: entries taken in a row that were cached
				 * when the fill saw them (no I/O, no claim) */
	bool ended;
	int cb_err;
	struct lpc_stream_ent {
		uint64_t index;
		void *user;
		unsigned flags;
	} ring[];
};

#endif /* LPC_FILEMAP_STREAM_H */
