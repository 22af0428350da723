/*
 * calfile.c - the calibration file (YAML, schema tpplan.calibration/v1):
 * written atomically with fprintf, read back through the table-driven
 * mapper of common/tpp_yaml.h.
 *
 * Data flow: struct tpp_calibration (measured by bench.c or imported by
 * import.c, fitted by fit.c) --tpp_cal_write--> FILE.yaml --tpp_cal_load-->
 * struct --> apply.c.  The schema follows calibration.md 5.4 in spirit
 * (raw tables kept next to the fitted parameters, environment recorded);
 * its exact form:
 *
 *   schema: tpplan.calibration/v1
 *   meta: {created_utc, tpplan_version, backend, hosts, device, ranks,
 *          ranks_per_node, software: {mpi, blas, cuda, nccl, driver}, source,
 *          tables: {collectives, collective_points, joint_fits, gemm,
 *                   gemm_points}}   # tables optional (files before it);
 *                                   # when given, the file must hold them
 *   collectives:
 *     - op: all_reduce            # tpp_coll_names
 *       tier: 0
 *       group: 4
 *       concurrent: 1
 *       points:                   # [bytes, median_s, p10_s, p90_s]
 *         - [8, 1.2e-05, 1.1e-05, 1.4e-05]
 *       fit: {alpha_s, busbw_GBps, alpha_err_s, busbw_err_GBps,
 *             mape_heldout_pct, range_bytes: [lo, hi]}   # or fit: null
 *   joint_fits:
 *     - {op, tier, alpha0_s, alpha_step_s, busbw_GBps, mape_heldout_pct}
 *   gemm:
 *     - precision: bf16           # tpp_prec_names
 *       best_tflops: ...          # the best point's tflops
 *       settled_s: 20.5           # optional: seconds of GEMMs before the
 *       settled_tflops: ...       #   sweep, the last window's rate
 *       settled_shape: [m, n, k]  #   and its shape (when settled)
 *       points:                   # [m, n, k, median_s, tflops]
 *                                 # tflops = 2 m n k / median_s
 * (figures stated twice must agree within GEMM_AGREE; a collective's fit
 * must be the fit of its points, tpp_cal_fit_table, within COLL_FIT_AGREE)
 *
 * Numbers are written exactly (%.15g, or %.17g where that is needed), so a
 * write/load round trip is exact up to the GB/s and TFLOP/s unit
 * conversions (a few ulp).
 */
#define _POSIX_C_SOURCE 200809L

#include "calibration.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tpp_afile.h"
#include "tpp_yaml.h"

/* ---- writer ---------------------------------------------------------------- */

struct writer {
	FILE *f;
	int bad; /* a non-finite number was asked for */
	const char *bad_what;
};

/* Length of the UTF-8 character at p if YAML allows it in a document
 * (printable, no surrogates or C1 controls but NEL), else 0. */
static int utf8_char(const unsigned char *p)
{
	unsigned cp;
	int n, i;
	if (*p >= 0xc2 && *p <= 0xdf) {
		n = 2;
		cp = *p & 0x1f;
	} else if (*p >= 0xe0 && *p <= 0xef) {
		n = 3;
		cp = *p & 0x0f;
	} else if (*p >= 0xf0 && *p <= 0xf4) {
		n = 4;
		cp = *p & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff ||
	    (cp < 0xa0 && cp != 0x85))
		return 0;
	return n;
}

/* A YAML double-quoted string: backslash escapes for ", \ and control
 * characters; UTF-8 as it is; other bytes (a host or device name in
 * Latin-1, say) as '?', since libyaml rejects the whole file over one. */
static void put_str(struct writer *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;
	fputc('"', w->f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", w->f);
			break;
		case '\\':
			fputs("\\\\", w->f);
			break;
		case '\n':
			fputs("\\n", w->f);
			break;
		case '\t':
			fputs("\\t", w->f);
			break;
		case '\r':
			fputs("\\r", w->f);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fprintf(w->f, "\\x%02x", *p);
			} else if (*p < 0x80) {
				fputc(*p, w->f);
			} else if ((n = utf8_char(p)) > 0) {
				fwrite(p, 1, (size_t)n, w->f);
				p += n - 1;
			} else {
				fputc('?', w->f);
			}
		}
	}
	fputc('"', w->f);
}

/*
 * A number, exactly: %.15g when that reads back as the same double (short
 * and readable: 2.25e-05, not 2.2499999999999998e-05), else %.17g.  YAML
 * has no portable form for inf/nan, so those fail the write.
 */
static void put_num(struct writer *w, double x, const char *what)
{
	char buf[40];
	if (!isfinite(x)) {
		if (!w->bad) {
			w->bad = 1;
			w->bad_what = what;
		}
		x = 0;
	}
	snprintf(buf, sizeof(buf), "%.15g", x);
	if (strtod(buf, NULL) != x)
		snprintf(buf, sizeof(buf), "%.17g", x);
	fputs(buf, w->f);
}

/* `key` as it stands (punctuation, indentation and name), then the value. */
static void put_kstr(struct writer *w, const char *key, const char *s)
{
	fputs(key, w->f);
	put_str(w, s);
}

static void put_knum(struct writer *w, const char *key, double x,
		     const char *what)
{
	fputs(key, w->f);
	put_num(w, x, what);
}

/* What a calibration holds, as meta.tables states it (enum
 * tpp_cal_count): the tables and points the writer writes, the valid
 * joint fits and GEMM tables. */
static void count_tables(const struct tpp_calibration *c, int n[TPP_CAL_N__COUNT])
{
	int i;
	memset(n, 0, TPP_CAL_N__COUNT * sizeof(*n));
	n[TPP_CAL_N_COLL] = c->ncoll;
	for (i = 0; i < c->ncoll; i++)
		n[TPP_CAL_N_COLL_POINTS] += c->coll[i].npoints;
	for (i = 0; i < c->njoint; i++)
		n[TPP_CAL_N_JOINT] += c->joint[i].valid;
	for (i = 0; i < TPP_PREC__COUNT; i++)
		if (c->gemm[i].valid) {
			n[TPP_CAL_N_GEMM]++;
			n[TPP_CAL_N_GEMM_POINTS] += c->gemm[i].npoints;
		}
}

static void write_meta(struct writer *w, const struct tpp_calibration *c)
{
	FILE *f = w->f;
	int n[TPP_CAL_N__COUNT];
	/* the counts first: a file cut anywhere after them is told by them
	 * (check_complete), one cut before them has no meta mapping or no
	 * measurement, which the reader refuses too */
	count_tables(c, n);
	fprintf(f, "meta:\n  tables: {collectives: %d, collective_points: %d, joint_fits: %d, "
		"gemm: %d, gemm_points: %d}", n[TPP_CAL_N_COLL], n[TPP_CAL_N_COLL_POINTS],
		n[TPP_CAL_N_JOINT], n[TPP_CAL_N_GEMM], n[TPP_CAL_N_GEMM_POINTS]);
	put_kstr(w, "\n  created_utc: ", c->created_utc);
	put_kstr(w, "\n  tpplan_version: ", c->tpplan_version);
	put_kstr(w, "\n  backend: ", c->backend);
	put_kstr(w, "\n  hosts: ", c->hosts);
	put_kstr(w, "\n  device: ", c->device);
	fprintf(f, "\n  ranks: %d\n  ranks_per_node: %d\n", c->ranks,
		c->ranks_per_node);
	put_kstr(w, "  software: {mpi: ", c->mpi);
	put_kstr(w, ", blas: ", c->blas);
	put_kstr(w, ", cuda: ", c->cuda);
	put_kstr(w, ", nccl: ", c->nccl);
	put_kstr(w, ", driver: ", c->driver);
	put_kstr(w, "}\n  source: ", c->source);
	fputc('\n', f);
}

