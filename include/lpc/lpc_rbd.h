/* SPDX-License-Identifier: MIT */
/*
 * lpc_rbd.h - a Ceph RBD image under an lpc cache (liblpc_rbd): lpc's pages
 * in front of librbd, as QEMU's user-space RBD client puts its own cache
 * there.  A backend of lpc's public interface (struct lpc_backend_ops,
 * lpc_file_open_backend, in lpc.h); lpc_rbd_open(3) says the same at length.
 *
 * Link with -llpc_rbd -llpc (liblpc_rbd links librbd and librados).
 */
#ifndef LPC_LPC_RBD_H
#define LPC_LPC_RBD_H

#include <lpc/lpc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The prefix of the names lpc_rbd_open takes: "rbd:POOL/IMAGE". */
#define LPC_RBD_PREFIX "rbd:"

/*
 * Opens the RBD image `name` ("rbd:POOL/IMAGE"; the image must exist:
 * `rbd create POOL/IMAGE --size ...`) as an lpc file of cache c, through a
 * connection of its own to the cluster that conf describes:
 *  - NULL or "": librados's defaults ($CEPH_CONF, /etc/ceph/ceph.conf, the
 *    CEPH_ARGS environment variable);
 *  - a path (a string without '='): that conf file;
 *  - options "key=value;key=value" (';' or newlines between them): each is
 *    rados_conf_set()'s, in order; "conf=PATH" reads a conf file at that
 *    point, "id=NAME" connects as client.NAME (default client.admin).
 * Whatever conf says, librbd's own cache is off (rbd_cache=false): lpc is
 * the cache.  Unless conf sets them, rados_osd_op_timeout and
 * rados_mon_op_timeout are 30 s: an operation that the cluster does not
 * serve in that time (an OSD down with no replica, the monitors gone) fails
 * with -ETIMEDOUT, as lpc's calls then report (a read: the call fails and
 * nothing is cached; a write-back: the pages stay dirty and lpc_fsync
 * returns the error; a later lpc_fsync writes them again).  Set them to 0
 * to wait for ever, as librbd does by default.
 * A full cluster (an OSD past the full ratio, mon_osd_full_ratio, the pool
 * marked full): the connection's io context tries writes anyway
 * (rados_set_pool_full_try) instead of holding them until the map says
 * there is room, so the OSD refuses those that need space (new objects,
 * bytes past an object's end; an overwrite of stored bytes still passes)
 * at once: a write-back fails with -ENOSPC (-EDQUOT where a pool quota is
 * full), the pages stay dirty and lpc_fsync returns it, and once space is
 * freed (or the ratio raised) a later lpc_fsync writes them (tests/rbd
 * case full).  Without it librbd would hold the writes
 * until rados_osd_op_timeout and report -ETIMEDOUT (and an open, whose
 * watch is a write, would time out too).
 *
 * The operations (lpc.h, BK1-BK7; the table is version 2): a run is one
 * rbd_aio_readv or rbd_aio_writev waited for; a writeback batch submits
 * all its runs before it waits, and so does a batched read (readahead's
 * window, a stream's look-ahead: read_batch), each run completed as its
 * reply arrives; sync is rbd_flush; truncate is rbd_resize; size is the image's
 * size.  A write past the image's end first grows the image (rbd_resize,
 * only ever up; lpc cuts it back to its size, BK6).
 *
 * One writer.  A read-write open takes the image's exclusive lock with
 * rbd_lock_acquire() when the image has the exclusive-lock feature (the
 * default for new images): lpc keeps it until the file's last close and
 * does not hand it over when another client asks, so another client's
 * write or lock request fails (librbd: -EROFS, or -EBUSY at its open)
 * while this file is open.  Without the feature it takes librbd's
 * advisory exclusive lock (rbd_lock_exclusive, cookie "lpc"), which other
 * lpc_rbd clients and `rbd lock ls` honour but plain librbd writers do not.
 * A second lpc_rbd_open for writing, in another process or another cache,
 * returns -EBUSY.  Read-only opens (O_RDONLY) take no lock.
 * Maintenance by another client is NOT refused: librbd hands another
 * client's resize, snapshot create or rename to the lock's owner, and the
 * owner's handle - lpc's - carries it out (librbd 16.2's API offers no way
 * to refuse; without the feature the other client does it itself).  A
 * resize that cuts the image below lpc's size loses the bytes lpc wrote
 * back past the cut.  lpc notices at its next lpc_fsync, its next
 * writeback past the cut or its next look at the size: it grows the image
 * back to lpc's size (the cut range then reads zeros) and that lpc_fsync
 * and every later one on the file return -EIO, until the last close (which
 * does not sync: it reports nothing of it).  A cut undone by a growth
 * before lpc looks is not seen.  Do not resize an image lpc has open for
 * writing; lpc_truncate it instead.
 * What another client sees: the image as lpc last wrote it back (after
 * lpc_fsync, the flusher, eviction or the last close), never pages dirty in
 * lpc's cache; a read-only reader's own cache, if any, is its affair.  A
 * read-only lpc file of an image that someone else writes caches what it
 * read (BK5): it does not see later changes to cached pages, and it sees
 * the image's size change (a read past its old end finds growth).  For
 * this a read-only open watches the image's header: it opens a writable
 * librbd handle it never writes through, or, when the client's cephx
 * capabilities refuse that (EPERM), a read-only one, whose size stays the
 * one at the open.
 * A read-write open asks no owner for the lock: while the exclusive lock's
 * owner still watches the image it returns -EBUSY at once, also when that
 * owner is a client that would hand the lock over (QEMU's default).  A
 * client that dies keeps its exclusive lock until the cluster notices (its
 * watch times out, 30 s by default): until then a read-write open returns
 * -EBUSY at once; the first one after it breaks the dead client's lock
 * (librbd blocklists the dead client) and succeeds.  An advisory lock
 * stays until `rbd lock rm`.
 *
 * In one cache the name is the identity (lpc_file_open_backend): opening
 * an open name again returns the same lpc_file over the same connection.
 *
 * oflags: O_RDONLY or O_RDWR only (lpc_file_open_backend's rule).
 * Return: 0 with *out; -EINVAL for a NULL argument, a name that is not
 * "rbd:POOL/IMAGE" (or one longer than 4095 bytes), an option without '='
 * after the first, or what lpc_file_open_backend refuses; -ENOENT when the
 * pool or the image does not exist; -EBUSY when another client holds the
 * image's lock, or held it and died less than its watch's timeout ago
 * (read-write opens); -ENOMEM; -ETIMEDOUT when the cluster
 * does not answer; another negative errno from librados or librbd (a bad
 * conf option: its rados_conf_set() error).
 * Context: blocks for the connection (network round trips to the monitors
 * and the OSDs, up to the timeouts above); creates librados's threads; may
 * not be called from a backend operation or a signal handler.
 */
