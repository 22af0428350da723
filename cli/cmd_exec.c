/*
 * cmd_exec.c - `tpplan exec`: run a layout's transformer layers sharded on
 * the ranks of an MPI job (exec/exec.h), check them against the unsharded
 * fp64 reference and print each phase's measured time beside the cost
 * model's prediction for the same layout on the cluster / calibration.
 *
 * Data flow: options, --layout or --plan (a `tpplan --json` file:
 * .layouts[0].layout_arg, and the model and cluster unless --model /
 * --cluster) --> tpp_bench_init (MPI) --> tpp_exec_run (every rank) -->
 * rank 0: tpp_exec_predict --> table or JSON on stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibration.h"
#include "cli.h"
#include "tpp_yaml.h"
#ifdef TPP_HAVE_EXEC
#include "bench.h"
#include "exec.h"
#endif

enum {
	O_HELP = 'h',
	O_MODEL = 1000, O_CLUSTER, O_CALIBRATION, O_LAYOUT, O_PLAN, O_LAYERS,
	O_MICRO, O_SCALE, O_HIDDEN, O_HEADS, O_FFN, O_SEQ, O_PREC, O_BACKEND,
	O_ITERS, O_WARMUP, O_TIMEOUT, O_JSON, O_WRONG, O_WRONG_COPY, O_NO_CHECK, O_SEED,
	O_SCHEDULE, O_BARRIER,
};

static const struct tpp_optdoc opts[] = {
	{{"model", required_argument, 0, O_MODEL}, "NAME|FILE", "model whose layer shape is run (default: the plan's with --plan, else hidden 64, heads 4, ffn 256, seq 32)"},
	{{"cluster", required_argument, 0, O_CLUSTER}, "NAME|FILE", "cluster for the predictions (default: the plan's with --plan, else dgx-a100)"},
	{{"calibration", required_argument, 0, O_CALIBRATION}, "FILE", "calibration of this machine for the predictions (`tpplan calibrate`; default: the plan's, with the plan's cluster)"},
	{{"layout", required_argument, 0, O_LAYOUT}, "L", "tp=..,pp=..,dp=..,sp=..,mbs=.. (unset: 1; dp: the rest of the ranks); vp, zb-h1, tp_overlap, recompute and zero are run (and predicted) without, with a note; cp must be 1"},
	{{"plan", required_argument, 0, O_PLAN}, "FILE", "take the layout (.layouts[0].layout_arg), the model and the cluster from `tpplan --json` output; --model, --cluster, --calibration win over the plan's"},
	{{"layers", required_argument, 0, O_LAYERS}, "N", "transformer layers run in all (default 2, or pp when more: a layer per stage; >= pp)"},
	{{"microbatches", required_argument, 0, O_MICRO}, "N", "micro-batches per DP replica per step (default 2)"},
	{{"schedule", required_argument, 0, O_SCHEDULE}, "S", "pipeline schedule: 1f1b (default; Megatron-LM's) or gpipe (all forwards, then all backwards)"},
	{{"scale-down", required_argument, 0, O_SCALE}, "F", "divide the model's (--model or the plan's) hidden, ffn and sequence by F (heads kept) to fit a small machine; a usage error without a model"},
	{{"hidden", required_argument, 0, O_HIDDEN}, "H", "override the hidden size"},
	{{"heads", required_argument, 0, O_HEADS}, "A", "override the attention heads"},
	{{"ffn", required_argument, 0, O_FFN}, "F", "override the MLP width"},
	{{"seq", required_argument, 0, O_SEQ}, "S", "override the sequence length"},
	{{"precision", required_argument, 0, O_PREC}, "P", "GEMM arithmetic: fp32 (cpu; default), bf16, fp16 or tf32 (cuda; default bf16)"},
	{{"backend", required_argument, 0, O_BACKEND}, "NAME", "cpu (MPI + BLAS, default) or cuda (cuBLAS + NCCL)"},
	{{"iters", required_argument, 0, O_ITERS}, "N", "timed steps (default 5)"},
	{{"warmup", required_argument, 0, O_WARMUP}, "N", "untimed steps before them (default 2)"},
	{{"timeout", required_argument, 0, O_TIMEOUT}, "S", "end the whole run when a step stalls longer than S s (default 120, 0 = never)"},
	{{"json", no_argument, 0, O_JSON}, NULL, "print the result as JSON (schema tpplan.exec/v1)"},
	{{"no-check", no_argument, 0, O_NO_CHECK}, NULL, "skip the comparison with the fp64 reference (large shapes)"},
	{{"barrier", no_argument, 0, O_BARRIER}, NULL, "barrier the TP group before each TP collective and time it apart (\"tp wait\"), so that the collectives' times leave out waiting for the slowest rank; the step includes the barriers"},
	{{"seed", required_argument, 0, O_SEED}, "N", "seed of weights and inputs (default 1)"},
	{{"wrong-shard", no_argument, 0, O_WRONG}, NULL, NULL}, /* test hook: the check must fail */
	{{"wrong-copy", no_argument, 0, O_WRONG_COPY}, NULL, NULL}, /* test hook: the check must fail */
	{{"help", no_argument, 0, O_HELP}, NULL, "this help"},
};

/* getopt's short options (the help shows them beside the long ones) */
static const char shortopts[] = ":h";

