/* SPDX-License-Identifier: MIT */
/*
 * stream.h - the read stream's state (filemap/stream.c, steps ST1-ST7
 * there), here for the LPC_DEBUG build's death tests, which break its
 * bookkeeping on purpose (rules STREAM-BOUND, STREAM-TWICE, STREAM-HELD).  Only the
 * thread that calls lpc_stream_next touches it.
 */
#ifndef LPC_FILEMAP_STREAM_H
#define LPC_FILEMAP_STREAM_H

#include "filemap/filemap.h"

/* Ring entry flags. */
#define LPC_STREAM_CLAIMED 1u /* a frame of the bound: read ahead or held (ST1) */
#define LPC_STREAM_HANDED 2u  /* handed out (ST3; rule STREAM-TWICE) */
#define LPC_STREAM_ABSENT 4u  /* absent when the fill saw it: the stream reads it */
#define LPC_STREAM_PENDING 8u /* in the pending run, not handed to the readers yet (ST2) */

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
	uint32_t held;		/* entries whose page the stream holds (ST4) */
	uint32_t credit;	/* of the cache's stream_held, taken (ST6) */
	uint32_t pend;		/* entries in the pending run */
	uint64_t run_s, run_e;	/* the pending run (ST2), run_s == run_e: none */
	uint64_t taken;		/* entries handed out: the head's number */
	uint64_t run_first;	/* the number of the pending run's first entry */
	uint64_t inval_seq;	/* f->inval_seq when last looked at (ST5) */
	uint32_t hits;		/* ST3: entries taken in a row that were cached
				 * when the fill saw them (no I/O) */
	bool ended;
	int cb_err;
	/* ST2/ST4 b: the pending run's pages as its window inserted them,
	 * each with the stream's reference (max_distance entries, after the
	 * ring: a run's entries are in the ring) */
	struct lpc_page **run_pages;
	struct lpc_stream_ent {
		uint64_t index;
		void *user;
		struct lpc_page *page; /* held: one reference (ST4), or NULL */
		unsigned flags;
	} ring[];
};

#endif /* LPC_FILEMAP_STREAM_H */