int lpc_rbd_open(struct lpc_cache *c, const char *name, const char *conf, int oflags,
		 struct lpc_file **out);

struct lpc_sqlite_opener; /* lpc_sqlite.h */

/*
 * Fills *out with the opener of "rbd:POOL/IMAGE" names for the SQLite VFS
 * "lpc" (lpc_sqlite.h), whose connections take conf as lpc_rbd_open's do:
 *
 *	struct lpc_sqlite_opener op;
 *	lpc_rbd_sqlite_opener("/etc/ceph/ceph.conf", &op);
 *	lpc_sqlite_set_opener(LPC_RBD_PREFIX, &op);
 *	sqlite3_open_v2("file:rbd:pool/db?vfs=lpc", &db,
 *			SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);
 *
 * The database is the image POOL/IMAGE, its rollback journal the image
 * POOL/IMAGE-journal, its WAL POOL/IMAGE-wal: images of the same pool,
 * created (empty; librbd's default format and features, conf's
 * rbd_default_features) when SQLite creates the file, removed when it
 * deletes it.  Each open image is a connection of lpc_rbd_open's kind
 * with its one-writer lock: another process's open of the database, or of
 * a journal, fails while this process has it open (SQLITE_BUSY, "database
 * is locked"), also for a few tens of seconds after this process died
 * (the lock's watch timeout, lpc_rbd_open above).  The database is cached
 * in the VFS's lpc cache; journals are not (each write is in the image
 * when it returns).  Existence checks and removal use one more connection
 * of the opener's own, made at its first use and kept, with the opener's
 * state, until the process ends (an exit handler shuts it down before
 * Ceph's libraries are torn down: left running, its threads crashed the
 * exit; it leaves alone a connection in use by another thread, or made by
 * the parent of a fork).  After that handler, the opener's calls fail with
 * -ESHUTDOWN; a fork's child that uses the opener makes its own
 * connection.  lpc_sqlite_set_opener(3) says the rest.
 * liblpc_rbd does not link SQLite, nor liblpc_sqlite librbd: the program
 * links both (-llpc_sqlite -llpc_rbd -llpc).
 * Return: 0; -EINVAL for NULL out; -ENOMEM.
 * Context: no I/O (the connections are made by the VFS's calls).
 */
int lpc_rbd_sqlite_opener(const char *conf, struct lpc_sqlite_opener *out);

#ifdef __cplusplus
}
#endif

#endif /* LPC_LPC_RBD_H */
