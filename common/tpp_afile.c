/*
 * tpp_afile.c - atomic output files (see tpp_afile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpp_afile.h"

/* The file a path names once its symbolic links are followed, into buf:
 * realpath of the link when it resolves; a dangling link or a plain path
 * is taken as given. */
static void resolve(const char *path, char *buf, size_t size)
{
	struct stat ls;
	tpp_strlcpy(buf, path, size);
	if (!lstat(path, &ls) && S_ISLNK(ls.st_mode)) {
		char *real = realpath(path, NULL);
		if (real) {
			if (strlen(real) < size)
				tpp_strlcpy(buf, real, size);
			free(real);
		}
	}
}

/* The directory part of path ("." when none), into buf. */
static void dir_of(const char *path, char *buf, size_t size)
{
	char *slash;
	tpp_strlcpy(buf, path, size);
	slash = strrchr(buf, '/');
	if (!slash)
		tpp_strlcpy(buf, ".", size);
	else if (slash == buf)
		buf[1] = '\0';
	else
		*slash = '\0';
}

int tpp_afile_check(const char *path, struct tpp_err *err)
{
	char real[TPP_AFILE_PATH], dir[TPP_AFILE_PATH];
	struct stat st;
	if (!*path)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "the file name is empty");
	if (strlen(path) + 16 >= sizeof(real))
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%.64s...: path too long", path);
	resolve(path, real, sizeof(real));
	if (!stat(real, &st)) {
		if (S_ISDIR(st.st_mode))
			return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: is a directory", path);
		if (!S_ISREG(st.st_mode)) {
			if (access(real, W_OK))
				return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: %s", path,
						   strerror(errno));
			return TPP_OK;
		}
	}
	dir_of(real, dir, sizeof(dir));
	if (stat(dir, &st))
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: directory %s: %s", path, dir,
				   strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: %s is not a directory", path, dir);
	if (access(dir, W_OK | X_OK))
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: cannot write into %s: %s", path,
				   dir, strerror(errno));
	return TPP_OK;
}

int tpp_afile_open(struct tpp_afile *a, const char *path, struct tpp_err *err)
{
	struct stat st;
	mode_t mode, mask;
	int fd, n, rc;

	memset(a, 0, sizeof(*a));
	if ((rc = tpp_afile_check(path, err)))
		return rc;
	resolve(path, a->path, sizeof(a->path));
	if (!stat(a->path, &st) && !S_ISREG(st.st_mode)) {
		a->direct = 1;
		a->f = fopen(a->path, "w");
		if (!a->f)
			return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: %s", path, strerror(errno));
		return TPP_OK;
	}
	mask = umask(0);
	umask(mask);
	mode = (!stat(a->path, &st) ? st.st_mode : 0666 & ~mask) & 07777;
	n = snprintf(a->tmp, sizeof(a->tmp), "%s.tmp.XXXXXX", a->path);
	if (n < 0 || (size_t)n >= sizeof(a->tmp))
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%.64s...: path too long", path);
	fd = mkstemp(a->tmp);
	if (fd < 0) {
		int e = errno;
		a->tmp[0] = '\0';
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
				   "%s: cannot create a temporary file beside it: %s", path, strerror(e));
	}
	(void)fchmod(fd, mode); /* mkstemp makes it 0600 */
	a->f = fdopen(fd, "w");
	if (!a->f) {
		int e = errno;
		close(fd);
		unlink(a->tmp);
		a->tmp[0] = '\0';
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: %s", path, strerror(e));
	}
	return TPP_OK;
}

int tpp_afile_commit(struct tpp_afile *a, struct tpp_err *err)
{
	int bad, e;
	if (!a->f)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: not open", a->path);
	bad = fflush(a->f) || ferror(a->f) || (!a->direct && fsync(fileno(a->f)));
	e = errno;
	if (fclose(a->f) && !bad)
		bad = 1, e = errno;
	a->f = NULL;
	if (bad) {
		if (!a->direct)
			unlink(a->tmp);
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: write failed: %s", a->path,
				   strerror(e ? e : EIO));
	}
	if (!a->direct && rename(a->tmp, a->path)) {
		e = errno;
		unlink(a->tmp);
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: %s", a->path, strerror(e));
	}
	return TPP_OK;
}

void tpp_afile_abort(struct tpp_afile *a)
{
	if (!a->f)
		return;
	fclose(a->f);
	a->f = NULL;
	if (!a->direct && a->tmp[0])
		unlink(a->tmp);
}
