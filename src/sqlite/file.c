/* SPDX-License-Identifier: MIT */
/*
 * file.c - the main database file's io methods: its data through lpc, its
 * locks and shared memory through the "unix" VFS's file of the same path
 * (`real`), and the checks that keep lpc's pages coherent with what other
 * processes write.
 *
 * Data: xRead -> lpc_pread, xWrite -> lpc_pwrite, xSync -> lpc_fsync,
 * xTruncate -> lpc_truncate, xFileSize -> lpc's size as the node keeps it.
 * Any SQLite page size (512..65536) against any lpc page size works: the
 * lpc calls take any byte range (a SQLite page smaller than lpc's is a
 * partial lpc page, read first, changed under its page lock).  No mmap
 * (xFetch returns no page, SQLITE_FCNTL_MMAP_SIZE is answered 0): a mapping
 * of the kernel's file would bypass lpc.
 *
 * Journals, the WAL and temporary files are the unix VFS's own (vfs.c opens
 * them with it): they are written once and read back only for a rollback, a
 * recovery or by readers of the WAL, so caching them would spend frames
 * that the database's pages need; the unix VFS also keeps the WAL coherent
 * with other processes for free.
 *
 * Durability and commit points.  A process killed (the application's
 * crash) and an OS crash must lose what they lose with unix.  lpc holds the
 * database's writes in pages of this process, which a kill loses; so by
 * each commit point the writes it depends on must be in the kernel's file
 * ("kernel": written, not necessarily synced), and where the synchronous
 * level asks, on disk ("disk").  SQLite's calls (3.40; pager.c, wal.c):
 *  - sqlite3PagerSync sends SQLITE_FCNTL_SYNC to the database right before
 *    xSync, and in its place with synchronous=OFF: in every commit of a
 *    rollback journal and every playback (rollback, hot-journal recovery),
 *    before the journal is deleted, truncated or zeroed;
 *  - walCheckpoint sends SQLITE_FCNTL_CKPT_DONE after its backfill writes,
 *    then (complete backfill only) xTruncate and, unless OFF, xSync of the
 *    database, then stores nBackfill in the wal-index.
 * lpc's calls: SQ4 (FCNTL_SYNC) and SQ5 (CKPT_DONE) write lpc's dirty
 * pages back (lpc_wb_flush_file: in the kernel, no fdatasync); xSync is
 * lpc_fsync (on disk, J.2); SQ1 at the unlock writes back what is left.
 *
 *  mode, event             commit point          in the kernel by then  on disk     lpc
 *  DELETE commit           xDelete(journal)      the new pages          sync: them  SQ4, xSync
 *  TRUNCATE commit         journal xTruncate(0)  the new pages          sync: them  SQ4, xSync
 *  PERSIST commit          journal header zeroed the new pages          sync: them  SQ4, xSync
 *  MEMORY, OFF commit      the commit returns    the new pages          sync: them  SQ4, xSync,
 *                          (a kill mid-write tears the file, with unix too)        SQ1
 *  rollback (pages written) journal ends, as a commit: the old pages    sync: them  SQ4, xSync
 *  hot-journal recovery    journal ends          the old pages, size    sync: them  SQ7, SQ4, xSync
 *  WAL commit              wal-index header      nothing of lpc's (the WAL's frames are unix's)
 *  checkpoint, complete    nBackfill stored      the backfilled pages   sync: them  SQ5, xSync
 *  checkpoint, partial     nBackfill stored      the backfilled pages   none (the   SQ5
 *    (or any with OFF)     (no xSync of the db)                         WAL keeps them)
 *  WAL restart, truncate   WAL header / size     as a complete checkpoint (one runs first)
 *  WAL close               xDelete(WAL)          as a complete checkpoint (one runs first), SQ6
 *  rollback-journal close  nothing: unlocked before
 * "new pages": those of the transaction; "sync": unless synchronous=OFF
 * (then nothing is on disk, as with unix).  A failed write-back at SQ4
 * fails the commit (SQLITE_IOERR_WRITE or SQLITE_FULL), at xSync with
 * SQLITE_IOERR_FSYNC; the journal stays hot.  At SQ5 SQLite ignores the
 * answer (a file-control hint): a failed write-back there leaves the pages
 * dirty, and a partial checkpoint (or OFF) stores nBackfill anyway; the
 * complete one's xSync (lpc_fsync) reports it.  Not done: failing such a
 * partial checkpoint.  tests/sqlite/test_sqlite_durability.c checks each
 * row at each level: a child is killed right after the commit point (after
 * the unix system call, or at the end of the checkpoint lock's hold) and
 * the reopened database (unix) has what unix's own run of the row leaves.
 *
 * Coherence with other processes.  Another process's writes reach the
 * kernel's file, not this process's lpc pages, so lpc must learn of them
 * before any connection here reads a page they changed.  SQLite's own
 * per-connection cache has the same problem and the same answers, which we
 * follow:
 *
 *  SQ1  Before this process gives up the lock that let it write (rollback:
 *      an unlock below RESERVED; WAL: the end of a checkpoint, releasing
 *      WAL_CKPT_LOCK), every page it wrote is written back (node->wgen,
 *      raised by xWrite and xTruncate before lpc's call, against
 *      node->wdone, raised to it by the write-back or xSync that returned
 *      0 after covering them): another process never reads
 *      the kernel's file without them, and no dirty page of ours can later
 *      overwrite its writes.  SQ4 and SQ5 (above) have usually done it.
 *   SQ1f A failed write-back keeps the lock (xUnlock returns the error and
 *      does not call unix's): while pages are dirty in lpc no other process
 *      may write the file, since lpc_invalidate skips dirty pages (B.1) and
 *      the flusher would later write them over its commit (story
 *      unlock-failed).  Each later xUnlock, and the close, retries; other
 *      processes get SQLITE_BUSY meanwhile.  (Before, the lock went: this
 *      process then read its stale dirty pages and wrote them back over
 *      another process's commit, malformed.)  WAL mode, the same: when
 *      the write-back at the end of a checkpoint fails, WAL_CKPT_LOCK is
 *      kept (p->ckpt_kept; SQLite ignores the unlock's answer and believes
 *      it released): no other process checkpoints newer frames of those
 *      pages into the file, where the flusher would later overwrite them
 *      (story ckpt-failed: malformed before).  This connection's next
 *      request for it is answered from p->ckpt_kept, its next checkpoint's
 *      end retries, and its xShmUnmap lets it go with unix's shm.  Only
 *      the checkpoint's own one-lock unlock keeps it (a recovery's range is
 *      released as before: it writes nothing to the file).
 *  SQ2  Rollback journal: when the first connection of this process takes a
 *      SHARED lock (node->nshared 0 -> 1; while any connection here holds
 *      SHARED no other process can write the file; nshared is raised after
 *      unix's xLock returned and lowered before unix's xUnlock, so it never
 *      counts a connection whose POSIX lock may be gone: story
 *      nshared-race), read bytes 24..39 of
 *      the kernel's file (the file change counter, which every writing
 *      transaction changes; SQLite's pager reads the same bytes for the same
 *      reason) around the cache.  If they differ from what this process
 *      last wrote or saw (node->ver), drop every lpc page of the file
 *      (lpc_invalidate) and set lpc's size to the kernel's (lpc_truncate,
 *      a no-op ftruncate; safe because no other process can change the size
 *      while we hold SHARED).  Our own writes of page 1 update node->ver.
 *      Cost (strace -c, one connection, point selects on a database lpc
 *      holds): 7 system calls a query, 6 of them SQLite's own and paid by
 *      unix too (4 fcntl for SHARED and its release, 2 stat for the
 *      journal and WAL), 1 SQ2's pread; unix pays 8 plus its page misses
 *      (its 8th is an fstat that lpc's xFileSize does not need).  Serving
 *      SQLite's own read of these 16 bytes (sqlite3PagerSharedLock, right
 *      after SHARED when the connection held it before) around the cache
 *      instead would move that system call, not remove it: that read is an
 *      lpc hit now (about 200 instructions of the ~7,800 a query spends in
 *      user space).  The read is skipped already while another connection
 *      of this process holds SHARED (8 threads: 0.00 reads a query).  What
 *      would remove system calls is holding SHARED across this process's
 *      transactions (no fcntl, no SQ2 read while held), which delays other
 *      processes' writers; not done.
 *  SQ3  WAL: the database file changes only by checkpoints, which write
 *      pages and then advance nBackfill in the wal-index (shared memory),
 *      always under WAL_CKPT_LOCK; a WAL restart changes aSalt and sets
 *      nBackfill to 0 without touching the database.  node->wal_* is the
 *      (aSalt, nBackfill) that lpc's pages reflect.  What this process does
 *      itself (its appends, checkpoints and restarts) must not drop them;
 *      what another process's checkpoint may have written must:
 *   SQ3a When a connection here takes WAL_CKPT_LOCK (a checkpoint, or a
 *      recovery), the current pair is compared with node->wal_*; on a
 *      difference lpc's pages are dropped, lpc's size is set from the
 *      kernel's (safe: no other checkpointer now) and the pair recorded.
 *      In the same node->lock section node->ckpt_mine is set.
 *   SQ3b When a connection here takes a read lock (WAL_READ_LOCK(i)), the
 *      pair is compared the same way, unless node->ckpt_mine: then no other
 *      process can change the file (it would need WAL_CKPT_LOCK), the pair
 *      was reconciled at SQ3a, and whatever moved it since is our own
 *      backfill (written through lpc) or a restart (no file change), so
 *      nothing is dropped.  (Before this step a reader here that met our
 *      own checkpoint half done dropped everything: 3764 pages dropped in
 *      5,000 queries of 4 threads, 20 % writes, against 0 now.)  At the end
 *      of our checkpoint (the release of WAL_CKPT_LOCK) SQ1 writes back,
 *      then the pair is recorded and ckpt_mine cleared in one node->lock
 *      section, still under WAL_CKPT_LOCK; a failed SQ1 clears ckpt_mine
 *      without recording, so the next check drops.
 *   SQ3c A restart by a writer here (it holds WAL_WRITE_LOCK, so nobody
 *      else restarts; node->write_mine, with aSalt and mxFrame at the lock
 *      in node->w_*) moves the pair without changing the file.  It is
 *      taken as no change only when provably nothing else happened: the
 *      recorded pair is (w_salt, w_mxframe), i.e. lpc's pages reflect a
 *      WAL that was wholly backfilled when the write lock was taken (within
 *      one salt mxFrame only grows, and only under the write lock, which we
 *      hold: no checkpoint had anything left to write), the salt moved by
 *      exactly one restart (aSalt[0] + 1, big-endian) and nBackfill is 0.
 *      Any reader here may meet it (the writer's own read lock right after
 *      the restart, or another connection's) and records the new pair; so
 *      does the writer at the release of WAL_WRITE_LOCK.
 *      Anything else is a difference, and the pages are dropped (never a
 *      stale page; dropping too often costs reads, not correctness).  A
 *      checkpoint by another process may have grown the file past lpc's
 *      size: the drop raises lpc's size to the kernel's (SQ8), and until
 *      our next checkpoint lock sets it from the kernel's (SQ3a), a short
 *      lpc_pread is completed from the kernel's file (node->maybe_grown:
 *      the file may grow again while our read transaction runs).
 *   SQ3d The pair identifies a state of one WAL file only.  A WAL can be
 *      deleted (and then recreated, empty: its pair (0, 0, 0) again) only
 *      by a connection holding EXCLUSIVE on the database, and a connection
 *      of ours in WAL mode holds SHARED as long as it has the WAL open; so
 *      once nshared has been 0 the pair may describe a WAL that is gone
 *      (story wal-recreated: another process's commit in place, not on
 *      page 1, then its close's checkpoint and WAL deletion, change neither
 *      the change counter nor the pair).  What does change then is the
 *      database file: another process changes it only by writing it (its
 *      checkpoints; deleting a WAL wholly backfilled changes nothing lpc
 *      holds).  So when nshared goes 1 -> 0 with wal_known, record_id
 *      stats the file (device, inode, size, change time), trusted only if
 *      the change time is over ID_TRUST_NS old (a write after the stat
 *      then sets a later one; the timestamps tick at least every 10 ms);
 *      when nshared goes 0 -> 1 (SQ2) and bytes 18-19 say WAL, check_id
 *      keeps the pair only if that identity is recorded and unchanged;
 *      anything else clears wal_known and the next read lock drops lpc's
 *      pages.  Cost (a process that opens, runs 20 point selects and
 *      closes, an idle connection of it keeping the node): 2 stat calls a
 *      cycle, 0 lpc misses; dropping on every first SHARED instead (the
 *      first version of this fix) cost 25 misses a cycle, 3-5x the time.
 *      Rejected: the change counter (a WAL commit does not write it), the
 *      wal-index's iChange (reset by a new WAL's recovery), the WAL's
 *      inode (reused at once).  Limits: a clock set backwards, or a
 *      change time set by hand, could hide a change (as for make).
 *  SQ6  Where the VFS learns that another process grew the file while it
 *      holds no lock that keeps writers out (a read completed from the
 *      kernel, xFileSize with maybe_grown, the close), lpc's size follows
 *      it up (lpc_filemap_size_seen: a CAS-max, no ftruncate), so that
 *      lpc's last close never publishes a size below another process's
 *      pages (story wal-close-size: a WAL close checkpoints in exclusive
 *      WAL mode, without the shm lock calls SQ3a watches).
 *  SQ7  xFileSize at RESERVED or more (no other process can change the
 *      file) answers the kernel's size when it is larger, and lpc's follows
 *      (SQ6): a writer that died holding the lock may have grown the file
 *      with spilled pages, and the hot-journal rollback's pager_truncate
 *      must see them to cut them (story hot-shrink).  Cost: an fstat per
 *      xFileSize under RESERVED (lpcbench sqlite's TPC-B: none, it never
 *      asks there).
 *  What lpc's bytes of the file are: a copy of the kernel's file as it was
 *  when lpc read them, not a snapshot of SQLite's.  With lpc pages larger
 *  than SQLite's, one lpc page holds several SQLite pages; a read of one
 *  of them caches the others as the file has them then, and this process's
 *  read transaction never looks at them again if it reads them from the
 *  WAL, so another process's checkpoint may rewrite them in the file while
 *  lpc keeps the old bytes.  Harmless for reads (SQ3's next check sees
 *  nBackfill move and drops them before a transaction reads them from the
 *  file); not for writes: a write of one SQLite page writes its whole lpc
 *  page back, stale neighbours included.  So every write of the file by
 *  this process starts from pages checked against the file under a lock
 *  that keeps every other writer out: rollback journal, SQ2 at the first
 *  SHARED (no other process writes while any connection here holds it);
 *  WAL, SQ3a at WAL_CKPT_LOCK, or SQ9.
 *  SQ8  The end of the file.  A miss zeroes what lies past lpc's size, so
 *      lpc's copy of the page holding lpc's end of the file has zeros
 *      where another process's checkpoint may later write pages (the file
 *      grows past it).  Whenever lpc's size is raised to the kernel's
 *      (follow_kernel_size: SQ3's drops, SQ6), the lpc page holding the old
 *      end is dropped, after the size is raised (a miss in between reads
 *      it with the new size); and a drop (drop_pages) sets or raises the
 *      size before it drops the pages, for the same reason.  (Before, SQ3b
 *      dropped the pages but left lpc's size at the old end; SQLite's next
 *      read of page 1 cached the lpc page with zeros past it, and lpc then
 *      learned the kernel's size by itself (no size kept yet): pages past
 *      the old end read as zeros.  Seen with a TRUNCATE checkpoint of
 *      another process, whose emptied WAL sends every read to the file:
 *      test_sqlite_truncate_ckpt, malformed before.)
 *  SQ9  WAL mode, xLock(EXCLUSIVE) on the database: the close of the last
 *      connection (sqlite3WalClose) and a change of journal mode away from
 *      WAL take it and then checkpoint in the WAL's exclusive mode, which
 *      calls no shm lock, so SQ3a does not run; nor does it in
 *      locking_mode=EXCLUSIVE.  With EXCLUSIVE nobody else can change the
 *      file (another process's checkpoint needs a SHARED lock on it), so
 *      the wal-index is compared as at SQ3a, and on a difference lpc's
 *      pages are dropped and lpc's size set from the kernel's (drop_pages
 *      with resize) before the checkpoint writes.  (Before, a close after a
 *      read transaction that had held its mark while another process
 *      backfilled some SQLite pages of an lpc page wrote our stale copy of
 *      them back with the pages the close's checkpoint wrote: story
 *      close-neighbours, commits lost or malformed.)  Cost: three loads
 *      from the wal-index per EXCLUSIVE lock; nothing is dropped when the
 *      pair is unchanged.  A heap-memory wal-index (locking_mode=EXCLUSIVE
 *      set before the WAL is opened: SQLite takes EXCLUSIVE first, maps no
 *      shared memory, and its read locks call no shm lock, so SQ3b never
 *      runs): there is no pair to compare; if SQ2 found the file in WAL
 *      mode (node->wal_file) and did not keep the pair (SQ3d: the file
 *      changed, or nothing was known), the pages are dropped, with the
 *      kernel's size (story heap-wal: the other process's commit was not
 *      seen before).
 *  Why a page being dropped is never in use: SQ2 runs when no connection of
 *  this process holds SHARED, so none reads; in SQ3 a checkpoint of another
 *  process only writes SQLite pages that every reader of ours reads from
 *  the WAL (frames at or below every read mark; readers of the database
 *  alone, WAL_READ_LOCK(0), are kept out while it backfills), so a reader of
 *  ours never caches a SQLite page it reads while another process writes
 *  it.  lpc_invalidate skips held, locked and dirty pages (B.1); by SQ1
 *  none is dirty, and none is held or being read for the reason above (and
 *  SQ1f keeps the lock while one is dirty).  Not closed, with lpc pages
 *  larger than SQLite's: a miss of an older read transaction of ours that
 *  is still reading an lpc page (locked, so skipped) when SQ3 drops may
 *  keep neighbours read before another process's checkpoint wrote them.
 *  Limits: a process that writes the file without SQLite's locks, or a
 *  connection of this same process that opens the file with another VFS,
 *  is not seen (and closing a descriptor of the file drops the process's
 *  POSIX locks, as with unix).  lpc_sqlite(7) says so.
 *
 * Exclusive coherence (lpc_coherence=exclusive: lpc refuses other processes).  The
 * node holds an OFD lock on SQLite's lock bytes while any connection of
 * this process has the file open (registry.c): no other process can take
 * any SQLite lock on the file, so none can change it, and SQ1-SQ3, SQ6 and
 * SQ7 have nothing to do (none runs: no write-back at unlock, no read of the
 * change counter, no wal-index check; lpc's size is the kernel's from the
 * lock on).  SQ4 and SQ5 run in both modes: they are about a kill of this
 * process, which lets the OFD lock go with the pages still in lpc.
 * SQLite's file locks between the connections of this process are kept
 * here, in the node, with the semantics the unix VFS's inode lock table
 * gives the connections of one process (os_unix.c unixLock/posixUnlock),
 * no system call:
 *   node->xlevel: the highest lock any connection holds (NONE, SHARED,
 *   RESERVED, PENDING, EXCLUSIVE); node->xshared: connections holding
 *   SHARED or more; p->lock: this connection's.  At most one connection
 *   is above SHARED, and then xlevel is its level.  All under node->lock.
 *  SL1  xLock(L) with p->lock >= L: nothing.  If another connection is above
 *      SHARED (p->lock != xlevel) and it is at PENDING or more, or L is
 *      above SHARED: SQLITE_BUSY (a PENDING or EXCLUSIVE holder blocks new
 *      SHARED locks; one writer at a time).
 *  SL2  L = SHARED: xshared++, xlevel = max(xlevel, SHARED).
 *  SL3  L = EXCLUSIVE with other SHARED holders (xshared > 1): SQLITE_BUSY,
 *      and this connection holds PENDING (xlevel = p->lock = PENDING):
 *      the readers finish, no new one starts, the writer retries.  Else
 *      (RESERVED, or EXCLUSIVE alone) xlevel = p->lock = L.
 *  SL4  xUnlock(L < p->lock): from above SHARED, xlevel = SHARED; to NONE,
 *      xshared-- and xlevel = NONE at 0; p->lock = L.
 *  xCheckReservedLock: xlevel > SHARED.
 * Durability and hot journals are SQLite's as with unix; the hot-journal
 * check's xAccess calls are answered by registry.c (XJ1-XJ3).  Before the
 * last connection of the process closes (and the OFD lock goes), the
 * pages written are written back (lpcs_close), so the next process reads
 * them from the file.  WAL mode: the wal-index stays the unix VFS's shared
 * memory (the -shm file and its locks), which no other process can reach
 * without a SHARED lock on the database first.
 * An opener's object (lpc_sqlite_set_opener, remote.c) runs in this mode
 * with no kernel file at all: p->real is NULL, node->remote, no OFD lock
 * (the opener's own lock keeps other processes out), and its methods
 * (lpcs_remote_io_methods) have no shared memory: SQLite allows WAL there
 * only in locking_mode=EXCLUSIVE, with a heap-memory wal-index.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "sqlite_int.h"

/* The wal-index (SQLite's wal.c, file format 3007000): two copies of the
 * 48-byte header, then the checkpoint info; all native byte order except
 * aSalt (copied from the WAL's big-endian header). */
