/*
 * cli.h - shared pieces of the tpplan command line: strict flag parsing,
 * loading the model and cluster named by flags, and the plan printers used
 * by `tpplan` (plan) and `tpplan validate`.
 */
#ifndef TPP_CLI_H
#define TPP_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "planner.h"

/* A documented long option: getopt's entry, its value's name (NULL for a
 * flag) and its help line (NULL: accepted but not listed). */
struct tpp_optdoc {
	struct option opt;
	const char *arg, *help;
};
/*
 * The options that state the problem, shared by `tpplan plan` and
 * `tpplan report` so a report can mirror any plan: their getopt values
 * (each command numbers its own options from TPP_O__PROBLEM_END), one help
 * text for both commands (expanded inside each command's table: the
 * problem, then the cost model and search; --top, --calibration and
 * --time-limit are listed by each command, with its own help line) and
 * one parser.
 */
enum {
	TPP_O_MODEL = 'm', TPP_O_CLUSTER = 'c',
	TPP_O_GPUS = 1000, TPP_O_NODES, TPP_O_GBS, TPP_O_SEQ, TPP_O_PREC,
	TPP_O_FP8_RECIPE, TPP_O_TOP, TPP_O_CALIBRATION, TPP_O_TIME_LIMIT,
	TPP_O_LAYOUT, TPP_O_RESERVE, TPP_O_ATTN, TPP_O_NO_DP_OVERLAP,
	TPP_O_NO_P2P_OVERLAP, TPP_O_GPU_SIGMA, TPP_O_MAX_MBS, TPP_O_MAX_CP,
	TPP_O_ANALYTIC, TPP_O_TRAIN_TOKENS, TPP_O_P2P_SCATTER_GATHER, TPP_O_GRADS16,
	TPP_O_ZERO3_RATE, TPP_O_ZERO3_GATHER, TPP_O__PROBLEM_END
};
#define TPP_CLI_PROBLEM_OPTDOCS \
	{{"model", required_argument, 0, TPP_O_MODEL}, "NAME|FILE", "model preset (see `tpplan models`) or model YAML"}, \
	{{"cluster", required_argument, 0, TPP_O_CLUSTER}, "NAME|FILE", "cluster YAML path, or a preset name in topologies/"}, \
	{{"gpus", required_argument, 0, TPP_O_GPUS}, "N", "plan for N GPUs instead of the cluster's size"}, \
	{{"nodes", required_argument, 0, TPP_O_NODES}, "N", "plan for N nodes instead of the cluster's size"}, \
	{{"global-batch", required_argument, 0, TPP_O_GBS}, "B", "global batch in sequences (default: the model's)"}, \
	{{"seq", required_argument, 0, TPP_O_SEQ}, "S", "sequence length (default: the model's)"}, \
	{{"precision", required_argument, 0, TPP_O_PREC}, "P", "bf16 (default), fp16 or fp8"}, \
	{{"fp8-recipe", required_argument, 0, TPP_O_FP8_RECIPE}, "R", "with --precision fp8: current (default: each tensor's own amax, one more read per quantization) or delayed (scale from the amax history)"}, \
	{{"train-tokens", required_argument, 0, TPP_O_TRAIN_TOKENS}, "T", "tokens to train on (e.g. 300B, 15T, 2.5e12; K M B T = 1e3 1e6 1e9 1e12): also print the training's days and GPU-hours at the predicted step"}