static void exec_usage(FILE *f)
{
	fprintf(f,
		"usage: mpiexec -np N tpplan exec [--model M] [--layout L | --plan FILE] [options]\n\n"
		"Runs transformer layers sharded as the layout says (Megatron tensor\n"
		"parallelism, sequence parallelism with sp=1, pipeline stages in the 1F1B\n"
		"schedule, DP gradient all-reduce), checks outputs and gradients against\n"
		"an unsharded fp64 run on rank 0, and prints each phase's\n"
		"measured time (median over --iters steps, slowest rank) beside the cost\n"
		"model's prediction.  N must equal tp*pp*dp.  With --plan the layout, the\n"
		"model and the cluster are the plan's; --model, --cluster and --calibration\n"
		"given as well win over them.\n\n");
	tpp_cli_print_opts(f, opts, TPP_ARRAY_LEN(opts), 24, shortopts);
	fprintf(f, "\nexit codes: 0 ok, 1 the numerics check failed, 2 usage, 3 input error,\n"
		   "4 backend or system error (including a --timeout abort); a rank that dies\n"
		   "ends the run with the status mpiexec gives for it (its exit code, or 128 +\n"
		   "the signal: 137 when it was killed)\n");
}

/* What exec takes from a `tpplan --json` plan (schema tpplan.plan/v1). */
struct plan_in {
	char layout[512];     /* .layouts[0].layout_arg */
	int has_model;        /* a "model" object was there */
	char model_name[64];  /* .model.name */
	int hidden, heads, ffn, seq; /* .model's */
	int kv_heads;         /* .model.kv_heads (0: not given) */
	int head_dim;         /* .model.head_dim (0: not given) */
	int heads_line, heads_col; /* where .model.heads is (1-based) */
	int layout_line, layout_col; /* where .layouts[0].layout_arg is */
	char mlp[16];         /* .model.mlp ("": not given) */
	char cluster[512];    /* .cluster.path when readable, else .name; "" none */
	/* .cluster.path when it could not be read (the preset named .name
	 * stands in), with where it is in the plan and why; "" else */
	char cluster_gone[512], cluster_gone_why[128];
	int cluster_gone_line, cluster_gone_col;
	char calibration[512]; /* .cluster.calibration; "" null or none */
};

/* A positive integer .model.KEY of the plan into *out (absent and not
 * `required`: *out untouched). */
static int plan_model_int(struct tpp_ydoc *d, yaml_node_t *model, const char *key,
			  int required, int *out, struct tpp_err *err)
{
	yaml_node_t *v = tpp_y_map_get(d, model, key);
	long long x;
	double num;
	int rc;
	if (!v && !required)
		return TPP_OK;
	if (!v)
		return tpp_y_err(d, model, err, "--plan: \"model\" has no \"%s\"", key);
	if (!tpp_yj_num(v, &num))
		return tpp_y_err(d, v, err, "--plan: model \"%s\" must be a JSON number", key);
	if ((rc = tpp_y_int(d, v, &x, err)))
		return rc;
	if (x < 1 || x > (1 << 22))
		return tpp_y_err(d, v, err, "--plan: model \"%s\" = %lld is out of range [1, %d]",
				 key, x, 1 << 22);
	*out = (int)x;
	return TPP_OK;
}

/* A JSON string .OBJ.KEY into buf ("" when absent or null). */
static int plan_str(struct tpp_ydoc *d, yaml_node_t *obj, const char *what,
		    const char *key, char *buf, size_t size, struct tpp_err *err)
{
	yaml_node_t *v = tpp_y_map_get(d, obj, key);
	buf[0] = '\0';
	if (tpp_yj_null(v))
		return TPP_OK;
	if (!tpp_yj_str(v))
		return tpp_y_err(d, v, err, "--plan: %s \"%s\" must be a JSON string", what, key);
	return tpp_y_str(d, v, buf, size, err);
}

/*
 * Read the layout, the model's shape and the cluster of the plan at
 * `path` into *p.  The model and cluster objects may be absent (a
 * hand-written plan: then exec's defaults); when present, what exec uses
 * of them must be there and well-formed.  Prints located errors; returns
 * an exit status.
 */
