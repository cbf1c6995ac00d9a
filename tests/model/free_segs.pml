/* SPDX-License-Identifier: MIT */
/*
 * free_segs.pml - the shared free list as a stack of segments under
 * free_lock, the threads' private lists, pending and the census
 * (src/page/alloc.c: SG1-SG4, SP1-SP3, S2, PD1-PD3, CS1-CS3; rules SEG-COUNT
 * and FRAMES-ACCOUNTED).  Checked exhaustively by spin (see README.md).
 *
 * The world: NF = 4 frames, all fresh at the start (pool.h: [fresh,
 * nframes) never handed out), NT = 2 threads, tbatch TB = 2.
 *
 *   next[f]          the link in frame f (p->next)
 *   seg_n[f],
 *   seg_next[f]      a segment head's count and the next head (page.h fl)
 *   sfree, nfree     the top segment (c->free) and the count of frames on
 *                    the segments plus the fresh ones (c->nfree)
 *   fresh            the first fresh frame (c->fresh)
 *   pending, ptail,
 *   npending, bif    pending (c->pending, pending_tail, npending) and
 *                    batches_in_flight
 *   t_free[t],
 *   t_nfree[t]       thread t's private list (t->free, t->nfree)
 *   holder[f]        ghost: the thread that holds frame f (allocated, ref
 *                    1), NIL when free
 *
 * Processes (the labels' comments name alloc.c's steps):
 *   worker(t)   OPS times one of: an allocation (lpc_page_alloc_frame's
 *               first round: S2 pop its list, else shared_take: SP1 the top
 *               segment whole or SP1-SP3 split, or fresh_carve; the rest
 *               of what it took kept on its list), a private free
 *               (lpc_page_free_private: S2 push, SG4 a segment spilled
 *               when the list is over SPILL; below LOW free frames, SG1-SG2
 *               to the shared list instead), or a deferred free (PD1,
 *               lpc_page_free_evicted: on pending).  Then it exits
 *               (lpc_pool_thread_exit: its list back, SG1-SG2); the frames
 *               it still holds stay in use.
 *   reclaimer   DRAINS times lpc_page_pending_drain: PD2 takes pending
 *               (counted in flight), T2 the grace period, PD3 frees the
 *               chain (SG1 cut, SG2 push) and uncounts it.
 *   census      lpc_pool_census while the others run: CS1 trylock of
 *               reclaim_lock, CS3 under free_lock: SEG-COUNT on every
 *               segment and segments + fresh == nfree (CS2, the private
 *               lists, is left to the quiet census: the C census reads
 *               them without their owners' consent, so tests call it only
 *               on a quiet pool).
 *   init        once every process is done: the quiet census, CS1-CS3
 *               and FRAMES-ACCOUNTED.
 *
 * Abstractions: a thread's allocation asks for `want` frames, any of 1..TB
 * (the C code's min(tbatch, nfree / 8 or 1, nfree - keep): every value is
 * reachable with a large enough pool); SPILL = 1 and LOW = 1 stand for
 * 2 * tbatch and low_free (the threshold's value does not matter to the
 * segments, only that a spill happens: with SPILL 1, a thread that took a
 * segment of two and frees one frame spills a segment of two).  OPS = 2
 * operations per thread and DRAINS = 1 keep the search at about 3 million
 * states (more operations grow it fast).  No readers and no reclaim()
 * (spec_get.pml has the grace period, steal.pml the taking of private
 * lists): T2 is a step here.  A critical section under free_lock is one
 * atomic step once the lock is held (only lock holders touch the
 * segments and pending; nfree's relaxed read outside the lock stays a
 * step of its own); a thread's work on a chain that is its own (SG1, a
 * pop or push of its private list) is one step, as nobody else can reach
 * it.
 *
 * What is checked, by assertions: a frame handed out is held by nobody
 * (FRAME-HANDED-OUT-TWICE); every segment taken is seg_n frames long and a
 * split finds its tail (SEG-COUNT, debug_segment); a chain freed ends at
 * its tail (PENDING-CHAIN); the concurrent census (SEG-COUNT); and once
 * quiet, every frame is in exactly one place (a segment, fresh, a private
 * list, pending, or held) and every count is its list's length
 * (FRAMES-ACCOUNTED): none lost, none duplicated.
 *
 * Broken variants (spin -DBUG_...), each must make the check fail:
 *   BUG_SPLIT_MISCOUNT  SP2 gives the rest seg_n one too many
 *   BUG_NO_SP3          a split does not end the taker's part (SP3): the
 *                       taker's chain runs into the rest
 *   BUG_PUSH_TWICE      SG4's spilled segment is pushed twice
 */

