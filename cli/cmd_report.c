/*
 * cmd_report.c - `tpplan report`: plan a problem as `tpplan` does, then
 * rerun the search for a scaling curve (one node doubling up to the
 * requested GPU count, the requested count, and twice it) and for the inter-node bandwidth halved and doubled,
 * read optional `tpplan exec --json` results, and hand everything to
 * report.c, which writes DIR/index.html, DIR/report.md and the figures.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

enum {
	O_OUT = 'o', O_HELP = 'h',
	O_EXEC = TPP_O__PROBLEM_END, O_NO_PLOTS,
};

static const struct tpp_optdoc opts[] = {
	TPP_CLI_PROBLEM_OPTDOCS,
	{{"top", required_argument, 0, TPP_O_TOP}, "K", "report the K best layouts (default 5, at most 64)"},
	TPP_CLI_MODEL_OPTDOCS,
	{{"calibration", required_argument, 0, TPP_O_CALIBRATION}, "FILE", "use (and plot) the figures measured by `tpplan calibrate`"},
	{{"time-limit", required_argument, 0, TPP_O_TIME_LIMIT}, "S", "stop each search (the plan, every scaling and bandwidth point) that runs longer than S seconds (default 60; 0 = none): the plan's is an error, a point's is reported as stopped"},
	{{"exec", required_argument, 0, O_EXEC}, "FILE", "add measured vs predicted per phase from `tpplan exec --json` output"},
	{{"out", required_argument, 0, O_OUT}, "DIR", "write DIR/index.html, DIR/report.md and the figures (required; created if missing)"},
	{{"no-plots", no_argument, 0, O_NO_PLOTS}, NULL, "tables only: do not run gnuplot"},
	{{"help", no_argument, 0, O_HELP}, NULL, "this help"},
};

_Static_assert(TPP_TOP_MAX == 64, "--top's help says at most 64");

/* getopt's short options (the help shows them beside the long ones) */
static const char shortopts[] = ":m:c:o:h";

static void report_usage(FILE *f)
{
	fprintf(f, "usage: tpplan report --model NAME|FILE --cluster NAME|FILE -o DIR [options]\n\n"
		"Writes DIR/index.html and DIR/report.md: the best layouts with their\n"
		"Megatron-LM arguments, step-time and memory breakdowns, the simulated\n"
		"schedule of the best layout, a scaling curve, the sensitivity to the\n"
		"inter-node bandwidth, and with --calibration / --exec the measured\n"
		"figures.  Plots are PNGs drawn by gnuplot from NAME.gp and NAME.dat\n"
		"kept in DIR; without gnuplot the report has tables only.  When no\n"
		"layout fits, the report (exit status 1) says why instead: rejections,\n"
		"the closest layout's memory, and from how many GPUs one fits.  The\n"
		"problem, cost-model and search options are those of `tpplan plan`\n"
		"and hold for every search the report runs (--layout's dp only for the\n"
		"requested GPU count).\n\n");
	tpp_cli_print_opts(f, opts, TPP_ARRAY_LEN(opts), 26, shortopts);
	fprintf(f, "\nexit codes: 0 ok, 1 no feasible layout (the report explains it) or the\n"
		"plan's search ran past --time-limit, 2 usage, 3 input error, 4 system\n"
		"error (e.g. DIR cannot be written)\n");
}

/* Best layout of `s` (top_k 1) on cluster `c`: 1 found, 0 none fits,
 * BEST_STOPPED the search ran out of its time limit, BEST_UNMATCHED no
 * layout of the GPU count matches the --layout constraints, <0 error. */
#define BEST_STOPPED 2
#define BEST_UNMATCHED 3
static int best_of(const struct tpp_model *m, const struct tpp_cluster *c,
		   const struct tpp_cost_opts *co, const struct tpp_search *s,
		   const char *what, struct tpp_plan *tmp, struct tpp_eval *out)
{
	struct tpp_search s1 = *s;
	struct tpp_err err;
	int rc;
	s1.top_k = 1;
	s1.degree_tables = 0; /* its best alone is read */
	rc = tpp_plan_search(m, c, co, &s1, tmp, &err);
	if (rc == TPP_OK) {
		*out = tmp->top[0];
		return 1;
	}
	if (rc == TPP_E_INFEASIBLE && tmp->timed_out) {
		fprintf(stderr, "tpplan: report: %s: %s\n", what, err.msg);
		return BEST_STOPPED;
	}
	if (rc == TPP_E_INFEASIBLE)
		return tmp->considered ? 0 : BEST_UNMATCHED;
	fprintf(stderr, "tpplan: report: %s\n", err.msg);
	return -1;
}

