/*
 * import.c - read nccl-tests results (its text table, or the JSON written
 * with -J) into a calibration table.
 *
 * Data flow: all_reduce_perf ... > run.txt (or -J run.json)
 * --tpp_cal_import--> one struct tpp_cal_coll appended to a struct
 * tpp_calibration (+ environment found in the file) --> fit.c, calfile.c.
 *
 * Column layout (calibration.md 1.5, nccl-tests src/util.cu):
 *   size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
 * sizes in bytes, times in microseconds, bandwidths in GB/s (1e9); older
 * versions and some tests print no redop / root columns, or placeholders
 * ("none", "-1").  With -I each half gains i_min i_max i_p99 i_cv%.  We use
 * the OUT-OF-PLACE time.  The text table prints the average over the timed
 * iterations only, so median_s = p10_s = p90_s = that time.  The JSON
 * carries the same average, and with -I also per-iteration statistics: then
 * median_s = p50_us, p10_s = min_us and p90_s = p95_us (the nearest
 * percentiles it gives, bracketing p10 and p90 from outside).
 *
 * The JSON is read with libyaml (already the YAML reader of every other
 * input): JSON is YAML 1.2 flow syntax, and its nodes keep line:column for
 * messages.
 */
#define _POSIX_C_SOURCE 200809L

#include "calibration.h"
#include "tpp_yaml.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_FILE_BYTES (64L * 1024 * 1024)

/* What the file says besides the rows. */
/*
 * The distinct hosts of a file, counted whatever their names' length:
 * the printable list (file_meta.hosts, meta.hosts of the calibration)
 * keeps only what fits, so the count cannot come from it (ranks_per_node
 * = ranks / hosts).  A 64-bit FNV-1a hash per host; past
 * TPP_IMPORT_MAX_HOSTS the count is unknown (n = -1).
 */
#define TPP_IMPORT_MAX_HOSTS 4096
struct host_set {
	uint64_t hash[TPP_IMPORT_MAX_HOSTS];
	int n; /* distinct hosts seen; -1: more than TPP_IMPORT_MAX_HOSTS */
};

struct file_meta {
	int op;                /* -1: the file does not say, or names
				  a collective tpplan does not model: */
	char op_other[64];     /* that name ("broadcast_perf"), "" if none */
	int op_other_line;     /* its line (0 in JSON) */
	int op_line, op_col;   /* where the file names its collective
				  (text: the "Collective test starting"
				  line; 0 in JSON and for the file name) */
	char nccl[64];         /* "2.18.3+cuda12.2" */
	char nccl_tests[64];   /* nccl-tests version */
	char device[TPP_CAL_STR];
	char hosts[TPP_CAL_STR];
	int ranks;             /* rank / device lines seen */
	struct host_set hostset;
	/*
	 * The measured group: the ranks of the first rank line's group
	 * (nccl-tests prints each rank's NCCL_TESTS_SPLIT colour as "Group";
	 * one colour, 0, without a split), and the hosts they are on.  Where
	 * the file lists them (line:col of the first rank line or of
	 * "devices"), for messages.
	 */
	int group_id;          /* -1 until a rank line is seen */
	int group_ranks;
	char group_hosts[TPP_CAL_STR];
	struct host_set group_hostset;
	int ranks_line, ranks_col;
	int summary;           /* text: nccl-tests' closing "# Avg bus bandwidth" seen */
	int check_form;        /* text: the header's check column, "#wrong"
				  (a count) 1, "error" (the largest error,
				  older nccl-tests, rccl-tests) 2; 0 none */
	/* what the run said of itself that does not void its timings, each
	 * with line:col: an NCCL error it recorded at the end (its "errors",
	 * "# error: ..."; ncclGetLastError, which a warning that did not stop
	 * the run also sets) and a failed NCCL_TESTS_MIN_BW check; printed as
	 * warnings */
	char nccl_error[200];  /* printable (note_error), "..." if cut */
	int nccl_error_line, nccl_error_col;
	double min_bw_failed;  /* the average bus bandwidth that failed it, */
	int min_bw_known;      /* when the file gives it as a plain number */
	int min_bw_line, min_bw_col;
	int started;           /* text: line of "# Collective test starting:", 0 if none */
};

/* ---- small helpers -------------------------------------------------------- */

/* Collective named in s ("all_reduce_perf", "AllReduce", "alltoall", a
 * path ...): letters lower-cased, '_' and '-' dropped; -1 if none. */
static int op_from_name(const char *s)
{
	static const struct {
		const char *key;
		enum tpp_coll op;
	} keys[] = {
		{"reducescatter", TPP_COLL_REDUCE_SCATTER},
		{"allreduce", TPP_COLL_ALL_REDUCE},
		{"allgather", TPP_COLL_ALL_GATHER},
		{"alltoall", TPP_COLL_ALL_TO_ALL},
		{"sendrecv", TPP_COLL_SEND_RECV},
	};
	char buf[512];
	size_t i, n = 0;
	for (; *s && n + 1 < sizeof(buf); s++)
		if (*s != '_' && *s != '-')
			buf[n++] = (char)tolower((unsigned char)*s);
	buf[n] = '\0';
	for (i = 0; i < TPP_ARRAY_LEN(keys); i++)
		if (strstr(buf, keys[i].key))
			return (int)keys[i].op;
	return -1;
}

/* The collective the file states in s (line `line`, s at column `col`;
 * 0, 0 where there is none): op_from_name's, or the name kept in
 * m->op_other when it is none tpplan models. */