#define WALIDX_MXFRAME 16
#define WALIDX_SALT 32
#define WALIDX_BACKFILL 96
#define WAL_WRITE_LOCK 0
#define WAL_CKPT_LOCK 1
#define WAL_READ_LOCK0 3

static inline struct lpcs_file *F(sqlite3_file *f)
{
	return (struct lpcs_file *)f;
}

static uint32_t shm_u32(volatile void *shm, unsigned off)
{
	return __atomic_load_n((uint32_t *)((char *)shm + off), __ATOMIC_ACQUIRE);
}

static uint32_t be32(uint32_t raw)
{
	const unsigned char *b = (const unsigned char *)&raw;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* The file's size as the kernel sees it, through the unix file. */
static int kernel_size(struct lpcs_file *p, uint64_t *size)
{
	sqlite3_int64 s = 0;
	int rc = p->real->pMethods->xFileSize(p->real, &s);

	*size = s < 0 ? 0 : (uint64_t)s;
	return rc;
}

static void follow_kernel_size(struct lpcs_file *p, uint64_t ks);
static bool unwritten_quiet(const struct lpcs_file *p);

/* Drops lpc's pages of the file (SQ2, SQ3, SQ9); with resize, sets lpc's
 * size to the kernel's, else only raises it to the kernel's (SQ8).  The
 * size first, the pages after: a miss of this process between the two
 * reads the last page with the new size (SQ8).  Caller holds node->lock. */
static int drop_pages(struct lpcs_file *p, bool resize)
{
	struct lpcs_node *n = p->node;
	uint64_t ks;
	int rc;

	if (!resize) {
		/* SQ8: another process's checkpoint may have grown the file;
		 * the kernel's size is ours to follow only with nothing of
		 * ours unwritten. */
		if (unwritten_quiet(p) && kernel_size(p, &ks) == SQLITE_OK)
			follow_kernel_size(p, ks);
		atomic_store_explicit(&n->maybe_grown, 1, memory_order_relaxed);
	} else {
		rc = kernel_size(p, &ks);
		if (rc != SQLITE_OK)
			return rc;
		/* lpc_truncate sets lpc's size (a no-op ftruncate).  -EBADF:
		 * lf is read-only, so lpc never kept a size of its own and
		 * follows the kernel's by itself. */
		if (ks != atomic_load_explicit(&n->size, memory_order_relaxed)) {
			rc = lpc_truncate(p->lf, ks);
			if (rc < 0 && rc != -EBADF)
				return lpcs_errcode(rc, SQLITE_IOERR_TRUNCATE);
		}
		atomic_store_explicit(&n->size, ks, memory_order_relaxed);
		atomic_store_explicit(&n->maybe_grown, 0, memory_order_relaxed);
	}
	rc = lpc_invalidate(p->lf, 0, 0);
	if (rc < 0)
		return lpcs_errcode(rc, SQLITE_IOERR_READ);
	return SQLITE_OK;
}

/* SQ1: the writes counted up to g are in the kernel's file. */
static void written(struct lpcs_file *p, uint64_t g)
{
	uint64_t d = atomic_load_explicit(&p->node->wdone, memory_order_relaxed);

	while (d < g && !atomic_compare_exchange_weak_explicit(&p->node->wdone, &d, g,
							       memory_order_release,
							       memory_order_relaxed))
		;
}

/* SQ1, SQ4, SQ5: puts what this process wrote into the kernel's file (no
 * fdatasync: that is xSync's).  Return: SQLite code. */
static int flush(struct lpcs_file *p)
{
	uint64_t g = atomic_load_explicit(&p->node->wgen, memory_order_acquire);
	int rc;

	if (atomic_load_explicit(&p->node->wdone, memory_order_acquire) == g)
		return SQLITE_OK;
	rc = lpc_wb_flush_file(p->lf);
	if (rc < 0)
		return lpcs_errcode(rc, SQLITE_IOERR_WRITE);
	written(p, g);
	return SQLITE_OK;
}

/* SQ6, SQ7: no write of this process is pending (every page it wrote was
 * written back and the size published by flush or xSync since): the
 * kernel's size is then not momentarily ours rounded up to a page. */
static bool unwritten_quiet(const struct lpcs_file *p)
{
	return atomic_load_explicit(&p->node->wdone, memory_order_acquire) ==
	       atomic_load_explicit(&p->node->wgen, memory_order_acquire);
}

/* Another process may have grown the kernel's file past lpc's size (SQ3,
 * SQ6): lpc's size and the node's follow it up, never down.  SQ8: lpc's
 * copy of the page that held the old end has zeros past it (a miss zeroes
 * what lies past lpc's size); the kernel's file has the other process's
 * bytes there: that page is dropped after the size is raised. */
static void follow_kernel_size(struct lpcs_file *p, uint64_t ks)
{
	struct lpcs_node *n = p->node;
	uint64_t s = atomic_load_explicit(&n->size, memory_order_relaxed);
	uint64_t old = lpc_filemap_size_seen(p->lf, 0), ps = lpcs_page_size; /* lpc's now */

	if (ks <= s && ks <= old)
		return;
	lpc_filemap_size_seen(p->lf, ks);
	while (s < ks && !atomic_compare_exchange_weak_explicit(&n->size, &s, ks, memory_order_relaxed,
								memory_order_relaxed))
		;
	/* The lower of lpc's and the node's old ends (lpc may have followed
	 * the kernel by itself, with a page cached at the node's end). */
	if (s < old)
		old = s;
	if (old < ks && (old & (ps - 1)))
		lpc_invalidate(p->lf, old & ~(ps - 1), ps);
}

/* SL1-SL3: xLock in exclusive coherence. */
static int excl_lock(struct lpcs_file *p, int level)
{
	struct lpcs_node *n = p->node;
	int rc = SQLITE_OK;

	if (p->lock >= level)
		return SQLITE_OK;
	pthread_mutex_lock(&n->lock);
	if (p->lock != n->xlevel &&
	    (n->xlevel >= SQLITE_LOCK_PENDING || level > SQLITE_LOCK_SHARED)) {
		rc = SQLITE_BUSY; /* SL1 */
	} else if (level == SQLITE_LOCK_SHARED) { /* SL2 */
		n->xshared++;
		if (n->xlevel < SQLITE_LOCK_SHARED)
			n->xlevel = SQLITE_LOCK_SHARED;
		p->lock = SQLITE_LOCK_SHARED;
	} else if (level == SQLITE_LOCK_EXCLUSIVE && n->xshared > 1) { /* SL3 */
		rc = SQLITE_BUSY;
		n->xlevel = p->lock = SQLITE_LOCK_PENDING;
	} else {
		n->xlevel = p->lock = level;
	}
	pthread_mutex_unlock(&n->lock);
	return rc;
}

/* SL4: xUnlock in exclusive coherence. */
static int excl_unlock(struct lpcs_file *p, int level)
{
	struct lpcs_node *n = p->node;

	if (p->lock <= level)
		return SQLITE_OK;
	pthread_mutex_lock(&n->lock);
	if (p->lock > SQLITE_LOCK_SHARED)
		n->xlevel = SQLITE_LOCK_SHARED;
	if (level == SQLITE_LOCK_NONE && --n->xshared == 0)
		n->xlevel = SQLITE_LOCK_NONE;
	p->lock = level;
	pthread_mutex_unlock(&n->lock);
	return SQLITE_OK;
}

/* SQ3d: a change time this much older than the moment it is read is
 * trusted: any later write sets a later one (the kernel's timestamps are
 * taken from a clock that ticks at least every 10 ms, HZ >= 100). */
#define ID_TRUST_NS 100000000ll

/* SQ3d: the file's identity now (stat), and whether its change time is old
 * enough to be trusted.  Return: false if stat failed. */
static bool file_id(const struct lpcs_node *n, struct stat *st, bool *trusted)
{
	struct timespec now;
	int64_t ct;

	if (!n->path || stat(n->path, st) < 0)
		return false;
	ct = (int64_t)st->st_ctim.tv_sec * 1000000000ll + st->st_ctim.tv_nsec;
	clock_gettime(CLOCK_REALTIME, &now);
	*trusted = (int64_t)now.tv_sec * 1000000000ll + now.tv_nsec - ct > ID_TRUST_NS;
	return true;
}

/* SQ3d: the last SHARED of the process goes; records the file's identity
 * if lpc's pages reflect a WAL state.  Caller holds node->lock. */
static void record_id(struct lpcs_node *n)
{
	struct stat st;
	bool trusted;

	n->id_known = false;
	if (!n->wal_known || !file_id(n, &st, &trusted) || !trusted)
		return;
	n->id_dev = (uint64_t)st.st_dev;
	n->id_ino = (uint64_t)st.st_ino;
	n->id_size = (uint64_t)st.st_size;
	n->id_ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000ll + st.st_ctim.tv_nsec;
	n->id_known = true;
}

/* SQ3d: the first SHARED of the process, the file in WAL mode: keeps the
 * WAL pair only if nobody changed the file since record_id.  Caller holds
 * node->lock. */
static void check_id(struct lpcs_node *n)
{
	struct stat st;
	bool trusted;

	if (!n->wal_known)
		return;
	if (!n->id_known || !file_id(n, &st, &trusted) || n->id_dev != (uint64_t)st.st_dev ||
	    n->id_ino != (uint64_t)st.st_ino || n->id_size != (uint64_t)st.st_size ||
	    n->id_ctime_ns != (int64_t)st.st_ctim.tv_sec * 1000000000ll + st.st_ctim.tv_nsec)
		n->wal_known = false;
	n->id_known = false;
}

/* SQ2: the first SHARED lock of this process.  Caller holds node->lock. */
static int check_counter(struct lpcs_file *p)
{
	struct lpcs_node *n = p->node;
	unsigned char hdr[22], *ver = hdr + 6; /* bytes 18..39; ver: 24..39 */
	int rc;

	memset(hdr, 0, sizeof(hdr));
	rc = p->real->pMethods->xRead(p->real, hdr, sizeof(hdr), 18);
	if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ)
		return rc;
	/* SQ3d: no connection here held SHARED, so none had the WAL open: it
	 * may have been deleted and recreated since, which resets the pair
	 * SQ3 compares.  Kept only if the file is in WAL mode (bytes 18, 19)
	 * and unchanged since the last SHARED went; else the next read lock
	 * drops lpc's pages. */
	n->wal_file = hdr[0] == 2 && hdr[1] == 2;
	if (n->wal_file)
		check_id(n);
	else
		n->wal_known = n->id_known = false;
	if (n->ver_known && !memcmp(ver, n->ver, sizeof(n->ver)))
		return SQLITE_OK;
	rc = drop_pages(p, true);
	if (rc == SQLITE_OK) {
		memcpy(n->ver, ver, sizeof(n->ver));
		n->ver_known = true;
	}
	return rc;
}