/* Every tier beyond the first: datasheet and measured bandwidths x f. */
static void scale_outer_tiers(struct tpp_cluster *c, double f)
{
	int i, k, j;
	for (i = 1; i < c->ntiers; i++) {
		struct tpp_tier *t = &c->tiers[i];
		t->bw_Bps *= f;
		for (k = 0; k < TPP_COLL__COUNT; k++) {
			t->busbw_Bps[k] *= f;
			for (j = 0; j < t->curve_n[k] && j < TPP_CURVE_MAX; j++)
				t->curve_busbw_Bps[k][j] *= f;
		}
	}
}

/*
 * GPU counts of the scaling curve, ascending: one node times the powers of
 * two below `gpus` (1, 2, 4, ... GPUs when gpus is less than a node), gpus
 * itself, and 2 * gpus when that is whole nodes, at most
 * TPP_CLUSTER_MAX_GPUS and within the outermost tier's span (`span`, 0:
 * any).  Over TPP_REPORT_SCALE_MAX points, those below gpus are thinned
 * from the small end (every other one from the second smallest, the
 * smallest kept), never gpus or 2 * gpus.  Returns the number written.
 */
static int scale_counts(int gpus, int gpn, int span, int *out)
{
	int pts[64], n = 0, nb, g, i, dropped;
	for (g = gpus < gpn ? 1 : gpn; g < gpus && n < 61; g *= 2)
		pts[n++] = g;
	nb = n;
	pts[n++] = gpus;
	g = 2 * gpus;
	if ((g <= gpn || g % gpn == 0) && g <= TPP_CLUSTER_MAX_GPUS &&
	    (span == 0 || g <= span))
		pts[n++] = g;
	do {
		dropped = 0;
		/* removing pts[i] brings the next one to i; i++ skips it */
		for (i = 1; i < nb && n > TPP_REPORT_SCALE_MAX; i++) {
			memmove(&pts[i], &pts[i + 1], (size_t)(n - i - 1) * sizeof(*pts));
			nb--, n--, dropped++;
		}
	} while (n > TPP_REPORT_SCALE_MAX && dropped);
	TPP_ASSERT(n <= TPP_REPORT_SCALE_MAX);
	memcpy(out, pts, (size_t)n * sizeof(*pts));
	return n;
}

/*
 * Scaling counts with no feasible layout at `gpus`: it, each doubling up
 * to the first count that fits (tpp_cli_first_fit), and one more doubling
 * where the cluster allows it; the middle ones dropped past
 * TPP_REPORT_SCALE_MAX.  None when no count up to 64x fits (fit <= 0).
 */
static int infeasible_scale_counts(int gpus, int fit, int gpn, int span, int *out)
{
	int n = 0, g;
	if (fit <= 0)
		return 0;
	for (g = gpus; g <= fit; g *= 2)
		if (g == gpus || tpp_cli_whole_nodes(g, gpn))
			out[n++] = g; /* the counts --gpus takes (5 GPUs: 40, not 10) */
	g = 2 * fit;
	if (tpp_cli_whole_nodes(g, gpn) && g <= TPP_CLUSTER_MAX_GPUS && (span == 0 || g <= span))
		out[n++] = g;
	/* at most 64x plus one doubling: 8 counts, TPP_REPORT_SCALE_MAX */
	TPP_ASSERT(n <= TPP_REPORT_SCALE_MAX);
	return n;
}

