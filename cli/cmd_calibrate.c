/*
 * cmd_calibrate.c - `tpplan calibrate`: measure this cluster's collectives
 * and GEMMs (under mpiexec, one process per GPU or CPU slot), or import
 * nccl-tests output; fit; write the calibration YAML atomically; print a
 * summary.
 *
 * Data flow: options --> tpp_bench_run (calibrate/bench.c, every rank) or
 * tpp_cal_import --> rank 0: tpp_cal_fit_all --> tpp_cal_write --> table on
 * stdout.  MPI is started here and only here (tpp_bench_init), and only in
 * a build with the harness (TPP_HAVE_BENCH); --import needs no MPI.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "calibration.h"
#include "tpp_afile.h"
#include "cli.h"
#include "model.h"
#ifdef TPP_HAVE_BENCH
#include "bench.h"
#endif

enum {
	O_HELP = 'h', O_OUT = 'o',
	O_BACKEND = 1000, O_QUICK, O_MIN_BYTES, O_MAX_BYTES, O_ITERS, O_WARMUP,
	O_GEMM, O_NO_GEMM, O_COLLS, O_PRECS, O_SHAPES, O_MODEL, O_TOKENS, O_MAX_TP,
	O_IMPORT, O_OP, O_GROUP,
	O_TIER, O_TIMEOUT, O_PROGRESS, O_NO_PROGRESS, O_SETTLE,
};

static const struct tpp_optdoc opts[] = {
	{{"out", required_argument, 0, O_OUT}, "FILE", "write the calibration YAML here (atomically; required)"},
	{{"backend", required_argument, 0, O_BACKEND}, "NAME", "cpu (MPI + BLAS, default) or cuda (NCCL + cuBLAS, one GPU per process)"},
	{{"quick", no_argument, 0, O_QUICK}, NULL, "small sizes and few iterations (1 KiB..256 KiB, 5 iterations; for tests)"},
	{{"min-bytes", required_argument, 0, O_MIN_BYTES}, "N", "smallest message, nccl-tests convention; K/M/G suffixes are binary (default 8)"},
	{{"max-bytes", required_argument, 0, O_MAX_BYTES}, "N", "largest message (default 64M); sizes double from --min-bytes"},
	{{"iters", required_argument, 0, O_ITERS}, "N", "timed iterations per size and GEMM shape (default 20)"},
	{{"warmup", required_argument, 0, O_WARMUP}, "N", "untimed iterations before them (default 5)"},
	{{"gemm", no_argument, 0, O_GEMM}, NULL, "run the GEMM sweep (default)"},
	{{"no-gemm", no_argument, 0, O_NO_GEMM}, NULL, "skip the GEMM sweep"},
	{{"collectives", required_argument, 0, O_COLLS}, "LIST", "comma-separated subset of all_reduce,all_gather,reduce_scatter,all_to_all,send_recv, or none (default all)"},
	{{"gemm-settle", required_argument, 0, O_SETTLE}, "S", "before each precision's GEMM sweep, run a large shape back to back for up to S seconds of GEMMs, until its rate holds within 1 % over 2 s (after at least 5 s): the device's sustained, power-limited clock, which training runs at (default 20; --quick 0)"},
	{{"gemm-precisions", required_argument, 0, O_PRECS}, "LIST", "comma-separated subset of fp32,tf32,fp16,bf16 (default: all the backend has)"},
	{{"gemm-shapes", required_argument, 0, O_SHAPES}, "LIST", "GEMM shapes MxNxK,... (default m,n,k in {128..2048}; --quick {64,128})"},
	{{"model", required_argument, 0, O_MODEL}, "NAME|FILE", "also time the GEMMs of this model's layers and logits for TP 1, 2, 4, ... (forward, input- and weight-gradient orientations)"},
	{{"tokens", required_argument, 0, O_TOKENS}, "T", "with --model: tokens per micro-batch (default: the model's sequence length)"},
	{{"max-tp", required_argument, 0, O_MAX_TP}, "N", "with --model: largest TP degree (default 8)"},
	{{"timeout", required_argument, 0, O_TIMEOUT}, "S", "abort the run when one step takes more than S seconds (default 300, 0 = never)"},
	{{"progress", no_argument, 0, O_PROGRESS}, NULL, "show progress on stderr (default: when stderr is a terminal; under mpiexec it is a pipe)"},
	{{"no-progress", no_argument, 0, O_NO_PROGRESS}, NULL, "never show progress"},
	{{"import", required_argument, 0, O_IMPORT}, "FILE", "instead of measuring, read nccl-tests output (text or -J JSON); no MPI needed"},
	{{"op", required_argument, 0, O_OP}, "NAME", "with --import: the collective, all_reduce, all_gather, reduce_scatter, all_to_all or send_recv (default: from the file, else its name)"},
	{{"group", required_argument, 0, O_GROUP}, "N", "with --import: ranks in the measured group (required)"},
	{{"tier", required_argument, 0, O_TIER}, "T", "with --import: the cluster tier the group spans (default 0; a group on several hosts needs it)"},
	{{"help", no_argument, 0, O_HELP}, NULL, "this help"},
};

/* getopt's short options (the help shows them beside the long ones) */
static const char shortopts[] = ":o:h";

