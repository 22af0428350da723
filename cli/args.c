/*
 * args.c - strict parsing of flag values and of --layout strings, and the
 * problem options shared by `tpplan plan` and `tpplan report`.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibration.h"
#include "cli.h"
#include "tpp_yaml.h"

void tpp_cli_print_opts(FILE *f, const struct tpp_optdoc *d, size_t n,
			int width, const char *shorts)
{
	size_t i;
	for (i = 0; i < n; i++) {
		char left[64], sh[8] = "";
		int v = d[i].opt.val;
		if (!d[i].help)
			continue;
		/* the short form getopt takes for it, if any */
		if (v > ' ' && v < 127 && v != ':' && strchr(shorts, v))
			snprintf(sh, sizeof(sh), "-%c, ", v);
		snprintf(left, sizeof(left), "%s--%s%s%s", sh, d[i].opt.name,
			 d[i].arg ? " " : "", d[i].arg ? d[i].arg : "");
		fprintf(f, "  %-*s %s\n", width, left, d[i].help);
	}
}

/* the command's documented options (tpp_cli_long_opts), to name them */
static const struct tpp_optdoc *cli_docs;
static size_t cli_ndocs;

void tpp_cli_long_opts(const struct tpp_optdoc *d, size_t n, struct option *lo)
{
	size_t i;
	cli_docs = d;
	cli_ndocs = n;
	for (i = 0; i < n; i++)
		lo[i] = d[i].opt;
	memset(&lo[n], 0, sizeof(lo[n]));
}

/* The word getopt was reading when it returned last: optind before the
 * call (getopt moves past a cluster of short options such as "-x7" only
 * after its last letter, so afterwards argv[optind - 1] may be the word
 * before it). */
static int getopt_word = 1;

int tpp_cli_getopt(int argc, char *const *argv, const char *shortopts,
		   const struct option *longopts)
{
	getopt_word = optind > 0 ? optind : 1;
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

/* "--na" or "--na=v" that abbreviates two or more long options of the
 * command (the ones tpp_cli_long_opts gave getopt) and is none of them:
 * print those of them the help documents (getopt_long takes a unique
 * prefix, and refuses an ambiguous one as if it were unknown; test hooks
 * are not named).  Returns 1 if so. */
static int ambiguous_option(const char *w, const char *cmd)
{
	size_t n, i;
	int hits = 0, shown = 0;
	char list[512] = "";
	if (strncmp(w, "--", 2) || !cli_docs)
		return 0;
	w += 2;
	n = strcspn(w, "=");
	if (!n)
		return 0;
	for (i = 0; i < cli_ndocs; i++) {
		const char *name = cli_docs[i].opt.name;
		if (strncmp(name, w, n))
			continue;
		if (strlen(name) == n)
			return 0; /* exact */
		hits++;
		if (cli_docs[i].help)
			tpp_appendf(list, sizeof(list), "%s--%s", shown++ ? ", " : "", name);
	}
	if (hits < 2 || !shown)
		return 0;
	if (shown == 1) /* the others are test hooks */
		fprintf(stderr, "tpplan: ambiguous option '--%.*s': write it in full (%s)\n",
			(int)n, w, list);
	else
		fprintf(stderr, "tpplan: ambiguous option '--%.*s': %s (try `tpplan %s --help`)\n",
			(int)n, w, list, cmd);
	return 1;
}

int tpp_cli_bad_option(int ch, char *const *argv, const char *cmd)
{
	const char *w = argv[getopt_word];
	/* an operand there: getopt skipped (permuted) it to reach the option */
	if (!w || w[0] != '-')
		w = argv[optind - 1];
	if (ch == ':') {
		fprintf(stderr, "tpplan: option %s needs a value\n", argv[optind - 1]);
		return TPP_E_USAGE;
	}
	/* in a cluster of short options, the letter getopt did not know
	 * (optopt); a long option ("--frob", "--help=1") as written */
	if (ambiguous_option(w, cmd))
		return TPP_E_USAGE;
	if (w[0] == '-' && w[1] != '-' && optopt > 0 && optopt < 128 &&
	    isgraph(optopt))
		fprintf(stderr, "tpplan: unknown option '-%c' (try `tpplan %s --help`)\n",
			optopt, cmd);
	else
		fprintf(stderr, "tpplan: unknown option '%s' (try `tpplan %s --help`)\n",
			w, cmd);
	return TPP_E_USAGE;
}

int tpp_cli_no_operands(int argc, char *const *argv)
{
	if (optind >= argc)
		return TPP_OK;
	fprintf(stderr, "tpplan: unexpected argument '%s'\n", argv[optind]);
	return TPP_E_USAGE;
}

int tpp_cli_value(const char *cmd, const char *flag, const char *arg)
{
	if (arg && !strncmp(arg, "--", 2)) {
		fprintf(stderr, "tpplan: %s%s needs a value, got the option '%s' (a file of "
			"that name: ./%s)\n", cmd, flag, arg, arg);
		return TPP_E_USAGE;
	}
	return TPP_OK;
}

int tpp_cli_once(const char *cmd, const char *flag, const char *why,
		 const char **slot, const char *arg)
{
	int rc = tpp_cli_value(cmd, flag, arg);
	if (rc)
		return rc;
	if (*slot) {
		fprintf(stderr, "tpplan: %s%s is given twice%s\n", cmd, flag, why);
		return TPP_E_USAGE;
	}
	*slot = arg;
	return TPP_OK;
}

int tpp_cli_int(const char *flag, const char *arg, long lo, long hi, int *out)
{
	char *end;
	long v;
	errno = 0;
	v = strtol(arg ? arg : "", &end, 10);
	/* digits with an optional '-': strtol would also take " 8" and "+8" */
	if (!arg || end == arg || *end || errno == ERANGE ||
	    !(isdigit((unsigned char)arg[0]) ||
	      (arg[0] == '-' && isdigit((unsigned char)arg[1])))) {
		fprintf(stderr, "tpplan: %s: expected an integer, got '%s'\n",
			flag, arg ? arg : "");
		return TPP_E_USAGE;
	}
	if (v < lo || v > hi) {
		fprintf(stderr, "tpplan: %s: %ld is out of range [%ld, %ld]\n",
			flag, v, lo, hi);
		return TPP_E_USAGE;
	}
	*out = (int)v;
	return TPP_OK;
}

int tpp_cli_double(const char *flag, const char *arg, double lo, double hi,
		   double *out)
{
	char *end;
	double v;
	errno = 0;
	v = strtod(arg ? arg : "", &end);
	/* decimal only: strtod would also take " 1", "+1", "0x10" and "inf" */
	if (!arg || end == arg || *end || errno == ERANGE || !isfinite(v) ||
	    !(isdigit((unsigned char)arg[0]) || arg[0] == '.' ||
	      (arg[0] == '-' && (isdigit((unsigned char)arg[1]) || arg[1] == '.'))) ||
	    strpbrk(arg, "xXpP")) {
		fprintf(stderr, "tpplan: %s: expected a number, got '%s'\n",
			flag, arg ? arg : "");
		return TPP_E_USAGE;
	}
	if (v < lo || v > hi) {
		/* the text as given: %g rounds 0.50000001 to the bound 0.5 */
		fprintf(stderr, "tpplan: %s: %s is out of range [%g, %g]\n",
			flag, arg, lo, hi);
		return TPP_E_USAGE;
	}
	*out = v;
	return TPP_OK;
}

int tpp_cli_train_precision(const char *arg, enum tpp_prec *out)
{
	int p = tpp_prec_parse(arg);
	if (p < 0 || p == TPP_PREC_FP32 || p == TPP_PREC_TF32) {
		fprintf(stderr, "tpplan: --precision: expected bf16, fp16 or fp8, got '%s'\n", arg);
		return TPP_E_USAGE;
	}
	*out = (enum tpp_prec)p;
	return TPP_OK;
}

/* The index of `arg` among a flag's n value names; a usage error listing
 * them ("expected a or b") otherwise. */
static int cli_named_value(const char *flag, const char *arg,
			   const char *const *names, int n, int *out)
{
	int i;
	for (i = 0; i < n; i++)
		if (!strcmp(arg, names[i])) {
			*out = i;
			return TPP_OK;
		}
	fprintf(stderr, "tpplan: %s: expected", flag);
	for (i = 0; i < n; i++)
		fprintf(stderr, "%s %s", i == 0 ? "" : i == n - 1 ? " or" : ",", names[i]);
	fprintf(stderr, ", got '%s'\n", arg);
	return TPP_E_USAGE;
}

int tpp_cli_attention(const char *arg, enum tpp_attn *out)
{
	int v, rc = cli_named_value("--attention", arg, tpp_attn_names, TPP_ATTN__COUNT, &v);
	if (rc == TPP_OK)
		*out = (enum tpp_attn)v;
	return rc;
}

int tpp_cli_fp8_recipe(const char *arg, enum tpp_fp8_recipe *out)
{
	int v, rc = cli_named_value("--fp8-recipe", arg, tpp_fp8_recipe_names, TPP_FP8__COUNT, &v);
	if (rc == TPP_OK)
		*out = (enum tpp_fp8_recipe)v;
	return rc;
}

int tpp_cli_fp8_recipe_applies(int given, enum tpp_prec prec)
{
	if (!given || prec == TPP_PREC_FP8)
		return TPP_OK;
	fprintf(stderr, "tpplan: --fp8-recipe applies to --precision fp8\n");
	return TPP_E_USAGE;
}

static int parse_layout_keys(const char *arg, struct tpp_search *s,
			     struct tpp_err *err);

/*
 * Fields of one --layout that contradict each other whatever the model,
 * cluster and GPU count (the layout rules of tpp_layout_invalid_outer that
 * need no model): a usage error naming them, not a search that rejects
 * every layout and then looks for more GPUs.  Only fields given are
 * checked; a free one is searched within what the given ones allow.
 */
static int layout_contradiction(const char *arg, const struct tpp_search *s,
				struct tpp_err *err)
{
#define GIVEN(f) (s->f != TPP_FREE)
	const char *why = NULL;
	if (GIVEN(vp) && s->vp > 1 && GIVEN(pp) && s->pp == 1)
		why = "vp > 1 (the interleaved schedule) needs pp >= 2";
	else if (GIVEN(sched) && s->sched != TPP_SCHED_1F1B && GIVEN(pp) && s->pp == 1)
		why = s->sched == TPP_SCHED_ZB_H1 ? "schedule=zb-h1 needs pp >= 2"
						  : "schedule=interleaved needs pp >= 2";
	else if (GIVEN(sched) && s->sched == TPP_SCHED_INTERLEAVED && GIVEN(vp) && s->vp == 1)
		why = "schedule=interleaved needs vp >= 2 (model chunks per pipeline rank)";
	else if (GIVEN(sched) && s->sched != TPP_SCHED_INTERLEAVED && GIVEN(vp) && s->vp > 1)
		why = s->sched == TPP_SCHED_ZB_H1 ? "schedule=zb-h1 needs vp = 1"
						  : "schedule=1f1b needs vp = 1 (vp > 1 is the interleaved schedule)";
	else if (GIVEN(sp) && s->sp && GIVEN(tp) && s->tp == 1)
		why = "sp=1 (sequence parallelism) needs tp >= 2";
	else if (GIVEN(tp_overlap) && s->tp_overlap && GIVEN(sp) && !s->sp)
		why = "tp_overlap=1 needs sp=1 (it overlaps the sequence-parallel all-gathers and reduce-scatters)";
	else if (GIVEN(tp_overlap) && s->tp_overlap && GIVEN(tp) && s->tp == 1)
		why = "tp_overlap=1 needs tp >= 2";
	else if (GIVEN(recompute_layers) && GIVEN(recompute) && s->recompute != TPP_RECOMPUTE_FULL)
		why = "recompute_layers needs recompute=full (0: every layer)";
#undef GIVEN
	if (!why)
		return TPP_OK;
	return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0, "--layout: %s (in '%s')", why, arg);
}