/* The cost model and the layout search. */
#define TPP_CLI_MODEL_OPTDOCS \
	{{"layout", required_argument, 0, TPP_O_LAYOUT}, "L", "fix layout fields: tp, pp, dp, cp, mbs, vp, sp (0/1 or no/yes), recompute (none/selective/full), recompute_layers (with full, which it implies when given alone, 0 included: the first N layers of each model chunk recomputed, block method; 0 or left out = every layer; with recompute left to the search, the fewest that fit, every one that fits for ZB-H1 when simulated), zero (0-3; 2 and 3 with pp > 1 are priced as PyTorch FSDP2 under pipelining: 2 searched, 3 (priced as 2) only when given), schedule (1f1b/interleaved/zb-h1), tp_overlap (0/1 or no/yes); e.g. tp=8,pp=16,vp=3,sp=1; all given: evaluate that one layout"}, \
	{{"mem-reserve-gib", required_argument, 0, TPP_O_RESERVE}, "G", "GPU memory kept free for context, NCCL, workspaces (default 3)"}, \
	{{"attention", required_argument, 0, TPP_O_ATTN}, "A", "flash (default: fused attention kernels, FlashAttention / cuDNN via Transformer Engine; needed for context parallelism) or unfused (scores materialised, Megatron's fused softmax before 2023)"}, \
	{{"no-dp-overlap", no_argument, 0, TPP_O_NO_DP_OVERLAP}, NULL, "do not overlap gradient reduction with backward"}, \
	{{"no-p2p-overlap", no_argument, 0, TPP_O_NO_P2P_OVERLAP}, NULL, "pipeline transfers block their sender in every schedule (Megatron's default)"}, \
	{{"p2p-scatter-gather", no_argument, 0, TPP_O_P2P_SCATTER_GATHER}, NULL, "without sequence parallelism each TP rank sends 1/tp of a pipeline activation and the receiver all-gathers it over NVLink (Megatron-LM before Megatron-Core, Megatron-DeepSpeed; default: every TP rank sends the whole tensor, as Megatron-Core)"}, \
	{{"grads-16bit", no_argument, 0, TPP_O_GRADS16}, NULL, "accumulate and reduce gradients in the 16-bit training type, 2 bytes a parameter (Megatron-Core grad_reduce_in_fp32=False, as NeMo's FP8 performance recipes; default: fp32 main gradients, 4 bytes, as Megatron-LM and Megatron-Bridge): less gradient memory, half the data-parallel reduction's bytes"}, \
	{{"zero3-rate-GBps", required_argument, 0, TPP_O_ZERO3_RATE}, "R", "ZeRO-3 without pipelining: parameter gathers and gradient reduce-scatters move at most R GB/s per GPU (bytes gathered / time), where the implementation bounds them, not the network: 21.25 for DeepSpeed's ZeRO-3 of 2021 (issue #1174; what validate assumes for ZeRO-3 rows of the legacy stack); default: NCCL's rate"}, \
	{{"zero3-gather", required_argument, 0, TPP_O_ZERO3_GATHER}, "U", "ZeRO-3 without pipelining: the unit gathered at once, of which memory holds two (the one computing, the one prefetched): layer (default: PyTorch FSDP wrapping each transformer layer) or module (each Linear's weight on its own, DeepSpeed's ZeRO-3; what validate assumes for ZeRO-3 rows of the legacy stack)"}, \
	{{"gpu-variation", required_argument, 0, TPP_O_GPU_SIGMA}, "S", "spread (sigma) of per-GPU speed, fraction of the median (default 0.02, Sinha et al. SC22; 0 = identical GPUs)"}, \
	{{"max-mbs", required_argument, 0, TPP_O_MAX_MBS}, "N", "largest micro-batch to try (default 16; a --layout mbs past the default is tried, past a given N is a usage error)"}, \
	{{"max-cp", required_argument, 0, TPP_O_MAX_CP}, "N", "largest context-parallel degree to try (default 16; likewise for --layout cp)"}, \
	{{"analytic", no_argument, 0, TPP_O_ANALYTIC}, NULL, "rank by the analytic model only (no simulation)"}

/* The problem as the options state it (0 / NULL: not given). */
struct tpp_cli_problem {
	const char *model_arg, *cluster_arg, *calibration;
	const char *layout_arg;		/* --layout */
	int gpus, nodes, gbs, seq;
	int top;			/* default 5 */
	int max_mbs, max_cp;		/* default 16 each */
	int max_mbs_given, max_cp_given; /* on the command line */
	int analytic;
	double time_limit;		/* s per search, default 60; 0 = none */
	double train_tokens;		/* --train-tokens; 0 = not given */
	int fp8_recipe_given;
	unsigned long long seen;	/* options met (bit ch - TPP_O_GPUS + 2;
					   --model 0, --cluster 1): a value
					   option twice is a usage error */
	struct tpp_cost_opts *co;	/* --precision, --fp8-recipe,
					   --mem-reserve-gib, --attention,
					   --no-dp-overlap, --no-p2p-overlap,
					   --p2p-scatter-gather,
					   --gpu-variation */
};
/* Nothing given yet; the cost-model options set co's fields. */
void tpp_cli_problem_init(struct tpp_cli_problem *p, struct tpp_cost_opts *co);
/*
 * One getopt_long result `ch` (value in optarg) that the command's own
 * switch does not take: a problem option into *p, else ':' or '?' (a
 * missing value or an unknown option of `tpplan CMD`).  Prints errors;
 * returns TPP_OK or TPP_E_USAGE.
 */