static int plan_read(const char *path, struct plan_in *p)
{
	struct tpp_ydoc d;
	struct tpp_err err;
	yaml_node_t *root, *layouts, *arg, *model, *cluster;
	char cpath[512];
	int rc, n = 0;
	memset(p, 0, sizeof(*p));
	if ((rc = tpp_cli_json_load(&d, "--plan", path, "tpplan.plan/v1")))
		return rc;
	root = tpp_ydoc_root(&d);
	layouts = tpp_y_map_get(&d, root, "layouts");
	if (!layouts || layouts->type != YAML_SEQUENCE_NODE ||
	    tpp_y_seq(&d, layouts, "layouts", &n, &err) || n < 1) {
		rc = tpp_y_err(&d, layouts ? layouts : root, &err,
			       "--plan: no layouts (a plan with no feasible layout?)");
		goto out;
	}
	arg = tpp_y_map_get(&d, tpp_y_seq_item(&d, layouts, 0), "layout_arg");
	if (!arg)
		rc = tpp_y_err(&d, tpp_y_seq_item(&d, layouts, 0), &err,
			       "--plan: layouts[0] has no \"layout_arg\"");
	else if (!tpp_yj_str(arg))
		rc = tpp_y_err(&d, arg, &err, "--plan: \"layout_arg\" must be a JSON string");
	else
		rc = tpp_y_str(&d, arg, p->layout, sizeof(p->layout), &err);
	if (rc)
		goto out;
	p->layout_line = (int)arg->start_mark.line + 1;
	p->layout_col = (int)arg->start_mark.column + 1;
	{
		/* checked here, to be reported at its place in the plan (not
		 * as a --layout the user did not give) */
		struct tpp_search chk;
		char why[sizeof(err.msg)];
		tpp_search_default(&chk, 1, 1);
		if (tpp_cli_parse_layout(p->layout, &chk, &err)) {
			tpp_strlcpy(why, strncmp(err.msg, "--layout: ", 10) ? err.msg : err.msg + 10,
				    sizeof(why));
			rc = tpp_y_err(&d, arg, &err, "--plan: \"layout_arg\": %s", why);
			goto out;
		}
		/* the plan's, so at its place too (not "give cp=1", which a
		 * plan's user cannot) */
		if (chk.cp != TPP_FREE && chk.cp > 1) {
			rc = tpp_y_err(&d, arg, &err,
				       "--plan: \"layout_arg\": cp=%d: context parallelism is not run by exec (plan with --layout cp=1, or give exec --layout instead of --plan)",
				       chk.cp);
			goto out;
		}
	}
	if ((model = tpp_y_map_get(&d, root, "model"))) {
		if (model->type != YAML_MAPPING_NODE) {
			rc = tpp_y_err(&d, model, &err, "--plan: \"model\" must be a JSON object");
			goto out;
		}
		if ((rc = plan_str(&d, model, "model", "name", p->model_name,
				   sizeof(p->model_name), &err)) ||
		    (rc = plan_model_int(&d, model, "hidden", 1, &p->hidden, &err)) ||
		    (rc = plan_model_int(&d, model, "heads", 1, &p->heads, &err)) ||
		    (rc = plan_model_int(&d, model, "ffn", 1, &p->ffn, &err)) ||
		    (rc = plan_model_int(&d, model, "seq", 1, &p->seq, &err)) ||
		    (rc = plan_model_int(&d, model, "kv_heads", 0, &p->kv_heads, &err)) ||
		    (rc = plan_model_int(&d, model, "head_dim", 0, &p->head_dim, &err)) ||
		    (rc = plan_str(&d, model, "model", "mlp", p->mlp, sizeof(p->mlp), &err)))
			goto out;
		if (p->mlp[0] && strcmp(p->mlp, tpp_mlp_names[TPP_MLP_GELU]) &&
		    strcmp(p->mlp, tpp_mlp_names[TPP_MLP_SWIGLU])) {
			rc = tpp_y_err(&d, tpp_y_map_get(&d, model, "mlp"), &err,
				       "--plan: model \"mlp\" must be \"%s\" or \"%s\", not \"%s\"",
				       tpp_mlp_names[TPP_MLP_GELU], tpp_mlp_names[TPP_MLP_SWIGLU], p->mlp);
			goto out;
		}
		/* heads that do not divide hidden (a head_dim of the model's
		 * own) are checked on the shape run, after --hidden / --heads
		 * and --scale-down, as for --model; kept for that message */
		{
			yaml_node_t *hn = tpp_y_map_get(&d, model, "heads");
			p->heads_line = (int)hn->start_mark.line + 1;
			p->heads_col = (int)hn->start_mark.column + 1;
		}
		p->has_model = 1;
	}
	if ((cluster = tpp_y_map_get(&d, root, "cluster"))) {
		if (cluster->type != YAML_MAPPING_NODE) {
			rc = tpp_y_err(&d, cluster, &err, "--plan: \"cluster\" must be a JSON object");
			goto out;
		}
		if ((rc = plan_str(&d, cluster, "cluster", "name", p->cluster,
				   sizeof(p->cluster), &err)) ||
		    (rc = plan_str(&d, cluster, "cluster", "path", cpath, sizeof(cpath), &err)) ||
		    (rc = plan_str(&d, cluster, "cluster", "calibration", p->calibration,
				   sizeof(p->calibration), &err)))
			goto out;
		/* the file the plan read, unless the plan was made elsewhere:
		 * then the preset of that name, said (its figures may not be
		 * the file's) */
		if (cpath[0] && access(cpath, R_OK) == 0) {
			tpp_strlcpy(p->cluster, cpath, sizeof(p->cluster));
		} else if (cpath[0]) {
			yaml_node_t *pn = tpp_y_map_get(&d, cluster, "path");
			tpp_strlcpy(p->cluster_gone, cpath, sizeof(p->cluster_gone));
			tpp_strlcpy(p->cluster_gone_why, strerror(errno), sizeof(p->cluster_gone_why));
			p->cluster_gone_line = (int)pn->start_mark.line + 1;
			p->cluster_gone_col = (int)pn->start_mark.column + 1;
		}
		if (!p->cluster[0]) {
			rc = tpp_y_err(&d, cluster, &err, "--plan: \"cluster\" has no \"name\" or \"path\"");
			goto out;
		}
	}
out:
	if (rc)
		tpp_err_print(stderr, &err);
	tpp_ydoc_free(&d);
	return rc;
}

