/* SPDX-License-Identifier: MIT */
/*
 * lpc.h - the public API of lpc, a lockless page cache for user space.
 *
 * This header is the contract.  docs/design.md explains the protocols behind
 * it and the man pages (lpc(7), lpc_page_get(3), ...) say the same at length.
 *
 * Conventions (as liburing): every function returns 0 or a count on success and
 * a negative errno on failure; errno is never set; objects are opaque and come
 * back through out-parameters.  Library code never aborts and never exits,
 * and writes nothing but one documented line on stderr, at most once per
 * process: when io_uring cannot register a cache's frame arena
 * (LPC_IO_URING, "lpc: io_uring: cannot register the N-byte frame arena
 * (...): running unregistered").
 * No function fails with -EINTR except where lpc_file_open passes on
 * open(2)'s; a sleep in the page lock resumes by itself after a signal.
 *
 * Every function below says in a `Context:` line whether it may sleep (block
 * in the kernel: a mutex, a futex, a system call), do I/O, or wait for an RCU
 * grace period, and which internal lock it may take (the lock order is in
 * src/cache/cache.h).  Rules that hold for every function:
 *  - Threads: any thread may call any function.  A thread is registered with
 *    RCU on its first call into a cache, which allocates its per-thread block
 *    (this is the -ENOMEM that calls on a file or cache can return) and takes
 *    an internal lock once; it is unregistered when it exits.  A user never
 *    calls liburcu.  A program that uses liburcu's memb flavour itself must
 *    not call lpc_page_get, lpc_pread, lpc_page_alloc, lpc_file_close or
 *    lpc_cache_destroy inside its own read section: they may wait for a grace
 *    period.  lpc registers a thread only if liburcu does not count it as a
 *    reader already (the program registered it, or another copy of lpc in
 *    the process did: liblpc_sqlite.so carries one), and unregisters only
 *    its own registration; a thread the program registered must stay
 *    registered while it calls lpc.
 *  - fork: a child of a process that has called lpc must not call lpc
 *    (exec first).  liburcu-memb's reader registry is copied into the child
 *    with entries for the parent's other threads; one that was inside a
 *    read section at the fork makes every grace period in the child wait
 *    for ever.
 *  - Signal handlers: only lpc_config_init, lpc_page_data and lpc_version are
 *    async-signal-safe.  Every other function takes locks or allocates.
 *  - Re-entry: lpc calls no user code but lpc_page_read's fn (which may not
 *    call lpc), a read stream's callback (inside lpc_stream_next, with no
 *    lpc lock held; it may call lpc but not its stream) and the operations
 *    of a user backend (lpc_file_open_backend), which must not call lpc; so
 *    no other lpc function runs inside another; a signal handler must not
 *    call into lpc either.
 *  - Lifetimes: no function may be called on a cache while another thread is
 *    inside lpc_cache_destroy() for it, nor on a file after its last close
 *    has returned.  Pages keep their own lifetime: see B.2.
 *
 * Ordering guarantees under concurrency.  Each is checked by the test named
 * after it (tests/unit/test_guarantees.c: g_a1_..., or the test given).
 *
 * A. Lookups (lpc_page_find, lpc_page_get)
 *  A.1 A page returned for (f, index) was in f's cache at `index` at some
 *      instant during the call, and its frame holds that page's data as read
 *      from the file by a read that completed before the call returned.
 *  A.2 lpc_page_find does no I/O, does not sleep and waits for nobody: a page
 *      being read returns -EAGAIN at once, an absent one -ENOENT.
 *  A.3 While lpc_invalidate runs on the same range, lpc_page_find and
 *      lpc_page_get return either a page that this invalidate does not drop
 *      (the reference they hold makes it skip the page), or, for find,
 *      -ENOENT; never a page the invalidate dropped (a page read again after
 *      it, maybe into the same descriptor, is a new page).
 *  A.4 While the last lpc_file_close of f runs, an lpc_page_find on f that
 *      another thread (one that had called lpc before) began earlier returns
 *      -ENOENT or a page that stays valid until its put (B.2); the struct
 *      lpc_file is freed only after an RCU grace period, so it is never
 *      freed under a lookup.  Any other call on f racing the last close, and
 *      any call that begins after it began, is the caller's bug
 *      (tests/regress/regress_file_close.c).
 *  A.5 One cached copy per file: every open of one file in a cache returns
 *      the same lpc_file, so two opens never see two copies of a page.  An
 *      open racing the file's last lpc_file_close (on another thread) gets
 *      the closing lpc_file, revived with its pages, or, once that close has
 *      removed the file, a new lpc_file that reads the disk after every
 *      write of the old one has ended.  Never two copies at once.  The close
 *      of a reviving open:
 *       - if it comes while the last close it revived is still running, it
 *         joins that close: it returns when that close returns, with its
 *         result (0, or the first write error of that close, J.3), and that
 *         close writes back first the pages this open dirtied (by writes
 *         that returned before its close began): so it returns 0 only once
 *         they are in the kernel's file;
 *       - if it comes after that close has returned (the file stayed
 *         cached: the revived open was still open), it is an ordinary close,
 *         the last one when no other open is left.
 *      A page dirtied by a write that returned is dropped only when its
 *      write failed and a close that covered it returned that error.  An
 *      O_TRUNC open never revives: it returns -EBUSY while the file is open
 *      or in its last close, without waiting for that close (which may wait
 *      for a page lock the opening thread holds, B.2).
 *      (tests/regress/regress_open_closing.c, regress_close_join.c)
 *
 * B. References
 *  B.1 lpc_invalidate never drops a page that a user holds (a reference from
 *      find, get or alloc), nor one that is locked, dirty or under writeback.
 *  B.2 A page held when it leaves the cache (lpc_invalidate cannot, but the
 *      last close and a failed read can) stays valid until its lpc_page_put:
 *      the same frame, the same data, never reused for another (file, index)
 *      or handed out by lpc_page_alloc before the put.
 *  B.3 Every reference is dropped by exactly one lpc_page_put, from any
 *      thread, including one that never called lpc before.
 *  B.4 lpc_cache_destroy with a reference held (cached or private page)
 *      returns -EBUSY and changes nothing: the cache keeps working.
 *
 * C. Misses and reads (lpc_page_get, lpc_pread)
 *  C.1 Exactly one read per page, however many threads miss on it at once:
 *      the others wait on the page and share the outcome of that read.  A
 *      read of several pages (a run, a readahead window) that fails or
 *      comes back short where the file goes on is not a page's outcome:
 *      the caller's pages are read again one by one, the others dropped
 *      (their waiters read them, each alone), so one bad page fails no
 *      other page.
 *  C.2 When a page's own read fails, its reader and every thread waiting on
 *      the page get -EIO (the reader: the backend's errno) from
 *      lpc_page_get, and lpc_pread returns it if it was the first page, else
 *      ends short before it; nothing is cached; the next call reads the page
 *      again.
 *  C.3 Data a call returns is never zeros that stand for data the file has:
 *      a read shorter than a page where the file does not end (the storage's
 *      size says so, whether or not lpc writes the file) is read once more,
 *      then -EIO.
 *  C.4 lpc_pread never fails for want of a frame, and never waits for one:
 *      what it cannot cache (every frame held or locked, nothing evictable)
 *      it reads around the cache at once (counted in read_around).
 *
 * D. Removal
 *  D.1 lpc_invalidate returns the number of pages it dropped; a page in the
 *      range that nobody held or locked while the call ran is gone when it
 *      returns: a lookup started later finds it only if a get read it again.
 *      Held includes for an instant: a lookup (or pin) of another page, whose
 *      frame this page took over a moment before, may take and drop at once
 *      a reference on it (as the kernel's speculative references do), and a
 *      page the cache's reclaimer is evicting is gone moments later.
 *  D.2 After the last close returns, none of the file's pages is cached: the
 *      next open of the file reads every page again.
 *
 * E. Frames
 *  E.1 lpc_page_get and lpc_page_alloc return -ENOMEM only when no frame is
 *      free anywhere (not on the shared list, not on another thread's private
 *      list, not waiting for a grace period) and none could be evicted for
 *      alloc_wait_ms (H.3): a cached page nobody holds is evicted for them.
 *  E.2 A thread that exits gives its private free frames back: none is lost.
 *
 * F. Counters (lpc_stats)
 *  F.1 Each count is exact once the threads that count it are quiet (have
 *      returned from their calls); lookups == hits + misses in every read.
 *      frames is constant; frames_free is a gauge, exact when all is quiet.
 *
 * G. The page lock
 *  G.1 lpc_page_lock excludes every other holder, and what a holder wrote
 *      before lpc_page_unlock is visible to the next one after its lock.
 *  G.2 No wake-up is lost: a thread sleeping in lpc_page_lock or waiting for
 *      a read in flight wakes once the lock is released.
 *
 * H. Reclaim (eviction; src/reclaim/evict.c, lpc(7) "Reclaim")
 *  H.1 A page a user holds (a reference from find, get or alloc), or that is
 *      locked, dirty or under writeback, is never evicted; a held page keeps
 *      its frame and data until its put (tests/unit/test_evict_exhaust.c).
 *  H.2 Frames never exceed cache_bytes: a full cache evicts cached pages
 *      nobody holds to make room (a background thread per cache, started
 *      when the free frames first run low, and the allocating thread
 *      itself), and a lookup never returns a page that eviction froze and
 *      reused (tests/stress/stress_evict.c, stress_evict_race.c).
 *  H.3 When nothing can be evicted (every frame held or locked),
 *      lpc_page_get and lpc_page_alloc retry with a sleeping backoff for
 *      alloc_wait_ms (default 1 s) and then return -ENOMEM; a page put
 *      meanwhile is evicted for a waiter.  lpc_pread does not wait (C.4).
 *      A dirty page eviction meets is handed to the cache's flusher, which
 *      writes its file back whatever the dirty thresholds; written, it is
 *      evicted on a later pass, so dirty pages alone never make these
 *      calls fail (tests/unit/test_write_evict.c).
 *  H.4 Eviction never blocks a lookup: lpc_page_find on a page being evicted
 *      retries inside its read section until the page has left the index,
 *      then returns -ENOENT (counted in retries).
 *  H.5 Scan resistance (the default policy, LPC_RECLAIM_CLOCK2): pages read
 *      once are evicted before pages that were hit since they came in, so a
 *      sequential pass over a file larger than the cache does not flush a
 *      hot set (tests/unit/test_evict_scan.c).  Such a pass also drops the
 *      pages it used once behind itself (ra_dropped), and its lpc_pread
 *      hits do not count as a second use (lpc(7) "Reclaim";
 *      tests/unit/test_drop_behind.c).
 *
 * I. Pins (lpc_pin, lpc_unpin, lpc_pin_iov; tests/unit/test_pin.c: i1_...)
 *  I.1 All or nothing: lpc_pin returns every page covering the range (cut at
 *      the end of the file: lpc's size, as lpc_pread's, J.7), in index
 *      order, each as A.1 says of a lookup; or an error with nothing left
 *      pinned.
 *  I.2 A pin is a reference (B.1-B.3 hold for it): lpc_invalidate and
 *      eviction skip a pinned page (eviction takes only pages
 *      whose sole reference is the index's); the last close and truncate
 *      leave the holder a valid page until lpc_unpin.  Reclaim never needs to
 *      ask a holder: the pin is visible in the page's reference count.
 *  I.3 pin_fast counts the calls that the lockless fast path served wholly
 *      (every page present and UPTODATE), pin_slow the others; a call that
 *      fails counts in neither.  pages_pinned counts the pages they returned.
 *  Write pins (LPC_PIN_WRITE; writeback/wpin.c WP1-WP5, WU1-WU3, WC1-WC6;
 *  tests/unit/test_wpin.c, tests/stress/stress_wpin.c):
 *  I.4 A write pin is a pin plus the page lock of every page of the range,
 *      held until lpc_unpin(LPC_PIN_WRITE) (which any thread may call): the
 *      holder writes the range's bytes in place (lpc_pin_iov, then readv,
 *      recvmsg, preadv, io_uring, memcpy).  Exclusive: a second write pin,
 *      lpc_pwrite and lpc_page_lock of a write-pinned page wait for the
 *      unpin.  Every byte of [off, off + len) is the holder's to write: one
 *      it leaves unwritten keeps what the page held (zeros where the pin made
 *      the page).  Absent pages the range covers wholly, or that lie wholly
 *      past the end, are made without a read; others are read first.
 *  I.5 Readers: lpc_pread and lpc_page_read return the bytes from before the
 *      pin or from after the unpin, never a mix (they wait for the page
 *      lock, as for lpc_page_lock).  A read pin, lpc_page_get or
 *      lpc_page_find holder is not excluded: it sees the bytes as they land,
 *      as mmap(2) does.
 *  I.6 Stable pages and writeback: a write pin waits for a write of the
 *      page in flight to end before it is granted, and no writeback writes a
 *      write-pinned page.  lpc_unpin marks every page dirty (as lpc_pwrite:
 *      flag, tag, counts, flusher, throttling).  lpc_fsync covers the bytes
 *      of the write pins unpinned before it was called; for a page
 *      write-pinned across it, it waits for the unpin if the page was dirty
 *      when it began (and writes the pin's bytes too), else leaves the page
 *      to a later fsync; it returns 0 unless a write failed.
 *  I.7 Size, truncate, eviction: a range past the end extends lpc's size to
 *      its end at lpc_pin (as lpc_pwrite: the size rises before any byte is
 *      in a page; lpc_unpin has no length).  lpc_truncate first waits
 *      until no page of f is write-pinned, taking no lock meanwhile (a
 *      holder may still lpc_pwrite f, or write-pin other pages, which then
 *      delay it), and write pins asked for while it cuts wait for its end;
 *      so it cuts what a holder wrote past the new end.  The last
 *      lpc_file_close of f (from another thread) waits until no page of f
 *      is write-pinned, then writes the pins' bytes back like any dirty
 *      page and returns their write errors; f stays valid for the unpins.
 *      Eviction and lpc_invalidate skip write-pinned pages
 *      (I.2).  A failed write pin leaves nothing pinned or locked, and the
 *      size it raised (as a failed lpc_pwrite).
 *  I.8 Self-waits.  The holder (the thread that called lpc_pin, until the
 *      unpin, whichever thread unpins) must not, between
 *      lpc_pin(LPC_PIN_WRITE) and lpc_unpin, call on the same pages
 *      lpc_pread, lpc_page_read, lpc_page_lock, lpc_pwrite, another write
 *      pin, nor lpc_truncate, lpc_fsync or the last lpc_file_close of f:
 *      each waits for the pin, that is for the holder itself.  Nor may it
 *      unpin a write pin without LPC_PIN_WRITE (the page stays locked with
 *      no holder).  In a release build such a call sleeps for ever (futex),
 *      with no error and no message, and every other thread that then
 *      needs that page's lock or f's truncate or last close sleeps behind
 *      it.  The LPC_DEBUG build aborts instead, naming rule WPIN-SELF-WAIT
 *      (or WPIN-OWNER for the unpin's flags; tests/debug/
 *      test_debug_wpin_self.c).  The holder may read-pin its own pages,
 *      read them through lpc_page_data, and use other pages and files.
 *      Two threads that each hold a write pin must not pin for writing a
 *      range the other holds (lock order: one write pin per thread at a
 *      time, or ranges in increasing order of file and offset).
 *
 * N. Names (lpc_ns_*; src/names/walk.c has the protocol, tests/names/ the
 *    tests, tests/model/walk.pml the model)
 *  N.1 Every answer of lpc_ns_access, lpc_ns_stat and lpc_ns_open (success or
 *      error) is one the kernel gives for the same call under the same
 *      credential (fsuid = uid, fsgid = gid, groups), with the namespace's
 *      root as the process's root (chroot), against the tree as it was at
 *      one instant during the call, as far as the cache knows it: changes
 *      made through lpc_ns_* are known when their call returns, through
 *      every name of the object (a chmod, setacl, unlink, rename or
 *      truncating open through one hard link is seen through the others:
 *      tests/names/test_ns_links.c); changes made
 *      behind lpc's back are known within the revalidation interval
 *      (LPC_NS_OPT_REVALIDATE_NS).  (tests/names/test_ns_oracle.c)
 *  N.2 A walk that overlaps an lpc_ns_rename never answers from a mix of the
 *      tree before and after it: it falls back to a ref-walk (counted in
 *      fallback_seq).  (tests/names/test_ns_race.c)
 *  N.3 Search permission is checked in RCU mode with the cached mode and
 *      access ACL: an ACL never forces a fallback by itself.  Once every
 *      component of a path is cached and fresh, walking it makes no system
 *      call.  (tests/names/test_ns_oracle.c counts the warm pass's fallbacks)
 *
 * J. Writes and durability (lpc_pwrite, lpc_page_mark_dirty, lpc_fsync,
 *    lpc_truncate; tests/unit/test_write*.c, tests/stress/stress_write*.c)
 *  J.1 A page that lpc_pwrite creates (covered whole, or past the end) is
 *      inserted filled: no reader sees it half written.  A read racing an
 *      lpc_pwrite that changes a cached page in place may see some bytes
 *      of each (as pread(2) against pwrite(2)); a read that begins after
 *      the write returned sees all of it.  Bytes past the end of the file
 *      and holes read as zeros.
 *  J.2 lpc_fsync returns 0 only when every byte written by an lpc_pwrite
 *      (or lpc_page_mark_dirty) that returned before the fsync began is on
 *      the file and fdatasync succeeded; pages dirtied during the call do
 *      not keep it running (it writes only what was dirty when it began).
 *  J.3 A write error is returned once to each lpc_fsync (or last close)
 *      that was running when it happened, or to the first that begins
 *      after it; the failed pages stay dirty, readable with the written
 *      data, and are written again by the next writeback.
 *  J.4 After lpc_truncate returns, no lookup returns a page past the new
 *      end and the bytes past it read as zeros if the file grows again; a
 *      page held across the truncate stays valid but is no longer cached
 *      (lpc_page_mark_dirty on it returns -ENOENT).
 *  J.5 Dirty pages are written back by the flusher after dirty_expire_ms
 *      (never by age with LPC_DIRTY_EXPIRE_NEVER), and a writer above the
 *      hard limit writes back itself first, so the dirty pages stay near
 *      dirty_limit_pct of the frames.  The flusher's thread starts when
 *      first needed (a page dirtied, when pages are written by age; the
 *      background threshold passed; eviction meeting dirty pages), so a
 *      cache that does not write runs no thread of lpc's for it.
 *  J.6 lpc_invalidate never drops a dirty page or one under writeback; the
 *      last lpc_file_close and lpc_cache_destroy write every dirty page
 *      back first and return the first error (the pages whose write
 *      failed are then dropped: the error says so).
 *  J.7 The file's size: lpc_pread, lpc_pin and writeback all stop at lpc's
 *      size (a write past the end extends it at once, before the file on
 *      disk).  The file on disk is shrunk only by lpc_truncate: writeback,
 *      lpc_fsync and the last lpc_file_close extend it to lpc's size and cut
 *      back only the tail of lpc's last page that its own whole-page write
 *      put past lpc's size, never a byte another process put there, nor one
 *      an lpc_pwrite put there (tests/regress/regress_size_*.c).
 *
 * K. Optimistic reads (lpc_pread, lpc_page_read; lockless mode)
 *  K.1 The bytes lpc_pread returns for a page, and the view of the run of
 *      lpc_page_read's function that it returns 0 for, are one version of
 *      the page as cached at `index` at an instant during the call: never
 *      a mix of two versions (a write in progress), never another page's
 *      data (a frame reused during the call), never a page that had left
 *      the cache (tests/stress/stress_optimistic.c).  A write is lpc's own
 *      (lpc_pwrite, a read, truncate) or a user's change in place: on a
 *      cached page, lpc_page_lock opens a new version and lpc_page_unlock
 *      closes it, so a view taken while a user holds the lock is never
 *      accepted (tests/regress/regress_user_lock_seq.c).
 *  K.2 A hit of either call takes no reference and writes no shared line
 *      but, once, the page's REFERENCED bit: readers of one hot page do not
 *      slow each other down.  When the optimistic try fails (the page is
 *      absent, being read or written, or left the index meanwhile), the call
 *      falls back, once, to the referenced path (as lpc_page_get): it always
 *      completes, however busy the writers (counted in optimistic_fallbacks)
 *      (tests/unit/test_page_read.c: k2_hit_takes_no_reference,
 *      k1_waits_for_writer).
 */