static void write_coll(struct writer *w, const struct tpp_cal_coll *t)
{
	FILE *f = w->f;
	int i;
	TPP_ASSERT(t->op >= 0 && t->op < TPP_COLL__COUNT);
	TPP_ASSERT(t->npoints >= 0 && t->npoints <= TPP_CAL_MAX_POINTS);
	fprintf(f, "  - op: %s\n    tier: %d\n    group: %d\n    concurrent: %d\n",
		tpp_coll_names[t->op], t->tier, t->group, t->concurrent);
	fputs("    points:                 # [bytes, median_s, p10_s, p90_s]\n", f);
	if (!t->npoints)
		fputs("      []\n", f);
	for (i = 0; i < t->npoints; i++) {
		const struct tpp_cal_point *p = &t->pts[i];
		put_knum(w, "      - [", p->bytes, "collectives.points");
		put_knum(w, ", ", p->median_s, "collectives.points");
		put_knum(w, ", ", p->p10_s, "collectives.points");
		put_knum(w, ", ", p->p90_s, "collectives.points");
		fputs("]\n", f);
	}
	if (!t->fit.valid) {
		fputs("    fit: null\n", f);
		return;
	}
	put_knum(w, "    fit: {alpha_s: ", t->fit.alpha_s, "fit.alpha_s");
	put_knum(w, ", busbw_GBps: ", t->fit.busbw_Bps / TPP_GB, "fit.busbw_GBps");
	put_knum(w, ", alpha_err_s: ", t->fit.alpha_err_s, "fit.alpha_err_s");
	put_knum(w, ", busbw_err_GBps: ", t->fit.busbw_err_Bps / TPP_GB,
		 "fit.busbw_err_GBps");
	put_knum(w, ", mape_heldout_pct: ", t->fit.mape_heldout * 100,
		 "fit.mape_heldout_pct");
	put_knum(w, ", range_bytes: [", t->fit.lo_bytes, "fit.range_bytes");
	put_knum(w, ", ", t->fit.hi_bytes, "fit.range_bytes");
	fputs("]}\n", f);
}

static void write_gemm(struct writer *w, const struct tpp_cal_gemm *g)
{
	FILE *f = w->f;
	int i;
	TPP_ASSERT(g->npoints >= 0 && g->npoints <= TPP_CAL_MAX_GEMM);
	fprintf(f, "  - precision: %s\n    best_tflops: ", tpp_prec_names[g->prec]);
	put_num(w, g->best_flops_per_s / TPP_TFLOPS, "gemm.best_tflops");
	fputs("\n    settled_s: ", f);
	put_num(w, g->settled_s, "gemm.settled_s");
	fputs("\n    settled_tflops: ", f);
	put_num(w, g->settled_flops_per_s / TPP_TFLOPS, "gemm.settled_tflops");
	/* what the reader accepts: both settled figures or neither */
	TPP_ASSERT((g->settled_s > 0) == (g->settled_flops_per_s > 0));
	if (g->settled_s > 0 && g->settled_m > 0)
		fprintf(f, "\n    settled_shape: [%d, %d, %d]", g->settled_m, g->settled_n,
			g->settled_k);
	fputs("\n    points:                 # [m, n, k, median_s, tflops]\n", f);
	if (!g->npoints)
		fputs("      []\n", f);
	for (i = 0; i < g->npoints; i++) {
		const struct tpp_cal_gemm_point *p = &g->pts[i];
		fprintf(f, "      - [%d, %d, %d, ", p->m, p->n, p->k);
		put_num(w, p->median_s, "gemm.points");
		put_knum(w, ", ", p->flops_per_s / TPP_TFLOPS, "gemm.points");
		fputs("]\n", f);
	}
}

static void write_all(struct writer *w, const struct tpp_calibration *c)
{
	FILE *f = w->f;
	int i, any;

	fputs("# tpplan calibration file (see calibrate/calfile.c for the schema)\n", f);
	fputs("schema: " TPP_CAL_SCHEMA "\n", f);
	write_meta(w, c);
	fputs(c->ncoll ? "collectives:\n" : "collectives: []\n", f);
	for (i = 0; i < c->ncoll; i++)
		write_coll(w, &c->coll[i]);
	for (i = 0, any = 0; i < c->njoint; i++)
		any |= c->joint[i].valid;
	fputs(any ? "joint_fits:\n" : "joint_fits: []\n", f);
	for (i = 0; i < c->njoint; i++) {
		const struct tpp_cal_joint *j = &c->joint[i];
		if (!j->valid)
			continue;
		fprintf(f, "  - {op: %s, tier: %d, alpha0_s: ", tpp_coll_names[j->op],
			j->tier);
		put_num(w, j->alpha0_s, "joint_fits.alpha0_s");
		put_knum(w, ", alpha_step_s: ", j->alpha_step_s,
			 "joint_fits.alpha_step_s");
		put_knum(w, ", busbw_GBps: ", j->busbw_Bps / TPP_GB,
			 "joint_fits.busbw_GBps");
		put_knum(w, ", mape_heldout_pct: ", j->mape_heldout * 100,
			 "joint_fits.mape_heldout_pct");
		fputs("}\n", f);
	}
	for (i = 0, any = 0; i < TPP_PREC__COUNT; i++)
		any |= c->gemm[i].valid;
	fputs(any ? "gemm:\n" : "gemm: []\n", f);
	for (i = 0; i < TPP_PREC__COUNT; i++)
		if (c->gemm[i].valid)
			write_gemm(w, &c->gemm[i]);
}

int tpp_cal_write(const struct tpp_calibration *cal, const char *path,
		  struct tpp_err *err)
{
	return tpp_cal_write_keep(cal, path, NULL, 0, err);
}