int tpp_cmd_exec(int argc, char **argv)
{
	struct option lo[TPP_ARRAY_LEN(opts) + 1];
	const char *model_arg = NULL, *cluster_arg = NULL, *cal_arg = NULL;
	const char *layout_arg = NULL, *plan_arg = NULL, *backend = "cpu";
	int layers = 0, micro = 2, hidden = 0, heads = 0, ffn = 0, seq = 0;
	int prec = -1, iters = 5, warmup = 2, timeout = 120, json = 0, wrong = 0, wrong_copy = 0, barrier = 0;
	int check = 1, seed = 1, sched = 0, scale_given = 0, ch, rc = TPP_OK;
	double scale = 1;
	struct plan_in plan;
	/* notes for stderr, printed once (rank 0) when the run starts */
	char notes[1024] = "";
	/* where the model and the cluster come from, for the output */
	const char *model_from = NULL, *cluster_from = "";
	struct tpp_search s;
	struct tpp_err err;

	tpp_cli_quiet_until_mpi();
	tpp_cli_long_opts(opts, TPP_ARRAY_LEN(opts), lo);
	optind = 1;
	opterr = 0;
	while ((ch = tpp_cli_getopt(argc, argv, shortopts, lo)) != -1) {
		rc = TPP_OK;
		switch (ch) {
		case O_MODEL: rc = tpp_cli_once("exec: ", "--model", "", &model_arg, optarg); break;
		case O_CLUSTER: rc = tpp_cli_once("exec: ", "--cluster", "", &cluster_arg, optarg); break;
		case O_CALIBRATION: rc = tpp_cli_once("exec: ", "--calibration", "", &cal_arg, optarg); break;
		case O_LAYOUT: rc = tpp_cli_once("exec: ", "--layout", "", &layout_arg, optarg); break;
		case O_PLAN: rc = tpp_cli_once("exec: ", "--plan", "", &plan_arg, optarg); break;
		case O_LAYERS: rc = tpp_cli_int("--layers", optarg, 1, 4096, &layers); break;
		case O_MICRO: rc = tpp_cli_int("--microbatches", optarg, 1, 4096, &micro); break;
		case O_SCALE:
			rc = tpp_cli_double("--scale-down", optarg, 1, 1e6, &scale);
			scale_given = 1;
			break;
		case O_HIDDEN: rc = tpp_cli_int("--hidden", optarg, 1, 1 << 20, &hidden); break;
		case O_HEADS: rc = tpp_cli_int("--heads", optarg, 1, 1 << 16, &heads); break;
		case O_FFN: rc = tpp_cli_int("--ffn", optarg, 1, 1 << 22, &ffn); break;
		case O_SEQ: rc = tpp_cli_int("--seq", optarg, 1, 1 << 22, &seq); break;
		case O_PREC:
			prec = tpp_prec_parse(optarg);
			if (prec < 0 || prec == TPP_PREC_FP8) {
				fprintf(stderr, "tpplan: --precision: expected fp32, tf32, bf16 or fp16, got '%s'\n", optarg);
				rc = TPP_E_USAGE;
			}
			break;
		case O_BACKEND: backend = optarg; break;
		case O_ITERS: rc = tpp_cli_int("--iters", optarg, 1, 100000, &iters); break;
		case O_WARMUP: rc = tpp_cli_int("--warmup", optarg, 0, 100000, &warmup); break;
		case O_TIMEOUT: rc = tpp_cli_int("--timeout", optarg, 0, 7 * 86400, &timeout); break;
		case O_JSON: json = 1; break;
		case O_WRONG: wrong = 1; break;
		case O_WRONG_COPY: wrong_copy = 1; break;
		case O_NO_CHECK: check = 0; break;
		case O_BARRIER: barrier = 1; break;
		case O_SEED: rc = tpp_cli_int("--seed", optarg, 0, 1 << 30, &seed); break;
		case O_SCHEDULE:
			if (!strcmp(optarg, "1f1b")) {
				sched = 0;
			} else if (!strcmp(optarg, "gpipe")) {
				sched = 1;
			} else {
				fprintf(stderr, "tpplan: --schedule: expected 1f1b or gpipe, got '%s'\n", optarg);
				rc = TPP_E_USAGE;
			}
			break;
		case O_HELP: exec_usage(stdout); return TPP_OK;
		default: return tpp_cli_bad_option(ch, argv, "exec");
		}
		if (rc)
			return rc;
	}
	if ((rc = tpp_cli_no_operands(argc, argv)))
		return rc;
	if (layout_arg && plan_arg) {
		fprintf(stderr, "tpplan: exec: give --layout or --plan, not both\n");
		return TPP_E_USAGE;
	}
	if (strcmp(backend, "cpu") && strcmp(backend, "cuda")) {
		fprintf(stderr, "tpplan: --backend: expected cpu or cuda, got '%s'\n", backend);
		return TPP_E_USAGE;
	}
	if (prec < 0)
		prec = strcmp(backend, "cpu") ? TPP_PREC_BF16 : TPP_PREC_FP32;
	if (!strcmp(backend, "cpu") && prec != TPP_PREC_FP32) {
		fprintf(stderr, "tpplan: exec: the cpu backend runs fp32 only (--precision fp32)\n");
		return TPP_E_USAGE;
	}
	memset(&plan, 0, sizeof(plan));
	if (plan_arg) {
		if ((rc = plan_read(plan_arg, &plan)))
			return rc;
		layout_arg = plan.layout;
	}
	/* --model, --cluster and --calibration win over the plan's; the
	 * plan's calibration goes with the plan's cluster */
	if (model_arg)
		model_from = "--model";
	else if (plan.has_model)
		model_from = "the plan";
	if (!cluster_arg && plan.cluster[0]) {
		cluster_arg = plan.cluster;
		cluster_from = " (the plan's)";
		if (plan.cluster_gone[0]) {
			cluster_from = " (the preset of the plan's cluster name; the plan's file cannot be read)";
			tpp_appendf(notes, sizeof(notes),
				    "tpplan: exec: note: %s:%d:%d: the plan's cluster file %s cannot be read (%s): predicting with the preset '%s' instead, whose figures may not be that file's (--cluster FILE gives the file)\n",
				    plan_arg, plan.cluster_gone_line, plan.cluster_gone_col,
				    plan.cluster_gone, plan.cluster_gone_why, plan.cluster);
		}
		if (!cal_arg && plan.calibration[0])
			cal_arg = plan.calibration;
	}
	if (!cluster_arg)
		cluster_arg = "dgx-a100";
	/* the default shape is no model's: nothing to divide */
	if (scale_given && !model_from) {
		fprintf(stderr, "tpplan: exec: --scale-down %g: no model to scale (give --model, or --plan with a model); the default shape (hidden 64, heads 4, ffn 256, seq 32) is small already\n",
			scale);
		return TPP_E_USAGE;
	}
	if (scale_given && hidden && ffn && seq) {
		fprintf(stderr, "tpplan: exec: --scale-down %g: nothing left to scale, --hidden, --ffn and --seq set every size it divides\n",
			scale);
		return TPP_E_USAGE;
	}
	tpp_search_default(&s, 1, 1);
	if (layout_arg && (rc = tpp_cli_parse_layout(layout_arg, &s, &err))) {
		fprintf(stderr, "tpplan: %s\n", err.msg);
		return rc;
	}
	if (s.cp != TPP_FREE && s.cp > 1) {
		/* context parallelism changes the ranks' work and their
		 * number: it cannot be left out as the options below are */
		fprintf(stderr, "tpplan: exec: layout %s: cp=%d: context parallelism is not run by exec (give cp=1)\n",
			layout_arg, s.cp);
		return TPP_E_USAGE;
	}
	{
		/* exec runs none of these; it runs and predicts the layout
		 * without them, so measured and predicted describe the same
		 * thing, and says so */
		char off[160] = "";
		if (s.sched == TPP_SCHED_ZB_H1) {
			tpp_appendf(off, sizeof(off), "%sschedule=zb-h1", off[0] ? ", " : "");
			s.sched = TPP_SCHED_1F1B;
		}
		/* interleaving: one model chunk per pipeline rank (1F1B) */
		if (s.vp != TPP_FREE && s.vp > 1) {
			tpp_appendf(off, sizeof(off), "%svp=%d", off[0] ? ", " : "", s.vp);
			s.vp = 1;
			if (s.sched == TPP_SCHED_INTERLEAVED)
				s.sched = TPP_SCHED_1F1B;
		} else if (s.sched == TPP_SCHED_INTERLEAVED) {
			tpp_appendf(off, sizeof(off), "%sschedule=interleaved", off[0] ? ", " : "");
			s.sched = TPP_SCHED_1F1B;
		}
		if (s.tp_overlap == 1)
			tpp_appendf(off, sizeof(off), "%stp_overlap=1", off[0] ? ", " : "");
		s.tp_overlap = 0;
		if (s.recompute != TPP_FREE && s.recompute != TPP_RECOMPUTE_NONE)
			tpp_appendf(off, sizeof(off), "%srecompute=%s", off[0] ? ", " : "",
				    tpp_recompute_names[s.recompute]);
		else if (s.recompute_layers != TPP_FREE) /* implies full recompute */
			tpp_appendf(off, sizeof(off), "%srecompute_layers=%d (full recompute)",
				    off[0] ? ", " : "", s.recompute_layers);
		s.recompute = TPP_RECOMPUTE_NONE;
		s.recompute_layers = TPP_FREE;
		if (s.zero != TPP_FREE && s.zero > 0)
			tpp_appendf(off, sizeof(off), "%szero=%d", off[0] ? ", " : "", s.zero);
		s.zero = 0;
		if (off[0])
			snprintf(notes, sizeof(notes),
				 "tpplan: exec: note: %s not run by exec; running and predicting the layout without\n",
				 off);
	}
	if (barrier && (s.tp == TPP_FREE || s.tp == 1))
		tpp_appendf(notes, sizeof(notes),
			    "tpplan: exec: note: --barrier times the barriers before TP collectives; with tp = 1 there are none\n");
#ifndef TPP_HAVE_EXEC
	(void)model_arg; (void)cluster_arg; (void)cal_arg; (void)layers; (void)micro;
	(void)scale; (void)hidden; (void)heads; (void)ffn; (void)seq; (void)iters;
	(void)warmup; (void)timeout; (void)json; (void)wrong; (void)check; (void)seed;
	(void)sched; (void)barrier;
	fputs(notes, stderr);
	fprintf(stderr, "tpplan was built without MPI; exec is not available\n");
	return TPP_E_SYSTEM;
#else
	{
		struct tpp_exec_opts o;
		struct tpp_exec_result res;
		struct tpp_cluster *cluster = NULL;
		int rank = 0, size = 1;
		double pred[TPP_PH__COUNT];
		char note[1024] = "", lb[160];

		tpp_exec_opts_default(&o);
		o.shape.mbs = s.mbs == TPP_FREE ? 1 : s.mbs;
		o.over = (struct tpp_exec_shape){hidden, heads, ffn, seq, 0};
		if (model_arg) {
			struct tpp_model m;
			if ((rc = tpp_model_load(model_arg, &m, &err))) {
				tpp_err_print(stderr, &err);
				return rc;
			}
			tpp_strlcpy(plan.model_name, m.name, sizeof(plan.model_name));
			tpp_strlcpy(plan.mlp, tpp_mlp_names[m.mlp], sizeof(plan.mlp));
			plan.kv_heads = m.kv_heads;
			plan.head_dim = m.head_dim;
			o.model = (struct tpp_exec_shape){m.hidden, m.heads, m.ffn, m.seq, o.shape.mbs};
		} else if (plan.has_model) {
			o.model = (struct tpp_exec_shape){plan.hidden, plan.heads, plan.ffn,
							  plan.seq, o.shape.mbs};
		}
		if (model_from) {
			/* exec runs GPT blocks (exec.h), and predicts them */
			int swiglu = plan.mlp[0] && strcmp(plan.mlp, "gelu");
			/* the heads run: --heads, else the model's */
			int rh = o.over.heads ? o.over.heads : o.model.heads;
			/* grouped KV heads (unless as many heads run) and a
			 * head dimension of its own are the model's (its
			 * heads against its hidden), not a --heads that
			 * changes an MHA model's: exec's attention runs rh
			 * full heads of hidden / heads */
			int gqa = plan.kv_heads && plan.kv_heads != o.model.heads &&
				  plan.kv_heads != rh;
			int own_dh = plan.head_dim && o.model.heads &&
				     (long long)plan.head_dim * o.model.heads != o.model.hidden;
			const char *name = plan.model_name[0] ? plan.model_name : "the model";
			/* one note: the first clause names the model, the
			 * others go on with "its" */
			if (swiglu)
				tpp_appendf(notes, sizeof(notes),
					    "tpplan: exec: note: %s's %s MLP runs as a GELU MLP of the same width",
					    name, plan.mlp);
			if (gqa && swiglu)
				tpp_appendf(notes, sizeof(notes), ", its %d KV heads as %d",
					    plan.kv_heads, rh);
			else if (gqa)
				tpp_appendf(notes, sizeof(notes), "tpplan: exec: note: %s's %d KV heads run as %d",
					    name, plan.kv_heads, rh);
			if (own_dh && (swiglu || gqa))
				tpp_appendf(notes, sizeof(notes),
					    ", its head dimension %d as hidden / heads (%g at full size)",
					    plan.head_dim, (double)o.model.hidden / rh);
			else if (own_dh)
				tpp_appendf(notes, sizeof(notes),
					    "tpplan: exec: note: %s's head dimension %d runs as hidden / heads (%g at full size)",
					    name, plan.head_dim, (double)o.model.hidden / rh);
			if (swiglu || gqa || own_dh)
				tpp_appendf(notes, sizeof(notes), " (exec runs GPT blocks; predicted as run)\n");
			o.scale = scale;
			tpp_exec_shape_scale(&o.model, scale, &o.over, &o.shape);
		} else {
			tpp_exec_shape_scale(&o.shape, 1, &o.over, &o.shape);
		}
		/* exec's attention splits hidden into heads of hidden / heads
		 * (exec.h): heads must divide the hidden run.  --scale-down
		 * rounds hidden to a multiple of the heads, so only the
		 * model's own sizes (a head_dim of its own) or --hidden /
		 * --heads get here.  The model's: an input error at its place
		 * (the plan's "heads"); the flags': a usage error naming them */
		if (o.shape.hidden % o.shape.heads) {
			static const char fix[] =
				"exec's attention needs hidden / heads whole: give --hidden and --heads that divide, or --scale-down F, which rounds hidden to a multiple of the heads";
			/* the model's sizes as they are, no flag changed them */
			int as_is = !hidden && !heads && !scale_given && model_from;
			if (as_is && !model_arg) {
				tpp_err_set(&err, TPP_E_INPUT, plan_arg, plan.heads_line,
					    plan.heads_col,
					    "--plan: model \"heads\" = %d does not divide \"hidden\" = %d (the model's head_dim decouples them): %s",
					    o.shape.heads, o.shape.hidden, fix);
				tpp_err_print(stderr, &err);
				return TPP_E_INPUT;
			}
			if (as_is) {
				fprintf(stderr, "tpplan: exec: --model %s: heads %d do not divide hidden %d (the model's head_dim decouples them): %s\n",
					model_arg, o.shape.heads, o.shape.hidden, fix);
				return TPP_E_INPUT;
			}
			fprintf(stderr, "tpplan: exec: heads %d (%s) do not divide hidden %d (%s): %s\n",
				o.shape.heads, heads ? "--heads" : model_from ? "the model's" : "the default",
				o.shape.hidden,
				hidden ? "--hidden" : !model_from ? "the default" :
				scale_given ? "the model's, scaled down" : "the model's",
				fix);
			return TPP_E_USAGE;
		}
		/* tp must divide the heads and the MLP width run.  With the
		 * plan's own layout and sizes (a plan edited by hand: the
		 * planner never picks such a tp) that is the plan's error, at
		 * its "layout_arg"; with flags involved check_opts' usage
		 * error names the sizes */
		if (plan_arg && plan.has_model && !model_arg && s.tp != TPP_FREE) {
			int bad_h = o.shape.heads % s.tp, bad_f = o.shape.ffn % s.tp;
			if ((bad_h || bad_f) && (!bad_h || !heads) &&
			    (!bad_f || (!ffn && !scale_given))) {
				tpp_err_set(&err, TPP_E_INPUT, plan_arg, plan.layout_line,
					    plan.layout_col,
					    "--plan: \"layout_arg\" tp=%d does not divide the model's %s%s%s (\"heads\" = %d, \"ffn\" = %d)",
					    s.tp, bad_h ? "heads" : "", bad_h && bad_f ? " and " : "",
					    bad_f ? "MLP width" : "", plan.heads, plan.ffn);
				tpp_err_print(stderr, &err);
				return TPP_E_INPUT;
			}
		}
		o.backend = backend;
		o.prec = (enum tpp_prec)prec;
		o.tp = s.tp == TPP_FREE ? 1 : s.tp;
		o.pp = s.pp == TPP_FREE ? 1 : s.pp;
		o.sp = s.sp == TPP_FREE ? 0 : s.sp;
		/* at least a layer per stage unless --layers says otherwise
		 * (check_opts refuses fewer, naming the flag) */
		o.layers = layers ? layers : o.pp > 2 ? o.pp : 2;
		o.microbatches = micro;
		o.sched = sched ? TPP_EXEC_SCHED_GPIPE : TPP_EXEC_SCHED_1F1B;
		o.iters = iters;
		o.warmup = warmup;
		o.timeout_s = timeout;
		o.check = check;
		o.wrong_shard = wrong;
		o.wrong_copy = wrong_copy;
		o.barrier = barrier;
		o.seed = (unsigned long long)seed;

		cluster = malloc(sizeof(*cluster));
		if (!cluster) {
			fprintf(stderr, "tpplan: out of memory\n");
			return TPP_E_SYSTEM;
		}
		if ((rc = tpp_cluster_load(cluster_arg, NULL, cluster, &err))) {
			tpp_err_print(stderr, &err);
			if (plan.cluster_gone[0] && cluster_arg == plan.cluster)
				fprintf(stderr, "%s:%d:%d: note: the plan's cluster file %s cannot be read (%s), and no preset is named '%s' (--cluster NAME|FILE gives another)\n",
					plan_arg, plan.cluster_gone_line, plan.cluster_gone_col,
					plan.cluster_gone, plan.cluster_gone_why, plan.cluster);
			else if (cluster_from[0])
				fprintf(stderr, "%s: note: the cluster is the one the plan names (--cluster NAME|FILE gives another)\n",
					plan_arg);
			free(cluster);
			return rc;
		}
		/* no warnings: exec's calibration is of this machine by
		 * design (another device, other nodes than the cluster's),
		 * and every rank would print them */
		if ((rc = tpp_cli_calibrate_cluster(cluster, cal_arg, NULL, NULL))) {
			if (cal_arg && cal_arg == plan.calibration)
				fprintf(stderr, "%s: note: the calibration is the one the plan names (--calibration FILE gives another)\n",
					plan_arg);
			free(cluster);
			return rc;
		}
		/* the file in use, also when it came from the cluster file */
		cal_arg = cluster->calibration[0] ? cluster->calibration : NULL;
		/* without one the predictions are another machine's */
		if (!cal_arg)
			tpp_appendf(notes, sizeof(notes),
				    "tpplan: exec: note: no calibration: the predictions are %s's datasheet and published figures, not this machine's (run `tpplan calibrate` here and pass --calibration to compare like with like)\n",
				    cluster->name);

		/* MPI's own errors may differ per rank: every rank speaks */
		tpp_cli_speak_again();
		if ((rc = tpp_bench_init(&rank, &size, &err))) {
			tpp_err_print(stderr, &err);
			free(cluster);
			return rc;
		}
		if (s.dp == TPP_FREE) {
			/* the rest of the ranks; 1 when tp*pp does not divide
			 * them (then the rank check names the mismatch) */
			long long tpp = (long long)o.tp * o.pp;
			o.dp = tpp > size || size % tpp ? 1 : (int)(size / tpp);
		} else
			o.dp = s.dp;
		rc = tpp_exec_run(&o, &res, &err);
		if (rc && rank == 0) {
			fprintf(stderr, "tpplan: exec: ");
			tpp_err_print(stderr, &err);
		}
		if (rank == 0 && (rc == TPP_OK || rc == TPP_E_INFEASIBLE)) {
			int p;
			/* the notes about what was run, once (not once per
			 * rank), and only when it ran: not before a refusal
			 * they have nothing to do with (a layout that needs
			 * more ranks) */
			fputs(notes, stderr);
			snprintf(lb, sizeof(lb), "tp=%d,pp=%d,dp=%d,sp=%d,mbs=%d", o.tp, o.pp,
				 o.dp, o.sp, o.shape.mbs);
			tpp_exec_predict(&o, cluster, &res, pred, note, sizeof(note));
			/* measured communication well above its prediction: say
			 * what else it holds */
			const char *comm_notes[2] = {NULL, NULL};
			{
				int slow_tp = 0;
				for (p = TPP_PH_TP_AR; p <= TPP_PH_TP_RS; p++)
					slow_tp |= res.count[p] && pred[p] > 0 &&
						   res.measured_s[p] > 3 * pred[p];
				if (slow_tp && !barrier)
					comm_notes[0] = "a TP collective's time includes waiting for the slowest rank of its group; --barrier times that wait apart";
				if (res.count[TPP_PH_PP_P2P] && pred[TPP_PH_PP_P2P] > 0 &&
				    res.measured_s[TPP_PH_PP_P2P] > 3 * pred[TPP_PH_PP_P2P])
					comm_notes[1] = "pp send/recv includes waiting for the neighbouring stage (the pipeline's fill and drain), which its prediction (the transfers) leaves out";
			}
			if (json) {
				printf("{\n  \"schema\": \"tpplan.exec/v1\",\n  \"tpplan_version\": \"%s\",\n  \"status\": \"%s\",\n",
				       tpp_version, rc ? "check_failed" : "ok");
				printf("  \"backend\": \"%s\",\n  \"precision\": \"%s\",\n  \"ranks\": %d,\n",
				       o.backend, tpp_prec_names[o.prec], res.ranks);
				printf("  \"layout_arg\": \"%s\",\n  \"schedule\": \"%s\",\n", lb,
				       tpp_exec_sched_names[o.sched]);
				printf("  \"shape\": {\"hidden\": %d, \"heads\": %d, \"ffn\": %d, \"seq\": %d, \"mbs\": %d, \"layers\": %d, \"microbatches\": %d},\n",
				       o.shape.hidden, o.shape.heads, o.shape.ffn, o.shape.seq,
				       o.shape.mbs, o.layers, o.microbatches);
				printf("  \"model\": ");
				if (model_from)
					tpp_json_str(stdout, plan.model_name);
				else
					printf("null");
				printf(",\n  \"scale_down\": %.17g,\n", o.scale);
				printf("  \"cluster\": ");
				tpp_json_str(stdout, cluster->name);
				printf(",\n  \"calibration\": ");
				if (cal_arg) {
					/* absolute, as the plan's (report --exec
					 * reads it from elsewhere) */
					char *abs = realpath(cal_arg, NULL);
					tpp_json_str(stdout, abs ? abs : cal_arg);
					free(abs);
				} else {
					printf("null");
				}
				/* the notes the text prints, a sentence each:
				 * exec's (stderr), the prediction's, the
				 * communication's */
				printf(",\n  \"notes\": [");
				{
					int first = tpp_json_lines(stdout, notes, "tpplan: exec: note: ", 1);
					first = tpp_json_lines(stdout, note, "", first);
					for (p = 0; p < 2; p++)
						if (comm_notes[p])
							first = tpp_json_lines(stdout, comm_notes[p], "", first);
				}
				printf("]");
				printf(",\n  \"iters\": %d,\n  \"warmup\": %d,\n  \"phases\": [\n", o.iters, o.warmup);
				for (p = 0; p < TPP_PH__COUNT; p++) {
					printf("    {\"phase\": \"%s\", \"count\": %d, \"measured_s\": %.6e, \"predicted_s\": ",
					       tpp_exec_phase_names[p], res.count[p], res.measured_s[p]);
					if (pred[p] >= 0 && res.count[p])
						printf("%.6e, \"error\": %.4f}", pred[p],
						       res.measured_s[p] > 0 ? (pred[p] - res.measured_s[p]) / res.measured_s[p] : 0);
					else
						printf("null, \"error\": null}");
					printf("%s\n", p + 1 < TPP_PH__COUNT ? "," : "");
				}
				printf("  ],\n  \"check\": ");
				if (res.checked) {
					/* an error is infinite where the result
					 * holds a NaN: null, JSON has no inf */
					const double ce[3] = {res.err_out, res.err_dx, res.err_dw};
					static const char *const cn[3] = {"err_output", "err_input_grad", "err_weight_grad"};
					printf("{\"pass\": %s, \"tolerance\": %.3g", rc ? "false" : "true", res.tol);
					for (p = 0; p < 3; p++) {
						if (isfinite(ce[p]))
							printf(", \"%s\": %.3e", cn[p], ce[p]);
						else
							printf(", \"%s\": null", cn[p]);
					}
					printf("}\n");
				} else {
					printf("null\n");
				}
				printf("}\n");
			} else {
				printf("tpplan exec: %s on %d rank%s (%s), backend %s, %s\n", lb, res.ranks,
				       res.ranks == 1 ? "" : "s", "TP innermost, then DP, then PP",
				       o.backend, tpp_prec_names[o.prec]);
				if (model_from) {
					printf("model: %s%s", plan.model_name[0] ? plan.model_name : "(unnamed)",
					       strcmp(model_from, "--model") ? " (the plan's)" : "");
					if (o.scale > 1)
						printf(", --scale-down %g", o.scale);
					printf("\n");
				}
				printf("layers: %d x (hidden %d, heads %d, ffn %d, seq %d), %d micro-batch%s of %d per replica, schedule %s\n",
				       o.layers, o.shape.hidden, o.shape.heads, o.shape.ffn, o.shape.seq,
				       o.microbatches, o.microbatches == 1 ? "" : "es", o.shape.mbs,
				       o.sched == TPP_EXEC_SCHED_GPIPE ? "gpipe (all forwards, then all backwards)"
								       : "1f1b (PipeDream-flush, as Megatron-LM)");
				printf("predictions: %s%s%s%s; times per step on the slowest rank, median of %d after %d warm-up\n\n",
				       cluster->name, cluster_from, cal_arg ? " with " : "", cal_arg ? cal_arg : "",
				       o.iters, o.warmup);
				printf("%-24s %6s %13s %13s %9s\n", "phase", "count", "measured_s", "predicted_s", "error");
				for (p = 0; p < TPP_PH__COUNT; p++) {
					if (!res.count[p])
						continue;
					printf("%-24s %6d %13.6e ", tpp_exec_phase_names[p], res.count[p],
					       res.measured_s[p]);
					if (pred[p] >= 0)
						printf("%13.6e %+8.1f%%\n", pred[p],
						       res.measured_s[p] > 0 ? 100 * (pred[p] - res.measured_s[p]) / res.measured_s[p] : 0);
					else
						printf("%13s %9s\n", "-", "-");
				}
				if (note[0])
					printf("note: %s\n", note);
				for (p = 0; p < 2; p++)
					if (comm_notes[p])
						printf("note: %s\n", comm_notes[p]);
				if (res.checked)
					printf("\nnumerics vs fp64 reference (max |err| / max |ref|, tolerance %.1e): output %.2e, input grad %.2e, weight grads %.2e: %s\n",
					       res.tol, res.err_out, res.err_dx, res.err_dw,
					       rc ? "FAILED" : "pass");
				else
					printf("\nnumerics: not checked (--no-check)\n");
			}
		}
		tpp_bench_finalize();
		free(cluster);
		return rc;
	}
#endif
}