#ifndef LPC_LPC_H
#define LPC_LPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LPC_VERSION_MAJOR 0
#define LPC_VERSION_MINOR 3
#define LPC_VERSION_PATCH 0
#define LPC_VERSION_STRING "0.3.0"

/*
 * The version of the library loaded at run time ("MAJOR.MINOR.PATCH"), which
 * may be newer than the LPC_VERSION_* this program was compiled with.
 * Return: a static string, never NULL.  Context: any, signal handlers included.
 */
const char *lpc_version(void);

struct lpc_cache;
struct lpc_file;
struct lpc_page;

/* I/O backends (lpc_config.io_backend). */
enum lpc_io_backend {
	LPC_IO_SYNC = 0, /* pread/pwrite on an O_DIRECT descriptor */
	LPC_IO_NULL = 1, /* reads fill a pattern of (file, index); no disk */
	LPC_IO_URING = 2, /* the default: io_uring (liburing), a ring per
			   * thread and cache made on its first I/O, the
			   * frame arena registered as fixed buffers (once
			   * per cache, at its first I/O) where RLIMIT_MEMLOCK
			   * or CAP_IPC_LOCK lets it be pinned (it then stays
			   * resident; refused: unregistered,
			   * counted in uring_unregistered, one line on
			   * stderr once per process), writeback's runs of a
			   * pass submitted together; falls back to
			   * LPC_IO_SYNC, counted in uring_fallbacks, where
			   * the kernel refuses io_uring (ENOSYS, EPERM,
			   * EACCES: seccomp, io_uring_disabled; ENOMEM) */
};

/* Index protection (lpc_config.lookup_mode). */
enum lpc_lookup_mode {
	LPC_LOOKUP_LOCKLESS = 0, /* RCU walk + speculative references (default) */
	LPC_LOOKUP_LOCKED = 1,   /* a per-file rwlock around the index ("vanilla"):
				  * lookups and pins hold it for reading, a miss
				  * across its read, invalidate and close for writing */
};