/* --layout: the keys, their contradictions, then what they imply
 * (tpp_search_stated_recompute). */
int tpp_cli_parse_layout(const char *arg, struct tpp_search *s,
			 struct tpp_err *err)
{
	int rc = parse_layout_keys(arg, s, err);
	if (rc == TPP_OK)
		rc = layout_contradiction(arg, s, err);
	if (rc == TPP_OK)
		tpp_search_stated_recompute(s);
	return rc;
}

static int parse_layout_keys(const char *arg, struct tpp_search *s,
			     struct tpp_err *err)
{
	static const struct {
		const char *key;
		size_t off;
		int lo, hi;
	} keys[] = {
		{"tp", offsetof(struct tpp_search, tp), 1, 1 << 20},
		{"pp", offsetof(struct tpp_search, pp), 1, 1 << 20},
		{"dp", offsetof(struct tpp_search, dp), 1, 1 << 24},
		{"cp", offsetof(struct tpp_search, cp), 1, 1 << 20},
		{"mbs", offsetof(struct tpp_search, mbs), 1, 1 << 20},
		{"vp", offsetof(struct tpp_search, vp), 1, 1 << 16},
		{"sp", offsetof(struct tpp_search, sp), 0, 1},
		{"zero", offsetof(struct tpp_search, zero), 0, 3},
		{"tp_overlap", offsetof(struct tpp_search, tp_overlap), 0, 1},
		{"recompute_layers", offsetof(struct tpp_search, recompute_layers), 0, 1 << 20},
	};
	char buf[512], *item, *save = NULL;
	char seen[512] = ",";
	size_t i;