static void calibrate_usage(FILE *f)
{
	fprintf(f,
		"usage: mpiexec -np N tpplan calibrate --out FILE [--backend cpu|cuda] [options]\n"
		"       tpplan calibrate --import FILE --group N [--op NAME] [--tier T] --out FILE\n\n"
		"Measures collectives (every power-of-two group inside a node, tier 0; all\n"
		"ranks and one-rank-per-node rails across nodes, tier 1) and GEMMs, fits\n"
		"t = alpha + bytes * factor(n) / busbw per table and writes a calibration\n"
		"file (schema tpplan.calibration/v1) that --cluster files can name.\n\n");
	tpp_cli_print_opts(f, opts, TPP_ARRAY_LEN(opts), 24, shortopts);
	fprintf(f, "\nexit codes: 0 ok, 1 a correctness check failed, 2 usage, 3 input error,\n"
		   "4 backend or system error (including a --timeout abort)\n");
}

/* Strict byte count: digits with an optional binary suffix K, M, G (or
 * KiB, MiB, GiB), in [1, 2^40]. */
static int parse_bytes(const char *flag, const char *arg, double *out)
{
	char *end;
	unsigned long long v;
	double mult = 1;
	errno = 0;
	if (!arg || !(*arg >= '0' && *arg <= '9'))
		goto bad;
	v = strtoull(arg, &end, 10);
	if (end == arg || errno == ERANGE)
		goto bad;
	if (*end) {
		if (strchr("kK", *end))
			mult = 1024.0;
		else if (strchr("mM", *end))
			mult = 1024.0 * 1024;
		else if (strchr("gG", *end))
			mult = 1024.0 * 1024 * 1024;
		else
			goto bad;
		end++;
		if (*end && strcmp(end, "iB") && strcmp(end, "B"))
			goto bad;
	}
	if (v < 1 || (double)v * mult > 1099511627776.0) {
		fprintf(stderr, "tpplan: %s: %s is out of range [1, 1024G]\n", flag, arg);
		return TPP_E_USAGE;
	}
	*out = (double)v * mult;
	return TPP_OK;
bad:
	fprintf(stderr, "tpplan: %s: expected a byte count such as 1024, 64K or 16M, got '%s'\n",
		flag, arg ? arg : "");
	return TPP_E_USAGE;
}

/* strtok_r skips empty items: "a,,b", a leading or trailing comma (an
 * unset shell variable in a list) are mistakes, as in --layout. */
static int has_empty_item(const char *arg)
{
	return arg[0] == ',' || (arg[0] && arg[strlen(arg) - 1] == ',') || strstr(arg, ",,");
}