/* Eviction policy (lpc_config.reclaim_policy); see lpc(7), "Reclaim". */
enum lpc_reclaim_policy {
	LPC_RECLAIM_CLOCK2 = 0, /* CLOCK with an inactive/active split (default):
				 * a sequential scan cannot flush the hot set */
	LPC_RECLAIM_CLOCK = 1,  /* plain CLOCK: second chance on REFERENCED */
};

/* lpc_config.readahead_kb: readahead off for the whole cache (a call that
 * covers several absent pages still reads them with one I/O). */
#define LPC_READAHEAD_OFF UINT32_MAX
/* dirty_expire_ms: no writeback by age.  For a program that makes its own
 * writes durable (lpc_fsync at its commit points, as the SQLite extension
 * does): the flusher then runs only past dirty_background_pct, for
 * eviction and for throttled writers, and a cache below those starts no
 * thread (J.5). */
#define LPC_DIRTY_EXPIRE_NEVER UINT64_MAX

/* Zero in any field below cache_bytes means its default (0.2 took
 * alloc_wait_ms and reclaim_policy from the reserved space: the struct's
 * size and the offsets of the 0.1 fields are unchanged). */
struct lpc_config {
	size_t cache_bytes;   /* frame budget; default 64 MiB; at least one page */
	size_t page_size;     /* power of two, 512 B .. 2 MiB; default 4 KiB */
	int io_backend;       /* enum lpc_io_backend; default LPC_IO_URING */
	int lookup_mode;      /* enum lpc_lookup_mode; default LPC_LOOKUP_LOCKLESS */
	uint32_t alloc_wait_ms; /* how long lpc_page_get/lpc_page_alloc wait for
				 * a frame when nothing can be evicted; 0: 1000 */
	int reclaim_policy;   /* enum lpc_reclaim_policy; default LPC_RECLAIM_CLOCK2 */
	uint64_t reserved[2]; /* must be zero (lpc_config_init does it) */
	/* reads (from the reserved word: the size and the other offsets
	 * stand); 0 means the default */
	uint32_t readahead_kb;     /* a sequential stream's first window; 128;
				    * LPC_READAHEAD_OFF: no readahead at all */
	uint32_t readahead_max_kb; /* its largest window; 1/8 of cache_bytes,
				    * within 512 KiB .. 8 MiB (measured with
				    * lpcbench scan); at least one page;
				    * one read I/O covers at most 2 MiB, or this
				    * when set below it (a miss's run of absent
				    * pages, a window's run) */
	/* writes (lpc_pwrite, writeback, fsync); 0 means the default */
	uint64_t dirty_expire_ms;      /* the flusher writes pages dirty this long; 5000;
					* LPC_DIRTY_EXPIRE_NEVER: never by age */
	uint64_t dirty_background_pct; /* ... or all while dirty pages pass this % of
					* the frames (a writer passing it wakes the
					* flusher at once); 10 */
	uint64_t dirty_limit_pct;      /* writers above this % write back themselves
					* (throttling); 20, at least the background */
	uint64_t reserved_wb;          /* must be zero */
};

/*
 * Counters.  Kept per thread and summed on read, so reading them is not a
 * snapshot: each field is exact once the threads that count it are quiet
 * (F.1).
 */
struct lpc_stats {
	uint64_t lookups;          /* lpc_page_find/lpc_page_get calls */
	uint64_t hits;             /* ... that found an UPTODATE page */
	uint64_t misses;           /* ... that found nothing or a page in flight */
	uint64_t retries;          /* speculative references that had to retry */
	uint64_t reads;            /* page reads issued to the backend */
	uint64_t read_bytes;       /* bytes those reads returned */
	uint64_t read_errors;      /* page reads that failed */
	uint64_t direct_fallbacks; /* files or reads moved off O_DIRECT */
	uint64_t read_around;      /* pages lpc_pread read around a full cache */
	uint64_t alloc_failures;   /* frame allocations that found no frame */
	uint64_t invalidated;      /* pages dropped by lpc_invalidate */
	uint64_t frames;           /* frames in the cache (gauge) */
	uint64_t frames_free;      /* frames on free lists (gauge, approximate) */
	/* Since 0.2 (the symbol lpc_stats@LPC_0.1 fills only the fields above). */
	uint64_t evictions;        /* pages evicted (E1-E7, lpc(7) "Reclaim") */
	uint64_t reclaim_scans;    /* batches of the clock hand scanned */
	uint64_t skipped_held;     /* ... descriptors skipped: held by a user */
	uint64_t skipped_locked;   /* ... page locked (being read, or by a user) */
	uint64_t skipped_dirty;    /* ... dirty or under writeback */
	uint64_t skipped_referenced; /* ... kept by the policy (second chance, active) */
	uint64_t skipped_busy;     /* ... index lock busy, or slot changed */
	uint64_t direct_reclaims;  /* allocations that evicted themselves */
	uint64_t reclaimer_wakeups; /* wake-ups of the background reclaimer */
	uint64_t index_bytes;      /* memory of the open files' index nodes (gauge) */
	uint64_t descriptor_bytes; /* memory of the descriptor array (constant) */
	/* pins (lpc_pin) */
	uint64_t pin_fast;         /* lpc_pin calls served wholly by the fast path */
	uint64_t pin_slow;         /* ... that took the slow path (misses) */
	uint64_t pages_pinned;     /* pages those calls pinned (a count, not a gauge) */
	/* writes (lpc_pwrite, writeback, fsync) */
	uint64_t writes;           /* lpc_pwrite calls */
	uint64_t write_bytes;      /* bytes they wrote into the cache */
	uint64_t writeback_pages;  /* pages written back to files */
	uint64_t vectored_writes;  /* backend writes that carried them (pages per
				    * vectored write: writeback_pages / this) */
	uint64_t write_errors;     /* writebacks that failed (the pages stay dirty) */
	uint64_t throttled;        /* lpc_pwrite calls that wrote back themselves */
	uint64_t fsyncs;           /* lpc_fsync calls */
	uint64_t uring_fallbacks;  /* caches that asked for io_uring and got sync,
				    * and threads whose own ring could not be
				    * made (they do their I/O the sync way) */
	uint64_t dirty_pages;      /* dirty pages now (gauge) */
	/* optimistic reads */
	uint64_t optimistic_hits;      /* pages lpc_pread and lpc_page_read read
					* without a reference (also in hits) */
	uint64_t optimistic_fallbacks; /* optimistic tries that took the
					* referenced path (counted there too) */
	/* where the time of a miss goes (nanoseconds, CLOCK_MONOTONIC, summed
	 * over the misses that did the step; never measured on a hit; each
	 * thread times one miss in 16 and counts it 16 times: an estimate) */
	uint64_t miss_ns_alloc;  /* allocating the frame (M1), direct reclaim
				  * included */
	uint64_t miss_ns_insert; /* inserting it in the index (M3, index lock) */
	uint64_t miss_ns_read;   /* the backend read (M4) */
	uint64_t miss_ns_evict;  /* direct reclaim's eviction inside frame
				  * allocations: part of miss_ns_alloc for a
				  * miss; lpc_pwrite's allocations count too */
	/* io_uring (LPC_IO_URING) */
	uint64_t uring_unregistered; /* threads' rings that run without the
				      * frame arena registered as fixed buffers,
				      * for some chunks or all (RLIMIT_MEMLOCK
				      * refused the pin, a kernel before 5.19,
				      * a clone refused, a registered request
				      * failed and was done again: lpc(7)) */
	/* memory in proportion to use (lpc(7) "Memory") */
	uint64_t resident_bytes;   /* bytes of the frame arena made resident
				    * (gauge): the frames handed out at least
				    * once, and the io_uring chunks pinned
				    * whole; at most frames x page size, the
				    * budget.  Descriptors: 64 B per frame
				    * handed out (descriptor_bytes is the
				    * reservation) */
	/* reads and readahead */
	uint64_t read_pages;   /* pages the `reads` covered: read_pages / reads
				* is the pages per read I/O */
	uint64_t ra_windows;   /* readahead windows read */
	uint64_t ra_async;     /* ... of which a hit on the marker started */
	uint64_t ra_pages;     /* pages read ahead (no call asked for them yet) */
	uint64_t ra_used;      /* ... later used (ra_used / ra_pages: accuracy) */
	uint64_t ra_wasted;    /* ... evicted before any use */
	/* write pins (lpc_pin with LPC_PIN_WRITE; counted in pin_fast,
	 * pin_slow and pages_pinned too) */
	uint64_t wpin_fast;    /* write pins the lockless fast path served */
	uint64_t wpin_slow;    /* ... that took the slow path */
	uint64_t wpin_dirtied; /* pages lpc_unpin(LPC_PIN_WRITE) marked dirty */
	/* Since 0.3 (the symbol lpc_stats@LPC_0.2 fills only the fields
	 * above): lpc_page_get_batch and read streams */
	uint64_t batches;      /* lpc_page_get_batch calls with entries */
	uint64_t batch_runs;   /* runs of adjacent absent pages they read, one
				* read I/O each (batch_runs / batches: the
				* runs per batch) */
	uint64_t batch_pages;  /* pages those runs read (batch_pages /
				* batch_runs: the pages per batch I/O) */
	uint64_t stream_runs;  /* runs of adjacent absent pages read streams
				* read ahead, one read I/O each */
	uint64_t stream_pages; /* pages those runs read */
	/* grace periods (lpc(7) "Reclaim"): waits that this cache's threads
	 * (the callers' and its background reclaimer) took themselves, each
	 * for a grace period (synchronize_rcu: a frame allocation landing its
	 * own frames, reclaim() taking pending and other threads' frames, the
	 * reclaimer's drain and take) or for the RCU callbacks queued so far
	 * (rcu_barrier, inside reclaim()).  Not counted: the grace periods of
	 * liburcu's call_rcu thread (the frees it runs are the process's, not
	 * one cache's), and lpc_cache_destroy's and lpc_ns_destroy's barriers
	 * (nobody reads the cache's counters after) */
	uint64_t grace_periods;   /* those waits */
	uint64_t grace_period_ns; /* their time (nanoseconds, CLOCK_MONOTONIC
				   * around each wait, every one timed):
				   * grace_period_ns / grace_periods is the
				   * cost of one on this machine (membarrier's
				   * IPIs to the process's other CPUs) */
	/* drop-behind (lpc(7) "Reclaim"): a sequential stream over a file
	 * larger than the cache takes the pages it used once, a window behind
	 * its reader, out of the cache itself, and reads its next windows
	 * into their frames */
	uint64_t ra_dropped;      /* pages so dropped */
};

/*
 * Fills *cfg with the defaults; NULL is ignored.
 * Context: any, signal handlers included; no lock, no allocation.
 */
void lpc_config_init(struct lpc_config *cfg);