int tpp_cal_write_keep(const struct tpp_calibration *cal, const char *path,
		       char *kept, size_t kept_size, struct tpp_err *err)
{
	struct tpp_afile af;
	struct writer w;
	struct stat st;
	int rc;

	TPP_ASSERT(cal && path);
	if (kept_size)
		kept[0] = '\0';
	/* the rename would replace whatever is there: only ever a regular
	 * file (never a device, FIFO or directory), which tpp_afile would
	 * write in place */
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return tpp_err_set(err, TPP_E_USAGE, path, 0, 0,
				   "cannot write calibration: not a regular file");
	/* never lose a measured calibration: the file replaced is kept
	 * beside it (tpp_afile's keep: PATH.<mtime>.bak, a hard link made
	 * before the rename) and the new one keeps its permissions; a
	 * symbolic link keeps pointing at the new calibration */
	if ((rc = tpp_afile_open_keep(&af, path, 1, err)))
		goto fail;
	memset(&w, 0, sizeof(w));
	w.f = af.f;
	write_all(&w, cal);
	if (w.bad) {
		tpp_afile_abort(&af);
		return tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
				   "cannot write calibration: %s is not a finite number",
				   w.bad_what);
	}
	if ((rc = tpp_afile_commit(&af, err)))
		goto fail;
	if (af.kept[0] && kept_size)
		tpp_strlcpy(kept, af.kept, kept_size);
	return TPP_OK;
fail:
	/* tpp_afile's "PATH: reason", said as the calibration's: the file
	 * named as the error's, the reason after "cannot write calibration" */
	{
		char msg[sizeof(err->msg)];
		const char *why = msg;
		size_t n = strlen(path), nr = strlen(af.path);
		tpp_strlcpy(msg, err->msg, sizeof(msg));
		if (!strncmp(msg, path, n) && !strncmp(msg + n, ": ", 2))
			why = msg + n + 2;
		else if (nr && !strncmp(msg, af.path, nr) && !strncmp(msg + nr, ": ", 2))
			why = msg + nr + 2;
		return tpp_err_set(err, rc, path, 0, 0, "cannot write calibration: %s", why);
	}
}

/* The rescue of a measurement whose --out file could not be written (the
 * disk filled or the directory went during hours of measuring): a fresh
 * file, tpplan-calibration-XXXXXX.yaml (mkstemps: never a name another
 * user planted), in $TMPDIR or /tmp -- often another file system than the
 * one that failed.  Written in place, not renamed: the name is new, and a
 * failure removes it. */
int tpp_cal_write_rescue(const struct tpp_calibration *cal, char *saved,
			 size_t saved_size, struct tpp_err *err)
{
	const char *dir = getenv("TMPDIR");
	char path[TPP_AFILE_PATH];
	FILE *f;
	int fd, n, rc;

	TPP_ASSERT(cal && saved && saved_size);
	saved[0] = '\0';
	if (!dir || dir[0] != '/')
		dir = "/tmp";
	n = snprintf(path, sizeof(path), "%s/tpplan-calibration-XXXXXX.yaml", dir);
	if (n < 0 || (size_t)n >= sizeof(path) || (size_t)n >= saved_size)
		return tpp_err_set(err, TPP_E_SYSTEM, dir, 0, 0,
				   "cannot save calibration: directory name too long");
	if ((fd = mkstemps(path, 5)) < 0)
		return tpp_err_set(err, TPP_E_SYSTEM, dir, 0, 0,
				   "cannot save calibration: %s", strerror(errno));
	if (!(f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		unlink(path);
		return tpp_err_set(err, TPP_E_SYSTEM, path, 0, 0,
				   "cannot save calibration: %s", strerror(e));
	}
	errno = 0;
	rc = tpp_cal_write_stream(cal, f, err);
	if (!rc && fsync(fileno(f)))
		rc = tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "cannot write calibration: %s",
				 strerror(errno));
	if (fclose(f) && !rc)
		rc = tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "cannot write calibration: %s",
				 strerror(errno ? errno : EIO));
	if (rc) {
		/* the stream writer's message, said of the rescue file */
		char why[sizeof(err->msg)];
		const char *w = why;
		tpp_strlcpy(why, err->msg, sizeof(why));
		if (!strncmp(why, "cannot write calibration: ", 26))
			w = why + 26;
		unlink(path);
		return tpp_err_set(err, rc, path, 0, 0, "cannot save calibration: %s", w);
	}
	tpp_strlcpy(saved, path, saved_size);
	return TPP_OK;
}

/* The last resort: the YAML on a stream the caller owns (standard output);
 * also the rescue file's writer. */
int tpp_cal_write_stream(const struct tpp_calibration *cal, FILE *f,
			 struct tpp_err *err)
{
	struct writer w;
	TPP_ASSERT(cal && f);
	memset(&w, 0, sizeof(w));
	w.f = f;
	errno = 0;
	write_all(&w, cal);
	if (w.bad)
		return tpp_err_set(err, TPP_E_INPUT, NULL, 0, 0,
				   "cannot write calibration: %s is not a finite number",
				   w.bad_what);
	if (fflush(f) || ferror(f))
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
				   "cannot write calibration: %s", strerror(errno ? errno : EIO));
	return TPP_OK;
}

/* ---- loader ---------------------------------------------------------------- */