/* "all_reduce,send_recv" -> bit mask over enum tpp_coll; "none" -> 0. */
static int parse_colls(const char *arg, unsigned *mask)
{
	char buf[256], *item, *save = NULL;
	unsigned m = 0;
	int i;
	if (!strcmp(arg, "none")) {
		*mask = 0;
		return TPP_OK;
	}
	if (strlen(arg) >= sizeof(buf) || !*arg || has_empty_item(arg))
		goto bad;
	tpp_strlcpy(buf, arg, sizeof(buf));
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < TPP_COLL__COUNT; i++)
			if (!strcmp(item, tpp_coll_names[i]))
				break;
		if (i == TPP_COLL__COUNT) {
			fprintf(stderr, "tpplan: --collectives: unknown collective '%s' (all_reduce, all_gather, reduce_scatter, all_to_all, send_recv)\n",
				item);
			return TPP_E_USAGE;
		}
		m |= 1u << i;
	}
	if (!m)
		goto bad;
	*mask = m;
	return TPP_OK;
bad:
	fprintf(stderr, "tpplan: --collectives: expected a comma-separated list, got '%s'\n", arg);
	return TPP_E_USAGE;
}

static int parse_precs(const char *arg, unsigned *mask)
{
	char buf[128], *item, *save = NULL;
	unsigned m = 0;
	if (strlen(arg) >= sizeof(buf) || has_empty_item(arg))
		goto bad;
	tpp_strlcpy(buf, arg, sizeof(buf));
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		int p = tpp_prec_parse(item);
		if (p < 0) {
			fprintf(stderr, "tpplan: --gemm-precisions: unknown precision '%s' (fp32, tf32, fp16, bf16)\n",
				item);
			return TPP_E_USAGE;
		}
		/* no backend times fp8 GEMMs (they need cuBLASLt's scaling
		 * factors): said now, not after MPI has started */
		if (p == TPP_PREC_FP8) {
			fprintf(stderr, "tpplan: --gemm-precisions: fp8 GEMMs are not measured by any backend "
					"(fp32, tf32, fp16, bf16); planning derives fp8's ceiling from the 16-bit one\n");
			return TPP_E_USAGE;
		}
		m |= 1u << p;
	}
	if (!m)
		goto bad;
	*mask = m;
	return TPP_OK;
bad:
	fprintf(stderr, "tpplan: --gemm-precisions: expected a comma-separated list, got '%s'\n", arg);
	return TPP_E_USAGE;
}

/* "4096x4096x4096,8192x1024x4096" -> shapes (malloc'd, caller frees). */
struct gshape {
	int m, n, k;
};

static int parse_shapes(const char *arg, struct gshape **out, int *n)
{
	const char *p = arg;
	struct gshape *v = NULL;
	int cnt = 0, cap = 0;
	while (*p) {
		long d[3];
		int j;
		for (j = 0; j < 3; j++) {
			char *end;
			errno = 0;
			if (!(*p >= '0' && *p <= '9'))
				goto bad;
			d[j] = strtol(p, &end, 10);
			if (errno == ERANGE || d[j] < 1 || d[j] > (1L << 20))
				goto bad;
			p = end;
			if (j < 2) {
				if (*p != 'x' && *p != 'X')
					goto bad;
				p++;
			}
		}
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
		if (cnt == cap) {
			struct gshape *nv;
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, sizeof(*v) * (size_t)cap);
			if (!nv)
				goto bad;
			v = nv;
		}
		v[cnt++] = (struct gshape){(int)d[0], (int)d[1], (int)d[2]};
	}
	if (!cnt)
		goto bad;
	*out = v;
	*n = cnt;
	return TPP_OK;
bad:
	free(v);
	fprintf(stderr, "tpplan: --gemm-shapes: expected MxNxK[,MxNxK...] with each in [1, 1048576], got '%s'\n",
		arg);
	return TPP_E_USAGE;
}

/*
 * --out names a file that holds something else than a calibration (the
 * --model file, a cluster file, notes): refused before anything is
 * measured.  A calibration there is kept beside the new one
 * (tpp_cal_write_keep), which suits a measurement, not another file moved
 * aside under a name that calls it a calibration.  A calibration is told
 * by its schema line among the first lines that are not comments or
 * blank (a damaged or truncated one still has it).
 */
/* What is at path: 0 nothing there (or no regular file, or unreadable),
 * 1 an empty file, 2 a calibration, 3 something else. */