static void meta_op(struct file_meta *m, const char *s, int line, int col)
{
	size_t n = 0;
	m->op = op_from_name(s);
	while (*s == ' ' || *s == '\t') {
		s++;
		col += col > 0;
	}
	if (m->op >= 0 || !m->op_other[0]) {
		m->op_line = line;
		m->op_col = col;
	}
	if (m->op >= 0 || m->op_other[0])
		return;
	while (s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != '\r' && s[n] != '\n' &&
	       n + 1 < sizeof(m->op_other))
		n++;
	memcpy(m->op_other, s, n);
	m->op_other[n] = '\0';
	m->op_other_line = line;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Count host h in *set if it is new there, and add it to the
 * comma-separated list `hosts` (of `size` bytes) while it fits; a list
 * that ran full ends in ",..." (the count stays exact). */
static void add_host_to(char *hosts, size_t size, struct host_set *set, const char *h)
{
	static const char more[] = ",...";
	size_t len = strlen(h), used = strlen(hosts);
	uint64_t x = tpp_fnv1a(TPP_FNV1A_INIT, h, len);
	int i;
	if (!len || set->n < 0)
		return;
	for (i = 0; i < set->n; i++)
		if (set->hash[i] == x)
			return;
	if (set->n == TPP_IMPORT_MAX_HOSTS) {
		set->n = -1;
		return;
	}
	set->hash[set->n++] = x;
	if (used >= sizeof(more) - 1 && !strcmp(hosts + used - (sizeof(more) - 1), more))
		return; /* already full */
	if (used + len + 1 + sizeof(more) > size) {
		if (used && used + sizeof(more) <= size)
			memcpy(hosts + used, more, sizeof(more));
		return;
	}
	if (used)
		hosts[used++] = ',';
	memcpy(hosts + used, h, len + 1);
}

/* One rank of the file: its group (colour), host (may be NULL) and where
 * it is listed. */
static void add_rank(struct file_meta *m, int group_id, const char *host,
		     int line, int col)
{
	if (host)
		add_host_to(m->hosts, sizeof(m->hosts), &m->hostset, host);
	if (!m->ranks++) {
		m->group_id = group_id;
		m->ranks_line = line;
		m->ranks_col = col;
	}
	if (group_id != m->group_id)
		return;
	m->group_ranks++;
	if (host)
		add_host_to(m->group_hosts, sizeof(m->group_hosts),
			    &m->group_hostset, host);
}

/* NCCL version code -> "major.minor.patch" (codes changed at 2.9). */
static void nccl_code_str(long code, char *buf, size_t size)
{
	if (code >= 10000)
		snprintf(buf, size, "%ld.%ld.%ld", code / 10000,
			 (code % 10000) / 100, code % 100);
	else
		snprintf(buf, size, "%ld.%ld.%ld", code / 1000,
			 (code % 1000) / 100, code % 100);
}

static int read_file(const char *path, char **out, struct tpp_err *err)
{
	FILE *f;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	struct stat st;
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
				   "is a directory, not nccl-tests output");
	if (tpp_not_regular(path))
		return tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
				   "not a regular file (a FIFO or device)");
	f = fopen(path, "rb");
	if (!f)
		return tpp_err_set(err, TPP_E_INPUT, path, 0, 0, "cannot open: %s",
				   strerror(errno));
	for (;;) {
		size_t got;
		if (cap - n < 65536) {
			char *nb;
			if (cap >= (size_t)MAX_FILE_BYTES) {
				free(buf);
				fclose(f);
				return tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
						   "file too large (over %ld MiB): not nccl-tests output?",
						   MAX_FILE_BYTES >> 20);
			}
			cap = cap ? cap * 2 : 131072;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				fclose(f);
				return tpp_err_set(err, TPP_E_SYSTEM, path, 0, 0,
						   "out of memory");
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return tpp_err_set(err, TPP_E_INPUT, path, 0, 0, "read error: %s",
				   strerror(errno));
	}
	fclose(f);
	buf[n] = '\0';
	if (strlen(buf) != n) {
		/* where: line and column (bytes) of the first NUL */
		size_t i, off = strlen(buf);
		int line = 1, col = 1;
		for (i = 0; i < off; i++) {
			if (buf[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		free(buf);
		return tpp_err_set(err, TPP_E_INPUT, path, line, col,
				   "binary file (NUL byte): not nccl-tests output");
	}
	/* a carriage return that ends no line: lines ending in CR alone
	 * read as one line, whose rows are not found -- said at the
	 * first, as the other readers say it */
	{
		int line, col;
		if (tpp_find_lone_cr(buf, n, &line, &col)) {
			free(buf);
			return tpp_err_set(err, TPP_E_INPUT, path, line, col, TPP_LONE_CR_MSG);
		}
	}
	*out = buf;
	return TPP_OK;
}

/* Append one point, checking order and count; errors at line:col (those
 * about its time at line:time_col). */
static int add_point(const char *path, int line, int col, int time_col,
		     struct tpp_cal_coll *t, double bytes, double med_s,
		     double p10_s, double p90_s, struct tpp_err *err)
{
	if (!(bytes > 0) || !isfinite(bytes))
		return tpp_err_set(err, TPP_E_INPUT, path, line, col,
				   "size must be a positive number of bytes");
	if (!(med_s > 0) || !(p10_s > 0) || !(p90_s > 0) ||
	    !isfinite(med_s) || !isfinite(p10_s) || !isfinite(p90_s))
		return tpp_err_set(err, TPP_E_INPUT, path, line, time_col,
				   "time must be a positive number (a measured collective takes time)");
	if (p90_s > TPP_CAL_MAX_TIME_S)
		return tpp_err_set(err, TPP_E_INPUT, path, line, time_col,
				   "time %.3g s is over %g s: not a measured collective",
				   p90_s, TPP_CAL_MAX_TIME_S);
	if (!(bytes / p10_s <= TPP_CAL_MAX_ALGBW_Bps))
		return tpp_err_set(err, TPP_E_INPUT, path, line, time_col,
				   "%.15g bytes in %.3g s is %.3g GB/s, faster than any interconnect "
				   "(at most %g GB/s): a misread time?",
				   bytes, p10_s, bytes / p10_s / TPP_GB,
				   TPP_CAL_MAX_ALGBW_Bps / TPP_GB);
	if (p10_s > med_s || med_s > p90_s)
		return tpp_err_set(err, TPP_E_INPUT, path, line, time_col,
				   "times out of order: p10 %.3g s, median %.3g s, p90 %.3g s",
				   p10_s, med_s, p90_s);
	if (t->npoints && bytes <= t->pts[t->npoints - 1].bytes)
		return tpp_err_set(err, TPP_E_INPUT, path, line, col,
				   "size %.0f is not larger than the previous row's %.0f "
				   "(one sweep of one data type per file: split -N / -d all runs)",
				   bytes, t->pts[t->npoints - 1].bytes);
	if (t->npoints == TPP_CAL_MAX_POINTS)
		return tpp_err_set(err, TPP_E_INPUT, path, line, col,
				   "too many sizes (at most %d per table)",
				   TPP_CAL_MAX_POINTS);
	t->pts[t->npoints].bytes = bytes;
	t->pts[t->npoints].median_s = med_s;
	t->pts[t->npoints].p10_s = p10_s;
	t->pts[t->npoints].p90_s = p90_s;
	t->npoints++;
	return TPP_OK;
}

/* ---- text table ----------------------------------------------------------- */

struct tok {
	const char *s;
	int len, col; /* col 1-based */
};

/* Split a line (NUL-terminated) on blanks; at most max tokens. */
static int tokenize(const char *line, struct tok *t, int max)
{
	int n = 0;
	const char *p = line;
	while (*p && n < max) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p)
			break;
		t[n].s = p;
		t[n].col = (int)(p - line) + 1;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		t[n].len = (int)(p - t[n].s);
		n++;
	}
	return n;
}

