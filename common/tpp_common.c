/*
 * tpp_common.c - error records and assertion support (see tpp_common.h).
 */
#include "tpp_common.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef TPP_VERSION
#define TPP_VERSION "0.0.0"
#endif
const char tpp_version[] = TPP_VERSION;

void tpp_err_clear(struct tpp_err *e)
{
	if (!e)
		return;
	memset(e, 0, sizeof(*e));
}

/* The length of the UTF-8 sequence at u when it is one of the characters
 * tpp_has_control_char refuses beyond ASCII (C1 controls, U+2028-U+202E,
 * U+200E/F, U+061C, U+2066-U+2069); 0 otherwise. */
static int wide_control_len(const unsigned char *u)
{
	if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f)
		return 2;
	if (u[0] == 0xd8 && u[1] == 0x9c)
		return 2;
	if (u[0] == 0xe2 && u[1] == 0x80 &&
	    ((u[2] >= 0xa8 && u[2] <= 0xae) || u[2] == 0x8e || u[2] == 0x8f))
		return 3;
	if (u[0] == 0xe2 && u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)
		return 3;
	return 0;
}

int tpp_has_control_char(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	for (; *u; u++)
		/* in UTF-8: C1 controls (U+0080-U+009F, NEL among them), the
		 * line and paragraph separators U+2028/U+2029 and the bidi
		 * marks, embeddings, overrides and isolates (U+200E, U+200F,
		 * U+061C, U+202A-U+202E, U+2066-U+2069), which break or
		 * reorder a printed line */
		if (*u < 0x20 || *u == 0x7f || wide_control_len(u))
			return 1;
	return 0;
}

void tpp_printable(char *s, int keep_lines)
{
	unsigned char *u = (unsigned char *)s;
	while (*u) {
		int w = wide_control_len(u);
		if (w) { /* each byte of the character: the length stays */
			memset(u, '?', (size_t)w);
			u += w;
			continue;
		}
		if ((*u < 0x20 && !(keep_lines && (*u == '\n' || *u == '\t'))) || *u == 0x7f)
			*u = '?';
		u++;
	}
}

unsigned long long tpp_fnv1a(unsigned long long h, const void *p, size_t n)
{
	const unsigned char *c = p;
	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

void tpp_appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t used = strnlen(buf, size);
	va_list ap;
	if (used + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, size - used, fmt, ap);
	va_end(ap);
}

int tpp_name_distance(const char *a, const char *b)
{
	int row[64], i, j, la = (int)strlen(a), lb = (int)strlen(b);
	if (la >= 64 || lb >= 64)
		return 1000;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			int up = row[j];
			int sub = diag + (tolower((unsigned char)a[i - 1]) !=
					  tolower((unsigned char)b[j - 1]));
			int best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
			row[j] = sub < best ? sub : best;
			diag = up;
		}
	}
	return row[lb];
}

int tpp_name_near(const char *guess, const char *name)
{
	int d = tpp_name_distance(guess, name);
	return d == 0 || (d <= 2 && strlen(guess) > 3 && strlen(name) > 3) ? d : -1;
}