/* SQ3c: true if the wal-index moved from what lpc's pages reflect only by
 * a restart of a writer of this process.  Caller holds node->lock. */
static bool own_restart(const struct lpcs_node *n, uint32_t salt0, uint32_t bf)
{
	return n->write_mine && n->wal_known && n->wal_salt[0] == n->w_salt[0] &&
	       n->wal_salt[1] == n->w_salt[1] && n->wal_backfill == n->w_mxframe && bf == 0 &&
	       (be32(salt0) == be32(n->w_salt[0]) + 1 || n->w_mxframe == 0);
}

/* What check_wal is called for. */
enum check_why {
	CHECK_READ, /* SQ3b: a read lock */
	CHECK_CKPT, /* SQ3a: the caller took WAL_CKPT_LOCK */
	CHECK_EXCL, /* SQ9: the caller took EXCLUSIVE on the database */
};

/* SQ3a, SQ3b, SQ9: compares the wal-index with what lpc's pages reflect. */
static int check_wal(struct lpcs_file *p, enum check_why why)
{
	struct lpcs_node *n = p->node;
	bool writer = why != CHECK_READ; /* nobody else can write the file now */
	uint32_t salt0, salt1, bf;
	int rc = SQLITE_OK;

	if (!p->shm0)
		return SQLITE_OK;
	if (why == CHECK_READ)
		lpcs_hook(LPCS_HOOK_READ_CHECK, NULL);
	pthread_mutex_lock(&n->lock);
	/* The pair is loaded under node->lock, after whatever record this
	 * section follows (end_ckpt loads it under the same lock), so it is
	 * never older than the recorded pair: within one salt nBackfill only
	 * grows.  (Loaded before the lock, a reader that was delayed while one
	 * of our checkpoints ended and recorded a newer nBackfill compared its
	 * older one, found a difference, dropped every page and recorded the
	 * older pair, so the next reader dropped them again: story
	 * stale-pair; 15-97 pages a run of test_sqlite_threads under TSan.) */
	salt0 = shm_u32(p->shm0, WALIDX_SALT);
	salt1 = shm_u32(p->shm0, WALIDX_SALT + 4);
	bf = shm_u32(p->shm0, WALIDX_BACKFILL);
	if (why == CHECK_READ && n->ckpt_mine) {
		/* SQ3b: our checkpoint runs; nobody else changes the file. */
	} else if (!n->wal_known || salt0 != n->wal_salt[0] || salt1 != n->wal_salt[1] ||
		   bf != n->wal_backfill) {
		rc = own_restart(n, salt0, bf) ? SQLITE_OK : drop_pages(p, writer); /* SQ3c */
		if (rc == SQLITE_OK) {
			n->wal_known = true;
			n->wal_salt[0] = salt0;
			n->wal_salt[1] = salt1;
			n->wal_backfill = bf;
		}
	} else if (writer && atomic_load_explicit(&n->maybe_grown, memory_order_relaxed)) {
		rc = drop_pages(p, true);
	}
	if (rc == SQLITE_OK && why == CHECK_CKPT)
		n->ckpt_mine = true; /* SQ3a */
	pthread_mutex_unlock(&n->lock);
	return rc;
}

