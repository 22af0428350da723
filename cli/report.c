/*
 * report.c - the writers of `tpplan report`: index.html and report.md (the
 * same content through one small document writer with an HTML and a
 * Markdown back end), the tab-separated data (*.dat) and gnuplot scripts
 * (*.gp) of every figure, and gnuplot itself, run as a separate program
 * (fork + exec, in DIR) so a user can restyle a script and redraw it with
 * `gnuplot NAME.gp`.  Every file goes to a temporary name first and is
 * renamed into place.
 *
 * Data flow: struct tpp_report (filled by cmd_report.c) --> the files in DIR.
 * Megatron-LM flags follow Megatron-LM's megatron/training/arguments.py.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "report.h"
#include "tpp_afile.h"
#include "tpp_yaml.h"
#include "sim.h"

#define GIB TPP_GiB
#define PATH_LEN 4096

/* ---- atomic files ---------------------------------------------------------- */

/* DIR/NAME written atomically (tpp_afile: a mkstemp temporary beside it,
 * fsync, rename); a.f is the stream. */
struct afile {
	struct tpp_afile af;
	FILE *f;
};

/* Open DIR/NAME's temporary file; TPP_E_SYSTEM with a message. */
static int af_open(struct afile *a, const char *dir, const char *name)
{
	char path[PATH_LEN];
	struct tpp_err err;
	int w = snprintf(path, sizeof(path), "%s/%s", dir, name);
	a->f = NULL;
	if (w < 0 || (size_t)w >= sizeof(path)) {
		fprintf(stderr, "tpplan: report: path too long: %s/%s\n", dir, name);
		return TPP_E_SYSTEM;
	}
	if (tpp_afile_open(&a->af, path, &err)) {
		fprintf(stderr, "tpplan: report: %s\n", err.msg);
		return TPP_E_SYSTEM;
	}
	a->f = a->af.f;
	return TPP_OK;
}

/* Close and rename into place; on failure the temporary file goes. */
static int af_close(struct afile *a)
{
	struct tpp_err err;
	a->f = NULL;
	if (tpp_afile_commit(&a->af, &err)) {
		fprintf(stderr, "tpplan: report: %s\n", err.msg);
		return TPP_E_SYSTEM;
	}
	return TPP_OK;
}

/* ---- Megatron-LM arguments ------------------------------------------------- */

#define APP(buf, size, n, ...)                                                   \
	((n) += (size_t)snprintf((buf) + ((n) < (size) ? (n) : (size)),         \
				 (n) < (size) ? (size) - (n) : 0, __VA_ARGS__))

/*
 * Megatron-Core's --pipeline-model-parallel-layout for tpplan's split of
 * the layers over the pp * vp chunks (tpp_chunk_layers), in model order:
 * E the embedding, t a transformer layer (t*N: N of them), L the loss
 * (final norm and LM head), '|' between chunks, "(...)*N" a repeated
 * group; chunk i runs on pipeline rank i mod pp as its virtual stage
 * i / pp (megatron/core/transformer/pipeline_parallel_layer_layout.py).
 * Runs of equal middle chunks are grouped: 126 layers over 64 chunks is
 * "Et|(t*2|)*62tL".
 */
static void pp_layout_arg(const struct tpp_model *m, int chunks, char *buf, size_t size)
{
	size_t n = 0;
	int k = 0;
	buf[0] = '\0';
	while (k < chunks) {
		int nl = tpp_chunk_layers(m->layers, chunks, k), run = 1;
		char t[16];
		if (nl > 1)
			snprintf(t, sizeof(t), "t*%d", nl);
		else
			snprintf(t, sizeof(t), "t");
		if (k > 0 && k < chunks - 1)
			while (k + run < chunks - 1 &&
			       tpp_chunk_layers(m->layers, chunks, k + run) == nl)
				run++;
		if (run > 1)
			APP(buf, size, n, "(%s|)*%d", t, run);
		else
			APP(buf, size, n, "%s%s%s%s", k == 0 ? "E" : "", t,
			    k == chunks - 1 ? "L" : "", k < chunks - 1 ? "|" : "");
		k += run;
	}
}