int tpp_not_regular(const char *path)
{
	struct stat st;
	return !stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

long long tpp_gcd(long long a, long long b)
{
	while (b) {
		long long t = a % b;
		a = b;
		b = t;
	}
	return a;
}

void tpp_strlcpy(char *dst, const char *src, size_t dst_size)
{
	size_t n;
	if (!dst_size)
		return;
	if (!src)
		src = "";
	n = strlen(src);
	if (n >= dst_size)
		n = dst_size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static size_t char_bytes(const char *p)
{
	int k = tpp_utf8_len(p);
	return k > 1 ? (size_t)k : 1;
}

/*
 * s (len bytes, NUL-terminated) into buf (n bytes) as it is shown: whole
 * when it fits, else a window from 40 characters before column col (as
 * put_shown counts them: a UTF-8 sequence one, any other byte one), cut
 * at character boundaries, with "..." where the line goes on; *shown_col
 * is col in what buf holds (a minified JSON's error at 1:4900 gets its
 * caret under that character, not under the end of the first 255 bytes).
 */
static void shown_window(const char *s, size_t len, int col, char *buf, size_t n,
			 int *shown_col)
{
	size_t start = 0, end, budget;
	int c = 1, first = 1;
	*shown_col = col;
	if (n < 16)
		return;
	if (len < n) {
		memcpy(buf, s, len + 1);
		return;
	}
	/* the window's first character: 40 before the column */
	while (start < len && c < col - 40) {
		start += char_bytes(s + start);
		c++;
	}
	first = c;
	budget = n - 1 - (start > 0 ? 3 : 0) - 3;
	end = start;
	while (end < len && end - start + char_bytes(s + end) <= budget)
		end += char_bytes(s + end);
	buf[0] = '\0';
	if (start > 0)
		strcat(buf, "...");
	strncat(buf, s + start, end - start);
	if (end < len)
		strcat(buf, "...");
	if (col > 0)
		*shown_col = col - (first - 1) + (start > 0 ? 3 : 0);
}

/* Fetch line `line` (1-based) of `file` into buf, as shown_window shows
 * it around column col; empty on failure. */
static void read_source_line(const char *file, int line, int col, char *buf, size_t n,
			     int *shown_col)
{
	FILE *f;
	char *tmp = NULL; /* the whole line: a minified JSON file is one */
	size_t cap = 0;
	int cur = 0;

	buf[0] = '\0';
	if (!file || line <= 0)
		return;
	f = fopen(file, "r");
	if (!f)
		return;
	while (getline(&tmp, &cap, f) >= 0) {
		if (++cur == line) {
			/* up to a NUL byte, as the readers stop there; the
			 * line's end, "\n" or a CRLF file's "\r\n" */
			size_t len = strlen(tmp);
			if (len && tmp[len - 1] == '\n')
				tmp[--len] = '\0';
			if (len && tmp[len - 1] == '\r')
				tmp[--len] = '\0';
			shown_window(tmp, len, col, buf, n, shown_col);
			break;
		}
	}
	free(tmp);
	fclose(f);
}

int tpp_err_set(struct tpp_err *e, int status, const char *file, int line,
		int col, const char *fmt, ...)
{
	va_list ap;
	if (!e)
		return status;
	tpp_err_clear(e);
	e->status = status;
	tpp_strlcpy(e->file, file, sizeof(e->file));
	e->line = line;
	e->col = col;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	read_source_line(file, line, col, e->src_line, sizeof(e->src_line), &e->src_col);
	return status;
}

/*
 * A source line as a terminal should show it: valid UTF-8 and tabs as
 * they are, any other control character or byte that is not UTF-8 (a
 * sequence cut at the buffer's end included) as '?', one per byte, so a
 * file cannot drive the terminal.  Then the caret under column col,
 * counted in characters as libyaml and the readers count it (a UTF-8
 * sequence is one column, each '?' one; tabs repeated so it lines up).
 */
static void put_shown(FILE *f, const char *s, int col)
{
	const char *p = s;
	int i;
	while (*p) {
		unsigned char c = (unsigned char)*p;
		int n = tpp_utf8_len(p);
		if (n > 1) {
			fwrite(p, 1, (size_t)n, f);
			p += n;
			continue;
		}
		fputc(c == '\t' || (n == 1 && c >= 0x20 && c != 0x7f) ? c : '?', f);
		p++;
	}
	fputs("\n  ", f);
	for (i = 1, p = s; i < col && *p; i++) {
		fputc(*p == '\t' ? '\t' : ' ', f);
		p += char_bytes(p);
	}
	fputs("^\n", f);
}

void tpp_err_print(FILE *f, const struct tpp_err *e)
{
	if (!e)
		return;
	if (e->file[0] && e->line > 0)
		fprintf(f, "%s:%d:%d: error: %s\n", e->file, e->line,
			e->col > 0 ? e->col : 1, e->msg);
	else if (e->file[0])
		fprintf(f, "%s: error: %s\n", e->file, e->msg);
	else
		fprintf(f, "error: %s\n", e->msg);
	if (e->src_line[0]) {
		fputs("  ", f);
		put_shown(f, e->src_line, e->src_col);
	}
}

void tpp_assert_fail(const char *expr, const char *file, int line)
{
	fprintf(stderr, "tpplan: internal error: assertion `%s' failed at %s:%d\n",
		expr, file, line);
	abort();
}

int tpp_find_lone_cr(const char *text, size_t n, int *line, int *col)
{
	size_t i;
	*line = 1;
	*col = 1;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\r') {
			size_t j = i;
			while (j < n && text[j] == '\r')
				j++;
			if (j < n && text[j] != '\n')
				return 1;
		}
		if (c == '\n')
			++*line, *col = 1;
		else if ((c & 0xc0) != 0x80)
			++*col;
	}
	return 0;
}

int tpp_utf8_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned c = u[0];
	int n, i;
	unsigned cp;
	if (c < 0x80)
		return c ? 1 : 0;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (u[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void tpp_utf8_trim(char *s)
{
	size_t n = strlen(s), i = n, back = 0;
	/* the last byte that is not a continuation byte, within 3 of the
	 * end: a lead byte with fewer continuation bytes after it than its
	 * sequence needs is cut off (other invalid bytes are not this
	 * function's business: tpp_json_str replaces them) */
	while (i > 0 && back < 4) {
		unsigned char c = (unsigned char)s[i - 1];
		i--, back++;
		if ((c & 0xc0) != 0x80) {
			size_t need = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
				      : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
			if (need && back < need)
				s[i] = '\0';
			return;
		}
	}
}