static int out_holds(const char *path)
{
	struct stat st;
	char line[512];
	FILE *f;
	int cal = 0, n = 0;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	if (st.st_size == 0)
		return 1;
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!cal && n < 16 && fgets(line, sizeof(line), f)) {
		const char *p = line + strspn(line, " \t");
		if (*p == '#' || *p == '\n' || *p == '\r' || !*p)
			continue;
		n++;
		cal = !strncmp(p, "schema:", 7) &&
		      strstr(p, TPP_CAL_SCHEMA) != NULL;
	}
	fclose(f);
	return cal ? 2 : 3;
}

static int not_a_calibration(const char *out)
{
	/* nothing there, or what check_out_dir refuses; an empty file; a
	 * calibration: fine */
	if (out_holds(out) != 3)
		return TPP_OK;
	fprintf(stderr, "tpplan: calibrate: --out %s holds a file that is not a tpplan calibration "
			"(no 'schema: %s' line); it is not replaced: name another file\n",
		out, TPP_CAL_SCHEMA);
	return TPP_E_USAGE;
}

/* The file's directory must exist and be writable before hours of
 * measurement are spent: tpp_afile_check, which the write runs too, now.
 * Every refusal here is a usage error (2), as for --timeline: another
 * --out is the remedy (a write that fails after the sweep is a system
 * error, 4, and the measurement is rescued). */
static int check_out_dir(const char *path)
{
	if (strlen(path) >= 1024) {
		fprintf(stderr, "tpplan: --out: path too long\n");
		return TPP_E_USAGE;
	}
	/* refused now, not after the sweep (tpp_cal_write_keep refuses it too) */
	{
		struct stat st;
		if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
			fprintf(stderr, "tpplan: --out %s: not a regular file (a directory, FIFO or device)\n",
				path);
			return TPP_E_USAGE;
		}
	}
	/* a directory that is missing, not one or not writable; links that
	 * cannot be followed or loop, a target directory that a link points
	 * into and is missing: also now */
	{
		struct tpp_err err;
		if (tpp_afile_check(path, &err)) {
			fprintf(stderr, "tpplan: --out %s\n", err.msg);
			return TPP_E_USAGE;
		}
		return TPP_OK;
	}
}

static void summary(FILE *f, const struct tpp_calibration *cal, const char *path)
{
	int i, p;
	if (cal->ranks_per_node > 0)
		fprintf(f, "calibration (%s, %d rank%s, %d per node) written to %s\n",
			cal->backend, cal->ranks, cal->ranks == 1 ? "" : "s",
			cal->ranks_per_node, path);
	else
		fprintf(f, "calibration (%s, %d rank%s) written to %s\n", cal->backend,
			cal->ranks, cal->ranks == 1 ? "" : "s", path);
	if (cal->ncoll) {
		fprintf(f, "%-15s %4s %6s %5s %6s %10s %11s %9s\n", "collective", "tier",
			"group", "conc", "sizes", "alpha_us", "busbw_GB/s", "held-out");
		for (i = 0; i < cal->ncoll; i++) {
			const struct tpp_cal_coll *t = &cal->coll[i];
			fprintf(f, "%-15s %4d %6d %5d %6d ", tpp_coll_names[t->op], t->tier,
				t->group, t->concurrent, t->npoints);
			if (t->fit.valid)
				fprintf(f, "%10.2f %11.3f %8.1f%%\n", t->fit.alpha_s * 1e6,
					t->fit.busbw_Bps / TPP_GB, t->fit.mape_heldout * 100);
			else
				fprintf(f, "%10s %11s %9s\n", "-", "-", "no fit");
		}
	}
	for (p = 0; p < TPP_PREC__COUNT; p++) {
		const struct tpp_cal_gemm *g = &cal->gemm[p];
		int best = 0;
		if (!g->valid || !g->npoints)
			continue;
		for (i = 1; i < g->npoints; i++)
			if (g->pts[i].flops_per_s > g->pts[best].flops_per_s)
				best = i;
		fprintf(f, "gemm %-5s %3d shapes, best %.3f TFLOP/s at %dx%dx%d",
			tpp_prec_names[p], g->npoints, g->best_flops_per_s / TPP_TFLOPS,
			g->pts[best].m, g->pts[best].n, g->pts[best].k);
		if (g->settled_s > 0 && g->settled_m > 0)
			fprintf(f, " (after %.1f s settling at %dx%dx%d: %.3f TFLOP/s)\n", g->settled_s,
				g->settled_m, g->settled_n, g->settled_k, g->settled_flops_per_s / TPP_TFLOPS);
		else if (g->settled_s > 0)
			fprintf(f, " (after %.1f s settling: %.3f TFLOP/s)\n", g->settled_s,
				g->settled_flops_per_s / TPP_TFLOPS);
		else
			fputs(" (not settled: may be boost-clock bursts)\n", f);
	}
}

