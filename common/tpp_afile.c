/*
 * tpp_afile.c - atomic output files (see tpp_afile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tpp_afile.h"

/* The descriptor a path names when it is one of the process's own
 * (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), else -1.
 * Written through a dup() of it, which shares its offset: opening the
 * path anew would start at 0 (and truncate) and what the process prints
 * to it before or after would overwrite the file's content, or be
 * overwritten. */
static int own_fd(const char *path)
{
	const char *n = NULL;
	char *end;
	long v;
	if (!strcmp(path, "/dev/stdout"))
		return 1;
	if (!strcmp(path, "/dev/stderr"))
		return 2;
	if (!strncmp(path, "/dev/fd/", 8))
		n = path + 8;
	else if (!strncmp(path, "/proc/self/fd/", 14))
		n = path + 14;
	if (!n || !*n)
		return -1;
	v = strtol(n, &end, 10);
	return *end || v < 0 || v > 1 << 20 ? -1 : (int)v;
}

/* The file a path names once its symbolic links are followed, into buf:
 * realpath of the link when it resolves; for a dangling link, or a chain
 * of links that ends dangling, the name its last link gives (relative to
 * that link's directory), so the file is created there and the links
 * stay; a plain path is taken as given.  TPP_E_USAGE for a loop of
 * links. */
static int resolve(const char *path, char *buf, size_t size, struct tpp_err *err)
{
	struct stat ls;
	char cur[TPP_AFILE_PATH], link[TPP_AFILE_PATH];
	char *real;
	int hops;

	tpp_strlcpy(buf, path, size);
	if (lstat(path, &ls) || !S_ISLNK(ls.st_mode))
		return TPP_OK;
	real = realpath(path, NULL);
	if (real) {
		size_t n = strlen(real);
		if (n < size)
			tpp_strlcpy(buf, real, size);
		free(real);
		if (n >= size)
			return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
					   "%s: the file its symbolic link names has too long a path", path);
		return TPP_OK;
	}
	if (errno == ELOOP)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0, "%s: a loop of symbolic links",
				   path);
	/* a link that cannot be followed is an error, not replaced by a file */
	if (errno != ENOENT)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
				   "%s: cannot follow the symbolic link: %s", path, strerror(errno));
	tpp_strlcpy(cur, path, sizeof(cur));
	for (hops = 0; hops < 40; hops++) {
		const char *slash;
		ssize_t n;
		int w;
		if (lstat(cur, &ls) || !S_ISLNK(ls.st_mode))
			break;
		n = readlink(cur, link, sizeof(link) - 1);
		if (n <= 0 || (size_t)n >= sizeof(link) - 1)
			return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
					   "%s: cannot read the symbolic link %s: %s", path, cur,
					   n < 0 ? strerror(errno) : "too long");
		link[n] = '\0';
		slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash)
			w = snprintf(buf, size, "%s", link);
		else
			w = snprintf(buf, size, "%.*s/%s", (int)(slash - cur), cur, link);
		if (w <= 0 || (size_t)w >= size || (size_t)w >= sizeof(cur))
			return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
					   "%s: the file its symbolic links name has too long a path", path);
		tpp_strlcpy(cur, buf, sizeof(cur));
	}
	if (hops == 40)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "%s: a loop of symbolic links (or a chain of more than 40)", path);
	return TPP_OK;
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
	int rc;
	if (!*path)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "the file name is empty");
	if (strlen(path) + 16 >= sizeof(real))
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%.64s...: path too long", path);
	if (own_fd(path) >= 0 && !stat(path, &st) && !S_ISDIR(st.st_mode)) {
		if (access(path, W_OK))
			return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: %s", path, strerror(errno));
		return TPP_OK;
	}
	if ((rc = resolve(path, real, sizeof(real), err)))
		return rc;
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
	return tpp_afile_open_keep(a, path, 0, err);
}

int tpp_afile_open_keep(struct tpp_afile *a, const char *path, int keep,
			struct tpp_err *err)
{
	struct stat st;
	mode_t mode, mask;
	int fd, n, rc;

	memset(a, 0, sizeof(*a));
	a->keep = keep;
	if ((rc = tpp_afile_check(path, err)))
		return rc;
	/* one of the process's own streams: through a dup of it, in place
	 * (not with keep: the file it is redirected to is replaced and
	 * kept, and what the process prints after goes to the old one) */
	if (!keep && own_fd(path) >= 0 && !stat(path, &st) && !S_ISDIR(st.st_mode)) {
		int d = dup(own_fd(path));
		tpp_strlcpy(a->path, path, sizeof(a->path));
		fflush(NULL); /* what the process wrote to it goes first */
		a->direct = 1;
		a->f = d >= 0 ? fdopen(d, "w") : NULL;
		if (!a->f) {
			int e = errno;
			if (d >= 0)
				close(d);
			return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: %s", path, strerror(e));
		}
		return TPP_OK;
	}
	if ((rc = resolve(path, a->path, sizeof(a->path), err)))
		return rc;
	/* a device or FIFO: written in place, a rename would replace it */
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

/* A name for keeping the file at `path` (modified at `mtime`): path +
 * ".YYYYmmddTHHMMSSZ.bak", with "-N" added while that exists; 0 on
 * success. */
static int backup_name(const char *path, time_t mtime, char *out, size_t size)
{
	struct tm tm;
	char stamp[32];
	int i, n;
	if (!gmtime_r(&mtime, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		return -1;
	for (i = 0; i < 1000; i++) {
		struct stat st;
		n = i ? snprintf(out, size, "%s.%s-%d.bak", path, stamp, i)
		      : snprintf(out, size, "%s.%s.bak", path, stamp);
		if (n < 0 || (size_t)n >= size)
			return -1;
		if (lstat(out, &st) && errno == ENOENT)
			return 0;
	}
	return -1;
}

/* Make a rename in path's directory durable (best effort). */
static void sync_dir(const char *path)
{
	char dir[TPP_AFILE_PATH];
	int dfd;
	dir_of(path, dir, sizeof(dir));
	dfd = open(dir, O_RDONLY);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
}

int tpp_afile_commit(struct tpp_afile *a, struct tpp_err *err)
{
	struct stat st;
	int bad, e;
	if (!a->f)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: not open", a->path);
	a->kept[0] = '\0';
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
	if (a->direct)
		return TPP_OK;
	/* the file replaced gets a second name first (a hard link: the path
	 * never goes missing), then the new one takes its place */
	if (a->keep && !lstat(a->path, &st) && S_ISREG(st.st_mode)) {
		if (backup_name(a->path, st.st_mtime, a->kept, sizeof(a->kept))) {
			a->kept[0] = '\0';
			unlink(a->tmp);
			return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
					   "%s: no name to keep the existing file under", a->path);
		}
		if (link(a->path, a->kept)) {
			e = errno;
			unlink(a->tmp);
			tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
				    "%s: cannot keep the existing file as %s: %s", a->path, a->kept,
				    strerror(e));
			a->kept[0] = '\0';
			return TPP_E_SYSTEM;
		}
	}
	if (rename(a->tmp, a->path)) {
		e = errno;
		unlink(a->tmp);
		if (a->kept[0])
			unlink(a->kept);
		a->kept[0] = '\0';
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: %s", a->path, strerror(e));
	}
	sync_dir(a->path);
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