int tpp_cli_problem_opt(struct tpp_cli_problem *p, int ch, char *const *argv,
			const char *cmd);
/* After the options: --gpus with --nodes, --fp8-recipe without
 * --precision fp8, operands. */
int tpp_cli_problem_args(const struct tpp_cli_problem *p, int argc,
			 char *const *argv);
/* Load --model into *m with --seq applied.  Prints errors; returns an
 * exit status. */
int tpp_cli_problem_model(const struct tpp_cli_problem *p, struct tpp_model *m);
struct tpp_calibration;
/* Load --cluster into *c with --calibration (`keep`: as in
 * tpp_cli_calibrate_cluster) and size it for --gpus / --nodes
 * (tpp_cli_size_cluster; *gpus_out).  Prints errors; returns an exit
 * status. */
int tpp_cli_problem_cluster(const struct tpp_cli_problem *p,
			    struct tpp_cluster *c,
			    struct tpp_calibration **keep, int *gpus_out);

/* The search the options state for `gpus` GPUs of model m (its global
 * batch unless --global-batch): --top, --max-mbs, --max-cp, --time-limit,
 * --analytic and --layout into *s.  Prints errors; returns an exit
 * status. */
int tpp_cli_problem_search(const struct tpp_cli_problem *p,
			   const struct tpp_model *m, int gpus,
			   struct tpp_search *s);

/* The options part of a subcommand's help: "  --name ARG" padded to
 * `width`, then the help; an option whose value is a letter of `shorts`
 * (the command's getopt short options) is shown as "-x, --name". */
void tpp_cli_print_opts(FILE *f, const struct tpp_optdoc *d, size_t n,
			int width, const char *shorts);
/* getopt_long's table from ours (n + 1 entries, zero-terminated). */
void tpp_cli_long_opts(const struct tpp_optdoc *d, size_t n, struct option *lo);
/* For getopt's ':' (missing value) and '?' (unknown option) results:
 * prints the error naming the flag and `tpplan CMD --help`; returns
 * TPP_E_USAGE. */
/* getopt_long (no longindex) that remembers which word it was reading,
 * for tpp_cli_bad_option; every command's option loop calls this. */
int tpp_cli_getopt(int argc, char *const *argv, const char *shortopts,
		   const struct option *longopts);
int tpp_cli_bad_option(int ch, char *const *argv, const char *cmd);
/* TPP_OK if getopt left no operands, else prints and returns TPP_E_USAGE. */
int tpp_cli_no_operands(int argc, char *const *argv);

/* A flag's value that is another option ("--timeline --json": getopt took
 * the next option for the value): a usage error naming both; TPP_OK
 * otherwise.  cmd is "" or e.g. "exec: ". */
int tpp_cli_value(const char *cmd, const char *flag, const char *arg);
/* A flag that takes one file or layout: the first value into *slot; a
 * second is a usage error ("tpplan: <cmd>FLAG is given twice<why>"), not
 * silently the one that counts, as is a value that is an option
 * (tpp_cli_value).  cmd is "" or e.g. "exec: ". */
int tpp_cli_once(const char *cmd, const char *flag, const char *why,
		 const char **slot, const char *arg);
/* Parse an integer flag value in [lo, hi]; prints a usage error naming the
 * flag and returns TPP_E_USAGE on failure. */
int tpp_cli_int(const char *flag, const char *arg, long lo, long hi, int *out);
int tpp_cli_double(const char *flag, const char *arg, double lo, double hi,
		   double *out);

/* --precision for planning: bf16, fp16 or fp8 (usage error otherwise). */
int tpp_cli_train_precision(const char *arg, enum tpp_prec *out);
/* --attention: unfused or flash (usage error otherwise). */
int tpp_cli_attention(const char *arg, enum tpp_attn *out);
/* --fp8-recipe current|delayed; TPP_E_USAGE (message printed) otherwise. */
int tpp_cli_fp8_recipe(const char *arg, enum tpp_fp8_recipe *out);
/* TPP_OK unless --fp8-recipe was given without --precision fp8 (then a
 * usage error, message printed). */
