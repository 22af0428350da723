/*
 * tpp_test_bad.h - the shared check of the bad-input corpus: every file
 * tests/data/bad/<prefix>* starts with "# expect: LINE:COL: message"; it
 * must fail to load with TPP_E_INPUT at exactly that place, with that
 * message, naming the file, and leave the caller's output untouched.
 */
#ifndef TPP_TEST_BAD_H
#define TPP_TEST_BAD_H

#include <dirent.h>

#include "tpp_common.h"
#include "tpp_test.h"

/* Load `path`; return the status, fill *err, and set *untouched to whether
 * the output object kept its contents. */
typedef int (*tpp_test_load_fn)(const char *path, struct tpp_err *err,
				int *untouched);

static int tpp_test_read_expect(const char *path, int *line, int *col,
				char *msg, size_t size)
{
	char buf[512];
	FILE *f = fopen(path, "r");
	int n = 0;
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\r\n")] = '\0'; /* the line end, CR LF (CR CR LF) too */
	if (sscanf(buf, "# expect: %d:%d: %n", line, col, &n) != 2 || !n)
		return -1;
	tpp_strlcpy(msg, buf + n, size);
	return 0;
}

/* Check every bad file whose name starts with `prefix`; returns how many. */
static int tpp_test_bad_files(const char *prefix, tpp_test_load_fn load)
{
	const char *dir = TPP_TEST_DATA "/bad";
	struct dirent *e;
	DIR *dp = opendir(dir);
	int found = 0;

	CHECK(dp != NULL);
	if (!dp)
		return 0;
	while ((e = readdir(dp))) {
		char path[1024], msg[512];
		struct tpp_err err;
		int line, col, rc, untouched = 0;
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		found++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (tpp_test_read_expect(path, &line, &col, msg, sizeof(msg))) {
			fprintf(stderr, "%s: first line must be "
				"'# expect: LINE:COL: message'\n", path);
			CHECK(!"bad expect line");
			continue;
		}
		tpp_err_clear(&err);
		rc = load(path, &err, &untouched);
		CHECK(rc == TPP_E_INPUT);
		CHECK(err.status == TPP_E_INPUT);
		if (err.line != line || err.col != col) {
			fprintf(stderr, "%s: expected %d:%d, got %d:%d: %s\n",
				e->d_name, line, col, err.line, err.col, err.msg);
			CHECK(err.line == line && err.col == col);
		}
		CHECK_STR_CONTAINS(err.msg, msg);
		CHECK_STR_CONTAINS(err.file, e->d_name);
		CHECK(untouched);
	}
	closedir(dp);
	printf("bad %s* files: %d\n", prefix, found);
	return found;
}

#endif