#define NF 4
#define NT 2
#define TB 2
#define SPILL 1
#define LOW 1
#define HMAX 2
#ifndef OPS
#define OPS 2
#endif
#ifndef DRAINS
#define DRAINS 1
#endif
#define NIL 255

byte next[NF];
byte seg_n[NF];
byte seg_next[NF];
byte sfree = NIL;
byte nfree = NF;
byte fresh = 0;
byte pending = NIL;
byte ptail = NIL;
byte npending = 0;
byte bif = 0;
bit free_lock;
bit reclaim_lock;
byte t_free[NT];
byte t_nfree[NT];
byte holder[NF];
byte done = 0;

inline lock(l)
{
	atomic { l == 0 -> l = 1 }
}

inline unlock(l)
{
	l = 0
}

/* segs_push: SG2, under free_lock. */
inline segs_push(sfirst, slast, sn)
{
	lock(free_lock);
	d_step {
		seg_next[slast] = sfree;				/* SG2 */
		sfree = sfirst;
		nfree = nfree + sn
	};
	unlock(free_lock)
}

/* lpc_page_free_chain: SG1 (the chain ch..ct, cn frames, is ours) then SG2. */
inline free_chain(ch, ct, cn)
{
	d_step {							/* SG1 */
		left = cn;
		q = ch;
		first = NIL;
		last = NIL;
		endf = NIL;
		do
		:: left == 0 -> break
		:: else ->
			k = (left < TB -> left : TB);
			h = q;
			t = q;
			i = 1;
			do
			:: i < k -> assert(next[t] != NIL); t = next[t]; i++
			:: else -> break
			od;
			left = left - k;
			if
			:: left > 0 -> assert(next[t] != NIL); q = next[t]
			:: else -> skip
			fi;
			next[t] = NIL;
			endf = t;
			seg_n[h] = k;
			seg_next[h] = NIL;
			if
			:: last != NIL -> seg_next[last] = h
			:: else -> first = h
			fi;
			last = h
		od;
		assert(endf == ct)					/* PENDING-CHAIN */
	};
	if
	:: first != NIL -> segs_push(first, last, cn)
	:: else -> skip
	fi
}

/* shared_take(want): SP1-SP3 or fresh_carve under free_lock, then SG3.
 * Leaves the chain in head (NIL if none) and its length in got. */
inline shared_take()
{
	lock(free_lock);
	d_step {
		got = 0;
		head = NIL;
		s = sfree;
		if
		:: nfree == 0 -> skip
		:: else ->
			if
			:: want > nfree -> want = nfree
			:: else -> skip
			fi;
			if
			:: s != NIL && seg_n[s] <= want ->		/* SP1: whole */
				head = s;
				got = seg_n[s];
				sfree = seg_next[s]
			:: s != NIL && seg_n[s] > want ->		/* SP1: split */
				head = s;
				t = s;
				got = 1;
				do
				:: got < want -> assert(next[t] != NIL); t = next[t]; got++
				:: else -> break
				od;
				assert(next[t] != NIL);			/* SEG-COUNT */
				sfree = next[t];			/* SP2 */
#ifdef BUG_SPLIT_MISCOUNT
				seg_n[sfree] = seg_n[s] - got + 1;
#else
				seg_n[sfree] = seg_n[s] - got;
#endif
				seg_next[sfree] = seg_next[s];
#ifndef BUG_NO_SP3
				next[t] = NIL;				/* SP3 */
#endif
				skip
			:: s == NIL ->					/* fresh_carve */
				first = fresh;
				got = (NF - fresh < want -> NF - fresh : want);
				fresh = fresh + got
			fi;
			nfree = nfree - got
		fi
	};
	unlock(free_lock);
	d_step {							/* SG3 */
		if
		:: got > 0 && s == NIL ->				/* fresh_init */
			head = first;
			i = first;
			do
			:: i + 1 < first + got -> next[i] = i + 1; i++
			:: else -> break
			od;
			next[i] = NIL
		:: got > 0 && s != NIL ->		/* debug_segment: SEG-COUNT */
			t = head;
			k = 1;
			do
			:: k <= NF && next[t] != NIL -> t = next[t]; k++
			:: else -> break
			od;
			assert(k == got)
		:: else -> skip
		fi
	}
}

