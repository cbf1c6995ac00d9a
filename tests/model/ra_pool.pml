/* SPDX-License-Identifier: MIT */
/*
 * ra_pool.pml - the readahead threads (filemap/ra_worker.c Q0-Q5): runs of
 * read-ahead pages queued by one thread and read by a pool of others, with
 * a per-file cap on the threads reading one file's runs, against a file
 * whose device stalls, a reader waiting on a queued run's page, the last
 * close (Q3) and destroy (Q4); how Q5's share is split between streams
 * (QS1-QS3) is ra_share.pml's.  Checked exhaustively by spin; the broken
 * variants (-DBUG_*) must be caught.
 *
 * The world: two files, A (1) and B (2).  A's device completes a read only
 * after B's reader got its page (A is the slower device, without bound:
 * if anything made B's read wait for A's, the system would stop, and spin
 * reports the invalid end state).  The submitter queues A's two runs, then
 * B's one, then a third of A's (Q0-Q1: each run of one page, reserved from
 * readahead's share first, Q5, then inserted LOCKED; a run the share
 * refuses is not read ahead: its reader would read it on demand).
 *   q[], n         the queue, oldest first (Q1 appends, Q2 takes any slot)
 *   inflight[f]    runs of f queued or being read (Q1 +1, Q2's end - the
 *                  batch's runs)
 *   reading[f]     threads reading runs of f (Q2's cap: < CAP to take one)
 *   locked[f]      pages of f LOCKED by runs (Q0 +1, each run's U5 - 1)
 *   freed[f]       f's frames are freed (the last close, or destroy)
 *   respages, npages  Q5: pages reserved by a window being built, pages of
 *                  the queued and running runs (SHARE at most together)
 *   stop, exited   Q4
 * Q2 takes a batch: the job it picks and the queued jobs of the same file
 * after it, BATCH at most, read together (one batched read).  Each run's
 * U5 comes at its own completion, outside the lock, before the batch's
 * accounting under it (io.c RQ3: the run's pages unlocked while others
 * are at the device).  A file's device here completes its runs together,
 * so a reader of one run of a batch waiting for another run of the same
 * file is not what this model checks (tests/regress/regress_qd_hol.c
 * does, with one run held at the device).
 * Properties: no frame is freed while a thread reads into it (assert at
 * the read); B's reader gets its page whatever A's device does (no invalid
 * end state: every process ends); after destroy's join no run is queued
 * and no page is locked (assert); readahead's reservations and runs never
 * pass SHARE, nor do the pages runs hold LOCKED (assert, rule RA-SHARE).
 * The condition variable is modelled (Q1's and Q2's targeted signals, a
 * signal lost when no thread is asleep, stop's broadcast): no job waits
 * while every thread sleeps.  The thread start of Q1 is not (NT threads
 * from the beginning).  Q2's chain wake matters only with more threads
 * than here (a thread signalled for one job takes another); it is kept.
 * Broken variants:
 *   BUG_NO_CAP       any thread takes any job (a queue in order): both
 *                    threads take A's runs, and B's waits behind them
 *   BUG_NO_SUBMIT_WAKE  Q1 signals nobody: the jobs wait, the threads sleep
 *   BUG_SLEEP_AFTER_JOB  a thread done with a job sleeps without looking
 *                    for the next (the job its file's cap held back)
 *   BUG_EXIT_NO_WAKE  a thread that leaves on stop wakes nobody: one that
 *                    slept on a capped job after stop's broadcast stays
 *   BUG_ONE_THREAD   the single readahead thread of before
 *   BUG_CLOSE_NO_WAIT  the last close frees without Q3's wait
 *   BUG_STOP_EARLY   a thread exits on stop with jobs still queued
 *   BUG_BATCH_ANY_FILE  a batch takes the queued jobs after the first of
 *                    any file: B's run is read with A's and waits for A's
 *                    device (the head-of-line the one-file batch prevents)
 *   BUG_SHARE_AT_TAKE  a batch's pages leave Q5's count when the batch is
 *                    taken, not at its U5: the submitter reserves more
 *                    while they are still locked (past SHARE)
 */
#define A 1
#define B 2

#ifdef BUG_ONE_THREAD
#define NT 1
#else
#define NT 2
#endif
#ifdef BUG_NO_CAP
#define CAP NT
#else
#define CAP 1 /* LPC_RA_PER_FILE: half the threads */
#endif

#define BATCH 3 /* LPC_RUN_BATCH: room for every queued job */
#ifdef BUG_BATCH_ANY_FILE
#define ANYFILE 1
#else
#define ANYFILE 0
#endif
#define SHARE 3 /* a quarter of the frames */

byte q[4];
byte n;
byte inflight[3], reading[3], locked[3];
bool freed[3];
byte respages, npages;
bool stop, b_sub, b_got, b_closed, sub_done;
byte exited;
/* The condition variable `cond`: waiting[t] from a thread's wait until it
 * holds the lock again (w->nidle counts them), asleep[t] until it is
 * signalled.  A signal wakes one asleep thread, or none if every waiting
 * thread was signalled already (it is lost: glibc's too). */
bool waiting[NT], asleep[NT];
byte nidle;

#define EL(i) (n > i && reading[q[i]] < CAP)
#define ANY_EL (EL(0) || EL(1) || EL(2) || EL(3))
/* Q5's bound and what it is for: the pages locked by runs. */
#define SHARE_OK (npages + respages <= SHARE && locked[A] + locked[B] <= SHARE)