/* Token as a number (the whole token); 0 if it is not one. */
static int tok_num(const struct tok *t, double *x)
{
	char buf[64], *end;
	if (t->len <= 0 || t->len >= (int)sizeof(buf))
		return 0;
	memcpy(buf, t->s, (size_t)t->len);
	buf[t->len] = '\0';
	if (!isdigit((unsigned char)buf[0]) && buf[0] != '-' && buf[0] != '+' &&
	    buf[0] != '.')
		return 0;
	/* decimal only: nccl-tests prints no hex (strtod would read 0x16) */
	if (strpbrk(buf, "xXpP"))
		return 0;
	errno = 0;
	*x = strtod(buf, &end);
	return *end == '\0' && errno != ERANGE && isfinite(*x);
}

/* Token is an integer (digits with an optional sign). */
static int tok_int(const struct tok *t)
{
	int i = (t->s[0] == '-' || t->s[0] == '+') ? 1 : 0;
	if (i >= t->len)
		return 0;
	for (; i < t->len; i++)
		if (!isdigit((unsigned char)t->s[i]))
			return 0;
	return 1;
}

/* Keep the NCCL error the run recorded, at line:col: blanks (spaces,
 * tabs, CR) trimmed, nothing kept when that leaves nothing; cut at a
 * character boundary with "..." when longer than the buffer; bytes that
 * are not UTF-8 and control characters (terminal escapes, C1, bidi
 * overrides) shown as '?', as it is printed. */
static void note_error(struct file_meta *m, const char *msg, size_t len, int line, int col)
{
	char *e = m->nccl_error;
	size_t n, cap = sizeof(m->nccl_error) - 4, i;
	while (len && (*msg == ' ' || *msg == '\t' || *msg == '\r')) {
		msg++;
		len--;
	}
	while (len && (msg[len - 1] == ' ' || msg[len - 1] == '\t' || msg[len - 1] == '\r'))
		len--;
	if (!len || m->nccl_error_line)
		return;
	n = len < cap ? len : cap;
	memcpy(e, msg, n);
	e[n] = '\0';
	if (n < len) {
		tpp_utf8_trim(e);
		strcat(e, "...");
	}
	for (i = 0; e[i];) {
		int k = tpp_utf8_len(e + i);
		if (k == 0) {
			e[i++] = '?';
			continue;
		}
		i += (size_t)k;
	}
	tpp_printable(e, 0);
	m->nccl_error_line = line;
	m->nccl_error_col = col;
}

/* Whether s holds `w` as a word (blanks or the ends around it). */
static int has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	const char *p;
	for (p = strstr(s, w); p; p = strstr(p + 1, w))
		if ((p == s || p[-1] == ' ' || p[-1] == '\t') &&
		    (!p[n] || p[n] == ' ' || p[n] == '\t' || p[n] == '\r' || p[n] == '\n'))
			return 1;
	return 0;
}

/* Header comment lines (`line`, line `lineno` of the file, starting at
 * column `col0` + 1): environment, the test's name and the ranks. */
static void text_comment(const char *line, int lineno, int col0,
			 struct file_meta *m)
{
	const char *p;
	char host[128], dev[TPP_CAL_STR];
	if ((p = strstr(line, "nccl-tests version "))) {
		const char *q;
		sscanf(p + 19, "%63s", m->nccl_tests);
		if (!m->nccl[0] && (q = strstr(p, "nccl-library="))) {
			long code = strtol(q + 13, NULL, 10);
			if (code > 0)
				nccl_code_str(code, m->nccl, sizeof(m->nccl));
		}
	}
	/* the table header: "... busbw #wrong ..." or "... busbw error ..." */
	if ((p = strstr(line, "busbw")) && !m->check_form && strstr(line, "size") &&
	    strstr(line, "count") && strstr(line, "algbw")) {
		if (strstr(p, "#wrong"))
			m->check_form = 1;
		else if (strstr(p, " error"))
			m->check_form = 2;
	}
	if ((p = strstr(line, "Collective test starting:")))
		meta_op(m, p + 25, lineno, (int)(p + 25 - line) + 1);
	if ((p = strstr(line, "Avg bus bandwidth"))) {
		const char *colon = strchr(p, ':');
		m->summary = 1;
		/* "# Avg bus bandwidth    : 180.2 FAILED" (NCCL_TESTS_MIN_BW);
		 * the figure when it is a plain decimal number */
		if (colon && has_word(colon + 1, "FAILED") && !m->min_bw_line) {
			const char *q = colon + 1;
			char *end;
			while (*q == ' ' || *q == '\t')
				q++;
			if (isdigit((unsigned char)*q) && !(q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))) {
				m->min_bw_failed = strtod(q, &end);
				m->min_bw_known = isfinite(m->min_bw_failed) &&
						  (*end == ' ' || *end == '\t');
			}
			m->min_bw_line = lineno;
			m->min_bw_col = col0 + (int)(p - line) + 1;
		}
	}
	/* "# error: <ncclGetLastError>" (nccl-tests 2.15 and later) */
	if ((p = strstr(line, "# error:")))
		note_error(m, p + 8, strlen(p + 8), lineno, col0 + (int)(p - line) + 1);
	/* #  Rank  0 Group  0 Pid  1234 on  host device  0 [0x07] NVIDIA ...
	 * (versions before NCCL_TESTS_SPLIT print no Group: one group) */
	if ((p = strstr(line, "Rank ")) && strstr(p, " on ") &&
	    strstr(p, " device ")) {
		const char *on = strstr(p, " on ");
		const char *br = strchr(strstr(p, " device "), ']');
		int rank, group_id = 0;
		if (sscanf(p, "Rank %d Group %d", &rank, &group_id) != 2)
			group_id = 0;
		add_rank(m, group_id,
			 sscanf(on + 4, "%127s", host) == 1 ? host : NULL, lineno,
			 col0 + (int)(p - line) + 1);
		if (br && !m->device[0]) {
			size_t l;
			br++;
			while (*br == ' ')
				br++;
			tpp_strlcpy(dev, br, sizeof(dev));
			l = strlen(dev);
			while (l && (dev[l - 1] == ' ' || dev[l - 1] == '\r'))
				dev[--l] = '\0';
			tpp_strlcpy(m->device, dev, sizeof(m->device));
		}
	}
}