void tpp_report_megatron_args(const struct tpp_model *m,
			      const struct tpp_cost_opts *o,
			      const struct tpp_eval *e, char *args,
			      size_t args_size, char *note, size_t note_size)
{
	enum tpp_prec p = o->prec;
	const struct tpp_layout *l = &e->layout;
	size_t n = 0, k = 0;
	int chunks = l->pp * l->vp;

	TPP_ASSERT(args_size > 0 && note_size > 0);
	args[0] = note[0] = '\0';
	APP(args, args_size, n, "--tensor-model-parallel-size %d --pipeline-model-parallel-size %d",
	    l->tp, l->pp);
	if (m->layers % chunks) {
		/* uneven: the split itself (Megatron needs the layers
		 * divisible by pp * vp otherwise) */
		char lay[512];
		pp_layout_arg(m, chunks, lay, sizeof(lay));
		APP(args, args_size, n, " --pipeline-model-parallel-layout '%s'", lay);
	} else if (l->vp > 1) {
		APP(args, args_size, n, " --num-layers-per-virtual-pipeline-stage %d",
		    m->layers / chunks);
	}
	APP(args, args_size, n, " --context-parallel-size %d --micro-batch-size %d --global-batch-size %d",
	    l->cp, l->mbs, l->gbs);
	if (l->sp)
		APP(args, args_size, n, " --sequence-parallel");
	if (l->tp_overlap)
		APP(args, args_size, n, " --tp-comm-overlap");
	if (l->recompute == TPP_RECOMPUTE_SELECTIVE)
		APP(args, args_size, n, " --recompute-granularity selective");
	else if (l->recompute == TPP_RECOMPUTE_FULL && l->recompute_layers > 0)
		APP(args, args_size, n, " --recompute-granularity full --recompute-method block --recompute-num-layers %d",
		    l->recompute_layers);
	else if (l->recompute == TPP_RECOMPUTE_FULL)
		APP(args, args_size, n, " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
	/* ZeRO-1 is Megatron's distributed optimizer; ZeRO-2 / 3 are
	 * Megatron-FSDP's optim_grads / optim_grads_params sharding, with
	 * the flags its README requires (megatron/core/distributed/fsdp) */
	if (l->zero >= 2 && !tpp_zero_pipelined(l))
		APP(args, args_size, n, " --use-megatron-fsdp --data-parallel-sharding-strategy %s"
		    " --no-gradient-accumulation-fusion --use-distributed-optimizer --ckpt-format fsdp_dtensor",
		    l->zero >= 3 ? "optim_grads_params" : "optim_grads");
	else if (l->zero >= 1)
		APP(args, args_size, n, " --use-distributed-optimizer");
	/* the overlaps the prediction assumes (cost options; Megatron's
	 * defaults have them off) */
	if (o->dp_overlap && l->dp * l->cp > 1)
		APP(args, args_size, n, " --overlap-grad-reduce%s",
		    l->zero >= 1 ? " --overlap-param-gather" : "");
	if (o->p2p_overlap && l->vp > 1)
		APP(args, args_size, n, " --overlap-p2p-communication");
	/* the attention kernel priced: Megatron-Core's default (auto) takes
	 * Transformer Engine's fused / flash kernels; unfused is asked for */
	if (o->attn == TPP_ATTN_UNFUSED)
		APP(args, args_size, n, " --attention-backend unfused");
	if (p == TPP_PREC_FP16)
		APP(args, args_size, n, " --fp16");
	else if (p == TPP_PREC_FP8)
		/* Megatron's --fp8-recipe: tensorwise is current scaling */
		APP(args, args_size, n, " --bf16 --fp8-format hybrid --fp8-recipe %s%s",
		    o->fp8_recipe == TPP_FP8_CURRENT ? "tensorwise" : "delayed",
		    /* the fp8 weights the memory and gather assume */
		    tpp_fp8_params(o, l) ? " --fp8-param-gather" : "");
	else
		APP(args, args_size, n, " --bf16");
	/* the gradient type priced (o->grads16): with --bf16 Megatron-LM
	 * forces fp32 main gradients unless --grad-reduce-in-bf16; with
	 * --fp16 its default is 16-bit and fp32 is asked for
	 * (megatron/training/arguments.py, accumulate_allreduce_grads_in_fp32) */
	if (p == TPP_PREC_FP16 && !o->grads16)
		APP(args, args_size, n, " --accumulate-allreduce-grads-in-fp32");
	else if (p != TPP_PREC_FP16 && o->grads16)
		APP(args, args_size, n, " --grad-reduce-in-bf16");
	APP(args, args_size, n, " --num-layers %d --hidden-size %d --num-attention-heads %d",
	    m->layers, m->hidden, m->heads);
	if (m->kv_heads != m->heads)
		APP(args, args_size, n, " --group-query-attention --num-query-groups %d", m->kv_heads);
	if (m->head_dim > 0 && m->head_dim * m->heads != m->hidden)
		APP(args, args_size, n, " --kv-channels %d", m->head_dim);
	APP(args, args_size, n, " --ffn-hidden-size %d --seq-length %d --max-position-embeddings %d",
	    m->ffn, m->seq, m->seq);
	/* the model family the cost model counts (costmodel/model.c): a
	 * SwiGLU model has rotary positions (no learned position table),
	 * RMSNorm and no biases */
	if (m->mlp == TPP_MLP_SWIGLU) {
		APP(args, args_size, n, " --swiglu --position-embedding-type rope"
		    " --normalization RMSNorm --disable-bias-linear");
		/* the model's RoPE base and Llama 3.1 scaling (Megatron's
		 * default base is 10000; --rotary-base is an integer there,
		 * a whole rope_base in model.c, --rope-scaling-factor a
		 * float) */
		if (m->rope_base > 0)
			APP(args, args_size, n, " --rotary-base %.0f", m->rope_base);
		if (m->rope_scaling > 0)
			APP(args, args_size, n, " --use-rope-scaling --rope-scaling-factor %.15g",
			    m->rope_scaling);
	}
	if (!m->dropout)
		APP(args, args_size, n, " --attention-dropout 0 --hidden-dropout 0");
	if (!m->tied)
		APP(args, args_size, n, " --untie-embeddings-and-output-weights");

	if (m->layers % chunks)
		APP(note, note_size, k, "%suneven split: %d layers over %d pipeline chunks (tpplan gives the middle chunks one more), given as Megatron-Core's --pipeline-model-parallel-layout (experimental there; older releases need the layers divisible by pp*vp).",
		    k ? " " : "", m->layers, chunks);
	if (l->zb)
		APP(note, note_size, k, "%sThe ZB-H1 zero-bubble schedule has no Megatron-LM flag (the arguments give plain 1F1B).",
		    k ? " " : "");
	if (tpp_zero_pipelined(l))
		APP(note, note_size, k, "%sZeRO-%d with pipelining is priced as PyTorch FSDP2 under torch.distributed.pipelining runs it (TorchTitan: parameters gathered at a stage's first micro-batch and kept, gradients reduce-scattered once after its last backward), which has no Megatron-LM flag; the arguments give the distributed optimizer (ZeRO-1): the same traffic and the same peak memory (gradients unsharded until the stage's last backward in both)%s.",
		    k ? " " : "", l->zero,
		    o->dp_overlap ? ", with the gradient reduction overlapped with the backward (--overlap-grad-reduce), which FSDP2 under pipelining does not do: the step of the run these arguments give can be shorter than this one's"
				  : ", the gradient reduction after the backward in both (--no-dp-overlap)");
	else if (l->zero >= 2)
		APP(note, note_size, k, "%sZeRO-%d (sharded gradients%s) runs as Megatron-FSDP (Megatron-Core; older releases spell --use-megatron-fsdp as --use-custom-fsdp); --use-distributed-optimizer alone shards the optimizer states only (ZeRO-1).",
		    k ? " " : "", l->zero, l->zero >= 3 ? " and parameters" : "");
}

/* ---- document writer: one call sequence, HTML or Markdown ------------------ */

enum doc_kind { DOC_HTML, DOC_MD };

struct doc {
	FILE *f;
	enum doc_kind kind;
	int in_row, col;
	char ubuf[6][2048]; /* usr()'s results, used in turn */
	int un;
};

static void esc(struct doc *d, const char *s)
{
	for (; *s; s++) {
		if (d->kind == DOC_HTML) {
			switch (*s) {
			case '&': fputs("&amp;", d->f); break;
			case '<': fputs("&lt;", d->f); break;
			case '>': fputs("&gt;", d->f); break;
			case '"': fputs("&quot;", d->f); break;
			default: fputc(*s, d->f);
			}
		} else {
			if (*s == '|' || *s == '*' || *s == '<' || *s == '[' || *s == ']')
				fputc('\\', d->f);
			fputc(*s == '\n' ? ' ' : *s, d->f);
		}
	}
}

/*
 * A string the user gave (a name, a path, a source, a description), for a
 * format argument of the d_* writers.  esc() escapes what would break the
 * document for all text, but in Markdown it leaves the backtick alone: the
 * report's own text uses it for code spans.  A user string can hold any
 * of Markdown's inline marks, so here, in Markdown, every ASCII mark with
 * an inline meaning that esc() passes (` & _ ~ \) is
 * backslash-escaped (CommonMark: any ASCII punctuation may be), and a name
 * such as "a`b" or "R&amp;D" prints as written.  HTML needs nothing beyond
 * esc().  The result is one of six buffers used in turn, enough for one
 * writer call; a string that does not fit is cut short.
 */
static const char *usr(struct doc *d, const char *s)
{
	char *out = d->ubuf[d->un++ % 6];
	size_t n = 0, cap = sizeof(d->ubuf[0]), i;
	if (!s)
		return "";
	if (d->kind != DOC_MD)
		return s;
	for (i = 0; s[i] && n + 2 < cap; i++) {
		/* an underscore inside a word (my_cal.yaml) never emphasises
		 * (CommonMark's flanking rules): left as it is, for the
		 * plain-text reader */
		int inword = s[i] == '_' && i > 0 && isalnum((unsigned char)s[i - 1]) &&
			     isalnum((unsigned char)s[i + 1]);
		if (strchr("`&_~\\", s[i]) && !inword)
			out[n++] = '\\';
		out[n++] = s[i];
	}
	out[n] = '\0';
	return out;
}

static void vesc(struct doc *d, const char *fmt, va_list ap)
{
	char buf[4096];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	esc(d, buf);
}

static void d_h(struct doc *d, int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (d->kind == DOC_HTML) {
		fprintf(d->f, "<h%d>", level);
		vesc(d, fmt, ap);
		fprintf(d->f, "</h%d>\n", level);
	} else {
		fprintf(d->f, "\n%.*s ", level, "######");
		vesc(d, fmt, ap);
		fputs("\n\n", d->f);
	}
	va_end(ap);
}

static void d_p(struct doc *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(d->kind == DOC_HTML ? "<p>" : "", d->f);
	vesc(d, fmt, ap);
	fputs(d->kind == DOC_HTML ? "</p>\n" : "\n\n", d->f);
	va_end(ap);
}

/* A warning / note box (HTML) or a quoted paragraph (Markdown). */
static void d_note(struct doc *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(d->kind == DOC_HTML ? "<p class=\"note\">" : "> ", d->f);
	vesc(d, fmt, ap);
	fputs(d->kind == DOC_HTML ? "</p>\n" : "\n\n", d->f);
	va_end(ap);
}

static void d_table(struct doc *d, const char *const *heads, int n)
{
	int i;
	if (d->kind == DOC_HTML) {
		fputs("<div class=\"wide\"><table>\n<tr>", d->f);
		for (i = 0; i < n; i++) {
			fputs("<th>", d->f);
			esc(d, heads[i]);
			fputs("</th>", d->f);
		}
		fputs("</tr>\n", d->f);
	} else {
		fputc('|', d->f);
		for (i = 0; i < n; i++) {
			fputc(' ', d->f);
			esc(d, heads[i]);
			fputs(" |", d->f);
		}
		fputs("\n|", d->f);
		for (i = 0; i < n; i++)
			fputs("---|", d->f);
		fputc('\n', d->f);
	}
}

static void d_row(struct doc *d)
{
	if (d->in_row)
		fputs(d->kind == DOC_HTML ? "</tr>\n" : "\n", d->f);
	fputs(d->kind == DOC_HTML ? "<tr>" : "|", d->f);
	d->in_row = 1;
}

static void d_end_table(struct doc *d)
{
	if (d->in_row)
		fputs(d->kind == DOC_HTML ? "</tr>\n" : "\n", d->f);
	d->in_row = 0;
	fputs(d->kind == DOC_HTML ? "</table></div>\n" : "\n", d->f);
}

/* A table cell of text (printf format), right-aligned when numeric. */
static void d_td(struct doc *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(d->kind == DOC_HTML ? "<td>" : " ", d->f);
	vesc(d, fmt, ap);
	fputs(d->kind == DOC_HTML ? "</td>" : " |", d->f);
	va_end(ap);
}

/* A table cell holding code (class names it for scripts), then an
 * optional note in italics. */
static void d_td_code(struct doc *d, const char *cls, const char *code,
		      const char *note)
{
	if (d->kind == DOC_HTML) {
		fprintf(d->f, "<td><code class=\"%s\">", cls);
		esc(d, code);
		fputs("</code>", d->f);
		if (note && note[0]) {
			fputs("<br><em>", d->f);
			esc(d, note);
			fputs("</em>", d->f);
		}
		fputs("</td>", d->f);
	} else {
		/* never holds a backtick; a '|' (Megatron's pipeline layout)
		 * would end the table cell even inside the code span, so GFM
		 * wants it escaped there (shown as '|') */
		fputs(" `", d->f);
		for (; *code; code++) {
			if (*code == '|')
				fputc('\\', d->f);
			fputc(*code, d->f);
		}
		fputc('`', d->f);
		if (note && note[0]) {
			fputs(" _", d->f);
			esc(d, note);
			fputc('_', d->f);
		}
		fputs(" |", d->f);
	}
}

static void d_img(struct doc *d, const char *file, const char *caption)
{
	if (d->kind == DOC_HTML) {
		fprintf(d->f, "<figure><img src=\"%s\" alt=\"", file);
		esc(d, caption);
		fputs("\"><figcaption>", d->f);
		esc(d, caption);
		fputs("</figcaption></figure>\n", d->f);
	} else {
		fputs("![", d->f);
		esc(d, caption);
		fprintf(d->f, "](%s)\n\n", file);
	}
}

/* ---- figures ------------------------------------------------------------- */

enum fig {
	FIG_BREAKDOWN, FIG_MEMORY, FIG_TIMELINE, FIG_SCALING, FIG_SENS,
	FIG_CAL, FIG_EXEC, FIG__COUNT
};

static const char *const fig_names[FIG__COUNT] = {
	[FIG_BREAKDOWN] = "breakdown",
	[FIG_MEMORY] = "memory",
	[FIG_TIMELINE] = "timeline",
	[FIG_SCALING] = "scaling",
	[FIG_SENS] = "sensitivity",
	[FIG_CAL] = "calibration",
	[FIG_EXEC] = "exec",
};

struct figs {
	char gnuplot[PATH_LEN]; /* "" when not found or --no-plots */
	int wanted[FIG__COUNT]; /* data and script written */
	int drawn[FIG__COUNT];  /* PNG in place */
	int log_ours;           /* gnuplot.log is this report's (manifest) */
	int failed;             /* some figure failed to draw */
	int off;                /* --no-plots: none drawn, on purpose */
};

/* gnuplot's path from $PATH into buf, absolute (it is run from the output
 * directory: a relative entry, "." or an empty one, names the working
 * directory's); 0 when not found. */
static int find_gnuplot(char *buf, size_t size)
{
	const char *path = getenv("PATH");
	const char *p = path;
	char cwd[PATH_MAX];
	int have_cwd = getcwd(cwd, sizeof(cwd)) != NULL;
	while (p && *p) {
		const char *q = strchr(p, ':');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		int rel = !len || p[0] != '/', w;
		if (rel && !have_cwd) {
			p = q ? q + 1 : NULL;
			continue;
		}
		w = snprintf(buf, size, "%s%s%.*s/gnuplot", rel ? cwd : "", rel ? "/" : "",
			     (int)len, len ? p : ".");
		if (w > 0 && (size_t)w < size && access(buf, X_OK) == 0)
			return 1;
		p = q ? q + 1 : NULL;
	}
	buf[0] = '\0';
	return 0;
}

/* Header of every script: PNG terminal (pngcairo when available), output
 * to `outfile` (set by tpplan to a temporary name) or NAME.png. */
static void gp_head_size(FILE *f, const char *name, const char *what, int h)
{
	fprintf(f, "# tpplan %s: %s\n"
		"# Written by `tpplan report` from %s*.dat in this directory;\n"
		"# restyle and redraw with: gnuplot %s.gp\n",
		tpp_version, what, name, name);
	fprintf(f, "if (!exists(\"outfile\")) outfile = \"%s.png\"\n", name);
	fprintf(f, "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
	      "  set terminal pngcairo size 1000,%d noenhanced font \",10\"\n"
	      "} else {\n"
	      "  set terminal png size 1000,%d noenhanced\n"
	      "}\n"
	      "set output outfile\n"
	      "set datafile separator \"\\t\"\n"
	      "set datafile missing \"?\"\n"
	      "set key outside right top\n"
	      "set grid ytics\n", h, h);
}

static void gp_head(FILE *f, const char *name, const char *what)
{
	gp_head_size(f, name, what, 500);
}

/*
 * Bar charts of n top layouts: the tick labels (the longest `longest`
 * characters) at the shallowest angle at which neighbours do not run into
 * each other and the last one ends on the 1000-pixel canvas.  Estimates
 * (font 10): the plot spans x = 60..750 px, a character is 7 px wide, a
 * line 14 px high.  Returns the canvas height for gp_head_size: 500, more
 * for steep long labels, so the plot keeps its size.
 */
static int bars_height(int n, size_t longest, int *angle, int *bmargin)
{
	static const struct { int deg; double sin, cos; } rot[] = {
		{12, 0.2079, 0.9781}, {30, 0.5, 0.8660}, {60, 0.8660, 0.5}, {90, 1, 0},
	};
	double slot = 690.0 / n, len = 7.0 * longest, last = 60 + slot * (n - 0.5);
	size_t k;
	for (k = 0; k + 1 < TPP_ARRAY_LEN(rot); k++)
		if (slot * rot[k].sin >= 14 && last + len * rot[k].cos <= 990)
			break;
	*angle = rot[k].deg;
	*bmargin = (int)(len * rot[k].sin / 14) + 2;
	if (*bmargin < 5)
		*bmargin = 5;
	return 500 + 14 * (*bmargin - 5);
}

/*
 * s inside a gnuplot single-quoted string ('' for '), where nothing else is
 * special: in a double-quoted one a `command` in backquotes runs (gnuplot
 * substitutes them anywhere but in single quotes), and a '"' ends the
 * string, so a GPU or tier name from a cluster file could run commands
 * when the script is drawn.  Returns buf (cut short, never mid-quote).
 */
static const char *gp_sq(const char *s, char *buf, size_t size)
{
	size_t n = 0;
	for (; *s && n + 2 < size; s++) {
		if (*s == '\'')
			buf[n++] = '\'';
		buf[n++] = *s;
	}
	buf[n] = '\0';
	return buf;
}

/* The head of a bar chart's script with the canvas and labels of
 * bars_height. */
static void gp_bars(FILE *f, const char *name, const char *what, int n,
		    size_t longest)
{
	int angle, bmargin, h = bars_height(n, longest, &angle, &bmargin);
	gp_head_size(f, name, what, h);
	fprintf(f, "set xrange [-0.6:%g]\nset xtics rotate by -%d left\nset bmargin %d\n",
		n - 0.4, angle, bmargin);
}

/* The longest a figure may take gnuplot (seconds): ~1 s is usual. */
#define TPP_REPORT_GNUPLOT_S 60.0

static int png_ok(const char *path)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
	unsigned char b[8];
	FILE *f = fopen(path, "rb");
	int ok = f && fread(b, 1, 8, f) == 8 && !memcmp(b, sig, 8);
	/* and whole: it ends in the IEND chunk (length 0, type, CRC), not
	 * cut short by a full disk */
	if (ok) {
		static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D',
						      0xae, 0x42, 0x60, 0x82};
		unsigned char e[12];
		ok = !fseek(f, -12, SEEK_END) && fread(e, 1, 12, f) == 12 &&
		     !memcmp(e, iend, 12);
	}
	if (f)
		fclose(f);
	return ok;
}

/* Run `gnuplot -e "outfile='NAME.png.tmp.XXXXXX'" NAME.gp` in dir (the
 * temporary made by mkstemp first, so gnuplot never writes through a name
 * another user planted), output to dir/gnuplot.log; rename the PNG into
 * place when it is valid. */
static int draw(struct figs *fg, const char *dir, enum fig which)
{
	const char *name = fig_names[which];
	char outarg[160], script[64], tmp[PATH_LEN], png[PATH_LEN];
	char *argv[5];
	pid_t pid;
	int status = 0, fd;

	snprintf(script, sizeof(script), "%s.gp", name);
	snprintf(tmp, sizeof(tmp), "%s/%s.png.tmp.XXXXXX", dir, name);
	snprintf(png, sizeof(png), "%s/%s.png", dir, name);
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "tpplan: report: warning: cannot draw %s: %s: %s\n", script, tmp,
			strerror(errno));
		return 0;
	}
	{
		mode_t mask = umask(0); /* mkstemp's 0600 becomes what a new file gets */
		umask(mask);
		(void)fchmod(fd, 0666 & ~mask);
	}
	close(fd);
	snprintf(outarg, sizeof(outarg), "outfile='%s'", strrchr(tmp, '/') + 1);
	argv[0] = "gnuplot";
	argv[1] = "-e";
	argv[2] = outarg;
	argv[3] = script;
	argv[4] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "tpplan: report: warning: cannot start gnuplot: %s\n", strerror(errno));
		remove(tmp);
		return 0;
	}
	if (pid == 0) {
		if (chdir(dir))
			_exit(127);
		fd = open("gnuplot.log", O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execv(fg->gnuplot, argv);
		_exit(127);
	}
	/*
	 * A figure takes gnuplot well under a second; one that has not
	 * finished in TPP_REPORT_GNUPLOT_S (a hung or stopped gnuplot, a
	 * wrapper that waits for input) is killed and the figure left out,
	 * so the report never waits forever.  The test hook
	 * TPP_REPORT_TEST_GNUPLOT_S shortens the wait.
	 */
	{
		double limit = TPP_REPORT_GNUPLOT_S, waited = 0;
		const char *hook = getenv("TPP_REPORT_TEST_GNUPLOT_S");
		const struct timespec tick = {0, 10 * 1000 * 1000};
		int done = 0;
		if (hook && atof(hook) > 0)
			limit = atof(hook);
		while (!done && waited < limit) {
			pid_t got = waitpid(pid, &status, WNOHANG);
			if (got == pid) {
				done = 1;
			} else if (got < 0 && errno != EINTR) {
				status = -1;
				done = 1;
			} else {
				nanosleep(&tick, NULL);
				waited += 0.01;
			}
		}
		if (!done) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			fprintf(stderr, "tpplan: report: warning: gnuplot did not finish %s within %g s; stopped it\n",
				script, limit);
			remove(tmp);
			return 0;
		}
	}
	if (status != 0 || !png_ok(tmp) || rename(tmp, png)) {
		fprintf(stderr, "tpplan: report: warning: gnuplot could not draw %s (see %s/gnuplot.log)\n",
			script, dir);
		remove(tmp);
		return 0;
	}
	return 1;
}

static const char *const kind_colors[TPP_EV__COUNT] = {
	[TPP_EV_F] = "#4e79a7", [TPP_EV_B] = "#f28e2b", [TPP_EV_W] = "#59a14f",
	[TPP_EV_BW] = "#e15759", [TPP_EV_DP] = "#76b7b2", [TPP_EV_OPT] = "#b07aa1",
};