/* SQ3b: the end of our checkpoint; record: SQ1 wrote back, so lpc's pages
 * reflect the wal-index's pair now. */
static void end_ckpt(struct lpcs_file *p, bool record)
{
	struct lpcs_node *n = p->node;

	pthread_mutex_lock(&n->lock);
	if (record) {
		n->wal_salt[0] = shm_u32(p->shm0, WALIDX_SALT);
		n->wal_salt[1] = shm_u32(p->shm0, WALIDX_SALT + 4);
		n->wal_backfill = shm_u32(p->shm0, WALIDX_BACKFILL);
		n->wal_known = true;
	}
	n->ckpt_mine = false;
	pthread_mutex_unlock(&n->lock);
}

static int lpcs_close(sqlite3_file *f)
{
	struct lpcs_file *p = F(f);
	int rc, rc2 = 0;
	uint64_t ks;

	/* SQ6: lpc's size at least the kernel's before a last close publishes
	 * it (another process's checkpoint may have grown the file). */
	if (p->node && !p->excl &&
	    atomic_load_explicit(&p->node->maybe_grown, memory_order_relaxed) && p->real->pMethods &&
	    unwritten_quiet(p) && kernel_size(p, &ks) == SQLITE_OK)
		follow_kernel_size(p, ks);
	/* SQ1f: a lock kept after a failed write-back: a last try while it
	 * still keeps other writers out. */
	if (p->node && !p->excl && p->lock >= SQLITE_LOCK_RESERVED)
		rc2 = flush(p);
	/* unix first: lpc's last close closes its descriptor, which would drop
	 * the locks unix still held for this connection's file. */
	rc = p->real && p->real->pMethods ? p->real->pMethods->xClose(p->real) : SQLITE_OK;
	/* Exclusive: write back before the last close lets the lock go. */
	if (p->node && p->excl && p->lock > SQLITE_LOCK_NONE)
		excl_unlock(p, SQLITE_LOCK_NONE);
	if (p->node && p->excl && (rc2 = flush(p)) != SQLITE_OK && rc == SQLITE_OK)
		rc = rc2;
	else if (rc2 != SQLITE_OK && rc == SQLITE_OK)
		rc = rc2;
	rc2 = 0;
	if (p->node)
		lpcs_node_put(p->node);
	if (p->lf)
		rc2 = lpc_file_close(p->lf);
	if (rc == SQLITE_OK && rc2 < 0)
		rc = lpcs_errcode(rc2, SQLITE_IOERR_CLOSE);
	p->node = NULL;
	p->lf = NULL;
	return rc;
}

