/*
 * test_common.c - error records, the table-driven YAML mapper, atomic
 * files and the host memory limit (cgroups).
 */
#include "tpp_test.h"

#include <stddef.h>

#include "tpp_afile.h"
#include "tpp_common.h"
#include "tpp_yaml.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

/* Files in dir whose name starts with prefix. */
static int count_prefixed(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

/* The whole of a small file, "" when unreadable. */
static const char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = 0;
	buf[0] = '\0';
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

/* tpp_afile: new file, replaced file (mode kept), through a symlink (the
 * link kept), an abandoned write (target untouched, no temporary left),
 * and the checks made before any work. */
static void test_afile(void)
{
	char dir[] = "/tmp/tpp-afile-XXXXXX", path[256], link_path[256], sub[256];
	struct tpp_afile a;
	struct tpp_err err;
	struct stat st;
	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	snprintf(path, sizeof(path), "%s/out.tsv", dir);
	snprintf(link_path, sizeof(link_path), "%s/link.tsv", dir);
	snprintf(sub, sizeof(sub), "%s/no/such/out.tsv", dir);

	CHECK(tpp_afile_check(path, &err) == TPP_OK);
	CHECK(tpp_afile_open(&a, path, &err) == TPP_OK);
	fputs("one\n", a.f);
	CHECK(access(path, F_OK) != 0); /* not there before the commit */
	CHECK(tpp_afile_commit(&a, &err) == TPP_OK);
	CHECK(!strcmp(slurp(path), "one\n"));

	chmod(path, 0600);
	CHECK(tpp_afile_open(&a, path, &err) == TPP_OK);
	fputs("two\n", a.f);
	CHECK(!strcmp(slurp(path), "one\n")); /* the old file until the commit */
	CHECK(tpp_afile_commit(&a, &err) == TPP_OK);
	CHECK(!strcmp(slurp(path), "two\n"));
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);

	CHECK(symlink("out.tsv", link_path) == 0);
	CHECK(tpp_afile_open(&a, link_path, &err) == TPP_OK);
	fputs("three\n", a.f);
	CHECK(tpp_afile_commit(&a, &err) == TPP_OK);
	CHECK(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(!strcmp(slurp(path), "three\n"));

	CHECK(tpp_afile_open(&a, path, &err) == TPP_OK);
	fputs("lost\n", a.f);
	tpp_afile_abort(&a);
	CHECK(!strcmp(slurp(path), "three\n"));
	CHECK(count_prefixed(dir, "out.tsv.tmp.") == 0);

	CHECK(tpp_afile_check(dir, &err) == TPP_E_SYSTEM);
	CHECK_STR_CONTAINS(err.msg, "is a directory");
	CHECK(tpp_afile_check(sub, &err) == TPP_E_SYSTEM);
	CHECK_STR_CONTAINS(err.msg, "No such file or directory");
	CHECK(tpp_afile_open(&a, sub, &err) == TPP_E_SYSTEM && a.f == NULL);
	CHECK(tpp_afile_check("", &err) == TPP_E_SYSTEM);

	/* a device is written in place, never replaced */
	CHECK(tpp_afile_open(&a, "/dev/null", &err) == TPP_OK && a.direct);
	fputs("x\n", a.f);
	CHECK(tpp_afile_commit(&a, &err) == TPP_OK);
	CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));

	/* a dangling link, and a chain of two that ends dangling: the file
	 * the last link names is created, the links stay links */
	{
		char dang[300], mid[300], made[300], loop2[300];
		snprintf(dang, sizeof(dang), "%s/dang.tsv", dir);
		snprintf(mid, sizeof(mid), "%s/mid.tsv", dir);
		snprintf(made, sizeof(made), "%s/made.tsv", dir);
		snprintf(loop2, sizeof(loop2), "%s/loop2.tsv", dir);
		CHECK(symlink("mid.tsv", dang) == 0 && symlink("made.tsv", mid) == 0);
		CHECK(tpp_afile_open(&a, dang, &err) == TPP_OK);
		fputs("made\n", a.f);
		CHECK(tpp_afile_commit(&a, &err) == TPP_OK);
		CHECK(lstat(dang, &st) == 0 && S_ISLNK(st.st_mode));
		CHECK(lstat(mid, &st) == 0 && S_ISLNK(st.st_mode));
		CHECK(!strcmp(slurp(made), "made\n"));
		unlink(made);
		unlink(mid);
		unlink(dang);
		/* a loop of links: refused before anything is written */
		CHECK(symlink("loop2.tsv", dang) == 0 && symlink("dang.tsv", loop2) == 0);
		CHECK(tpp_afile_check(dang, &err) == TPP_E_USAGE);
		CHECK_STR_CONTAINS(err.msg, "a loop of symbolic links");
		CHECK(tpp_afile_open(&a, dang, &err) == TPP_E_USAGE && a.f == NULL);
		CHECK(lstat(dang, &st) == 0 && S_ISLNK(st.st_mode));
		CHECK(count_prefixed(dir, "dang.tsv.tmp.") == 0);
		unlink(loop2);
		unlink(dang);
		/* a link that cannot be followed (a plain file on its way):
		 * an error, and the link stays */
		snprintf(made, sizeof(made), "%s/plain", dir);
		{
			FILE *pf = fopen(made, "w");
			CHECK(pf != NULL);
			if (pf)
				fclose(pf);
		}
		CHECK(symlink("plain/x", dang) == 0);
		CHECK(tpp_afile_open(&a, dang, &err) == TPP_E_SYSTEM && a.f == NULL);
		CHECK_STR_CONTAINS(err.msg, "cannot follow the symbolic link");
		CHECK(lstat(dang, &st) == 0 && S_ISLNK(st.st_mode));
		unlink(dang);
		unlink(made);
	}

	/* keep: the file replaced stays under PATH.<mtime>.bak with its
	 * content (same inode: a hard link); a new file keeps nothing; two
	 * replacements within the same second get two names */
	{
		char kept1[TPP_AFILE_PATH + 32];
		struct stat before;
		CHECK(stat(path, &before) == 0);
		CHECK(tpp_afile_open_keep(&a, path, 1, &err) == TPP_OK);
		fputs("four\n", a.f);
		CHECK(tpp_afile_commit(&a, &err) == TPP_OK);
		CHECK(!strcmp(slurp(path), "four\n"));
		CHECK(!strncmp(a.kept, path, strlen(path)));
		CHECK_STR_CONTAINS(a.kept, ".bak");
		CHECK(!strcmp(slurp(a.kept), "three\n"));
		CHECK(stat(a.kept, &st) == 0 && st.st_ino == before.st_ino);
		tpp_strlcpy(kept1, a.kept, sizeof(kept1));
		/* same mtime second as the first kept file: another name */
		{
			struct utimbuf ut = {before.st_atime, before.st_mtime};
			CHECK(utime(path, &ut) == 0);
		}
		CHECK(tpp_afile_open_keep(&a, path, 1, &err) == TPP_OK);
		fputs("five\n", a.f);
		CHECK(tpp_afile_commit(&a, &err) == TPP_OK);
		CHECK(a.kept[0] && strcmp(a.kept, kept1));
		CHECK(!strcmp(slurp(a.kept), "four\n"));
		CHECK(count_prefixed(dir, "out.tsv.") == 2);
		unlink(a.kept);
		unlink(kept1);
		/* a path under /proc naming a regular file (/proc/self/root +
		 * the path) is replaced atomically and kept, not written in
		 * place */
		if (!access("/proc/self/root", F_OK)) {
			char viaproc[600];
			struct stat b4;
			snprintf(viaproc, sizeof(viaproc), "/proc/self/root%s", path);
			CHECK(stat(path, &b4) == 0);
			CHECK(tpp_afile_open_keep(&a, viaproc, 1, &err) == TPP_OK && !a.direct);
			fputs("via proc\n", a.f);
			CHECK(tpp_afile_commit(&a, &err) == TPP_OK);
			CHECK(!strcmp(slurp(path), "via proc\n"));
			CHECK(a.kept[0] && stat(a.kept, &st) == 0 && st.st_ino == b4.st_ino);
			unlink(a.kept);
		}
		/* nothing there: nothing kept */
		unlink(path);
		CHECK(tpp_afile_open_keep(&a, path, 1, &err) == TPP_OK);
		fputs("six\n", a.f);
		CHECK(tpp_afile_commit(&a, &err) == TPP_OK);
		CHECK(a.kept[0] == '\0');
		CHECK(count_prefixed(dir, "out.tsv.") == 0);
	}

	unlink(link_path);
	unlink(path);
	rmdir(dir);
}