int tpp_cli_fp8_recipe_applies(int given, enum tpp_prec prec);

/*
 * Parse "tp=8,pp=16,dp=8,cp=1,mbs=1,vp=3,sp=1,recompute=selective,zero=1"
 * into the constraints of *s (fields not named stay as they are).
 * Returns TPP_E_USAGE with a message naming the bad item.
 */
int tpp_cli_parse_layout(const char *arg, struct tpp_search *s,
			 struct tpp_err *err);

/*
 * An output file (`flag` names it in the error) must not be one of the
 * inputs (NULL or "" entries skipped): the same file (device and inode,
 * so also through another name or a link) is a usage error, printed;
 * an output that does not exist yet is fine.
 */
int tpp_cli_not_an_input(const char *flag, const char *out, const char *const *inputs,
			 size_t n);

/*
 * Under an MPI launcher, before MPI starts: ranks other than 0 and other
 * than the first of each node (by the launcher's environment) send stderr
 * to /dev/null, so that an error every rank finds in the same options is
 * printed once a node; speak again before MPI_Init, whose errors may
 * differ per rank.
 */
void tpp_cli_quiet_until_mpi(void);
void tpp_cli_speak_again(void);

/*
 * Apply the calibration at `path` (NULL: the cluster file's calibration:
 * key, if any) to `c`; c->calibration then names the file.  With `keep`
 * the loaded calibration is handed to the caller (free() it; NULL when
 * there was none), else freed.  Prints errors, and tpp_cal_check's
 * warnings to `warn` (NULL: none); returns an exit status.
 */
int tpp_cli_calibrate_cluster(struct tpp_cluster *c, const char *path,
			      struct tpp_calibration **keep, FILE *warn);

/*
 * Size `c` for --gpus / --nodes (0: not given; the cluster's own size),
 * refusing a count that is not whole nodes and a precision the GPU has
 * no peak for.  Prints errors naming the flag; returns an exit status and
 * sets *gpus_out.
 */
int tpp_cli_size_cluster(struct tpp_cluster *c, int gpus, int nodes,
			 enum tpp_prec prec, int *gpus_out);

/*
 * Load a tpplan JSON output (`tpplan --json`, `tpplan exec --json`) named
 * by `flag` with libyaml (JSON is YAML flow syntax; nodes keep line:col)
 * and check its "schema".  Errors are located, printed and returned as an
 * exit status; on success call tpp_ydoc_free(d).
 */
struct tpp_ydoc;
int tpp_cli_json_load(struct tpp_ydoc *d, const char *flag, const char *path,
		      const char *schema);

/* Print the plan as a table with the reasoning (text) or as JSON. */
struct tpp_plan_ctx {
	const struct tpp_model *model;
	const struct tpp_cluster *cluster;
	const struct tpp_cost_opts *opts;
	const struct tpp_search *search;
	/* fewer GPUs that plan faster (tpp_cli_fewer_gpus); NULL: not
	 * searched */
	const struct tpp_cli_fewer *fewer;
	/* when the best layout is ZeRO-3 across nodes, the best that is not
	 * (tpp_cli_best_without_zero3); NULL: not searched */
	const struct tpp_cli_alt *no_zero3;
	/* with no feasible layout: the first of 2x .. 64x the GPUs at which
	 * one fits (tpp_cli_first_fit); NULL: not searched */
	const struct tpp_cli_more *more;
	/* --train-tokens, 0 when not given: the steps it takes
	 * (tpp_cli_train_steps) */
	double train_tokens;
	long long train_steps;
};
/* Steps to train on `tokens` tokens at `gbs` sequences of `seq` tokens a
 * step: ceil(tokens / (gbs seq)); 0 when tokens is 0. */
long long tpp_cli_train_steps(double tokens, int gbs, int seq);
/* "Training on T tokens (--train-tokens): S steps ..., D days on N GPUs
 * (H GPU-hours) at the predicted step; ... at the published runs' error
 * range ..." for the plan's best layout into buf; 0 and "" when
 * --train-tokens was not given or nothing fits. */
size_t tpp_print_training(char *buf, size_t size, const struct tpp_plan_ctx *x,
			  const struct tpp_plan *p);
/* The sentence saying which runners-up are within TPP_MEASURED_SPREAD of
 * the best (or by how much the best leads) into buf; 0 (and "") when the
 * plan has one layout. */