/* A plain null / ~ / empty value. */
static int is_null(const yaml_node_t *n)
{
	const char *s;
	if (!n || n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	s = tpp_y_text(n);
	return !strcmp(s, "null") || !strcmp(s, "~") || !strcmp(s, "") ||
	       !strcmp(s, "Null") || !strcmp(s, "NULL");
}

/* Read item i of the list `pt` (already checked) as a number. */
static int item_num(struct tpp_ydoc *d, yaml_node_t *pt, int i, double *x,
		    struct tpp_err *err)
{
	return tpp_y_double(d, tpp_y_seq_item(d, pt, i), x, err);
}

/* Whether `node` is a list of exactly `len` items. */
static int is_tuple(struct tpp_ydoc *d, yaml_node_t *node, const char *what,
		    int len, struct tpp_err *err)
{
	int m;
	return node && node->type == YAML_SEQUENCE_NODE &&
	       (tpp_y_seq(d, node, what, &m, err), m == len);
}

/* ---- meta ---- */

#define META_STR(name, member)                                              \
	{.key = name, .type = TPP_YF_STR,                                    \
	 .offset = offsetof(struct tpp_calibration, member),                 \
	 .size = sizeof(((struct tpp_calibration *)0)->member)}

static const struct tpp_yfield software_fields[] = {
	META_STR("mpi", mpi),
	META_STR("blas", blas),
	META_STR("cuda", cuda),
	META_STR("nccl", nccl),
	META_STR("driver", driver),
};

/* meta.software: `field` is the whole struct tpp_calibration (offset 0). */
static int parse_software(struct tpp_ydoc *d, yaml_node_t *node, void *field,
			  struct tpp_err *err)
{
	return tpp_ymap_parse(d, node, software_fields,
			      TPP_ARRAY_LEN(software_fields), field,
			      "meta.software", err);
}

#define TABLES_INT(k, i)                                                       \
	{.key = k, .type = TPP_YF_INT,                                         \
	 .offset = offsetof(struct tpp_calibration, tables_n) + (i) * sizeof(int), \
	 .min = 0, .max = 100000000, .required = 1}
static const struct tpp_yfield tables_fields[] = {
	TABLES_INT("collectives", TPP_CAL_N_COLL),
	TABLES_INT("collective_points", TPP_CAL_N_COLL_POINTS),
	TABLES_INT("joint_fits", TPP_CAL_N_JOINT),
	TABLES_INT("gemm", TPP_CAL_N_GEMM),
	TABLES_INT("gemm_points", TPP_CAL_N_GEMM_POINTS),
};
#undef TABLES_INT

/* meta.tables: `field` is the whole struct tpp_calibration (offset 0). */
static int parse_tables_meta(struct tpp_ydoc *d, yaml_node_t *node, void *field,
			     struct tpp_err *err)
{
	struct tpp_calibration *c = field;
	int rc = tpp_ymap_parse(d, node, tables_fields, TPP_ARRAY_LEN(tables_fields),
				field, "meta.tables", err);
	c->tables_given = !rc;
	return rc;
}

static const struct tpp_yfield meta_fields[] = {
	META_STR("created_utc", created_utc),
	META_STR("tpplan_version", tpplan_version),
	META_STR("backend", backend),
	META_STR("hosts", hosts),
	META_STR("device", device),
	{.key = "ranks", .type = TPP_YF_INT,
	 .offset = offsetof(struct tpp_calibration, ranks), .min = 0,
	 .max = 100000000},
	{.key = "ranks_per_node", .type = TPP_YF_INT,
	 .offset = offsetof(struct tpp_calibration, ranks_per_node), .min = 0,
	 .max = 100000},
	{.key = "software", .type = TPP_YF_CUSTOM, .offset = 0,
	 .handler = parse_software},
	META_STR("source", source),
	{.key = "tables", .type = TPP_YF_CUSTOM, .offset = 0,
	 .handler = parse_tables_meta},
};
#undef META_STR

/* meta: `field` is the whole struct tpp_calibration (offset 0). */
static int parse_meta(struct tpp_ydoc *d, yaml_node_t *node, void *field,
		      struct tpp_err *err)
{
	struct tpp_calibration *c = field;
	yaml_node_t *dev;
	int rc = tpp_ymap_parse(d, node, meta_fields, TPP_ARRAY_LEN(meta_fields), field, "meta",
				err);
	if (!rc && (dev = tpp_y_map_get(d, node, "device"))) {
		c->device_line = (int)dev->start_mark.line + 1;
		c->device_col = (int)dev->start_mark.column + 1;
	}
	return rc;
}

/* ---- points ---- */

/* One kind of `points:` list: rows of `len` items, read by `row`. */
struct row_kind {
	int max;           /* most rows */
	int len;           /* items per row */
	const char *shape; /* names the items in messages: "[m, n, ...]" */
	/* Check row i (a list of `len` items) and store it into `out`. */
	int (*row)(struct tpp_ydoc *d, yaml_node_t *pt, const char *what, int i,
		   void *out, struct tpp_err *err);
};

/* points: a list of at most k->max rows, each handed to k->row in order;
 * *count is set only when all of them are read. */
static int parse_rows(struct tpp_ydoc *d, yaml_node_t *seq, const char *what,
		      const struct row_kind *k, void *out, int *count,
		      struct tpp_err *err)
{
	int n, i, rc;
	if ((rc = tpp_y_seq(d, seq, what, &n, err)))
		return rc;
	if (n > k->max)
		return tpp_y_err(d, tpp_y_seq_item(d, seq, k->max), err,
				 "%s: too many points (at most %d)", what, k->max);
	for (i = 0; i < n; i++) {
		yaml_node_t *pt = tpp_y_seq_item(d, seq, i);
		if (!is_tuple(d, pt, what, k->len, err))
			return tpp_y_err(d, pt, err, "%s[%d]: expected %s", what,
					 i, k->shape);
		if ((rc = k->row(d, pt, what, i, out, err)))
			return rc;
	}
	*count = n;
	return TPP_OK;
}

/* Item j of row i, already read as t, is a time in (0, TPP_CAL_MAX_TIME_S]. */
static int check_time(struct tpp_ydoc *d, yaml_node_t *pt, int j, double t,
		      const char *what, int i, struct tpp_err *err)
{
	if (!(t > 0) || t > TPP_CAL_MAX_TIME_S)
		return tpp_y_err(d, tpp_y_seq_item(d, pt, j), err,
				 "%s[%d]: time must be in (0, %g] seconds", what,
				 i, TPP_CAL_MAX_TIME_S);
	return TPP_OK;
}

/* ---- lists of tables ---- */

/*
 * One kind of table list (collectives, gemm): each item a mapping of
 * `fields` read into a scratch struct of `size` bytes (on the heap: it
 * holds a whole table), zeroed and given its defaults, then handed to
 * `take`, which reads the rest and stores the table into c.
 */
struct table_kind {
	const char *name; /* the key, and "name[i]" in messages */
	int max;          /* most tables, 0 = no limit here */
	const struct tpp_yfield *fields;
	size_t nfields;
	size_t size;
	void (*defaults)(void *in); /* or NULL */
	int (*take)(struct tpp_ydoc *d, yaml_node_t *item, void *in,
		    const char *what, int i, struct tpp_calibration *c,
		    struct tpp_err *err);
};

/* A list of tables; *count (if count) is set once all of them are read. */
static int parse_tables(struct tpp_ydoc *d, yaml_node_t *seq,
			const struct table_kind *k, struct tpp_calibration *c,
			int *count, struct tpp_err *err)
{
	void *in;
	int n, i, rc;

	if ((rc = tpp_y_seq(d, seq, k->name, &n, err)))
		return rc;
	if (k->max && n > k->max)
		return tpp_y_err(d, tpp_y_seq_item(d, seq, k->max), err,
				 "%s: too many tables (at most %d)", k->name,
				 k->max);
	in = malloc(k->size);
	if (!in)
		return tpp_err_set(err, TPP_E_SYSTEM, d->path, 0, 0, "out of memory");
	for (i = 0; i < n && !rc; i++) {
		yaml_node_t *item = tpp_y_seq_item(d, seq, i);
		char what[64];
		memset(in, 0, k->size);
		if (k->defaults)
			k->defaults(in);
		snprintf(what, sizeof(what), "%s[%d]", k->name, i);
		rc = tpp_ymap_parse(d, item, k->fields, k->nfields, in, what, err);
		if (!rc)
			rc = k->take(d, item, in, what, i, c, err);
	}
	if (!rc && count)
		*count = n;
	free(in);
	return rc;
}

/* ---- collectives ---- */

struct coll_in {
	struct tpp_cal_coll t;
	yaml_node_t *points, *fit;
};

static const struct tpp_yfield coll_fields[] = {
	{.key = "op", .type = TPP_YF_ENUM, .offset = offsetof(struct coll_in, t.op),
	 .names = tpp_coll_names, .nnames = TPP_COLL__COUNT, .required = 1},
	{.key = "tier", .type = TPP_YF_INT, .offset = offsetof(struct coll_in, t.tier),
	 .min = 0, .max = TPP_MAX_TIERS - 1, .required = 1},
	{.key = "group", .type = TPP_YF_INT,
	 .offset = offsetof(struct coll_in, t.group), .min = 2, .max = 100000000,
	 .required = 1},
	{.key = "concurrent", .type = TPP_YF_INT,
	 .offset = offsetof(struct coll_in, t.concurrent), .min = 1,
	 .max = 100000000},
	{.key = "points", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct coll_in, points), .handler = tpp_y_keep_node,
	 .required = 1},
	{.key = "fit", .type = TPP_YF_CUSTOM, .offset = offsetof(struct coll_in, fit),
	 .handler = tpp_y_keep_node},
};

