/* SPDX-License-Identifier: MIT */
/*
 * ra_pool.pml - the readahead threads (filemap/ra_worker.c Q0-Q4): runs of
 * read-ahead pages queued by one thread and read by a pool of others, with
 * a per-file cap on the threads reading one file's runs, against a file
 * whose device stalls, a reader waiting on a queued run's page, the last
 * close (Q3) and destroy (Q4).  Checked exhaustively by spin; the broken
 * variants (-DBUG_*) must be caught.
 *
 * The world: two files, A (1) and B (2).  A's device completes a read only
 * after B's reader got its page (A is the slower device, without bound:
 * if anything made B's read wait for A's, the system would stop, and spin
 * reports the invalid end state).  The submitter queues A's two runs, then
 * B's one (Q0-Q1: each run's page inserted LOCKED first).
 *   q[], n         the queue, oldest first (Q1 appends, Q2 takes any slot)
 *   inflight[f]    runs of f queued or being read (Q1 +1, Q2 -1)
 *   reading[f]     runs of f being read (Q2's cap: < CAP to take one)
 *   locked[f]      a run's page of f is LOCKED (one flag per file: enough,
 *                  the reader waits on B's only)
 *   freed[f]       f's frames are freed (the last close, or destroy)
 *   stop, exited   Q4
 * Properties: no frame is freed while a thread reads into it (assert at
 * the read); B's reader gets its page whatever A's device does (no invalid
 * end state: every process ends); after destroy's join no run is queued
 * and no page is locked (assert).
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

byte q[3];
byte n;
byte inflight[3], reading[3];
bool locked[3], freed[3];
bool stop, b_sub, b_got, b_closed;
byte exited;
/* The condition variable `cond`: waiting[t] from a thread's wait until it
 * holds the lock again (w->nidle counts them), asleep[t] until it is
 * signalled.  A signal wakes one asleep thread, or none if every waiting
 * thread was signalled already (it is lost: glibc's too). */
bool waiting[NT], asleep[NT];
byte nidle;

#define EL(i) (n > i && reading[q[i]] < CAP)
#define ANY_EL (EL(0) || EL(1) || EL(2))

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
	atomic {
		locked[f] = true; /* Q0: inserted LOCKED */
		q[n] = f;         /* Q1 */
		n++;
		inflight[f]++;
		wake = nidle > 0 && ANY_EL
	}
#ifndef BUG_NO_SUBMIT_WAKE
	if
	:: wake -> signal_one() /* after the unlock */
	:: else -> skip
	fi
#endif
}

active proctype submitter()
{
	bool wake;

	submit(A);
	submit(A);
	submit(B);
	b_sub = true
}

active [NT] proctype worker()
{
	byte f, i;
	bool have, wake;

	do
	:: atomic {
		if
		:: have -> /* the end of Q2, and the next look in the same hold */
			locked[f] = false; /* U5 */
			reading[f]--;
			inflight[f]--;
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
			do
			:: i + 1 < n -> q[i] = q[i + 1]; i++
			:: else -> break
			od;
			n--;
			q[n] = 0;
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
			:: f == A -> b_got
			:: else -> skip
			fi;
			assert(!freed[f]) /* no frame reused while the device writes */
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
	(!locked[B]);
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
	b_closed && b_got;
	atomic { stop = true; asleep[0] = false; asleep[NT - 1] = false } /* broadcast */
	(exited == NT);
	assert(n == 0 && !locked[A]);
	freed[A] = true
}