/* The write to --out failed after the measurement (a full disk, the
 * directory gone): the measurement is not lost -- it goes to a fresh file
 * in $TMPDIR, or failing that to standard output, and stderr says where. */
static void rescue(const struct tpp_calibration *cal, const char *out)
{
	char saved[TPP_AFILE_PATH];
	struct tpp_err err;
	int rc = tpp_cal_write_rescue(cal, saved, sizeof(saved), &err);
	if (!rc) {
		fprintf(stderr, "tpplan: calibrate: the calibration is saved in %s instead; "
				"move it to %s once that can be written\n", saved, out);
		return;
	}
	tpp_err_print(stderr, &err);
	if (rc == TPP_E_INPUT)
		return;
	fprintf(stderr, "tpplan: calibrate: the calibration follows on standard output; "
			"save it as %s once that can be written\n", out);
	fflush(stderr);
	if (tpp_cal_write_stream(cal, stdout, &err))
		tpp_err_print(stderr, &err);
}

/* Fit (keep going on a fit failure: raw tables are still worth keeping),
 * write, print.  Rank 0 / the import path only. */
static int fit_write(struct tpp_calibration *cal, const char *out, int measured)
{
	struct tpp_err err;
	int rc = TPP_OK, wrc, p, ngemm = 0;
	for (p = 0; p < TPP_PREC__COUNT; p++)
		ngemm += cal->gemm[p].valid && cal->gemm[p].npoints > 0;
	/* an empty calibration must not replace a measured one */
	if (cal->ncoll == 0 && ngemm == 0) {
		fprintf(stderr, "tpplan: calibrate: nothing was measured (every collective and GEMM "
				"asked for was skipped); %s is left as it was\n", out);
		return TPP_E_USAGE;
	}
	if ((rc = tpp_cal_fit_all(cal, &err))) {
		fprintf(stderr, "tpplan: calibrate: fitting failed, writing the raw tables only: ");
		tpp_err_print(stderr, &err);
	}
	char kept[TPP_AFILE_PATH + 32];
	/* checked before the sweep (not_a_calibration), but a file can
	 * have come since: what is kept is said as what it is */
	int held = out_holds(out);
	if ((wrc = tpp_cal_write_keep(cal, out, kept, sizeof(kept), &err))) {
		tpp_err_print(stderr, &err);
		if (measured) /* an import can be run again from its file */
			rescue(cal, out);
		/* --out was checked before (check_out_dir): what fails now
		 * is the system's (a directory made in its place, ...) */
		return wrc == TPP_E_USAGE ? TPP_E_SYSTEM : wrc;
	}
	summary(stdout, cal, out);
	if (kept[0])
		printf("the %s that was at %s is kept as %s\n",
		       held == 2 ? "calibration" : held == 1 ? "empty file" : "file (not a calibration)",
		       out, kept);
	return rc;
}