static int lpcs_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	struct lpcs_file *p = F(f);
	ssize_t n = lpc_pread(p->lf, buf, (size_t)amt, (uint64_t)off), r;

	if (n < 0)
		return lpcs_errcode(n, SQLITE_IOERR_READ);
	/* lpc_pread ends short at the end of the file, and also before a page
	 * whose read failed (C.2): ask again from there, so that a failure is
	 * SQLITE_IOERR_READ, never zeros taken for the end of the file. */
	while (n < amt && (r = lpc_pread(p->lf, (char *)buf + n, (size_t)(amt - n),
					 (uint64_t)off + (uint64_t)n)) != 0) {
		if (r < 0)
			return lpcs_errcode(r, SQLITE_IOERR_READ);
		n += r;
	}
	if (n == amt)
		return SQLITE_OK;
	if (atomic_load_explicit(&p->node->maybe_grown, memory_order_relaxed)) {
		/* SQ3: another process's checkpoint may have grown the file;
		 * SQ6: lpc's size follows, so no close publishes a smaller one. */
		int rc = p->real->pMethods->xRead(p->real, (char *)buf + n, amt - (int)n, off + n);

		if (rc == SQLITE_OK)
			follow_kernel_size(p, (uint64_t)off + (uint64_t)amt);
		return rc;
	}
	memset((char *)buf + n, 0, (size_t)(amt - n));
	return SQLITE_IOERR_SHORT_READ;
}