size_t tpp_print_ties(char *buf, size_t size, const struct tpp_plan *p);
/* "N layouts considered, M valid and fit in memory: ..." -- where the
 * feasible layouts went (simulated, too long to simulate, discarded by
 * their bound; all ranked by the analytic model with --analytic), and the
 * per-degree bests simulated besides. */
void tpp_print_counts(char *buf, size_t size, const struct tpp_plan *p,
		      const struct tpp_search *s);
/* How much longer the published runs of the kind tpp_eval_optimistic
 * (planner.h) names took than predicted at NCCL's rates (SC21 Table 2, rows
 * A11-A16, each planned as `validate` prices it -- its layout, fp16,
 * unfused attention, prefetched with fp16 gradients -- but without
 * --zero3-rate-GBps), as the caution and the report's marks state it;
 * tests/cli/test_cli.sh recomputes it (deepspeed-nccl-range). */
#define TPP_OPTIMISTIC_RANGE "1.5-4.8"
/* The same runs' measured over predicted step at their implementation's
 * rate (validate's legacy stack, TPP_DEEPSPEED_2021_ZERO3_BPS), which the
 * caution states instead when the plan has --zero3-rate-GBps;
 * tests/cli/test_cli.sh recomputes it from validate --json. */
#define TPP_DEEPSPEED_RATE_RANGE "0.89-1.27"
/* The same ratio, measured over predicted step, for the PyTorch FSDP runs
 * across nodes among the published runs (64 A100 over 8 nodes: MosaicML's
 * MPT-70B, TorchTitan's three rows), which the caution states beside it;
 * tests/cli/test_cli.sh recomputes it. */
#define TPP_FSDP_NODES_RANGE "1.09-1.25"
/* And for Megatron FSDP's runs across NVLink domains among them (NVIDIA's
 * Llama 3.1 405B on 128 GB200, two NVL72 racks: nemo-perf.tsv R03, S03),
 * stated beside it; tests/cli/test_cli.sh recomputes it. */
#define TPP_MFSDP_NODES_RANGE "1.07-1.10"
/* A caution about the layouts shown where the validation shows the model
 * optimistic (ZeRO-3 across nodes): the best one, or the runners-up that
 * are (which are then no tie for a best that is not); 0 and "" when none
 * applies.  `alt`, when not NULL, is the search for the best layout
 * that is not ZeRO-3 across nodes (tpp_cli_best_without_zero3), whose
 * outcome a caution about the best states. */
size_t tpp_print_caution(char *buf, size_t size, const struct tpp_plan *p,
			 const struct tpp_cli_alt *alt, const struct tpp_cost_opts *o);
/*
 * The cost model's error on the published runs it is checked against,
 * (predicted - measured) / measured of the step time: the rows of
 * shared/validation/published-runs.tsv, tests/data/runs/bridge-25.11.tsv,
 * tests/data/runs/mosaic-mpt-a100.tsv and tests/data/runs/torchtitan-a100.tsv
 * (both --stack modern), tests/data/runs/nemo-perf.tsv (NVIDIA's earlier
 * releases, gathered after the model was written) and
 * tests/data/runs/meta-llama3-405b.tsv (tests/data/runs/sc21-table1-scripts.tsv
 * repeats published-runs' A01-A10 measurements and is not counted twice),
 * without a
 * calibration file and without the rows predicted with ZeRO-3 across
 * nodes (validate --json "zero3_nodes": tpp_eval_optimistic; DeepSpeed's
 * A11-A16, the PyTorch FSDP runs on 64 A100 and Megatron FSDP's on 128
 * GB200), which have their own caution.  tests/cli/test_cli.sh recomputes
 * them from `tpplan validate --json` and fails when they no longer hold,
 * so a change to the model updates them here.
 */
#define TPP_ACC_RUNS 82
#define TPP_ACC_ERR_MIN (-0.2691)
#define TPP_ACC_ERR_MEDIAN (-0.0624)
#define TPP_ACC_ERR_MAX 0.0663
/*
 * The same over the runs among them that validate predicts with ZeRO-3 /
 * FSDP and no pipelining (tpp_zero_per_microbatch: layouts with pp=1 and
 * zero=3), none across nodes (left out above): NeMo's and Megatron-Bridge's
 * FSDP rows and MosaicML's PyTorch FSDP ones, 8 to 64 GPUs in one node or
 * NVLink domain.  A plan whose best layout is of that kind states this range
 * beside the whole set's, and --train-tokens takes its range from it;
 * tests/cli/test_cli.sh recomputes them too.
 */
