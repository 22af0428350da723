/*
 * cmd_validate.c - `tpplan validate FILE`: predict each published training
 * run of a runs file (format: ../shared/validation/README.md) and report
 * predicted vs measured step time.  Blank layout fields are searched, as
 * the original authors tuned them.  Rows that cannot be predicted are
 * listed with the reason and counted, never dropped.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"

#define MAX_COLS 40
#define MAX_ROWS 4096
#define MAX_LINE 8191 /* bytes of a line, its newline included */

enum col {
	C_ID, C_LAYERS, C_HIDDEN, C_HEADS, C_KV, C_FFN, C_MLP, C_VOCAB, C_SEQ,
	C_GBS, C_MBS, C_TP, C_PP, C_DP, C_CP, C_VP, C_SP, C_RECOMPUTE, C_ZERO,
	C_GPUS, C_CLUSTER, C_PREC, C_STEP, C_SOURCE, C__COUNT
};
static const char *const col_names[C__COUNT] = {
	"id", "layers", "hidden", "heads", "kv_heads", "ffn", "mlp", "vocab",
	"seq", "gbs", "mbs", "tp", "pp", "dp", "cp", "vp", "sp", "recompute",
	"zero", "gpus", "cluster", "precision", "step_time_s", "source",
};
/* columns that may not be blank */
static const int required_cols[] = {C_ID, C_LAYERS, C_HIDDEN, C_HEADS, C_VOCAB,
				    C_SEQ, C_GBS, C_GPUS, C_CLUSTER, C_STEP};

/* The software stack a row is predicted for (row_stack). */
enum stack { STACK_AUTO, STACK_LEGACY, STACK_MODERN };
static const char *const stack_names[] = {"auto", "legacy", "modern"};

struct row_result {
	char id[128];
	char source[160];
	int ok;
	char reason[2048];
	int line;     /* the row's line in the file (1-based) */
	int bad_col;  /* the runs-format column the reason is about, or -1 */
	int byte_col; /* where that field starts on the line (1-based), or 0 */
	double measured_s, predicted_s, err;
	enum tpp_attn attn; /* the attention kernel the row was predicted with */
	enum stack stack;   /* the software stack assumed (row_stack) */
	int dropout;        /* whether the model was priced with dropout (search_stack) */
	/* zero left blank and the search's best ZeRO-3 across nodes: 1 the
	 * best layout without it stands in, 2 none fits, so it stays */
	int zero3_rule;
	struct tpp_eval e;
};
static const char *const zero3_rule_names[] = {"null", "\"replaced\"", "\"kept\""};

/* src into dst (of size bytes), control characters (a terminal's escape
 * sequences, tabs, a carriage return) shown as '?': the id and source are
 * printed and go into the model's description. */
static void copy_printable(char *dst, const char *src, size_t size)
{
	tpp_strlcpy(dst, src, size);
	tpp_utf8_trim(dst); /* not half a character where it was cut */
	tpp_printable(dst, 0);
}

/*
 * One line of f, its newline included, into buf (NUL-terminated), at most
 * size - 1 bytes: the bytes read in *len, and 0; -1 at the end of the
 * file; 1 when the line is longer (the rest is not read: a binary or
 * runaway file is refused without being read whole).  A NUL byte in the
 * line shows as strlen(buf) < *len.
 */
static int read_line(FILE *f, char *buf, size_t size, size_t *len)
{
	size_t n = 0;
	int ch = EOF;
	while (n + 1 < size && (ch = getc(f)) != EOF) {
		buf[n++] = (char)ch;
		if (ch == '\n')
			break;
	}
	buf[n] = '\0';
	*len = n;
	if (n + 1 == size && ch != '\n' && (ch = getc(f)) != EOF)
		return 1;
	return n ? 0 : -1;
}

static int split_tabs(char *line, char **fields, int max)
{
	int n = 0;
	char *p = line;
	size_t len = strlen(line);
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	fields[n++] = p;
	for (; *p; p++)
		if (*p == '\t') {
			*p = '\0';
			if (n == max)
				return -1;
			fields[n++] = p + 1;
		}
	return n;
}

/* Parse integer column `name`; blank gives `blank`.  On a bad value the
 * reason names the column, the value and the range. */
static int field_int(const char *v, const char *name, int blank, int lo,
		     int hi, int *out, char *reason, size_t rsize)
{
	char *end;
	long x;
	if (!*v) {
		*out = blank;
		return 0;
	}
	errno = 0;
	x = strtol(v, &end, 10);
	/* strtol would skip leading blanks and take a '+': " 32" and "+32"
	 * would pass where "32 " does not */
	if (!(isdigit((unsigned char)v[0]) || v[0] == '-') ||
	    end == v || *end || errno || x < lo || x > hi) {
		snprintf(reason, rsize, "column '%s': '%.40s' is not an integer in [%d, %d]",
			 name, v, lo, hi);
		return -1;
	}
	*out = (int)x;
	return 0;
}

/* Seconds for the table: three decimals, or three significant digits
 * below 0.1 s (the format takes steps down to 1 us, which "%.3f" shows
 * as 0.000). */