/* [bytes, median_s, p10_s, p90_s]: sizes strictly increasing, whole bytes >= 1,
 * 0 < p10 <= median <= p90 <= TPP_CAL_MAX_TIME_S,
 * bytes / p10 <= TPP_CAL_MAX_ALGBW_Bps.  `out` is the struct tpp_cal_coll. */
static int coll_point(struct tpp_ydoc *d, yaml_node_t *pt, const char *what,
		      int i, void *out, struct tpp_err *err)
{
	struct tpp_cal_coll *t = out;
	double v[4];
	int j, rc;
	for (j = 0; j < 4; j++)
		if ((rc = item_num(d, pt, j, &v[j], err)))
			return rc;
	if (!(v[0] >= 1) || v[0] != floor(v[0]))
		return tpp_y_err(d, tpp_y_seq_item(d, pt, 0), err,
				 "%s[%d]: size must be a whole number of bytes >= 1", what, i);
	for (j = 1; j < 4; j++)
		if ((rc = check_time(d, pt, j, v[j], what, i, err)))
			return rc;
	if (v[2] > v[1] || v[1] > v[3])
		return tpp_y_err(d, pt, err,
				 "%s[%d]: times out of order (p10 <= median <= p90 expected)",
				 what, i);
	if (!(v[0] / v[2] <= TPP_CAL_MAX_ALGBW_Bps))
		return tpp_y_err(d, pt, err,
				 "%s[%d]: %.15g bytes in %.3g s is %.3g GB/s, faster than any interconnect (at most %g GB/s)",
				 what, i, v[0], v[2], v[0] / v[2] / TPP_GB,
				 TPP_CAL_MAX_ALGBW_Bps / TPP_GB);
	if (i && v[0] <= t->pts[i - 1].bytes)
		return tpp_y_err(d, pt, err, "%s[%d]: sizes must increase", what,
				 i);
	t->pts[i].bytes = v[0];
	t->pts[i].median_s = v[1];
	t->pts[i].p10_s = v[2];
	t->pts[i].p90_s = v[3];
	return TPP_OK;
}

static const struct row_kind coll_rows = {
	.max = TPP_CAL_MAX_POINTS, .len = 4,
	.shape = "[bytes, median_s, p10_s, p90_s]", .row = coll_point,
};

struct fit_in {
	struct tpp_cal_fit f;
	yaml_node_t *range;
};

static const struct tpp_yfield fit_fields[] = {
	{.key = "alpha_s", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct fit_in, f.alpha_s), .min = -1e6, .max = 1e6,
	 .required = 1},
	{.key = "busbw_GBps", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct fit_in, f.busbw_Bps), .scale = TPP_GB,
	 .min = 1e-9 * TPP_GB, .max = 1e9 * TPP_GB, .required = 1},
	{.key = "alpha_err_s", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct fit_in, f.alpha_err_s), .min = 0, .max = 1e9},
	{.key = "busbw_err_GBps", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct fit_in, f.busbw_err_Bps), .scale = TPP_GB,
	 .min = 0, .max = 1e30},
	{.key = "mape_heldout_pct", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct fit_in, f.mape_heldout), .scale = 0.01,
	 .min = 0, .max = 1e9},
	{.key = "range_bytes", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct fit_in, range), .handler = tpp_y_keep_node},
};

/* fit: null, or the mapping of fit_fields. */
static int parse_fit(struct tpp_ydoc *d, yaml_node_t *node, const char *what,
		     struct tpp_cal_fit *out, struct tpp_err *err)
{
	struct fit_in in;
	int rc;
	memset(&in, 0, sizeof(in));
	if (is_null(node)) {
		memset(out, 0, sizeof(*out));
		return TPP_OK;
	}
	if ((rc = tpp_ymap_parse(d, node, fit_fields, TPP_ARRAY_LEN(fit_fields),
				 &in, what, err)))
		return rc;
	if (in.range) {
		if (!is_tuple(d, in.range, what, 2, err))
			return tpp_y_err(d, in.range, err,
					 "%s.range_bytes: expected [lo, hi]", what);
		if ((rc = item_num(d, in.range, 0, &in.f.lo_bytes, err)) ||
		    (rc = item_num(d, in.range, 1, &in.f.hi_bytes, err)))
			return rc;
		if (!(in.f.lo_bytes > 0) || in.f.hi_bytes < in.f.lo_bytes)
			return tpp_y_err(d, in.range, err,
					 "%s.range_bytes: expected 0 < lo <= hi",
					 what);
	}
	in.f.valid = 1;
	*out = in.f;
	return TPP_OK;
}

/* How far a stated fit may price a table's smallest and largest sizes
 * from the fit of its points (tpp_cal_fit_table): rounding by another
 * writer, not another fit. */
#define COLL_FIT_AGREE 0.01

/* The fit a file states is the fit of its points: planning reads both
 * (the fit's bandwidth past the points, the points between), so a fit
 * left from other points (edited or merged by hand) would price two
 * different collectives. */
static int check_fit(struct tpp_ydoc *d, yaml_node_t *node, const char *what,
		     const struct tpp_cal_coll *t, struct tpp_err *err)
{
	struct tpp_cal_fit f;
	double factor = tpp_cal_bus_factor(t->op, t->group), at[2];
	int rc, k;
	if (t->npoints < 1)
		return TPP_OK;
	/* the fit's own range, else the points' */
	at[0] = t->fit.lo_bytes > 0 ? t->fit.lo_bytes : t->pts[0].bytes;
	at[1] = t->fit.hi_bytes > 0 ? t->fit.hi_bytes : t->pts[t->npoints - 1].bytes;
	if ((rc = tpp_cal_fit_table(t, &f, err)))
		return rc;
	if (!f.valid)
		return tpp_y_err(d, node, err,
				 "%s: a fit is stated, but its %d points give none (too few, or "
				 "no positive bandwidth): write fit: null",
				 what, t->npoints);
	for (k = 0; k < 2; k++) {
		double x = at[k] * factor;
		double stated = t->fit.alpha_s + x / t->fit.busbw_Bps;
		double refit = f.alpha_s + x / f.busbw_Bps;
		if (!(fabs(stated - refit) <= COLL_FIT_AGREE * fabs(refit)))
			return tpp_y_err(d, node, err,
					 "%s: alpha %.4g us, busbw %.4g GB/s, but its points fit "
					 "alpha %.4g us, busbw %.4g GB/s (%.3g s against %.3g s at "
					 "%.0f bytes): a fit from other points? re-import the "
					 "measurement, or write fit: null",
					 what, t->fit.alpha_s * 1e6, t->fit.busbw_Bps / TPP_GB,
					 f.alpha_s * 1e6, f.busbw_Bps / TPP_GB, stated, refit, at[k]);
	}
	return TPP_OK;
}