#define LABEL_LEN 96

/*
 * The bar labels of the breakdown and memory charts, one per top layout:
 * "RANK: tpT ppP dpD mbsM", cp and vp when above 1, "zb" for the ZB-H1
 * schedule, and each of cp, vp, sp, tp_overlap, recompute and zero that
 * differs among the charted layouts (so no two labels read alike without
 * their rank), e.g. "3: tp1 pp1 dp16 cp1 mbs2 rc:sel zero3".  Returns the
 * longest label's length.
 */
static size_t bar_labels(const struct tpp_plan *p, char (*lb)[LABEL_LEN])
{
	static const char *const rc_short[TPP_RECOMPUTE__COUNT] = {
		[TPP_RECOMPUTE_NONE] = "none",
		[TPP_RECOMPUTE_SELECTIVE] = "sel",
		[TPP_RECOMPUTE_FULL] = "full",
	};
	const struct tpp_layout *a = &p->top[0].layout;
	int cp = 0, vp = 0, sp = 0, ov = 0, rc = 0, zero = 0, i;
	size_t longest = 0;
	for (i = 1; i < p->n_top; i++) {
		const struct tpp_layout *l = &p->top[i].layout;
		cp |= l->cp != a->cp;
		vp |= l->vp != a->vp;
		sp |= l->sp != a->sp;
		ov |= l->tp_overlap != a->tp_overlap;
		rc |= l->recompute != a->recompute ||
		      l->recompute_layers != a->recompute_layers;
		zero |= l->zero != a->zero;
	}
	for (i = 0; i < p->n_top; i++) {
		const struct tpp_layout *l = &p->top[i].layout;
		char *b = lb[i];
		size_t n = 0;
		APP(b, LABEL_LEN, n, "%d: tp%d pp%d dp%d", i + 1, l->tp, l->pp, l->dp);
		if (l->cp > 1 || cp)
			APP(b, LABEL_LEN, n, " cp%d", l->cp);
		APP(b, LABEL_LEN, n, " mbs%d", l->mbs);
		if (l->vp > 1 || vp)
			APP(b, LABEL_LEN, n, " vp%d", l->vp);
		if (l->zb)
			APP(b, LABEL_LEN, n, " zb");
		if (sp)
			APP(b, LABEL_LEN, n, " sp%d", l->sp);
		if (ov)
			APP(b, LABEL_LEN, n, " tpov%d", l->tp_overlap);
		if (rc && l->recompute == TPP_RECOMPUTE_FULL && l->recompute_layers > 0)
			APP(b, LABEL_LEN, n, " rc:full(%d)", l->recompute_layers);
		else if (rc)
			APP(b, LABEL_LEN, n, " rc:%s", rc_short[l->recompute]);
		if (zero)
			APP(b, LABEL_LEN, n, " zero%d", l->zero);
		TPP_ASSERT(n < LABEL_LEN);
		if (n > longest)
			longest = n;
	}
	return longest;
}

static int fig_breakdown(const char *dir, const struct tpp_report *r)
{
	const struct tpp_plan *p = r->plan;
	struct afile a;
	char lb[TPP_TOP_MAX][LABEL_LEN];
	size_t longest = bar_labels(p, lb);
	int i, k, rc;
	if ((rc = af_open(&a, dir, "breakdown.dat")))
		return rc;
	fputs("layout", a.f);
	for (k = 0; k < TPP_TIME_PARTS; k++)
		fprintf(a.f, "\t%s", tpp_time_part_names[k]);
	fputc('\n', a.f);
	for (i = 0; i < p->n_top; i++) {
		fputs(lb[i], a.f);
		for (k = 0; k < TPP_TIME_PARTS; k++)
			fprintf(a.f, "\t%.9g", tpp_time_part(&p->top[i].t, k));
		fputc('\n', a.f);
	}
	if ((rc = af_close(&a)) || (rc = af_open(&a, dir, "breakdown.gp")))
		return rc;
	gp_bars(a.f, "breakdown", "step-time breakdown of the top layouts",
		p->n_top, longest);
	fprintf(a.f, "set title \"Step time by cause, top %d layouts (%s)\"\n"
		"set ylabel \"seconds per step\"\nset yrange [0:*]\n"
		"set style data histograms\nset style histogram rowstacked\n"
		"set style fill solid 0.85 border -1\nset boxwidth 0.6\n"
		"plot for [i=2:%d] \"breakdown.dat\" using i:xtic(1) title columnheader(i)\n",
		p->n_top, p->top[0].simulated ? "simulated" : "analytic",
		TPP_TIME_PARTS + 1);
	return af_close(&a);
}

static int fig_memory(const char *dir, const struct tpp_report *r)
{
	const struct tpp_plan *p = r->plan;
	double cap = r->x->cluster->gpu.hbm_bytes / GIB, top = cap;
	struct afile a;
	char lb[TPP_TOP_MAX][LABEL_LEN];
	char gname[2 * TPP_NAME_LEN];
	size_t longest = bar_labels(p, lb);
	int i, rc;
	if ((rc = af_open(&a, dir, "memory.dat")))
		return rc;
	fputs("layout\tweights\tgrads\toptimizer\tactivations\tother\treserve\n", a.f);
	for (i = 0; i < p->n_top; i++) {
		const struct tpp_mem_breakdown *m = &p->top[i].mem;
		fprintf(a.f, "%s\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\t%.6f\n", lb[i],
			m->weights_bytes / GIB, m->grads_bytes / GIB, m->optim_bytes / GIB,
			m->act_bytes / GIB, m->other_bytes / GIB, m->reserve_bytes / GIB);
		if (m->total_bytes / GIB > top)
			top = m->total_bytes / GIB;
	}
	if ((rc = af_close(&a)) || (rc = af_open(&a, dir, "memory.gp")))
		return rc;
	gp_bars(a.f, "memory", "memory per GPU of the top layouts against the GPU's capacity",
		p->n_top, longest);
	fprintf(a.f, "cap = %.6f\n"
		"set title 'Memory per GPU (most-loaded stage), %s'\n"
		"set ylabel \"GiB\"\nset yrange [0:%.3f]\n"
		"set style data histograms\nset style histogram rowstacked\n"
		"set style fill solid 0.85 border -1\nset boxwidth 0.6\n"
		"plot for [i=2:7] \"memory.dat\" using i:xtic(1) title columnheader(i), \\\n"
		"     cap with lines lw 2 dt 2 lc rgb \"#d62728\" title sprintf(\"capacity %%.0f GiB\", cap)\n",
		cap, gp_sq(r->x->cluster->gpu.name, gname, sizeof(gname)), top * 1.12);
	return af_close(&a);
}

/* The simulated schedule of the best layout.  Returns TPP_OK, or
 * TPP_E_INFEASIBLE when it cannot be simulated (no figure then). */
static int fig_timeline(const char *dir, const struct tpp_report *r,
			double *step_s, size_t *nevents)
{
	const struct tpp_eval *e = &r->plan->top[0];
	const struct tpp_layout *l = &e->layout;
	size_t cap, i;
	struct tpp_sim_event *ev = tpp_sim_events_new(l, e->microbatches, &cap);
	struct tpp_sim_result sr;
	struct tpp_err err;
	struct afile a;
	int present[TPP_EV__COUNT] = {0};
	double first_b = 0, zoom;
	int rc, k, pass;

	/* a pipeline too large to play out: no buffer, and tpp_sim_run's
	 * warning below */
	if (!ev && cap) {
		fprintf(stderr, "tpplan: report: out of memory\n");
		return TPP_E_SYSTEM;
	}
	rc = tpp_sim_run(r->x->model, r->x->cluster, r->x->opts, l, e, &sr, ev, cap, &err);
	if (rc) {
		fprintf(stderr, "tpplan: report: warning: no timeline: %s\n", err.msg);
		free(ev);
		return rc == TPP_E_SYSTEM ? rc : TPP_E_INFEASIBLE;
	}
	TPP_ASSERT(ev && sr.nevents <= cap);
	*step_s = sr.step_s;
	*nevents = sr.nevents;
	if ((rc = af_open(&a, dir, "timeline.dat"))) {
		free(ev);
		return rc;
	}
	fprintf(a.f, "# tpplan %s: simulated schedule of the best layout; row %d = the data-parallel traffic after the pipeline (DP) and the optimizer (OPT)\n"
		"# row\tkind_index\tkind\tchunk\tmicrobatch\tstart_s\tend_s\n", tpp_version, l->pp);
	for (i = 0; i < sr.nevents; i++) {
		present[ev[i].kind] = 1;
		if (ev[i].rank == 0 && (ev[i].kind == TPP_EV_B || ev[i].kind == TPP_EV_BW) &&
		    (first_b == 0 || ev[i].start_s < first_b))
			first_b = ev[i].start_s;
		fprintf(a.f, "%d\t%d\t%s\t%d\t%d\t%.9f\t%.9f\n",
			ev[i].rank < 0 ? l->pp : ev[i].rank, (int)ev[i].kind,
			tpp_ev_names[ev[i].kind], ev[i].chunk, ev[i].mb,
			ev[i].start_s, ev[i].end_s);
	}
	free(ev);
	if ((rc = af_close(&a)) || (rc = af_open(&a, dir, "timeline.gp")))
		return rc;
	zoom = first_b > 0 && 2 * first_b < 0.5 * sr.step_s ? 2 * first_b : 0;
	gp_head_size(a.f, "timeline", "simulated pipeline schedule of the best layout (Gantt chart per stage)",
		     zoom > 0 ? 800 : 500);
	fprintf(a.f, "set xlabel \"time in the step (s)\"\nset ylabel \"pipeline rank\"\n"
		"set yrange [%g:-0.6]\nset grid noytics xtics\n", l->pp + 0.6);
	if (l->pp <= 64) {
		fputs("set ytics (", a.f);
		for (k = 0; k < l->pp; k++)
			fprintf(a.f, "\"%d\" %d, ", k, k);
		fprintf(a.f, "\"optimizer\" %d)\n", l->pp);
	}
	if (zoom > 0)
		fputs("set multiplot layout 2,1\n", a.f);
	for (pass = 0; pass < (zoom > 0 ? 2 : 1); pass++) {
		int first = 1;
		if (pass == 0)
			fprintf(a.f, "set title \"Simulated schedule of the best layout, step %.*f s (%s)\"\nset xrange [0:%.9g]\n",
				tpp_step_digits(sr.step_s), sr.step_s, tpp_sched_names[tpp_layout_sched(l)], sr.step_s);
		else
			fprintf(a.f, "set title \"The first %.3g s (pipeline fill)\"\nset xrange [0:%.9g]\n",
				zoom, zoom);
		/* thousands of boxes: borders only where they can be told apart */
		fprintf(a.f, "set style fill solid 0.9 %s\nplot ", pass ? "border rgb \"white\"" : "noborder");
		for (k = 0; k < TPP_EV__COUNT; k++) {
			if (!present[k])
				continue;
			/* DP reductions overlap the backward: a thin bar above it */
			fprintf(a.f, "%s\"timeline.dat\" using (($6+$7)/2):($2==%d ? $1%s : 1/0):(($7-$6)/2):(%s) with boxxyerror lc rgb \"%s\" title \"%s\"",
				first ? "" : ", \\\n     ", k, k == TPP_EV_DP ? "-0.32" : "",
				k == TPP_EV_DP ? "0.07" : "0.3", kind_colors[k], tpp_ev_names[k]);
			first = 0;
		}
		fputc('\n', a.f);
	}
	if (zoom > 0)
		fputs("unset multiplot", a.f);
	fputc('\n', a.f);
	return af_close(&a);
}

/*
 * Throughput and MFU against the GPU count, both axes logarithmic, so
 * linear scaling is a straight line: the dotted reference is the
 * requested count's throughput (the smallest count's when the requested
 * one has no layout) times the GPU ratio: above that count the distance
 * below the line is what scaling out costs, below it the distance above
 * the line is what the reference count loses against the smaller one.
 */
static int fig_scaling(const char *dir, const struct tpp_report *r)
{
	struct afile a;
	int i, rc, first = 1, ref = -1;
	if ((rc = af_open(&a, dir, "scaling.dat")))
		return rc;
	fputs("# gpus\ttokens_per_s\tmfu_percent\tstep_s\n", a.f);
	for (i = 0; i < r->nscale; i++)
		if (r->scale[i].ok)
			fprintf(a.f, "%d\t%.6g\t%.4f\t%.6g\n", r->scale[i].gpus,
				r->scale[i].tokens_per_s, 100 * r->scale[i].mfu,
				r->scale[i].step_s);
	if ((rc = af_close(&a)) || (rc = af_open(&a, dir, "scaling.gp")))
		return rc;
	gp_head(a.f, "scaling", "predicted throughput and MFU of the best layout as the GPU count grows");
	for (i = 0; i < r->nscale; i++)
		if (r->scale[i].ok && (ref < 0 || r->scale[i].gpus == r->x->search->gpus))
			ref = i;
	fprintf(a.f, "set title \"Best layout per GPU count: throughput and MFU (global batch %d)\"\n"
		"set logscale x 2\nset logscale y 10\nset xlabel \"GPUs\"\nset ylabel \"tokens/s\"\n"
		"set y2label \"MFU (%%)\"\nset ytics nomirror\nset y2tics\n"
		"set y2range [0:100]\nset xtics (",
		r->x->search->gbs);
	for (i = 0; i < r->nscale; i++)
		if (r->scale[i].ok) {
			fprintf(a.f, "%s%d", first ? "" : ", ", r->scale[i].gpus);
			first = 0;
		}
	fputs(")\n", a.f);
	/* mark the requested count, as the table does */
	for (i = 0; i < r->nscale; i++)
		if (r->scale[i].ok && r->scale[i].gpus == r->x->search->gpus)
			fprintf(a.f, "set arrow from %d, graph 0 to %d, graph 1 nohead dt 3 lc rgb \"gray40\"\n"
				"set label \"requested\" at %d, graph 0.96 left offset 0.5, 0 tc rgb \"gray40\"\n",
				r->scale[i].gpus, r->scale[i].gpus, r->scale[i].gpus);
	fputs("set offsets graph 0.05, graph 0.05, 0, 0\n", a.f);
	if (ref >= 0)
		fprintf(a.f, "linear(x) = %.6g * x / %d\n", r->scale[ref].tokens_per_s,
			r->scale[ref].gpus);
	fputs("plot \"scaling.dat\" using 1:2 with linespoints lw 2 pt 7 axes x1y1 title \"tokens/s\", \\\n", a.f);
	if (ref >= 0)
		fprintf(a.f, "     \"\" using 1:(linear($1)) with lines lw 1 dt 3 lc rgb \"gray40\" axes x1y1 title \"linear scaling from %d GPUs\", \\\n",
			r->scale[ref].gpus);
	fputs("     \"\" using 1:3 with linespoints lw 2 pt 5 dt 2 axes x1y2 title \"MFU (%)\"\n", a.f);
	return af_close(&a);
}