proctype worker(byte me)
{
	byte p, head, tail, t, s, q, h, k, i, first, last, left, endf, n, want, got;
	byte nheld = 0, ops = 0;

	do
	:: ops == OPS -> break
	:: else ->
		ops++;
		if
		:: nheld < HMAX ->
			/* lpc_page_alloc_frame; S1 finds no taker (steal.pml) */
			if
			:: t_free[me] != NIL ->
				d_step {				/* S2: pop */
					p = t_free[me];
					t_free[me] = next[p];
					t_nfree[me]--
				}
			:: else ->
				if
				:: want = 1
				:: want = TB
				fi;
				shared_take();
				p = head;
				if
				:: got > 1 ->	/* keep the rest on the list */
					t_free[me] = next[p];
					t_nfree[me] = got - 1
				:: else -> skip
				fi
			fi;
			if
			:: p != NIL ->
				d_step {			/* page_init_private */
					assert(holder[p] == NIL);	/* FRAME-HANDED-OUT-TWICE */
					holder[p] = me;
					next[p] = NIL;
					nheld++
				}
			:: else -> skip	/* would reclaim(): outside this model */
			fi
		:: nheld > 0 ->
			/* a frame it holds: freed privately or deferred */
			if
			:: holder[0] == me -> p = 0
			:: holder[1] == me -> p = 1
			:: holder[2] == me -> p = 2
			:: holder[3] == me -> p = 3
			fi;
			holder[p] = NIL;
			nheld--;
			if
			:: nfree < LOW ->		/* lpc_page_free_private: shared */
				free_chain(p, p, 1)
			:: nfree >= LOW ->		/* lpc_page_free_private */
				d_step {				/* S2: push */
					next[p] = t_free[me];
					t_free[me] = p;
					n = t_nfree[me] + 1;
					if
					:: n <= SPILL -> t_nfree[me] = n; head = NIL
					:: else ->			/* SG4 */
						head = t_free[me];
						t = head;
						i = 1;
						do
						:: i < TB -> t = next[t]; i++
						:: else -> break
						od;
						t_free[me] = next[t];
						next[t] = NIL;
						seg_n[head] = TB;
						seg_next[head] = NIL;
						t_nfree[me] = n - TB
					fi
				};
				if
				:: head != NIL ->
					segs_push(head, head, TB);
#ifdef BUG_PUSH_TWICE
					segs_push(head, head, TB);
#endif
					skip
				:: else -> skip
				fi
			:: true ->			/* lpc_page_free_evicted */
				lock(free_lock);
				d_step {				/* PD1 */
					next[p] = pending;
					if
					:: pending == NIL -> ptail = p
					:: else -> skip
					fi;
					pending = p;
					npending++
				};
				unlock(free_lock)
			fi
		fi;
		d_step {	/* dead locals */
			p = 0; head = 0; tail = 0; t = 0; s = 0; q = 0; h = 0; k = 0; i = 0;
			first = 0; last = 0; left = 0; endf = 0; n = 0; want = 0; got = 0
		}
	od;
	/* lpc_pool_thread_exit: tcache_take, then SG1-SG2 */
	skip;
	d_step {
		head = t_free[me];
		tail = NIL;
		n = 0;
		t = head;
		do
		:: t != NIL && n <= NF -> tail = t; n++; t = next[t]
		:: else -> break
		od;
		t_free[me] = NIL;
		t_nfree[me] = 0
	};
	if
	:: n > 0 -> free_chain(head, tail, n)
	:: else -> skip
	fi;
	done++
}