/*
 * Creates a cache: one descriptor array and one frame arena, sized by cfg.
 * Return: 0 with *out; -EINVAL for a NULL argument, a page size that is not a
 * power of two in 512 B .. 2 MiB, a budget of less than one page or of more
 * than 2^32 pages, an unknown backend or mode, or non-zero reserved fields;
 * -ENOMEM when the cache or its arena cannot be allocated or mapped.
 * readahead_kb, readahead_max_kb: 0 is the default (128 KiB; 1/8 of
 * cache_bytes within 512 KiB .. 8 MiB); less
 * than a page is one page; a first window above the largest is the largest.
 * alloc_wait_ms and reclaim_policy: 0 is the default (1000 ms; CLOCK2); a
 * policy other than LPC_RECLAIM_CLOCK2 or LPC_RECLAIM_CLOCK is -EINVAL.
 * The cache's background reclaimer thread is not started here: the first
 * allocation that finds the free frames below a low watermark starts it, or
 * the first lpc_invalidate (or shrinking lpc_truncate) that leaves frames
 * waiting for a grace period.
 * LPC_IO_URING probes the kernel with a ring (made and closed at once); a
 * refusal makes the cache on LPC_IO_SYNC (counted in uring_fallbacks), never
 * an error.
 * Context: may sleep (malloc, mmap, io_uring_setup); no I/O, no grace
 * period, no internal lock; does not register the thread.
 */
int lpc_cache_create(const struct lpc_config *cfg, struct lpc_cache **out);

/*
 * Closes every file still open and frees the cache, once nobody holds a page.
 * It stops the flusher and writes every dirty page back first (no fdatasync).
 * Return: 0; -EINVAL for NULL; -EBUSY, with nothing changed, while a user
 * still holds a page reference, cached or private (every lpc_page_get,
 * lpc_page_find and lpc_page_alloc needs its lpc_page_put) (B.4); the first
 * write error of a file (lpc_fsync's rule), after which the cache is freed
 * all the same: the pages whose write failed are lost, and this says so.
 * Context: may sleep; stops and joins the cache's background reclaimer and
 * flusher if they run (also when it then returns -EBUSY: they start again
 * when needed); closes the files' descriptors; waits for every pending RCU
 * callback of the cache (rcu_barrier, which includes a grace period);
 * takes files_lock, every index lock, lpc_threads_lock and free_lock.  No
 * other thread may use the cache or its files during or after the call.
 */
int lpc_cache_destroy(struct lpc_cache *c);

/*
 * Opens path for caching.  oflags are open(2)'s (O_RDONLY, O_RDWR, O_CREAT,
 * O_EXCL, O_TRUNC; lpc adds O_DIRECT and O_CLOEXEC itself).  Opening a file
 * that is already open in this cache returns the same lpc_file (one cached
 * copy per file, A.5), counted: each open needs its own close.  Such an
 * open finds the file by stat(2) of path and opens no descriptor; the
 * kernel still answers for permission (faccessat(2) with AT_EACCESS, for
 * read, or read and write).  Opening it read-write when it was read-only
 * opens a read-write descriptor for the shared copy, which keeps the old one
 * open until its last close.  A file
 * system that refuses O_DIRECT (tmpfs) is read with buffered I/O, counted in
 * direct_fallbacks.  O_WRONLY opens read-write: lpc reads what it caches.
 * With LPC_IO_NULL the file must still exist: its size bounds reads, its
 * contents are never read.
 * O_TRUNC is lpc's, not open(2)'s: the file is opened, then, if this cache
 * holds no copy of it, truncated with ftruncate(2) under files_lock, so no
 * copy can read it before; a truncating open needs write permission with
 * any access mode and opens read-write.  An open racing the file's last
 * close: A.5 (an O_TRUNC one gets -EBUSY, without waiting for the close).
 * POSIX record locks (fcntl F_SETLK, F_SETLKW): closing any descriptor of a
 * file drops every such lock the process holds on it.  lpc_file_open never
 * closes a descriptor of a file this cache holds: a descriptor it does not
 * need (the path changed under the open to a cached file; the upgrade's old
 * one) stays open until the copy's last lpc_file_close.  It does close its
 * new descriptor when the open fails with no copy of the file in the cache
 * (an O_TRUNC whose ftruncate(2) fails, a path that is not a regular file):
 * a user who locks a file through its own descriptors loses those locks
 * then, as with any close(2) of the file.
 * Return: 0 with *out; -EINVAL for NULL arguments, O_APPEND/O_PATH/O_DIRECTORY,
 * or a path that is not a regular file (opened O_NONBLOCK, so a FIFO or a
 * device is refused without waiting for its other end; a conflicting lease
 * gives open(2)'s -EWOULDBLOCK rather than a wait); -EBUSY for O_TRUNC on a file this
 * cache holds open or whose last close is running (the file is not opened,
 * nor changed; its permission is checked first; no wait for that close); -ENOMEM when the thread's block or the file cannot be
 * allocated; any negative errno of stat(2), faccessat(2), open(2), fstat(2)
 * or ftruncate(2) (-ENOENT, -EACCES, -EMFILE, -EINTR, ...), passed on, not
 * retried.
 * Context: may sleep (open(2), stat(2), malloc); no page I/O, no grace
 * period; never waits for a close (an O_TRUNC open of a file in its last
 * close returns -EBUSY), so it may be called holding page locks; takes
 * files_lock, and lpc_threads_lock on the thread's
 * first call.
 */
int lpc_file_open(struct lpc_cache *c, const char *path, int oflags, mode_t mode,
		  struct lpc_file **out);

/*
 * Drops one open.  The last close writes the file's dirty pages back and
 * waits for writes in flight, the flusher's included (no fdatasync:
 * lpc_fsync makes data durable), then removes the file's pages from the
 * cache, unless an open on another thread revived the file meanwhile (A.5:
 * then it returns, the pages stay, and that open's close is the last; a
 * close of that open that begins while this one runs joins it: both return
 * when this one has written the file back, with its result):
 * pages users still hold stay valid until their lpc_page_put, but are no
 * longer cached (B.2, D.2); then it closes the file's descriptors.  What
 * close needs is allocated at open, so it cannot fail for want of memory.
 * POSIX record locks: a close that is not the last closes nothing.  The
 * last close (and lpc_cache_destroy) closes lpc's descriptors of the file,
 * which drops every POSIX lock (fcntl F_SETLK) the process holds on it,
 * whichever descriptor took it: a user who mixes lpc and such locks on one
 * file keeps the file open in lpc for as long as a lock must hold (and closes
 * its other descriptors of the file, and other caches' copies of it, only
 * then too), or takes OFD locks (F_OFD_SETLK) or flock(2) instead, which
 * belong to an open file description and no close of another descriptor
 * drops.
 * Return: 0; -EINVAL for NULL; for the last close, and a close that joined
 * it, a write error under
 * lpc_fsync's rule (H.3): the file is closed all the same and the pages
 * whose write failed are dropped (H.6).
 * The last close and other calls on f (A.4):
 *  - a call on f that begins after its last close has begun is a bug (f may
 *    be freed memory); so is any call but lpc_page_find running on f when
 *    the last close begins;
 *  - an lpc_page_find on f that began before the last close began, on a
 *    thread that had called lpc before, is safe: f is freed only after an
 *    RCU grace period, once every such lookup has left.  It returns 0 with a
 *    referenced, UPTODATE page holding the file's data (which the close may
 *    have removed from the cache: it stays valid until lpc_page_put), or
 *    -ENOENT; or, as any lookup, -ENOMEM on the thread's first call on this
 *    cache (checked by tests/regress/regress_file_close.c).
 * Context: may sleep (mutexes, close(2)); the last close writes (no read
 * I/O) and waits for writes in flight; does not wait for a grace period: the pages and the struct lpc_file are freed after one by
 * call_rcu; takes files_lock, then the file's index lock and free_lock; not
 * from a signal handler.  The last close takes page locks as lpc_fsync
 * does: the caller must hold no page lock (nor may a close that joins a
 * last close, which waits for it).  It publishes the size as
 * lpc_fsync does (J.7): it never shrinks the file below bytes another
 * process put there; only lpc_truncate shrinks a file.
 */
int lpc_file_close(struct lpc_file *f);

/*
 * Looks up page `index` of f without I/O and without sleeping (A.2).
 * Return: 0 with *out referenced and UPTODATE (A.1); -ENOENT if not cached;
 * -EAGAIN if its read is in flight (or has just failed); -EINVAL for NULL
 * arguments; -ENOMEM on the thread's first call on the cache when its block
 * cannot be allocated.
 * Context: lockless mode takes no lock and writes no shared line but the
 * page's reference count: an RCU read section, retried (counted in retries)
 * while the page is being removed; LOCKED mode holds the file's index rwlock
 * for reading.  The thread's first call on the cache takes lpc_threads_lock
 * and allocates.  Never waits for a grace period.
 */
int lpc_page_find(struct lpc_file *f, uint64_t index, struct lpc_page **out);

/*
 * Looks up page `index` of f, reading it on a miss and waiting for a read in
 * flight (C.1).  flags must be 0.
 * Return: 0 with *out referenced and UPTODATE (A.1); -ENXIO for a page wholly
 * past the end of the file; -EIO (or, for the thread that issued the read,
 * the backend's errno) when the read failed, in which case nothing is cached
 * and the next call reads again (C.2); -ENOMEM when no frame is free anywhere
 * and none could be evicted for alloc_wait_ms (E.1, H.3), or the thread's
 * block cannot be allocated; -EINVAL for NULL arguments or unknown flags.
 * Context: may sleep and do I/O: the read (pread(2), and fstat(2) near the
 * end of the file), a futex wait on a page in flight; when no frame is free
 * it evicts (direct reclaim: other files' index locks, taken with trylock
 * only), may wait for a grace period (the allocator collects frames in
 * transit, one thread at a time under reclaim_lock), and, when nothing can
 * be evicted, sleeps up to alloc_wait_ms; may start the cache's background
 * reclaimer (pthread_create); takes the file's index lock for the insert,
 * free_lock, and lpc_threads_lock on the first call.
 */
int lpc_page_get(struct lpc_file *f, uint64_t index, unsigned flags,
		 struct lpc_page **out);

/*
 * Drops one reference (B.3).  The last put of a cached page that has left
 * the cache frees its frame after an RCU grace period; the put of a private
 * page (lpc_page_alloc) frees it at once with plain stores.  NULL is ignored.
 * Context: any thread, but not a signal handler; never waits for I/O or a
 * grace period; the last put may take free_lock (short) and queue an RCU
 * callback; a thread's first call takes lpc_threads_lock and allocates.
 */
void lpc_page_put(struct lpc_page *p);

/*
 * The page's frame: page_size bytes, aligned for O_DIRECT, valid while the
 * caller holds its reference.  A cached page's frame is read-only to its
 * users except under lpc_page_lock (optimistic readers rely on it: every
 * change of a cached page's data is bracketed for them, by lpc's write path
 * or by the page lock); a private page's (lpc_page_alloc) is its owner's to
 * write.  NULL for NULL.
 * Context: any, signal handlers included.
 */
void *lpc_page_data(const struct lpc_page *p);

/*
 * Page lock: a sleeping lock (futex) in the page's flags word (G.1, G.2).
 * The caller holds a reference.  Not recursive: locking a page this thread
 * holds locked deadlocks.  The thread that locked it unlocks it.  NULL is
 * ignored.  lpc_invalidate skips a locked page (B.1); a page being read is
 * locked by the reader until the read ends.  On a cached page the lock is
 * also a write section for optimistic readers (K.1): from lpc_page_lock to
 * lpc_page_unlock they see the page as changing and take the referenced
 * path, which waits for the unlock; so the holder may change the frame in
 * place (then lpc_page_mark_dirty), and a lock held only to read costs
 * optimistic readers of that page their fast path while it is held.  The
 * holder itself reads the page through lpc_page_data: its own lpc_pread or
 * lpc_page_read of that page would wait for its unlock (a deadlock, as
 * locking it twice).
 * Context: lpc_page_lock may sleep (futex) for as long as the holder keeps
 * it, and a page in flight is held across its read; no other lock is taken.
 * lpc_page_unlock never sleeps (it may wake sleepers, a system call).  Never
 * lock a page while another thread may wait for this one to return (no lock
 * order is enforced between pages).
 */
