/* SPDX-License-Identifier: MIT */
/*
 * ra_share.pml - readahead's share split between streams (filemap/
 * ra_worker.c Q5, QS1-QS3; readahead.c S1, A2): sequential streams that each
 * keep two windows in flight (a marker's window is started while the
 * window that holds the marker may still be at the device), their windows
 * sized from the streams active, their pages reserved from a share of SHARE
 * pages.  Checked exhaustively by spin; the broken variants (-DBUG_*) must
 * be caught.
 *
 * The world: two streams (NS); either may start first, the other joins at
 * any point (their first sizing, QS1, makes them active; none ages out here,
 * each reads NW windows).  A stream:
 *   - sizes its next window only when at most one of its windows is still
 *     in flight: its reader is at the first page of its newest window (the
 *     marker), so the window before that one was read (readahead.c A1-A2);
 *   - sizes it (QS1-QS2, one step: lpc_ra_window_cap under w->lock): the
 *     ramp (INIT, then x2 up to MAX, ra_max: half the share, as a lone
 *     stream's two windows fill it) capped at SHARE / (2 x active), the
 *     caller counted;
 *   - reserves it (Q5, another step under the lock: lpc_ra_reserve, later):
 *     at most what is left of SHARE; the grant is in flight from then on
 *     (the job's pages) until the device completes it.
 * The device completes each stream's windows in order, at any time.
 *   used            Q5: pages reserved or in flight (npages + respages)
 *   fl[s], flp[s][] the stream's windows in flight (oldest first): pages,
 *   fla[s][]        and the active count each was sized with
 *   nactive         QS1's count
 * Properties (asserts, rule RA-SHARE): used never passes SHARE (Q5); a
 * window is cut (granted less than it was sized) only while some window in
 * flight, or the one being reserved, was sized with fewer streams active
 * than now (QS3: sized before a stream joined); so once every window in
 * flight was sized with every stream active, no stream's window is cut.
 * Broken variants:
 *   BUG_NO_SPLIT      windows sized without the split (up to MAX whatever
 *                     the streams: the code before QS2): two streams' four
 *                     windows ask for twice the share, one is cut
 *   BUG_SELF_UNCOUNTED  the active count leaves out the caller (a stream
 *                     that has not sized a window yet, or itself): with two
 *                     streams, each takes half the share per window
 */
#define NS 2
#ifndef NW
#define NW 4
#endif
#define SHARE 8
#define INIT 2
#define MAX 4 /* ra_max: two windows of a lone stream fill the share */

byte used, nactive;
byte fl[NS];
byte flp[NS * 2], fla[NS * 2]; /* stream s's slots: 2s (oldest), 2s + 1 */
bool joined[NS];

/* Some window in flight sized with fewer than `a` streams active. */
#define STALE(a) ((fl[0] > 0 && fla[0] < a) || (fl[0] > 1 && fla[1] < a) || \
		  (fl[1] > 0 && fla[2] < a) || (fl[1] > 1 && fla[3] < a))

proctype stream(byte s)
{
	byte k, size, cur, got, a, cap;

	for (k : 1 .. NW) {
		(fl[s] <= 1); /* the reader is at its newest window's marker */
		atomic {					/* QS1-QS2 */
			if
			:: !joined[s] -> joined[s] = true; nactive++
			:: else -> skip
			fi;
			a = nactive;
			if
			:: cur == 0 -> size = INIT
			:: cur > 0 && cur * 2 <= MAX -> size = cur * 2
			:: else -> size = MAX
			fi;
#ifdef BUG_SELF_UNCOUNTED
			cap = SHARE / (2 * (a > 1 -> a - 1 : 1));
#else
			cap = SHARE / (2 * a);
#endif
#ifndef BUG_NO_SPLIT
			if
			:: size > cap -> size = cap
			:: else -> skip
			fi;
#endif
			cur = size
		}
		atomic {					/* Q5 */
			got = (SHARE - used < size -> SHARE - used : size);
			used = used + got;
			assert(used <= SHARE);
			/* QS3: a cut only while a window sized with fewer
			 * streams active is in flight, or is this one */
			assert(got == size || a < nactive || STALE(nactive));
			flp[2 * s + fl[s]] = got;
			fla[2 * s + fl[s]] = a;
			fl[s]++
		}
	}
}

/* The device: completes a stream's oldest window, any time. */
active proctype device()
{
end:	do
	:: atomic {
		fl[0] > 0 ->
		used = used - flp[0];
		flp[0] = flp[1]; fla[0] = fla[1]; fl[0]--
	   }
	:: atomic {
		fl[1] > 0 ->
		used = used - flp[2];
		flp[2] = flp[3]; fla[2] = fla[3]; fl[1]--
	   }
	od
}

init
{
	atomic {
		run stream(0);
		run stream(1)
	}
}