	if (strlen(arg) >= sizeof(buf))
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "--layout: value too long");
	/* strtok_r skips empty items: "tp=8,,pp=2", a trailing comma or an
	 * empty --layout (an unset shell variable) are mistakes, not "no
	 * constraint" */
	if (!arg[0] || arg[0] == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,"))
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "--layout: empty item in '%s'", arg);
	tpp_strlcpy(buf, arg, sizeof(buf));
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		char *end;
		long v;
		int is_switch;
		if (!eq)
			return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
					   "--layout: '%s' is not key=value", item);
		*eq = '\0';
		{
			/* a key given twice is a mistake, not "the last one wins" */
			char seen_key[40];
			snprintf(seen_key, sizeof(seen_key), ",%s=", item);
			if (strlen(item) < 32 && strstr(seen, seen_key))
				return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
						   "--layout: '%s' is given twice", item);
			if (strlen(seen) + strlen(seen_key) < sizeof(seen))
				strcat(seen, seen_key);
		}
		if (!strcmp(item, "recompute")) {
			int r;
			for (r = 0; r < TPP_RECOMPUTE__COUNT; r++)
				if (!strcmp(eq + 1, tpp_recompute_names[r]))
					break;
			if (r == TPP_RECOMPUTE__COUNT)
				return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
						   "--layout: recompute=%s: expected none, selective or full",
						   eq + 1);
			s->recompute = r;
			continue;
		}
		/* the switches: 0 / 1, or yes / no as validate's runs files
		 * write sp */
		is_switch = !strcmp(item, "sp") || !strcmp(item, "tp_overlap");
		if (is_switch && (!strcmp(eq + 1, "yes") || !strcmp(eq + 1, "no"))) {
			*(item[0] == 's' ? &s->sp : &s->tp_overlap) = !strcmp(eq + 1, "yes");
			continue;
		}
		if (!strcmp(item, "schedule")) {
			int k;
			for (k = 0; k < TPP_SCHED__COUNT; k++)
				if (!strcmp(eq + 1, tpp_sched_names[k]))
					break;
			if (k == TPP_SCHED__COUNT)
				return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
						   "--layout: schedule=%s: expected 1f1b, interleaved or zb-h1",
						   eq + 1);
			s->sched = k;
			continue;
		}
		for (i = 0; i < TPP_ARRAY_LEN(keys); i++)
			if (!strcmp(item, keys[i].key))
				break;
		if (i == TPP_ARRAY_LEN(keys))
			return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
					   "--layout: unknown key '%s' (known: tp, pp, dp, cp, mbs, vp, sp, recompute, recompute_layers, zero, schedule, tp_overlap)",
					   item);
		errno = 0;
		v = strtol(eq + 1, &end, 10);
		/* digits only: strtol would also take " 4" and "+4" */
		if (!isdigit((unsigned char)eq[1]) ||
		    end == eq + 1 || *end || errno == ERANGE || v < keys[i].lo ||
		    v > keys[i].hi)
			return is_switch
				? tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
					      "--layout: %s=%s: expected 0, 1, yes or no", item, eq + 1)
				: tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
					      "--layout: %s=%s: expected an integer in [%d, %d]",
					      item, eq + 1, keys[i].lo, keys[i].hi);
		*(int *)((char *)s + keys[i].off) = (int)v;
	}
	return TPP_OK;
}

/*
 * A calibration of another machine: a table for a tier this cluster does
 * not have (it would be dropped without a word), or a GEMM faster than the
 * GPU's peak (an MFU over 100 %; the cluster file refuses the same).
 */
static int cal_fits_cluster(const struct tpp_calibration *cal, const char *path,
			    const struct tpp_cluster *c)
{
	int i, p;
	for (i = 0; i < cal->ncoll; i++)
		if (cal->coll[i].tier >= c->ntiers) {
			char at[32] = "";
			if (cal->coll[i].line > 0)
				snprintf(at, sizeof(at), ":%d:%d", cal->coll[i].line, cal->coll[i].col);
			fprintf(stderr, "%s%s: error: collectives[%d]: tier %d, but cluster %s has %d tier%s (0..%d): a calibration of another cluster?\n",
				path, at, i, cal->coll[i].tier, c->name, c->ntiers,
				c->ntiers == 1 ? "" : "s", c->ntiers - 1);
			return TPP_E_INPUT;
		}
	for (p = 0; p < TPP_PREC__COUNT; p++) {
		const struct tpp_cal_gemm *g = &cal->gemm[p];
		double peak = c->gpu.peak_flops[p], best = g->best_flops_per_s;
		if (!g->valid || peak <= 0)
			continue;
		for (i = 0; i < g->npoints; i++)
			if (g->pts[i].flops_per_s > best)
				best = g->pts[i].flops_per_s;
		if (g->settled_flops_per_s > best)
			best = g->settled_flops_per_s;
		if (best > peak) {
			char at[32] = "";
			if (g->line > 0)
				snprintf(at, sizeof(at), ":%d:%d", g->line, g->col);
			fprintf(stderr, "%s%s: error: gemm %s: measured %g TFLOP/s%s exceeds the %s peak %g TFLOP/s of %s (cluster %s)\n",
				path, at, tpp_prec_names[p], best / TPP_TFLOPS,
				best == g->settled_flops_per_s ? " (settled)" : "",
				tpp_prec_names[p], peak / TPP_TFLOPS, c->gpu.name,
				c->name);
			return TPP_E_INPUT;
		}
	}
	return TPP_OK;
}

/* The warnings of the last calibration applied (tpp_cli_cal_warnings). */
static char cal_warnings[2048];

const char *tpp_cli_cal_warnings(void)
{
	return cal_warnings;
}

int tpp_cli_calibrate_cluster(struct tpp_cluster *c, const char *path,
			      struct tpp_calibration **keep, FILE *warn)
{
	struct tpp_calibration *cal;
	struct tpp_err err;
	char p[sizeof(c->calibration)];
	int rc;

	if (keep)
		*keep = NULL;
	if (path && !*path) {
		fprintf(stderr, "tpplan: --calibration: the file name is empty\n");
		return TPP_E_USAGE;
	}
	if (!path && c->calibration[0])
		path = c->calibration;
	if (!path)
		return TPP_OK;
	cal = malloc(sizeof(*cal));
	if (!cal) {
		fprintf(stderr, "tpplan: out of memory\n");
		return TPP_E_SYSTEM;
	}
	tpp_strlcpy(p, path, sizeof(p)); /* path may be c->calibration */
	cal_warnings[0] = '\0';
	if ((rc = tpp_cal_load(p, cal, &err)))
		tpp_err_print(stderr, &err);
	else if (!(rc = cal_fits_cluster(cal, p, c))) {
		/* the warnings go where the caller says, and are kept for
		 * the outputs that state the figures (plan JSON, report) */
		char *text = NULL;
		size_t len = 0;
		FILE *mem = warn ? open_memstream(&text, &len) : NULL;
		rc = tpp_cal_check(cal, p, c, mem ? mem : warn, &err);
		if (mem) {
			fclose(mem);
			if (text) {
				fputs(text, warn);
				tpp_strlcpy(cal_warnings, text, sizeof(cal_warnings));
			}
			free(text);
		}
		if (rc)
			tpp_err_print(stderr, &err);
	}
	if (rc) {
		/* say which cluster file named it */
		if (path == c->calibration && c->path[0] && c->calibration_line > 0)
			fprintf(stderr, "%s:%d:%d: note: the calibration file is named here\n",
				c->path, c->calibration_line, c->calibration_col);
		free(cal);
		return rc;
	}
	tpp_cal_apply(cal, p, c);
	if (keep)
		*keep = cal;
	else
		free(cal);
	return TPP_OK;
}