static int lpcs_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	struct lpcs_file *p = F(f);
	struct lpcs_node *n = p->node;
	uint64_t end = (uint64_t)off + (uint64_t)amt, size;
	ssize_t w;

	atomic_fetch_add_explicit(&n->wgen, 1, memory_order_release);
	w = lpc_pwrite(p->lf, buf, (size_t)amt, (uint64_t)off);
	if (w != amt)
		return lpcs_errcode(w < 0 ? w : -EIO, SQLITE_IOERR_WRITE);
	size = atomic_load_explicit(&n->size, memory_order_relaxed);
	while (end > size && !atomic_compare_exchange_weak_explicit(
				     &n->size, &size, end, memory_order_relaxed, memory_order_relaxed))
		;
	if (off <= 24 && end >= 40 && !p->excl) { /* SQ2: page 1's change counter */
		pthread_mutex_lock(&n->lock);
		memcpy(n->ver, (const char *)buf + (24 - off), sizeof(n->ver));
		n->ver_known = true;
		pthread_mutex_unlock(&n->lock);
	}
	return SQLITE_OK;
}

static int lpcs_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct lpcs_file *p = F(f);
	int rc;

	atomic_fetch_add_explicit(&p->node->wgen, 1, memory_order_release);
	rc = lpc_truncate(p->lf, (uint64_t)size);
	if (rc < 0)
		return lpcs_errcode(rc, SQLITE_IOERR_TRUNCATE);
	atomic_store_explicit(&p->node->size, (uint64_t)size, memory_order_relaxed);
	return SQLITE_OK;
}

static int lpcs_sync(sqlite3_file *f, int flags)
{
	struct lpcs_file *p = F(f);
	uint64_t g = atomic_load_explicit(&p->node->wgen, memory_order_acquire);
	int rc = lpc_fsync(p->lf);

	if (rc < 0)
		return lpcs_errcode(rc, SQLITE_IOERR_FSYNC);
	written(p, g);
	return SQLITE_OK;
}

static int lpcs_file_size(sqlite3_file *f, sqlite3_int64 *pSize)
{
	struct lpcs_file *p = F(f);
	uint64_t s = atomic_load_explicit(&p->node->size, memory_order_relaxed), ks;

	/* SQ3: a checkpoint of another process may have grown the file.  SQ7:
	 * at RESERVED or above nobody else can change it, and a process that
	 * died holding the lock may have left it longer than lpc's size (a
	 * hot journal's spilled pages): answer the kernel's, so that the
	 * rollback's pager_truncate cuts them.  The kernel's size is ours to
	 * follow only with nothing of ours unwritten (unwritten_quiet): lpc's
	 * writeback of a partial last page makes it a whole lpc page for a
	 * moment. */
	if ((atomic_load_explicit(&p->node->maybe_grown, memory_order_relaxed) ||
	     (!p->excl && p->lock >= SQLITE_LOCK_RESERVED && unwritten_quiet(p))) &&
	    kernel_size(p, &ks) == SQLITE_OK && ks > s) {
		if (unwritten_quiet(p))
			follow_kernel_size(p, ks);
		s = ks;
	}
	*pSize = (sqlite3_int64)s;
	return SQLITE_OK;
}