static void fmt_seconds(char *buf, size_t size, double v)
{
	snprintf(buf, size, v >= 0.0995 ? "%.3fs" : "%.3gs", v);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

enum { O_HELP = 'h', O_JSON = 256, O_ATTN, O_STACK };

static const struct tpp_optdoc opts[] = {
	{{"json", no_argument, 0, O_JSON}, NULL, "print the rows and the summary as JSON (schema tpplan.validate/v1)"},
	{{"attention", required_argument, 0, O_ATTN}, "A", "unfused or flash: every row's attention kernel (default: the row's stack's)"},
	{{"stack", required_argument, 0, O_STACK}, "S", "legacy or modern: every row's software stack (default: told by the row)"},
	{{"help", no_argument, 0, O_HELP}, NULL, "this help"},
};

/* getopt's short options (the help shows them beside the long ones) */
static const char shortopts[] = ":h";

static void validate_usage(FILE *f)
{
	fprintf(f, "usage: tpplan validate FILE [--json] [--attention unfused|flash]\n"
		   "                      [--stack legacy|modern]\n\n"
		   "Predicts every row of a runs file (tab-separated, format in\n"
		   "shared/validation/README.md) and prints predicted vs measured step time,\n"
		   "then `MAPE x%%  median y%%  worst z%%  rows n`.  The cluster column is\n"
		   "a preset name (topologies/NAME.yaml; not a file of that name in the\n"
		   "working directory) or a path to a cluster YAML, relative to the runs file.\n"
		   "Blank layout fields are searched; what the format has no column for follows the\n"
		   "row's software stack (--stack fixes it): legacy (Megatron 2021-22: unfused\n"
		   "attention, no overlaps, GeLU models with dropout 0.1; unless the row says otherwise no\n"
		   "sequence parallelism or ZeRO, full recompute) for GPT-style 16-bit rows on GPUs\n"
		   "without fp8 that fit so (fp16 where the row states ZeRO-2/3: DeepSpeed's\n"
		   "of 2021 took no bf16; its ZeRO-3 traffic moved at 21.25 GB/s per GPU,\n"
		   "prefetched, fp16 gradients, gathered a module at a time: plan's\n"
		   "--zero3-rate-GBps 21.25 --zero3-gather module --grads-16bit), else modern (flash attention, no dropout, gradient-\n"
		   "reduction and interleaved-pipeline overlap, TP overlap searched; fp8 rows reduce\n"
		   "gradients in bf16, as NVIDIA's performance recipes). A row with\n"
		   "ZeRO-2/3 and no pp is read without pipelining (FSDP / DeepSpeed ZeRO-3\n"
		   "runs; ZeRO-2/3 under pipelining is TorchTitan's). A blank zero is not\n"
		   "answered with ZeRO-3 across nodes, which the model prices optimistically\n"
		   "(the plan's caution): the best layout that is not stands in for what the\n"
		   "authors tuned, unless none fits (JSON zero3_across_nodes: replaced, kept).\n"
		   "--attention fixes the attention kernel alone. Words (sp, recompute, mlp,\n"
		   "precision) are read in any case; a column outside the format is warned\n"
		   "about, and a row that fills it is listed as not predicted, with the reason\n"
		   "at FILE:LINE:COLUMN (the field it is about; FILE:LINE when it is about the\n"
		   "whole row, e.g. no layout fits).  A line that starts with # is a comment\n"
		   "(so no row id may start with #).  A row that ends before the header does\n"
		   "(trailing tabs trimmed) has the fields it leaves out blank, unless one\n"
		   "of them is required.\n\n");
	tpp_cli_print_opts(f, opts, TPP_ARRAY_LEN(opts), 24, shortopts);
	fprintf(f, "\nexit codes: 0 ok (rows that cannot be predicted are listed and counted),\n"
		   "1 no row could be predicted, 2 usage, 3 input error\n");
}

/*
 * The software stack a row ran on, which the runs format does not state,
 * told by the row's model and hardware (--stack fixes it):
 *   legacy  Megatron-LM as of 2021-22 (SC21, Korthikanti et al.): unfused
 *           attention (fused softmax over the materialized s x s scores),
 *           and none of the overlaps added from 2023 on -- gradient
 *           reduction, pipeline transfers and TP communication all wait
 *           (their defaults today are still off, tpp_cost_opts_megatron).
 *           Sequence parallelism, selective recompute (Korthikanti et
 *           al. 2022) and the distributed optimizer (Megatron-LM 2022) are
 *           used only where the row states them: a run from before them
 *           could not, and a paper that used them in those years said so,
 *           as they were the news.  Blank, sp is off, the optimizer is
 *           replicated (ZeRO stage 0, Megatron's data parallelism) and
 *           recompute is full: the published runs of that stack recompute
 *           every layer (SC21's Eq. 3 assumes it, costmodel.md 1.2, and its
 *           reproduction scripts pass --activations-checkpoint-method
 *           uniform, Megatron-LM examples/academic_paper_scripts/sc21).
 *           Pipeline activations without SP go 1/tp per TP rank and are
 *           all-gathered by the receiver (SC21's scatter/gather, before
 *           Megatron-Core);
 *   modern  flash attention, and the overlaps the current recipes enable
 *           (NeMo / Megatron-Bridge performance recipes): gradient
 *           reduction and, with the interleaved schedule, pipeline
 *           transfers overlapped; TP communication overlap searched;
 *           in fp8, gradients reduced in bf16 (search_stack).
 * Legacy only for a GPT-style model (GeLU MLP, full multi-head attention)
 * in 16-bit on a GPU without fp8 tensor cores, and only if some layout of
 * the row fits that way (predict_row retries with modern: the run
 * happened); modern otherwise:
 * FlashAttention (2022) predates every fp8-capable GPU and the GQA /
 * SwiGLU model families, whose training stacks all use it, and context
 * parallelism (ring attention) exists only on top of it.
 * Nor is a row legacy that states ZeRO-2/3 in bf16.  Megatron-LM had no
 * ZeRO-2/3; the ZeRO-3 of those years was DeepSpeed's (SC21's comparison,
 * rows A11-A16, fp16), which took no bf16: "ZeRO is only supported if
 * fp16 is enabled" (its config check, DeepSpeed issue #555, 2020-11; bf16
 * asked for in #974, 2021-04).  bf16 came to its ZeRO-3 with PR #1453
 * (opened 2021-10), which also sped its ZeRO-3 up (RoBERTa-10B on 64
 * A100: 54.86 -> 92.07 TFLOP/s per GPU, as the PR measured).  A
 * bf16 ZeRO-2/3 run is of the stacks after it (PyTorch FSDP, MosaicML's
 * llm-foundry, TorchTitan, tests/data/runs/mosaic-mpt-a100.tsv), not of
 * the 2021 one.
 */
static enum stack row_stack(const struct tpp_model *m, const struct tpp_cluster *c,
			    const struct tpp_cost_opts *co, int cp, int zero)
{
	if ((cp != TPP_FREE && cp > 1) || m->mlp != TPP_MLP_GELU ||
	    m->kv_heads != m->heads || co->prec == TPP_PREC_FP8 ||
	    c->gpu.peak_flops[TPP_PREC_FP8] > 0)
		return STACK_MODERN;
	if (zero != TPP_FREE && zero >= 2 && co->prec == TPP_PREC_BF16)
		return STACK_MODERN;
	return STACK_LEGACY;
}

/* Apply r->stack's defaults to what the row leaves unsaid (row_stack) and
 * search; returns tpp_plan_search's status. */
static int search_stack(struct tpp_model *model, const struct tpp_cluster *cluster,
			struct tpp_cost_opts *co, struct tpp_search *s, int attn_given,
			struct row_result *r, struct tpp_plan *plan, struct tpp_err *err)
{
	/* ZeRO-2/3 under pipelining (tpp_zero_pipelined) is PyTorch FSDP2
	 * under torch.distributed.pipelining (TorchTitan), neither stack's:
	 * DeepSpeed's PipelineEngine refuses ZeRO stage >= 2, Megatron shards
	 * only the optimizer under pipelining, and FSDP / ZeRO-3 runs do not
	 * pipeline.  A row stating zero 2/3 and leaving pp blank is read so,
	 * unless the tp and dp it states (and cp, 1 when blank) leave the
	 * GPUs a pipeline. */
	if (s->zero >= 2 && s->pp == TPP_FREE &&
	    !(s->tp != TPP_FREE && s->dp != TPP_FREE &&
	      (long long)s->tp * s->dp * (s->cp != TPP_FREE ? s->cp : 1) != s->gpus))
		s->pp = 1;
	/*
	 * Dropout, which the runs format has no column for: Megatron-LM's
	 * of 2021-22 trained GPT models with its defaults, --hidden-dropout
	 * and --attention-dropout 0.1 (SC21's scripts set neither:
	 * examples/academic_paper_scripts/sc21/CONFIG.sh); the modern
	 * stack's pre-training configurations set none: NeMo's
	 * GPTConfig175B and NemotronConfig (hidden_dropout and
	 * attention_dropout 0.0; so NeMo-Framework-Launcher's
	 * nemotron_*.yaml), MPT's (llm-foundry MPTBlock resid_pdrop 0.0,
	 * emb_pdrop 0.0), and every Llama-family model.  NeMo's small GPT-3
	 * configurations (5B-40B) keep Megatron's 0.1: priced without,
	 * their rows are 0.2-0.5 % faster than with.
	 */
	model->dropout = r->stack == STACK_LEGACY && model->mlp == TPP_MLP_GELU;
	if (r->stack == STACK_MODERN) {
		co->dp_overlap = 1;
		/* fp8 runs of this stack are NVIDIA's performance recipes,
		 * which reduce gradients in bf16: NeMo's scripts/performance
		 * set grad_reduce_in_fp32 = False with fp8, Megatron-Bridge's
		 * (set_llama3_common_configs, scripts/performance/configs)
		 * for every precision */
		if (co->prec == TPP_PREC_FP8)
			co->grads16 = 1;
		co->p2p_overlap = 1;
		co->p2p_scatter_gather = 0;
		s->tp_overlap = TPP_FREE;
		if (!attn_given)
			co->attn = TPP_ATTN_FLASH;
	} else {
		/* the base options are Megatron's: no DP / p2p overlap;
		 * pipeline activations scattered over the TP ranks and
		 * gathered by the receiver (Megatron-LM before Megatron-Core) */
		co->p2p_scatter_gather = 1;
		s->tp_overlap = 0;
		if (!attn_given)
			co->attn = TPP_ATTN_UNFUSED;
		/* what the stack did not have yet is used only where the
		 * row states it (row_stack) */
		if (s->sp == TPP_FREE)
			s->sp = 0;
		if (s->zero == TPP_FREE)
			s->zero = 0;
		if (s->recompute == TPP_FREE) {
			s->recompute = TPP_RECOMPUTE_FULL;
			tpp_search_stated_recompute(s);
		}
		/*
		 * ZeRO-3 in this stack is DeepSpeed's of 2021 (row_stack):
		 * its parameter and gradient traffic at the rate that
		 * implementation measured (TPP_DEEPSPEED_2021_ZERO3_BPS,
		 * DeepSpeed issue #1174), prefetched beside the compute
		 * (stage 3's overlap_comm defaults to true:
		 * ZERO3_OPTIMIZATION_OVERLAP_COMM_DEFAULT in
		 * deepspeed/runtime/zero/constants.py), gradients reduced in
		 * fp16 (fp32_allreduce defaults to false:
		 * FP32_ALLREDUCE_DEFAULT in deepspeed/runtime/constants.py),
		 * each submodule's parameters gathered on their own (its
		 * pre-forward hook on every submodule fetches that
		 * submodule's own: PartitionedParameterCoordinator.
		 * fetch_sub_module).
		 */
		if (s->zero == 3) {
			co->zero3_rate_Bps = TPP_DEEPSPEED_2021_ZERO3_BPS;
			co->zero3_module_gather = 1;
			co->dp_overlap = 1;
			co->grads16 = 1;
		}
	}
	r->attn = co->attn;
	r->dropout = model->dropout;
	return tpp_plan_search(model, cluster, co, s, plan, err);
}

/* step_time_s: a number of seconds in [STEP_MIN_S, STEP_MAX_S] (inf, nan,
 * a denormal or 1e-300 would make the errors and the MAPE meaningless or
 * infinite); 0 in *out and -1 otherwise. */
#define STEP_MIN_S 1e-6
#define STEP_MAX_S 1e6
static int parse_measured(const char *s, double *out)
{
	char *end;
	/* decimal only, as the integer columns: strtod would also take
	 * leading blanks, a '+' and hexadecimal (0x10 = 16 s) */
	int plain = (isdigit((unsigned char)s[0]) || s[0] == '.') &&
		    !s[strspn(s, "0123456789.eE+-")];
	*out = strtod(s, &end);
	if (!plain || end == s || *end || !(*out >= STEP_MIN_S && *out <= STEP_MAX_S)) {
		*out = 0;
		return -1;
	}
	return 0;
}

/* The last cluster file read, as read (before a row resizes it): rows of
 * one cluster read its YAML once. */
struct cluster_cache {
	int have;
	char path[1024];
	struct tpp_cluster c;
};

/* Predict one row (its step_time_s already read into r->measured_s);
 * fills r.  Returns 0, or -1 with r->reason set. */
static int predict_row(char **fv, const int *col, const char *dir,
		       const struct tpp_cost_opts *base_opts, int attn_given,
		       enum stack stack,
		       struct row_result *r, struct tpp_model *model,
		       struct tpp_cluster *cluster, struct cluster_cache *cc,
		       struct tpp_plan *plan)
{
	struct tpp_search s, s_row;
	struct tpp_cost_opts co = *base_opts, co_row;
	struct tpp_err err;
	char path[1024];
	const char *cl;
	int gpus, gbs, v, rc, p;

#define F(c) (col[c] >= 0 ? fv[col[c]] : "")
#define FI(c, blank, lo, hi, out) \
	(field_int(F(c), col_names[c], blank, lo, hi, out, r->reason, sizeof(r->reason)) \
		 ? (r->bad_col = (c), 1) : 0)
/* the reason is about column c: its field is pointed at */
#define BAD(c) (r->bad_col = (c))
	memset(model, 0, sizeof(*model));
	copy_printable(model->name, F(C_ID), sizeof(model->name));
	copy_printable(model->desc, F(C_SOURCE), sizeof(model->desc));
	if (FI(C_LAYERS, 0, 1, 100000, &model->layers) ||
	    FI(C_HIDDEN, 0, 1, 1 << 22, &model->hidden) ||
	    FI(C_HEADS, 0, 1, 1 << 20, &model->heads) ||
	    FI(C_KV, model->heads, 1, 1 << 20, &model->kv_heads) ||
	    FI(C_VOCAB, 0, 1, 1 << 24, &model->vocab) ||
	    FI(C_SEQ, 0, 1, 1 << 22, &model->seq) ||
	    FI(C_FFN, 4 * model->hidden, 1, 1 << 24, &model->ffn))
		return -1;
	if (!strcasecmp(F(C_MLP), "swiglu"))
		model->mlp = TPP_MLP_SWIGLU;
	else if (!*F(C_MLP) || !strcasecmp(F(C_MLP), "gelu"))
		model->mlp = TPP_MLP_GELU;
	else {
		BAD(C_MLP);
		snprintf(r->reason, sizeof(r->reason), "unknown mlp '%s'", F(C_MLP));
		return -1;
	}
	if (model->hidden % model->heads) {
		BAD(C_HEADS);
		snprintf(r->reason, sizeof(r->reason),
			 "column 'heads': hidden %d is not a multiple of heads %d (the runs format has no head_dim column)",
			 model->hidden, model->heads);
		return -1;
	}
	model->head_dim = model->hidden / model->heads;
	/* dropout follows the row's stack (search_stack) */
	model->dropout = 0;
	model->tied = model->mlp == TPP_MLP_GELU;
	if (FI(C_GBS, 0, 1, 1 << 26, &gbs) ||
	    FI(C_GPUS, 0, 1, 1 << 24, &gpus))
		return -1;
	model->global_batch = gbs;
	{
		/* the model the row describes, its fault at the column the
		 * key it blames reads from */
		const char *key;
		char msg[512];
		if (tpp_model_problem(model, &key, msg, sizeof(msg))) {
			int c = -1, j;
			for (j = 0; key && j < C__COUNT; j++)
				if (!strcmp(key, col_names[j]))
					c = j;
			if (key && !strcmp(key, "global_batch"))
				c = C_GBS;
			else if (key && !strcmp(key, "head_dim"))
				c = C_HEADS; /* hidden / heads in this format */
			if (c >= 0) {
				BAD(c);
				snprintf(r->reason, sizeof(r->reason), "column '%s': %s", col_names[c], msg);
			} else {
				snprintf(r->reason, sizeof(r->reason), "the model: %s", msg);
			}
			return -1;
		}
	}
	p = *F(C_PREC) ? tpp_prec_parse(F(C_PREC)) : TPP_PREC_BF16;
	/* the runs format's precisions (shared/validation/README.md) */
	if (p != TPP_PREC_FP16 && p != TPP_PREC_BF16 && p != TPP_PREC_FP8) {
		BAD(C_PREC);
		snprintf(r->reason, sizeof(r->reason), "unknown precision '%s'", F(C_PREC));
		return -1;
	}
	co.prec = (enum tpp_prec)p;

	cl = F(C_CLUSTER);
	if (strchr(cl, '/') || strstr(cl, ".yaml") || strstr(cl, ".yml"))
	{
		int w = snprintf(path, sizeof(path), "%s%s%s", cl[0] == '/' ? "" : dir,
				 cl[0] == '/' ? "" : "/", cl);
		if (w < 0 || (size_t)w >= sizeof(path)) {
			BAD(C_CLUSTER);
			snprintf(r->reason, sizeof(r->reason), "cluster path too long");
			return -1;
		}
	}
	else if ((rc = tpp_cluster_resolve_preset(cl, NULL, path, sizeof(path), &err))) {
		/* a preset name (shared/validation/README.md): a file of that
		 * name in the working directory does not stand in for it */
		BAD(C_CLUSTER);
		snprintf(r->reason, sizeof(r->reason), "cluster: %s", err.msg);
		return -1;
	}
	if (cc->have && !strcmp(cc->path, path)) {
		*cluster = cc->c;
	} else if ((rc = tpp_cluster_load(path, NULL, cluster, &err))) {
		BAD(C_CLUSTER);
		/* at the cluster file's line:column, as plan names it */
		if (err.file[0] && err.line > 0 && err.col > 0)
			snprintf(r->reason, sizeof(r->reason), "cluster: %s:%d:%d: %s", err.file,
				 err.line, err.col, err.msg);
		else if (err.file[0] && err.line > 0)
			snprintf(r->reason, sizeof(r->reason), "cluster: %s:%d: %s", err.file,
				 err.line, err.msg);
		else
			snprintf(r->reason, sizeof(r->reason), "cluster: %s%s%s", err.file,
				 err.file[0] ? ": " : "", err.msg);
		return -1;
	} else {
		cc->c = *cluster;
		tpp_strlcpy(cc->path, path, sizeof(cc->path));
		cc->have = 1;
	}
	if (gpus % cluster->gpus_per_node && gpus > cluster->gpus_per_node) {
		BAD(C_GPUS);
		snprintf(r->reason, sizeof(r->reason),
			 "column 'gpus': %d is not a whole number of %d-GPU nodes of %s",
			 gpus, cluster->gpus_per_node, cluster->name);
		return -1;
	}
	tpp_cluster_resize(cluster, gpus);
	if (!tpp_cluster_covers(cluster)) {
		BAD(C_GPUS);
		snprintf(r->reason, sizeof(r->reason),
			 "column 'gpus': %d GPUs exceed the %d that the outermost tier '%s' of %s spans",
			 gpus, cluster->tiers[cluster->ntiers - 1].span_gpus,
			 cluster->tiers[cluster->ntiers - 1].name, cluster->name);
		return -1;
	}
	if (cluster->gpu.peak_flops[co.prec] <= 0) {
		BAD(C_PREC);
		snprintf(r->reason, sizeof(r->reason),
			 "column 'precision': %s has no %s peak in %s", cluster->gpu.name,
			 tpp_prec_names[co.prec], cluster->name);
		return -1;
	}

	tpp_search_default(&s, gpus, gbs);
	s.top_k = 1;
	s.degree_tables = 0; /* a row reads its best alone */
	if (FI(C_TP, TPP_FREE, 1, 1 << 20, &s.tp) ||
	    FI(C_PP, TPP_FREE, 1, 1 << 20, &s.pp) ||
	    FI(C_DP, TPP_FREE, 1, 1 << 24, &s.dp) ||
	    FI(C_CP, TPP_FREE, 1, 1 << 20, &s.cp) ||
	    FI(C_MBS, TPP_FREE, 1, 1 << 20, &s.mbs) ||
	    FI(C_VP, TPP_FREE, 1, 1 << 16, &s.vp) ||
	    FI(C_ZERO, TPP_FREE, 0, 3, &s.zero))
		return -1;
	if (s.mbs != TPP_FREE && s.mbs > gbs) {
		BAD(C_MBS);
		snprintf(r->reason, sizeof(r->reason),
			 "column 'mbs': a micro-batch of %d is more than the global batch of %d (column 'gbs')",
			 s.mbs, gbs);
		return -1;
	}
	if (!*F(C_SP))
		s.sp = TPP_FREE;
	else if (!strcasecmp(F(C_SP), "yes"))
		s.sp = 1;
	else if (!strcasecmp(F(C_SP), "no"))
		s.sp = 0;
	else {
		BAD(C_SP);
		snprintf(r->reason, sizeof(r->reason), "column 'sp': '%.40s' is not yes or no", F(C_SP));
		return -1;
	}
	s.recompute = TPP_FREE;
	for (v = 0; v < TPP_RECOMPUTE__COUNT && *F(C_RECOMPUTE); v++)
		if (!strcasecmp(F(C_RECOMPUTE), tpp_recompute_names[v]))
			s.recompute = v;
	if (*F(C_RECOMPUTE) && s.recompute == TPP_FREE) {
		BAD(C_RECOMPUTE);
		snprintf(r->reason, sizeof(r->reason), "unknown recompute '%s'", F(C_RECOMPUTE));
		return -1;
	}
	/* the runs format's "full" is every layer (Megatron's uniform
	 * method; it has no recompute_layers column); blank leaves block
	 * recompute to the search */
	tpp_search_stated_recompute(&s);
	/* fields that contradict each other whatever the model (as plan's
	 * --layout says them) */
	if (s.vp != TPP_FREE && s.vp > 1 && s.pp == 1) {
		BAD(C_VP);
		snprintf(r->reason, sizeof(r->reason),
			 "column 'vp': vp %d > 1 (the interleaved schedule) needs pp >= 2, and column 'pp' is 1",
			 s.vp);
		return -1;
	}
	if (s.sp == 1 && s.tp == 1) {
		BAD(C_SP);
		snprintf(r->reason, sizeof(r->reason),
			 "column 'sp': sequence parallelism needs tp >= 2, and column 'tp' is 1");
		return -1;
	}
	/*
	 * The runs format describes a layout by its columns; what it has no
	 * column for follows the row's software stack (row_stack): overlaps
	 * and the attention kernel.  No zero-bubble schedule either way
	 * (not a Megatron default or recipe).
	 */
	s.zb = 0;
	/* fixed degrees must multiply into the row's GPU count */
	{
		long long fixed = 1;
		int all = 1, capped = 0;
		const int deg[4] = {s.tp, s.pp, s.dp, s.cp};
		for (int k = 0; k < 4; k++) {
			if (deg[k] == TPP_FREE)
				all = 0;
			else if (fixed <= gpus)
				fixed *= deg[k];
			else if (deg[k] > 1)
				capped = 1; /* past gpus it cannot divide them:
					       stop before it can overflow */
		}
		if ((all && fixed != gpus) || fixed > gpus || gpus % fixed) {
			/* the first degree the row fixes */
			BAD(s.tp != TPP_FREE ? C_TP : s.pp != TPP_FREE ? C_PP
			    : s.dp != TPP_FREE ? C_DP : C_CP);
			snprintf(r->reason, sizeof(r->reason),
				 "columns tp, pp, dp, cp: their product%s %lld %s the %d GPUs of column 'gpus'",
				 capped ? " (at least)" : "", fixed,
				 all ? "is not" : "does not divide", gpus);
			return -1;
		}
	}
	/* A fixed cp > 1 is searched only when the row asks for it. */
	if (s.cp != TPP_FREE)
		s.max_cp = s.cp;
	co_row = co;
	s_row = s;
	r->stack = stack != STACK_AUTO ? stack : row_stack(model, cluster, &co, s.cp, s.zero);
	rc = search_stack(model, cluster, &co, &s, attn_given, r, plan, &err);
	/*
	 * The run happened, so it fitted: when the era guess (legacy: unfused
	 * attention over materialized scores) leaves no layout that fits, the
	 * guess was wrong -- the row is from a later stack.
	 */
	if (rc == TPP_E_INFEASIBLE && stack == STACK_AUTO && r->stack == STACK_LEGACY &&
	    !plan->timed_out && plan->rejected[TPP_REJ_MEMORY] > 0) {
		co = co_row;
		s = s_row;
		r->stack = STACK_MODERN;
		rc = search_stack(model, cluster, &co, &s, attn_given, r, plan, &err);
	}
	if (rc) {
		snprintf(r->reason, sizeof(r->reason), "%s", err.msg);
		{
			/* the most frequent reason layouts were rejected */
			int k, best = 0;
			for (k = 1; k < TPP_REJ__COUNT; k++)
				if (plan->rejected[k] > plan->rejected[best])
					best = k;
			if (best) {
				size_t n = strlen(r->reason);
				snprintf(r->reason + n, sizeof(r->reason) - n, " (%llu rejected: %s)",
					 (unsigned long long)plan->rejected[best], tpp_reject_name(best));
			}
		}
		if (plan->have_min_mem && !plan->timed_out) {
			size_t n = strlen(r->reason);
			char gib[160];
			tpp_print_gib_pair(gib, sizeof(gib), plan->min_mem.mem.total_bytes,
					   cluster->gpu.hbm_bytes);
			snprintf(r->reason + n, sizeof(r->reason) - n, " (closest needs %s)", gib);
		}
		return -1;
	}
	r->e = plan->top[0];
	/*
	 * A row that leaves zero blank was tuned by its authors on real
	 * step times.  The model prices ZeRO-3 with its data-parallel group
	 * across nodes optimistically (the plan's caution: the published
	 * runs of that kind took 1.5-4.8 times the predicted step with
	 * DeepSpeed of 2021, 1.09-1.25 with PyTorch FSDP, 1.07-1.10 with
	 * Megatron FSDP), so such
	 * a best does not stand for what they ran; the best layout without
	 * ZeRO-3 across nodes does (tpp_cli_best_without_zero3), unless none
	 * fits the row's other fields.  A row that states zero 3 keeps it.
	 */
	r->zero3_rule = 0;
	if (s_row.zero == TPP_FREE && tpp_eval_optimistic(&r->e)) {
		struct tpp_plan *tmp = malloc(sizeof(*tmp));
		struct tpp_cli_alt alt;
		double spent = plan->elapsed_s;
		if (!tmp) {
			snprintf(r->reason, sizeof(r->reason), "out of memory");
			return -1;
		}
		tpp_cli_best_without_zero3(model, cluster, &co, &s, plan, &spent, tmp, &alt);
		free(tmp);
		if (alt.status == TPP_ALT_STOPPED) {
			snprintf(r->reason, sizeof(r->reason),
				 "the search for the best layout without ZeRO-3 across nodes failed or ran out of time");
			return -1;
		}
		/* none fits: the run happened, so ZeRO-3 it was */
		if (alt.status == TPP_ALT_FOUND)
			r->e = alt.best;
		r->zero3_rule = alt.status == TPP_ALT_FOUND ? 1 : 2;
	}
	r->predicted_s = r->e.step_s;
	r->err = (r->predicted_s - r->measured_s) / r->measured_s;
	return 0;
#undef F
#undef FI
#undef BAD
}

int tpp_cmd_validate(int argc, char **argv)
{
	const char *file = NULL;
	int json = 0, i, ch, rc = TPP_OK, col[C__COUNT], nrows = 0, nok = 0, lineno = 0;
	int attn_given = 0, ncols = 0, nextra = 0;
	struct option lo[TPP_ARRAY_LEN(opts) + 1];
	/* header columns outside the runs format: index and name */
	int extra[MAX_COLS];
	char extra_name[MAX_COLS][64];
	enum stack stack = STACK_AUTO;
	FILE *f;
	char line[MAX_LINE + 1], dir[1024], *fields[MAX_COLS];
	size_t len;
	int got;
	struct row_result *rows = NULL;
	struct tpp_model model;
	struct tpp_cluster *cluster = NULL;
	struct cluster_cache *cc = NULL;
	struct tpp_plan *plan = NULL;
	struct tpp_cost_opts co;
	double *abserr = NULL;

	tpp_cost_opts_megatron(&co);
	tpp_cli_long_opts(opts, TPP_ARRAY_LEN(opts), lo);
	optind = 1;
	opterr = 0;
	while ((ch = tpp_cli_getopt(argc, argv, shortopts, lo)) != -1) {
		int given = ch == O_ATTN ? attn_given : ch == O_STACK ? stack != STACK_AUTO : 0;
		const char *flag = ch == O_ATTN ? "--attention" : "--stack";
		/* as plan: a second value would silently win */
		if (given) {
			fprintf(stderr, "tpplan: validate: %s is given twice\n", flag);
			return TPP_E_USAGE;
		}
		if ((ch == O_ATTN || ch == O_STACK) && tpp_cli_value("validate: ", flag, optarg))
			return TPP_E_USAGE;
		switch (ch) {
		case O_HELP:
			validate_usage(stdout);
			return TPP_OK;
		case O_JSON:
			json = 1;
			break;
		case O_ATTN:
			if (tpp_cli_attention(optarg, &co.attn))
				return TPP_E_USAGE;
			attn_given = 1;
			break;
		case O_STACK:
			if (!strcmp(optarg, "legacy")) {
				stack = STACK_LEGACY;
			} else if (!strcmp(optarg, "modern")) {
				stack = STACK_MODERN;
			} else {
				fprintf(stderr, "tpplan: validate: --stack: expected legacy or modern, got '%s'\n",
					optarg);
				return TPP_E_USAGE;
			}
			break;
		default:
			return tpp_cli_bad_option(ch, argv, "validate");
		}
	}
	if (optind < argc)
		file = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "tpplan: validate: only one runs file, got '%s'\n", argv[optind]);
		return TPP_E_USAGE;
	}
	if (!file) {
		validate_usage(stderr);
		return TPP_E_USAGE;
	}
	if (!*file) {
		fprintf(stderr, "tpplan: validate: the runs file name is empty\n");
		return TPP_E_USAGE;
	}
	if (tpp_not_regular(file)) {
		fprintf(stderr, "%s: error: not a regular file (a FIFO or device)\n", file);
		return TPP_E_INPUT;
	}
	{
		struct stat st;
		if (!stat(file, &st) && S_ISDIR(st.st_mode)) {
			fprintf(stderr, "%s: error: is a directory\n", file);
			return TPP_E_INPUT;
		}
	}
	f = fopen(file, "r");
	if (!f) {
		fprintf(stderr, "%s: error: cannot open: %s\n", file, strerror(errno));
		return TPP_E_INPUT;
	}
	{
		char tmp[1024];
		tpp_strlcpy(tmp, file, sizeof(tmp));
		tpp_strlcpy(dir, dirname(tmp), sizeof(dir));
	}
	rows = calloc(MAX_ROWS, sizeof(*rows));
	abserr = calloc(MAX_ROWS, sizeof(*abserr));
	cluster = malloc(sizeof(*cluster));
	cc = calloc(1, sizeof(*cc));
	plan = malloc(sizeof(*plan));
	if (!rows || !abserr || !cluster || !cc || !plan) {
		fprintf(stderr, "tpplan: out of memory\n");
		rc = TPP_E_SYSTEM;
		goto out;
	}
	for (i = 0; i < C__COUNT; i++)
		col[i] = -1;
	while ((got = read_line(f, line, sizeof(line), &len)) != -1) {
		int n;
		lineno++;
		/* a UTF-8 byte-order mark (spreadsheets write one) before the
		 * header: not part of its first column's name */
		if (lineno == 1 && len >= 3 && !memcmp(line, "\xEF\xBB\xBF", 3)) {
			memmove(line, line + 3, len - 2);
			len -= 3;
		}
		/* a carriage return inside the line: lines that end with CR
		 * alone (classic Mac) read as one long line */
		{
			const char *cr = strchr(line, '\r'), *q = cr;
			while (q && *q == '\r')
				q++; /* CR CR LF: a CR LF file saved twice */
			if (cr && *q != '\n' && *q != '\0') {
				fprintf(stderr, "%s:%d:%d: error: a carriage return inside the line: "
					"lines that end with CR alone? (convert them to LF or CR LF)\n",
					file, lineno, (int)(cr - line) + 1);
				rc = TPP_E_INPUT;
				goto out;
			}
		}
		/* a NUL byte anywhere, the last line too (a binary file) */
		if (len != strlen(line)) {
			fprintf(stderr, "%s:%d:%zu: error: a NUL byte in the line\n",
				file, lineno, strlen(line) + 1);
			rc = TPP_E_INPUT;
			goto out;
		}
		if (got == 1) {
			fprintf(stderr, "%s:%d:1: error: line too long (more than %d bytes)\n",
				file, lineno, MAX_LINE);
			rc = TPP_E_INPUT;
			goto out;
		}
		if (line[0] == '#' || !line[strspn(line, " \t\r\n")])
			continue; /* a comment, or a line of blanks (CR CR LF too) */
		n = split_tabs(line, fields, MAX_COLS);
		if (n < 0) {
			fprintf(stderr, "%s:%d:1: error: more than %d columns\n", file, lineno, MAX_COLS);
			rc = TPP_E_INPUT;
			goto out;
		}
		if (col[C_ID] < 0) { /* header */
			int k, j;
			for (k = 0; k < n; k++) {
				for (j = 0; j < C__COUNT; j++)
					if (!strcmp(fields[k], col_names[j]))
						break;
				if (j == C__COUNT && !fields[k][0]) {
					fprintf(stderr, "%s:%d:%d: error: empty column name (a stray tab?)\n",
						file, lineno, (int)(fields[k] - line) + 1);
					rc = TPP_E_INPUT;
					goto out;
				}
				if (j == C__COUNT) {
					/* a column of the user's (notes, a
					 * figure of their own): read past it
					 * where blank; a row that fills it is
					 * not predicted, as the value could
					 * change what the row means */
					tpp_printable(fields[k], 0);
					fprintf(stderr, "%s:%d:%d: warning: column '%.63s%s' is not in the runs format: rows that fill it are not predicted\n",
						file, lineno, (int)(fields[k] - line) + 1, fields[k],
						strlen(fields[k]) > 63 ? "..." : "");
					extra[nextra] = k;
					tpp_strlcpy(extra_name[nextra++], fields[k], sizeof(extra_name[0]));
					continue;
				}
				if (col[j] >= 0) {
					fprintf(stderr, "%s:%d:%d: error: column '%s' appears twice\n", file,
						lineno, (int)(fields[k] - line) + 1, fields[k]);
					rc = TPP_E_INPUT;
					goto out;
				}
				col[j] = k;
			}
			ncols = n;
			for (k = 0; k < (int)TPP_ARRAY_LEN(required_cols); k++)
				if (col[required_cols[k]] < 0) {
					fprintf(stderr, "%s:%d:%d: error: missing column '%s'\n", file, lineno,
						(int)(fields[n - 1] - line) + (int)strlen(fields[n - 1]) + 1,
						col_names[required_cols[k]]);
					rc = TPP_E_INPUT;
					goto out;
				}
			continue;
		}
		if (nrows == MAX_ROWS) {
			fprintf(stderr, "%s:%d: error: more than %d rows\n", file, lineno, MAX_ROWS);
			rc = TPP_E_INPUT;
			goto out;
		}
		{
			struct row_result *r = &rows[nrows++];
			char *fv[MAX_COLS];
			int k, bad_step;
			for (k = 0; k < MAX_COLS; k++)
				fv[k] = k < n ? fields[k] : (char *)"";
			r->line = lineno;
			r->bad_col = -1;
			copy_printable(r->id, col[C_ID] < n ? fv[col[C_ID]] : "", sizeof(r->id));
			copy_printable(r->source, col[C_SOURCE] >= 0 ? fv[col[C_SOURCE]] : "",
				       sizeof(r->source));
			/* read first: shown beside the reason when the row is
			 * not predicted (step_time_s is a required column) */
			bad_step = parse_measured(fv[col[C_STEP]], &r->measured_s);
			if (n > ncols) {
				snprintf(r->reason, sizeof(r->reason), "the row has %d columns, the header %d",
					 n, ncols);
				continue;
			}
			if (n < ncols) {
				/* trailing fields left out (an editor that trims
				 * trailing tabs): blank, where blank is allowed */
				int c2, miss = -1;
				for (c2 = 0; c2 < (int)TPP_ARRAY_LEN(required_cols) && miss < 0; c2++)
					if (col[required_cols[c2]] >= n)
						miss = required_cols[c2];
				if (miss >= 0) {
					snprintf(r->reason, sizeof(r->reason),
						 "the row has %d columns, the header %d: column '%s' (required) is missing",
						 n, ncols, col_names[miss]);
					continue;
				}
			}
			for (k = 0; k < nextra && !r->reason[0]; k++)
				if (*fv[extra[k]]) {
					r->byte_col = (int)(fv[extra[k]] - line) + 1;
					snprintf(r->reason, sizeof(r->reason),
						 "column '%.63s' is not in the runs format (value '%.40s')",
						 extra_name[k], fv[extra[k]]);
				}
			if (!r->reason[0] && bad_step) {
				r->bad_col = C_STEP;
				snprintf(r->reason, sizeof(r->reason),
					 "bad step_time_s '%s' (a number of seconds in [%g, %g])",
					 fv[col[C_STEP]], STEP_MIN_S, STEP_MAX_S);
			}
			if (col[C_ID] < n && strlen(fv[col[C_ID]]) >= sizeof(r->id)) {
				r->bad_col = C_ID;
				snprintf(r->reason, sizeof(r->reason),
					 "id longer than %zu bytes", sizeof(r->id) - 1);
			}
			/* a repeated id would count one run twice in the
			 * statistics (and make rows ambiguous by id) */
			for (k = 0; k < nrows - 1 && !r->reason[0] && r->id[0]; k++)
				if (!strcmp(rows[k].id, r->id)) {
					int nth = k + 1, teen = nth % 100 >= 11 && nth % 100 <= 13;
					r->bad_col = C_ID;
					snprintf(r->reason, sizeof(r->reason),
						 "id '%s' is the id of an earlier row (the %d%s data row)",
						 r->id, nth,
						 teen || nth % 10 > 3 || nth % 10 == 0 ? "th"
						 : nth % 10 == 1 ? "st" : nth % 10 == 2 ? "nd" : "rd");
				}
			/* a required column left blank in the row: its blank
			 * value (0) is no shape, GPU count or cluster */
			for (k = 0; k < (int)TPP_ARRAY_LEN(required_cols) && !r->reason[0]; k++)
				if (!*fv[col[required_cols[k]]]) {
					r->bad_col = required_cols[k];
					snprintf(r->reason, sizeof(r->reason),
						 "column '%s' is blank (it may not be)",
						 col_names[required_cols[k]]);
				}
			if (!r->reason[0])
				r->ok = predict_row(fv, col, dir, &co, attn_given, stack, r, &model,
						    cluster, cc, plan) == 0;
			/* the field the reason is about (a column of the
			 * format that the header has, and the row too: one it
			 * left out has no place on the line) */
			if (!r->ok && r->bad_col >= 0 && col[r->bad_col] >= 0 && col[r->bad_col] < n)
				r->byte_col = (int)(fv[col[r->bad_col]] - line) + 1;
			if (r->ok)
				abserr[nok++] = fabs(r->err);
		}
	}
	if (col[C_ID] < 0) {
		fprintf(stderr, "%s: error: no header line\n", file);
		rc = TPP_E_INPUT;
		goto out;
	}
	{
		/* bias: the mean signed error of the predicted rows (below 0:
		 * the model predicts steps short on this file) */
		double mape = 0, median = 0, worst = 0, bias = 0;
		for (i = 0; i < nok; i++) {
			mape += abserr[i];
			if (abserr[i] > worst)
				worst = abserr[i];
		}
		for (i = 0; i < nrows; i++)
			if (rows[i].ok)
				bias += rows[i].err;
		if (nok) {
			mape /= nok;
			bias /= nok;
			qsort(abserr, (size_t)nok, sizeof(double), cmp_double);
			median = nok % 2 ? abserr[nok / 2] : 0.5 * (abserr[nok / 2 - 1] + abserr[nok / 2]);
		}
		if (json) {
			printf("{\n  \"schema\": \"tpplan.validate/v1\",\n  \"tpplan_version\": ");
			tpp_json_str(stdout, tpp_version);
			printf(",\n  \"file\": ");
			tpp_json_str(stdout, file);
			printf(",\n  \"rows\": [\n");
			for (i = 0; i < nrows; i++) {
				struct row_result *r = &rows[i];
				printf("    {\"id\": ");
				tpp_json_str(stdout, r->id);
				if (r->ok) {
					char lb[200];
					tpp_layout_format(&r->e.layout, lb, sizeof(lb));
					printf(", \"predicted_s\": %.6g, \"measured_s\": %.6g, \"error\": %.6g, \"layout\": ",
					       r->predicted_s, r->measured_s, r->err);
					tpp_json_str(stdout, lb);
					printf(", \"attention\": \"%s\", \"stack\": \"%s\", \"dropout\": %s, \"zero3_across_nodes\": %s, \"zero3_nodes\": %s",
					       tpp_attn_names[r->attn], stack_names[r->stack],
					       r->dropout ? "true" : "false",
					       zero3_rule_names[r->zero3_rule],
					       tpp_eval_optimistic(&r->e) ? "true" : "false");
					/* the prediction's parts: where a row's
					 * error lies (plan's time_s, memory_bytes) */
					fputs(", ", stdout);
					tpp_json_parts(stdout, &r->e, ", ");
				} else {
					printf(", \"predicted_s\": null");
					if (r->measured_s > 0)
						printf(", \"measured_s\": %.6g", r->measured_s);
					else
						printf(", \"measured_s\": null");
					printf(", \"zero3_across_nodes\": null, \"zero3_nodes\": null, \"reason\": ");
					tpp_json_str(stdout, r->reason);
					if (r->byte_col > 0)
						printf(", \"column\": %d", r->byte_col);
					else
						printf(", \"column\": null");
				}
				printf(", \"line\": %d", r->line);
				printf("}%s\n", i + 1 < nrows ? "," : "");
			}
			/* no error statistics without a predicted row */
			if (nok)
				printf("  ],\n  \"summary\": {\"mape\": %.6g, \"median\": %.6g, \"worst\": %.6g, \"bias\": %.6g",
				       mape, median, worst, bias);
			else
				printf("  ],\n  \"summary\": {\"mape\": null, \"median\": null, \"worst\": null, \"bias\": null");
			printf(", \"rows\": %d, \"predicted\": %d, \"unpredicted\": %d}\n}\n",
			       nrows, nok, nrows - nok);
		} else if (nrows) { /* no rows: only the error below */
			/* the id column as wide as the longest id (5 at least) */
			int idw = 5;
			for (i = 0; i < nrows; i++)
				if ((int)strlen(rows[i].id) > idw)
					idw = (int)strlen(rows[i].id);
			printf("%-*s %10s %10s %8s  %-62s %s\n", idw, "id", "measured", "predicted", "error",
			       "layout (searched where the row left it blank)", "source");
			for (i = 0; i < nrows; i++) {
				struct row_result *r = &rows[i];
				if (r->ok) {
					char lb[200];
					/* not "-0.0%" for an error that rounds to nothing */
					double pe = fabs(r->err) < 5e-4 ? 0.0 : 100 * r->err;
					tpp_layout_format(&r->e.layout, lb, sizeof(lb));
					char ms[32], ps[32];
					fmt_seconds(ms, sizeof(ms), r->measured_s);
					fmt_seconds(ps, sizeof(ps), r->predicted_s);
					printf("%-*s %10s %10s %+7.1f%%  %-62s %s\n", idw, r->id,
					       ms, ps, pe, lb, r->source);
				} else {
					char ms[32] = "-";
					if (r->measured_s > 0)
						fmt_seconds(ms, sizeof(ms), r->measured_s);
					/* the reason quotes the row's values */
					tpp_printable(r->reason, 0);
					char at[32] = "";
					if (r->byte_col > 0)
						snprintf(at, sizeof(at), ":%d", r->byte_col);
					printf("%-*s %10s %10s %8s  cannot predict: %s:%d%s: %s\n", idw, r->id,
					       ms, "-", "-", file, r->line, at, r->reason);
				}
			}
			/* where a blank zero was not answered with the search's
			 * best (ZeRO-3 across nodes), or was for want of another */
			for (i = 0; i < nrows; i++)
				if (rows[i].ok && rows[i].zero3_rule)
					printf("%s: zero left blank, and the best layout is ZeRO-3 across nodes, "
					       "which the model prices optimistically: %s\n", rows[i].id,
					       rows[i].zero3_rule == 1
						       ? "predicted with the best layout that is not"
						       : "kept, as no other layout fits the row");
			if (nok)
				printf("MAPE %.1f%%  median %.1f%%  worst %.1f%%  rows %d",
				       100 * mape, 100 * median, 100 * worst, nok);
			else
				printf("no row predicted: no error statistics");
			if (nrows - nok)
				printf("  (not predicted: %d of %d)", nrows - nok, nrows);
			printf("\n");
		}
		/* a file that predicts nothing is not a validation */
		if (!nrows) {
			fprintf(stderr, "%s: error: no data rows after the header\n", file);
			rc = TPP_E_INPUT;
		} else if (!nok) {
			fprintf(stderr, "%s: error: none of its %d rows could be predicted (reasons above)\n",
				file, nrows);
			rc = TPP_E_INFEASIBLE;
		}
	}
out:
	fclose(f);
	free(rows);
	free(abserr);
	free(cluster);
	free(cc);
	free(plan);
	return rc;
}