static int fig_sens(const char *dir, const struct tpp_report *r)
{
	struct afile a;
	int i, rc;
	if ((rc = af_open(&a, dir, "sensitivity.dat")))
		return rc;
	fputs("# bandwidth beyond the first tier\tbest step_s\n", a.f);
	for (i = 0; i < r->nsens; i++)
		fprintf(a.f, "%gx outer bandwidth\t%s%.6g\n", r->sens[i].factor,
			r->sens[i].ok ? "" : "?", r->sens[i].ok ? r->sens[i].step_s : 0.0);
	if ((rc = af_close(&a)) || (rc = af_open(&a, dir, "sensitivity.gp")))
		return rc;
	gp_head(a.f, "sensitivity", "best step time if the bandwidth beyond the first tier halves or doubles");
	fputs("set title \"Best step time vs the bandwidth beyond the first tier (scaled)\"\n"
	      "set ylabel \"seconds per step\"\nset yrange [0:*]\nset key off\n"
	      "set style data histograms\nset style fill solid 0.85 border -1\nset boxwidth 0.5\n"
	      "plot \"sensitivity.dat\" using 2:xtic(1) lc rgb \"#4e79a7\", \\\n"
	      "     \"\" using 0:2:(sprintf(\"%.4g s\", $2)) with labels offset 0,1\n", a.f);
	return af_close(&a);
}

/* Tables of a calibration with points, at most 16. */
static int cal_tables(const struct tpp_calibration *cal, int *idx, int cap)
{
	int i, n = 0;
	for (i = 0; i < cal->ncoll && n < cap; i++)
		if (cal->coll[i].npoints > 0)
			idx[n++] = i;
	return n;
}

static double cal_busbw(const struct tpp_cal_coll *t, double bytes, double s)
{
	return s > 0 ? bytes * tpp_cal_bus_factor(t->op, t->group) / s : 0;
}

static int fig_cal(const char *dir, const struct tpp_report *r)
{
	const struct tpp_calibration *cal = r->cal;
	const struct tpp_cluster *c = r->x->cluster;
	int idx[16], n = cal_tables(cal, idx, 16), i, j, rc;
	struct afile a;
	if ((rc = af_open(&a, dir, "calibration.dat")))
		return rc;
	fputs("# one block per measured table: bytes, bus bandwidth GB/s at the median, p90 and p10 time\n", a.f);
	for (i = 0; i < n; i++) {
		const struct tpp_cal_coll *t = &cal->coll[idx[i]];
		fprintf(a.f, "%s# %s tier %d group %d\n", i ? "\n\n" : "",
			tpp_coll_names[t->op], t->tier, t->group);
		for (j = 0; j < t->npoints; j++) {
			const struct tpp_cal_point *pt = &t->pts[j];
			fprintf(a.f, "%.9g\t%.6g\t%.6g\t%.6g\n", pt->bytes,
				cal_busbw(t, pt->bytes, pt->median_s) / 1e9,
				cal_busbw(t, pt->bytes, pt->p90_s) / 1e9,
				cal_busbw(t, pt->bytes, pt->p10_s) / 1e9);
		}
	}
	if ((rc = af_close(&a)) || (rc = af_open(&a, dir, "calibration.gp")))
		return rc;
	gp_head(a.f, "calibration", "measured collective points and fitted latency-bandwidth curves per tier and collective");
	fputs("set title \"Calibration: measured bus bandwidth (points, p10-p90 bars) and fits (lines)\"\n"
	      "set logscale x 2\nset format x \"%.0b%B\"\nset xlabel \"message size (bytes, nccl-tests convention)\"\n"
	      "set ylabel \"bus bandwidth (GB/s)\"\nset yrange [0:*]\nset samples 400\nplot ", a.f);
	for (i = 0; i < n; i++) {
		const struct tpp_cal_coll *t = &cal->coll[idx[i]];
		const char *tier = t->tier >= 0 && t->tier < c->ntiers ? c->tiers[t->tier].name : "?";
		char tname[2 * TPP_NAME_LEN];
		/* gnuplot cycles 8 colours: the point and dash types tell the
		 * next eight apart */
		static const int pts[3] = {7, 5, 9};
		fprintf(a.f, "%s\"calibration.dat\" index %d using 1:2:3:4 with yerrorbars pt %d lc %d title '%s, %s, %d ranks'",
			i ? ", \\\n     " : "", i, pts[(i / 8) % 3], i + 1, tpp_coll_names[t->op],
			gp_sq(tier, tname, sizeof(tname)), t->group);
		if (t->fit.valid && t->fit.busbw_Bps > 0) {
			double fct = tpp_cal_bus_factor(t->op, t->group);
			fprintf(a.f, ", \\\n     (x*%.9g/(%.9g + x*%.9g/%.9g))/1e9 with lines lw 2 lc %d dt %d title \"fit: alpha %.3g us, busbw %.1f GB/s\"",
				fct, t->fit.alpha_s, fct, t->fit.busbw_Bps, i + 1, 1 + (i / 8) % 3,
				t->fit.alpha_s * 1e6, t->fit.busbw_Bps / 1e9);
		}
	}
	fputc('\n', a.f);
	return af_close(&a);
}

static int fig_exec(const char *dir, const struct tpp_report *r)
{
	struct afile a;
	int i, rc;
	if ((rc = af_open(&a, dir, "exec.dat")))
		return rc;
	fputs("# phase\tmeasured_ms\tpredicted_ms\n", a.f);
	for (i = 0; i < r->nphase; i++) {
		const struct tpp_report_phase *ph = &r->phase[i];
		fprintf(a.f, "%s\t", ph->name);
		if (ph->measured_s > 0)
			fprintf(a.f, "%.6g\t", ph->measured_s * 1e3);
		else
			fputs("?\t", a.f);
		if (ph->predicted_s > 0)
			fprintf(a.f, "%.6g\n", ph->predicted_s * 1e3);
		else
			fputs("?\n", a.f);
	}
	if ((rc = af_close(&a)) || (rc = af_open(&a, dir, "exec.gp")))
		return rc;
	gp_head(a.f, "exec", "measured vs predicted time per phase of `tpplan exec`");
	fputs("set title \"tpplan exec: measured vs predicted per phase\"\n"
	      "set logscale y\nset ylabel \"ms per step (slowest rank)\"\n"
	      "set xtics rotate by -35\nset offsets 0.5, 0.5, 0, 0\n"
	      "plot \"exec.dat\" using 0:2:xtic(1) with points pt 7 ps 1.6 title \"measured\", \\\n"
	      "     \"\" using 0:3 with points pt 6 ps 2 lw 2 title \"predicted\"\n", a.f);
	return af_close(&a);
}

/* ---- the document ---------------------------------------------------------- */

static void figure(struct doc *d, const struct figs *fg, enum fig which,
		   const char *caption)
{
	char file[64];
	if (!fg->wanted[which])
		return;
	snprintf(file, sizeof(file), "%s.png", fig_names[which]);
	if (fg->drawn[which])
		d_img(d, file, caption);
	else
		d_note(d, "Figure not drawn (%s); its data and gnuplot script are %s.dat and %s.gp.",
		       fg->off ? "--no-plots" : fg->gnuplot[0] ? "gnuplot failed" : "no gnuplot",
		       fig_names[which],
		       fig_names[which]);
}