/* lpc_page_pending_drain */
proctype reclaimer()
{
	byte head, tail, t, q, h, k, i, first, last, left, endf, n, r = 0;

	do
	:: r == DRAINS -> break
	:: else ->
		r++;
		lock(reclaim_lock);
		lock(free_lock);
		d_step {						/* PD2 */
			head = pending;
			tail = ptail;
			n = npending;
			pending = NIL;
			ptail = NIL;
			npending = 0;
			if
			:: head != NIL -> bif++
			:: else -> skip
			fi
		};
		unlock(free_lock);
		if
		:: head != NIL ->
			skip;						/* T2 */
			d_step {				/* debug_chain: PENDING-CHAIN */
				t = head;
				k = 1;
				do
				:: k <= NF && next[t] != NIL -> t = next[t]; k++
				:: else -> break
				od;
				assert(k == n && t == tail)
			};
			free_chain(head, tail, n);			/* PD3 */
			bif--
		:: else -> skip
		fi;
		unlock(reclaim_lock);
		d_step {	/* dead locals */
			head = 0; tail = 0; t = 0; q = 0; h = 0; k = 0; i = 0;
			first = 0; last = 0; left = 0; endf = 0; n = 0
		}
	od;
	done++
}

/* CS3's walk of the segments (free_lock held): SEG-COUNT on each, and
 * segments + fresh == nfree; the frames seen counted in seen[]. */
byte seen[NF];

inline census_segments()
{
	shared = 0;
	s = sfree;
	nseg = 0;
	do
	:: s != NIL && nseg <= NF ->
		k = 0;
		t = s;
		do
		:: t != NIL && k <= NF -> seen[t]++; k++; t = next[t]
		:: else -> break
		od;
		assert(k == seg_n[s] && k >= 1 && k <= TB);		/* SEG-COUNT */
		shared = shared + k;
		nseg++;
		s = seg_next[s]
	:: else -> break
	od;
	assert(s == NIL);	/* no cycle of segments */
	assert(shared + NF - fresh == nfree)				/* SEG-COUNT */
}

/* lpc_pool_census while the others run: CS1, CS3. */
proctype census()
{
	byte s, t, k, i, shared, nseg;
	bit ok;

	atomic {							/* CS1 */
		if
		:: reclaim_lock == 0 -> reclaim_lock = 1; ok = 1
		:: else -> ok = 0
		fi
	};
	if
	:: ok ->
		lock(free_lock);
		if
		:: bif > 0 -> skip	/* -EAGAIN: a batch not yet on the list */
		:: else ->
			d_step {					/* CS3 */
				i = 0;
				do
				:: i < NF -> seen[i] = 0; i++
				:: else -> break
				od;
				census_segments()
			}
		fi;
		unlock(free_lock);
		unlock(reclaim_lock)
	:: else -> skip	/* -EAGAIN: a drain holds frames */
	fi;
	done++
}

init {
	byte s, t, k, shared, nseg, i, n, inuse, total;

	atomic {
		i = 0;
		do
		:: i < NF -> holder[i] = NIL; next[i] = NIL; i++
		:: else -> break
		od;
		t_free[0] = NIL;
		t_free[1] = NIL;
		run worker(0);
		run worker(1);
		run reclaimer();
		run census()
	};
	done == NT + 2;
	/* The quiet census: CS1-CS3 and FRAMES-ACCOUNTED. */
	d_step {
		assert(reclaim_lock == 0 && free_lock == 0 && bif == 0);
		i = 0;
		do
		:: i < NF -> seen[i] = 0; i++
		:: else -> break
		od;
		census_segments();					/* CS3 */
		i = fresh;
		do
		:: i < NF -> seen[i]++; i++
		:: else -> break
		od;
		total = shared + NF - fresh;
		i = 0;
		do							/* CS2 */
		:: i < NT ->
			n = 0;
			t = t_free[i];
			do
			:: t != NIL && n <= NF -> seen[t]++; n++; t = next[t]
			:: else -> break
			od;
			assert(n == t_nfree[i]);			/* SEG-COUNT */
			total = total + n;
			i++
		:: else -> break
		od;
		n = 0;
		t = pending;
		do
		:: t != NIL && n <= NF -> seen[t]++; n++; t = next[t]
		:: else -> break
		od;
		assert(n == npending);
		total = total + n;
		inuse = 0;
		i = 0;
		do
		:: i < NF ->
			if
			:: holder[i] != NIL -> seen[i]++; inuse++
			:: else -> skip
			fi;
			assert(seen[i] == 1);	/* none lost, none in two places */
			i++
		:: else -> break
		od;
		assert(total + inuse == NF)				/* FRAMES-ACCOUNTED */
	}
}