/*
 * The 4th column of a half (out of place, in place): nccl-tests since 2.11
 * print #wrong, a count of wrong elements ("%6g": 1.23457e+06 past a
 * million), or N/A without a check (-c 0); older nccl-tests and rccl-tests
 * print the largest error ("%5.0le", e.g. 5e-07), with a '*' appended when
 * the check failed.  The header says which (form: 1 #wrong, 2 error, 0
 * not seen: an integer is a count, and so is a value of 1 or more in
 * e-notation, as a largest error that big comes with its '*').  A count
 * above 0 or a '*' refuses the row: its time is of a broken run.
 */
static int check_column(const char *path, int lineno, const struct tok *t, int in_place,
			int form, struct tpp_err *err)
{
	const char *half = in_place ? " (in place)" : "";
	double v;
	if (t->len > 1 && t->s[t->len - 1] == '*')
		return tpp_err_set(err, TPP_E_INPUT, path, lineno, t->col,
				   "nccl-tests marked this size's check as failed (largest error %.*s)%s",
				   t->len - 1, t->s, half);
	if (t->len == 3 && !memcmp(t->s, "N/A", 3))
		return TPP_OK;
	if (!tok_num(t, &v) || v < 0 ||
	    (form != 2 && !tok_int(t) && !memchr(t->s, 'e', (size_t)t->len) &&
	     !memchr(t->s, 'E', (size_t)t->len)))
		return tpp_err_set(err, TPP_E_INPUT, path, lineno, t->col,
				   "expected #wrong (a count of elements, or N/A) or the largest error "
				   "(as 5e-07) after busbw, got '%.*s'%s",
				   t->len, t->s, half);
	if (v > 0 && (form == 1 || (form == 0 && (tok_int(t) || v >= 1))))
		return tpp_err_set(err, TPP_E_INPUT, path, lineno, t->col,
				   "nccl-tests reported %.0f wrong elements at this size%s", v, half);
	return TPP_OK; /* no wrong element, or an error within the type's tolerance */
}

/*
 * One data row.  Columns: size count type [redop] [root] time algbw busbw
 * #wrong ...  The redop is any non-numeric token after the type; a root is
 * an integer (negative, or followed by a whole number of 4-column groups).
 */
static int text_row(const char *path, int lineno, const char *line,
		    struct tok *tk, int nt, struct tpp_cal_coll *t, int form,
		    struct tpp_err *err)
{
	double size, x, time_us, algbw, busbw;
	int i, rc;

	if (!tok_num(&tk[0], &size) || !tok_int(&tk[0]))
		return tpp_err_set(err, TPP_E_INPUT, path, lineno, tk[0].col,
				   "expected the size in bytes");
	if (nt < 2 || !tok_int(&tk[1]))
		return tpp_err_set(err, TPP_E_INPUT, path, lineno,
				   nt < 2 ? (int)strlen(line) + 1 : tk[1].col,
				   "expected the element count after the size");
	if (nt < 3 || tok_num(&tk[2], &x))
		return tpp_err_set(err, TPP_E_INPUT, path, lineno,
				   nt < 3 ? (int)strlen(line) + 1 : tk[2].col,
				   "expected the data type (float, bfloat16, ...) after the count");
	i = 3;
	while (i < nt && !tok_num(&tk[i], &x))
		i++; /* redop ("sum", "none", ...) */
	if (i < nt && tok_int(&tk[i]) &&
	    (tk[i].s[0] == '-' || (nt - i) % 4 == 1))
		i++; /* root */
	if (nt - i < 3)
		return tpp_err_set(err, TPP_E_INPUT, path, lineno,
				   i < nt ? tk[i].col : (int)strlen(line) + 1,
				   "expected time (us), algbw and busbw (GB/s) columns");
	if (!tok_num(&tk[i], &time_us))
		return tpp_err_set(err, TPP_E_INPUT, path, lineno, tk[i].col,
				   "expected the out-of-place time in microseconds, got '%.*s'",
				   tk[i].len, tk[i].s);
	if (!tok_num(&tk[i + 1], &algbw) || !tok_num(&tk[i + 2], &busbw))
		return tpp_err_set(err, TPP_E_INPUT, path, lineno,
				   tk[tok_num(&tk[i + 1], &x) ? i + 2 : i + 1].col,
				   "expected algbw and busbw in GB/s after the time");
	if (time_us < 0)
		return tpp_err_set(err, TPP_E_INPUT, path, lineno, tk[i].col,
				   "negative time");
	/*
	 * algbw and busbw do not enter the fit (the time does), but a
	 * row nccl-tests could not have printed is no measurement: neither
	 * is negative, and busbw is algbw times the collective's factor,
	 * at most 2 (n-1)/n (all-reduce), algbw's printed rounding allowed.
	 */
	if (algbw < 0 || busbw < 0)
		return tpp_err_set(err, TPP_E_INPUT, path, lineno, tk[algbw < 0 ? i + 1 : i + 2].col,
				   "negative %s", algbw < 0 ? "algbw" : "busbw");
	if (busbw > 2.0 * (algbw + 0.005) + 0.005)
		return tpp_err_set(err, TPP_E_INPUT, path, lineno, tk[i + 2].col,
				   "busbw %.6g GB/s is more than twice algbw %.6g GB/s: "
				   "columns not in nccl-tests order?",
				   busbw, algbw);
	/* A misread column shows as a size / time that is not the algbw. */
	if (algbw >= 1.0 && time_us > 0) {
		double implied = size / (time_us / 1e6) / TPP_GB;
		if (fabs(implied / algbw - 1) > 0.25)
			return tpp_err_set(err, TPP_E_INPUT, path, lineno, tk[i].col,
					   "size / time = %.3g GB/s but algbw = %.3g GB/s: "
					   "columns not in nccl-tests order?",
					   implied, algbw);
	}
	/* each half's check column; the in-place half's is the same run,
	 * equally wrong */
	if (nt - i >= 4 && (rc = check_column(path, lineno, &tk[i + 3], 0, form, err)))
		return rc;
	if (nt - i >= 8 && (rc = check_column(path, lineno, &tk[i + 7], 1, form, err)))
		return rc;
	if (size == 0)
		return TPP_OK; /* -b 0: nothing to fit */
	return add_point(path, lineno, tk[0].col, tk[i].col, t, size, time_us / 1e6,
			 time_us / 1e6, time_us / 1e6, err);
}