static int run_import(const char *path, int op, int group, int tier,
		      const char *out)
{
	struct tpp_calibration *cal = calloc(1, sizeof(*cal));
	struct tpp_err err;
	time_t now = time(NULL);
	struct tm tm;
	int rc;
	if (!cal) {
		fprintf(stderr, "tpplan: out of memory\n");
		return TPP_E_SYSTEM;
	}
	if ((rc = tpp_cal_import_warn(path, (enum tpp_coll)op, group, tier, cal, stderr, &err))) {
		tpp_err_print(stderr, &err);
		free(cal);
		return rc;
	}
	if (!cal->created_utc[0] && gmtime_r(&now, &tm))
		strftime(cal->created_utc, sizeof(cal->created_utc),
			 "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!cal->tpplan_version[0])
		tpp_strlcpy(cal->tpplan_version, tpp_version, sizeof(cal->tpplan_version));
	if (!cal->backend[0])
		tpp_strlcpy(cal->backend, "import", sizeof(cal->backend));
	if (!cal->source[0])
		tpp_strlcpy(cal->source, path, sizeof(cal->source));
	if (!cal->ranks)
		cal->ranks = group;
	rc = fit_write(cal, out, 0);
	free(cal);
	return rc;
}

int tpp_cmd_calibrate(int argc, char **argv)
{
	struct option lo[TPP_ARRAY_LEN(opts) + 1];
	const char *out = NULL, *import = NULL, *backend = "cpu";
	int quick = 0, gemm = 1, iters = -1, warmup = -1, timeout = 300, progress = -1;
	int op = TPP_COLL__COUNT, group = 0, tier = -1, measure_flag = 0, import_flag = 0;
	double min_bytes = 0, max_bytes = 0, settle = -1;
	unsigned colls = (1u << TPP_COLL__COUNT) - 1, precs = 0;
	struct gshape *shapes = NULL;
	int nshapes = 0, ch, rc = TPP_OK, tokens = 0, max_tp = 8;
	const char *model_arg = NULL;

	tpp_cli_quiet_until_mpi();
	tpp_cli_long_opts(opts, TPP_ARRAY_LEN(opts), lo);
	optind = 1;
	opterr = 0;
	while ((ch = tpp_cli_getopt(argc, argv, shortopts, lo)) != -1) {
		rc = TPP_OK;
		switch (ch) {
		case O_OUT: rc = tpp_cli_once("calibrate: ", "--out", "", &out, optarg); break;
		case O_BACKEND: backend = optarg; measure_flag = 1; break;
		case O_QUICK: quick = 1; measure_flag = 1; break;
		case O_MIN_BYTES: rc = parse_bytes("--min-bytes", optarg, &min_bytes); measure_flag = 1; break;
		case O_MAX_BYTES: rc = parse_bytes("--max-bytes", optarg, &max_bytes); measure_flag = 1; break;
		case O_ITERS: rc = tpp_cli_int("--iters", optarg, 1, 100000, &iters); measure_flag = 1; break;
		case O_WARMUP: rc = tpp_cli_int("--warmup", optarg, 0, 100000, &warmup); measure_flag = 1; break;
		case O_GEMM: gemm = 1; measure_flag = 1; break;
		case O_NO_GEMM: gemm = 0; measure_flag = 1; break;
		case O_COLLS: rc = parse_colls(optarg, &colls); measure_flag = 1; break;
		case O_PRECS: rc = parse_precs(optarg, &precs); measure_flag = 1; break;
		case O_SHAPES:
			free(shapes);
			shapes = NULL;
			rc = parse_shapes(optarg, &shapes, &nshapes);
			measure_flag = 1;
			break;
		case O_TIMEOUT: rc = tpp_cli_int("--timeout", optarg, 0, 7 * 86400, &timeout); measure_flag = 1; break;
		case O_SETTLE: rc = tpp_cli_double("--gemm-settle", optarg, 0, 3600, &settle); measure_flag = 1; break;
		case O_MODEL: rc = tpp_cli_once("calibrate: ", "--model", "", &model_arg, optarg); measure_flag = 1; break;
		case O_TOKENS: rc = tpp_cli_int("--tokens", optarg, 1, 1 << 20, &tokens); measure_flag = 1; break;
		case O_MAX_TP: rc = tpp_cli_int("--max-tp", optarg, 1, 1024, &max_tp); measure_flag = 1; break;
		case O_PROGRESS: progress = 1; measure_flag = 1; break;
		case O_NO_PROGRESS: progress = 0; measure_flag = 1; break;
		case O_IMPORT:
			rc = tpp_cli_once("calibrate: ", "--import",
					  " (import one nccl-tests file per calibration)", &import, optarg);
			break;
		case O_OP: {
			int i;
			for (i = 0; i < TPP_COLL__COUNT; i++)
				if (!strcmp(optarg, tpp_coll_names[i]))
					break;
			if (i == TPP_COLL__COUNT) {
				fprintf(stderr, "tpplan: --op: unknown collective '%s' (all_reduce, all_gather, reduce_scatter, all_to_all, send_recv)\n",
					optarg);
				rc = TPP_E_USAGE;
			}
			op = i;
			import_flag = 1;
			break;
		}
		case O_GROUP: rc = tpp_cli_int("--group", optarg, 2, 1 << 24, &group); import_flag = 1; break;
		case O_TIER: rc = tpp_cli_int("--tier", optarg, 0, TPP_MAX_TIERS - 1, &tier); import_flag = 1; break;
		case O_HELP: free(shapes); calibrate_usage(stdout); return TPP_OK;
		default: rc = tpp_cli_bad_option(ch, argv, "calibrate"); break;
		}
		if (rc)
			goto out;
	}
	if ((rc = tpp_cli_no_operands(argc, argv)))
		goto out;
	rc = TPP_E_USAGE;
	if (!out) {
		fprintf(stderr, "tpplan: calibrate: --out FILE is required (try `tpplan calibrate --help`)\n");
		goto out;
	}
	if (!*out || (import && !*import)) {
		fprintf(stderr, "tpplan: calibrate: %s: the file name is empty\n",
			*out ? "--import" : "--out");
		goto out;
	}
	if (import) {
		struct stat si, so;
		if (!stat(import, &si) && !stat(out, &so) &&
		    si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
			fprintf(stderr, "tpplan: calibrate: --out %s is the --import file: the calibration would replace the measurement\n",
				out);
			goto out;
		}
		if (not_a_calibration(out) || check_out_dir(out))
			goto out;
		/* every rank of an mpiexec would import and write the same
		 * file, each keeping the one before as a backup */
		{
			static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
								 "PMIX_SIZE"};
			size_t k;
			for (k = 0; k < TPP_ARRAY_LEN(size_vars); k++) {
				const char *v = getenv(size_vars[k]);
				if (v && atoi(v) > 1) {
					fprintf(stderr, "tpplan: calibrate: --import needs no MPI: run it once, not under mpiexec with %s ranks\n",
						v);
					goto out;
				}
			}
		}
		if (measure_flag) {
			fprintf(stderr, "tpplan: calibrate: --import takes only --op, --group, --tier and --out\n");
			goto out;
		}
		if (!group) {
			fprintf(stderr, "tpplan: calibrate: --import needs --group N (ranks in the measured group)\n");
			goto out;
		}
		rc = run_import(import, op, group, tier, out);
		goto out;
	}
	if (import_flag) {
		fprintf(stderr, "tpplan: calibrate: --op, --group and --tier go with --import\n");
		goto out;
	}
	if (not_a_calibration(out))
		goto out;
	if (min_bytes && max_bytes && min_bytes > max_bytes) {
		fprintf(stderr, "tpplan: calibrate: --min-bytes is larger than --max-bytes\n");
		goto out;
	}
	if (!colls && !gemm) {
		fprintf(stderr, "tpplan: calibrate: --collectives none with --no-gemm leaves nothing to measure\n");
		goto out;
	}
	if ((tokens || max_tp != 8) && !model_arg) {
		fprintf(stderr, "tpplan: calibrate: --tokens and --max-tp go with --model\n");
		goto out;
	}
#ifdef TPP_HAVE_BENCH
	if (model_arg) {
		/* the model's shapes, then the given shapes or the default grid
		 * (for interpolation between them) */
		struct tpp_model mdl;
		struct tpp_err merr;
		struct tpp_cal_shape ms[TPP_CAL_MAX_GEMM];
		int nm, total, i, base = nshapes;
		struct gshape *all;
		if ((rc = tpp_model_load(model_arg, &mdl, &merr))) {
			tpp_err_print(stderr, &merr);
			goto out;
		}
		nm = tpp_cal_model_shapes(&mdl, tokens ? tokens : mdl.seq, max_tp, ms,
					  TPP_CAL_MAX_GEMM);
		if (!base) {
			const struct tpp_bench_shape *grid = NULL;
			base = tpp_bench_default_shapes(quick, &grid);
			free(shapes);
			shapes = calloc((size_t)base, sizeof(*shapes));
			if (!shapes) {
				rc = TPP_E_SYSTEM;
				goto out;
			}
			for (i = 0; i < base; i++)
				shapes[i] = (struct gshape){grid[i].m, grid[i].n, grid[i].k};
		}
		total = nm + base;
		if (total > TPP_CAL_MAX_GEMM) {
			fprintf(stderr, "tpplan: calibrate: %d GEMM shapes (%d of the model) exceed %d; lower --max-tp or give fewer --gemm-shapes\n",
				total, nm, TPP_CAL_MAX_GEMM);
			rc = TPP_E_USAGE;
			goto out;
		}
		all = realloc(shapes, sizeof(*all) * (size_t)total);
		if (!all) {
			rc = TPP_E_SYSTEM;
			goto out;
		}
		shapes = all;
		for (i = 0; i < nm; i++)
			shapes[base + i] = (struct gshape){ms[i].m, ms[i].n, ms[i].k};
		nshapes = total;
	}
#endif
	rc = TPP_E_USAGE;
#ifndef TPP_HAVE_BENCH
	(void)backend; (void)quick; (void)iters; (void)warmup; (void)timeout; (void)settle;
	(void)precs; (void)nshapes; (void)progress;
	fprintf(stderr, "tpplan was built without MPI; only --import is available\n");
	rc = TPP_E_SYSTEM;
	goto out;
#else
	{
		struct tpp_bench_opts o;
		struct tpp_bench_shape *bs = NULL;
		struct tpp_calibration *cal = NULL;
		struct tpp_err err;
		int rank = 0, size = 1, i;

		tpp_bench_opts_default(&o);
		if (quick)
			tpp_bench_opts_quick(&o);
		o.backend = backend;
		if (min_bytes)
			o.min_bytes = min_bytes;
		if (max_bytes)
			o.max_bytes = max_bytes;
		if (o.min_bytes > o.max_bytes) {
			/* one of them given, against the other's default */
			if (min_bytes)
				o.max_bytes = o.min_bytes;
			else
				o.min_bytes = o.max_bytes;
		}
		if (iters > 0)
			o.iters = iters;
		if (warmup >= 0)
			o.warmup = warmup;
		if (settle >= 0)
			o.settle_s = settle;
		o.coll_mask = colls;
		o.gemm = gemm;
		o.prec_mask = precs;
		o.timeout_s = timeout;
		o.progress = progress;
		if (nshapes) {
			bs = calloc((size_t)nshapes, sizeof(*bs));
			if (!bs) {
				fprintf(stderr, "tpplan: out of memory\n");
				rc = TPP_E_SYSTEM;
				goto out;
			}
			for (i = 0; i < nshapes; i++)
				bs[i] = (struct tpp_bench_shape){shapes[i].m, shapes[i].n, shapes[i].k};
			o.shapes = bs;
			o.nshapes = nshapes;
		}
		tpp_cli_speak_again();
		if ((rc = tpp_bench_init(&rank, &size, &err))) {
			tpp_err_print(stderr, &err);
			free(bs);
			goto out;
		}
		(void)size;
		cal = malloc(sizeof(*cal));
		rc = cal ? TPP_OK : TPP_E_SYSTEM;
		if (rc && rank == 0)
			fprintf(stderr, "tpplan: out of memory\n");
		if (!rc && rank == 0)
			rc = check_out_dir(out);
		rc = tpp_bench_agree(rc);
		if (!rc) {
			rc = tpp_bench_run(&o, cal, &err);
			if (rc && rank == 0) {
				fprintf(stderr, "tpplan: calibrate: ");
				tpp_err_print(stderr, &err);
			}
		}
		if (!rc && rank == 0)
			rc = fit_write(cal, out, 1);
		rc = tpp_bench_agree(rc);
		tpp_bench_finalize();
		free(cal);
		free(bs);
	}
#endif
out:
	free(shapes);
	return rc;
}