int tpp_cli_size_cluster(struct tpp_cluster *c, int gpus, int nodes,
			 enum tpp_prec prec, int *gpus_out)
{
	if (nodes) {
		long long total = (long long)nodes * c->gpus_per_node;
		if (total > (1 << 24)) {
			fprintf(stderr, "tpplan: --nodes %d: %lld GPUs is more than %d\n",
				nodes, total, 1 << 24);
			return TPP_E_USAGE;
		}
		gpus = (int)total;
	}
	if (gpus)
		tpp_cluster_resize(c, gpus);
	else
		gpus = tpp_cluster_gpus(c);
	if (gpus % c->gpus_per_node && gpus > c->gpus_per_node) {
		fprintf(stderr, "tpplan: --gpus %d is not a whole number of %d-GPU nodes\n",
			gpus, c->gpus_per_node);
		return TPP_E_USAGE;
	}
	if (!tpp_cluster_covers(c)) {
		fprintf(stderr, "tpplan: --gpus %d: the outermost tier '%s' of %s spans only %d GPUs\n",
			gpus, c->tiers[c->ntiers - 1].name, c->path,
			c->tiers[c->ntiers - 1].span_gpus);
		return TPP_E_USAGE;
	}
	if (c->gpu.peak_flops[prec] <= 0) {
		fprintf(stderr, "tpplan: --precision %s: %s has no %s peak in %s\n",
			tpp_prec_names[prec], c->gpu.name, tpp_prec_names[prec],
			c->path);
		return TPP_E_USAGE;
	}
	*gpus_out = gpus;
	return TPP_OK;
}

void tpp_cli_problem_init(struct tpp_cli_problem *p, struct tpp_cost_opts *co)
{
	memset(p, 0, sizeof(*p));
	p->top = 5;
	p->max_mbs = p->max_cp = 16;
	p->time_limit = 60;
	p->co = co;
}

_Static_assert(TPP_O__PROBLEM_END - TPP_O_GPUS == 23, "the names of tpp_cli_problem_opt");

/*
 * --train-tokens: a decimal number (tpp_cli_double's rules) with an
 * optional K, M, B or T (1e3, 1e6, 1e9, 1e12; either case), a whole
 * number of tokens (1.5 is refused, 1.5K is 1500), at least one token and
 * at most 1e18 (a million times the largest runs published).  The value
 * stored is rounded to the whole number, so that 2.16T is 2160000000000
 * and not the double nearest 2.16 * 1e12.
 */
static int cli_tokens(const char *flag, const char *arg, double *out)
{
	static const char units[] = "KMBT";
	static const double mult[] = {1e3, 1e6, 1e9, 1e12};
	char num[64], *end;
	size_t n = arg ? strlen(arg) : 0;
	double k = 1, v = 0;
	const char *u;
	int ok;
	if (n && n < sizeof(num) && (u = strchr(units, toupper((unsigned char)arg[n - 1]))) && *u) {
		k = mult[u - units];
		n--;
	}
	/* decimal only, as tpp_cli_double: no sign, space, hex, inf or nan */
	ok = n && n < sizeof(num) && (isdigit((unsigned char)arg[0]) || arg[0] == '.');
	if (ok) {
		memcpy(num, arg, n);
		num[n] = 0;
		errno = 0;
		v = strtod(num, &end);
		ok = end == num + n && errno != ERANGE && isfinite(v) && !strpbrk(num, "xXpP");
	}
	if (!ok) {
		fprintf(stderr, "tpplan: %s: expected a number of tokens (e.g. 300B, 15T, 2.5e12), got '%s'\n",
			flag, arg ? arg : "");
		return TPP_E_USAGE;
	}
	v *= k;
	/* digits alone: compared as the integer written, not its nearest
	 * double (1000000000000000001 is past 1e18; 9007199254740993 has
	 * no double and would be counted one token short) */
	if (strspn(num, "0123456789") == n) {
		unsigned long long exact;
		errno = 0;
		exact = strtoull(num, &end, 10);
		if (errno == ERANGE || exact > 1000000000000000000ULL) {
			fprintf(stderr, "tpplan: %s: %s is out of range [1, 1e18] tokens\n", flag, arg);
			return TPP_E_USAGE;
		}
		if (k == 1 && exact != (unsigned long long)v) {
			fprintf(stderr, "tpplan: %s: %s is above 2^53 and is not held exactly (the nearest is %.17g): give it rounded, e.g. %.6g\n",
				flag, arg, v, v);
			return TPP_E_USAGE;
		}
	}
	if (!(v >= 1 && v <= 1e18)) {
		fprintf(stderr, "tpplan: %s: %s is out of range [1, 1e18] tokens\n", flag, arg);
		return TPP_E_USAGE;
	}
	if (fabs(v - nearbyint(v)) > 1e-6 * v) {
		fprintf(stderr, "tpplan: %s: %s is not a whole number of tokens\n", flag, arg);
		return TPP_E_USAGE;
	}
	*out = nearbyint(v);
	return TPP_OK;
}

/* ceil(tokens / (gbs * seq)) in integers: a double quotient of two exact
 * whole numbers can land a hair above a whole step and add one. */
long long tpp_cli_train_steps(double tokens, int gbs, int seq)
{
	long long t, per = (long long)gbs * seq;
	if (!(tokens >= 1) || !(tokens <= 1e18) || per <= 0)
		return 0;
	t = llround(tokens);
	return t / per + (t % per != 0);
}