static int parse_text(const char *path, char *text, struct tpp_cal_coll *t,
		      struct file_meta *m, struct tpp_err *err)
{
	char *line = text, *next;
	int lineno = 0, rc;

	for (; line; line = next) {
		struct tok tk[48];
		const char *p, *q;
		int nt;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#') {
			/* nccl-tests' verdict on the whole run:
			 * "# Out of bounds values : 10 FAILED" */
			if (strstr(p, "Out of bounds values") && strstr(p, "FAILED"))
				return tpp_err_set(err, TPP_E_INPUT, path, lineno,
						   (int)(p - line) + 1,
						   "nccl-tests reported out-of-bounds values: the run failed its check");
			/* one run per file: a job log holding two (all_reduce
			 * then all_gather) would be one table under the last
			 * name, its ranks counted twice */
			const char *start = strstr(p, "Collective test starting:");
			if (start && m->started)
				return tpp_err_set(err, TPP_E_INPUT, path, lineno,
						   (int)(start - line) + 1,
						   "a second nccl-tests run in the file (the first "
						   "starts on line %d): import one run per file",
						   m->started);
			if (start)
				m->started = lineno;
			text_comment(p, lineno, (int)(p - line), m);
			continue;
		}
		/* NCCL_DEBUG=INFO output: "host:pid:tid [0] NCCL INFO NCCL version 2.18.3+cuda12.2" */
		if ((q = strstr(p, "NCCL version "))) {
			char v[64];
			if (sscanf(q + 13, "%63s", v) == 1)
				tpp_strlcpy(m->nccl, v, sizeof(m->nccl));
			continue;
		}
		if (!isdigit((unsigned char)*p) &&
		    !((*p == '-' || *p == '+' || *p == '.') && isdigit((unsigned char)p[1])))
			continue; /* blank, warnings, other tools' lines */
		nt = tokenize(line, tk, (int)TPP_ARRAY_LEN(tk));
		{
			/* a row -- anything in the size column, then a
			 * number, the element count -- whose size is no
			 * plain whole number of bytes (-64, +64, 64.5,
			 * 0x40, 64abc, 1e-308) is a misread, not a line to
			 * skip */
			double x;
			if (nt >= 2 && tok_num(&tk[1], &x) &&
			    !(tok_int(&tk[0]) && isdigit((unsigned char)tk[0].s[0])))
				return tpp_err_set(err, TPP_E_INPUT, path, lineno, tk[0].col,
						   "the size must be a whole number of bytes");
		}
		if (!tok_int(&tk[0]) || !isdigit((unsigned char)tk[0].s[0]))
			continue; /* "10-0-0-7:123:123 [0] NCCL INFO ...", not a row */
		if ((rc = text_row(path, lineno, line, tk, nt, t, m->check_form, err)))
			return rc;
	}
	return TPP_OK;
}

/* ---- JSON ----------------------------------------------------------------- */

/*
 * The JSON is read with libyaml (YAML 1.2 is a superset of JSON, and
 * libyaml reads nccl-tests' -J output as a flow mapping): nodes keep their
 * line:column for messages, and tpp_yaml's limits (file size, nesting)
 * apply; tpp_yj_* tell the JSON types by the scalar style.
 */
struct jdoc {
	struct tpp_ydoc d;
	struct tpp_err *err;
};

/* nccl-tests' "false" (it writes booleans as strings), or a JSON false. */
static int json_false(const yaml_node_t *v)
{
	return v && v->type == YAML_SCALAR_NODE &&
	       !strcmp((const char *)v->data.scalar.value, "false");
}

/* A number member (a numeric string such as "nan" is rejected). */
static int jnum(struct jdoc *j, yaml_node_t *o, const char *key, double *x,
		int required, int *found)
{
	yaml_node_t *v = tpp_y_map_get(&j->d, o, key);
	*found = 0;
	if (tpp_yj_null(v)) {
		if (!required)
			return TPP_OK;
		return tpp_y_err(&j->d, o, j->err, "JSON: result has no \"%s\"", key);
	}
	if (!tpp_yj_num(v, x))
		return tpp_y_err(&j->d, v, j->err, "JSON: \"%s\" must be a finite number",
				 key);
	*found = 1;
	return TPP_OK;
}

/* The ranks listed in "devices" (each with its hostname, device_info and
 * NCCL_TESTS_SPLIT "group"), `per` ranks for each entry: nccl-tests writes
 * one entry per process, parsed from the first of its nthreads x ngpus
 * rank lines (writeDeviceReport in src/util.cu); returns the entries. */
static int json_devices(struct jdoc *j, yaml_node_t *arr, struct file_meta *m,
			int per)
{
	int d, n;
	struct tpp_err ignore;
	if (!arr || arr->type != YAML_SEQUENCE_NODE ||
	    tpp_y_seq(&j->d, arr, "devices", &n, &ignore))
		return 0;
	for (d = 0; d < n; d++) {
		yaml_node_t *dev = tpp_y_seq_item(&j->d, arr, d);
		const char *h = tpp_yj_str(tpp_y_map_get(&j->d, dev, "hostname"));
		const char *info = tpp_yj_str(tpp_y_map_get(&j->d, dev, "device_info"));
		double g;
		int group_id = 0;
		if (tpp_yj_num(tpp_y_map_get(&j->d, dev, "group"), &g) &&
		    g >= 0 && g < 1e9)
			group_id = (int)g;
		for (int k = 0; k < per; k++)
			add_rank(m, group_id, h, (int)arr->start_mark.line + 1,
				 (int)arr->start_mark.column + 1);
		if (info && !m->device[0])
			tpp_strlcpy(m->device, info, sizeof(m->device));
	}
	return n;
}