static void coll_defaults(void *in)
{
	((struct coll_in *)in)->t.concurrent = 1;
}

/* collectives[i]: its points and fit. */
static int take_coll(struct tpp_ydoc *d, yaml_node_t *item, void *p,
		     const char *what, int i, struct tpp_calibration *c,
		     struct tpp_err *err)
{
	struct coll_in *in = p;
	char pwhat[80];
	int rc, j;
	/* one table per (op, tier, group, concurrent): planning would not
	 * know which of two to use */
	for (j = 0; j < i; j++) {
		const struct tpp_cal_coll *o = &c->coll[j];
		if (o->op == in->t.op && o->tier == in->t.tier &&
		    o->group == in->t.group && o->concurrent == in->t.concurrent)
			return tpp_y_err(d, tpp_y_map_get(d, item, "op"), err,
					 "%s: the same table as collectives[%d] (%s, tier %d, group %d, concurrent %d)",
					 what, j, tpp_coll_names[o->op], o->tier,
					 o->group, o->concurrent);
	}
	snprintf(pwhat, sizeof(pwhat), "%s.points", what);
	if ((rc = parse_rows(d, in->points, pwhat, &coll_rows, &in->t,
			     &in->t.npoints, err)))
		return rc;
	snprintf(pwhat, sizeof(pwhat), "%s.fit", what);
	if (in->fit && (rc = parse_fit(d, in->fit, pwhat, &in->t.fit, err)))
		return rc;
	if (in->t.fit.valid && (rc = check_fit(d, in->fit, pwhat, &in->t, err)))
		return rc;
	in->t.line = (int)item->start_mark.line + 1;
	in->t.col = (int)item->start_mark.column + 1;
	in->t.fit_given = in->fit != NULL;
	c->coll[i] = in->t;
	return TPP_OK;
}

static const struct table_kind coll_tables = {
	.name = "collectives", .max = TPP_CAL_MAX_COLL,
	.fields = coll_fields, .nfields = TPP_ARRAY_LEN(coll_fields),
	.size = sizeof(struct coll_in), .defaults = coll_defaults,
	.take = take_coll,
};

/* collectives: `field` is the whole struct tpp_calibration (offset 0). */
static int parse_collectives(struct tpp_ydoc *d, yaml_node_t *seq, void *field,
			     struct tpp_err *err)
{
	struct tpp_calibration *c = field;
	return parse_tables(d, seq, &coll_tables, c, &c->ncoll, err);
}

/* ---- joint fits ---- */

static const struct tpp_yfield joint_fields[] = {
	{.key = "op", .type = TPP_YF_ENUM, .offset = offsetof(struct tpp_cal_joint, op),
	 .names = tpp_coll_names, .nnames = TPP_COLL__COUNT, .required = 1},
	{.key = "tier", .type = TPP_YF_INT,
	 .offset = offsetof(struct tpp_cal_joint, tier), .min = 0,
	 .max = TPP_MAX_TIERS - 1, .required = 1},
	{.key = "alpha0_s", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct tpp_cal_joint, alpha0_s), .min = -1e6,
	 .max = 1e6, .required = 1},
	{.key = "alpha_step_s", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct tpp_cal_joint, alpha_step_s), .min = -1e6,
	 .max = 1e6, .required = 1},
	{.key = "busbw_GBps", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct tpp_cal_joint, busbw_Bps), .scale = TPP_GB,
	 .min = 1e-9 * TPP_GB, .max = 1e9 * TPP_GB, .required = 1},
	{.key = "mape_heldout_pct", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct tpp_cal_joint, mape_heldout), .scale = 0.01,
	 .min = 0, .max = 1e9},
};

static int parse_joint(struct tpp_ydoc *d, yaml_node_t *seq, void *field,
		       struct tpp_err *err)
{
	struct tpp_calibration *c = field;
	const int max = (int)TPP_ARRAY_LEN(c->joint);
	int n, i, rc;

	if ((rc = tpp_y_seq(d, seq, "joint_fits", &n, err)))
		return rc;
	if (n > max)
		return tpp_y_err(d, tpp_y_seq_item(d, seq, max), err,
				 "joint_fits: too many entries (at most %d)", max);
	for (i = 0; i < n; i++) {
		struct tpp_cal_joint j;
		char what[64];
		memset(&j, 0, sizeof(j));
		snprintf(what, sizeof(what), "joint_fits[%d]", i);
		if ((rc = tpp_ymap_parse(d, tpp_y_seq_item(d, seq, i), joint_fields,
					 TPP_ARRAY_LEN(joint_fields), &j, what,
					 err)))
			return rc;
		j.valid = 1;
		c->joint[i] = j;
	}
	c->njoint = n;
	return TPP_OK;
}

/* ---- gemm ---- */

struct gemm_in {
	struct tpp_cal_gemm g;
	yaml_node_t *points, *settled_shape;
};

static const struct tpp_yfield gemm_fields[] = {
	{.key = "precision", .type = TPP_YF_ENUM,
	 .offset = offsetof(struct gemm_in, g.prec), .names = tpp_prec_names,
	 .nnames = TPP_PREC__COUNT, .required = 1},
	{.key = "best_tflops", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct gemm_in, g.best_flops_per_s),
	 .scale = TPP_TFLOPS, .min = TPP_CAL_MIN_TFLOPS * TPP_TFLOPS, .max = 1e9 * TPP_TFLOPS,
	 .required = 1},
	{.key = "points", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct gemm_in, points), .handler = tpp_y_keep_node,
	 .required = 1},
	/* optional (files before them read as not settled) */
	{.key = "settled_s", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct gemm_in, g.settled_s), .min = 0, .max = 1e6},
	{.key = "settled_tflops", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct gemm_in, g.settled_flops_per_s),
	 .scale = TPP_TFLOPS, .min = 0, .max = 1e9 * TPP_TFLOPS},
	{.key = "settled_shape", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct gemm_in, settled_shape), .handler = tpp_y_keep_node},
};

/* Relative disagreement allowed between figures a calibration file states
 * twice (a point's TFLOP/s and 2 m n k / median_s; best_tflops and its
 * points' best): rounding by another writer, not a different number. */
#define GEMM_AGREE 0.01

/* [m, n, k, median_s, tflops]: dimensions in [1, 2147483647], a time and
 * TPP_CAL_MIN_TFLOPS <= TFLOP/s <= 1e6 that is 2 m n k / median_s.  `out`
 * is the struct tpp_cal_gemm. */