void lpc_page_lock(struct lpc_page *p);
void lpc_page_unlock(struct lpc_page *p);

/*
 * Allocates a private page: referenced once, in no file, contents undefined.
 * Nobody else can reach it; freeing it (lpc_page_put) takes no atomic
 * operation.
 * Return: 0 with *out; -ENOMEM when no frame is free anywhere and none could
 * be evicted for alloc_wait_ms (E.1, H.3); -EINVAL for NULL.
 * Context: may sleep, evict, wait for a grace period and up to alloc_wait_ms
 * when no frame is free (reclaim_lock, as lpc_page_get); no I/O; free_lock;
 * lpc_threads_lock on the thread's first call.
 */
int lpc_page_alloc(struct lpc_cache *c, struct lpc_page **out);

/*
 * Reads up to len bytes at off through the cache, as pread(2): short at the
 * end of the file, 0 at or past it or for len 0.  A full cache evicts to
 * make room; pages that cannot be cached because every frame is held are
 * read around the cache at once, without waiting (counted in read_around,
 * C.4).
 * Return: the bytes read; -EINVAL for a NULL f, or a NULL buf with len > 0;
 * -EIO (or the backend's errno) if the first page failed (a later failure
 * ends the read short, C.2); -ENOMEM when the thread's block, or the bounce
 * buffer to read the first page around the cache, cannot be allocated.
 * Each page's bytes are one version of it (H.1).
 * Context: a cached page is copied optimistically, without a reference, a
 * lock or a shared write (H.2); any other page as lpc_page_get, page after
 * page; the read-around allocates.
 */
ssize_t lpc_pread(struct lpc_file *f, void *buf, size_t len, uint64_t off);

/*
 * Drops the clean, unlocked pages of f that nobody holds and that overlap
 * [off, off + len); len 0 means to the end of the file (B.1, D.1).  A page
 * a read stream holds ahead of its consumer is skipped here and dropped by
 * the stream before it hands out its next page (lpc_stream_open).
 * Return: the number of pages dropped (at most INT32_MAX counted); -EINVAL for
 * NULL; -ENOMEM on the thread's first call when its block cannot be
 * allocated.
 * Context: may sleep (the file's index lock, taken once per 16 pages); no
 * I/O; never waits for a grace period: the dropped frames are kept for the
 * calling thread's next allocations (its misses take them at once, a
 * private page waits for one first), or (when the
 * shared list runs short or the thread keeps half the frames) freed after
 * one by the cache's background reclaimer, which it wakes (free_lock; fewer
 * than 64 frames wait up to 20 ms for more first, so a quiet cache's
 * frames_free comes back whole).  lpc_page_find may run beside it (A.3).  LOCKED
 * mode: the index lock is the file's rwlock for writing, which every miss on
 * the file holds for reading across its read, so it waits for the reads in
 * flight (the pre-speculative-fault kernel's mmap_sem).
 */
int lpc_invalidate(struct lpc_file *f, uint64_t off, uint64_t len);

/*
 * posix_fadvise(2) for lpc: advice about f's pages in [off, off + len), len 0
 * meaning to the end of the file.  LPC_FADV_NORMAL, _RANDOM and _SEQUENTIAL
 * set the file's readahead (detected streams; none; the largest window on
 * every miss) for the whole file, as Linux does; LPC_FADV_WILLNEED starts
 * reading the range's absent pages (clamped at end of file; cached pages
 * skipped) into free frames only, in windows of readahead_max_kb, as pages
 * read ahead (unreferenced: evicted first unless used), and returns without
 * waiting for the reads: the cache's readahead threads make them, and a
 * call that needs one of those pages meanwhile waits for its read;
 * LPC_FADV_DONTNEED drops the range's clean pages that
 * nobody holds or pins, as lpc_invalidate.
 * Return: 0 (a WILLNEED that found no free frame, or whose reads failed,
 * still returns 0: the pages are then read on demand, and a failed page's
 * error goes to the call that asks for it); -EINVAL for NULL, an unknown
 * advice, or off + len past 2^64; -ENOMEM on the thread's first call when
 * its block cannot be allocated.
 * Context: may sleep; WILLNEED takes no frame by eviction and returns once
 * its reads are started (in LPC_LOOKUP_LOCKED mode it reads in the calling
 * thread, one read I/O per run of up to 2 MiB); while the readahead
 * threads' queue is full, or their reads hold a quarter of the frames, it
 * starts no more and the rest of the range is read on demand; DONTNEED as
 * lpc_invalidate.  Not from a signal handler.
 */
int lpc_fadvise(struct lpc_file *f, uint64_t off, uint64_t len, int advice);

/* lpc_pin flags. */
/* lpc_fadvise's advice: posix_fadvise(2)'s, with its values. */
enum lpc_fadvise_advice {
	LPC_FADV_NORMAL = 0,     /* readahead as detected (the default) */
	LPC_FADV_RANDOM = 1,     /* no readahead on this file */
	LPC_FADV_SEQUENTIAL = 2, /* every miss reads the largest window */
	LPC_FADV_WILLNEED = 3,   /* read the range now (a prefetch) */
	LPC_FADV_DONTNEED = 4,   /* drop the range's clean, unheld pages */
};

enum lpc_pin_flags {
	LPC_PIN_READ = 1u << 0,  /* the caller reads the pages */
	LPC_PIN_WRITE = 1u << 1, /* the caller writes the pages (I.4-I.8) */
};

/*
 * Pins every page covering bytes [off, off + len) of f, cut at the end of the
 * file, and stores them in pages[0..n) in index order (pages[0] holds byte
 * off).  All or nothing (H.1): on any error nothing is left pinned.  A pin is
 * a reference (H.2): the page stays valid, and is never evicted, until its
 * lpc_unpin; lpc_page_put must not drop it.  The lockless fast path walks the
 * range's leaves of the index in one RCU read section and pins each present
 * UPTODATE page speculatively; anything else (absent, being read, removed
 * under it) is served from that page on by the miss path, as lpc_page_get
 * (H.3).  flags: LPC_PIN_READ, or LPC_PIN_WRITE (with or without
 * LPC_PIN_READ): a write pin (I.4-I.7), whose range is not cut at the end of
 * the file but extends it, and whose pages are locked until lpc_unpin.
 * Return: n, the number of pages pinned (0 for len 0); -ENXIO if off is at or
 * past the end of the file (read pins); -E2BIG if the range needs more than
 * max pages (or more than INT32_MAX), nothing pinned; -EIO (or, for the
 * thread that issued the read, the backend's errno) if a page's read failed,
 * nothing pinned and nothing cached for that page (C.2); -ENOMEM when a page
 * needs a frame and none is free anywhere (E.1; pins never read around the
 * cache), or the thread's block cannot be allocated; write pins: -EBADF if f
 * is open read-only, -EFBIG if off + len passes 2^63 - 1; -EINVAL for a NULL
 * f, NULL pages with len > 0, no flag or an unknown one.
 * Context: the fast path takes no lock (LOCKED mode: the file's index rwlock
 * for reading) and writes no shared line but each page's reference count
 * (write pins: and each page's lock word; the page lock may be waited for);
 * the slow path is lpc_page_get's, page after page: may sleep, do I/O, wait
 * for a grace period (write pins: f's trunc_lock shared and size_lock, as
 * lpc_pwrite; and the end of an lpc_truncate of f in progress, I.7).  A
 * write pin must not be taken while this thread holds a page
 * lock of f (I.7's last paragraph).
 */
int lpc_pin(struct lpc_file *f, uint64_t off, size_t len, unsigned flags,
	    struct lpc_page **pages, unsigned max);

/*
 * Drops the pins of pages[0..n), as lpc_pin returned them; NULL pages (or
 * entries) are ignored.  flags: those given to lpc_pin.  A page that left the
 * cache while pinned is freed by its last unpin (after a grace period).
 * LPC_PIN_WRITE: first marks each page dirty and unlocks it (I.4, I.6), then
 * throttles the caller if the cache's dirty pages pass the limit (as
 * lpc_pwrite); the file must still be open.  Any thread may unpin.
 * Context: as lpc_page_put, page after page; LPC_PIN_WRITE: as
 * lpc_page_mark_dirty and lpc_page_unlock, then may sleep and write back.
 */
void lpc_unpin(struct lpc_page **pages, unsigned n, unsigned flags);

/*
 * Zero copy: fills iov with exactly the bytes [off, off + len) of the pinned
 * pages[0..n) that lpc_pin(f, off, ...) returned: the first entry starts at
 * off's offset in pages[0], the last ends at off + len; frames that lie next
 * to each other in memory share one entry.  Hand iov to writev(2), sendmsg(2)
 * or pwritev(2) while the pins are held.  len is the caller's: at the end of
 * the file cut it to the file's size first (the last page holds zeros past
 * it).  iov needs room for n entries.
 * Return: the number of entries (0 for len 0); -EINVAL for a NULL argument
 * with len > 0, a range that the n pages do not cover, or pages that are not
 * consecutive pages of one file.
 * Context: any; no lock, no allocation, no system call.
 */
int lpc_pin_iov(struct lpc_page *const *pages, unsigned n, uint64_t off, size_t len,
		struct iovec *iov);

/*
 * Writes len bytes of buf at off through the cache, as pwrite(2): every byte
 * or an error, never fewer bytes unless a page fails after the first (then
 * the bytes before it).  A page the write covers whole, or one past the end
 * of the file, is filled in a private frame and then inserted, so no reader
 * sees it half written (H.1); any other page is read first, then changed
 * under its page lock (a racing read may see part of the change).  Writing past the end extends the file (lpc's size;
 * holes read as zeros); the kernel's file learns the size at writeback,
 * lpc_fsync or lpc_truncate.  The pages become dirty; nothing is durable
 * before lpc_fsync returns 0 (H.2).  A writer that finds dirty pages above
 * the hard limit writes some back before it returns (throttling).
 * Return: len (or the bytes before a failing page); -EINVAL for a NULL f, or
 * NULL buf with len > 0; -EBADF for a file opened read-only; -EFBIG when off
 * + len passes INT64_MAX; -ENOMEM when no frame is free anywhere (E.1) or
 * the thread's block cannot be allocated; the read's errno for a partial
 * page whose read fails (C.2).  len 0 returns 0.  A write past the end that
 * fails (or stops short) has still raised the file's size to the end of the
 * page it failed on: lpc raises the size before the bytes are in the page,
 * and cannot lower it again safely (another write may already have put
 * bytes below the raised size).  Those bytes read as zeros (past the old
 * end) or as what the file held, and lpc_fsync publishes that size; a
 * caller that needs the old size back calls lpc_truncate.
 * Context: may sleep and do I/O (the read of a partial page, throttling's
 * writeback), take page locks (one at a time, so the caller must hold
 * none), the file's index lock, and f's truncate lock shared; never waits
 * for a grace period unless no frame is free (as lpc_page_get).
 */