/* One element of results[]. */
static int json_result(struct jdoc *j, yaml_node_t *r, struct tpp_cal_coll *t)
{
	yaml_node_t *oop, *per, *src;
	int found, rc, in_place, gpu_time;
	double size, time_us = 0, med, lo, hi, wrong = 0;

	if (r->type != YAML_MAPPING_NODE)
		return tpp_y_err(&j->d, r, j->err, "JSON: results[] items must be objects");
	if ((rc = jnum(j, r, "size", &size, 1, &found)))
		return rc;
	/* 0 is nccl-tests -b 0, skipped below as in the text form */
	if (!(size >= 0) || size != floor(size))
		return tpp_y_err(&j->d, tpp_y_map_get(&j->d, r, "size"), j->err,
				 "JSON: \"size\" must be a whole number of bytes");
	/* The out-of-place half; only the in-place one in trace replays;
	 * a flat {"time": ...} from other writers. */
	oop = tpp_y_map_get(&j->d, r, "out_of_place");
	in_place = !oop || oop->type != YAML_MAPPING_NODE;
	if (in_place)
		oop = tpp_y_map_get(&j->d, r, "in_place");
	src = oop && oop->type == YAML_MAPPING_NODE ? oop : r;
	in_place = in_place && src != r;
	if ((rc = jnum(j, src, "time", &time_us, 0, &gpu_time)))
		return rc;
	if (!gpu_time && (rc = jnum(j, src, "cpu_time", &time_us, 1, &found)))
		return rc;
	/* checked as the text form checks it, though the per-iteration
	 * statistics below may stand in for it */
	if (time_us < 0)
		return tpp_y_err(&j->d, src, j->err, "JSON: negative time %g us at size %.0f",
				 time_us, size);
	/*
	 * nccl-tests computes "alg_bw" from the same time (size / time, GB/s
	 * of 1e9 bytes) and prints both to 6 decimals, so they agree to
	 * 1e-4 wherever alg_bw >= 0.01: a row where they do not was edited or
	 * mixed from two runs.  ("cpu_time", -C, is not the time alg_bw
	 * comes from.)
	 */
	if (size > 0) {
		double algbw;
		if ((rc = jnum(j, src, "alg_bw", &algbw, 0, &found)))
			return rc;
		if (found && algbw < 0)
			return tpp_y_err(&j->d, tpp_y_map_get(&j->d, src, "alg_bw"), j->err,
					 "JSON: negative \"alg_bw\" %g GB/s at size %.0f", algbw, size);
		if (found && algbw >= 0.01 && gpu_time) {
			double implied = time_us > 0 ? size / (time_us / 1e6) / TPP_GB : INFINITY;
			if (!(fabs(implied / algbw - 1) <= 1e-3))
				return tpp_y_err(&j->d, tpp_y_map_get(&j->d, src, "alg_bw"), j->err,
						 "JSON: size / time = %.6g GB/s but \"alg_bw\" = %.6g GB/s "
						 "at size %.0f: the row was edited or mixed from two runs",
						 implied, algbw, size);
		}
	}
	/* nccl-tests' check: the half the times come from, then the row's
	 * other half (the same run, equally wrong) */
	{
		yaml_node_t *half[3] = {src, tpp_y_map_get(&j->d, r, "out_of_place"),
					tpp_y_map_get(&j->d, r, "in_place")};
		int k;
		for (k = 0; k < 3; k++) {
			if (k && (!half[k] || half[k]->type != YAML_MAPPING_NODE || half[k] == src))
				continue;
			if ((rc = jnum(j, half[k], "nwrong", &wrong, 0, &found)))
				return rc;
			if (found && (wrong < 0 || wrong != floor(wrong)))
				return tpp_y_err(&j->d, half[k], j->err,
						 "JSON: \"nwrong\" %g is not a count of elements", wrong);
			if (found && wrong > 0)
				return tpp_y_err(&j->d, half[k], j->err,
						 "JSON: nccl-tests reported %.0f wrong elements at size %.0f",
						 wrong, size);
		}
	}
	med = lo = hi = time_us;
	per = tpp_y_map_get(&j->d, r, in_place ? "in_place_per_iter" : "out_of_place_per_iter");
	if (!per)
		per = r; /* flat p50_us etc. */
	if ((rc = jnum(j, per, "p50_us", &med, 0, &found)))
		return rc;
	if (found) {
		if ((rc = jnum(j, per, "min_us", &lo, 0, &found)))
			return rc;
		if (!found)
			lo = med;
		if ((rc = jnum(j, per, "p95_us", &hi, 0, &found)))
			return rc;
		if (!found && (rc = jnum(j, per, "p99_us", &hi, 0, &found)))
			return rc;
		if (!found)
			hi = med;
	}
	if (size == 0)
		return TPP_OK;
	return add_point(j->d.path, (int)r->start_mark.line + 1,
			 (int)r->start_mark.column + 1, (int)r->start_mark.column + 1, t, size, med / 1e6,
			 lo / 1e6, hi / 1e6, j->err);
}

static int parse_json(const char *path, const char *text, struct tpp_cal_coll *t,
		      struct file_meta *m, struct tpp_err *err)
{
	struct jdoc j;
	yaml_node_t *root, *res, *v;
	int i, n, rc;
	double x;
	const char *s;