static int gemm_point(struct tpp_ydoc *d, yaml_node_t *pt, const char *what,
		      int i, void *out, struct tpp_err *err)
{
	struct tpp_cal_gemm *g = out;
	long long dim[3];
	double t, tf;
	int j, rc;
	for (j = 0; j < 3; j++) {
		yaml_node_t *v = tpp_y_seq_item(d, pt, j);
		if ((rc = tpp_y_int(d, v, &dim[j], err)))
			return rc;
		if (dim[j] < 1 || dim[j] > 2147483647LL)
			return tpp_y_err(d, v, err,
					 "%s[%d]: dimensions must be in [1, 2147483647]",
					 what, i);
	}
	if ((rc = item_num(d, pt, 3, &t, err)) ||
	    (rc = item_num(d, pt, 4, &tf, err)) ||
	    (rc = check_time(d, pt, 3, t, what, i, err)))
		return rc;
	if (!(tf >= TPP_CAL_MIN_TFLOPS) || tf > 1e6)
		return tpp_y_err(d, tpp_y_seq_item(d, pt, 4), err,
				 "%s[%d]: TFLOP/s must be in [%g, 1e6]", what, i, TPP_CAL_MIN_TFLOPS);
	{
		double f = 2.0 * dim[0] * dim[1] * dim[2] / t / TPP_TFLOPS;
		if (fabs(tf - f) > GEMM_AGREE * f)
			return tpp_y_err(d, tpp_y_seq_item(d, pt, 4), err,
					 "%s[%d]: %.6g TFLOP/s, but 2 m n k / median_s = %.6g TFLOP/s",
					 what, i, tf, f);
	}
	g->pts[i].m = (int)dim[0];
	g->pts[i].n = (int)dim[1];
	g->pts[i].k = (int)dim[2];
	g->pts[i].median_s = t;
	g->pts[i].flops_per_s = tf * TPP_TFLOPS;
	return TPP_OK;
}

static const struct row_kind gemm_rows = {
	.max = TPP_CAL_MAX_GEMM, .len = 5,
	.shape = "[m, n, k, median_s, tflops]", .row = gemm_point,
};

/* gemm[i]: one table a precision at most, then its points. */
static int take_gemm(struct tpp_ydoc *d, yaml_node_t *item, void *p,
		     const char *what, int i, struct tpp_calibration *c,
		     struct tpp_err *err)
{
	struct gemm_in *in = p;
	char pwhat[80];
	int rc;
	(void)i;
	if (c->gemm[in->g.prec].valid)
		return tpp_y_err(d, tpp_y_map_get(d, item, "precision"), err,
				 "%s: duplicate precision '%s'", what,
				 tpp_prec_names[in->g.prec]);
	snprintf(pwhat, sizeof(pwhat), "%s.points", what);
	if ((rc = parse_rows(d, in->points, pwhat, &gemm_rows, &in->g,
			     &in->g.npoints, err)))
		return rc;
	/* best_tflops is the best point (what `tpplan calibrate` writes):
	 * planning takes it as the GEMM ceiling and the points as the
	 * per-shape table */
	if (in->g.npoints) {
		double best = 0, b = in->g.best_flops_per_s;
		int j;
		for (j = 0; j < in->g.npoints; j++)
			best = fmax(best, in->g.pts[j].flops_per_s);
		if (fabs(b - best) > GEMM_AGREE * best)
			return tpp_y_err(d, tpp_y_map_get(d, item, "best_tflops"), err,
					 "%s: best_tflops %.6g, but the best of its points is %.6g TFLOP/s",
					 what, b / TPP_TFLOPS, best / TPP_TFLOPS);
	}
	/* settling took time and found a rate, or did not happen; a rate
	 * in the range of the points' */
	if (in->g.settled_flops_per_s > 0 &&
	    (in->g.settled_flops_per_s < TPP_CAL_MIN_TFLOPS * TPP_TFLOPS ||
	     in->g.settled_flops_per_s > 1e6 * TPP_TFLOPS))
		return tpp_y_err(d, tpp_y_map_get(d, item, "settled_tflops"), err,
				 "%s: settled_tflops must be 0 (not settled) or in [%g, 1e6]", what,
				 TPP_CAL_MIN_TFLOPS);
	if ((in->g.settled_s > 0) != (in->g.settled_flops_per_s > 0))
		return tpp_y_err(d, tpp_y_map_get(d, item, in->g.settled_s > 0 ? "settled_s" : "settled_tflops"),
				 err, "%s: settled_s %g with settled_tflops %g: both zero (not settled) or both positive",
				 what, in->g.settled_s, in->g.settled_flops_per_s / TPP_TFLOPS);
	if (in->settled_shape) {
		int n, j;
		long long dim[3];
		char swhat[96];
		snprintf(swhat, sizeof(swhat), "%s.settled_shape", what);
		if ((rc = tpp_y_seq(d, in->settled_shape, swhat, &n, err)))
			return rc;
		if (n != 3 || !(in->g.settled_s > 0))
			return tpp_y_err(d, in->settled_shape, err,
					 n != 3 ? "%s.settled_shape: expected [m, n, k]"
						: "%s.settled_shape: given, but settled_s is 0 (not settled)",
					 what);
		for (j = 0; j < 3; j++) {
			yaml_node_t *v = tpp_y_seq_item(d, in->settled_shape, j);
			if ((rc = tpp_y_int(d, v, &dim[j], err))) {
				char why[sizeof(err->msg)];
				tpp_strlcpy(why, err->msg, sizeof(why));
				return tpp_y_err(d, v, err, "%s: %s", swhat, why);
			}
			if (dim[j] < 1 || dim[j] > 2147483647LL)
				return tpp_y_err(d, v, err,
						 "%s.settled_shape: dimensions must be in [1, 2147483647]", what);
		}
		in->g.settled_m = (int)dim[0];
		in->g.settled_n = (int)dim[1];
		in->g.settled_k = (int)dim[2];
	}
	in->g.valid = 1;
	in->g.line = (int)item->start_mark.line + 1;
	in->g.col = (int)item->start_mark.column + 1;
	c->gemm[in->g.prec] = in->g;
	return TPP_OK;
}

/* No count limit: past TPP_PREC__COUNT tables, one repeats a precision. */
static const struct table_kind gemm_tables = {
	.name = "gemm", .fields = gemm_fields,
	.nfields = TPP_ARRAY_LEN(gemm_fields), .size = sizeof(struct gemm_in),
	.take = take_gemm,
};

/* gemm: `field` is the whole struct tpp_calibration (offset 0). */
static int parse_gemm(struct tpp_ydoc *d, yaml_node_t *seq, void *field,
		      struct tpp_err *err)
{
	return parse_tables(d, seq, &gemm_tables, field, NULL, err);
}

/* ---- top level ---- */

/* schema: checked before the table runs (see parse_cal). */
static int schema_checked(struct tpp_ydoc *d, yaml_node_t *node, void *field,
			  struct tpp_err *err)
{
	(void)d;
	(void)node;
	(void)field;
	(void)err;
	return TPP_OK;
}

/* Every handler gets the whole struct tpp_calibration (offset 0). */
static const struct tpp_yfield cal_fields[] = {
	{.key = "schema", .type = TPP_YF_CUSTOM, .offset = 0,
	 .handler = schema_checked, .required = 1},
	{.key = "meta", .type = TPP_YF_CUSTOM, .offset = 0, .handler = parse_meta},
	{.key = "collectives", .type = TPP_YF_CUSTOM, .offset = 0,
	 .handler = parse_collectives},
	{.key = "joint_fits", .type = TPP_YF_CUSTOM, .offset = 0,
	 .handler = parse_joint},
	{.key = "gemm", .type = TPP_YF_CUSTOM, .offset = 0, .handler = parse_gemm},
};