static const char css[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1500px;padding:0 1em;color:#222;line-height:1.4}\n"
	"h1{font-size:1.6em;border-bottom:2px solid #4e79a7;padding-bottom:.2em}\n"
	"h2{font-size:1.25em;margin-top:1.8em;color:#2b4a6f}\n"
	"table{border-collapse:collapse;margin:.6em 0;font-size:.88em}\n"
	"th,td{border:1px solid #ccd;padding:.25em .5em;text-align:left;vertical-align:top}\n"
	"th{background:#eef2f7}\n"
	"tr:nth-child(even) td{background:#fafbfd}\n"
	"code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;overflow-wrap:anywhere}\n"
	"td code.layout-arg{display:block;min-width:10em;max-width:14em}\n"
	"td code.megatron{display:block;min-width:16em;max-width:24em}\n"
	".wide{overflow-x:auto}\n"
	"figure{margin:1em 0}img{max-width:100%;border:1px solid #dde}\n"
	"figcaption{font-size:.85em;color:#555}\n"
	".note{background:#fff6e0;border-left:4px solid #f0b030;padding:.4em .8em}\n";

/* A scaling, sensitivity or first-fit layout that is ZeRO-3 across nodes
 * (tpp_eval_optimistic), which the validation shows optimistic. */
#define OPTIMISTIC_MARK_NCCL " (ZeRO-3 across nodes: the published runs took " TPP_OPTIMISTIC_RANGE " times such predictions (DeepSpeed 2021, 384-2240 GPUs), PyTorch FSDP on 64 A100 " TPP_FSDP_NODES_RANGE " times, Megatron FSDP on 128 GB200 " TPP_MFSDP_NODES_RANGE " times; costmodel/README.md, Accuracy)"
/* With --zero3-rate-GBps the DeepSpeed runs are stated at their own rate
 * (tpp_print_caution says the same) */
#define OPTIMISTIC_MARK_RATE " (ZeRO-3 across nodes: the published DeepSpeed 2021 runs on 384-2240 GPUs took " TPP_DEEPSPEED_RATE_RANGE " times such predictions at their implementation's rate (--zero3-rate-GBps), PyTorch FSDP on 64 A100 " TPP_FSDP_NODES_RANGE " times and Megatron FSDP on 128 GB200 " TPP_MFSDP_NODES_RANGE " times at NCCL's rates; costmodel/README.md, Accuracy)"
static const char *optimistic_mark(const struct tpp_cost_opts *o)
{
	return o->zero3_rate_Bps > 0 ? OPTIMISTIC_MARK_RATE : OPTIMISTIC_MARK_NCCL;
}

/* Columns of a memory table, a row of it (GiB), labelled `what`. */
static const char *const mem_heads[] = {"#", "weights (GiB)", "grads (GiB)", "optimizer (GiB)",
					"activations (GiB)", "other (GiB)", "reserve (GiB)",
					"total (GiB)", "capacity (GiB)"};
static void mem_row(struct doc *d, const char *what, const struct tpp_mem_breakdown *mb,
		    const struct tpp_gpu *g)
{
	/* a peak at the optimizer step (16-bit gradients' fp32 copy, the
	 * activations freed: tpp_mem_breakdown) is said where it is shown */
	d_row(d), d_td(d, "%s%s", what, mb->at_optimizer_step ? " (peak at the optimizer step: the fp32 copy of the 16-bit gradients in optimizer, activations freed)" : ""),
		d_td(d, "%.2f", mb->weights_bytes / GIB),
		d_td(d, "%.2f", mb->grads_bytes / GIB), d_td(d, "%.2f", mb->optim_bytes / GIB),
		d_td(d, "%.2f", mb->act_bytes / GIB), d_td(d, "%.2f", mb->other_bytes / GIB),
		d_td(d, "%.2f", mb->reserve_bytes / GIB), d_td(d, "%.2f", mb->total_bytes / GIB),
		d_td(d, "%.2f", g->hbm_bytes / GIB);
}

/* The rejection counts of the search, a table. */
static void rejections(struct doc *d, const struct tpp_plan *p)
{
	static const char *const h[] = {"reason rejected", "layouts"};
	int i;
	d_table(d, h, (int)TPP_ARRAY_LEN(h));
	for (i = 1; i < TPP_REJ__COUNT; i++)
		if (p->rejected[i])
			d_row(d), d_td(d, "%s", tpp_reject_name(i)), d_td(d, "%llu", p->rejected[i]);
	d_end_table(d);
}

/* With no feasible layout: why, how close the nearest came, and from how
 * many GPUs up one fits (the CLI prints the same on stderr). */
static void write_infeasible(struct doc *d, const struct tpp_report *r)
{
	const struct tpp_plan_ctx *x = r->x;
	const struct tpp_plan *p = r->plan;
	const struct tpp_gpu *g = &x->cluster->gpu;
	char counts[512], lb[200], hint[160];

	d_h(d, 2, "No feasible layout");
	tpp_print_counts(counts, sizeof(counts), p, x->search);
	d_p(d, "No layout of %s on %d GPUs is valid and fits in memory (%s). Each was rejected for the first of these reasons it met:",
	    usr(d, x->model->name), x->search->gpus, counts);
	rejections(d, p);
	if (p->rejected[TPP_REJ_BATCH] && *tpp_print_batch_hint(hint, sizeof(hint), x->search))
		d_p(d, "Global batch:%s.", hint);
	if (p->have_min_mem) {
		tpp_layout_format(&p->min_mem.layout, lb, sizeof(lb));
		d_p(d, "Closest to fitting: %s, whose most-loaded GPU needs %.2f GiB of %.2f GiB (GiB per GPU):",
		    lb, p->min_mem.mem.total_bytes / GIB, g->hbm_bytes / GIB);
		d_table(d, mem_heads, (int)TPP_ARRAY_LEN(mem_heads));
		mem_row(d, "closest", &p->min_mem.mem, g);
		d_end_table(d);
	}
	if (r->first_fit_gpus > 0) {
		char nodes[40];
		tpp_layout_format(&r->first_fit.layout, lb, sizeof(lb));
		tpp_cli_nodes_hint(nodes, sizeof(nodes), r->first_fit_gpus, x->cluster);
		d_p(d, "With %d GPUs (%dx) a layout fits, %.*f s per step, %.0f tokens/s, %.1f%% MFU%s: --gpus %d%s --layout %s; the scaling table below goes up to it.",
		    r->first_fit_gpus, r->first_fit_gpus / x->search->gpus,
		    tpp_step_digits(r->first_fit.step_s), r->first_fit.step_s,
		    r->first_fit.tokens_per_s, 100 * r->first_fit.mfu,
		    tpp_eval_optimistic(&r->first_fit) ? optimistic_mark(x->opts) : "", r->first_fit_gpus, nodes, lb);
	} else if (r->first_fit_gpus == 0) {
		d_p(d, "No layout fits with more GPUs either, up to %d (%dx).",
		    x->search->gpus << tpp_cli_first_fit_steps(x->search),
		    1 << tpp_cli_first_fit_steps(x->search));
	} else if (!tpp_cli_first_fit_steps(x->search)) {
		d_p(d, "More GPUs were not searched: twice %d is past the %d GPUs tpplan plans for.",
		    x->search->gpus, 1 << 24);
	} else if (r->first_fit_gpus <= TPP_CLI_FIRST_FIT_TIMED_OUT) {
		int k = TPP_CLI_FIRST_FIT_TIMED_OUT - r->first_fit_gpus;
		d_p(d, "From how many GPUs a layout fits is not known: the search at %d GPUs (%dx) stopped at the time limit, which the report's searches share (--time-limit %g s)%s.",
		    x->search->gpus << k, 1 << k, x->search->time_limit_s,
		    k > 1 ? "; none fits at the counts searched below it" : "");
	} else {
		d_p(d, "From how many GPUs a layout fits is not known: a search at twice the GPUs or more failed.");
	}
	if (r->fewer.gpus > 0) {
		char buf[768];
		/* ends with the layout, no full stop: it is copied */
		tpp_cli_fewer_text(buf, sizeof(buf), x->search, x->cluster, &r->fewer, NULL);
		d_p(d, "%c%s", toupper((unsigned char)buf[0]), buf + 1);
	}
}

/* Sections 1-4: the best layouts, their breakdown and memory, why the
 * others lost, the best layout's schedule. */
static void write_best(struct doc *d, const struct tpp_report *r,
		       const struct figs *fg, double tl_step_s, size_t tl_events,
		       int have_timeline)
{
	const struct tpp_plan_ctx *x = r->x;
	const struct tpp_model *m = x->model;
	const struct tpp_plan *p = r->plan;
	const struct tpp_eval *best = &p->top[0];
	const struct tpp_gpu *g = &x->cluster->gpu;
	char args[2048], note[1536], lb[200];
	int i, k;

	/* 1. the top layouts */
	d_h(d, 2, "Best layouts");
	d_p(d, "Fastest first; m = micro-batches per step; memory is the most-loaded GPU. The last column gives Megatron-LM launch arguments that reproduce the layout (data-parallel size follows from the GPU count).");
	{
		static const char *const h[] = {"#", "tp", "pp", "dp", "cp", "mbs", "vp", "schedule", "sp", "recompute",
			"zero", "m", "step (s)", "tokens/s", "MFU", "mem/GPU (GiB)", "layout", "Megatron-LM arguments"};
		d_table(d, h, (int)TPP_ARRAY_LEN(h));
	}
	for (i = 0; i < p->n_top; i++) {
		const struct tpp_eval *e = &p->top[i];
		const struct tpp_layout *l = &e->layout;
		tpp_layout_format(l, lb, sizeof(lb));
		tpp_report_megatron_args(m, x->opts, e, args, sizeof(args), note, sizeof(note));
		d_row(d);
		d_td(d, "%d", i + 1), d_td(d, "%d", l->tp), d_td(d, "%d", l->pp), d_td(d, "%d", l->dp),
			d_td(d, "%d", l->cp), d_td(d, "%d", l->mbs), d_td(d, "%d", l->vp),
			d_td(d, "%s", tpp_sched_names[tpp_layout_sched(l)]),
			d_td(d, "%s", l->tp_overlap ? "yes+overlap" : l->sp ? "yes" : "no"),
			(l->recompute == TPP_RECOMPUTE_FULL && l->recompute_layers > 0
				 ? d_td(d, "full, %d per chunk", l->recompute_layers)
				 : d_td(d, "%s", tpp_recompute_names[l->recompute])),
			d_td(d, "%d", l->zero),
			d_td(d, "%d", e->microbatches),
			d_td(d, "%.*f%s", tpp_step_digits(e->step_s), e->step_s,
			     !e->simulated && tpp_print_top_analytic(p) < p->n_top ? " *" : ""),
			d_td(d, "%.0f", e->tokens_per_s), d_td(d, "%.1f%%", 100 * e->mfu),
			d_td(d, "%.1f", e->mem.total_bytes / GIB);
		d_td_code(d, "layout-arg", lb, NULL);
		d_td_code(d, "megatron", args, note);
	}
	d_end_table(d);
	if (tpp_print_ties(note, sizeof(note), p))
		d_p(d, "%s", note);
	if (tpp_print_caution(note, sizeof(note), p, r->x->no_zero3, r->x->opts))
		d_p(d, "%s", note);
	if (tpp_cli_fewer_text(note, sizeof(note), r->x->search, r->x->cluster, &r->fewer, &p->top[0]))
		d_p(d, "%s", note); /* ends with the layout, no full stop: it is copied */
	if (tpp_print_accuracy(note, sizeof(note), r->cal != NULL, &p->top[0], r->x->opts->prec))
		d_p(d, "%s", note);
	if (tpp_print_training(note, sizeof(note), r->x, p))
		d_p(d, "%s", note);

	/* 2. breakdown */
	d_h(d, 2, "Step-time breakdown");
	figure(d, fg, FIG_BREAKDOWN, "Step time of the top layouts, stacked by cause (s per step)");
	{
		/* in ms when the best step is under a second (0.006 hid it);
		 * every column says its unit */
		int ms = p->top[0].step_s < 1;
		double u = ms ? 1e3 : 1;
		const char *h[TPP_TIME_PARTS + 2];
		char hb[TPP_TIME_PARTS + 1][48];
		h[0] = "#";
		for (k = 0; k <= TPP_TIME_PARTS; k++) {
			snprintf(hb[k], sizeof(hb[k]), "%s (%s)",
				 k < TPP_TIME_PARTS ? tpp_time_part_names[k] : "step", ms ? "ms" : "s");
			h[k + 1] = hb[k];
		}
		d_table(d, h, TPP_TIME_PARTS + 2);
		for (i = 0; i < p->n_top; i++) {
			d_row(d), d_td(d, "%d", i + 1);
			for (k = 0; k < TPP_TIME_PARTS; k++)
				d_td(d, "%.3f", u * tpp_time_part(&p->top[i].t, k));
			d_td(d, "%.3f", u * p->top[i].step_s);
		}
	}
	d_end_table(d);

	/* 3. memory */
	d_h(d, 2, "Memory per GPU");
	figure(d, fg, FIG_MEMORY, "Memory per GPU of the top layouts by kind, against the GPU's capacity (GiB)");
	d_table(d, mem_heads, (int)TPP_ARRAY_LEN(mem_heads));
	for (i = 0; i < p->n_top; i++) {
		snprintf(lb, sizeof(lb), "%d", i + 1);
		mem_row(d, lb, &p->top[i].mem, g);
	}
	d_end_table(d);

	/* 3b. why the others lost */
	d_h(d, 2, "Why the others lost");
	{
		char counts[512];
		tpp_print_counts(counts, sizeof(counts), p, x->search);
		d_p(d, "%s.", counts);
	}
	rejections(d, p);
	for (k = 0; k < 2; k++) {
		static const char *const h[] = {"degree", "step (s)", "vs best", "what grew against the best", "layout"};
		const struct tpp_degree_best *t = k ? p->best_pp : p->best_tp;
		int n = k ? p->n_best_pp : p->n_best_tp;
		d_p(d, "Best layout per %s degree (%s):", k ? "pipeline-parallel" : "tensor-parallel",
		    !x->search->simulate ? "analytic model"
					 : "simulated; * analytic: a pipeline too long to simulate");
		d_table(d, h, (int)TPP_ARRAY_LEN(h));
		for (i = 0; i < n; i++) {
			const struct tpp_eval *e = &t[i].e;
			tpp_print_explain(e, best, note, sizeof(note));
			tpp_layout_format(&e->layout, lb, sizeof(lb));
			d_row(d), d_td(d, "%s=%d", k ? "pp" : "tp", t[i].degree),
				d_td(d, "%.*f%s", tpp_step_digits(e->step_s), e->step_s,
				     x->search->simulate && !e->simulated ? " *" : ""),
				d_td(d, "%+.1f%%", 100 * (e->step_s / best->step_s - 1)),
				d_td(d, "%s", e->step_s == best->step_s ? "(best)" : note);
			d_td_code(d, "layout-arg degree", lb, NULL);
		}
		d_end_table(d);
	}

	/* 4. timeline */
	d_h(d, 2, "Simulated schedule of the best layout");
	if (have_timeline) {
		d_p(d, "%s schedule, %d pipeline ranks, %d micro-batches: %zu operations, step %.*f s. F forward, B input gradient, W weight gradient, BW whole backward, DP gradient reduction (thin bar), OPT optimizer. The data is timeline.dat (tab-separated: row (pipeline rank; the data-parallel traffic after the pipeline and the optimizer, rank -1 of `tpplan --timeline`, on row %d), kind index, kind, chunk, micro-batch, start_s, end_s; `tpplan --timeline` writes the same operations as rank, chunk, micro-batch, kind, start_s, end_s).",
		    tpp_sched_names[tpp_layout_sched(&best->layout)], best->layout.pp,
		    best->microbatches, tl_events, tpp_step_digits(tl_step_s), tl_step_s, best->layout.pp);
		if (!best->simulated)
			d_note(d, "Ranked by the analytic model (--analytic): the best layout's analytic step is %.*f s, its simulated one %.*f s.",
			       tpp_step_digits(best->step_s), best->step_s,
			       tpp_step_digits(tl_step_s), tl_step_s);
		figure(d, fg, FIG_TIMELINE, "Simulated pipeline schedule of the best layout (Gantt chart per pipeline rank)");
	} else {
		d_note(d, "The best layout's pipeline is too large to play out event by event; no timeline.");
	}
}

static void write_doc(struct doc *d, const struct tpp_report *r,
		      const struct figs *fg, double tl_step_s, size_t tl_events,
		      int have_timeline, const char *when)
{
	const struct tpp_plan_ctx *x = r->x;
	const struct tpp_model *m = x->model;
	const struct tpp_cluster *c = x->cluster;
	const struct tpp_plan *p = r->plan;
	const struct tpp_eval *best = &p->top[0];
	const struct tpp_gpu *g = &c->gpu;
	enum tpp_prec prec = x->opts->prec;
	int i, k, any_drawn = 0, n_an;

	for (i = 0; i < FIG__COUNT; i++)
		any_drawn |= fg->drawn[i];
	if (d->kind == DOC_HTML) {
		fprintf(d->f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
		esc(d, "tpplan report: ");
		esc(d, m->name);
		fprintf(d->f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
	}
	n_an = tpp_print_top_analytic(p); /* of the best layouts, priced analytically */
	d_h(d, 1, "tpplan report: %s on %s, %d GPUs", usr(d, m->name), usr(d, c->name), x->search->gpus);
	d_p(d, "Generated by tpplan %s on %s. %s; every figure below is %s.",
	    tpp_version, when,
	    !p->n_top ? "No layout of this problem is feasible: the report says why and from how many GPUs one fits"
	    : n_an == 0 ? "Step times are simulated event by event"
	    : n_an == p->n_top ? "Step times are from the analytic model"
	    : "Step times are simulated event by event, except where a step is marked * (analytic model: too long to simulate)",
	    r->cal_path ? "priced with the measured calibration where it has a figure, datasheet / published figures elsewhere"
			: "priced from datasheet and published figures (no calibration)");
	if (r->cal_path) {
		/* what applying the calibration warned about (tpp_cal_check):
		 * stated here, not on stderr alone */
		const char *w = tpp_cli_cal_warnings();
		while (*w) {
			const char *e = strchr(w, '\n');
			int n = e ? (int)(e - w) : (int)strlen(w);
			if (n > 0)
			{
				char one[2048];
				snprintf(one, sizeof(one), "%.*s", n, w);
				d_note(d, "Calibration warning: %s", usr(d, one));
			}
			w = e ? e + 1 : w + n;
		}
	}
	if (!fg->gnuplot[0] && r->plots)
		d_note(d, "gnuplot was not found: this report has tables only. Install gnuplot (Debian: gnuplot-nox) and rerun, or run `gnuplot NAME.gp` in this directory.");
	else if (!r->plots)
		d_note(d, "Written with --no-plots: tables only.");
	else if (fg->failed)
		d_note(d, "Some figures could not be drawn; see gnuplot.log in this directory.");

	/* inputs */
	d_h(d, 2, "Inputs");
	{
		static const char *const h[] = {"input", "value"};
		d_table(d, h, 2);
	}
	d_row(d), d_td(d, "tpplan version"), d_td(d, "%s", tpp_version);
	d_row(d), d_td(d, "model"), d_td(d, "%s (%s): %d layers, hidden %d, %d heads (%d KV), FFN %d, %s, vocab %d (--model %s)",
					  usr(d, m->name), usr(d, m->desc), m->layers, m->hidden, m->heads, m->kv_heads,
					  m->ffn, tpp_mlp_names[m->mlp], m->vocab, usr(d, r->model_arg));
	d_row(d), d_td(d, "cluster"), d_td(d, "%s (%s)", usr(d, c->name),
					    usr(d, c->path[0] ? c->path : r->cluster_arg));
	d_row(d), d_td(d, "GPUs"), d_td(d, "%d (%d per node, %s, %.0f GiB)", x->search->gpus,
					 c->gpus_per_node, usr(d, g->name), g->hbm_bytes / GIB);
	d_row(d), d_td(d, "global batch"), d_td(d, "%d sequences x %d tokens", x->search->gbs, m->seq);
	d_row(d), d_td(d, "precision, attention"), d_td(d, "%s%s%s%s, %s", tpp_prec_names[prec],
							     prec == TPP_PREC_FP8 ? " (" : "",
							     prec == TPP_PREC_FP8 ? tpp_fp8_recipe_names[x->opts->fp8_recipe] : "",
							     prec == TPP_PREC_FP8 ? " scaling)" : "",
							     tpp_attn_names[x->opts->attn]);
	d_row(d), d_td(d, "overlap"), d_td(d, "gradient reduction with the backward: %s; pipeline transfers beside compute: %s; without SP, pipeline activations %s",
					    x->opts->dp_overlap ? "yes" : "no (--no-dp-overlap)",
					    x->opts->p2p_overlap ? "yes" : "no (--no-p2p-overlap)",
					    x->opts->p2p_scatter_gather
						    ? "scattered over the TP ranks, gathered by the receiver (--p2p-scatter-gather)"
						    : "sent whole by every TP rank (Megatron-Core)");
	d_row(d), d_td(d, "gradients"), d_td(d, "%s", x->opts->grads16
							? "16-bit, accumulated and reduced so (--grads-16bit)"
							: "fp32 main gradients");
	if (x->opts->zero3_rate_Bps > 0)
		d_row(d), d_td(d, "ZeRO-3 traffic"),
			d_td(d, "at most %.4g GB/s per GPU, an implementation's rate (--zero3-rate-GBps)",
			     x->opts->zero3_rate_Bps / 1e9);
	if (x->opts->zero3_module_gather)
		d_row(d), d_td(d, "ZeRO-3 gathers"),
			d_td(d, "each module's parameters on its own (--zero3-gather module)");
	d_row(d), d_td(d, "memory reserve"), d_td(d, "%.2f GiB per GPU", x->opts->mem_reserve_bytes / GIB);
	d_row(d), d_td(d, "layout constraints"), d_td(d, "%s%s", r->layout_arg ? "--layout " : "none",
						       usr(d, r->layout_arg ? r->layout_arg : ""));
	d_row(d), d_td(d, "figures"), d_td(d, "%s", r->cal_path ? "measured (calibration) where available" : "datasheet / published figures");
	d_row(d), d_td(d, "calibration"), d_td(d, "%s", r->cal_path ? usr(d, r->cal_path) : "none");
	d_row(d), d_td(d, "exec results"), d_td(d, "%s", r->exec_path ? usr(d, r->exec_path) : "none");
	{
		char counts[512];
		tpp_print_counts(counts, sizeof(counts), p, x->search);
		char limit[64];
		if (x->search->time_limit_s > 0)
			snprintf(limit, sizeof(limit), "at most %g s a search (--time-limit)",
				 x->search->time_limit_s);
		else
			tpp_strlcpy(limit, "no time limit (--time-limit 0)", sizeof(limit));
		d_row(d), d_td(d, "search"), d_td(d, "micro-batch up to %d, context parallelism up to %d, ranked by %s, the %d best reported (--top), %s: %s",
						   x->search->max_mbs, x->search->max_cp,
						   x->search->simulate ? "simulation" : "the analytic model (--analytic)",
						   x->search->top_k, limit, counts);
	}
	d_end_table(d);

	d_h(d, 3, "Where the figures come from");
	{
		static const char *const h[] = {"figure", "value", "origin"};
		d_table(d, h, 3);
	}
	d_row(d), d_td(d, "%s %s peak", usr(d, g->name), tpp_prec_names[prec]),
		d_td(d, "%.1f TFLOP/s", g->peak_flops[prec] / TPP_TFLOPS), d_td(d, "datasheet");
	d_row(d), d_td(d, "GEMM ceiling");
	{
		int q;
		double rate = tpp_gemm_measured(g, prec, &q);
		char at[96] = "";
		if (rate > 0) {
			if (g->gemm_shape[q][0] > 0)
				snprintf(at, sizeof(at), " at %.0fx%.0fx%.0f", g->gemm_shape[q][0],
					 g->gemm_shape[q][1], g->gemm_shape[q][2]);
			char burst[160] = "";
			if (g->gemm_burst_flops[q] > 0)
				snprintf(burst, sizeof(burst),
					 "; sustained rate estimated as the burst figure %.4g TFLOP/s x %.3f (median sustained / burst of 4 NVIDIA parts)",
					 g->gemm_burst_flops[q] / TPP_TFLOPS, TPP_SUSTAINED_OF_BURST);
			d_td(d, "%.4g TFLOP/s%s%s%s", rate / TPP_TFLOPS, q != (int)prec ? " (the " : "",
			     q != (int)prec ? tpp_prec_names[q] : "", q != (int)prec ? " figure)" : ""),
				d_td(d, "%s: %s%s%s", tpp_src_names[g->gemm_src[q]],
				     usr(d, g->gemm_src[q] == TPP_SRC_CALIBRATION ? c->calibration : g->gemm_source),
				     at, burst);
		} else {
			int q16;
			double frac = tpp_gemm_ceiling(g, prec, &q16);
			char burst[128] = "";
			if (q16 >= 0 && g->gemm_burst_flops[q16] > 0)
				snprintf(burst, sizeof(burst), " (its burst figure %.4g TFLOP/s x %.3f)",
					 g->gemm_burst_flops[q16] / TPP_TFLOPS, TPP_SUSTAINED_OF_BURST);
			if (q16 >= 0)
				d_td(d, "%.4g TFLOP/s (%.1f%% of peak)", frac * g->peak_flops[prec] / TPP_TFLOPS, 100 * frac),
					d_td(d, "assumed (no %s measurement): the %s figure's %.1f%% of peak%s x %.2f, the median fp8 / bf16 efficiency of 5 NVIDIA parts; that figure %s: %s",
					     tpp_prec_names[prec], tpp_prec_names[q16],
					     100 * g->gemm_flops[q16] / g->peak_flops[q16], burst, TPP_FP8_OF_16BIT_CEILING,
					     tpp_src_names[g->gemm_src[q16]],
					     usr(d, g->gemm_src[q16] == TPP_SRC_CALIBRATION ? c->calibration : g->gemm_source));
			else
				d_td(d, "%.0f%% of peak", 100 * TPP_GEMM_CEILING_DEFAULT),
					d_td(d, "assumed (no measurement)");
		}
	}
	d_row(d), d_td(d, "HBM"), d_td(d, "%.0f GB at %.2f TB/s", g->hbm_bytes / 1e9, g->hbm_Bps / 1e12),
		d_td(d, "datasheet");
	if (x->opts->gpu_speed_sigma > 0)
		d_row(d), d_td(d, "GPU speed spread (slowest of %d GPUs paces a step)", x->search->gpus),
			d_td(d, "sigma %.1f%%, compute x%.3f", 100 * x->opts->gpu_speed_sigma,
			     tpp_straggler_factor(x->opts, x->search->gpus)),
			d_td(d, "%s", x->opts->gpu_speed_sigma == TPP_GPU_SPEED_SIGMA_DEFAULT
					     ? "published: Sinha et al. SC22 (8% variation between identical GPUs)"
					     : "given: --gpu-variation");
	for (i = 0; i < c->ntiers; i++) {
		const struct tpp_tier *t = &c->tiers[i];
		d_row(d), d_td(d, "tier %s (%s), per GPU", usr(d, t->name), tpp_tier_kind_names[t->kind]),
			d_td(d, "%.1f GB/s", t->bw_Bps / 1e9);
		if (t->unverified[0])
			d_td(d, "UNVERIFIED: %s", usr(d, t->unverified));
		else
			d_td(d, "datasheet");
		for (k = 0; k < TPP_COLL__COUNT; k++)
			if (t->busbw_Bps[k] > 0 || t->curve_n[k] > 1) {
				double bw = t->busbw_Bps[k] > 0 ? t->busbw_Bps[k]
					  : t->curve_busbw_Bps[k][t->curve_n[k] - 1];
				d_row(d), d_td(d, "tier %s %s bus bandwidth", usr(d, t->name), tpp_coll_names[k]),
					d_td(d, "%.1f GB/s%s", bw / 1e9, t->curve_n[k] > 1 ? " + size curve" : ""),
					d_td(d, "%s: %s", tpp_src_names[t->busbw_src[k]], usr(d, t->measured_source));
			}
	}
	d_end_table(d);

	if (p->n_top)
		write_best(d, r, fg, tl_step_s, tl_events, have_timeline);
	else
		write_infeasible(d, r);

	/* 5. scaling */
	if (r->nscale) {
		d_h(d, 2, "Scaling");
		/* the scaling and sensitivity searches can land on ZeRO-3 across
		 * nodes even when the requested one does not (tpp_print_caution) */
		d_p(d, "The best layout found for each GPU count at the same global batch (%d sequences)%s.", x->search->gbs,
		    r->layout_arg ? " and --layout (its dp only at the requested count)" : "");
		figure(d, fg, FIG_SCALING, "Predicted throughput (tokens/s, log scale, against linear scaling from the requested count, or the smallest with a layout) and MFU of the best layout as the GPU count grows");
		{
			static const char *const h[] = {"GPUs", "step (s)", "tokens/s", "MFU", "best layout"};
			d_table(d, h, 5);
		}
		for (i = 0; i < r->nscale; i++) {
			const struct tpp_report_scale *s = &r->scale[i];
			d_row(d), d_td(d, "%d%s", s->gpus, s->gpus == x->search->gpus ? " (requested)" : "");
			if (s->ok)
				d_td(d, "%.*f", tpp_step_digits(s->step_s), s->step_s), d_td(d, "%.0f", s->tokens_per_s),
					d_td(d, "%.1f%%", 100 * s->mfu),
					d_td(d, "%s%s", s->layout, s->optimistic ? optimistic_mark(x->opts) : "");
			else
				d_td(d, "-"), d_td(d, "-"), d_td(d, "-"),
					d_td(d, "%s", s->stopped ? "search stopped by its time limit (--time-limit)"
						      : s->unmatched ? "no layout of this count matches --layout"
						      : "no layout fits");
		}
		d_end_table(d);
	}

	/* 6. sensitivity */
	if (r->nsens) {
		/* what the first tier spans: a node, or a larger NVLink
		 * domain (a GB200 NVL72 rack), beyond which the tiers scale */
		char dom[200]; /* a tier name (63), escaped at most twice as long */
		if (c->ntiers < 2 || c->tiers[0].span_gpus == c->gpus_per_node)
			tpp_strlcpy(dom, "node", sizeof(dom));
		else
			snprintf(dom, sizeof(dom), "%s domain (%d GPUs)", usr(d, c->tiers[0].name),
				 c->tiers[0].span_gpus);
		d_h(d, 2, "Sensitivity to the bandwidth beyond one %s", dom);
		if (c->ntiers < 2)
			d_note(d, "The cluster has a single network tier; scaling the tiers beyond the first changes nothing.");
		d_p(d, "Every tier beyond the first (datasheet bandwidth, measured bus bandwidths and their size curves) scaled by the factor, then the search rerun.");
		figure(d, fg, FIG_SENS, "Best step time if the bandwidth beyond the first tier halves or doubles");
		{
			static const char *const h[] = {"bandwidth beyond the first tier", "best step (s)", "change", "tokens/s", "best layout"};
			d_table(d, h, 5);
		}
		for (i = 0; i < r->nsens; i++) {
			const struct tpp_report_sens *s = &r->sens[i];
			d_row(d), d_td(d, "%gx", s->factor);
			if (s->ok)
				d_td(d, "%.*f", tpp_step_digits(s->step_s), s->step_s), d_td(d, "%+.1f%%", 100 * (s->step_s / best->step_s - 1)),
					d_td(d, "%.0f", s->tokens_per_s),
					d_td(d, "%s%s", s->layout, s->optimistic ? optimistic_mark(x->opts) : "");
			else
				d_td(d, "-"), d_td(d, "-"), d_td(d, "-"),
					d_td(d, "%s", s->stopped ? "search stopped by its time limit (--time-limit)" : "no layout fits");
		}
		d_end_table(d);
		{
			/* three equal rows need saying why */
			int same = r->nsens > 1;
			for (i = 0; i < r->nsens; i++)
				same &= r->sens[i].ok && fabs(r->sens[i].step_s / r->sens[0].step_s - 1) < 1e-9;
			if (same && c->ntiers >= 2)
				d_note(d, "The step does not change: the best layout at each bandwidth waits on no transfer beyond the first tier (its groups stay inside one %s, or what leaves it is hidden behind compute).",
				       dom);
		}
	}

	/* 7. calibration */
	if (r->cal) {
		const struct tpp_calibration *cal = r->cal;
		d_h(d, 2, "Calibration");
		d_p(d, "File %s: backend %s, %d ranks (%d per node), device %s, taken %s%s%s.", usr(d, r->cal_path),
		    usr(d, cal->backend), cal->ranks, cal->ranks_per_node, cal->device[0] ? usr(d, cal->device) : "-",
		    cal->created_utc[0] ? usr(d, cal->created_utc) : "-", cal->source[0] ? ", from " : "",
		    usr(d, cal->source));
		figure(d, fg, FIG_CAL, "Measured collective points and fitted latency-bandwidth curves per tier and collective");
		{
			static const char *const h[] = {"collective", "tier", "ranks", "points", "fit alpha (us)", "fit busbw (GB/s)", "held-out error"};
			d_table(d, h, (int)TPP_ARRAY_LEN(h));
		}
		for (i = 0; i < cal->ncoll; i++) {
			const struct tpp_cal_coll *t = &cal->coll[i];
			d_row(d), d_td(d, "%s", tpp_coll_names[t->op]),
				d_td(d, "%s", t->tier >= 0 && t->tier < c->ntiers ? usr(d, c->tiers[t->tier].name) : "?"),
				d_td(d, "%d%s", t->group, t->concurrent > 1 ? " (concurrent groups)" : ""),
				d_td(d, "%d", t->npoints);
			if (t->fit.valid)
				d_td(d, "%.2f +- %.2f", t->fit.alpha_s * 1e6, t->fit.alpha_err_s * 1e6),
					d_td(d, "%.1f +- %.1f", t->fit.busbw_Bps / 1e9, t->fit.busbw_err_Bps / 1e9),
					d_td(d, "%.1f%%", 100 * t->fit.mape_heldout);
			else
				d_td(d, "-"), d_td(d, "-"), d_td(d, "no fit (too few points)");
		}
		d_end_table(d);
		for (k = 0; k < TPP_PREC__COUNT; k++)
			if (cal->gemm[k].valid && cal->gemm[k].npoints)
				d_p(d, "GEMM %s: %d shapes measured, best %.3g TFLOP/s, %s.", tpp_prec_names[k],
				    cal->gemm[k].npoints, cal->gemm[k].best_flops_per_s / TPP_TFLOPS,
				    cal->gemm[k].settled_s > 0 ? "after settling the device at its sustained clock"
							       : "not settled (the rates may be boost-clock bursts, faster than training sustains)");
	}

	/* 8. exec */
	if (r->exec_path) {
		d_h(d, 2, "Measured vs predicted (tpplan exec)");
		d_p(d, "File %s: layout %s; model %s%s%s%s, predicted for cluster %s%s%s; time per step on the slowest rank.",
		    usr(d, r->exec_path), r->exec_layout[0] ? usr(d, r->exec_layout) : "?",
		    r->exec_model[0] ? usr(d, r->exec_model) : "(exec's own small shape)",
		    r->exec_shape[0] ? " (" : "", usr(d, r->exec_shape), r->exec_shape[0] ? ")" : "",
		    r->exec_cluster[0] ? usr(d, r->exec_cluster) : "?",
		    r->exec_calibration[0] ? " with the calibration " : "", usr(d, r->exec_calibration));
		if (r->exec_check == 0 && !isfinite(r->exec_check_err))
			d_p(d, "Warning: the run FAILED its numerics check: the sharded result differs from the unsharded reference (its largest relative error is not a finite number: a NaN or infinity in the result; tolerance %.3g), so these are timings of a wrong computation; fix the run before comparing them.",
			    r->exec_check_tol);
		else if (r->exec_check == 0)
			d_p(d, "Warning: the run FAILED its numerics check: the sharded result differs from the unsharded reference (largest relative error %.3g, tolerance %.3g), so these are timings of a wrong computation; fix the run before comparing them.",
			    r->exec_check_err, r->exec_check_tol);
		else if (r->exec_check == 1)
			d_p(d, "Numerics check passed: the sharded result matches the unsharded reference (largest relative error %.3g, tolerance %.3g).",
			    r->exec_check_err, r->exec_check_tol);
		else
			d_p(d, "The run's numerics were not checked against the unsharded reference.");
		for (i = 0; i < r->nexec_notes; i++)
			d_note(d, "exec: %s", usr(d, r->exec_notes[i]));
		/* results of another problem than the report's are shown all
		 * the same, but not silently */
		if ((r->exec_model[0] && strcmp(r->exec_model, x->model->name)) ||
		    (r->exec_cluster[0] && strcmp(r->exec_cluster, x->cluster->name)))
			d_p(d, "Note: these exec results are of %s on %s, not of this report's %s on %s; the run is a scaled-down check of the model's layer arithmetic, compared with its own prediction.",
			    r->exec_model[0] ? usr(d, r->exec_model) : "another model",
			    r->exec_cluster[0] ? usr(d, r->exec_cluster) : "another cluster",
			    usr(d, x->model->name), usr(d, x->cluster->name));
		figure(d, fg, FIG_EXEC, "Measured vs predicted time per phase (ms, log scale)");
		{
			static const char *const h[] = {"phase", "count", "measured (ms)", "predicted (ms)", "error"};
			d_table(d, h, 5);
		}
		for (i = 0; i < r->nphase; i++) {
			const struct tpp_report_phase *ph = &r->phase[i];
			d_row(d), d_td(d, "%s", usr(d, ph->name)), d_td(d, "%d", ph->count);
			/* measured_s null or absent: -1, not a time */
			if (ph->measured_s >= 0)
				d_td(d, "%.4g", ph->measured_s * 1e3);
			else
				d_td(d, "-");
			if (ph->predicted_s >= 0)
				d_td(d, "%.4g", ph->predicted_s * 1e3);
			else
				d_td(d, "-");
			if (ph->predicted_s >= 0 && ph->measured_s > 0)
				d_td(d, "%+.1f%%", 100 * (ph->predicted_s - ph->measured_s) / ph->measured_s);
			else
				d_td(d, "-");
		}
		d_end_table(d);
	}

	d_h(d, 2, "Files");
	for (i = 0, k = 0; i < FIG__COUNT; i++)
		k |= fg->wanted[i];
	d_p(d, "%s", any_drawn
	    ? "Each figure NAME.png was drawn by gnuplot from NAME.gp and NAME.dat in this directory; edit a script and run `gnuplot NAME.gp` here to restyle it."
	    : k ? "The gnuplot scripts NAME.gp and data NAME.dat are in this directory; run `gnuplot NAME.gp` here to draw a figure."
		: "This report has no figures: index.html and report.md are its only files.");
	d_p(d, "FLOP convention: %s", tpp_cost_flops_doc);
	if (d->kind == DOC_HTML)
		fputs("</body>\n</html>\n", d->f);
}

/*
 * Walk dir's leading paths ("a", "a/b", ..., dir) while they exist.  The
 * first that exists and is not a directory goes into in_way (PATH_LEN) and
 * 1 is returned; else 0, with the deepest that exists in deepest
 * (PATH_LEN; "/" or "." when none does: mkdir starts there).
 */
static int walk_dir(const char *dir, char *in_way, char *deepest)
{
	size_t i, n = strlen(dir), last = 0;
	struct stat st;
	tpp_strlcpy(deepest, dir[0] == '/' ? "/" : ".", PATH_LEN);
	if (n >= PATH_LEN)
		return 0;
	memcpy(in_way, dir, n + 1);
	for (i = 1; i <= n; i++)
		if (in_way[i] == '/' || in_way[i] == '\0') {
			char ch = in_way[i];
			in_way[i] = '\0';
			if (stat(in_way, &st))
				break; /* missing (or unreadable): mkdir says */
			if (!S_ISDIR(st.st_mode))
				return 1;
			last = i;
			in_way[i] = ch;
		}
	if (last) {
		memcpy(deepest, dir, last);
		deepest[last] = '\0';
	}
	return 0;
}

int tpp_report_check_dir(const char *dir)
{
	char f[PATH_LEN], top[PATH_LEN];
	if (!walk_dir(dir, f, top)) {
		/* the files must go in: said now, not after every search --
		 * into the directory when it exists, else into the deepest
		 * directory above it that does, where mkdir makes the rest */
		struct stat st;
		int made = !stat(dir, &st) && S_ISDIR(st.st_mode);
		if (access(made ? dir : top, W_OK | X_OK)) {
			if (made)
				fprintf(stderr, "tpplan: report: -o %s: cannot write into it: %s\n", dir,
					strerror(errno));
			else
				fprintf(stderr, "tpplan: report: -o %s: cannot create it in %s: %s\n", dir,
					top, strerror(errno));
			return TPP_E_SYSTEM;
		}
		return TPP_OK;
	}
	if (!strcmp(f, dir))
		fprintf(stderr, "tpplan: report: -o %s: exists and is not a directory\n", dir);
	else
		fprintf(stderr, "tpplan: report: -o %s: %s exists and is not a directory\n", dir, f);
	return TPP_E_SYSTEM;
}

static int check_outputs(const char *dir);

int tpp_report_make_dir(const char *dir)
{
	char buf[PATH_LEN];
	size_t i, n = strlen(dir);
	struct stat st;
	int rc;
	if ((rc = tpp_report_check_dir(dir)))
		return rc;
	if (n == 0 || n >= sizeof(buf)) {
		fprintf(stderr, "tpplan: report: -o: directory name too long\n");
		return TPP_E_SYSTEM;
	}
	memcpy(buf, dir, n + 1);
	for (i = 1; i <= n; i++)
		if (buf[i] == '/' || buf[i] == '\0') {
			char ch = buf[i];
			buf[i] = '\0';
			if (mkdir(buf, 0777) && errno != EEXIST)
				goto fail;
			buf[i] = ch;
		}
	if (stat(dir, &st))
		goto fail;
	if (S_ISDIR(st.st_mode))
		return check_outputs(dir);
	errno = ENOTDIR; /* made a file since the check */
fail:
	fprintf(stderr, "tpplan: report: cannot create directory %s: %s\n", dir, strerror(errno));
	return TPP_E_SYSTEM;
}

/*
 * The report's manifest, DIR/.tpplan-report: the figure files (NAME.dat,
 * NAME.gp, NAME.png) and gnuplot.log the last report into DIR wrote, one
 * name a line.  A report removes what the previous one wrote and it does
 * not write again (a figure it has no data for, a picture it did not
 * draw), so nothing stale sits beside it -- and nothing else: a file of
 * the same name that no report wrote (a directory that never held one, a
 * report from before the manifest) is left alone.
 */
#define MANIFEST ".tpplan-report"
static const char *const fig_ext[] = {"dat", "gp", "png"};

/* The i-th file a report may write into (or remove from) dir, into path
 * (PATH_LEN bytes): 1, 0 past the last, -1 when too long. */
static const char *const out_fixed[] = {"index.html", "report.md", MANIFEST, "gnuplot.log"};
#define N_OUTPUTS (TPP_ARRAY_LEN(out_fixed) + FIG__COUNT * TPP_ARRAY_LEN(fig_ext))
static int output_path(const char *dir, size_t i, char *path)
{
	int w;
	if (i >= N_OUTPUTS)
		return 0;
	if (i < TPP_ARRAY_LEN(out_fixed)) {
		w = snprintf(path, PATH_LEN, "%s/%s", dir, out_fixed[i]);
	} else {
		size_t j = i - TPP_ARRAY_LEN(out_fixed);
		w = snprintf(path, PATH_LEN, "%s/%s.%s", dir, fig_names[j / TPP_ARRAY_LEN(fig_ext)],
			     fig_ext[j % TPP_ARRAY_LEN(fig_ext)]);
	}
	return w < 0 || w >= PATH_LEN ? -1 : 1;
}

/* Every file a report may write into dir, checked as tpp_afile would
 * open it (a loop of links, a link that cannot be followed, a directory
 * in a file's place), so that it is said before the searches rather than
 * after half the files are written. */
static int check_outputs(const char *dir)
{
	char path[PATH_LEN];
	struct tpp_err err;
	size_t i;
	int rc = TPP_OK, k;
	for (i = 0; !rc && (k = output_path(dir, i, path)); i++) {
		if (k < 0) {
			fprintf(stderr, "tpplan: report: -o %s: path too long\n", dir);
			return TPP_E_SYSTEM;
		}
		if ((rc = tpp_afile_check(path, &err)))
			fprintf(stderr, "tpplan: report: %s\n", err.msg);
	}
	return rc == TPP_E_USAGE ? TPP_E_USAGE : rc ? TPP_E_SYSTEM : TPP_OK;
}

int tpp_report_check_inputs(const char *dir, const char *const *inputs, size_t n)
{
	char path[PATH_LEN];
	struct stat so, si;
	size_t i, j;
	int k;
	for (i = 0; (k = output_path(dir, i, path)); i++) {
		if (k < 0 || stat(path, &so) || !S_ISREG(so.st_mode))
			continue; /* too long: check_outputs says so */
		for (j = 0; j < n; j++)
			if (inputs[j] && *inputs[j] && !stat(inputs[j], &si) &&
			    si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
				fprintf(stderr, "tpplan: report: -o %s: %s is the input file %s, which "
					"the report would write over or remove; name another directory "
					"(or move the input)\n", dir, path, inputs[j]);
				return TPP_E_USAGE;
			}
	}
	return TPP_OK;
}

struct manifest {
	int fig[FIG__COUNT][3]; /* [figure][fig_ext] listed */
	int log;                /* gnuplot.log listed */
};

static void manifest_read(const char *dir, struct manifest *m)
{
	char path[PATH_LEN], line[256];
	FILE *f;
	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "%s/%s", dir, MANIFEST);
	if (tpp_not_regular(path) || !(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		size_t i, k;
		line[strcspn(line, "\r\n")] = '\0';
		if (!strcmp(line, "gnuplot.log"))
			m->log = 1;
		for (i = 0; i < FIG__COUNT; i++)
			for (k = 0; k < TPP_ARRAY_LEN(fig_ext); k++) {
				size_t n = strlen(fig_names[i]);
				if (!strncmp(line, fig_names[i], n) && line[n] == '.' &&
				    !strcmp(line + n + 1, fig_ext[k]))
					m->fig[i][k] = 1;
			}
	}
	fclose(f);
}

static int manifest_write(const char *dir, const struct figs *fg)
{
	struct afile a;
	char log[PATH_LEN];
	struct stat st;
	size_t i, k;
	int rc;
	if ((rc = af_open(&a, dir, MANIFEST)))
		return rc;
	fputs("# tpplan report: the figure files this report wrote.  A later `tpplan\n"
	      "# report` into this directory removes those of them it does not write\n"
	      "# again, and no other file.\n", a.f);
	for (i = 0; i < FIG__COUNT; i++)
		for (k = 0; k < TPP_ARRAY_LEN(fig_ext); k++)
			if (fg->wanted[i] && (k < 2 || fg->drawn[i]))
				fprintf(a.f, "%s.%s\n", fig_names[i], fig_ext[k]);
	snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
	if (fg->log_ours && !stat(log, &st))
		fputs("gnuplot.log\n", a.f);
	return af_close(&a);
}

int tpp_report_write(const char *dir, const struct tpp_report *r)
{
	struct manifest old;
	struct figs fg;
	struct afile a;
	struct doc d;
	char when[64], log[PATH_LEN];
	double tl_step = 0;
	size_t tl_events = 0;
	int rc, have_tl = 0, i;
	struct stat st;
	time_t now = time(NULL);
	struct tm tmv;

	memset(&fg, 0, sizeof(fg));
	fg.off = !r->plots;
	if ((rc = tpp_report_make_dir(dir)))
		return rc;
	manifest_read(dir, &old);
	if (gmtime_r(&now, &tmv))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tmv);
	else
		tpp_strlcpy(when, "?", sizeof(when));

	/* the best layouts' figures; none without a feasible layout */
	if (r->plan->n_top) {
		if ((rc = fig_breakdown(dir, r)) || (rc = fig_memory(dir, r)))
			return rc;
		fg.wanted[FIG_BREAKDOWN] = fg.wanted[FIG_MEMORY] = 1;
		rc = fig_timeline(dir, r, &tl_step, &tl_events);
		if (rc == TPP_E_SYSTEM)
			return rc;
		have_tl = fg.wanted[FIG_TIMELINE] = rc == TPP_OK;
	}
	for (i = 0; i < r->nscale; i++)
		fg.wanted[FIG_SCALING] |= r->scale[i].ok;
	if (fg.wanted[FIG_SCALING] && (rc = fig_scaling(dir, r)))
		return rc;
	if (r->nsens && (rc = fig_sens(dir, r)))
		return rc;
	fg.wanted[FIG_SENS] = r->nsens > 0;
	if (r->cal) {
		int idx[16];
		fg.wanted[FIG_CAL] = cal_tables(r->cal, idx, 16) > 0;
		if (fg.wanted[FIG_CAL] && (rc = fig_cal(dir, r)))
			return rc;
	}
	if (r->exec_path && r->nphase) {
		if ((rc = fig_exec(dir, r)))
			return rc;
		fg.wanted[FIG_EXEC] = 1;
	}

	if (r->plots) {
		if (!find_gnuplot(fg.gnuplot, sizeof(fg.gnuplot)))
			fprintf(stderr, "tpplan: report: warning: gnuplot not found in PATH; writing tables only (install gnuplot, e.g. Debian's gnuplot-nox)\n");
		snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
		/* the log of the previous report goes; one that no report
		 * wrote is appended to, never removed */
		fg.log_ours = old.log || stat(log, &st);
		if (old.log)
			remove(log);
		for (i = 0; fg.gnuplot[0] && i < FIG__COUNT; i++)
			if (fg.wanted[i]) {
				fg.drawn[i] = draw(&fg, dir, (enum fig)i);
				fg.failed |= !fg.drawn[i];
			}
		if (fg.log_ours && !fg.failed && stat(log, &st) == 0 && st.st_size == 0)
			remove(log);
	}

	/* what the previous report into this directory wrote (its
	 * manifest) and this one does not: a figure it has no data for (its
	 * .dat, .gp and .png), and a picture it did not draw (--no-plots, no
	 * gnuplot, or gnuplot failed), so that nothing stale sits beside the
	 * report; no other file */
	for (i = 0; i < FIG__COUNT; i++) {
		size_t k;
		for (k = 0; k < TPP_ARRAY_LEN(fig_ext); k++) {
			char path[PATH_LEN];
			int keep = fg.wanted[i] && (k < 2 || fg.drawn[i]);
			if (keep || !old.fig[i][k])
				continue;
			snprintf(path, sizeof(path), "%s/%s.%s", dir, fig_names[i], fig_ext[k]);
			if (remove(path) && errno != ENOENT)
				fprintf(stderr, "tpplan: report: warning: cannot remove the earlier %s: %s\n",
					path, strerror(errno));
		}
	}

	d.in_row = 0;
	d.col = 0;
	if ((rc = af_open(&a, dir, "index.html")))
		return rc;
	d.f = a.f;
	d.kind = DOC_HTML;
	write_doc(&d, r, &fg, tl_step, tl_events, have_tl, when);
	if ((rc = af_close(&a)) || (rc = af_open(&a, dir, "report.md")))
		return rc;
	d.f = a.f;
	d.kind = DOC_MD;
	d.in_row = 0;
	write_doc(&d, r, &fg, tl_step, tl_events, have_tl, when);
	if ((rc = af_close(&a)))
		return rc;
	return manifest_write(dir, &fg);
}

/* ---- exec results ------------------------------------------------------------ */

/* A number member of mapping o: 0 or in [least, max]; null or absent:
 * *x = dflt, 0 returned. */
static int exec_num(struct tpp_ydoc *d, yaml_node_t *o, const char *key,
		    double dflt, double least, double max, double *x,
		    struct tpp_err *err)
{
	yaml_node_t *v = tpp_y_map_get(d, o, key);
	*x = dflt;
	if (tpp_yj_null(v))
		return TPP_OK;
	if (!tpp_yj_num(v, x))
		return tpp_y_err(d, v, err, "\"%s\" must be a number", key);
	if (!(*x == 0 || (*x >= least && *x <= max)))
		return tpp_y_err(d, v, err, "\"%s\" = %s is out of range (0 or [%g, %g])",
				 key, tpp_y_text(v), least, max);
	return TPP_OK;
}

/* A string member of mapping o into buf: absent or null, ""; else a JSON
 * string on one line (it is printed in the report's text and tables). */
static int exec_text(struct tpp_ydoc *d, yaml_node_t *o, const char *key,
		     char *buf, size_t size, struct tpp_err *err)
{
	yaml_node_t *v = tpp_y_map_get(d, o, key);
	int rc;
	buf[0] = '\0';
	if (tpp_yj_null(v))
		return TPP_OK;
	if (!tpp_yj_str(v))
		return tpp_y_err(d, v, err, "\"%s\" must be a string", key);
	if ((rc = tpp_y_str(d, v, buf, size, err)))
		return rc;
	if (tpp_has_control_char(buf))
		return tpp_y_err(d, v, err, "\"%s\": must not contain control characters (newline, tab, line separators, bidi controls)",
				 key);
	return TPP_OK;
}

int tpp_report_read_exec(const char *path, struct tpp_report *r)
{
	struct tpp_ydoc d;
	struct tpp_err err;
	yaml_node_t *root, *phases, *v;
	int rc, i, n = 0;

	r->nphase = 0;
	r->exec_layout[0] = r->exec_model[0] = r->exec_cluster[0] = r->exec_shape[0] = '\0';
	r->exec_calibration[0] = '\0';
	if ((rc = tpp_cli_json_load(&d, "--exec", path, "tpplan.exec/v1")))
		return rc;
	root = tpp_ydoc_root(&d);
	/* what was run, to say it beside the report's problem (optional:
	 * older results lack them; when there, well-formed) */
	if ((rc = exec_text(&d, root, "layout_arg", r->exec_layout, sizeof(r->exec_layout), &err)) ||
	    (rc = exec_text(&d, root, "model", r->exec_model, sizeof(r->exec_model), &err)) ||
	    (rc = exec_text(&d, root, "cluster", r->exec_cluster, sizeof(r->exec_cluster), &err)) ||
	    (rc = exec_text(&d, root, "calibration", r->exec_calibration, sizeof(r->exec_calibration), &err)))
		goto out;
	/* its numerics check: timings of a run that failed it are of a
	 * wrong computation, which the report must say */
	r->exec_check = -1;
	r->exec_check_err = r->exec_check_tol = 0;
	{
		const char *st = tpp_yj_str(tpp_y_map_get(&d, root, "status"));
		yaml_node_t *ck = tpp_y_map_get(&d, root, "check");
		if (!tpp_yj_null(ck)) {
			yaml_node_t *pass = tpp_y_map_get(&d, ck, "pass");
			const char *pv = pass && pass->type == YAML_SCALAR_NODE &&
						 pass->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
					     ? tpp_y_text(pass) : "";
			static const char *const errs[] = {"err_output", "err_input_grad", "err_weight_grad"};
			if (ck->type != YAML_MAPPING_NODE || (strcmp(pv, "true") && strcmp(pv, "false"))) {
				rc = tpp_y_err(&d, ck, &err, "\"check\" must be an object with \"pass\": true or false");
				goto out;
			}
			r->exec_check = !strcmp(pv, "true");
			if ((rc = exec_num(&d, ck, "tolerance", 0, 1e-300, 1e300, &r->exec_check_tol, &err)))
				goto out;
			for (i = 0; i < 3; i++) {
				double e;
				/* null in a failed check: not finite (a NaN in
				 * the result; JSON has no inf) */
				if ((rc = exec_num(&d, ck, errs[i], r->exec_check ? 0 : INFINITY, 1e-300, 1e300, &e, &err)))
					goto out;
				r->exec_check_err = fmax(r->exec_check_err, e);
			}
		}
		if (st && !strcmp(st, "check_failed"))
			r->exec_check = 0;
	}
	/* exec's notes (what it ran differently, what is not predicted) */
	r->nexec_notes = 0;
	if (!tpp_yj_null(v = tpp_y_map_get(&d, root, "notes"))) {
		int nn;
		if ((rc = tpp_y_seq(&d, v, "\"notes\"", &nn, &err)))
			goto out;
		for (i = 0; i < nn; i++) {
			yaml_node_t *it = tpp_y_seq_item(&d, v, i);
			char *dst = r->exec_notes[r->nexec_notes];
			if (!tpp_yj_str(it)) {
				rc = tpp_y_err(&d, it, &err, "\"notes\": expected strings");
				goto out;
			}
			if (r->nexec_notes == (int)TPP_ARRAY_LEN(r->exec_notes))
				continue;
			tpp_strlcpy(dst, tpp_y_text(it), sizeof(r->exec_notes[0]));
			if (tpp_has_control_char(dst)) {
				rc = tpp_y_err(&d, it, &err, "\"notes\": must not contain control characters (newline, tab, line separators, bidi controls)");
				goto out;
			}
			r->nexec_notes++;
		}
	}
	if (!tpp_yj_null(v = tpp_y_map_get(&d, root, "shape"))) {
		static const char *const keys[] = {"hidden", "heads", "ffn", "seq", "layers"};
		double x[5];
		if (v->type != YAML_MAPPING_NODE) {
			rc = tpp_y_err(&d, v, &err, "\"shape\" must be an object");
			goto out;
		}
		int all = 1;
		for (i = 0; i < 5; i++) {
			yaml_node_t *k = tpp_y_map_get(&d, v, keys[i]);
			if (tpp_yj_null(k)) {
				all = 0; /* an older exec's shape: not shown */
				continue;
			}
			if (!tpp_yj_num(k, &x[i]) || x[i] != floor(x[i]) || x[i] < 1 ||
			    x[i] > (1 << 24)) {
				rc = tpp_y_err(&d, k, &err,
					       "\"shape\": \"%s\" must be a whole number in [1, %d]",
					       keys[i], 1 << 24);
				goto out;
			}
		}
		if (all)
			snprintf(r->exec_shape, sizeof(r->exec_shape),
				 "hidden %.0f, heads %.0f, ffn %.0f, seq %.0f, %.0f layers",
				 x[0], x[1], x[2], x[3], x[4]);
	}
	phases = tpp_y_map_get(&d, root, "phases");
	if (!phases) {
		rc = tpp_y_err(&d, root, &err, "--exec: no \"phases\"");
		goto out;
	}
	if ((rc = tpp_y_seq(&d, phases, "phases", &n, &err)))
		goto out;
	for (i = 0; i < n; i++) {
		yaml_node_t *ph_node = tpp_y_seq_item(&d, phases, i);
		struct tpp_report_phase *ph;
		double count;
		if (r->nphase >= TPP_REPORT_PHASE_MAX) {
			/* not cut short without a word */
			rc = tpp_y_err(&d, ph_node, &err,
				       "phases[%d]: more than %d phases (an exec result has one per phase of its step)",
				       i, TPP_REPORT_PHASE_MAX);
			goto out;
		}
		ph = &r->phase[r->nphase];
		if (ph_node->type != YAML_MAPPING_NODE) {
			rc = tpp_y_err(&d, ph_node, &err, "phases[%d]: expected an object", i);
			goto out;
		}
		v = tpp_y_map_get(&d, ph_node, "phase");
		if (!v) {
			rc = tpp_y_err(&d, ph_node, &err, "phases[%d]: no \"phase\"", i);
			goto out;
		}
		if ((rc = tpp_y_str(&d, v, ph->name, sizeof(ph->name), &err)))
			goto out;
		/* a tab or newline would split the phase's row of exec.dat
		 * and of the Markdown table */
		if (tpp_has_control_char(ph->name)) {
			rc = tpp_y_err(&d, v, &err, "phases[%d].phase: must not contain control characters (newline, tab, line separators, bidi controls)", i);
			goto out;
		}
		if ((rc = exec_num(&d, ph_node, "measured_s", -1, 1e-9, 1e6, &ph->measured_s, &err)) ||
		    (rc = exec_num(&d, ph_node, "predicted_s", -1, 1e-9, 1e6, &ph->predicted_s, &err)) ||
		    (rc = exec_num(&d, ph_node, "count", 0, 1, 1e9, &count, &err)))
			goto out;
		if (count != floor(count)) {
			v = tpp_y_map_get(&d, ph_node, "count");
			rc = tpp_y_err(&d, v, &err, "\"count\" = %s must be a whole number",
				       tpp_y_text(v));
			goto out;
		}
		ph->count = (int)count;
		if (ph->count > 0 || ph->measured_s > 0)
			r->nphase++;
	}
	if (!r->nphase) {
		rc = tpp_y_err(&d, phases, &err, "--exec: no phases with measured times");
		goto out;
	}
	rc = TPP_OK;
out:
	if (rc)
		tpp_err_print(stderr, &err);
	tpp_ydoc_free(&d);
	return rc;
}