#define TPP_ACC_Z3_RUNS 12
#define TPP_ACC_Z3_ERR_MIN (-0.1729)
#define TPP_ACC_Z3_ERR_MEDIAN (-0.1141)
#define TPP_ACC_Z3_ERR_MAX 0.0663
/*
 * The same over the FP8 runs among them (NVIDIA's performance recipes:
 * every row of tests/data/runs/bridge-25.11.tsv and nemo-perf.tsv, none
 * across nodes), which predict further short than the 16-bit ones (median
 * 9 % against 4 %).  A plan in fp8 states this range beside the whole
 * set's, and --train-tokens takes its range from it (the ZeRO-3 / FSDP
 * one first, where both apply); tests/cli/test_cli.sh recomputes them.
 */
#define TPP_ACC_FP8_RUNS 46
#define TPP_ACC_FP8_ERR_MIN (-0.2691)
#define TPP_ACC_FP8_ERR_MEDIAN (-0.0876)
#define TPP_ACC_FP8_ERR_MAX 0.0663
/* What the global batch leaves data parallelism, for the batch
 * rejection: " (dp divides both the global batch B and the N GPUs: at most
 * their gcd, G)" into buf, "" when G is N (no limit then); returns buf. */
const char *tpp_print_batch_hint(char *buf, size_t size, const struct tpp_search *s);
/* For a problem with no feasible layout: the smallest count of 2x, 4x,
 * ... 2^tpp_cli_first_fit_steps(s) x its GPUs that --gpus takes
 * (tpp_cli_whole_nodes) at which a layout fits
 * (searched with its options; alt and tmp are scratch).  The searches
 * share what is left of s->time_limit_s after the `spent_s` the first
 * search took.  Returns that count with its best layout in *found, 0 when
 * none fits, -1 when a search failed or when no doubling is within the
 * 2^24 GPUs tpplan plans for, TPP_CLI_FIRST_FIT_TIMED_OUT - i when the
 * search at 2^i x ran out of time (those below it fit none). */
#define TPP_CLI_FIRST_FIT_MAX 6
#define TPP_CLI_FIRST_FIT_TIMED_OUT (-10)
/* Whether a cluster of `gpus` is one that --gpus takes: part of a node, or
 * whole nodes. */
int tpp_cli_whole_nodes(long long gpus, int gpus_per_node);
int tpp_cli_first_fit_steps(const struct tpp_search *s);
int tpp_cli_first_fit(const struct tpp_model *m, const struct tpp_cluster *c,
		      const struct tpp_cost_opts *co, const struct tpp_search *s,
		      double spent_s, struct tpp_cluster *alt, struct tpp_plan *tmp,
		      struct tpp_eval *found);
/*
 * Fewer GPUs: a global batch that the GPU count divides badly caps data
 * parallelism (dp divides both), and the rest of the GPUs must then go to
 * model parallelism (tp*pp*cp a multiple of gpus / gcd(gpus, batch)), or
 * no layout fits at all.  The counts worth searching are the whole-node
 * counts below s->gpus, down to half of it, at which gcd(count, global
 * batch) rises to at least twice the one before (the request's first):
 * the largest count of each rise.  tpp_cli_fewer_counts puts at most max
 * of them into out, largest first: all when there are no more, else the
 * first rise (the most GPUs), the last (the most data parallelism) and
 * evenly between.
 *
 * tpp_cli_fewer_gpus searches them with s's options (alt and tmp are
 * scratch), sharing what is left of s->time_limit_s after *spent_s, to
 * which it adds the time it took.  It names (gpus, best) the count whose
 * best step is shortest when that step is more than TPP_MEASURED_SPREAD
 * shorter than `best`'s (against a best that is not ZeRO-3 across nodes,
 * which is priced optimistically, each count's best that is not either)
 * -- else the fewest GPUs whose best step ties best's (within the
 * spread either way: the same step, GPUs freed; fw->tie) -- or, with best
 * NULL (no layout fits the request), the count that fits with the
 * shortest step.  Nothing is searched when --layout fixes dp (the request's dp
 * is the point, and the comparison would be with another dp).  Returns
 * fw->gpus (0 none).
 */
