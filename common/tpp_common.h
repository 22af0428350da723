/*
 * tpp_common.h - status codes, error records, assertions and small helpers
 * shared by every tpplan module.
 *
 * Data flow: every loader and evaluator reports user-caused failures as a
 * status code plus a struct tpp_err (message + file:line:col); only the CLI
 * turns those into exit codes.  Programming bugs trip TPP_ASSERT, which is
 * always on.
 */
#ifndef TPP_COMMON_H
#define TPP_COMMON_H

#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>

/* Status codes double as the documented CLI exit codes. */
enum tpp_status {
	TPP_OK = 0,
	TPP_E_INFEASIBLE = 1, /* no layout fits / a check failed */
	TPP_E_USAGE = 2,      /* bad command line */
	TPP_E_INPUT = 3,      /* bad input file or configuration */
	TPP_E_SYSTEM = 4,     /* backend, I/O or system error */
};

/*
 * An error a user can cause.  file/line/col locate it when known
 * (line == 0: no location).  col is 1-based.  When src_line is non-empty it
 * holds the offending source line (or, when longer, a window of it around
 * col), printed with a caret under col.
 */
struct tpp_err {
	int status;
	char file[512];
	int line, col;
	char msg[1024];
	char src_line[256];
	int src_col; /* col within src_line (a long line is shown as a
			window around col, "..." where it is cut) */
};

/* Clear an error record; NULL is a no-op. */
void tpp_err_clear(struct tpp_err *e);

/*
 * Record an error with location (file may be NULL, line 0 for none).
 * Returns status so callers can write `return tpp_err_set(...)`.
 * If e is NULL the error is dropped but status is still returned.
 * When file and line are given, the source line is read from the file so the
 * message can show it with a caret.
 */
int tpp_err_set(struct tpp_err *e, int status, const char *file, int line,
		int col, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Print "file:line:col: error: msg" (+ source line and caret) to f. */
void tpp_err_print(FILE *f, const struct tpp_err *e);

/* Always-on assertion for programming errors (never for user input). */
#define TPP_ASSERT(cond)                                                     \
	do {                                                                 \
		if (!(cond))                                                 \
			tpp_assert_fail(#cond, __FILE__, __LINE__);          \
	} while (0)
_Noreturn void tpp_assert_fail(const char *expr, const char *file, int line);

#define TPP_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Greatest common divisor of a and b (>= 0); gcd(a, 0) = a. */
long long tpp_gcd(long long a, long long b);

/* Bounded string copy that always NUL-terminates (dst_size > 0). */
void tpp_strlcpy(char *dst, const char *src, size_t dst_size);
/* Whether s holds a control character: ASCII (below 0x20, or DEL), or in
 * UTF-8 a C1 control, a line or paragraph separator or a bidi override /
 * isolate: names that must stay on one line, printed as written (a newline
 * would break --timeline's comment line and every table heading). */
int tpp_has_control_char(const char *s);
/* Show s's control characters as '?', in place: ASCII (below 0x20, or
 * DEL) but for newline and tab when keep_lines, and the UTF-8 ones
 * tpp_has_control_char refuses, each of their bytes (the length stays):
 * text from files or other tools that is printed (a terminal escape
 * sequence would act, a bidi override reorder the line). */
void tpp_printable(char *s, int keep_lines);
/* Whether text[0..n) holds a carriage return that ends no line: one not
 * followed (after any more CRs) by a line feed or the end, as in files
 * whose lines end in CR alone (classic Mac); CR LF and CR CR LF do end
 * lines.  *line and *col (1-based, columns in characters) locate the
 * first such CR.  TPP_LONE_CR_MSG says it. */
int tpp_find_lone_cr(const char *text, size_t n, int *line, int *col);
#define TPP_LONE_CR_MSG "a carriage return inside a line: lines that end " \
			"with CR alone? (convert them to LF or CR LF)"
/* Length of the valid UTF-8 sequence at s (1-4 bytes: no overlong form,
 * surrogate or code point past U+10FFFF), 0 when s does not start one
 * (a stray continuation byte, a cut sequence, 0xC0, 0xFF, ...). */
int tpp_utf8_len(const char *s);
/* Drop a UTF-8 sequence that a byte limit cut short at the end of s (a
 * string copied into a fixed buffer must not end in half a character). */
void tpp_utf8_trim(char *s);
/* 64-bit FNV-1a of n bytes at p, continuing from h (TPP_FNV1A_INIT to
 * start): a hash for telling strings or records apart, not a checksum. */
#define TPP_FNV1A_INIT 0xcbf29ce484222325ULL
unsigned long long tpp_fnv1a(unsigned long long h, const void *p, size_t n);
/* Append printf-formatted text to the NUL-terminated string in buf (of
 * size bytes in all), cut short where buf ends. */
void tpp_appendf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Case-insensitive edit distance (insertions, deletions, substitutions)
 * between two names, for "did you mean" suggestions; names of 64
 * characters or more are 1000 apart. */
int tpp_name_distance(const char *a, const char *b);
/* How near `guess` is to `name`, when near enough to suggest it: their
 * distance when equal but for case, or at most 2 edits apart while both
 * have more than 3 characters; -1 otherwise. */
int tpp_name_near(const char *guess, const char *name);
/* Whether path names a FIFO, socket or device: opening or reading one
 * (a FIFO nobody writes) could wait forever, so input files are refused
 * before they are opened.  A directory, or a path that does not exist, is
 * left to the open or read that reports it. */
int tpp_not_regular(const char *path);

/* Host memory this process may use, in bytes: the physical memory, or a
 * memory cgroup's limit where that is smaller (*from_cgroup says which;
 * may be NULL); INFINITY when neither can be read (tpp_mem.c). */
double tpp_host_mem_limit(int *from_cgroup);
/* The cgroup limit alone, from the given mountinfo and /proc/self/cgroup
 * files (for tests); 0 when there is none. */
double tpp_cgroup_mem_limit_from(const char *mountinfo, const char *cgroup_file);

/* Unit helpers: names carry units, these make conversions explicit. */
#define TPP_GiB (1024.0 * 1024.0 * 1024.0)
#define TPP_GB 1e9
#define TPP_TFLOPS 1e12

/* tpplan version string, from CMake. */
extern const char tpp_version[];

#endif