int tpp_cli_problem_opt(struct tpp_cli_problem *p, int ch, char *const *argv,
			const char *cmd)
{
	/* a value given twice is a mistake, not "the last one wins" (as
	 * --layout and --calibration, which say why themselves) */
	if (ch == TPP_O_MODEL || ch == TPP_O_CLUSTER ||
	    (ch >= TPP_O_GPUS && ch < TPP_O__PROBLEM_END && ch != TPP_O_LAYOUT &&
	     ch != TPP_O_CALIBRATION)) {
		int bit = ch == TPP_O_MODEL ? 0 : ch == TPP_O_CLUSTER ? 1 : ch - TPP_O_GPUS + 2;
		/* TPP_O_GPUS .. TPP_O__PROBLEM_END - 1, in order; NULL:
		 * a switch, harmless twice */
		static const char *const names[] = {
			"gpus", "nodes", "global-batch", "seq", "precision", "fp8-recipe",
			"top", NULL, "time-limit", NULL, "mem-reserve-gib", "attention",
			NULL, NULL, "gpu-variation", "max-mbs", "max-cp", NULL,
			"train-tokens", NULL, NULL, "zero3-rate-GBps", "zero3-gather",
		};
		const char *name = ch == TPP_O_MODEL ? "model" : ch == TPP_O_CLUSTER ? "cluster"
									: names[ch - TPP_O_GPUS];
		if (name && (p->seen >> bit & 1)) {
			fprintf(stderr, "tpplan: --%s is given twice\n", name);
			return TPP_E_USAGE;
		}
		p->seen |= 1ULL << bit;
	}
	/* `--model --cluster x`: getopt took the next option for the value */
	if ((ch == TPP_O_MODEL || ch == TPP_O_CLUSTER) && optarg && !strncmp(optarg, "--", 2)) {
		fprintf(stderr, "tpplan: --%s needs a value (a name or a file), got the option '%s'\n",
			ch == TPP_O_MODEL ? "model" : "cluster", optarg);
		return TPP_E_USAGE;
	}
	switch (ch) {
	case TPP_O_MODEL: p->model_arg = optarg; return TPP_OK;
	case TPP_O_CLUSTER: p->cluster_arg = optarg; return TPP_OK;
	case TPP_O_GPUS: return tpp_cli_int("--gpus", optarg, 1, 1 << 24, &p->gpus);
	case TPP_O_NODES: return tpp_cli_int("--nodes", optarg, 1, 1 << 22, &p->nodes);
	case TPP_O_GBS: return tpp_cli_int("--global-batch", optarg, 1, 1 << 26, &p->gbs);
	case TPP_O_SEQ: return tpp_cli_int("--seq", optarg, 1, 1 << 22, &p->seq);
	case TPP_O_TOP: return tpp_cli_int("--top", optarg, 1, TPP_TOP_MAX, &p->top);
	case TPP_O_CALIBRATION: /* calibrations are not merged */
		return tpp_cli_once("", "--calibration", " (one calibration file per plan)",
				    &p->calibration, optarg);
	case TPP_O_TIME_LIMIT:
		return tpp_cli_double("--time-limit", optarg, 0, 1e6, &p->time_limit);
	case TPP_O_PREC: return tpp_cli_train_precision(optarg, &p->co->prec);
	case TPP_O_FP8_RECIPE:
		p->fp8_recipe_given = 1;
		return tpp_cli_fp8_recipe(optarg, &p->co->fp8_recipe);
	case TPP_O_LAYOUT: /* a second would drop the first's keys */
		return tpp_cli_once("", "--layout", " (give every field in one --layout)",
				    &p->layout_arg, optarg);
	case TPP_O_RESERVE: {
		double gib;
		int rc = tpp_cli_double("--mem-reserve-gib", optarg, 0, 1e4, &gib);
		if (rc == TPP_OK)
			p->co->mem_reserve_bytes = gib * TPP_GiB;
		return rc;
	}
	case TPP_O_ATTN: return tpp_cli_attention(optarg, &p->co->attn);
	case TPP_O_NO_DP_OVERLAP: p->co->dp_overlap = 0; return TPP_OK;
	case TPP_O_NO_P2P_OVERLAP: p->co->p2p_overlap = 0; return TPP_OK;
	case TPP_O_P2P_SCATTER_GATHER: p->co->p2p_scatter_gather = 1; return TPP_OK;
	case TPP_O_GRADS16: p->co->grads16 = 1; return TPP_OK;
	case TPP_O_ZERO3_RATE: {
		double gbps;
		int rc = tpp_cli_double("--zero3-rate-GBps", optarg, 1e-3, 1e5, &gbps);
		if (rc == TPP_OK)
			p->co->zero3_rate_Bps = gbps * 1e9;
		return rc;
	}
	case TPP_O_ZERO3_GATHER: {
		static const char *const units[] = {"layer", "module"};
		return cli_named_value("--zero3-gather", optarg, units, 2,
				       &p->co->zero3_module_gather);
	}
	case TPP_O_GPU_SIGMA:
		return tpp_cli_double("--gpu-variation", optarg, 0, 0.5, &p->co->gpu_speed_sigma);
	case TPP_O_MAX_MBS:
		p->max_mbs_given = 1;
		return tpp_cli_int("--max-mbs", optarg, 1, 1024, &p->max_mbs);
	case TPP_O_MAX_CP:
		p->max_cp_given = 1;
		return tpp_cli_int("--max-cp", optarg, 1, 1024, &p->max_cp);
	case TPP_O_ANALYTIC: p->analytic = 1; return TPP_OK;
	case TPP_O_TRAIN_TOKENS: return cli_tokens("--train-tokens", optarg, &p->train_tokens);
	default: return tpp_cli_bad_option(ch, argv, cmd);
	}
}

int tpp_cli_problem_args(const struct tpp_cli_problem *p, int argc,
			 char *const *argv)
{
	int rc;
	if (p->gpus && p->nodes) {
		fprintf(stderr, "tpplan: give --gpus or --nodes, not both\n");
		return TPP_E_USAGE;
	}
	if ((rc = tpp_cli_fp8_recipe_applies(p->fp8_recipe_given, p->co->prec)))
		return rc;
	return tpp_cli_no_operands(argc, argv);
}

int tpp_cli_problem_search(const struct tpp_cli_problem *p,
			   const struct tpp_model *m, int gpus,
			   struct tpp_search *s)
{
	struct tpp_err err;
	tpp_search_default(s, gpus, p->gbs ? p->gbs : m->global_batch);
	s->top_k = p->top;
	s->max_mbs = p->max_mbs;
	s->max_cp = p->max_cp;
	s->time_limit_s = p->time_limit;
	s->simulate = !p->analytic;
	if (p->layout_arg && tpp_cli_parse_layout(p->layout_arg, s, &err)) {
		fprintf(stderr, "tpplan: %s\n", err.msg);
		return TPP_E_USAGE;
	}
	/* a bound given beside a --layout value past it: which one is
	 * meant?  (the default bounds give way to a stated value) */
	if (p->max_mbs_given && s->mbs != TPP_FREE && s->mbs > p->max_mbs) {
		fprintf(stderr, "tpplan: --layout %s: mbs=%d is more than --max-mbs %d (give one of them)\n",
			p->layout_arg, s->mbs, p->max_mbs);
		return TPP_E_USAGE;
	}
	if (p->max_cp_given && s->cp != TPP_FREE && s->cp > p->max_cp) {
		fprintf(stderr, "tpplan: --layout %s: cp=%d is more than --max-cp %d (give one of them)\n",
			p->layout_arg, s->cp, p->max_cp);
		return TPP_E_USAGE;
	}
	/* context parallelism rides on the fused attention kernels (the
	 * cost model's TPP_INV_CP_ATTN): with --attention unfused a stated
	 * cp > 1 can never plan */
	if (s->cp != TPP_FREE && s->cp > 1 && p->co->attn == TPP_ATTN_UNFUSED) {
		fprintf(stderr, "tpplan: --layout %s: cp=%d needs --attention flash (context parallelism runs on the fused attention kernels; --attention unfused given)\n",
			p->layout_arg, s->cp);
		return TPP_E_USAGE;
	}
	if (p->layout_arg) {
		/* the stated degrees must tile the GPUs: say so here rather
		 * than as an empty search */
		const int deg[4] = {s->tp, s->pp, s->dp, s->cp};
		long long prod = 1;
		int i, nfixed = 0;
		int over = 0;
		for (i = 0; i < 4; i++)
			if (deg[i] != TPP_FREE) {
				/* stop once past the GPU count: prod <= gpus
				 * < 2^31 times a degree < 2^25 cannot overflow */
				if (prod > gpus)
					over = 1;
				else
					prod *= deg[i];
				nfixed++;
			}
		if (over || prod > gpus) {
			char n[32] = "";
			if (!over)
				snprintf(n, sizeof(n), " %lld,", prod);
			fprintf(stderr, "tpplan: --layout %s: the stated degrees multiply to%s more than the %d GPUs planned for\n",
				p->layout_arg, n, gpus);
			return TPP_E_USAGE;
		}
		if (nfixed == 4 && prod != gpus) {
			fprintf(stderr, "tpplan: --layout %s: tp*pp*dp*cp = %lld, not the %d GPUs planned for\n",
				p->layout_arg, prod, gpus);
			return TPP_E_USAGE;
		}
		if (nfixed && gpus % prod) {
			fprintf(stderr, "tpplan: --layout %s: the stated degrees multiply to %lld, which does not divide the %d GPUs planned for\n",
				p->layout_arg, prod, gpus);
			return TPP_E_USAGE;
		}
	}
	return TPP_OK;
}