/* More GPUs for a problem with no feasible layout (tpp_cli_first_fit). */
struct tpp_cli_more {
	int gpus;              /* the first count that fits, 0: none */
	int searched_up_to;    /* the largest count searched */
	struct tpp_eval best;  /* its best layout (gpus > 0) */
};
#define TPP_CLI_FEWER_MAX 3
struct tpp_cli_fewer {
	int gpus;                         /* the count named, 0 none */
	int tie;                          /* 1: its step ties the request's
					     (within TPP_MEASURED_SPREAD)
					     rather than beating it */
	struct tpp_eval best;             /* its best layout */
	int searched[TPP_CLI_FEWER_MAX];  /* counts searched to the end */
	int n_searched;
	int complete;                     /* 0: an error or the time limit
					     stopped the searches */
};
int tpp_cli_fewer_counts(const struct tpp_search *s, int gpus_per_node, int *out, int max);
int tpp_cli_fewer_gpus(const struct tpp_model *m, const struct tpp_cluster *c,
		       const struct tpp_cost_opts *co, const struct tpp_search *s,
		       double *spent_s, const struct tpp_eval *best,
		       struct tpp_cluster *alt, struct tpp_plan *tmp, struct tpp_cli_fewer *fw);
/*
 * When the best layout of plan p is ZeRO-3 across nodes, which the model
 * prices optimistically (tpp_eval_optimistic), the best layout of the
 * same problem that is not (zero left to the search, the other --layout
 * fields kept; s.exclude_optimistic), searched within what is left of
 * s->time_limit_s after *spent_s (to which it adds the time it took).
 * tmp is scratch.  Returns and sets alt->status.
 */
enum tpp_cli_alt_status {
	TPP_ALT_NOT_NEEDED,  /* p's best is not of that kind */
	TPP_ALT_FOUND,       /* alt->best holds it */
	TPP_ALT_NONE_FITS,   /* no such layout fits the request */
	TPP_ALT_STOPPED      /* the time limit (or an error) stopped it */
};
struct tpp_cli_alt {
	enum tpp_cli_alt_status status;
	struct tpp_eval best;
};
extern const char *const tpp_cli_alt_status_names[];
enum tpp_cli_alt_status tpp_cli_best_without_zero3(const struct tpp_model *m,
						   const struct tpp_cluster *c,
						   const struct tpp_cost_opts *co,
						   const struct tpp_search *s,
						   const struct tpp_plan *p, double *spent_s,
						   struct tpp_plan *tmp, struct tpp_cli_alt *alt);
/*
 * The follow-up searches after the plan p of s (status rc), as plan and
 * report make them: the best layout that is not ZeRO-3 across nodes into
 * nz when p's best is (x->no_zero3 = nz), and fewer GPUs into fw
 * (x->fewer = fw); both left NULL in x after a search that stopped at its
 * time limit or matched no layout.  *spent_s starts at p's time and grows
 * by theirs (the first-fit searches take what is left).  alt and tmp are
 * scratch.
 */
void tpp_cli_follow_ups(const struct tpp_model *m, const struct tpp_cluster *c,
			const struct tpp_cost_opts *co, const struct tpp_search *s,
			const struct tpp_plan *p, int rc, double *spent_s,
			struct tpp_cluster *alt, struct tpp_plan *tmp,
			struct tpp_cli_alt *nz, struct tpp_cli_fewer *fw,
			struct tpp_plan_ctx *x);
/* Its result as a sentence into buf (0 and "" when it names none), for
 * the request's best layout `best` (NULL: none fits); and as one indented
 * line on f. */
size_t tpp_cli_fewer_text(char *buf, size_t size, const struct tpp_search *s,
			  const struct tpp_cluster *c, const struct tpp_cli_fewer *fw,
			  const struct tpp_eval *best);
void tpp_cli_print_fewer(FILE *f, const struct tpp_search *s, const struct tpp_cluster *c,
			 const struct tpp_cli_fewer *fw, const struct tpp_eval *best);
/* " (--nodes M)" into buf when n GPUs are M whole nodes of c (--nodes
 * is the other way to ask for them), "" otherwise */