/*
 * meta.ranks and meta.ranks_per_node against each other and the tables:
 * planning divides a table beyond the first tier by the ranks per node
 * (apply.c per_gpu_scale), so a figure that does not fit the tables would
 * price the network several times too fast or too slow, silently.
 *   - ranks_per_node is at most ranks;
 *   - a table's ranks (group x concurrent groups) are at most ranks;
 *   - a table beyond the first tier (measured across nodes) whose groups
 *     are one each (not a concurrent "rail" table, one rank per node) has
 *     a group larger than ranks_per_node: one that fits on a node did not
 *     cross nodes.
 * 0 (unknown) checks nothing.
 */
static int check_ranks(struct tpp_ydoc *d, yaml_node_t *root,
		       const struct tpp_calibration *c, struct tpp_err *err)
{
	yaml_node_t *meta = tpp_y_map_get(d, root, "meta");
	int i;
	if (c->ranks > 0 && c->ranks_per_node > c->ranks)
		return tpp_y_err(d, tpp_y_map_get(d, meta, "ranks_per_node"), err,
				 "meta.ranks_per_node %d is more than meta.ranks %d",
				 c->ranks_per_node, c->ranks);
	for (i = 0; i < c->ncoll; i++) {
		const struct tpp_cal_coll *t = &c->coll[i];
		long long used = (long long)t->group * (t->concurrent > 1 ? t->concurrent : 1);
		if (c->ranks > 0 && used > c->ranks)
			return tpp_err_set(err, TPP_E_INPUT, d->path, t->line, t->col,
					   "collectives[%d]: %lld ranks (group %d x %d concurrent), "
					   "but meta.ranks is %d",
					   i, used, t->group, t->concurrent > 1 ? t->concurrent : 1,
					   c->ranks);
		if (t->tier >= 1 && t->concurrent <= 1 && c->ranks_per_node > 0 &&
		    t->group <= c->ranks_per_node)
			return tpp_err_set(err, TPP_E_INPUT, d->path, t->line, t->col,
					   "collectives[%d]: a group of %d on tier %d (across nodes), "
					   "but meta.ranks_per_node is %d: a group that fits on one "
					   "node did not cross nodes (a wrong ranks_per_node, or the "
					   "table belongs on tier 0)",
					   i, t->group, t->tier, c->ranks_per_node);
	}
	return TPP_OK;
}

/*
 * A file that states meta.tables (every one tpplan writes) holds all of
 * it: the four sections, a fit: key in every collective table (null when
 * there is none) and the counts stated.  The writer puts meta first and
 * the points, fits and sections after it, so a copy or a write cut short
 * at a line boundary -- which YAML reads as a complete, smaller file --
 * fails here instead of planning with part of a measurement.
 */
static int check_complete(struct tpp_ydoc *d, yaml_node_t *root,
			  const struct tpp_calibration *c, const int n[TPP_CAL_N__COUNT],
			  struct tpp_err *err)
{
	static const char *const sections[] = {"collectives", "joint_fits", "gemm"};
	yaml_node_t *tables;
	int i;
	if (!c->tables_given)
		return TPP_OK;
	tables = tpp_y_map_get(d, tpp_y_map_get(d, root, "meta"), "tables");
	for (i = 0; i < (int)TPP_ARRAY_LEN(sections); i++)
		if (!tpp_y_map_get(d, root, sections[i]))
			return tpp_y_err(d, tables, err,
					 "meta.tables: the file has no '%s:' section, which tpplan "
					 "always writes: cut short? (measure again, or take its .bak)",
					 sections[i]);
	for (i = 0; i < c->ncoll; i++)
		if (!c->coll[i].fit_given)
			return tpp_err_set(err, TPP_E_INPUT, d->path, c->coll[i].line, c->coll[i].col,
					   "collectives[%d]: no fit: key (tpplan writes one, null when "
					   "there is no fit): cut short? (measure again, or take its .bak)",
					   i);
	if (memcmp(n, c->tables_n, sizeof(c->tables_n)))
		return tpp_y_err(d, tables, err,
				 "meta.tables: %d collective tables of %d points, %d joint fits, "
				 "%d GEMM tables of %d points stated, but the file holds %d, %d, %d, "
				 "%d, %d: cut short or edited? (measure again, or take its .bak)",
				 c->tables_n[0], c->tables_n[1], c->tables_n[2], c->tables_n[3],
				 c->tables_n[4], n[0], n[1], n[2], n[3], n[4]);
	return TPP_OK;
}

static int parse_cal(struct tpp_ydoc *d, struct tpp_calibration *c,
		     struct tpp_err *err)
{
	yaml_node_t *root = tpp_ydoc_root(d);
	int rc, n[TPP_CAL_N__COUNT];

	/* The schema first: another tpplan file given here should say so,
	 * not list unknown keys. */
	if ((rc = tpp_y_check_schema(d, TPP_CAL_SCHEMA, "calibration", err)))
		return rc;
	if ((rc = tpp_ymap_parse(d, root, cal_fields, TPP_ARRAY_LEN(cal_fields), c,
				 "calibration", err)))
		return rc;
	count_tables(c, n);
	if ((rc = check_complete(d, root, c, n, err)))
		return rc;
	if ((rc = check_ranks(d, root, c, err)))
		return rc;
	/* the writer never writes an empty calibration (fit_write): one
	 * that holds nothing is damaged, not a measurement */
	if (!n[TPP_CAL_N_COLL] && !n[TPP_CAL_N_GEMM])
		return tpp_y_err(d, root, err,
				 "calibration: no collective or GEMM table: nothing measured "
				 "(cut short?)");
	return TPP_OK;
}

void tpp_cal_printable(struct tpp_calibration *c)
{
	char *const str[] = {c->created_utc, c->tpplan_version, c->backend, c->hosts,
			     c->device, c->mpi, c->blas, c->cuda, c->nccl, c->driver,
			     c->source};
	size_t i;
	/* newlines and tabs kept: an MPI library's version string has lines */
	for (i = 0; i < TPP_ARRAY_LEN(str); i++)
		tpp_printable(str[i], 1);
}

int tpp_cal_load(const char *path, struct tpp_calibration *out,
		 struct tpp_err *err)
{
	struct tpp_calibration *c;
	struct tpp_ydoc d;
	int rc;

	TPP_ASSERT(path && out);
	if ((rc = tpp_ydoc_load(&d, path, err)))
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c) {
		tpp_ydoc_free(&d);
		return tpp_err_set(err, TPP_E_SYSTEM, path, 0, 0, "out of memory");
	}
	rc = parse_cal(&d, c, err);
	if (!rc) {
		tpp_cal_printable(c);
		memcpy(out, c, sizeof(*c));
	}
	free(c);
	tpp_ydoc_free(&d);
	return rc;
}
