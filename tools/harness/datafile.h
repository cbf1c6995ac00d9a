/* SPDX-License-Identifier: MIT */
/*
 * datafile.h - the file a benchmark reads: created with real bytes in a
 * private temporary directory and removed when lpcbench exits, however it
 * exits (normal end, error exit, SIGINT, SIGTERM, SIGHUP, a crash).
 *
 * Where: --dir, else $TMPDIR, else /var/tmp.  /tmp is not a default because
 * it is often tmpfs, which holds the file in memory twice over (tmpfs pages
 * and the benchmark's own caches) and refuses O_DIRECT.  A tmpfs $TMPDIR is
 * passed over for /var/tmp; a tmpfs --dir is used as asked, with a note
 * (lpc reads tmpfs files with buffered I/O, which the null backend never does
 * anyway).
 */
#ifndef LPCBENCH_DATAFILE_H
#define LPCBENCH_DATAFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

struct datafile {
	char dir[PATH_MAX];  /* the private directory, mkdtemp'd */
	char path[PATH_MAX]; /* the file in it */
	char fstype[32];     /* the file system's name, for the config echo */
	bool tmpfs;
	uint64_t bytes;
};

/*
 * Picks the directory (parent: --dir or NULL) and fills df->dir, df->fstype
 * and df->tmpfs, without creating anything yet, so the configuration can be
 * printed before the slow part.  Dies if the directory is unusable.
 */
void datafile_choose(const char *parent, struct datafile *df);

/*
 * Creates the private directory and writes `bytes` of non-zero data, each
 * 4 KiB block stamped with its number, then fdatasync()s it so that no writeback of
 * this file runs during the measurement.  Dies on failure; registers the
 * removal at exit.  One datafile at a time.
 */
void datafile_create(struct datafile *df, uint64_t bytes);

/* Removes the file and its directory now (also done at exit). */
void datafile_remove(void);

/* Drops the file from the kernel's page cache (posix_fadvise DONTNEED).
 * Dies on failure. */
void datafile_drop(const struct datafile *df);

/* Pages of the file in the kernel's page cache (mincore); 0 where unknown. */
uint64_t datafile_resident_pages(const struct datafile *df);

/*
 * Opens the file with flags | O_DIRECT, or with flags alone where the file
 * system refuses O_DIRECT (tmpfs).  Return: the descriptor.  Dies on failure.
 */
int datafile_open_direct(const struct datafile *df, int flags);

#endif /* LPCBENCH_DATAFILE_H */