	memset(&j, 0, sizeof(j));
	j.err = err;
	if ((rc = tpp_ydoc_load_json_string(&j.d, path, text, err)))
		return rc; /* syntax errors located by libyaml */
	root = tpp_ydoc_root(&j.d);
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = tpp_err_set(err, TPP_E_INPUT, path, 1, 1,
				 "JSON: expected an object (nccl-tests -J output)");
		goto out;
	}
	/* The collective: an explicit key, else the program in args[0],
	 * else a result's experiment name. */
	if ((s = tpp_yj_str(tpp_y_map_get(&j.d, root, "collective"))) ||
	    (s = tpp_yj_str(tpp_y_map_get(&j.d, root, "test"))) ||
	    (s = tpp_yj_str(tpp_y_map_get(&j.d, root, "test_name"))))
		meta_op(m, s, 0, 0);
	v = tpp_y_map_get(&j.d, root, "args");
	if (m->op < 0 && v && v->type == YAML_SEQUENCE_NODE &&
	    !tpp_y_seq(&j.d, v, "args", &n, err) && n > 0 &&
	    (s = tpp_yj_str(tpp_y_seq_item(&j.d, v, 0))))
		meta_op(m, base_name(s), 0, 0);
	v = tpp_y_map_get(&j.d, root, "nccl_version");
	if (tpp_yj_num(v, &x) && x > 0 && x < 1e9) /* a version code */
		nccl_code_str((long)x, m->nccl, sizeof(m->nccl));
	else if ((s = tpp_yj_str(v)))
		tpp_strlcpy(m->nccl, s, sizeof(m->nccl));
	/* one list of ranks: at the top, else (nccl-tests) in "config", one
	 * entry per process of config's nthreads x ngpus ranks */
	{
		yaml_node_t *cfg = tpp_y_map_get(&j.d, root, "config");
		double nt = 1, ng = 1;
		int per = 1;
		if (cfg && tpp_yj_num(tpp_y_map_get(&j.d, cfg, "nthreads"), &nt) &&
		    tpp_yj_num(tpp_y_map_get(&j.d, cfg, "ngpus"), &ng) &&
		    nt >= 1 && ng >= 1 && nt * ng <= 4096)
			per = (int)nt * (int)ng;
		if (!json_devices(&j, tpp_y_map_get(&j.d, root, "devices"), m, 1))
			json_devices(&j, tpp_y_map_get(&j.d, cfg, "devices"), m, per);
	}
	if ((s = tpp_yj_str(tpp_y_map_get(&j.d, root, "hostname"))))
		add_host_to(m->hosts, sizeof(m->hosts), &m->hostset, s);

	/* nccl-tests' verdict on the whole run: {"count": N, "okay": "false"} */
	{
		yaml_node_t *oob = tpp_y_map_get(&j.d, root, "out_of_bounds");
		double cnt = 0;
		if (oob && (json_false(tpp_y_map_get(&j.d, oob, "okay")) ||
			    (tpp_yj_num(tpp_y_map_get(&j.d, oob, "count"), &cnt) && cnt > 0))) {
			rc = tpp_y_err(&j.d, oob, err,
				       "JSON: nccl-tests reported out-of-bounds values: the run failed its check");
			goto out;
		}
	}
	/* what it recorded that does not void the timings: the last NCCL
	 * error ("errors": [""] when there was none) and its
	 * NCCL_TESTS_MIN_BW verdict ({"bandwidth": x, "okay": "false"}) */
	v = tpp_y_map_get(&j.d, root, "errors");
	if (v && v->type == YAML_SEQUENCE_NODE && !tpp_y_seq(&j.d, v, "errors", &n, err)) {
		for (i = 0; i < n; i++) {
			yaml_node_t *e = tpp_y_seq_item(&j.d, v, i);
			if ((s = tpp_yj_str(e)))
				note_error(m, s, e->data.scalar.length, (int)e->start_mark.line + 1,
					   (int)e->start_mark.column + 1);
		}
	} else if (v && (s = tpp_yj_str(v))) { /* one string, not a list */
		note_error(m, s, v->data.scalar.length, (int)v->start_mark.line + 1,
			   (int)v->start_mark.column + 1);
	}
	v = tpp_y_map_get(&j.d, root, "average_bus_bandwidth");
	if (v && v->type == YAML_MAPPING_NODE && json_false(tpp_y_map_get(&j.d, v, "okay"))) {
		m->min_bw_known = tpp_yj_num(tpp_y_map_get(&j.d, v, "bandwidth"), &m->min_bw_failed);
		m->min_bw_line = (int)v->start_mark.line + 1;
		m->min_bw_col = (int)v->start_mark.column + 1;
	}
	res = tpp_y_map_get(&j.d, root, "results");
	if (!res || res->type != YAML_SEQUENCE_NODE) {
		if (res)
			rc = tpp_y_err(&j.d, res, err,
				       "JSON: expected \"results\": [...] (nccl-tests -J output)");
		else
			rc = tpp_err_set(err, TPP_E_INPUT, path, 1, 1,
					 "JSON: expected \"results\": [...] (nccl-tests -J output)");
		goto out;
	}
	if ((rc = tpp_y_seq(&j.d, res, "results", &n, err)))
		goto out;
	for (i = 0; i < n; i++) {
		yaml_node_t *r = tpp_y_seq_item(&j.d, res, i);
		if (m->op < 0 && (s = tpp_yj_str(tpp_y_map_get(&j.d, r, "experiment_name"))) && s[0])
			meta_op(m, s, 0, 0);
		if ((rc = json_result(&j, r, t)))
			goto out;
	}
	rc = TPP_OK;
out:
	tpp_ydoc_free(&j.d);
	return rc;
}

/* ---- entry point ---------------------------------------------------------- */

/* Append sep + s (or s) to dst if it fits and is not there already. */
static void append_list(char *dst, size_t size, const char *sep, const char *s)
{
	size_t used = strlen(dst);
	if (!s[0] || strstr(dst, s))
		return;
	if (used + strlen(s) + strlen(sep) + 1 > size)
		return;
	snprintf(dst + used, size - used, "%s%s", used ? sep : "", s);
}

/* "all_reduce, all_gather, ...": the collectives tpplan imports, for
 * messages (buf of size bytes). */
static const char *coll_list(char *buf, size_t size)
{
	int i;
	buf[0] = '\0';
	for (i = 0; i < TPP_COLL__COUNT; i++)
		append_list(buf, size, ", ", tpp_coll_names[i]);
	return buf;
}

int tpp_cal_import(const char *path, enum tpp_coll op, int group, int tier,
		   struct tpp_calibration *cal, struct tpp_err *err)
{
	return tpp_cal_import_warn(path, op, group, tier, cal, NULL, err);
}

int tpp_cal_import_warn(const char *path, enum tpp_coll op, int group, int tier,
			struct tpp_calibration *cal, FILE *warn, struct tpp_err *err)
{
	struct tpp_cal_coll *t;
	struct file_meta m;
	char *text = NULL, src[TPP_CAL_STR];
	const char *p;
	int rc, file_op;