int tpp_cli_problem_model(const struct tpp_cli_problem *p, struct tpp_model *m)
{
	struct tpp_err err;
	int rc;
	if ((rc = tpp_model_load(p->model_arg, m, &err))) {
		tpp_err_print(stderr, &err);
		return rc;
	}
	if (p->seq) {
		m->seq = p->seq;
		if (tpp_model_check(m, NULL, &err)) {
			fprintf(stderr, "tpplan: --seq: %s\n", err.msg);
			return TPP_E_USAGE;
		}
	}
	return TPP_OK;
}

int tpp_cli_problem_cluster(const struct tpp_cli_problem *p,
			    struct tpp_cluster *c,
			    struct tpp_calibration **keep, int *gpus_out)
{
	struct tpp_err err;
	int rc;
	if ((rc = tpp_cluster_load(p->cluster_arg, NULL, c, &err))) {
		tpp_err_print(stderr, &err);
		return rc;
	}
	if ((rc = tpp_cli_calibrate_cluster(c, p->calibration, keep, stderr)))
		return rc;
	return tpp_cli_size_cluster(c, p->gpus, p->nodes, p->co->prec, gpus_out);
}

int tpp_cli_json_load(struct tpp_ydoc *d, const char *flag, const char *path,
		      const char *schema)
{
	struct tpp_err err;
	yaml_node_t *root;
	int rc;
	if (!*path) {
		fprintf(stderr, "tpplan: %s: the file name is empty\n", flag);
		return TPP_E_USAGE;
	}
	if ((rc = tpp_ydoc_load_json(d, path, &err))) {
		tpp_err_print(stderr, &err);
		return rc;
	}
	root = tpp_ydoc_root(d);
	if (!root || root->type != YAML_MAPPING_NODE)
		rc = tpp_err_set(&err, TPP_E_INPUT, path, 1, 1,
				 "%s: expected a JSON object with \"schema\": \"%s\"",
				 flag, schema);
	else
		rc = tpp_y_check_schema(d, schema, "JSON", &err);
	if (rc) {
		tpp_err_print(stderr, &err);
		tpp_ydoc_free(d);
	}
	return rc;
}

/*
 * Before MPI starts every rank parses the same options and files, so a
 * usage or input error would be printed once per rank.  The launcher
 * tells each process its rank in the environment (Open MPI
 * OMPI_COMM_WORLD_RANK; PMI_RANK / PMIX_RANK elsewhere): ranks other than
 * 0, and other than the first of each node, keep quiet until MPI is up
 * (tpp_cli_speak_again), and exit with the same status.  Run without a
 * launcher, nothing changes.
 */
static int saved_stderr = -1;

int tpp_cli_not_an_input(const char *flag, const char *out, const char *const *inputs,
			 size_t n)
{
	struct stat so, si;
	size_t i;
	if (!out || stat(out, &so) || !S_ISREG(so.st_mode))
		return TPP_OK;
	for (i = 0; i < n; i++)
		if (inputs[i] && *inputs[i] && !stat(inputs[i], &si) &&
		    si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
			fprintf(stderr, "tpplan: %s %s: that is the input file %s; "
				"not written over (name another file)\n", flag, out, inputs[i]);
			return TPP_E_USAGE;
		}
	return TPP_OK;
}

void tpp_cli_quiet_until_mpi(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
	/* the rank within its node (Open MPI, MPICH's Hydra, PMIx) */
	static const char *const local[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
					     "PMIX_LOCAL_RANK"};
	const char *r = NULL, *lr = NULL;
	size_t i;
	int nul;
	for (i = 0; i < TPP_ARRAY_LEN(vars) && !r; i++)
		r = getenv(vars[i]);
	if (!r || !strcmp(r, "0"))
		return;
	/* the first rank of every other node speaks too: a file can be
	 * missing or differ on one node (a node-local --calibration or
	 * --model), and its error would be nowhere else (once per node) */
	for (i = 0; i < TPP_ARRAY_LEN(local) && !lr; i++)
		lr = getenv(local[i]);
	if (lr && !strcmp(lr, "0"))
		return;
	fflush(stderr);
	saved_stderr = dup(2);
	nul = open("/dev/null", O_WRONLY);
	if (saved_stderr < 0 || nul < 0) {
		if (nul >= 0)
			close(nul);
		return;
	}
	dup2(nul, 2);
	close(nul);
}

void tpp_cli_speak_again(void)
{
	if (saved_stderr < 0)
		return;
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	saved_stderr = -1;
}

int tpp_cli_whole_nodes(long long gpus, int gpus_per_node)
{
	return gpus <= gpus_per_node || gpus % gpus_per_node == 0;
}

int tpp_cli_first_fit_steps(const struct tpp_search *s)
{
	int k = 0;
	while (k < TPP_CLI_FIRST_FIT_MAX && ((long long)s->gpus << (k + 1)) <= (1 << 24))
		k++;
	return k;
}

/*
 * The search s2 (prepared by the caller) for its best layout only, in
 * tmp->top[0], within what is left of s2->time_limit_s after *spent_s, to
 * which it adds the time it took: the follow-up searches of a plan share
 * its --time-limit.  TPP_E_INFEASIBLE with tmp->timed_out set when no
 * time was left.
 */
