/* SPDX-License-Identifier: MIT */
/*
 * steal.pml - taking a thread's private free list while its owner works on
 * it with plain loads and stores (src/page/alloc.c: S1-S3 and T1-T4).  Checked exhaustively by spin (see README.md).
 *
 * The world: NF = 3 frames, NO = 2 owner threads, one taker (the reclaimer,
 * which holds reclaim_lock, so there is only one).  At the start every frame
 * is on the shared list.
 *
 *   head[o]      owner o's private list (t->free), NONE if empty
 *   next[f]      the link in frame f (p->next)
 *   steal[o]     the flag t->steal
 *   in_rs[o]     owner o is inside an RCU read section
 *   where[f]     ghost: SHARED, HELD(o) (allocated by o) or LIST(o); updated
 *                at the instant the C code's store makes the move
 *
 * Processes (steps are the labels; README.md maps them to the C code):
 *   owner(o)   lpc_page_alloc_frame and lpc_page_free_private, R times in
 *              all: pop its list, or take from the shared list and keep a
 *              spare on its list; push a frame it holds, or free it to the
 *              shared list.  S1 enters a read section and reads the flag; a
 *              pop or push is two steps (load head, then store head), as in C.
 *   taker      reclaim -> steal_begin/steal_end: T1 flag both owners,
 *              T2 the grace period, T3 take each flagged list to the shared
 *              list, T4 clear the flag; ROUNDS times.
 *
 * Grace period model (as in spec_get.pml): T2 waits, owner by owner, until
 * in_rs[o] is 0 at some instant after T1.  Memory is sequentially
 * consistent here; in C, the grace period's membarrier(2) is what forbids
 * the store-buffering outcome (owner misses the flag, taker misses the read
 * section) that SC rules out.
 *
 * What is checked, by assertions: every move of a frame starts where the
 * ghost says the frame is (a pop takes a frame that is on this owner's list,
 * the taker moves frames that are on the list it took), so no frame is ever
 * handed out twice or on two lists; and at the end every frame is exactly
 * where the lists say (none lost, none on two lists).
 *
 * Broken variants (spin -DBUG_...), each must make the check fail:
 *   BUG_NO_GRACE_STEAL      the taker skips T2 and takes the lists at once:
 *                           an owner between loading and storing its head
 *                           hands out a frame the taker already moved
 *   BUG_OWNER_IGNORES_FLAG  S1 does not read the flag: a section that starts
 *                           after the grace period works on the list while
 *                           the taker moves it
 */

#define NF 3
#define NO 2
#ifndef R
#define R 3
#endif
#ifndef ROUNDS
#define ROUNDS 1
#endif
#define NONE 255
#define SHARED 0
#define HELD(o) (1 + (o))
#define LIST(o) (1 + NO + (o))

#ifdef BUG_OWNER_IGNORES_FLAG
#define FLAGGED(o) false
#else
#define FLAGGED(o) steal[o]
#endif

byte head[NO];
byte next[NF];
bool steal[NO];
bool in_rs[NO];
byte where[NF];
byte done;

/* Takes one frame off the shared list (under free_lock: one step). */
inline shared_take(f, o)
{
	atomic {
		f = NONE;
		if
		:: where[0] == SHARED -> f = 0
		:: where[1] == SHARED -> f = 1
		:: where[2] == SHARED -> f = 2
		:: else
		fi;
		if
		:: f != NONE -> where[f] = HELD(o)
		:: else
		fi
	}
}

proctype owner(byte o)
{
	byte n, f, g, h, held[NF];

	n = 0;
	do
	:: n < R ->
		n++;
		if
		:: /* allocate */ true ->
S1a:			in_rs[o] = 1;
			if
			:: !FLAGGED(o) ->
S2a:				h = head[o];		/* p = t->free */
				if
				:: h != NONE ->
					g = next[h];
S2b:					atomic {		/* t->free = p->next */
						head[o] = g;
						assert(where[h] == LIST(o));
						where[h] = HELD(o)
					};
					held[h] = 1
				:: else ->
					shared_take(f, o);
					if
					:: f != NONE -> held[f] = 1;
						/* keep a spare: t->free = p->next */
						shared_take(g, o);
						if
						:: g != NONE ->
							next[g] = NONE;
S2c:							atomic {
								head[o] = g;
								where[g] = LIST(o)
							}
						:: else
						fi
					:: else
					fi
				fi
			:: else ->	/* being taken: shared list only */
				shared_take(f, o);
				if :: f != NONE -> held[f] = 1 :: else fi
			fi;
S3a:			in_rs[o] = 0
		:: /* free one it holds */ true ->
			f = NONE;
			if
			:: held[0] -> f = 0
			:: held[1] -> f = 1
			:: held[2] -> f = 2
			:: else
			fi;
			if
			:: f != NONE ->
				held[f] = 0;
S1f:				in_rs[o] = 1;
				if
				:: !FLAGGED(o) ->
S2f:					next[f] = head[o];	/* p->next = t->free */
S2g:					atomic {		/* t->free = p */
						assert(where[f] == HELD(o));
						head[o] = f;
						where[f] = LIST(o)
					}
				:: else ->
					atomic {
						assert(where[f] == HELD(o));
						where[f] = SHARED
					}
				fi;
S3f:				in_rs[o] = 0
			:: else
			fi
		fi;
		d_step { f = NONE; g = NONE; h = NONE } /* dead values: fewer states */
	:: else -> break
	od;
	done++
}

proctype taker()
{
	byte r, o, f, h;

	r = 0;
	do
	:: r < ROUNDS ->
		r++;
T1:		steal[0] = 1;
		steal[1] = 1;
#ifndef BUG_NO_GRACE_STEAL
T2:		o = 0;
		do
		:: o < NO -> (in_rs[o] == 0); o++
		:: else -> break
		od;
#endif
		o = 0;
		do
		:: o < NO ->
T3:			atomic {	/* lpc_threads_lock held; the owner is off */
				h = head[o];
				head[o] = NONE;
				do
				:: h != NONE ->
					assert(where[h] == LIST(o));
					where[h] = SHARED;
					f = next[h];
					h = f
				:: else -> break
				od
			};
T4:			steal[o] = 0;
			o++
		:: else -> break
		od
	:: else -> break
	od;
	done++
}

init {
	byte f, o, h, n, onlists;

	atomic {
		head[0] = NONE;
		head[1] = NONE;
		run owner(0);
		run owner(1);
		run taker()
	};
	(done == NO + 1);
	/* Every frame the ghost puts on a list is on that list, exactly once. */
	onlists = 0;
	o = 0;
	do
	:: o < NO ->
		h = head[o];
		n = 0;
		do
		:: h != NONE ->
			assert(where[h] == LIST(o));
			n++;
			assert(n <= NF);
			h = next[h]
		:: else -> break
		od;
		onlists = onlists + n;
		o++
	:: else -> break
	od;
	n = 0;
	f = 0;
	do
	:: f < NF -> if :: where[f] == LIST(0) || where[f] == LIST(1) -> n++ :: else fi; f++
	:: else -> break
	od;
	assert(n == onlists)
}