int tpp_cmd_report(int argc, char **argv)
{
	struct option lo[TPP_ARRAY_LEN(opts) + 1];
	const char *exec_arg = NULL, *out_dir = NULL;
	int gpus = 0, plots = 1, ch, rc, i;
	double spent;
	int counts[TPP_REPORT_SCALE_MAX];
	char what[96];
	struct tpp_model model;
	struct tpp_cluster *cluster = NULL, *alt = NULL;
	struct tpp_calibration *cal = NULL;
	struct tpp_cost_opts co;
	struct tpp_search s;
	struct tpp_plan *plan = NULL, *tmp = NULL;
	struct tpp_report *r = NULL;
	struct tpp_err err;
	struct tpp_plan_ctx x;
	struct tpp_cli_problem pb;

	tpp_cost_opts_default(&co);
	tpp_cli_problem_init(&pb, &co);
	tpp_cli_long_opts(opts, TPP_ARRAY_LEN(opts), lo);
	optind = 1;
	opterr = 0;
	while ((ch = tpp_cli_getopt(argc, argv, shortopts, lo)) != -1) {
		rc = TPP_OK;
		switch (ch) {
		case O_OUT: rc = tpp_cli_once("report: ", "--out", "", &out_dir, optarg); break;
		case O_EXEC: rc = tpp_cli_once("report: ", "--exec", "", &exec_arg, optarg); break;
		case O_NO_PLOTS: plots = 0; break;
		case O_HELP: report_usage(stdout); return TPP_OK;
		default: rc = tpp_cli_problem_opt(&pb, ch, argv, "report"); break;
		}
		if (rc)
			return rc;
	}
	if ((rc = tpp_cli_problem_args(&pb, argc, argv)))
		return rc;
	if (!pb.model_arg || !pb.cluster_arg || !out_dir) {
		fprintf(stderr, "tpplan: report: --model, --cluster and -o DIR are required (try `tpplan report --help`)\n");
		return TPP_E_USAGE;
	}
	if (!out_dir[0]) {
		fprintf(stderr, "tpplan: report: -o: empty directory name\n");
		return TPP_E_USAGE;
	}
	/* before the inputs and the searches, which can take minutes (made
	 * below, once the inputs are read) */
	if ((rc = tpp_report_check_dir(out_dir)))
		return rc;

	if ((rc = tpp_cli_problem_model(&pb, &model)))
		return rc;
	cluster = malloc(sizeof(*cluster));
	alt = malloc(sizeof(*alt));
	plan = malloc(sizeof(*plan));
	tmp = malloc(sizeof(*tmp));
	r = calloc(1, sizeof(*r));
	if (!cluster || !alt || !plan || !tmp || !r) {
		fprintf(stderr, "tpplan: out of memory\n");
		rc = TPP_E_SYSTEM;
		goto out;
	}
	if (exec_arg && (rc = tpp_report_read_exec(exec_arg, r)))
		goto out;
	if (exec_arg && r->exec_check == 0)
		fprintf(stderr, "tpplan: report: warning: --exec %s: the run failed its numerics check; "
			"the report says so beside its timings\n", exec_arg);
	if ((rc = tpp_cli_problem_cluster(&pb, cluster, &cal, &gpus)))
		goto out;
	{
		/* the files it read: the model (a preset name is no file), the
		 * cluster, the calibration in use, the exec result */
		const char *in[] = {pb.model_arg, cluster->path, cluster->calibration, exec_arg};
		if ((rc = tpp_report_check_inputs(out_dir, in, TPP_ARRAY_LEN(in))))
			goto out;
	}
	if ((rc = tpp_cli_problem_search(&pb, &model, gpus, &s)))
		goto out;
	if ((rc = tpp_report_make_dir(out_dir)))
		goto out;
	x.model = &model;
	x.cluster = cluster;
	x.opts = &co;
	x.search = &s;
	x.train_tokens = pb.train_tokens;
	x.train_steps = tpp_cli_train_steps(pb.train_tokens, s.gbs, model.seq);
	rc = tpp_plan_search(&model, cluster, &co, &s, plan, &err);
	if (rc && !(rc == TPP_E_INFEASIBLE && !plan->timed_out)) {
		fprintf(stderr, "tpplan: %s\n", err.msg);
		goto out;
	}
	/* the best without ZeRO-3 across nodes, fewer GPUs; the time limit
	 * is shared with the first-fit search below */
	tpp_cli_follow_ups(&model, cluster, &co, &s, plan, rc, &spent, alt, tmp, &r->no_zero3,
			   &r->fewer, &x);
	if (rc) {
		/* what an infra team needs then, on stderr and in the report:
		 * why nothing fits, how close the nearest came, and from how
		 * many GPUs up something does */
		fprintf(stderr, "tpplan: %s\n", err.msg);
		tpp_print_infeasible(stderr, plan, &s, cluster);
		r->first_fit_gpus = tpp_cli_first_fit(&model, cluster, &co, &s, spent,
							alt, tmp, &r->first_fit);
		tpp_cli_print_first_fit(stderr, &s, cluster, r->first_fit_gpus, &r->first_fit);
		tpp_cli_print_fewer(stderr, &s, cluster, &r->fewer, NULL);
		r->nscale = infeasible_scale_counts(gpus, r->first_fit_gpus, cluster->gpus_per_node,
						    cluster->tiers[cluster->ntiers - 1].span_gpus, counts);
	} else {
		r->nscale = scale_counts(gpus, cluster->gpus_per_node,
					 cluster->tiers[cluster->ntiers - 1].span_gpus, counts);
	}

	/* scaling curve */
	for (i = 0; i < r->nscale; i++) {
		struct tpp_report_scale *sc = &r->scale[i];
		struct tpp_search s2 = s;
		struct tpp_eval e;
		int found;
		sc->gpus = counts[i];
		if (counts[i] == gpus) {
			found = plan->n_top > 0;
			if (found)
				e = plan->top[0];
		} else {
			*alt = *cluster;
			tpp_cluster_resize(alt, counts[i]);
			s2.gpus = counts[i];
			s2.dp = TPP_FREE; /* --layout's dp is the request's */
			snprintf(what, sizeof(what), "scaling, %d GPUs", s2.gpus);
			found = best_of(&model, alt, &co, &s2, what, tmp, &e);
		}
		if (found < 0) {
			rc = TPP_E_SYSTEM;
			goto out;
		}
		sc->stopped = found == BEST_STOPPED;
		sc->unmatched = found == BEST_UNMATCHED;
		if ((sc->ok = found == 1)) {
			sc->step_s = e.step_s;
			sc->tokens_per_s = e.tokens_per_s;
			sc->mfu = e.mfu;
			sc->optimistic = tpp_eval_optimistic(&e);
			tpp_layout_format(&e.layout, sc->layout, sizeof(sc->layout));
		}
	}

	/* sensitivity to the inter-node bandwidth (of the best layout) */
	if (plan->n_top) {
		static const double factors[3] = {0.5, 1, 2};
		r->nsens = 3;
		for (i = 0; i < 3; i++) {
			struct tpp_report_sens *se = &r->sens[i];
			struct tpp_eval e;
			int found;
			se->factor = factors[i];
			if (factors[i] == 1) {
				e = plan->top[0];
				found = 1;
			} else {
				*alt = *cluster;
				scale_outer_tiers(alt, factors[i]);
				snprintf(what, sizeof(what), "sensitivity, inter-node bandwidth x%g",
					 factors[i]);
				found = best_of(&model, alt, &co, &s, what, tmp, &e);
			}
			if (found < 0) {
				rc = TPP_E_SYSTEM;
				goto out;
			}
			se->stopped = found == BEST_STOPPED;
			if ((se->ok = found == 1)) {
				se->step_s = e.step_s;
				se->tokens_per_s = e.tokens_per_s;
				se->optimistic = tpp_eval_optimistic(&e);
				tpp_layout_format(&e.layout, se->layout, sizeof(se->layout));
			}
		}
	}

	r->x = &x;
	r->plan = plan;
	r->model_arg = pb.model_arg;
	r->layout_arg = pb.layout_arg;
	r->cluster_arg = pb.cluster_arg;
	r->cal_path = cal ? cluster->calibration : NULL;
	r->cal = cal;
	r->exec_path = exec_arg;
	r->plots = plots;
	if ((rc = tpp_report_write(out_dir, r)))
		goto out;
	if (!plan->n_top) {
		printf("tpplan report: wrote %s/index.html and %s/report.md (no feasible layout: why, and from how many GPUs one fits)\n",
		       out_dir, out_dir);
		rc = TPP_E_INFEASIBLE;
		goto out;
	}
	printf("tpplan report: wrote %s/index.html and %s/report.md (%d layout%s)\n",
	       out_dir, out_dir, plan->n_top, plan->n_top == 1 ? "" : "s");
out:
	free(r);
	free(tmp);
	free(plan);
	free(alt);
	free(cal);
	free(cluster);
	return rc;
}