inline signal_one()
{
	atomic {
		if
		:: asleep[0] -> asleep[0] = false
		:: NT > 1 && asleep[NT - 1] -> asleep[NT - 1] = false
		:: else -> skip
		fi
	}
}

inline submit(f)
{
	atomic {					/* Q5: lpc_ra_reserve */
		if
		:: npages + respages < SHARE ->
			respages++;
			granted = true
		:: else -> granted = false
		fi;
		assert(SHARE_OK)
	}
	if
	:: granted ->
		locked[f]++; /* Q0: inserted LOCKED */
		assert(SHARE_OK);
		atomic {
			q[n] = f; /* Q1: the grant becomes the job's */
			n++;
			inflight[f]++;
			respages--;
			npages++;
			assert(SHARE_OK);
			wake = nidle > 0 && ANY_EL
		}
#ifndef BUG_NO_SUBMIT_WAKE
		if
		:: wake -> signal_one() /* after the unlock */
		:: else -> skip
		fi
#endif
	:: else -> skip /* the window ends: read on demand */
	fi
}

active proctype submitter()
{
	bool wake, granted;

	submit(A);
	submit(A);
	submit(B);
	b_sub = true;
	submit(A);
	sub_done = true
}

active [NT] proctype worker()
{
	byte f, i, j, nb;
	byte bf[BATCH];
	bool have, wake;

	do
	:: atomic {
		if
		:: have -> /* the end of Q2, and the next look in the same hold */
			j = 0; /* the batch's runs, each ended at its U5 below */
			do
			:: j < nb -> inflight[bf[j]]--; j++
			:: else -> break
			od;
			reading[f]--;
#ifndef BUG_SHARE_AT_TAKE
			npages = npages - nb;
#endif
			have = false
#ifdef BUG_SLEEP_AFTER_JOB
			/* the thread neither looks again nor is woken: it waits */
			; waiting[_pid - 1] = true; asleep[_pid - 1] = true; nidle++;
			goto slept
#endif
		:: else -> skip
		fi;
		if
#ifdef BUG_STOP_EARLY
		:: stop -> goto done
#else
		:: n == 0 && stop -> goto done
#endif
		:: ANY_EL ->
			if
			:: EL(0) -> i = 0
			:: else -> if
				   :: EL(1) -> i = 1
				   :: else -> i = 2
				   fi
			fi;
			f = q[i];					/* Q2 */
			nb = 0;
			/* the batch: slot i, then the later jobs of f */
			do
			:: i < n && nb < BATCH && (nb == 0 || q[i] == f || ANYFILE) ->
				bf[nb] = q[i];
				nb++;
				j = i;
				do
				:: j + 1 < n -> q[j] = q[j + 1]; j++
				:: else -> break
				od;
				n--;
				q[n] = 0
			:: i < n && nb < BATCH && nb > 0 && q[i] != f && !ANYFILE -> i++
			:: else -> break
			od;
#ifdef BUG_SHARE_AT_TAKE
			npages = npages - nb;
#endif
			reading[f]++;
			have = true;
			wake = nidle > 0 && ANY_EL
		:: else -> /* pthread_cond_wait: unlock and sleep, one step */
			waiting[_pid - 1] = true;
			asleep[_pid - 1] = true;
			nidle++
		fi
	   }
		if
		:: have ->
			if
			:: wake -> signal_one() /* Q2's chain wake, after the unlock */
			:: else -> skip
			fi;
			/* the device: A's completes only after B's reader got its page */
			if
			:: bf[0] == A || (nb > 1 && bf[1] == A) || (nb > 2 && bf[2] == A) -> b_got
			:: else -> skip
			fi;
			/* no frame reused while the device writes */
			assert(!freed[bf[0]] && (nb < 2 || !freed[bf[1]]) && (nb < 3 || !freed[bf[2]]));
			/* U5 run by run, each its own step, without the lock */
			j = 0;
			do
			:: j < nb -> locked[bf[j]]--; j++
			:: else -> break
			od
		:: else ->
slept:
			(!asleep[_pid - 1]);
			atomic { waiting[_pid - 1] = false; nidle-- }
		fi
	od;
done:
	/* Q4: the first to leave wakes the others: one that slept on a
	 * job held back by the cap after stop's broadcast sees n == 0 now. */
	atomic {
		exited++;
#ifndef BUG_EXIT_NO_WAKE
		asleep[0] = false;
		asleep[NT - 1] = false
#endif
	}
}

/* A reader of B's page (M6: it waits on the page's lock). */
active proctype reader_b()
{
	b_sub;
	(locked[B] == 0);
	b_got = true
}

/* B's last close, any time after its run was queued (Q3: it waits until
 * no run of B is queued or being read, then frees B's pages). */
active proctype close_b()
{
	b_sub;
#ifndef BUG_CLOSE_NO_WAIT
	(inflight[B] == 0);						/* Q3 */
#endif
	freed[B] = true;
	b_closed = true
}

/* lpc_cache_destroy after B's close: stop, join every thread (Q4), then
 * the arena (A's frames too) is freed. */
active proctype destroy()
{
	b_closed && b_got && sub_done; /* no call in flight: the caller's rule */
	atomic { stop = true; asleep[0] = false; asleep[NT - 1] = false } /* broadcast */
	(exited == NT);
	assert(n == 0 && locked[A] == 0 && locked[B] == 0 && npages == 0);
	freed[A] = true
}