	TPP_ASSERT(path && cal);
	TPP_ASSERT(op >= 0 && op <= TPP_COLL__COUNT);
	if (tier < -1 || tier >= TPP_MAX_TIERS)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "import %s: --tier %d out of range [0, %d]", path,
				   tier, TPP_MAX_TIERS - 1);
	if (cal->ncoll >= TPP_CAL_MAX_COLL)
		return tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
				   "calibration already holds %d tables (the most)",
				   TPP_CAL_MAX_COLL);
	t = calloc(1, sizeof(*t));
	if (!t)
		return tpp_err_set(err, TPP_E_SYSTEM, path, 0, 0, "out of memory");
	memset(&m, 0, sizeof(m));
	m.op = -1;
	m.group_id = -1;
	if ((rc = read_file(path, &text, err)))
		goto out;
	p = text;
	if (!strncmp(p, "\xEF\xBB\xBF", 3))
		p += 3; /* a UTF-8 byte-order mark (an editor's): JSON or text after it */
	for (; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'; p++)
		;
	rc = *p == '{' ? parse_json(path, text, t, &m, err)
		       : parse_text(path, text, t, &m, err);
	if (rc)
		goto out;
	if (!t->npoints) {
		rc = tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
				 "no result rows found: not nccl-tests output?");
		goto out;
	}

	/* The collective: the file's word, else the argument, else the name. */
	file_op = m.op;
	if (file_op < 0 && m.op_other[0]) {
		char names[128];
		rc = tpp_err_set(err, TPP_E_INPUT, path, m.op_other_line,
				 m.op_other_line ? m.op_col : 0,
				 "the file holds %s results, a collective tpplan does not "
				 "model (it imports %s)", m.op_other, coll_list(names, sizeof(names)));
		goto out;
	}
	if (file_op >= 0 && op != TPP_COLL__COUNT && file_op != (int)op) {
		rc = tpp_err_set(err, TPP_E_INPUT, path, m.op_line, m.op_col,
				 "the file holds %s results, not %s (--op)",
				 tpp_coll_names[file_op], tpp_coll_names[op]);
		goto out;
	}
	if (file_op < 0)
		file_op = op != TPP_COLL__COUNT ? (int)op : op_from_name(base_name(path));
	if (file_op < 0) {
		char names[128];
		rc = tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
				 "cannot tell which collective this is (no \"Collective "
				 "test starting\" line, and the file name names none): "
				 "give --op NAME (one of %s), or name the file after "
				 "the test (all_reduce_perf.txt, ...)", coll_list(names, sizeof(names)));
		goto out;
	}
	/* The group: where the file lists its ranks, --group must agree */
	if (group > 0 && m.group_ranks > 0 && group != m.group_ranks) {
		rc = tpp_err_set(err, TPP_E_INPUT, path, m.ranks_line, m.ranks_col,
				 "--group %d, but the file lists %d ranks%s: give "
				 "--group %d (busbw is computed for the group size)",
				 group, m.group_ranks,
				 m.group_ranks != m.ranks ? " in its first NCCL_TESTS_SPLIT group" : "",
				 m.group_ranks);
		goto out;
	}
	if (group <= 0)
		group = m.group_ranks;
	if (group <= 0) {
		rc = tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
				 "group size unknown: the file lists no ranks; give --group N");
		goto out;
	}
	/*
	 * The tier: a group whose ranks are on several hosts crosses nodes,
	 * which tier 0 (NVLink in a node) does not; only where one NVLink
	 * domain spans hosts (GB200 NVL72) is that tier 0, and then it is
	 * said with --tier 0.
	 */
	if (tier < 0 && (m.group_hostset.n > 1 || m.group_hostset.n < 0)) {
		char nh[32];
		if (m.group_hostset.n > 0)
			snprintf(nh, sizeof(nh), "%d", m.group_hostset.n);
		else
			snprintf(nh, sizeof(nh), "over %d", TPP_IMPORT_MAX_HOSTS);
		rc = tpp_err_set(err, TPP_E_INPUT, path, m.ranks_line, m.ranks_col,
				 "the %d ranks of the group are on %s hosts (%s): a "
				 "measurement across nodes, not inside the tier 0 "
				 "domain; give --tier 1 (or the tier that joins "
				 "these nodes), or --tier 0 where one NVLink domain "
				 "spans these hosts (GB200 NVL72)",
				 m.group_ranks, nh, m.group_hosts);
		goto out;
	}
	/* the converse, as the calibration loader checks it: a group the
	 * file puts on one host did not cross nodes */
	if (tier >= 1 && m.group_hostset.n == 1) {
		rc = tpp_err_set(err, TPP_E_USAGE, path, m.ranks_line, m.ranks_col,
				 "--tier %d (across nodes), but the %d ranks of the group "
				 "are all on one host (%s): a measurement inside a node; "
				 "give --tier 0 or leave it out",
				 tier, m.group_ranks, m.group_hosts);
		goto out;
	}
	if (tier < 0)
		tier = 0;

	t->op = (enum tpp_coll)file_op;
	t->tier = tier;
	t->group = group;
	/* NCCL_TESTS_SPLIT: every group ran the collective at once (all
	 * rails together, as calibrate's rail tables) */
	t->concurrent = 1;
	if (m.group_ranks > 0 && m.ranks > m.group_ranks && m.ranks % m.group_ranks == 0)
		t->concurrent = m.ranks / m.group_ranks;
	cal->coll[cal->ncoll++] = *t;

	/* Environment: fill what the calibration does not have yet. */
	if (!cal->created_utc[0]) {
		time_t now = time(NULL);
		struct tm tm;
		if (gmtime_r(&now, &tm))
			strftime(cal->created_utc, sizeof(cal->created_utc),
				 "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	if (!cal->tpplan_version[0])
		tpp_strlcpy(cal->tpplan_version, tpp_version,
			    sizeof(cal->tpplan_version));
	if (!cal->backend[0])
		tpp_strlcpy(cal->backend, "import", sizeof(cal->backend));
	if (!cal->device[0])
		tpp_strlcpy(cal->device, m.device, sizeof(cal->device));
	if (!cal->nccl[0])
		tpp_strlcpy(cal->nccl, m.nccl, sizeof(cal->nccl));
	append_list(cal->hosts, sizeof(cal->hosts), ",", m.hosts);
	if (!cal->ranks && m.ranks)
		cal->ranks = m.ranks;
	if (!cal->ranks_per_node && m.ranks && m.hostset.n > 0 &&
	    m.ranks % m.hostset.n == 0)
		cal->ranks_per_node = m.ranks / m.hostset.n;
	if (m.nccl_tests[0])
		snprintf(src, sizeof(src), "%.180s (nccl-tests %.40s)",
			 base_name(path), m.nccl_tests);
	else
		snprintf(src, sizeof(src), "%.200s (nccl-tests)", base_name(path));
	append_list(cal->source, sizeof(cal->source), "; ", src);
	tpp_cal_printable(cal);
	/* nccl-tests' text output ends with its summary; without it the run
	 * was cut short, and the sizes it did not reach are missing */
	if (warn && *p != '{' && !m.summary)
		fprintf(warn, "%s: warning: no \"# Avg bus bandwidth\" summary line: the nccl-tests run looks cut short; imported the sizes it reached\n",
			path);
	if (warn && m.nccl_error_line)
		fprintf(warn, "%s:%d:%d: warning: the run recorded an NCCL error: \"%s\"; "
			"imported the sizes it reported, which passed its checks, but check the run\n",
			path, m.nccl_error_line, m.nccl_error_col, m.nccl_error);
	if (warn && m.min_bw_line) {
		char bw[64] = "";
		if (m.min_bw_known)
			snprintf(bw, sizeof(bw), " %g GB/s", m.min_bw_failed);
		fprintf(warn, "%s:%d:%d: warning: the run failed its NCCL_TESTS_MIN_BW check "
			"(average bus bandwidth%s below 0.9 of the minimum set); imported as measured\n",
			path, m.min_bw_line, m.min_bw_col, bw);
	}
	rc = TPP_OK;
out:
	free(text);
	free(t);
	return rc;
}