ssize_t lpc_pwrite(struct lpc_file *f, const void *buf, size_t len, uint64_t off);

/*
 * Marks p dirty after the caller changed lpc_page_data(p) while holding p's
 * page lock (lpc_page_lock), so that writeback writes it; the change counts
 * for lpc_fsync calls that begin after this returns (H.2).
 * Return: 0; -EINVAL for NULL, a private page (lpc_page_alloc) or a page
 * not locked; -EBADF for a file opened read-only; -ENOENT when p is no
 * longer in its file's cache (truncated, or removed by the last close): the
 * change will never be written (H.4).
 * Context: takes the file's index lock when p was clean; no I/O, no sleep
 * but that mutex; the caller holds p's lock.
 */
int lpc_page_mark_dirty(struct lpc_page *p);

/*
 * Makes every byte written to f before the call durable: writes back the
 * pages dirty when it began (coalescing contiguous pages into one vectored
 * write, the runs of a pass submitted together), waits for writes already
 * in flight, publishes the size (J.7: extends the file to lpc's size, or
 * cuts back only the tail of lpc's last page that its own whole-page write
 * put past it; never below bytes another process put there), then
 * fdatasync(2) (IORING_OP_FSYNC with IORING_FSYNC_DATASYNC on LPC_IO_URING)
 * (H.2, H.3).  A short write is
 * written again until every byte is on the file or an error is returned.
 * Return: 0 only when all of that succeeded; -EINVAL for NULL; -ENOMEM for
 * the thread's block; otherwise a write error (-EIO, -ENOSPC, -EDQUOT, ...)
 * under this rule: an error is returned to every lpc_fsync (and last
 * lpc_file_close) during which it happened, and one that happened while none
 * ran to the first that begins after it: each caller that could have
 * written the failed page before it started sees the error once, and a
 * caller never sees an error twice.  A page whose write failed stays dirty
 * with its data: a later lpc_fsync writes it again, and returns 0 once it
 * is on disk.
 * Context: may sleep and do I/O (the writes, fdatasync, ftruncate); takes
 * page locks one at a time, the index lock, f's size lock; waits for writes
 * in flight; never for a grace period.  The caller must hold no page lock.
 */
int lpc_fsync(struct lpc_file *f);

/*
 * Sets the size of f to size, in lpc and in the kernel's file (ftruncate).
 * Shrinking waits for the locks and the writes in flight of the pages past
 * the new end, removes them from the cache (dirty or not: their data is
 * dropped; users holding one keep a valid page, H.4), and zeroes the tail
 * of the last partial page; growing extends with zeros.
 * Return: 0; -EINVAL for NULL; -EFBIG above INT64_MAX; -EBADF for a file
 * opened read-only; -ENOMEM for the thread's block; ftruncate(2)'s errno.
 * Context: may sleep and do I/O (ftruncate); takes f's truncate lock
 * exclusive (waits for lpc_pwrite calls on f), its size lock, page locks one
 * at a time, the index lock; never waits for a grace period.  The caller
 * must hold no page lock (it waits for page locks holding those locks).
 */
int lpc_truncate(struct lpc_file *f, uint64_t size);

/*
 * The function lpc_page_read runs on a page: data is the page's frame, len
 * the cache's page size, arg the caller's.
 */
typedef void lpc_page_read_fn(const void *data, size_t len, void *arg);

/*
 * Reads page `index` of f optimistically (H.1, H.2): runs fn(data, len, arg)
 * on the cached page without taking a reference, then validates that the
 * page did not change, leave the cache or get reused while fn ran.  When
 * that fails, or the page is not cached, it gets the page as lpc_page_get
 * does (reading it on a miss) and runs fn again on the held page: under its
 * page lock if a writer is changing it.  flags must be 0.
 * Rules for fn, which runs inside lpc's RCU read section:
 *  - it may run more than once (at most three times); only the last run
 *    counts, so it writes its results to arg, overwriting earlier runs';
 *  - it must not write the page, and must tolerate a torn view: the bytes
 *    may mix two versions or come from a page being reused, so it must not
 *    follow pointers or loop on lengths read from the page without bounds
 *    checks, and must not act on what it read before the call returns 0;
 *  - it may not block, sleep, or call lpc (nor liburcu); it should be short:
 *    a grace period (frees, reclaim) waits for it.
 * Return: 0 when fn's last run saw one version of the page as cached at
 * `index` (H.1); -ENXIO for a page wholly past the end of the file; -EIO (or
 * the backend's errno) when reading it failed (C.2); -ENOMEM when no frame is
 * free anywhere (E.1) or the thread's block cannot be allocated; -EINVAL for
 * a NULL f or fn, or unknown flags.  On an error fn may have run, on a view
 * that is not valid.
 * Context: a hit takes no lock, writes no shared line (H.2) and never
 * sleeps; the fallback is lpc_page_get's context (may sleep, do I/O and
 * wait for a grace period) plus the page lock; LOCKED mode always takes the
 * fallback.  Not from a signal handler.
 */
int lpc_page_read(struct lpc_file *f, uint64_t index, unsigned flags, lpc_page_read_fn *fn,
		  void *arg);

/*
 * Sums the counters of every thread into *out (F.1).  NULL arguments are
 * ignored.  A program built against 0.1 (a smaller struct) binds to
 * lpc_stats@LPC_0.1, which fills only the 0.1 fields; one built against
 * 0.2 binds to lpc_stats@LPC_0.2, which fills the fields up to
 * wpin_dirtied: neither writes past the struct its program has.
 * batches, batch_runs and batch_pages are exact (F.1): a batch of n
 * adjacent cold pages that fit readahead's share counts 1 batch, 1 run, n
 * pages (one read); a run another thread cut by caching a page inside it
 * meanwhile counts as one run, though it took two reads.
 * Context: may sleep (lpc_threads_lock, files_lock, then free_lock: short
 * internal locks, never held across I/O, so it never waits for a read in
 * flight); no I/O, no grace period; does not register the thread.
 */
void lpc_stats(struct lpc_cache *c, struct lpc_stats *out);

/*
 * User backends: storage of the user's under a cached file
 * (lpc_file_open_backend; its man page says the same at length).
 *
 * A backend is a table of operations (struct lpc_backend_ops) and an opaque
 * handle: lpc calls the operations with the handle to read runs of pages
 * into its frames, write dirty runs back, make them durable, resize the
 * storage object and ask its size.  Anything can sit under lpc this way: a
 * network block protocol, an SPDK device, an object store, a Ceph RBD image
 * through librbd.  examples/ has one over a second file that counts its
 * I/Os (counting_backend).
 * Everything else works over it as over a path: misses and runs,
 * readahead, eviction, writeback batches and the flusher, lpc_fsync's
 * error reporting (J.3), lpc_truncate, pins, optimistic reads.
 *
 * Form.  Version 1 is synchronous: each operation does its whole transfer
 * and returns its result; lpc gets concurrency by calling operations from
 * several threads at once (the callers' and its own).  Version 2 adds one
 * optional operation, read_batch: several runs of one thread in flight at
 * once, each completed as it comes back (BK7).  A fully asynchronous form
 * (a submit operation and a completion the backend posts from its own
 * threads) is planned as a later version.
 * Versions and the ABI: the table has no size field; its version is its
 * size.  A version adds fields at the end only, and lpc reads only the
 * fields of the version a table declares: a version-1 table built against
 * lpc 0.2's header (shorter, without read_batch) stays valid, and lpc
 * never reads past its `release`.  A version-2 table handed to an lpc that
 * knows version 1 only is refused (-EINVAL): a backend that must run on
 * both opens with version 2 and, on -EINVAL, again with version 1.
 *
 * Rules for every operation (BK1-BK6):
 *  BK1 Threads: it is called from the thread of the lpc call that needs it
 *      (a miss of lpc_page_get, lpc_pread, lpc_pin or lpc_page_read; a
 *      throttled lpc_pwrite; lpc_fsync; lpc_truncate; the last
 *      lpc_file_close; lpc_cache_destroy) or from one of lpc's own threads
 *      (the readahead worker, the flusher), several at once on one handle,
 *      reads and writes of one range included: operations must be
 *      thread-safe and give pread(2)/pwrite(2) semantics (a read that
 *      overlaps a write of the same bytes returns either version of each
 *      byte).  Never from a signal handler, nor inside an RCU read section.
 *  BK2 Blocking: it may block (sleep, wait for the network) as long as it
 *      needs.  Across it lpc holds the page locks of the pages in the
 *      transfer, and may hold locks of the file (its size and truncate
 *      locks; its index rwlock across a read in LPC_LOOKUP_LOCKED), never a
 *      lock of the whole cache: a slow operation delays calls on those pages
 *      and that file; and, since the cache has one flusher thread and one
 *      readahead thread, which serve its files in turn, the background
 *      writeback and asynchronous readahead of its other files (a cache
 *      per slow storage keeps them apart).  It must not call lpc (any
 *      function, any cache): those locks may be held.  It retries EINTR
 *      itself.
 *  BK3 Frames: off is a multiple of the cache's page size; iov[k] is the
 *      frame of page off / page size + k, iov_len the page size, iov_base
 *      aligned to the page size (a frame, or a bounce buffer aligned so);
 *      1 <= iovcnt <= 1024.  One exception: when lpc completes a short
 *      write (below), the rest starts where the backend stopped.  The
 *      operation must not keep a pointer to the frames after it returns.
 *  BK4 Results: bytes transferred (never more than asked: lpc takes more as
 *      -EIO, and LPC_DEBUG builds stop on rule BACKEND-OVERRUN), or a
 *      negative errno (a value below -4095 is no errno: lpc takes it as
 *      -EIO).  The errno reaches callers as the calls' contracts
 *      say of the kernel's errors: a read error fails the pages of that
 *      read and nothing is cached (C.1, C.2); a write error keeps the pages
 *      dirty with their data, they are written again by the next writeback,
 *      and the error goes to lpc_fsync or the last close (J.3); a sync
 *      error to lpc_fsync; a truncate error to lpc_truncate (or, from the
 *      size publication, J.7, to lpc_fsync).  The fault-injection hook of
 *      lpc's tests applies to these operations as to the built-in backends.
 *  BK5 Size: the size operation's answer at open is the file's size (the
 *      truth).  Until lpc writes or truncates the file, lpc's size follows
 *      the storage as it does a kernel's file: a look past the end asks
 *      size again, so growth by another client is seen; a read that comes
 *      back short (the storage shrank) reads once more and then, where size
 *      says the storage still goes on, fails with -EIO (C.3).  Once lpc has
 *      written or truncated the file, lpc's size is its own (J.7): another
 *      client's growth is not seen until the name's last close and a new
 *      open, and cached pages are never checked against the storage again:
 *      lpc caches one client's view; a second writer is the storage's or
 *      the user's affair (exclusive locks, or opening read-only).
 *      Before lpc writes, a change behind it is seen late, as with a file
 *      changed by another process under lpc's path: only a read that
 *      starts at or past lpc's end asks size again (one that starts before
 *      it and runs past it ends at the old end); the page the old end fell
 *      in keeps, once cached, the zeros it had past that end after growth
 *      is seen; and after a shrink the first read may still return the
 *      page the storage now ends in whole (zeros past the storage's end),
 *      the next one ends where size says.  A reader that must see another
 *      client's changes closes the name and opens it again.
 *  BK6 Writes of whole pages may end past the storage's size (the last
 *      page): like a file, the storage grows; lpc then calls truncate to
 *      cut the tail back to lpc's size, or to extend the storage to it
 *      (J.7's publication, at lpc_fsync, at the last close and after a
 *      write that ended past lpc's size).  A storage of fixed size (no
 *      truncate) must end on a page to be opened read-write.
 *  BK7 read_batch (version 2, optional): the runs of one batched read
 *      (readahead's window, a stream's look-ahead, lpc_page_get_batch,
 *      a multi-run miss: up to 32 runs; disjoint, in no promised order),
 *      each as read would read it (BK3, BK4 per run).  The operation
 *      submits every run before it waits for any (one aio per run, one
 *      queue submission: the runs are at the storage together), and as
 *      each run completes, in any order, sets that run's res and calls
 *      done(arg, k) with the run's position k, exactly once per run, on
 *      the calling thread (never from a thread of the backend's: a
 *      backend whose completions arrive on its own threads hands them to
 *      the caller, as liblpc_rbd does); it returns after the last done.
 *      done completes the run's pages (they become readable, waiters
 *      wake); it does not call the backend, and after it the run and its
 *      frames are no longer the backend's.  One run's error is no other
 *      run's.  A run the operation returned without completing is taken
 *      as failed (-EIO; LPC_DEBUG builds stop on rule BACKEND-DONE, as for a
 *      second done of a run, a k out of the batch or a done from another
 *      thread, which lpc ignores).
 *      Threads and blocking as BK1, BK2: lpc calls it from any thread
 *      that reads, several at once; it may block until its runs are
 *      back.  Without it (NULL, or a version-1 table) lpc reads a batch
 *      run by run with read, and keeps one run per readahead thread, whose
 *      threads overlap the reads instead.
 */