struct thing {
	int n;
	double x;
	char name[8];
	int flag;
	int color;
};

static const char *const colors[] = {"red", "green"};

static const struct tpp_yfield fields[] = {
	{.key = "n", .type = TPP_YF_INT, .offset = offsetof(struct thing, n),
	 .min = 1, .max = 100, .required = 1},
	{.key = "x", .type = TPP_YF_DOUBLE, .offset = offsetof(struct thing, x),
	 .scale = 1e9, .min = 0, .max = 1e12},
	{.key = "name", .type = TPP_YF_STR, .offset = offsetof(struct thing, name),
	 .size = 8},
	{.key = "flag", .type = TPP_YF_BOOL, .offset = offsetof(struct thing, flag)},
	{.key = "color", .type = TPP_YF_ENUM, .offset = offsetof(struct thing, color),
	 .names = colors, .nnames = 2},
};

/* n copies of c at buf[k], then a NUL; the new end (k + n). */
static int repeat_char(char *buf, int k, char c, int n)
{
	memset(buf + k, c, (size_t)n);
	buf[k + n] = '\0';
	return k + n;
}

static int parse(const char *text, struct thing *t, struct tpp_err *err)
{
	struct tpp_ydoc d;
	int rc = tpp_ydoc_load_string(&d, "mem.yaml", text, err);
	if (rc)
		return rc;
	rc = tpp_ymap_parse(&d, tpp_ydoc_root(&d), fields, TPP_ARRAY_LEN(fields),
			    t, "thing", err);
	tpp_ydoc_free(&d);
	return rc;
}

