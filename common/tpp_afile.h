/*
 * tpp_afile.h - output files written atomically: the content goes to a
 * fresh temporary file beside the target (mkstemp, so never a name another
 * user could have planted), is flushed to disk (fsync) and then renamed
 * over the target, so a reader sees the old file or the whole new one and
 * a crash or a full disk leaves the old one intact.
 *
 *   - a symbolic link at the target is followed: the link stays and the
 *     file it names is replaced (as `cp` and editors do);
 *   - a file replaced keeps its permission bits; a new one gets 0666 less
 *     the umask, as fopen would give it;
 *   - a target that exists and is not a regular file (a FIFO, a device),
 *     or any path under /dev/ or /proc/ (/dev/stdout redirected to a file
 *     included), is written in place: a rename would replace it.
 *
 * The calibration writer (calibrate/calfile.c) has its own, which also
 * keeps the file it replaces; --timeline and `tpplan report` use this.
 */
#ifndef TPP_AFILE_H
#define TPP_AFILE_H

#include <stdio.h>

#include "tpp_common.h"

#define TPP_AFILE_PATH 4096

struct tpp_afile {
	FILE *f;
	int direct;                  /* written in place (not a regular file) */
	char path[TPP_AFILE_PATH];   /* where the content ends up (links followed) */
	char tmp[TPP_AFILE_PATH];    /* the temporary file; "" when direct */
};

/*
 * Whether `path` can be written before any work is done for it: not a
 * directory, and its directory exists and can be written (or, for a
 * target that is not a regular file, the target itself can).  TPP_OK, or
 * TPP_E_SYSTEM with err->msg "PATH: reason".
 */
int tpp_afile_check(const char *path, struct tpp_err *err);

/* Open the temporary file for `path`; TPP_OK, or TPP_E_SYSTEM with
 * err->msg "PATH: reason" (nothing left behind). */
int tpp_afile_open(struct tpp_afile *a, const char *path, struct tpp_err *err);

/* Flush, fsync, close and rename into place; on any failure the
 * temporary file is removed, the target left as it was, and TPP_E_SYSTEM
 * returned with err->msg "PATH: reason". */
int tpp_afile_commit(struct tpp_afile *a, struct tpp_err *err);

/* Give up: close and remove the temporary file (no-op when not open). */
void tpp_afile_abort(struct tpp_afile *a);

#endif