static int search_within(const struct tpp_model *m, const struct tpp_cluster *c,
			 const struct tpp_cost_opts *co, struct tpp_search *s2,
			 double *spent_s, struct tpp_plan *tmp)
{
	struct tpp_err err;
	int rc;
	if (s2->time_limit_s > 0) {
		if (s2->time_limit_s - *spent_s <= 0) {
			tmp->timed_out = 1;
			return TPP_E_INFEASIBLE;
		}
		s2->time_limit_s -= *spent_s;
	}
	s2->top_k = 1;
	s2->degree_tables = 0; /* its best alone is read */
	rc = tpp_plan_search(m, c, co, s2, tmp, &err);
	*spent_s += tmp->elapsed_s;
	return rc;
}

/*
 * The problem of s planned on n GPUs (search_within, the cluster resized
 * into alt, dp free: --layout's dp is the request's; without ZeRO-3
 * across nodes if exclude_optimistic).
 */
static int search_count(const struct tpp_model *m, const struct tpp_cluster *c,
			const struct tpp_cost_opts *co, const struct tpp_search *s, int n,
			int exclude_optimistic, double cutoff_s, double *spent_s,
			struct tpp_cluster *alt, struct tpp_plan *tmp)
{
	struct tpp_search s2 = *s;
	*alt = *c;
	tpp_cluster_resize(alt, n);
	s2.gpus = n;
	s2.dp = TPP_FREE;
	s2.exclude_optimistic = exclude_optimistic;
	s2.cutoff_s = cutoff_s;
	return search_within(m, alt, co, &s2, spent_s, tmp);
}

int tpp_cli_first_fit(const struct tpp_model *m, const struct tpp_cluster *c,
		      const struct tpp_cost_opts *co, const struct tpp_search *s,
		      double spent_s, struct tpp_cluster *alt, struct tpp_plan *tmp,
		      struct tpp_eval *found)
{
	int i, steps = tpp_cli_first_fit_steps(s);
	if (!steps)
		return -1;
	for (i = 1; i <= steps; i++) {
		int rc;
		/* a count past one node is whole nodes (--gpus refuses any
		 * other): 5 GPUs on 8-GPU nodes try 40, not 10 or 20 */
		if (!tpp_cli_whole_nodes(s->gpus << i, c->gpus_per_node))
			continue;
		rc = search_count(m, c, co, s, s->gpus << i, 0, 0, &spent_s, alt, tmp);
		if (rc == TPP_OK) {
			*found = tmp->top[0];
			return s->gpus << i;
		}
		if (rc != TPP_E_INFEASIBLE)
			return -1; /* an error: nothing to say */
		if (tmp->timed_out)
			return TPP_CLI_FIRST_FIT_TIMED_OUT - i; /* not known from 2^i x up */
	}
	return 0;
}

int tpp_cli_fewer_counts(const struct tpp_search *s, int gpus_per_node, int *out, int max)
{
	int rises[64];
	int i, k, n = 0, g = (int)tpp_gcd(s->gbs, s->gpus);
	if (gpus_per_node <= 0 || s->gpus < 2 * gpus_per_node || max < 1)
		return 0;
	/* the largest count of each rise of the gcd to twice or more,
	 * largest count first; none once no count can double it */
	for (k = (s->gpus - 1) / gpus_per_node;
	     n < (int)TPP_ARRAY_LEN(rises) && 2LL * g <= s->gbs && 2LL * k * gpus_per_node >= s->gpus;
	     k--) {
		int c = k * gpus_per_node, gc = (int)tpp_gcd(s->gbs, c);
		if (gc >= 2 * g) {
			rises[n++] = c;
			g = gc;
		}
	}
	if (n <= max) {
		memcpy(out, rises, n * sizeof(*out));
		return n;
	}
	/* the first rise (most GPUs), the last (most data parallelism) and
	 * evenly between */
	for (i = 0; i < max; i++)
		out[i] = rises[max == 1 ? 0 : (int)((long long)i * (n - 1) / (max - 1))];
	return max;
}

int tpp_cli_fewer_gpus(const struct tpp_model *m, const struct tpp_cluster *c,
		       const struct tpp_cost_opts *co, const struct tpp_search *s,
		       double *spent_s, const struct tpp_eval *best,
		       struct tpp_cluster *alt, struct tpp_plan *tmp, struct tpp_cli_fewer *fw)
{
	int counts[TPP_CLI_FEWER_MAX];
	int i, k = s->dp == TPP_FREE ? tpp_cli_fewer_counts(s, c->gpus_per_node, counts,
								TPP_CLI_FEWER_MAX) : 0;
	/* the step to beat: more than the measured spread shorter (a tie
	 * with the whole cluster is no reason to leave GPUs idle) */
	double beat = best ? best->step_s * (1 - TPP_MEASURED_SPREAD) : INFINITY;
	/* or a tie with it: as short within the spread, on fewer GPUs */
	double tie = best ? best->step_s * (1 + TPP_MEASURED_SPREAD) : -1;
	struct tpp_eval tied;
	int tie_gpus = 0;
	fw->gpus = 0;
	fw->tie = 0;
	fw->n_searched = 0;
	fw->complete = 1;
	for (i = 0; i < k; i++) {
		/* ZeRO-3 across nodes is priced optimistically (the
		 * cautions): against a best that is not, only layouts that
		 * are not either compete.  Only a step that ties or beats
		 * the best is read: none above `tie` is simulated (its
		 * bound proves it; a count with none under it is one with
		 * none that fits, for what follows). */
		int rc = search_count(m, c, co, s, counts[i], best && !tpp_eval_optimistic(best),
				      best ? tie : 0, spent_s, alt, tmp);
		if (rc != TPP_OK && (rc != TPP_E_INFEASIBLE || tmp->timed_out)) {
			fw->complete = 0; /* an error, or out of time */
			break;
		}
		fw->searched[fw->n_searched++] = counts[i];
		if (rc != TPP_OK)
			continue;
		if (tmp->top[0].step_s <= tie && counts[i] < s->gpus &&
		    (!tie_gpus || counts[i] < tie_gpus)) {
			tied = tmp->top[0]; /* the fewest GPUs that tie */
			tie_gpus = counts[i];
		}
		if (tmp->top[0].step_s >= beat)
			continue;
		if (!fw->gpus || tmp->top[0].step_s < fw->best.step_s) {
			fw->best = tmp->top[0];
			fw->gpus = counts[i];
		}
	}
	if (!fw->gpus && tie_gpus) {
		fw->best = tied;
		fw->gpus = tie_gpus;
		fw->tie = 1;
	}
	return fw->gpus;
}

const char *const tpp_cli_alt_status_names[] = {
	[TPP_ALT_NOT_NEEDED] = "not_needed",
	[TPP_ALT_FOUND] = "found",
	[TPP_ALT_NONE_FITS] = "none_fits",
	[TPP_ALT_STOPPED] = "stopped",
};