static int lpcs_lock(sqlite3_file *f, int level)
{
	struct lpcs_file *p = F(f);
	struct lpcs_node *n = p->node;
	int rc;

	if (p->excl)
		return excl_lock(p, level);
	rc = p->real->pMethods->xLock(p->real, level);
	if (rc != SQLITE_OK || p->lock >= level)
		return rc;
	if (p->lock == SQLITE_LOCK_NONE) {
		pthread_mutex_lock(&n->lock);
		rc = n->nshared++ ? SQLITE_OK : check_counter(p);
		if (rc != SQLITE_OK)
			n->nshared--;
		pthread_mutex_unlock(&n->lock);
		if (rc != SQLITE_OK) {
			p->real->pMethods->xUnlock(p->real, SQLITE_LOCK_NONE);
			return rc;
		}
	}
	if (level == SQLITE_LOCK_EXCLUSIVE) {
		/* SQ9: WAL mode, EXCLUSIVE: the close's (or a journal-mode
		 * change's) checkpoint follows, which takes no shm lock (SQ3a
		 * does not run): lpc's pages must mirror the file first.  No
		 * shared memory: a heap-memory wal-index (read locks take no
		 * shm lock either, so SQ3b never runs). */
		if (p->shm0) {
			rc = check_wal(p, CHECK_EXCL);
		} else {
			pthread_mutex_lock(&n->lock);
			if (n->wal_file && !n->wal_known)
				rc = drop_pages(p, true);
			pthread_mutex_unlock(&n->lock);
		}
		if (rc != SQLITE_OK) {
			/* Back to SHARED (counted in nshared above if not before). */
			p->real->pMethods->xUnlock(p->real, SQLITE_LOCK_SHARED);
			p->lock = SQLITE_LOCK_SHARED;
			return rc;
		}
	}
	p->lock = level;
	return SQLITE_OK;
}

static int lpcs_unlock(sqlite3_file *f, int level)
{
	struct lpcs_file *p = F(f);
	struct lpcs_node *n = p->node;
	int rc, rc2;

	if (p->excl)
		return excl_unlock(p, level);
	if (p->lock >= SQLITE_LOCK_RESERVED && level < SQLITE_LOCK_RESERVED) {
		/* SQ1.  A failed write-back keeps the lock (SQ1f): the pages stay
		 * dirty in lpc, so no other process may write the file until a
		 * later xUnlock writes them back. */
		rc = flush(p);
		if (rc != SQLITE_OK)
			return rc;
	}
	/* SQ2: uncounted before unix's xUnlock may drop the process's POSIX
	 * lock, never after: a connection here that takes SHARED once that
	 * lock is gone must find nshared 0 and check. */
	if (p->lock >= SQLITE_LOCK_SHARED && level == SQLITE_LOCK_NONE) {
		pthread_mutex_lock(&n->lock);
		if (--n->nshared == 0)
			record_id(n); /* SQ3d */
		pthread_mutex_unlock(&n->lock);
	}
	rc2 = p->real->pMethods->xUnlock(p->real, level);
	lpcs_hook(LPCS_HOOK_UNLOCKED, NULL);
	if (p->lock > level)
		p->lock = level;
	return rc2;
}

static int lpcs_check_reserved(sqlite3_file *f, int *pResOut)
{
	struct lpcs_file *p = F(f);

	if (p->excl) {
		pthread_mutex_lock(&p->node->lock);
		*pResOut = p->node->xlevel > SQLITE_LOCK_SHARED;
		pthread_mutex_unlock(&p->node->lock);
		return SQLITE_OK;
	}
	return p->real->pMethods->xCheckReservedLock(p->real, pResOut);
}

static int lpcs_file_control(sqlite3_file *f, int op, void *pArg)
{
	struct lpcs_file *p = F(f);

	switch (op) {
	case SQLITE_FCNTL_VFSNAME:
		*(char **)pArg = sqlite3_mprintf("%s", LPC_SQLITE_VFS_NAME);
		return SQLITE_OK;
	case SQLITE_FCNTL_MMAP_SIZE:
		*(sqlite3_int64 *)pArg = 0; /* never map: it would bypass lpc */
		return SQLITE_OK;
	case SQLITE_FCNTL_SYNC:
		/* SQ4: sent right before xSync of the database, or in its place
		 * with synchronous=OFF, before the journal's commit point. */
		return flush(p);
	case SQLITE_FCNTL_CKPT_DONE:
		/* SQ5: after a checkpoint's backfill writes, before nBackfill. */
		return flush(p);
	case SQLITE_FCNTL_SIZE_HINT:
	case SQLITE_FCNTL_CHUNK_SIZE:
		return SQLITE_OK; /* unix would grow the kernel's file behind lpc */
	default:
		if (!p->real)
			return SQLITE_NOTFOUND; /* an opener's object (remote.c) */
		return p->real->pMethods->xFileControl(p->real, op, pArg);
	}
}

static int lpcs_sector_size(sqlite3_file *f)
{
	struct lpcs_file *p = F(f);
	int s = p->real ? p->real->pMethods->xSectorSize(p->real) : 4096;

	/* lpc writes back whole lpc pages: a torn write may touch that much. */
	return s > (int)lpcs_page_size ? s : (int)lpcs_page_size;
}

static int lpcs_device_characteristics(sqlite3_file *f)
{
	struct lpcs_file *p = F(f);
	/* An opener's object (remote.c): nothing claimed. */
	int dc = p->real ? p->real->pMethods->xDeviceCharacteristics(p->real) : 0;

	/* lpc writes whole pages of its own size back, as the kernel writes
	 * whole 4 KiB pages for unix: no atomic write of any size is claimed,
	 * and "power-safe overwrite" only while lpc's pages are no larger. */
	if (lpcs_page_size > 4096)
		dc &= ~SQLITE_IOCAP_POWERSAFE_OVERWRITE;
	return dc & ~(SQLITE_IOCAP_ATOMIC | SQLITE_IOCAP_ATOMIC512 | SQLITE_IOCAP_ATOMIC1K |
		      SQLITE_IOCAP_ATOMIC2K | SQLITE_IOCAP_ATOMIC4K | SQLITE_IOCAP_ATOMIC8K |
		      SQLITE_IOCAP_ATOMIC16K | SQLITE_IOCAP_ATOMIC32K | SQLITE_IOCAP_ATOMIC64K |
		      SQLITE_IOCAP_BATCH_ATOMIC | SQLITE_IOCAP_SEQUENTIAL);
}