#define LPC_BACKEND_V1 1
#define LPC_BACKEND_V2 2 /* V1 and read_batch (BK7) */

/* One run of a batched write (write_batch) or read (read_batch): iovcnt
 * frames written or read at off. */
struct lpc_backend_run {
	const struct iovec *iov;
	int iovcnt;
	uint64_t off;
	ssize_t res; /* set by write_batch: bytes written (all, or fewer: lpc
		      * writes the rest with write), or a negative errno; by
		      * read_batch: read's result for the run (BK7) */
};

/* read_batch's completion (BK7): run k of the batch is done, its res set. */
typedef void lpc_backend_done(void *arg, int k);

struct lpc_backend_ops {
	/* LPC_BACKEND_V1 or LPC_BACKEND_V2.  Any other value:
	 * lpc_file_open_backend returns -EINVAL (a later lpc reads a later
	 * version's fields). */
	uint32_t version;
	uint32_t reserved; /* must be zero */
	/* Required.  Reads the run of iovcnt whole pages at off (BK3) into
	 * iov, completing a partial transfer itself.  Return: the bytes read;
	 * fewer than asked only where the storage object ends (lpc zeroes the
	 * rest of the page and asks size whether it really ends there, C.3);
	 * a negative errno when the read failed (nothing of it is cached). */
	ssize_t (*read)(void *handle, const struct iovec *iov, int iovcnt, uint64_t off);
	/* Required (lpc calls it only on a file opened read-write).  Writes
	 * iov at off.  Return: the bytes written from the start, all of them
	 * or fewer (lpc writes the rest again at once; 0 bytes is taken as
	 * -EIO); a negative errno: the write failed with an unknown part of
	 * it on the storage; the pages stay dirty (BK4). */
	ssize_t (*write)(void *handle, const struct iovec *iov, int iovcnt, uint64_t off);
	/* Optional (NULL: lpc calls write for each run).  Writes the nruns
	 * runs of one writeback pass (up to 128 runs, 1024 pages; disjoint,
	 * in ascending order), together where the storage can (one network
	 * round trip, one queue submission), and sets each run's res. */
	void (*write_batch)(void *handle, struct lpc_backend_run *runs, int nruns);
	/* Optional (NULL: writes are durable when write returns).  Makes every
	 * write that returned before the call durable (fdatasync(2)'s
	 * promise).  lpc_fsync calls it after its writes.  Return: 0 or a
	 * negative errno, which lpc_fsync returns (J.3). */
	int (*sync)(void *handle);
	/* Optional (NULL: the storage's size is fixed, and lpc_truncate, or a
	 * publication that needs to change it, returns -EOPNOTSUPP).  Sets the
	 * storage object's size: shrinks it, or extends it with zeros.
	 * Return: 0 or a negative errno. */
	int (*truncate)(void *handle, uint64_t size);
	/* Required.  The storage object's size in bytes now, in *size (BK5).
	 * Return: 0 or a negative errno. */
	int (*size)(void *handle, uint64_t *size);
	/* Optional.  Called once for every handle lpc took (see
	 * lpc_file_open_backend), after lpc's last operation on it: the handle
	 * is the user's again (to close the connection, free it).  Called on
	 * the thread of the last lpc_file_close (after its writeback) or of
	 * lpc_cache_destroy, or of the open that did not need the handle. */
	void (*release)(void *handle);
	/* Version 2 and later (a version-1 table ends above: lpc never reads
	 * this field of one).  Optional (NULL: lpc reads run by run with
	 * read).  Reads the nruns runs together and completes each with
	 * done(arg, k) as it comes back (BK7). */
	void (*read_batch)(void *handle, struct lpc_backend_run *runs, int nruns,
			   lpc_backend_done *done, void *arg);
};

/*
 * Opens the storage object `name` over a user backend: ops and handle (see
 * above).  name is the object's identity in this cache (any string, e.g.
 * "rbd:pool/image"; copied): opening a name that is open in this cache, or
 * in its last close, returns that lpc_file (one cached copy per name, A.5
 * as for paths: the close of each open is counted, the last writes back);
 * names and paths are apart: lpc_file_open never finds a name, nor this
 * call a path.  Two names for one storage object are two copies: lpc cannot
 * tell, and the user must not.  The table `ops` must stay valid and
 * unchanged while the file is open; a name already open must be opened
 * with the same table.
 * oflags: O_RDONLY or O_RDWR (O_WRONLY opens read-write: lpc reads what it
 * caches); nothing else (O_CREAT, O_TRUNC, ...: -EINVAL; lpc_truncate(f, 0)
 * after the open truncates).  On a file opened read-only lpc never calls
 * write, write_batch or truncate.
 * The handle: on success it is lpc's until lpc calls ops->release(handle)
 * (once).  When the name was open already: read-only, and this open is
 * read-write, the copy switches to this handle for every later operation
 * and the old one is released at the last close (an operation begun on it
 * may still run until then); otherwise this handle is not needed and
 * released before the call returns.  So each successful open hands lpc one
 * reference to its handle, and release is called once per open: a handle
 * passed to two opens (the same pointer) is released twice, the first time
 * possibly while the copy still uses it.  Pass a handle per open, or count
 * references in it (as liblpc_rbd does).  On failure it stays the caller's:
 * release is not called.
 * The size: ops->size is called before files_lock is taken, on every open;
 * for a new copy its answer is the file's size (BK5).
 * Return: 0 with *out; -EINVAL for a NULL c, name, ops or out, an empty
 * name or one of 4096 bytes or more, a version other than LPC_BACKEND_V1
 * or LPC_BACKEND_V2, non-zero reserved, a NULL read, write or size, other oflags, a name
 * open with another table, or a read-write open of a fixed-size storage (no
 * truncate) whose size is not a multiple of the page size (BK6); -ENOMEM when the thread's block or the file
 * cannot be allocated; the size operation's negative errno.
 * Context: may sleep (the size operation, malloc); no page I/O, no grace
 * period; never waits for a close; takes files_lock (no operation runs
 * under it), and lpc_threads_lock on the thread's first call.
 */
int lpc_file_open_backend(struct lpc_cache *c, const char *name,
			  const struct lpc_backend_ops *ops, void *handle, int oflags,
			  struct lpc_file **out);

/*
 * Names: a path cache with rcu-walk (lpc_ns_*).  A namespace caches the
 * directory tree under one root directory: dentries hashed by (parent, name),
 * negative entries, symlinks, and each inode's attributes and access ACL.
 * Paths are relative to the root ("a/b/c"; "." or "/" is the root; a leading
 * '/' means the root, as does an absolute symlink; ".." never climbs above
 * it): the kernel's rules with the root as the process's root (chroot).
 * Errors are the kernel's for the same call under the credential (N.1):
 * -ENOENT (empty path, a missing component), -ENOTDIR, -EACCES,
 * -ENAMETOOLONG (a component over 255 bytes where it is looked up, a path of
 * 4096 bytes or more), -ELOOP (more than 40 symlinks in one walk, a final
 * symlink with O_NOFOLLOW).  Beyond those: -EINVAL for NULL arguments and
 * -ENOMEM.  Permission is the kernel's generic_permission with POSIX.1e ACLs;
 * uid 0 is the kernel's root with every capability (read and write always,
 * search on directories always, execute where some execute bit is set).
 * Mutating calls (mkdir, unlink, rename, chmod, setacl) resolve the parent
 * through the cache, then make the system call under the credential (the
 * thread's fsuid, fsgid and groups are switched for the call with per-thread
 * system calls, then restored), so it needs CAP_SETUID and CAP_SETGID unless
 * the credential is the process's own (-EPERM otherwise).
 *
 * Context of every lpc_ns_* call but create and destroy: a walk takes no lock
 * and makes no system call while every component is cached and fresh (an
 * RCU read section); otherwise it falls back to a ref-walk that makes system
 * calls (openat(O_PATH), fstat, getxattr, readlinkat) and takes the
 * namespace's lock briefly to fill the cache.  Mutating calls sleep and hold
 * the namespace's lock across their system call.  None waits for a grace
 * period.  The thread's first call registers it (lpc_threads_lock, -ENOMEM).
 */
struct lpc_ns;

struct lpc_cred {
	uid_t uid;            /* the fsuid the kernel would check */
	gid_t gid;            /* the fsgid */
	unsigned ngroups;     /* supplementary groups */
	const gid_t *groups;
};

/* An access ACL entry (tag and perm values are the kernel's ACL_*). */
struct lpc_acl_entry {
	uint16_t tag;  /* LPC_ACL_USER_OBJ .. LPC_ACL_OTHER */
	uint16_t perm; /* 4 read, 2 write, 1 execute */
	uint32_t id;   /* uid for LPC_ACL_USER, gid for LPC_ACL_GROUP, else ignored */
};
#define LPC_ACL_USER_OBJ 0x01
#define LPC_ACL_USER 0x02
#define LPC_ACL_GROUP_OBJ 0x04
#define LPC_ACL_GROUP 0x08
#define LPC_ACL_MASK 0x10
#define LPC_ACL_OTHER 0x20

/* Options (lpc_ns_setopt). */
enum lpc_ns_opt {
	LPC_NS_OPT_REVALIDATE_NS = 1, /* ns after which a cached entry is asked again;
				       * default 1e9 (1 s); 0: every walk asks */
	LPC_NS_OPT_MAX_DENTRIES = 2,  /* bound on cached dentries; default 65536, >= 16 */
	LPC_NS_OPT_FORCE_REFWALK = 3, /* 1: never walk in RCU mode (benchmarks); default 0 */
};