enum tpp_cli_alt_status tpp_cli_best_without_zero3(const struct tpp_model *m,
						   const struct tpp_cluster *c,
						   const struct tpp_cost_opts *co,
						   const struct tpp_search *s,
						   const struct tpp_plan *p, double *spent_s,
						   struct tpp_plan *tmp, struct tpp_cli_alt *alt)
{
	struct tpp_search s2 = *s;
	int rc;
	alt->status = TPP_ALT_NOT_NEEDED;
	if (!p->n_top || !tpp_eval_optimistic(&p->top[0]))
		return alt->status;
	alt->status = TPP_ALT_STOPPED;
	s2.zero = TPP_FREE; /* a --layout zero=3 is what is left out */
	s2.exclude_optimistic = 1;
	rc = search_within(m, c, co, &s2, spent_s, tmp);
	if (rc == TPP_OK) {
		alt->best = tmp->top[0];
		alt->status = TPP_ALT_FOUND;
	} else if (rc == TPP_E_INFEASIBLE && !tmp->timed_out) {
		alt->status = TPP_ALT_NONE_FITS;
	}
	return alt->status;
}

void tpp_cli_follow_ups(const struct tpp_model *m, const struct tpp_cluster *c,
			const struct tpp_cost_opts *co, const struct tpp_search *s,
			const struct tpp_plan *p, int rc, double *spent_s,
			struct tpp_cluster *alt, struct tpp_plan *tmp,
			struct tpp_cli_alt *nz, struct tpp_cli_fewer *fw,
			struct tpp_plan_ctx *x)
{
	*spent_s = p->elapsed_s;
	x->no_zero3 = NULL;
	x->fewer = NULL;
	x->more = NULL;
	/* not after a search stopped by its time limit, nor when nothing
	 * matched the layout */
	if (p->timed_out || !(rc == TPP_OK || (rc == TPP_E_INFEASIBLE && p->considered)))
		return;
	/* the best ZeRO-3 across nodes is priced optimistically: the best
	 * without it, for the caution to name */
	if (rc == TPP_OK) {
		tpp_cli_best_without_zero3(m, c, co, s, p, spent_s, tmp, nz);
		x->no_zero3 = nz;
	}
	tpp_cli_fewer_gpus(m, c, co, s, spent_s, rc == TPP_OK ? &p->top[0] : NULL, alt, tmp, fw);
	x->fewer = fw;
}

void tpp_cli_nodes_hint(char *buf, size_t size, int n, const struct tpp_cluster *c)
{
	if (n >= c->gpus_per_node && n % c->gpus_per_node == 0)
		snprintf(buf, size, " (--nodes %d)", n / c->gpus_per_node);
	else
		buf[0] = '\0';
}

size_t tpp_cli_fewer_text(char *buf, size_t size, const struct tpp_search *s,
			  const struct tpp_cluster *c, const struct tpp_cli_fewer *fw,
			  const struct tpp_eval *best)
{
	char lb[200], why[200], nodes[40];
	const struct tpp_eval *e = &fw->best;
	int n = fw->gpus, w;
	buf[0] = 0;
	if (n <= 0)
		return 0;
	tpp_layout_format(&e->layout, lb, sizeof(lb));
	tpp_cli_nodes_hint(nodes, sizeof(nodes), n, c);
	snprintf(why, sizeof(why), "dp divides the global batch %d and the GPU count, so tp*pp*cp "
		 "is a multiple of %d on %d GPUs, of %d on %d", s->gbs,
		 s->gpus / (int)tpp_gcd(s->gbs, s->gpus), s->gpus, n / (int)tpp_gcd(s->gbs, n), n);
	const char *opt = tpp_eval_optimistic(e) ? ", with ZeRO-3 across nodes, priced optimistically" : "";
	if (best && fw->tie)
		w = snprintf(buf, size, "Fewer GPUs: %d of the %d plan a step within the %.0f%% a "
			     "measurement varies (%.*f s against %.*f s, %.1f%% %s%s) and free %d GPUs "
			     "(%s).  Plan it with --gpus %d%s --layout %s",
			     n, s->gpus, 100 * TPP_MEASURED_SPREAD, tpp_step_digits(e->step_s),
			     e->step_s, tpp_step_digits(best->step_s), best->step_s,
			     100 * fabs(e->step_s / best->step_s - 1),
			     e->step_s > best->step_s ? "longer" : "shorter", opt, s->gpus - n, why,
			     n, nodes, lb);
	else if (best)
		w = snprintf(buf, size, "Fewer GPUs: %d of the %d plan a %.1f%% shorter step "
			     "(%.*f s against %.*f s)%s: %s.  Plan it with --gpus %d%s --layout %s",
			     n, s->gpus, 100 * (1 - e->step_s / best->step_s),
			     tpp_step_digits(e->step_s), e->step_s, tpp_step_digits(best->step_s),
			     best->step_s,
			     opt, why, n, nodes, lb);
	else
		w = snprintf(buf, size, "with %d of the %d GPUs a layout fits, %.*f s per step%s (%s): "
			     "--gpus %d%s --layout %s",
			     n, s->gpus, tpp_step_digits(e->step_s), e->step_s, opt, why, n, nodes, lb);
	return w > 0 ? (size_t)w : 0;
}

void tpp_cli_print_fewer(FILE *f, const struct tpp_search *s, const struct tpp_cluster *c,
			 const struct tpp_cli_fewer *fw, const struct tpp_eval *best)
{
	char buf[768];
	if (tpp_cli_fewer_text(buf, sizeof(buf), s, c, fw, best))
		fprintf(f, "  %s\n", buf);
}

void tpp_cli_print_first_fit(FILE *f, const struct tpp_search *s,
			     const struct tpp_cluster *c, int n,
			     const struct tpp_eval *e)
{
	if (n > 0) {
		/* the whole layout, so that the hint plans as it says even
		 * when --layout pinned a dp (or a product) that this count
		 * changes */
		char lb[200], nodes[40];
		tpp_layout_format(&e->layout, lb, sizeof(lb));
		tpp_cli_nodes_hint(nodes, sizeof(nodes), n, c);
		fprintf(f, "  with %d GPUs (%dx) a layout fits, %.*f s per step: --gpus %d%s --layout %s\n",
			n, n / s->gpus, tpp_step_digits(e->step_s), e->step_s, n, nodes, lb);
	} else if (n == 0) {
		int k = tpp_cli_first_fit_steps(s);
		fprintf(f, "  nor does any with more GPUs, up to %d (%dx)\n", s->gpus << k, 1 << k);
	} else if (n < TPP_CLI_FIRST_FIT_TIMED_OUT) {
		int k = TPP_CLI_FIRST_FIT_TIMED_OUT - n;
		fprintf(f, "  whether more GPUs fit is not known: the search at %d GPUs (%dx) stopped at "
			"the time limit, which the plan's searches share (--time-limit %g s)%s\n",
			s->gpus << k, 1 << k, s->time_limit_s,
			k > 1 ? "; none fits at the counts searched below it" : "");
	}
}
