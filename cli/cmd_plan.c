/*
 * cmd_plan.c - `tpplan [plan]`: load model and cluster, search layouts,
 * print the ranking (table or JSON).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sim.h"
#include "tpp_afile.h"

enum {
	O_HELP = 'h',
	O_JSON = TPP_O__PROBLEM_END, O_TIMELINE,
};

static const struct tpp_optdoc opts[] = {
	TPP_CLI_PROBLEM_OPTDOCS,
	{{"top", required_argument, 0, TPP_O_TOP}, "K", "show the K best layouts (default 5, at most 64)"},
	{{"json", no_argument, 0, O_JSON}, NULL, "print the plan as JSON (schema tpplan.plan/v1)"},
	TPP_CLI_MODEL_OPTDOCS,
	{{"time-limit", required_argument, 0, TPP_O_TIME_LIMIT}, "S", "stop a search that runs longer than S seconds, with an error (default 60; 0 = none)"},
	{{"calibration", required_argument, 0, TPP_O_CALIBRATION}, "FILE", "use the figures measured by `tpplan calibrate` (overrides the cluster file's calibration: key)"},
	{{"timeline", required_argument, 0, O_TIMELINE}, "FILE", "write the simulated schedule of the best layout (rank, chunk, micro-batch, kind, start, end; tab-separated)"},
	{{"help", no_argument, 0, O_HELP}, NULL, "this help"},
};

_Static_assert(TPP_TOP_MAX == 64, "--top's help says at most 64");

/* getopt's short options (the help shows them beside the long ones) */
static const char shortopts[] = ":m:c:h";

static void plan_usage(FILE *f)
{
	fprintf(f, "usage: tpplan [plan] --model NAME|FILE --cluster NAME|FILE [options]\n\n");
	tpp_cli_print_opts(f, opts, TPP_ARRAY_LEN(opts), 26, shortopts);
	fprintf(f, "\nexit codes: 0 ok, 1 no feasible layout (or the search ran past --time-limit), 2 usage,\n3 input error, 4 system error\n");
}