/* Write text to dir/name, making the directories on the way. */
static void put(const char *dir, const char *name, const char *text)
{
	char path[1024], *p;
	FILE *f;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/*
 * The memory cgroup's limit (common/tpp_mem.c) from fake /proc/self files
 * and cgroup trees: v2 (memory.max, "max" meaning none, an ancestor's
 * smaller limit wins), v1 (memory.limit_in_bytes, its near-2^63 "none"),
 * a container whose mount shows its own cgroup at the top, a hybrid host
 * whose v2 hierarchy has no memory controller, and nothing to read.
 */
static void test_cgroup_mem(void)
{
	char tmpl[] = "/tmp/tpp-cg-XXXXXX", mi[256], cg[256], text[1024];
	const char *d = mkdtemp(tmpl);
	CHECK(d != NULL);
	if (!d)
		return;
	snprintf(mi, sizeof(mi), "%s/mountinfo", d);
	snprintf(cg, sizeof(cg), "%s/cgroup", d);

	/* v2: the job's cgroup has no limit, its parent 8 GiB, the root none */
	snprintf(text, sizeof(text),
		 "22 1 0:21 / /proc rw - proc proc rw\n"
		 "30 22 0:26 / %s/v2 rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n", d);
	put(d, "mountinfo", text);
	put(d, "cgroup", "0::/slurm/job_7/step_0\n");
	put(d, "v2/slurm/job_7/step_0/memory.max", "max\n");
	put(d, "v2/slurm/job_7/memory.max", "8589934592\n");
	put(d, "v2/slurm/memory.max", "max\n");
	CHECK(tpp_cgroup_mem_limit_from(mi, cg) == 8589934592.0);
	/* the step's own smaller limit wins */
	put(d, "v2/slurm/job_7/step_0/memory.max", "1073741824\n");
	CHECK(tpp_cgroup_mem_limit_from(mi, cg) == 1073741824.0);
	/* none anywhere */
	put(d, "v2/slurm/job_7/step_0/memory.max", "max\n");
	put(d, "v2/slurm/job_7/memory.max", "max\n");
	CHECK(tpp_cgroup_mem_limit_from(mi, cg) == 0);

	/* a container: the mount's top is the container's cgroup, which
	 * /proc/self/cgroup names by its host path */
	snprintf(text, sizeof(text),
		 "30 22 0:26 /kubepods/pod1/c1 %s/ct rw - cgroup2 cgroup2 rw\n", d);
	put(d, "mountinfo", text);
	put(d, "cgroup", "0::/kubepods/pod1/c1\n");
	put(d, "ct/memory.max", "4294967296\n");
	CHECK(tpp_cgroup_mem_limit_from(mi, cg) == 4294967296.0);
	/* ... or by "/" under cgroup namespaces */
	put(d, "cgroup", "0::/\n");
	CHECK(tpp_cgroup_mem_limit_from(mi, cg) == 4294967296.0);

	/* v1 (a hybrid host: the unified hierarchy has no memory.max) */
	snprintf(text, sizeof(text),
		 "31 23 0:28 / %s/v1 rw - tmpfs tmpfs rw,mode=755\n"
		 "35 31 0:32 / %s/v1/memory rw,relatime - cgroup cgroup rw,memory\n"
		 "36 31 0:33 / %s/v1/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
		 "40 31 0:37 / %s/v1/unified rw - cgroup2 cgroup2 rw\n", d, d, d, d);
	put(d, "mountinfo", text);
	put(d, "cgroup", "9:cpu,cpuacct:/x\n4:memory:/process_api/fb64\n0::/\n");
	put(d, "v1/memory/memory.limit_in_bytes", "9223372036854771712\n");
	put(d, "v1/memory/process_api/memory.limit_in_bytes", "9223372036854771712\n");
	put(d, "v1/memory/process_api/fb64/memory.limit_in_bytes", "25769803776\n");
	CHECK(tpp_cgroup_mem_limit_from(mi, cg) == 25769803776.0);
	put(d, "v1/memory/process_api/fb64/memory.limit_in_bytes", "9223372036854771712\n");
	CHECK(tpp_cgroup_mem_limit_from(mi, cg) == 0);

	/* no such files: no limit */
	snprintf(text, sizeof(text), "%s/missing", d);
	CHECK(tpp_cgroup_mem_limit_from(text, cg) == 0);
	CHECK(tpp_cgroup_mem_limit_from(mi, text) == 0);
	/* and the host figure is never above the physical memory */
	{
		int from_cg = -1;
		double lim = tpp_host_mem_limit(&from_cg);
		long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
		CHECK(from_cg == 0 || from_cg == 1);
		CHECK(lim > 0 && lim <= (double)pages * (double)psize);
	}
	snprintf(text, sizeof(text), "rm -rf '%s'", d);
	CHECK(system(text) == 0);
}

/* FNV-1a 64: the published test vectors (offset basis for "", "a",
 * "foobar"), and continuing a hash equals hashing the concatenation. */
static void test_fnv1a(void)
{
	CHECK(tpp_fnv1a(TPP_FNV1A_INIT, "", 0) == 0xcbf29ce484222325ULL);
	CHECK(tpp_fnv1a(TPP_FNV1A_INIT, "a", 1) == 0xaf63dc4c8601ec8cULL);
	CHECK(tpp_fnv1a(TPP_FNV1A_INIT, "foobar", 6) == 0x85944171f73967e8ULL);
	CHECK(tpp_fnv1a(tpp_fnv1a(TPP_FNV1A_INIT, "foo", 3), "bar", 3) ==
	      tpp_fnv1a(TPP_FNV1A_INIT, "foobar", 6));
}

int main(void)
{
	struct thing t;
	struct tpp_err err;

	test_cgroup_mem();
	test_fnv1a();

	memset(&t, 0, sizeof(t));
	CHECK(parse("n: 7\nx: 2.5\nname: abc\nflag: yes\ncolor: green\n", &t, &err) == TPP_OK);
	CHECK(t.n == 7);
	CHECK_REL(t.x, 2.5e9, 1e-12);
	CHECK(!strcmp(t.name, "abc"));
	CHECK(t.flag == 1);
	CHECK(t.color == 1);

	CHECK(parse("n: 7\nbogus: 1\n", &t, &err) == TPP_E_INPUT);
	CHECK(err.line == 2 && err.col == 1);
	CHECK_STR_CONTAINS(err.msg, "unknown key 'bogus'");

	CHECK(parse("n: 7\nn: 8\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "duplicate key 'n'");

	CHECK(parse("x: 1\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "missing required key 'n'");

	CHECK(parse("n: 700\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "out of range");
	CHECK(err.line == 1 && err.col == 4);

	CHECK(parse("n: seven\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "expected an integer");

	CHECK(parse("n: 1\ncolor: blue\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "expected one of: red, green");

	CHECK(parse("n: 1\nname: waytoolongname\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "too long");

	CHECK(!tpp_has_control_char("dgx-a100 (Selene) caf\xc3\xa9"));
	CHECK(tpp_has_control_char("a\nb") && tpp_has_control_char("a\tb") &&
	      tpp_has_control_char("\x7f"));
	/* Unicode ones that break or reorder a printed line: NEL, the line
	 * separator, a right-to-left override, an isolate; not other
	 * characters of those blocks (an en dash, U+2013; a bullet, U+2022) */
	CHECK(tpp_has_control_char("a\xc2\x85" "b") && tpp_has_control_char("a\xe2\x80\xa8" "b") &&
	      tpp_has_control_char("a\xe2\x80\xae" "b") && tpp_has_control_char("\xe2\x81\xa6") &&
	      tpp_has_control_char("a\xe2\x80\x8f" "b") && tpp_has_control_char("a\xd8\x9c"));
	CHECK(!tpp_has_control_char("a\xe2\x80\x93" "b \xe2\x80\xa2 \xc2\xa0"));
	/* tpp_printable: ESC, CR and DEL as '?', newline and tab too unless
	 * kept; other bytes as they are */
	{
		char t1[] = "a\x1b[31m\tb\r\n\x7f\xc3\xa9", t2[sizeof(t1)];
		memcpy(t2, t1, sizeof(t1));
		tpp_printable(t1, 0);
		tpp_printable(t2, 1);
		CHECK(!strcmp(t1, "a?[31m?b???\xc3\xa9"));
		CHECK(!strcmp(t2, "a?[31m\tb?\n?\xc3\xa9"));
	}
	/* tpp_find_lone_cr: CR LF, CR CR LF and CRs at the end end lines; a
	 * CR before anything else is found, its column in characters */
	{
		static const char ok[] = "a: 1\r\nb: 2\r\r\nc: 3\r\r";
		static const char bad[] = "a: 1\r\n\xc3\xa9x: 2\ry: 3\n";
		int line = 0, col = 0;
		CHECK(!tpp_find_lone_cr(ok, sizeof(ok) - 1, &line, &col));
		CHECK(tpp_find_lone_cr(bad, sizeof(bad) - 1, &line, &col));
		CHECK(line == 2 && col == 6);
	}
	/* and what tpp_has_control_char refuses beyond ASCII, byte by byte
	 * (the length stays); an en dash and a cut sequence at the end stay */
	{
		char wide[] = "x\xe2\x80\xaey\xc2\x85z\xe2\x81\xa6\xd8\x9c\xe2\x80\x93\xe2\x80";
		tpp_printable(wide, 1);
		CHECK(!strcmp(wide, "x???y??z?????\xe2\x80\x93\xe2\x80"));
		CHECK(!tpp_has_control_char(wide));
	}

	/* edit distance for "did you mean": case does not count */
	CHECK(tpp_name_distance("llama3-70B", "llama3-70b") == 0);
	CHECK(tpp_name_distance("dgx-a10", "dgx-a100") == 1);
	CHECK(tpp_name_distance("dgx-h100", "dgx-a100") == 1);
	CHECK(tpp_name_distance("", "abc") == 3 && tpp_name_distance("abc", "") == 3);
	CHECK(tpp_name_distance("kitten", "sitting") == 3);
	CHECK(tpp_name_near("175B", "175b") == 0 && tpp_name_near("llama3-70", "llama3-70b") == 1);
	/* short names are too ambiguous to guess at unless equal but for case */
	CHECK(tpp_name_near("17b", "13b") == -1 && tpp_name_near("13B", "13b") == 0);
	CHECK(tpp_name_near("kitten", "sitting") == -1);

	/* YAML tags: !!str makes a value a string, as quotes do (libyaml's
	 * document API alone cannot tell it from a plain scalar); any other
	 * tag is refused where it stands */
	CHECK(parse("n: !!str 7\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "expected an integer, got the !!str-tagged string '7' (drop the tag)");
	CHECK(err.line == 1 && err.col == 4);
	CHECK(parse("n: 1\nx: !!str 2.5\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "expected a number, got the !!str-tagged string");
	CHECK(parse("n: 1\nflag: !!str true\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "expected true or false, got the !!str-tagged string 'true'");
	/* a plain scalar over lines (a blank line keeps a line break) */
	CHECK(parse("n: 01\n\n  2\n", &t, &err) == TPP_E_INPUT);
	CHECK(!strchr(err.msg, '\n'));
	CHECK_STR_CONTAINS(err.msg, "'01?2'");
	CHECK(parse("n: 1\nx: |\n  2.5\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "got the block string '2.5?'");
	CHECK(!strchr(err.msg, '\n')); /* one line, as every message */
	CHECK(parse("n: 1\nname: !!str 12\n", &t, &err) == TPP_OK);
	CHECK(!strcmp(t.name, "12"));
	/* the pass that finds tags keeps to the loader's node order across
	 * anchors and aliases: the tagged value is the one reported */
	CHECK(parse("name: &a abc\ncolor: *a\nn: 1\nx: !!float 3\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "YAML tag '!!float' is not read");
	CHECK(err.line == 4 && err.col == 4);
	/* an error in a value taken through an alias is placed at the alias
	 * (it named the anchor's line), keys and flow collections too, in
	 * the order of the text; a scalar's copy keeps its !!str */
	CHECK(parse("name: &a -5\nn: *a\n", &t, &err) == TPP_E_INPUT);
	CHECK(err.line == 2 && err.col == 4);
	CHECK(parse("name: &s red\ncolor: &c green\nn: 2\nx: *s\n", &t, &err) == TPP_E_INPUT);
	CHECK(err.line == 4 && err.col == 4);
	CHECK(parse("n: &k 3\nname: &f flag\n*f : *k\n", &t, &err) == TPP_E_INPUT);
	CHECK(err.line == 3 && err.col == 6);
	CHECK(parse("{name: &s !!str 5, n: *s}\n", &t, &err) == TPP_E_INPUT);
	CHECK(err.line == 1 && err.col == 23);
	CHECK(parse("name: &s xy\nn: 4\ncolor: *s\n", &t, &err) == TPP_E_INPUT);
	CHECK(err.line == 3 && err.col == 8);
	CHECK(parse("n: &a 7\nname: q\n", &t, &err) == TPP_OK && t.n == 7);
	CHECK(parse("n: !!int 7\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "YAML tag '!!int' is not read");
	CHECK(parse("!!map {n: 7}\n", &t, &err) == TPP_E_INPUT);
	CHECK(err.line == 1 && err.col == 1);
	CHECK(parse("n: 1\nname: !x%01y z\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "'!x?y'");
	/* JSON has no tags: read through libyaml, one is refused, !!str too */
	{
		struct tpp_ydoc jd;
		CHECK(tpp_ydoc_load_json_string(&jd, "mem.json", "{\"a\": 1,\n \"b\": !!str \"x\"}",
						&err) == TPP_E_INPUT);
		CHECK_STR_CONTAINS(err.msg, "a YAML tag in a JSON file");
		CHECK(err.line == 2 && err.col == 7);
		CHECK(tpp_ydoc_load_json_string(&jd, "mem.json", "{\"a\": &x \"m\",\n \"b\": *x}",
						&err) == TPP_E_INPUT);
		CHECK_STR_CONTAINS(err.msg, "a YAML anchor in a JSON file");
		CHECK(err.line == 1 && err.col == 7);
	}

	CHECK(parse("n: [1, 2\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "YAML syntax error");
	CHECK(err.line >= 1);

	CHECK(parse("- 1\n- 2\n", &t, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "expected a mapping");

	/* JSON members are looked up by name: a repeated key (which other
	 * JSON tools read as its last value, tpp_y_map_get as its first) is
	 * an error at its second occurrence, in nested objects too */
	{
		struct tpp_ydoc d;
		CHECK(tpp_ydoc_load_json_string(&d, "mem.json",
			"{\"a\": 1, \"b\": {\"c\": 2,\n \"d\": 3, \"c\": 4}, \"a\": 5}",
			&err) == TPP_E_INPUT);
		CHECK_STR_CONTAINS(err.msg, "duplicate key 'c'");
		CHECK(err.line == 2 && err.col == 10);
		CHECK(tpp_ydoc_load_json_string(&d, "mem.json",
			"{\"a\": {\"a\": 1}, \"b\": [{\"a\": 2}, {\"a\": 3}]}", &err) == TPP_OK);
		tpp_ydoc_free(&d);
	}
	/* JSON numbers are decimal: strtod took a hex 0x10 (report --exec
	 * read it as 16 s) and 010 as 10 */
	{
		struct tpp_ydoc d;
		yaml_node_t *root;
		double x = -1;
		CHECK(tpp_ydoc_load_json_string(&d, "mem.json",
			"{\"a\": 0x10, \"b\": 0x1p3, \"c\": 010, \"d\": 1.5e1, \"e\": -0.5, \"f\": 0}",
			&err) == TPP_OK);
		root = tpp_ydoc_root(&d);
		CHECK(!tpp_yj_num(tpp_y_map_get(&d, root, "a"), &x) && x == -1);
		CHECK(!tpp_yj_num(tpp_y_map_get(&d, root, "b"), &x) && x == -1);
		CHECK(!tpp_yj_num(tpp_y_map_get(&d, root, "c"), &x) && x == -1);
		CHECK(tpp_yj_num(tpp_y_map_get(&d, root, "d"), &x) && x == 15);
		CHECK(tpp_yj_num(tpp_y_map_get(&d, root, "e"), &x) && x == -0.5);
		CHECK(tpp_yj_num(tpp_y_map_get(&d, root, "f"), &x) && x == 0);
		tpp_ydoc_free(&d);
	}

	test_afile();

	/* UTF-8: valid sequences by length; stray, overlong, surrogate and
	 * cut ones are not; trimming drops only a cut sequence at the end */
	CHECK(tpp_utf8_len("a") == 1 && tpp_utf8_len("\xc3\xa9") == 2 &&
	      tpp_utf8_len("\xe2\x80\x93") == 3 && tpp_utf8_len("\xf0\x9f\x98\x80") == 4);
	CHECK(tpp_utf8_len("\xff") == 0 && tpp_utf8_len("\x80") == 0 && tpp_utf8_len("\xc0\xaf") == 0 &&
	      tpp_utf8_len("\xed\xa0\x80") == 0 && tpp_utf8_len("\xe2\x80") == 0 &&
	      tpp_utf8_len("\xf4\x90\x80\x80") == 0 && tpp_utf8_len("") == 0);
	{
		char a[] = "ab\xc3\xa9\xc3", b[] = "ab\xe2\x80", c[] = "ab\xc3\xa9", d[] = "ab\xff\xfe";
		tpp_utf8_trim(a);
		tpp_utf8_trim(b);
		tpp_utf8_trim(c);
		tpp_utf8_trim(d);
		CHECK(!strcmp(a, "ab\xc3\xa9") && !strcmp(b, "ab") && !strcmp(c, "ab\xc3\xa9") &&
		      !strcmp(d, "ab\xff\xfe"));
	}

	/* errors print with location */
	tpp_err_set(&err, TPP_E_INPUT, NULL, 0, 0, "plain %d", 3);
	CHECK(!strcmp(err.msg, "plain 3"));
	CHECK(err.status == TPP_E_INPUT);

	/* flow nesting past the limit is placed by line and character
	 * column: an escaped line break inside a double-quoted scalar still
	 * ends a line, \" does not end the scalar, "é" is one column */
	{
		char text[512];
		struct thing th;
		int k = snprintf(text, sizeof(text), "name: \"a\\\nb \\\" [\"\n\xc3\xa9: ");
		repeat_char(text, k, '[', 65);
		CHECK(parse(text, &th, &err) == TPP_E_INPUT);
		CHECK(err.line == 3 && err.col == 68);
		CHECK(strstr(err.msg, "nesting deeper than 64") != NULL);
	}

	/* the depth comes from the YAML events, not from raw bytes: an
	 * apostrophe in a plain scalar does not open a quote that hides the
	 * brackets after it (it once let a 150000-deep "[[[..." through to
	 * libyaml's quadratic loader), and brackets inside plain, quoted and
	 * block scalars or comments are not nesting at all */
	{
		char text[4096];
		struct tpp_ydoc d;
		int i, k = snprintf(text, sizeof(text), "a: Megatron's layout\nb: ");
		repeat_char(text, k, '[', 65);
		CHECK(tpp_ydoc_load_string(&d, "mem.yaml", text, &err) == TPP_E_INPUT);
		CHECK(err.line == 2 && err.col == 68);
		CHECK(strstr(err.msg, "nesting deeper than 64") != NULL);

		k = snprintf(text, sizeof(text), "a: x");
		k = repeat_char(text, k, '[', 100);
		k += snprintf(text + k, sizeof(text) - (size_t)k, "\nb: |\n  ");
		k = repeat_char(text, k, '{', 100);
		k += snprintf(text + k, sizeof(text) - (size_t)k, "\nc: 'it''s ");
		k = repeat_char(text, k, '[', 100);
		k += snprintf(text + k, sizeof(text) - (size_t)k, "'\n# ");
		k = repeat_char(text, k, '[', 100);
		k += snprintf(text + k, sizeof(text) - (size_t)k, "\nd: [[1], {e: [2]}]\n");
		CHECK(tpp_ydoc_load_string(&d, "mem.yaml", text, &err) == TPP_OK);
		tpp_ydoc_free(&d);

		/* block nesting is linear in libyaml and not limited */
		k = 0;
		for (i = 0; i < 200; i++)
			k += snprintf(text + k, sizeof(text) - (size_t)k, "- ");
		snprintf(text + k, sizeof(text) - (size_t)k, "x\n");
		CHECK(tpp_ydoc_load_string(&d, "mem.yaml", text, &err) == TPP_OK);
		tpp_ydoc_free(&d);
	}

	/* the echoed source line: a CRLF file's "\r" dropped; escape, other
	 * control bytes and bytes that are not UTF-8 shown as '?', one per
	 * byte, valid UTF-8 and tabs as they are; the caret under column 4
	 * counted in characters (the tab), as libyaml counts */
	{
		static const char path[] = "test_common_srcline.yaml";
		static const char want[] = "test_common_srcline.yaml:2:4: error: bad\n"
					   "  \xc3\xa9:\t?[2J???\n"
					   "    \t^\n";
		char out[256];
		size_t got;
		FILE *f = fopen(path, "wb");
		CHECK(f != NULL);
		if (f) {
			fputs("a: 1\r\n\xc3\xa9:\t\x1b[2J\xff\x7f\x01\r\nb: 2\r\n", f);
			fclose(f);
		}
		tpp_err_set(&err, TPP_E_INPUT, path, 2, 4, "bad");
		f = tmpfile();
		CHECK(f != NULL);
		if (f) {
			tpp_err_print(f, &err);
			rewind(f);
			got = fread(out, 1, sizeof(out) - 1, f);
			out[got] = '\0';
			fclose(f);
			CHECK(!strcmp(out, want));
		}
		remove(path);
	}

	/* a line longer than the shown buffer (a minified JSON is one line)
	 * is shown as a window around the column, the caret under it */
	{
		static const char path[] = "test_common_longline.json";
		char line[6001];
		int i;
		FILE *f = fopen(path, "wb");
		CHECK(f != NULL);
		for (i = 0; i < 6000; i++)
			line[i] = (char)('a' + i % 26);
		line[4899] = 'X'; /* column 4900 */
		line[6000] = '\0';
		if (f) {
			fprintf(f, "{}\n%s\n", line);
			fclose(f);
		}
		tpp_err_set(&err, TPP_E_INPUT, path, 2, 4900, "bad");
		CHECK(!strncmp(err.src_line, "...", 3));
		CHECK(strlen(err.src_line) < sizeof(err.src_line));
		CHECK(err.src_col > 3 && err.src_col <= (int)strlen(err.src_line));
		CHECK(err.src_col > 3 && err.src_line[err.src_col - 1] == 'X');
		CHECK(strlen(err.src_line) > 6 &&
		      !strcmp(err.src_line + strlen(err.src_line) - 3, "..."));
		/* near the start: no leading "...", the column as given */
		tpp_err_set(&err, TPP_E_INPUT, path, 2, 5, "bad");
		CHECK(!strncmp(err.src_line, "abcde", 5) && err.src_col == 5);
		/* a short line is shown whole */
		tpp_err_set(&err, TPP_E_INPUT, path, 1, 2, "bad");
		CHECK(!strcmp(err.src_line, "{}") && err.src_col == 2);
		remove(path);
	}

	return tpp_test_done("test_common");
}