static int lpcs_shm_map(sqlite3_file *f, int iPg, int pgsz, int bExtend, void volatile **pp)
{
	struct lpcs_file *p = F(f);
	int rc = p->real->pMethods->xShmMap(p->real, iPg, pgsz, bExtend, pp);

	if (rc == SQLITE_OK && iPg == 0 && *pp)
		p->shm0 = *pp;
	return rc;
}

static int lpcs_shm_lock(sqlite3_file *f, int ofst, int n, int flags)
{
	struct lpcs_file *p = F(f);
	int rc;

	if (p->excl) /* nobody else checkpoints or restarts: no SQ1, SQ3 */
		return p->real->pMethods->xShmLock(p->real, ofst, n, flags);
	if ((flags & SQLITE_SHM_LOCK) && p->ckpt_kept && ofst == WAL_CKPT_LOCK && n == 1) {
		/* SQ1f: our checkpoint lock was kept after a failed write-back;
		 * SQLite asks for it again: held already, the check (SQ3a) and
		 * ckpt_mine still hold. */
		p->ckpt_kept = false;
		return SQLITE_OK;
	}
	if ((flags & SQLITE_SHM_UNLOCK) && p->ckpt_held && ofst <= WAL_CKPT_LOCK &&
	    ofst + n > WAL_CKPT_LOCK) {
		/* SQ1, SQ3b: the end of our checkpoint. */
		lpcs_hook(LPCS_HOOK_CKPT_END, NULL);
		rc = flush(p);
		if (rc != SQLITE_OK && ofst == WAL_CKPT_LOCK && n == 1) {
			/* SQ1f: keep WAL_CKPT_LOCK while pages are dirty here; a
			 * later checkpoint of this connection retries. */
			p->ckpt_kept = true;
			return rc;
		}
		end_ckpt(p, rc == SQLITE_OK && p->shm0);
		p->ckpt_held = p->ckpt_kept = false;
	}
	if ((flags & SQLITE_SHM_UNLOCK) && p->write_held && ofst == WAL_WRITE_LOCK) {
		struct lpcs_node *nd = p->node;

		pthread_mutex_lock(&nd->lock);
		if (p->shm0) {
			uint32_t s0 = shm_u32(p->shm0, WALIDX_SALT);
			uint32_t bf = shm_u32(p->shm0, WALIDX_BACKFILL);

			/* SQ3c: our own restart, provably nothing else. */
			if (own_restart(nd, s0, bf)) {
				nd->wal_salt[0] = s0;
				nd->wal_salt[1] = shm_u32(p->shm0, WALIDX_SALT + 4);
				nd->wal_backfill = 0;
			}
		}
		nd->write_mine = false;
		pthread_mutex_unlock(&nd->lock);
		p->write_held = false;
	}
	rc = p->real->pMethods->xShmLock(p->real, ofst, n, flags);
	if (rc != SQLITE_OK || !(flags & SQLITE_SHM_LOCK))
		return rc;
	if ((flags & SQLITE_SHM_EXCLUSIVE) && ofst <= WAL_CKPT_LOCK && ofst + n > WAL_CKPT_LOCK) {
		rc = check_wal(p, CHECK_CKPT);
		if (rc != SQLITE_OK) {
			p->real->pMethods->xShmLock(p->real, ofst, n, SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE);
			return rc;
		}
		p->ckpt_held = true;
	}
	if ((flags & SQLITE_SHM_EXCLUSIVE) && ofst == WAL_WRITE_LOCK && p->shm0) {
		struct lpcs_node *nd = p->node;

		/* SQ3c: the wal-index as the write lock found it. */
		pthread_mutex_lock(&nd->lock);
		nd->write_mine = true;
		nd->w_salt[0] = shm_u32(p->shm0, WALIDX_SALT);
		nd->w_salt[1] = shm_u32(p->shm0, WALIDX_SALT + 4);
		nd->w_mxframe = shm_u32(p->shm0, WALIDX_MXFRAME);
		pthread_mutex_unlock(&nd->lock);
		p->write_held = true;
	}
	if ((flags & SQLITE_SHM_SHARED) && ofst >= WAL_READ_LOCK0) {
		rc = check_wal(p, CHECK_READ);
		if (rc != SQLITE_OK) {
			p->real->pMethods->xShmLock(p->real, ofst, n, SQLITE_SHM_UNLOCK | SQLITE_SHM_SHARED);
			return rc;
		}
	}
	return SQLITE_OK;
}

static void lpcs_shm_barrier(sqlite3_file *f)
{
	F(f)->real->pMethods->xShmBarrier(F(f)->real);
}

static int lpcs_shm_unmap(sqlite3_file *f, int deleteFlag)
{
	struct lpcs_file *p = F(f);

	p->shm0 = NULL;
	if (p->ckpt_kept) {
		/* SQ1f: unix's unmap drops the kept lock; the node forgets what
		 * the failed checkpoint had reconciled (SQ3a). */
		end_ckpt(p, false);
		p->ckpt_held = p->ckpt_kept = false;
	}
	return p->real->pMethods->xShmUnmap(p->real, deleteFlag);
}

static int lpcs_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	*pp = NULL; /* no mapping: SQLite reads with xRead */
	return SQLITE_OK;
}

static int lpcs_unfetch(sqlite3_file *f, sqlite3_int64 off, void *pg)
{
	return SQLITE_OK;
}

const sqlite3_io_methods lpcs_io_methods = {
	.iVersion = 3,
	.xClose = lpcs_close,
	.xRead = lpcs_read,
	.xWrite = lpcs_write,
	.xTruncate = lpcs_truncate,
	.xSync = lpcs_sync,
	.xFileSize = lpcs_file_size,
	.xLock = lpcs_lock,
	.xUnlock = lpcs_unlock,
	.xCheckReservedLock = lpcs_check_reserved,
	.xFileControl = lpcs_file_control,
	.xSectorSize = lpcs_sector_size,
	.xDeviceCharacteristics = lpcs_device_characteristics,
	.xShmMap = lpcs_shm_map,
	.xShmLock = lpcs_shm_lock,
	.xShmBarrier = lpcs_shm_barrier,
	.xShmUnmap = lpcs_shm_unmap,
	.xFetch = lpcs_fetch,
	.xUnfetch = lpcs_unfetch,
};

/* An opener's object (remote.c): the same methods in exclusive coherence
 * (p->excl: SL1-SL4, no SQ1-SQ3), with no shared memory (iVersion 1:
 * SQLite runs WAL only in locking_mode=EXCLUSIVE, its wal-index in heap
 * memory) and no mmap. */
const sqlite3_io_methods lpcs_remote_io_methods = {
	.iVersion = 1,
	.xClose = lpcs_close,
	.xRead = lpcs_read,
	.xWrite = lpcs_write,
	.xTruncate = lpcs_truncate,
	.xSync = lpcs_sync,
	.xFileSize = lpcs_file_size,
	.xLock = lpcs_lock,
	.xUnlock = lpcs_unlock,
	.xCheckReservedLock = lpcs_check_reserved,
	.xFileControl = lpcs_file_control,
	.xSectorSize = lpcs_sector_size,
	.xDeviceCharacteristics = lpcs_device_characteristics,
};