int tpp_cmd_plan(int argc, char **argv)
{
	struct option lo[TPP_ARRAY_LEN(opts) + 1];
	const char *timeline = NULL;
	int gpus = 0, json = 0, ch, rc, trc = TPP_OK;
	struct tpp_model model;
	struct tpp_cluster *cluster = NULL;
	struct tpp_cost_opts co;
	struct tpp_search s;
	struct tpp_plan *plan = NULL, *tmp = NULL;
	struct tpp_cluster *alt = NULL;
	struct tpp_cli_fewer fewer;
	struct tpp_cli_alt no_zero3;
	double spent = 0;
	struct tpp_err err;
	struct tpp_plan_ctx x;
	struct tpp_cli_more more;
	int more_n = -1;
	struct tpp_cli_problem pb;

	tpp_cost_opts_default(&co);
	tpp_cli_problem_init(&pb, &co);
	tpp_cli_long_opts(opts, TPP_ARRAY_LEN(opts), lo);
	optind = 1;
	opterr = 0;
	while ((ch = tpp_cli_getopt(argc, argv, shortopts, lo)) != -1) {
		rc = TPP_OK;
		switch (ch) {
		case O_JSON: json = 1; break;
		case O_TIMELINE: rc = tpp_cli_once("", "--timeline", "", &timeline, optarg); break;
		case O_HELP: plan_usage(stdout); return TPP_OK;
		default: rc = tpp_cli_problem_opt(&pb, ch, argv, "plan"); break;
		}
		if (rc)
			return rc;
	}
	if ((rc = tpp_cli_problem_args(&pb, argc, argv)))
		return rc;
	if (!pb.model_arg || !pb.cluster_arg) {
		fprintf(stderr, "tpplan: --model and --cluster are required (try `tpplan plan --help`)\n");
		return TPP_E_USAGE;
	}
	if (timeline && !*timeline) {
		/* checked before the search, as the other file flags are */
		fprintf(stderr, "tpplan: --timeline: the file name is empty\n");
		return TPP_E_USAGE;
	}
	if (timeline && pb.analytic) {
		/* the timeline is simulated: its step would not be the printed one */
		fprintf(stderr, "tpplan: --timeline writes the simulated schedule; it does not go with --analytic\n");
		return TPP_E_USAGE;
	}

	if ((rc = tpp_cli_problem_model(&pb, &model)))
		return rc;
	cluster = malloc(sizeof(*cluster));
	plan = malloc(sizeof(*plan));
	if (!cluster || !plan) {
		fprintf(stderr, "tpplan: out of memory\n");
		rc = TPP_E_SYSTEM;
		goto out;
	}
	if ((rc = tpp_cli_problem_cluster(&pb, cluster, NULL, &gpus)))
		goto out;
	if (timeline) {
		/* the files the plan read: the model (a preset name is no
		 * file), the cluster and the calibration in use */
		const char *in[] = {pb.model_arg, cluster->path, cluster->calibration};
		struct tpp_err ferr;
		if ((rc = tpp_cli_not_an_input("--timeline", timeline, in, TPP_ARRAY_LEN(in))))
			goto out;
		/* a file that cannot be written is said before the search */
		if (tpp_afile_check(timeline, &ferr)) {
			fprintf(stderr, "tpplan: --timeline %s\n", ferr.msg);
			rc = TPP_E_USAGE;
			goto out;
		}
	}
	if ((rc = tpp_cli_problem_search(&pb, &model, gpus, &s)))
		goto out;
	if (timeline) {
		/* no layout's pipeline could be played out for the timeline
		 * (TPP_SIM_MAX_CELLS): said now, not after the search.  The
		 * fewest chunk x micro-batch cells: the fixed pp and vp (else
		 * 1), the most sequences per micro-batch and data-parallel
		 * rank the constraints allow */
		int fix_tp = s.tp != TPP_FREE ? s.tp : 1, fix_pp = s.pp != TPP_FREE ? s.pp : 1;
		int fix_cp = s.cp != TPP_FREE ? s.cp : 1, fix_vp = s.vp != TPP_FREE ? s.vp : 1;
		double dp_max = s.dp != TPP_FREE ? s.dp : (double)s.gpus / ((double)fix_tp * fix_pp * fix_cp);
		double mbs_max = s.mbs != TPP_FREE ? s.mbs : s.max_mbs;
		double cells = (double)fix_pp * fix_vp * ceil(s.gbs / fmax(1, dp_max * mbs_max));
		if (cells > TPP_SIM_MAX_CELLS) {
			/* what would bring the bound down: each term above the
			 * user can change (a pinned degree, else its limit) */
			const char *fix[8];
			char advice[256];
			size_t nf = 0, i, n = 0;
			fix[nf++] = "a smaller --global-batch";
			if (s.pp != TPP_FREE && s.pp > 1)
				fix[nf++] = "a smaller pp in --layout";
			if (s.vp != TPP_FREE && s.vp > 1)
				fix[nf++] = "a smaller vp in --layout";
			if (s.mbs != TPP_FREE)
				fix[nf++] = "a larger mbs in --layout";
			else
				fix[nf++] = "a larger --max-mbs";
			if (s.dp != TPP_FREE) {
				fix[nf++] = "a larger dp in --layout (with the GPUs for it)";
			} else {
				if ((s.tp != TPP_FREE && s.tp > 1) || (s.cp != TPP_FREE && s.cp > 1))
					fix[nf++] = "a smaller tp or cp in --layout";
				fix[nf++] = "more GPUs";
			}
			advice[0] = '\0';
			for (i = 0; i < nf; i++) {
				int w = snprintf(advice + n, sizeof(advice) - n, "%s%s",
						 i == 0 ? "" : i + 1 < nf ? ", " : ", or ", fix[i]);
				if (w > 0 && (size_t)w < sizeof(advice) - n)
					n += (size_t)w;
			}
			/* a bound over the layouts the constraints allow: there
			 * may be none, which the search would say instead */
			fprintf(stderr, "tpplan: --timeline: under these constraints any layout's pipeline has at least %.0f chunk x micro-batch cells, more than the %d the simulator plays out: no timeline can be written (%s)\n",
				cells, TPP_SIM_MAX_CELLS, advice);
			rc = TPP_E_USAGE;
			goto out;
		}
	}
	x.model = &model;
	x.cluster = cluster;
	x.opts = &co;
	x.search = &s;
	x.train_tokens = pb.train_tokens;
	x.train_steps = tpp_cli_train_steps(pb.train_tokens, s.gbs, model.seq);
	rc = tpp_plan_search(&model, cluster, &co, &s, plan, &err);
	if (rc == TPP_E_USAGE) {
		fprintf(stderr, "tpplan: %s\n", err.msg);
		goto out;
	}
	/* the best without ZeRO-3 across nodes, fewer GPUs */
	alt = malloc(sizeof(*alt));
	tmp = malloc(sizeof(*tmp));
	if (!alt || !tmp) {
		fprintf(stderr, "tpplan: out of memory\n");
		rc = TPP_E_SYSTEM;
		goto out;
	}
	tpp_cli_follow_ups(&model, cluster, &co, &s, plan, rc, &spent, alt, tmp, &no_zero3,
			   &fewer, &x);
	/* nothing fits: how many GPUs it would take (for the text's hint and
	 * JSON's more_gpus; the time limit is shared with the searches
	 * before) */
	if (rc == TPP_E_INFEASIBLE && !plan->timed_out && plan->considered) {
		more_n = tpp_cli_first_fit(&model, cluster, &co, &s, spent, alt, tmp, &more.best);
		if (more_n >= 0) {
			more.gpus = more_n;
			more.searched_up_to = more_n > 0 ? more_n
							 : s.gpus << tpp_cli_first_fit_steps(&s);
			x.more = &more;
		}
	}
	/* the timeline first: a plan whose timeline could not be written is
	 * not printed as if the command had succeeded -- except a best
	 * layout too long to play out (TPP_E_USAGE; its step is the analytic
	 * model's, as the plan says): the plan is printed, then why there is
	 * no timeline, and the exit status is 2 */
	if (rc == TPP_OK && timeline) {
		if (!plan->top[0].simulated) /* too long: simulate() kept the analytic result */
			trc = TPP_E_USAGE;
		else if ((rc = tpp_write_timeline(timeline, &x, &plan->top[0]))) /* prints its errors */
			goto out;
	}
	if (json) {
		tpp_print_plan_json(stdout, &x, plan, rc);
	} else if (rc == TPP_OK) {
		tpp_print_plan_text(stdout, &x, plan);
	}
	if (trc) {
		fprintf(stderr, "tpplan: --timeline %s not written: the best layout's pipeline, %d x %d chunk x micro-batch cells, is more than the %d the simulator plays out (its step time above is the analytic model's)\n",
			timeline, plan->top[0].layout.pp * plan->top[0].layout.vp,
			plan->top[0].microbatches, TPP_SIM_MAX_CELLS);
		rc = trc;
	}
	if (rc == TPP_E_SYSTEM)
		fprintf(stderr, "tpplan: %s\n", err.msg);
	if (rc == TPP_E_INFEASIBLE) {
		int all_fixed = s.tp != TPP_FREE && s.pp != TPP_FREE &&
				s.mbs != TPP_FREE && s.vp != TPP_FREE &&
				s.sp != TPP_FREE && s.recompute != TPP_FREE &&
				s.zero != TPP_FREE;
		fprintf(stderr, "tpplan: %s\n", err.msg);
		/* a search stopped by its time limit found feasible layouts
		 * (or had not looked at all yet): what it rejected so far and
		 * the closest miss do not explain anything */
		if (!plan->timed_out) {
			tpp_print_infeasible(stderr, plan, &s, cluster);
			if (plan->have_min_mem && all_fixed && !json)
				tpp_print_eval_text(stdout, &x, &plan->min_mem);
		}
		/* how many GPUs it would take: more, and fewer (a batch that
		 * the count divides badly) */
		if (!plan->timed_out && plan->considered && !json) {
			tpp_cli_print_first_fit(stderr, &s, cluster, more_n, &more.best);
			if (x.fewer)
				tpp_cli_print_fewer(stderr, &s, cluster, x.fewer, NULL);
		}
		if (plan->timed_out)
			; /* it said so above: the constraints did not empty the search */
		else if (!plan->considered && s.mbs != TPP_FREE && s.mbs > s.gbs)
			fprintf(stderr, "  no layout matches the constraints: mbs=%d is more than "
				"the global batch of %d sequences (--global-batch)\n", s.mbs, s.gbs);
		else if (!plan->considered)
			fprintf(stderr, "  no layout matches the constraints for %d GPUs "
				"(--layout: tp*pp*dp*cp must equal the GPU count; vp > 1 and "
				"zb-h1 need pp >= 2; zb-h1 needs vp = 1; sp needs tp >= 2; "
				"mbs at most the global batch)\n", gpus);
	}
out:
	free(alt);
	free(tmp);
	free(plan);
	free(cluster);
	return rc;
}
