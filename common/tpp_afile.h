/*
 * tpp_afile.h - output files written atomically: the content goes to a
 * fresh temporary file beside the target (mkstemp, so never a name another
 * user could have planted), is flushed to disk (fsync) and then renamed
 * over the target, so a reader sees the old file or the whole new one and
 * a crash or a full disk leaves the old one intact.
 *
 *   - a symbolic link at the target is followed: the link stays and the
 *     file it names is replaced (as `cp` and editors do); a dangling link
 *     (or chain of links) creates the file its last link names, and a
 *     loop of links is refused;
 *   - a file replaced keeps its permission bits; a new one gets 0666 less
 *     the umask, as fopen would give it;
 *   - a target that exists and is not a regular file (a FIFO, a device)
 *     is written in place: a rename would replace it;
 *   - the process's own streams (/dev/stdout, /dev/stderr, /dev/fd/N,
 *     /proc/self/fd/N) are written through a dup of the descriptor, in
 *     place and at its offset, so what the process prints before and
 *     after stays (with keep, a regular file they are redirected to is
 *     replaced and kept like any other);
 *   - a symbolic link that cannot be followed (a directory on its way is
 *     a file, no permission) is an error, never replaced by a file;
 *   - with `keep` (tpp_afile_open_keep; the calibration writer), a regular
 *     file replaced is first given a second name, PATH.<its mtime,
 *     YYYYmmddTHHMMSSZ>[-N].bak (a hard link, so the path never goes
 *     missing), and the name is reported in `kept`;
 *   - after the rename the directory is fsynced (best effort), so the
 *     rename itself survives a crash.
 *
 * Used by --timeline, `tpplan report` and the calibration writer
 * (calibrate/calfile.c).
 */
#ifndef TPP_AFILE_H
#define TPP_AFILE_H

#include <stdio.h>

#include "tpp_common.h"

#define TPP_AFILE_PATH 4096

struct tpp_afile {
	FILE *f;
	int direct;                  /* written in place (not a regular file) */
	int keep;                    /* keep the file replaced (tpp_afile_open_keep) */
	char path[TPP_AFILE_PATH];   /* where the content ends up (links followed) */
	char tmp[TPP_AFILE_PATH];    /* the temporary file; "" when direct */
	char kept[TPP_AFILE_PATH + 32]; /* after commit: where the replaced file
					 * is kept; "" when none was */
};

/*
 * Whether `path` can be written before any work is done for it: not a
 * directory, and its directory exists and can be written (or, for a
 * target that is not a regular file, the target itself can).  TPP_OK;
 * TPP_E_USAGE for a loop of symbolic links; else TPP_E_SYSTEM, with
 * err->msg "PATH: reason".
 */
int tpp_afile_check(const char *path, struct tpp_err *err);

/* Open the temporary file for `path`; TPP_OK, or as tpp_afile_check
 * (TPP_E_USAGE for a loop of links, else TPP_E_SYSTEM) with err->msg
 * "PATH: reason" (nothing left behind). */
int tpp_afile_open(struct tpp_afile *a, const char *path, struct tpp_err *err);

/* As tpp_afile_open; with keep, the commit keeps a regular file it
 * replaces under a second name (see above). */
int tpp_afile_open_keep(struct tpp_afile *a, const char *path, int keep,
			struct tpp_err *err);

/* Flush, fsync, close and rename into place; on any failure the
 * temporary file is removed, the target left as it was (and no second
 * name left behind), and TPP_E_SYSTEM returned with err->msg "PATH:
 * reason". */
int tpp_afile_commit(struct tpp_afile *a, struct tpp_err *err);

/* Give up: close and remove the temporary file (no-op when not open). */
void tpp_afile_abort(struct tpp_afile *a);

#endif