void tpp_cli_nodes_hint(char *buf, size_t size, int n, const struct tpp_cluster *c);
/* Its result n (and layout e) for the problem of s on c as "  with N
 * GPUs (kx) a layout fits: ... --gpus N (--nodes M) --layout <e's whole
 * layout>" on f, or that none does; nothing for n < 0. */
void tpp_cli_print_first_fit(FILE *f, const struct tpp_search *s,
			     const struct tpp_cluster *c, int n,
			     const struct tpp_eval *e);
/* The warnings (one per line) that applying the last calibration file
 * printed, e.g. measured on another device; "" when none. */
const char *tpp_cli_cal_warnings(void);
/* The sentence stating that error, into buf; `calibrated`: the plan's
 * figures come in part from a calibration file; `best`, when not NULL and
 * ZeRO-3 without pipelining, adds the TPP_ACC_Z3_* range; a plan in `prec`
 * fp8 adds the TPP_ACC_FP8_* range. */
size_t tpp_print_accuracy(char *buf, size_t size, int calibrated,
			  const struct tpp_eval *best, enum tpp_prec prec);
/* Why a search found no layout, on f: each rejection reason with its
 * count (the batch's with what it leaves dp, tpp_print_batch_hint), and
 * the layout closest to fitting with its memory need. */
void tpp_print_infeasible(FILE *f, const struct tpp_plan *p, const struct tpp_search *s,
			  const struct tpp_cluster *c);
/* "81.3 GiB of 80.0 GiB": a memory need against the capacity, in GiB, with
 * enough digits that the two differ when they do (80.004 of 80.000). */
void tpp_print_gib_pair(char *buf, size_t size, double need_bytes,
			double have_bytes);
/* Decimals for a step time printed in seconds: six under a second (three
 * would print 0.000 s for a sub-millisecond step, and hide the
 * difference a percentage beside it states), else three. */
static inline int tpp_step_digits(double step_s)
{
	return step_s < 1.0 ? 6 : 3;
}
/* How many of the plan's top layouts keep their analytic step (a pipeline
 * too long to simulate, or --analytic): 0 all simulated, n_top none. */
int tpp_print_top_analytic(const struct tpp_plan *p);
/* What grew against the best: the (up to) two step-time parts by which
 * `alt` exceeds `best` most, e.g. "tp_comm +5.34 s", into buf. */
void tpp_print_explain(const struct tpp_eval *alt, const struct tpp_eval *best,
		       char *buf, size_t size);
void tpp_print_plan_text(FILE *f, const struct tpp_plan_ctx *x,
			 const struct tpp_plan *p);
void tpp_print_plan_json(FILE *f, const struct tpp_plan_ctx *x,
			 const struct tpp_plan *p, int status);
void tpp_print_eval_text(FILE *f, const struct tpp_plan_ctx *x,
			 const struct tpp_eval *e);
/*
 * Simulate layout `e->layout` and write its timeline to `path` atomically
 * (temporary file + rename).  Format (tab-separated, one header line):
 *   rank chunk microbatch kind start_s end_s
 * kind: F forward, B input gradient, W weight gradient, BW whole backward,
 * DP gradient reduction of the rank, OPT optimizer step (rank -1).
 * Returns 0 or prints the error and returns an exit code.
 */
int tpp_write_timeline(const char *path, const struct tpp_plan_ctx *x,
		       const struct tpp_eval *e);

/* Print a string as a JSON string literal. */
void tpp_json_str(FILE *f, const char *s);
/* "time_s": {...}SEP"memory_bytes": {...}: an evaluation's step and
 * memory breakdowns, as plan's JSON and validate's rows give them (17
 * significant digits: they add up to step_s and memory_bytes.total) */
void tpp_json_parts(FILE *f, const struct tpp_eval *e, const char *sep);
/* The non-empty lines of text, each without a leading `strip` (when it
 * starts so), as JSON strings separated by ", " (one before the first
 * too unless `first`); returns whether nothing has been written yet, for
 * the next call on the same array. */
int tpp_json_lines(FILE *f, const char *text, const char *strip, int first);

/* Subcommands. argv[0] is the subcommand name. */
int tpp_cmd_plan(int argc, char **argv);
int tpp_cmd_models(int argc, char **argv);
int tpp_cmd_validate(int argc, char **argv);
int tpp_cmd_calibrate(int argc, char **argv);
int tpp_cmd_exec(int argc, char **argv);
int tpp_cmd_report(int argc, char **argv);

#endif