/* Counters of one namespace, summed over threads (exact once they are quiet). */
struct lpc_ns_stats {
	uint64_t walks;          /* path walks begun */
	uint64_t walk_rcu;       /* ... completed in RCU mode */
	uint64_t walk_ref;       /* ... completed in ref-walk mode */
	uint64_t fallback_miss;  /* RCU walks dropped: a component not cached */
	uint64_t fallback_seq;   /* ... a sequence count changed (rename, unlink, ...) */
	uint64_t fallback_reval; /* ... a cached entry older than the interval */
	uint64_t dentries;       /* dentries cached now (gauge) */
	uint64_t evictions;      /* dentries evicted for the bound */
	uint64_t reserved[8];
};

/*
 * Creates a namespace over the directory `root` (a path, opened O_PATH).
 * c provides the files that lpc_ns_open returns.
 * Return: 0 with *out; -EINVAL for NULL; -ENOTDIR; -ENOMEM; open(2)'s errors.
 * Context: may sleep (open, malloc); registers the thread.
 */
int lpc_ns_create(struct lpc_cache *c, const char *root, struct lpc_ns **out);

/*
 * Frees a namespace and its cache of names.  Files it opened stay open.
 * Return: 0; -EINVAL for NULL.  Context: may sleep; waits for the
 * namespace's pending RCU callbacks (rcu_barrier).  No other call on ns may
 * run during or after it.
 */
int lpc_ns_destroy(struct lpc_ns *ns);

/* Sets an option (enum lpc_ns_opt).  Return: 0; -EINVAL for NULL, an unknown
 * option or a value out of range.  Context: any thread; no lock. */
int lpc_ns_setopt(struct lpc_ns *ns, int opt, uint64_t value);

/* Sums the namespace's counters into *out.  NULL arguments are ignored.
 * Context: may sleep (the namespace's stats lock). */
void lpc_ns_stats(struct lpc_ns *ns, struct lpc_ns_stats *out);

/* As faccessat(root, path, mode, AT_EACCESS) under cred: mode is F_OK or an
 * OR of R_OK, W_OK, X_OK (-EINVAL otherwise); follows a final symlink.
 * Return: 0 or the errors above.  (-EROFS is not reported.) */
int lpc_ns_access(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path, int mode);

/* As stat(2) of path under cred (follows a final symlink).  The attributes
 * are the cached ones: within the revalidation interval of the kernel's. */
int lpc_ns_stat(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
		struct stat *st);

/*
 * As openat(root, path, oflags, mode) under cred, returning the cache's file
 * (one copy per file, A.5: the file already open in c is returned with its
 * open count raised, with no system call).  oflags: O_RDONLY, O_WRONLY,
 * O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_NOFOLLOW, O_CLOEXEC (others: -EINVAL).
 * Creation is the kernel's, under the credential.  O_TRUNC, with or without
 * O_CREAT, is lpc_file_open's: -EBUSY while the cache holds the file open
 * or its last close runs (nothing changed, no wait), else the file is
 * truncated and every cached link of it asked again; its permission is the kernel's (write access, under the
 * credential).  An existing FIFO or device: -EINVAL at once, never a wait
 * for its other end (the open holds the namespace's lock); a conflicting
 * lease: -EWOULDBLOCK, not a wait for its break.
 * Return: 0 with *out (close it with lpc_file_close); the kernel's errors;
 * -EISDIR for a directory however opened (an lpc_file is a regular file),
 * -EINVAL for another type; lpc_file_open's -EBUSY and -ENOMEM.
 */
int lpc_ns_open(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path, int oflags,
		mode_t mode, struct lpc_file **out);

/* Mutations: the system call under cred, then the cache updated.
 * mkdir: as mkdirat; unlink: as unlinkat (flags 0 or AT_REMOVEDIR); rename:
 * as renameat2 (flags RENAME_NOREPLACE, RENAME_EXCHANGE or 0); chmod: as
 * chmod(2) (follows a final symlink); setacl: sets path's access ACL to the
 * n entries (n 0 removes it), as setxattr of system.posix_acl_access.
 * Return: 0 or the kernel's negative errno; -EINVAL for NULL arguments;
 * -EPERM when the credential cannot be taken (see above). */
int lpc_ns_mkdir(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path, mode_t mode);
int lpc_ns_unlink(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path, int flags);
int lpc_ns_rename(struct lpc_ns *ns, const struct lpc_cred *cred, const char *oldpath,
		  const char *newpath, unsigned flags);
int lpc_ns_chmod(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path, mode_t mode);
int lpc_ns_setacl(struct lpc_ns *ns, const struct lpc_cred *cred, const char *path,
		  const struct lpc_acl_entry *acl, unsigned n);

/*
 * Many misses in flight from one thread: batched gets and read streams
 * (src/filemap/stream.c; tests/unit/test_stream.c).  The
 * absent pages are read as readahead reads a window: adjacent ones in one
 * I/O, several runs at the device at once (the readahead threads; LOCKED
 * mode reads them in the calling thread, one run after the other), with
 * free frames only, within readahead's share of the cache (a quarter of the
 * frames), so neither ever makes another thread wait for a frame: short of
 * frames, they read less ahead, and each page is then read as lpc_page_get
 * reads it.  Every page handed out has lpc_page_get's guarantees (A.1,
 * C.1-C.3).
 * How many reads are at the device at once depends on the backend.  A
 * backend that submits a batch together (io_uring) has the runs of one
 * file taken in batches of up to 32 runs, each batch in one submission,
 * by at most four threads at once: one stream's look-ahead, up to
 * max_distance runs and at most 128, is at the device at once.  The sync
 * backend reads one run per readahead thread, and at most four threads read
 * one file at once (so that a file whose storage stalls holds at most half
 * of the cache's eight threads, and other files' reads go on): with it, one
 * file has at most four reads ahead in flight, plus the one its consumer
 * reads itself when it reaches a run no thread has taken yet, whatever
 * max_distance is.  That bound is by design; for more depth from one
 * thread on one file, use io_uring.
 *
 * lpc_page_get_batch gets the pages of f at indices[0..n), as n calls of
 * lpc_page_get (flags must be 0) would, but first starts the reads of every
 * absent page among them together.  On return each entry has its own
 * result: errs[i] is 0 with pages[i] referenced and UPTODATE, or a negative
 * errno as lpc_page_get's (-ENXIO past the end of the file; -EIO when that
 * page's own read failed: a failed run is read again page by page, so only
 * the bad page fails; -ENOMEM) with pages[i] NULL.  The caller puts every
 * pages[i] that is not NULL, once each: an index that appears k times in
 * the array is read once and holds k references, one per entry.  Entries
 * are completed in array order; the reads may complete in any order.
 * Return: the number of entries that got their page (0..n); -EINVAL for a
 * NULL f, NULL arrays with n > 0, n > INT32_MAX or unknown flags (nothing
 * held); -ENOMEM when the thread's block cannot be allocated (nothing held).
 * Context: lpc_page_get's (may sleep, do I/O, wait for a grace period),
 * plus the readahead queue's mutex; may start a readahead thread.
 */
int lpc_page_get_batch(struct lpc_file *f, const uint64_t *indices, size_t n, unsigned flags,
		       struct lpc_page **pages, int *errs);

/*
 * A read stream: the pages of f at the indices a callback produces, in the
 * order it produces them, read ahead of the consumer (PostgreSQL's
 * read_stream).  The stream looks up to `distance` entries ahead: the
 * distance doubles (up to max_distance) each time the consumer would wait
 * for a page, and halves when a whole distance of entries in a row were
 * cached when the stream first saw them, so a list that hits costs no
 * look-ahead, and a list that hits in part keeps its look-ahead.
 * Absent pages of the look-ahead at adjacent indices, next to each other in
 * the list in ascending or descending order, are read with one I/O.
 * Between calls the stream holds one reference on each look-ahead page it
 * read (from the insert of its read) or found cached, until it hands it
 * out, so other threads' misses do not evict it first; no lock.  The stream
 * never has more than max_pages pages read, being read or held ahead of its
 * consumer (the frame bound; capped at a quarter of the cache's frames),
 * and the streams of a cache hold at most a quarter of its frames together
 * (past it a stream reads ahead without holding).  A held page is never
 * evicted; lpc_invalidate skips it, and the stream drops it itself before
 * its next hand-out, so no page handed out is older than an invalidate
 * that returned before the call; lpc_truncate removes it as any holder's.
 *
 * cb(arg, &index, &user) returns 1 with the next entry (its page index and
 * a pointer handed back with its page), 0 at the end of the list, or a
 * negative errno that ends the list (lpc_stream_next returns it once, after
 * the entries before it).  It runs inside lpc_stream_next (and only there),
 * in the calling thread, with no lpc lock held: it may call lpc, but not
 * this stream.  With cb NULL the list is opts->indices[0..n), the user
 * pointers opts->users[i] (NULL users: NULL pointers).
 */
struct lpc_stream;
typedef int lpc_stream_cb(void *arg, uint64_t *index, void **user);
struct lpc_stream_opts {
	uint32_t max_distance;   /* entries looked ahead at most (0: 64; at most 4096) */
	uint32_t max_pages;      /* pages read or held ahead at most (0 or more: max_distance) */
	const uint64_t *indices; /* the list when cb is NULL */
	void *const *users;      /* its user pointers, or NULL */
	size_t n;                /* entries of indices */
};

/*
 * Opens a stream over f (opts NULL: the defaults and an empty array).
 * Return: 0 with *out; -EINVAL for a NULL f or out, NULL indices with n > 0
 * and no cb, or max_distance over 4096; -ENOMEM.
 * Context: allocates; no I/O, no lock.  A stream is used by one thread at a
 * time, and closed before the last close of its file.
 */
int lpc_stream_open(struct lpc_file *f, lpc_stream_cb *cb, void *arg,
		    const struct lpc_stream_opts *opts, struct lpc_stream **out);

/*
 * The next entry, in the order the list gave them.  Each entry is handed out
 * exactly once.  Return: 1 with *page referenced and UPTODATE (the caller
 * puts it) and *user the entry's pointer; 0 at the end (then always 0);
 * a negative errno for this entry's page, as lpc_page_get's (-ENXIO, -EIO,
 * -ENOMEM; *page NULL, *user the entry's: the stream goes on with the next
 * entry at the next call), or the callback's error; -EINVAL for a NULL s or
 * page.  user may be NULL.
 * Context: lpc_page_get's, plus the callback, and the readahead queue's
 * mutex; may start a readahead thread.
 */
int lpc_stream_next(struct lpc_stream *s, struct lpc_page **page, void **user);

/*
 * Frees the stream, at any point of its list, and puts the references it
 * held on its look-ahead (the pages stay cached).  Reads it started and
 * that are still in flight complete on their own (the readahead threads),
 * and their pages stay cached; pages it handed out stay the caller's.
 * NULL is ignored.
 * Context: any thread but a signal handler; no I/O, no wait.
 */
void lpc_stream_close(struct lpc_stream *s);

#ifdef __cplusplus
}
#endif
#endif /* LPC_LPC_H */
