/*
 * print.c - human-readable plan tables with the reasoning, and the JSON
 * plan (schema "tpplan.plan/v1": fields are only ever added, never renamed
 * or removed, within v1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define GIB TPP_GiB

static const char *tier_name(const struct tpp_cluster *c, int ti)
{
	return ti >= 0 && ti < c->ntiers ? c->tiers[ti].name : "-";
}

/* "tp_comm +3.91 s, bubble +1.20 s": the parts that grew most vs best. */
void tpp_print_explain(const struct tpp_eval *alt, const struct tpp_eval *best,
		       char *buf, size_t size)
{
	int used[TPP_TIME_PARTS] = {0};
	size_t n = 0;
	int k;
	buf[0] = '\0';
	for (k = 0; k < 2; k++) {
		int i, arg = -1;
		double bestd = 0;
		for (i = 0; i < TPP_TIME_PARTS; i++) {
			double dlt = tpp_time_part(&alt->t, i) - tpp_time_part(&best->t, i);
			if (!used[i] && dlt > bestd) {
				bestd = dlt;
				arg = i;
			}
		}
		if (arg < 0 || bestd < 0.005 * best->step_s)
			break;
		used[arg] = 1;
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s +%.3g s",
				      k ? ", " : "", tpp_time_part_names[arg], bestd);
	}
	if (!buf[0])
		snprintf(buf, size, "no single part dominates");
}

/* mark: "*" after the step when the rows mix simulated and analytic steps
 * and this one is analytic (too long to simulate), else " " */
static void print_layout_row(FILE *f, int rank, const struct tpp_eval *e, const char *mark)
{
	const struct tpp_layout *l = &e->layout;
	char rc[24];
	/* block recompute: full:N, N layers of each model chunk */
	if (l->recompute == TPP_RECOMPUTE_FULL && l->recompute_layers > 0)
		snprintf(rc, sizeof(rc), "full:%d", l->recompute_layers);
	else
		snprintf(rc, sizeof(rc), "%s", tpp_recompute_names[l->recompute]);
	/* a step under a second keeps six decimals (0.004 hid differences) */
	fprintf(f, "%4d  %3d %3d %5d %3d %4d %3d %-11s %3s %-9s %4d %4d  %9.*f%s%11.0f %8.1f %6.1f%% %8.1f\n",
		rank, l->tp, l->pp, l->dp, l->cp, l->mbs, l->vp,
		tpp_sched_names[tpp_layout_sched(l)], l->tp_overlap ? "ovl" : l->sp ? "yes" : "no",
		rc, l->zero, e->microbatches,
		tpp_step_digits(e->step_s), e->step_s, mark, e->tokens_per_s, e->model_tflops_per_gpu,
		100.0 * e->mfu, e->mem.total_bytes / GIB);
}

int tpp_print_top_analytic(const struct tpp_plan *p)
{
	int i, n = 0;
	for (i = 0; i < p->n_top; i++)
		n += !p->top[i].simulated;
	return n;
}

/* What the table's short forms mean, for those it shows. */
static void print_legend(FILE *f, const struct tpp_plan *p)
{
	int i, ovl = 0, block = 0, zpp = 0;
	for (i = 0; i < p->n_top; i++) {
		const struct tpp_layout *l = &p->top[i].layout;
		ovl |= l->tp_overlap;
		block |= l->recompute == TPP_RECOMPUTE_FULL && l->recompute_layers > 0;
		zpp |= tpp_zero_pipelined(l);
	}
	if (ovl)
		fprintf(f, "  sp ovl: sequence parallel with TP communication overlapped with the GEMMs (layout tp_overlap=1)\n");
	if (block)
		fprintf(f, "  recompute full:N: full recompute of the first N layers of each model chunk only (layout recompute_layers=N)\n");
	if (zpp)
		fprintf(f, "  zero 2/3 with pp > 1: priced as PyTorch FSDP2 under torch.distributed.pipelining (TorchTitan): parameters gathered at a stage's first micro-batch and kept, gradients reduce-scattered once after its last backward\n");
}

static void print_header(FILE *f)
{
	fprintf(f, "rank   tp  pp    dp  cp  mbs  vp schedule    sp recompute zero    m    step(s)    tokens/s  TFLOP/s    MFU  mem(GiB)\n");
}

void tpp_print_eval_text(FILE *f, const struct tpp_plan_ctx *x,
			 const struct tpp_eval *e)
{
	const struct tpp_cluster *c = x->cluster;
	int i;
	/* in ms below a second, so that a short step keeps its digits */
	double u = e->step_s < 1.0 ? 1e3 : 1.0;
	const char *un = e->step_s < 1.0 ? "ms" : "s";
	fprintf(f, "  step time breakdown (%s per step, sums to %.3f %s):\n", un,
		e->step_s * u, un);
	for (i = 0; i < TPP_TIME_PARTS; i++)
		fprintf(f, "    %-10s %10.3f  %5.1f%%\n", tpp_time_part_names[i],
			tpp_time_part(&e->t, i) * u,
			100.0 * tpp_time_part(&e->t, i) / e->step_s);
	fprintf(f, "  per layer per micro-batch: forward %.3f ms, backward %.3f ms (incl. recompute and TP comm); slowest stage %.3f ms per micro-batch\n",
		e->layer_fwd_s * 1e3, e->layer_bwd_s * 1e3, e->stage_mb_s * 1e3);
	fprintf(f, "  groups: TP on %s, CP on %s, DP on %s, PP on %s\n",
		tier_name(c, e->tp_tier), tier_name(c, e->cp_tier),
		tier_name(c, e->dp_tier), tier_name(c, e->pp_tier));
	fprintf(f, "  memory per GPU (GiB, most-loaded stage): weights %.2f, grads %.2f, optimizer %.2f, activations %.2f, other %.2f, reserve %.2f = %.2f of %.2f%s\n",
		e->mem.weights_bytes / GIB, e->mem.grads_bytes / GIB,
		e->mem.optim_bytes / GIB, e->mem.act_bytes / GIB,
		e->mem.other_bytes / GIB, e->mem.reserve_bytes / GIB,
		e->mem.total_bytes / GIB, c->gpu.hbm_bytes / GIB,
		e->mem.at_optimizer_step ? "; the peak is the optimizer step (the 16-bit gradients' fp32 copy in optimizer, activations freed)" : "");
	fprintf(f, "  FLOPs: model %.4g, hardware %.4g per step; %.1f model / %.1f hardware TFLOP/s per GPU; MFU %.1f%%, HFU %.1f%%\n",
		e->model_flops_per_step, e->hw_flops_per_step,
		e->model_tflops_per_gpu, e->hw_tflops_per_gpu, 100 * e->mfu,
		100 * e->hfu);
}

/* gpus: the count the layouts run on (tp*pp*dp*cp, the --gpus asked;
 * the cluster is whole nodes and may hold more) */
static void print_sources(FILE *f, const struct tpp_cluster *c,
			  const struct tpp_cost_opts *o, int gpus)
{
	const struct tpp_gpu *g = &c->gpu;
	int i;
	fprintf(f, "figures used:\n");
	fprintf(f, "  %s %s peak %.1f TFLOP/s (datasheet)", g->name,
		tpp_prec_names[o->prec], g->peak_flops[o->prec] / TPP_TFLOPS);
	{
		int q;
		double rate = tpp_gemm_measured(g, o->prec, &q);
		if (rate > 0) {
			fprintf(f, "; GEMM ceiling %.4g TFLOP/s", rate / TPP_TFLOPS);
			if (q != (int)o->prec)
				fprintf(f, " (the %s figure)", tpp_prec_names[q]);
			if (g->gemm_shape[q][0] > 0)
				fprintf(f, " at %.0fx%.0fx%.0f", g->gemm_shape[q][0],
					g->gemm_shape[q][1], g->gemm_shape[q][2]);
			if (g->gemm_burst_flops[q] > 0)
				fprintf(f, " sustained, estimated: the burst figure %.4g x %.3f (sustained / burst, median of 4 NVIDIA parts measured both ways, cluster.h TPP_SUSTAINED_OF_BURST)",
					g->gemm_burst_flops[q] / TPP_TFLOPS, TPP_SUSTAINED_OF_BURST);
			fprintf(f, " (%s: %s)\n", tpp_src_names[g->gemm_src[q]],
				g->gemm_src[q] == TPP_SRC_CALIBRATION ? c->calibration : g->gemm_source);
		} else {
			int q16;
			double frac = tpp_gemm_ceiling(g, o->prec, &q16);
			char burst[128] = "";
			if (q16 >= 0 && g->gemm_burst_flops[q16] > 0)
				snprintf(burst, sizeof(burst), " (its burst figure %.4g TFLOP/s x %.3f, cluster.h TPP_SUSTAINED_OF_BURST)",
					 g->gemm_burst_flops[q16] / TPP_TFLOPS, TPP_SUSTAINED_OF_BURST);
			if (q16 >= 0)
				fprintf(f, "; GEMM ceiling: no %s measurement, %.4g TFLOP/s assumed: %.1f%% of peak, the %s figure's %.1f%%%s x %.2f (fp8 / bf16 efficiency, median of 5 NVIDIA parts, cost.h TPP_FP8_OF_16BIT_CEILING; that figure %s: %s)\n",
					tpp_prec_names[o->prec], frac * g->peak_flops[o->prec] / TPP_TFLOPS,
					100 * frac, tpp_prec_names[q16],
					100 * g->gemm_flops[q16] / g->peak_flops[q16], burst, TPP_FP8_OF_16BIT_CEILING,
					tpp_src_names[g->gemm_src[q16]],
					g->gemm_src[q16] == TPP_SRC_CALIBRATION ? c->calibration : g->gemm_source);
			else
				fprintf(f, "; GEMM ceiling: no measurement, %.0f%% of peak assumed\n",
					100 * TPP_GEMM_CEILING_DEFAULT);
		}
	}
	fprintf(f, "  HBM %.0f GB at %.2f TB/s (datasheet)\n", g->hbm_bytes / 1e9,
		g->hbm_Bps / 1e12);
	for (i = 0; i < c->ntiers; i++) {
		const struct tpp_tier *t = &c->tiers[i];
		int k, any = 0;
		if (t->unverified[0])
			fprintf(f, "  tier %s (%s): %.1f GB/s per GPU UNVERIFIED (%s)",
				t->name, tpp_tier_kind_names[t->kind], t->bw_Bps / 1e9,
				t->unverified);
		else
			fprintf(f, "  tier %s (%s): %.1f GB/s per GPU datasheet",
				t->name, tpp_tier_kind_names[t->kind], t->bw_Bps / 1e9);
		for (k = 0; k < TPP_COLL__COUNT; k++)
			if (t->busbw_Bps[k] > 0 || t->curve_n[k] > 1) {
				double bw = t->busbw_Bps[k] > 0 ? t->busbw_Bps[k]
					  : t->curve_busbw_Bps[k][t->curve_n[k] - 1];
				fprintf(f, "%s%s %.1f%s (%s)", any ? ", " : "; busbw GB/s: ",
					tpp_coll_names[k], bw / 1e9,
					t->curve_n[k] > 1 ? " + size curve" : "",
					tpp_src_names[t->busbw_src[k]]);
				any = 1;
			}
		if (any)
			fprintf(f, "\n      from %s\n", t->measured_source);
		else
			fprintf(f, "; no measurement: %.0f%% of %s assumed\n",
				100 * tpp_tier_default_eff(t), t->unverified[0] ? "it" : "datasheet");
	}
	if (o->gpu_speed_sigma > 0) {
		fprintf(f, "  GPU speed spread sigma %.1f%% of the median GPU (%s): ",
			100 * o->gpu_speed_sigma,
			o->gpu_speed_sigma == TPP_GPU_SPEED_SIGMA_DEFAULT ? "Sinha et al. SC22" : "--gpu-variation");
		if (gpus > 1)
			fprintf(f, "the slowest of %d GPUs paces each step, compute x%.3f\n", gpus,
				tpp_straggler_factor(o, gpus));
		else
			fputs("one GPU, no slower one to wait for, compute x1.000\n", f);
	}
	if (c->calibration[0])
		fprintf(f, "  calibration file: %s\n", c->calibration);
	else
		fprintf(f, "  no calibration file: datasheet and published figures only (run `tpplan calibrate` on this cluster)\n");
}

void tpp_print_gib_pair(char *buf, size_t size, double need_bytes,
			double have_bytes)
{
	int d = 1;
	char a[64], b[64];
	for (;;) {
		snprintf(a, sizeof(a), "%.*f", d, need_bytes / GIB);
		snprintf(b, sizeof(b), "%.*f", d, have_bytes / GIB);
		if (strcmp(a, b) || d >= 6 || need_bytes == have_bytes)
			break;
		d++;
	}
	snprintf(buf, size, "%s GiB of %s GiB", a, b);
}

void tpp_print_counts(char *buf, size_t size, const struct tpp_plan *p,
		      const struct tpp_search *s)
{
	snprintf(buf, size, "%llu layouts considered, %llu valid and fit in memory",
		 p->considered, p->feasible);
	if (!s->simulate) {
		tpp_appendf(buf, size, ", all ranked by the analytic model (--analytic)");
		return;
	}
	tpp_appendf(buf, size, ": %llu simulated", p->simulated);
	if (p->too_long)
		tpp_appendf(buf, size, ", %llu priced by the analytic model (too long to simulate)",
			    p->too_long);
	tpp_appendf(buf, size, ", %llu discarded because their lower bound exceeds the top %d",
		    p->pruned, s->top_k);
	if (p->simulated_picks)
		tpp_appendf(buf, size, "; %llu more simulated to find the best of each TP and PP degree",
			    p->simulated_picks);
}

/* "Rank 2 is", "Ranks 2 and 4 are", "Ranks 2 to 5 are", "Ranks 2, 4 to
 * 9 and 12 are": the ranks (1-based) of the n indices in idx, increasing,
 * runs of three or more as "a to b".  buf holds TPP_RANK_LIST bytes: every
 * rank of a top list fits (it was 96 bytes, and the sentence lost its
 * last ranks and its verb past rank 29). */
#define TPP_RANK_LIST (16 + 8 * TPP_TOP_MAX)
static void rank_list(char *buf, size_t size, const int *idx, int n)
{
	int lo[TPP_TOP_MAX], hi[TPP_TOP_MAX], items = 0, i, j;
	buf[0] = 0;
	if (n == 1) {
		snprintf(buf, size, "Rank %d is", idx[0] + 1);
		return;
	}
	/* the items: a rank, or a run of three or more */
	for (i = 0; i < n; i = j + 1) {
		for (j = i; j + 1 < n && idx[j + 1] == idx[j] + 1; j++)
			;
		if (j - i < 2)
			j = i;
		lo[items] = idx[i] + 1;
		hi[items++] = idx[j] + 1;
	}
	tpp_appendf(buf, size, "Ranks");
	for (i = 0; i < items; i++) {
		tpp_appendf(buf, size, "%s %d", i == 0 ? "" : i == items - 1 ? " and" : ",", lo[i]);
		if (hi[i] != lo[i])
			tpp_appendf(buf, size, " to %d", hi[i]);
	}
	tpp_appendf(buf, size, " are");
}

size_t tpp_print_ties(char *buf, size_t size, const struct tpp_plan *p)
{
	char ranks[TPP_RANK_LIST];
	int i, n = 0, w, idx[TPP_TOP_MAX];
	buf[0] = 0;
	if (p->n_top < 2)
		return 0;
	/* within the spread and not merely optimistic (tpp_plan_ties_best) */
	for (i = 1; i < p->n_top; i++)
		if (tpp_plan_ties_best(p, i))
			idx[n++] = i;
	if (n)
		rank_list(ranks, sizeof(ranks), idx, n);
	if (n)
		w = snprintf(buf, size, "%s within %.0f%% of the best: one configuration's measurements differ by up to ~%.0f%% (shared/validation/README.md), so treat %s as a tie and choose by memory headroom or simplicity.",
			     ranks, 100 * TPP_MEASURED_SPREAD, 100 * TPP_MEASURED_SPREAD,
			     n > 1 ? "them" : "it");
	else if (p->top[1].step_s <= p->top[0].step_s * (1 + TPP_MEASURED_SPREAD))
		/* within the spread, but optimistic: the caution names them */
		w = snprintf(buf, size, "No runner-up ties with the best: those within %.0f%% of it use ZeRO-3 across nodes, whose step the model predicts short (see the caution).",
			     100 * TPP_MEASURED_SPREAD);
	else
		w = snprintf(buf, size, "The best leads rank 2 by %.2f%%, more than the ~%.0f%% by which one configuration's measurements differ (shared/validation/README.md).",
			     100 * (p->top[1].step_s / p->top[0].step_s - 1),
			     100 * TPP_MEASURED_SPREAD);
	return w > 0 ? (size_t)w : 0;
}

size_t tpp_print_caution(char *buf, size_t size, const struct tpp_plan *p,
			 const struct tpp_cli_alt *alt, const struct tpp_cost_opts *o)
{
	static const char fsdp[] = "PyTorch FSDP runs on 64 A100 over 8 nodes (MosaicML, TorchTitan) " TPP_FSDP_NODES_RANGE " times the step predicted at NCCL's rates, Megatron FSDP runs on 128 GB200 over two NVL72 racks (NVIDIA) " TPP_MFSDP_NODES_RANGE " times (costmodel/README.md, Accuracy)";
	static const char head[] = "Caution: the best layout uses ZeRO-3 with its data-parallel group across nodes; ";
	char ranks[TPP_RANK_LIST] = "", why[1024];
	int i, n = 0, w;
	buf[0] = 0;
	if (!p->n_top)
		return 0;
	/* what the published runs say about the pricing this plan used: at
	 * NCCL's rates, or at an implementation's (--zero3-rate-GBps) */
	if (o && o->zero3_rate_Bps > 0)
		snprintf(why, sizeof(why), "ZeRO-3 traffic here moves at most %.4g GB/s per GPU (--zero3-rate-GBps); the published ZeRO-3 runs on 384-2240 GPUs (SC21 Table 2, DeepSpeed of 2021) took " TPP_DEEPSPEED_RATE_RANGE " times the step this model predicts at their implementation's %.4g GB/s, and %s",
			 o->zero3_rate_Bps / 1e9, TPP_DEEPSPEED_2021_ZERO3_BPS / 1e9, fsdp);
	else
		snprintf(why, sizeof(why), "the published ZeRO-3 runs on 384-2240 GPUs (SC21 Table 2, DeepSpeed of 2021) took " TPP_OPTIMISTIC_RANGE " times the step this model predicts at NCCL's rates, more so on more nodes (that DeepSpeed moved ZeRO-3 traffic at about %.4g GB/s per GPU: --zero3-rate-GBps %.4g prices it so), and %s",
			 TPP_DEEPSPEED_2021_ZERO3_BPS / 1e9, TPP_DEEPSPEED_2021_ZERO3_BPS / 1e9, fsdp);
	if (tpp_eval_optimistic(&p->top[0])) {
		char lb[200];
		double d;
		switch (alt ? alt->status : TPP_ALT_STOPPED) {
		case TPP_ALT_FOUND:
			tpp_layout_format(&alt->best.layout, lb, sizeof(lb));
			d = alt->best.step_s / p->top[0].step_s - 1;
			w = snprintf(buf, size, "%s%s, so treat its step time as optimistic.  The best layout without ZeRO-3 across nodes plans %.*f s, a %.1f%% %s step: --layout %s",
				     head, why, tpp_step_digits(alt->best.step_s), alt->best.step_s, 100 * fabs(d), d > 0 ? "longer" : "shorter", lb);
			break;
		case TPP_ALT_NONE_FITS:
			w = snprintf(buf, size, "%s%s, so treat its step time as optimistic.  No layout without ZeRO-3 across nodes fits with the fields given.",
				     head, why);
			break;
		default:
			w = snprintf(buf, size, "%s%s, so treat its step time as optimistic and compare with the best layout without ZeRO-3 (--layout zero=1; its search did not finish within --time-limit).",
				     head, why);
			break;
		}
		return w > 0 ? (size_t)w : 0;
	}
	for (i = 1; i < p->n_top; i++)
		if (tpp_eval_optimistic(&p->top[i])) {
			tpp_appendf(ranks, sizeof(ranks), "%s%d", n ? ", " : "", i + 1);
			n++;
		}
	if (!n)
		return 0;
	w = snprintf(buf, size, "Caution: rank%s %s use%s ZeRO-3 with the data-parallel group across nodes; %s, so %s no tie for the best.",
		     n > 1 ? "s" : "", ranks, n > 1 ? "" : "s", why, n > 1 ? "they are" : "it is");
	return w > 0 ? (size_t)w : 0;
}

/* A count of tokens the way --train-tokens takes it: 300B, 15T, 2.5M.
 * A unit is taken from where %.4g would round up to it (999.96B is 1T,
 * not 1000B); from 9999.5T up, whole T (12000T, not 1.2e+04T). */
static void fmt_tokens(char *buf, size_t size, double t)
{
	static const char units[] = "TBMK";
	static const double mult[] = {1e12, 1e9, 1e6, 1e3};
	int i;
	if (t >= 9999.5e12) {
		snprintf(buf, size, "%.0fT", t / 1e12);
		return;
	}
	for (i = 0; i < 4; i++)
		if (t >= mult[i] * 0.99995) {
			snprintf(buf, size, "%.4g%c", t / mult[i], units[i]);
			return;
		}
	snprintf(buf, size, "%.0f", t);
}

/* A duration in days from 2 days up, in hours from 1 hour, in seconds
 * from 1 s, else in milliseconds. */
static void fmt_duration(char *buf, size_t size, double s)
{
	double d = s / 86400, h = s / 3600;
	if (d >= 2)
		snprintf(buf, size, "%.*f days", d < 10 ? 2 : 1, d);
	else if (h >= 1)
		snprintf(buf, size, "%.*f hours", h < 10 ? 2 : 1, h);
	else if (s >= 1)
		snprintf(buf, size, "%.4g s", s);
	else
		snprintf(buf, size, "%.3g ms", s * 1e3);
}

/* GPU-hours: 3 significant digits below 100, whole hours from there (no
 * 1e+03), and "< 0.001" below a thousandth (no 5.33e-06). */
static void fmt_gpu_hours(char *buf, size_t size, double g)
{
	if (g >= 99.95)
		snprintf(buf, size, "%.0f", g);
	else if (g >= 0.001)
		snprintf(buf, size, "%.3g", g);
	else
		snprintf(buf, size, "< 0.001");
}

/* Whether the stated error of a plan whose best is e is the ZeRO-3 /
 * FSDP runs' (TPP_ACC_Z3_*): ZeRO-3 without pipelining, and not across
 * nodes the way the caution names (tpp_eval_optimistic), which those runs'
 * range does not cover. */
static int acc_zero3(const struct tpp_eval *e)
{
	return e && tpp_zero_per_microbatch(&e->layout) && (long long)e->layout.dp * e->layout.cp > 1 &&
	       !tpp_eval_optimistic(e);
}

/*
 * Training time at the predicted step: steps * step_s, the steps being
 * ceil(tokens / (global batch * sequence)) (tpp_cli_train_steps), and
 * GPU-hours = that time * GPUs / 3600 s.  The range is what the
 * published runs' error says of it: measured = predicted / (1 + error),
 * error from TPP_ACC_ERR_MIN to TPP_ACC_ERR_MAX (How sure).  Steps only:
 * what a run spends beside them (checkpoints, evaluation, restarts after
 * failures) is not modelled, so it is said.
 */
size_t tpp_print_training(char *buf, size_t size, const struct tpp_plan_ctx *x,
			  const struct tpp_plan *p)
{
	const struct tpp_eval *e;
	char tok[32], per[32], d0[32], d1[32], d2[32], gh[48];
	double wall;
	int w, gpus;
	buf[0] = 0;
	if (!x->train_steps || !p->n_top)
		return 0;
	e = &p->top[0];
	gpus = e->layout.tp * e->layout.pp * e->layout.dp * e->layout.cp;
	wall = (double)x->train_steps * e->step_s;
	fmt_tokens(tok, sizeof(tok), x->train_tokens);
	fmt_tokens(per, sizeof(per), (double)x->search->gbs * x->model->seq);
	fmt_duration(d0, sizeof(d0), wall);
	fmt_gpu_hours(gh, sizeof(gh), wall * gpus / 3600);
	w = snprintf(buf, size, "Training on %s token%s (--train-tokens): %lld step%s of %s tokens, %s on %d GPUs (%s GPU-hours) at the predicted step; ",
		     tok, x->train_tokens == 1 ? "" : "s", x->train_steps, x->train_steps == 1 ? "" : "s", per, d0, gpus, gh);
	if (w < 0 || (size_t)w >= size)
		return w > 0 ? size - 1 : 0;
	if (tpp_eval_optimistic(e)) {
		w += snprintf(buf + w, size - w, "the published runs' error range does not cover ZeRO-3 across nodes (see the caution)");
		if (x->no_zero3 && x->no_zero3->status == TPP_ALT_FOUND && w > 0 && (size_t)w < size) {
			double alt = (double)x->train_steps * x->no_zero3->best.step_s;
			fmt_duration(d0, sizeof(d0), alt);
			fmt_duration(d1, sizeof(d1), alt / (1 + TPP_ACC_ERR_MAX));
			fmt_duration(d2, sizeof(d2), alt / (1 + TPP_ACC_ERR_MIN));
			w += snprintf(buf + w, size - w, "; with the best layout without it, %s (%s to %s at that range)", d0, d1, d2);
		}
		if (w > 0 && (size_t)w < size)
			w += snprintf(buf + w, size - w, ".  ");
	} else {
		/* the range of the runs most like this plan (How sure): the
		 * ZeRO-3 / FSDP ones, else the FP8 ones, else all */
		double lo = TPP_ACC_ERR_MIN, hi = TPP_ACC_ERR_MAX;
		const char *of = "the published runs' error range";
		if (acc_zero3(e)) {
			lo = TPP_ACC_Z3_ERR_MIN;
			hi = TPP_ACC_Z3_ERR_MAX;
			of = "the error range of the published ZeRO-3 / FSDP runs";
		} else if (x->opts->prec == TPP_PREC_FP8) {
			lo = TPP_ACC_FP8_ERR_MIN;
			hi = TPP_ACC_FP8_ERR_MAX;
			of = "the error range of the published FP8 runs";
		}
		fmt_duration(d1, sizeof(d1), wall / (1 + hi));
		fmt_duration(d2, sizeof(d2), wall / (1 + lo));
		w += snprintf(buf + w, size - w, "%s to %s at %s (How sure).  ", d1, d2, of);
	}
	if (w < 0 || (size_t)w >= size)
		return w > 0 ? size - 1 : 0;
	w += snprintf(buf + w, size - w, "Steps alone: checkpoints, evaluation and restarts after failures add to it.");
	return w > 0 ? ((size_t)w < size ? (size_t)w : size - 1) : 0;
}

size_t tpp_print_accuracy(char *buf, size_t size, int calibrated,
			  const struct tpp_eval *best, enum tpp_prec prec)
{
	/* the words follow the signs, should the figures change */
#define ACC_PCT(e) fabs(100 * (e)), (e) < 0 ? "shorter" : "longer"
	int w = snprintf(buf, size, "How sure: on %d published runs (A100 to GB200; Megatron-LM, NeMo, Megatron-Bridge, MosaicML, Meta; leaving out the 12 ZeRO-3 runs across nodes, DeepSpeed's 6 on 384-2240 GPUs, PyTorch FSDP's 4 on 64 and Megatron FSDP's 2 on 128, which have their own caution) this model, without a calibration, predicted steps from %.0f%% %s to %.0f%% %s than measured, median %.0f%% %s (costmodel/README.md, Accuracy); %s",
			 TPP_ACC_RUNS, ACC_PCT(TPP_ACC_ERR_MIN), ACC_PCT(TPP_ACC_ERR_MAX),
			 ACC_PCT(TPP_ACC_ERR_MEDIAN),
			 calibrated ? "this plan's figures come in part from a calibration, whose effect on that error those runs do not measure."
				    : "`tpplan calibrate` replaces its datasheet figures with this cluster's.");
	if (acc_zero3(best) && w > 0 && (size_t)w < size)
		w += snprintf(buf + w, size - w, "  The %d of them with ZeRO-3 / FSDP and no pipelining, as the best layout here (NeMo's and Megatron-Bridge's FSDP and MosaicML's PyTorch FSDP; 8 to 64 GPUs in one node or NVLink domain), predicted from %.0f%% %s to %.0f%% %s, median %.0f%% %s.",
			      TPP_ACC_Z3_RUNS, ACC_PCT(TPP_ACC_Z3_ERR_MIN), ACC_PCT(TPP_ACC_Z3_ERR_MAX),
			      ACC_PCT(TPP_ACC_Z3_ERR_MEDIAN));
	if (prec == TPP_PREC_FP8 && w > 0 && (size_t)w < size)
		w += snprintf(buf + w, size - w, "  The %d of them in FP8, as this plan (NVIDIA's performance recipes: NeMo, Megatron-Bridge; H100 to GB200), predicted from %.0f%% %s to %.0f%% %s, median %.0f%% %s.",
			      TPP_ACC_FP8_RUNS, ACC_PCT(TPP_ACC_FP8_ERR_MIN), ACC_PCT(TPP_ACC_FP8_ERR_MAX),
			      ACC_PCT(TPP_ACC_FP8_ERR_MEDIAN));
#undef ACC_PCT
	return w > 0 ? ((size_t)w < size ? (size_t)w : size - 1) : 0;
}

/* How sure the ranking is: the ties, a caution where one applies, and
 * the model's error on published runs. */
static void print_how_sure(FILE *f, const struct tpp_plan_ctx *x, const struct tpp_plan *p)
{
	char buf[1536];
	if (tpp_print_ties(buf, sizeof(buf), p))
		fprintf(f, "  %s\n", buf);
	if (tpp_print_caution(buf, sizeof(buf), p, x->no_zero3, x->opts))
		fprintf(f, "  %s\n", buf);
	if (tpp_print_accuracy(buf, sizeof(buf), x->cluster->calibration[0] != 0,
			       p->n_top ? &p->top[0] : NULL, x->opts->prec))
		fprintf(f, "  %s\n", buf);
}

void tpp_print_infeasible(FILE *f, const struct tpp_plan *p, const struct tpp_search *s,
			  const struct tpp_cluster *c)
{
	char hint[160];
	int i;
	for (i = 1; i < TPP_REJ__COUNT; i++)
		if (p->rejected[i])
			fprintf(f, "  %llu layouts rejected: %s%s\n", p->rejected[i], tpp_reject_name(i),
				i == TPP_REJ_BATCH ? tpp_print_batch_hint(hint, sizeof(hint), s) : "");
	if (p->have_min_mem) {
		char lb[160], gib[160];
		tpp_layout_format(&p->min_mem.layout, lb, sizeof(lb));
		tpp_print_gib_pair(gib, sizeof(gib), p->min_mem.mem.total_bytes, c->gpu.hbm_bytes);
		fprintf(f, "  closest to fitting: %s needs %s per GPU\n", lb, gib);
	}
}

const char *tpp_print_batch_hint(char *buf, size_t size, const struct tpp_search *s)
{
	int a = (int)tpp_gcd(s->gbs, s->gpus);
	/* a limit only when the gcd is below the GPU count */
	if (a < s->gpus)
		snprintf(buf, size, " (dp divides both the global batch %d and the %d GPUs: at most their gcd, %d)",
			 s->gbs, s->gpus, a);
	else
		buf[0] = 0;
	return buf;
}

void tpp_print_plan_text(FILE *f, const struct tpp_plan_ctx *x,
			 const struct tpp_plan *p)
{
	char hint[160];
	const struct tpp_model *m = x->model;
	const struct tpp_cluster *c = x->cluster;
	const struct tpp_eval *best = &p->top[0];
	char why[256];
	int i;

	fprintf(f, "tpplan %s: %s%s%s%s on %s, ", tpp_version, m->name,
		m->desc[0] ? " (" : "", m->desc, m->desc[0] ? ")" : "", c->name);
	if (x->search->gpus < c->gpus_per_node)
		fprintf(f, "%d GPUs (part of one node of %d %s)\n", x->search->gpus,
			c->gpus_per_node, c->gpu.name);
	else
		fprintf(f, "%d GPUs (%d node%s x %d %s)\n", x->search->gpus, c->nodes,
			c->nodes == 1 ? "" : "s", c->gpus_per_node, c->gpu.name);
	fprintf(f, "global batch %d sequences x %d tokens, %s%s%s%s, attention %s\n",
		x->search->gbs, m->seq, tpp_prec_names[x->opts->prec],
		x->opts->prec == TPP_PREC_FP8 ? " (" : "",
		x->opts->prec == TPP_PREC_FP8 ? tpp_fp8_recipe_names[x->opts->fp8_recipe] : "",
		x->opts->prec == TPP_PREC_FP8 ? " scaling)" : "",
		tpp_attn_names[x->opts->attn]);
	print_sources(f, c, x->opts, x->search->gpus);
	{
		/* a search that simulates keeps the analytic step of a
		 * pipeline too long to play out (TPP_SIM_MAX_CELLS): such rows
		 * are marked when they sit among simulated ones */
		int n_an = tpp_print_top_analytic(p);
		fprintf(f, "\nbest layouts (step time %s; m = micro-batches per step):\n",
			n_an == 0 ? "simulated event by event"
			: n_an == p->n_top ? "from the analytic model"
			: "simulated event by event, where marked * from the analytic model: too long to simulate");
		print_header(f);
		for (i = 0; i < p->n_top; i++)
			print_layout_row(f, i + 1, &p->top[i],
					 n_an && n_an < p->n_top && !p->top[i].simulated ? "*" : " ");
	}
	print_legend(f, p);
	print_how_sure(f, x, p);
	if (x->fewer)
		tpp_cli_print_fewer(f, x->search, x->cluster, x->fewer, best);
	fprintf(f, "\nbest layout: ");
	{
		char lb[200];
		tpp_layout_format(&best->layout, lb, sizeof(lb));
		fprintf(f, "%s\n", lb);
	}
	tpp_print_eval_text(f, x, best);
	{
		char buf[768];
		if (tpp_print_training(buf, sizeof(buf), x, p))
			fprintf(f, "  %s\n", buf);
	}

	fprintf(f, "\nwhy the others lost:\n");
	{
		char buf[512];
		tpp_print_counts(buf, sizeof(buf), p, x->search);
		fprintf(f, "  %s\n", buf);
	}
	for (i = 1; i < TPP_REJ__COUNT; i++)
		if (p->rejected[i])
			fprintf(f, "  %llu rejected: %s%s\n", p->rejected[i],
				tpp_reject_name(i), i == TPP_REJ_BATCH ? tpp_print_batch_hint(hint, sizeof(hint), x->search) : "");
	{
		int an = 0;
		for (i = 0; i < p->n_best_tp; i++)
			an |= !p->best_tp[i].e.simulated;
		for (i = 0; i < p->n_best_pp; i++)
			an |= !p->best_pp[i].e.simulated;
		if (an && x->search->simulate)
			fprintf(f, "  (* analytic step: a pipeline too long to simulate)\n");
	}
	fprintf(f, "  best layout per tensor-parallel degree:\n");
	for (i = 0; i < p->n_best_tp; i++) {
		const struct tpp_eval *e = &p->best_tp[i].e;
		tpp_print_explain(e, best, why, sizeof(why));
		fprintf(f, "    tp=%-4d %9.*f s%s %+6.1f%%  TP group on %-12s %s\n",
			p->best_tp[i].degree, tpp_step_digits(e->step_s), e->step_s,
			x->search->simulate && !e->simulated ? "*" : " ", 100 * (e->step_s / best->step_s - 1),
			tier_name(c, e->tp_tier),
			e == best || e->step_s == best->step_s ? "(best)" : why);
	}
	fprintf(f, "  best layout per pipeline-parallel degree:\n");
	for (i = 0; i < p->n_best_pp; i++) {
		const struct tpp_eval *e = &p->best_pp[i].e;
		tpp_print_explain(e, best, why, sizeof(why));
		fprintf(f, "    pp=%-4d %9.*f s%s %+6.1f%%  %s\n", p->best_pp[i].degree,
			tpp_step_digits(e->step_s), e->step_s,
			x->search->simulate && !e->simulated ? "*" : " ",
			100 * (e->step_s / best->step_s - 1),
			e->step_s == best->step_s ? "(best)" : why);
	}
	if (p->degrees_cut)
		fprintf(f, "  (--time-limit came while these were refined: an entry may be more than %.0f%% above its degree's best, and degrees not reached are left out)\n",
			100 * TPP_DEGREE_TOL);
	fprintf(f, "\nFLOP convention: %s\n", tpp_cost_flops_doc);
}

/* A file's path as a JSON string, absolute so that a tool reading the
 * plan elsewhere (exec --plan from another directory) finds the same file;
 * as given when it cannot be resolved. */
static void json_path(FILE *f, const char *path)
{
	char *abs = path[0] ? realpath(path, NULL) : NULL;
	tpp_json_str(f, abs ? abs : path);
	free(abs);
}

int tpp_json_lines(FILE *f, const char *text, const char *strip, int first)
{
	size_t ns = strlen(strip);
	while (*text) {
		const char *e = strchr(text, '\n');
		size_t n = e ? (size_t)(e - text) : strlen(text);
		char line[1024];
		if (ns && n >= ns && !strncmp(text, strip, ns))
			snprintf(line, sizeof(line), "%.*s", (int)(n - ns), text + ns);
		else
			snprintf(line, sizeof(line), "%.*s", (int)n, text);
		if (line[0]) {
			fputs(first ? "" : ", ", f);
			tpp_json_str(f, line);
			first = 0;
		}
		text += e ? n + 1 : n;
	}
	return first;
}

/* A JSON string: quotes, backslashes and control characters escaped, and
 * every byte that is not part of valid UTF-8 written as U+FFFD (JSON is
 * UTF-8: a name read from a file in Latin-1, or cut mid-character, would
 * otherwise make the whole document unreadable). */
void tpp_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	while (s && *s) {
		unsigned char ch = (unsigned char)*s;
		int n = tpp_utf8_len(s);
		if (!n) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fwrite(s, 1, (size_t)n, f);
		s += n;
	}
	fputc('"', f);
}

void tpp_json_parts(FILE *f, const struct tpp_eval *e, const char *sep)
{
	int i;
	fputs("\"time_s\": {", f);
	for (i = 0; i < TPP_TIME_PARTS; i++)
		fprintf(f, "%s\"%s\": %.17g", i ? ", " : "", tpp_time_part_names[i],
			tpp_time_part(&e->t, i));
	fprintf(f, "}%s\"memory_bytes\": {\"weights\": %.17g, \"grads\": %.17g, \"optimizer\": %.17g, \"activations\": %.17g, \"other\": %.17g, \"reserve\": %.17g, \"total\": %.17g}",
		sep, e->mem.weights_bytes, e->mem.grads_bytes, e->mem.optim_bytes,
		e->mem.act_bytes, e->mem.other_bytes, e->mem.reserve_bytes,
		e->mem.total_bytes);
}

/* ties: "true" / "false" for a ranked layout (tpp_plan_ties_best), NULL
 * where it does not apply (the closest miss) */
static void json_eval(FILE *f, const struct tpp_eval *e, const char *ind,
		      const char *ties, long long train_steps)
{
	const struct tpp_layout *l = &e->layout;
	char lb[200], sep[64];
	tpp_layout_format(l, lb, sizeof(lb));
	fprintf(f, "%s{\"layout\": {\"tp\": %d, \"pp\": %d, \"dp\": %d, \"cp\": %d, \"mbs\": %d, \"vp\": %d, \"sp\": %s, \"recompute\": \"%s\", \"recompute_layers\": %d, \"zero\": %d, \"schedule\": \"%s\", \"tp_overlap\": %s, \"gbs\": %d},\n",
		ind, l->tp, l->pp, l->dp, l->cp, l->mbs, l->vp, l->sp ? "true" : "false",
		tpp_recompute_names[l->recompute],
		l->recompute == TPP_RECOMPUTE_FULL ? l->recompute_layers : 0, l->zero,
		tpp_sched_names[tpp_layout_sched(l)], l->tp_overlap ? "true" : "false", l->gbs);
	fprintf(f, "%s \"layout_arg\": ", ind);
	tpp_json_str(f, lb);
	fprintf(f, ",\n%s \"microbatches\": %d, \"step_s\": %.17g, \"tokens_per_s\": %.17g, \"model_tflops_per_gpu\": %.17g, \"hw_tflops_per_gpu\": %.17g, \"mfu\": %.17g, \"hfu\": %.17g,\n",
		ind, e->microbatches, e->step_s, e->tokens_per_s,
		e->model_tflops_per_gpu, e->hw_tflops_per_gpu, e->mfu, e->hfu);
	snprintf(sep, sizeof(sep), ",\n%s ", ind);
	fprintf(f, "%s ", ind);
	tpp_json_parts(f, e, sep);
	fputs(",\n", f);
	fprintf(f, "%s \"memory_peak_at\": \"%s\",\n", ind,
		e->mem.at_optimizer_step ? "optimizer_step" : "pipeline");
	fprintf(f, "%s \"fits\": %s, \"simulated\": %s, \"bound_s\": %.17g, \"tiers\": {\"tp\": %d, \"dp\": %d, \"pp\": %d, \"cp\": %d}, \"zero_pipelined\": %s",
		ind, e->fits ? "true" : "false", e->simulated ? "true" : "false",
		/* the bound holds up to the rounding of its other order of
		 * summation (1e-12, test_bound_sampled); as printed, a lower
		 * bound exactly */
		fmin(e->bound_s, e->step_s), e->tp_tier, e->dp_tier, e->pp_tier, e->cp_tier,
		tpp_zero_pipelined(l) ? "true" : "false");
	/* --train-tokens: the training's seconds and GPU-hours at this step
	 * (tpp_print_training) */
	if (train_steps > 0) {
		double wall = (double)train_steps * e->step_s;
		fprintf(f, ", \"train_s\": %.17g, \"train_gpu_hours\": %.17g", wall,
			wall * ((double)l->tp * l->pp * l->dp * l->cp) / 3600);
	} else {
		fputs(", \"train_s\": null, \"train_gpu_hours\": null", f);
	}
	if (ties)
		fprintf(f, ", \"ties_best\": %s", ties);
	fputc('}', f);
}

/* The best layout per degree: degree, simulated (or analytic) step and
 * the layout as --layout takes it. */
static void json_degrees(FILE *f, const struct tpp_degree_best *t, int n)
{
	char lb[200];
	int i;
	for (i = 0; i < n; i++) {
		tpp_layout_format(&t[i].e.layout, lb, sizeof(lb));
		fprintf(f, "%s{\"degree\": %d, \"step_s\": %.17g, \"simulated\": %s, \"layout_arg\": ",
			i ? ", " : "", t[i].degree, t[i].e.step_s, t[i].e.simulated ? "true" : "false");
		tpp_json_str(f, lb);
		fputc('}', f);
	}
}

void tpp_print_plan_json(FILE *f, const struct tpp_plan_ctx *x,
			 const struct tpp_plan *p, int status)
{
	const struct tpp_model *m = x->model;
	const struct tpp_cluster *c = x->cluster;
	int i, first;
	fprintf(f, "{\n  \"schema\": \"tpplan.plan/v1\",\n  \"tpplan_version\": ");
	tpp_json_str(f, tpp_version);
	fprintf(f, ",\n  \"status\": \"%s\",\n", status == TPP_OK ? "ok" :
		p->timed_out ? "time_limit" :
		status == TPP_E_INFEASIBLE ? "infeasible" : "error");
	fprintf(f, "  \"model\": {\"name\": ");
	tpp_json_str(f, m->name);
	fprintf(f, ", \"layers\": %d, \"hidden\": %d, \"heads\": %d, \"kv_heads\": %d, \"head_dim\": %d, \"ffn\": %d, \"mlp\": \"%s\", \"vocab\": %d, \"seq\": %d},\n",
		m->layers, m->hidden, m->heads, m->kv_heads, m->head_dim, m->ffn,
		tpp_mlp_names[m->mlp], m->vocab, m->seq);
	fprintf(f, "  \"cluster\": {\"name\": ");
	tpp_json_str(f, c->name);
	fprintf(f, ", \"path\": ");
	json_path(f, c->path);
	fprintf(f, ", \"gpu\": ");
	tpp_json_str(f, c->gpu.name);
	fprintf(f, ", \"gpus\": %d, \"gpus_per_node\": %d, \"calibration\": ",
		x->search->gpus, c->gpus_per_node);
	if (c->calibration[0])
		json_path(f, c->calibration);
	else
		fputs("null", f);
	fprintf(f, "},\n  \"global_batch\": %d,\n  \"precision\": \"%s\",\n  \"fp8_recipe\": ",
		x->search->gbs, tpp_prec_names[x->opts->prec]);
	if (x->opts->prec == TPP_PREC_FP8)
		fprintf(f, "\"%s\"", tpp_fp8_recipe_names[x->opts->fp8_recipe]);
	else
		fputs("null", f);
	fprintf(f, ",\n  \"attention\": \"%s\",\n", tpp_attn_names[x->opts->attn]);
	/* what the flags set, so a plan read later says what it assumed
	 * (--no-dp-overlap, --no-p2p-overlap, --p2p-scatter-gather,
	 * --grads-16bit, --zero3-rate-GBps (null: none), --zero3-gather,
	 * --mem-reserve-gib,
	 * --max-mbs, --max-cp, --analytic, --time-limit) */
	fprintf(f, "  \"options\": {\"dp_overlap\": %s, \"p2p_overlap\": %s, \"p2p_scatter_gather\": %s, \"grads_16bit\": %s, \"zero3_rate_GBps\": ",
		x->opts->dp_overlap ? "true" : "false", x->opts->p2p_overlap ? "true" : "false",
		x->opts->p2p_scatter_gather ? "true" : "false",
		x->opts->grads16 ? "true" : "false");
	if (x->opts->zero3_rate_Bps > 0)
		fprintf(f, "%.17g", x->opts->zero3_rate_Bps / 1e9);
	else
		fputs("null", f);
	fprintf(f, ", \"zero3_gather\": \"%s\"", x->opts->zero3_module_gather ? "module" : "layer");
	fprintf(f, ", \"mem_reserve_gib\": %.17g, \"max_mbs\": %d, \"max_cp\": %d, \"simulate\": %s, \"time_limit_s\": %.17g},\n",
		x->opts->mem_reserve_bytes / TPP_GiB, x->search->max_mbs, x->search->max_cp,
		x->search->simulate ? "true" : "false",
		x->search->time_limit_s > 0 ? x->search->time_limit_s : 0);
	fprintf(f, "  \"gpu_speed_sigma\": %.17g,\n  \"straggler_factor\": %.17g,\n",
		x->opts->gpu_speed_sigma,
		tpp_straggler_factor(x->opts, x->search->gpus));
	fprintf(f, "  \"flops_convention\": ");
	tpp_json_str(f, tpp_cost_flops_doc);
	fprintf(f, ",\n  \"measured_spread\": %.17g", TPP_MEASURED_SPREAD);
	{
		char buf[1536];
		fprintf(f, ",\n  \"cautions\": [");
		if (tpp_print_caution(buf, sizeof(buf), p, x->no_zero3, x->opts))
			tpp_json_str(f, buf);
		fputc(']', f);
	}
	/* what applying the calibration warned about, a line each */
	fprintf(f, ",\n  \"warnings\": [");
	tpp_json_lines(f, tpp_cli_cal_warnings(), "", 1);
	fputc(']', f);
	fprintf(f, ",\n  \"accuracy\": {\"published_runs\": %d, \"error_min\": %.4f, \"error_median\": %.4f, \"error_max\": %.4f, \"zero3\": {\"published_runs\": %d, \"error_min\": %.4f, \"error_median\": %.4f, \"error_max\": %.4f, \"applies\": %s}, \"fp8\": {\"published_runs\": %d, \"error_min\": %.4f, \"error_median\": %.4f, \"error_max\": %.4f, \"applies\": %s}}",
		TPP_ACC_RUNS, TPP_ACC_ERR_MIN, TPP_ACC_ERR_MEDIAN, TPP_ACC_ERR_MAX,
		TPP_ACC_Z3_RUNS, TPP_ACC_Z3_ERR_MIN, TPP_ACC_Z3_ERR_MEDIAN, TPP_ACC_Z3_ERR_MAX,
		acc_zero3(p->n_top ? &p->top[0] : NULL) ? "true" : "false",
		TPP_ACC_FP8_RUNS, TPP_ACC_FP8_ERR_MIN, TPP_ACC_FP8_ERR_MEDIAN, TPP_ACC_FP8_ERR_MAX,
		x->opts->prec == TPP_PREC_FP8 ? "true" : "false");
	/* --train-tokens: what the layouts' train_s and train_gpu_hours count */
	if (x->train_steps > 0)
		fprintf(f, ",\n  \"train\": {\"tokens\": %.17g, \"tokens_per_step\": %lld, \"steps\": %lld}",
			x->train_tokens, (long long)x->search->gbs * x->model->seq, x->train_steps);
	else
		fprintf(f, ",\n  \"train\": null");
	fprintf(f, ",\n  \"considered\": %llu,\n  \"feasible\": %llu,\n  \"simulated\": %llu,\n  \"too_long_to_simulate\": %llu,\n  \"pruned_by_bound\": %llu,\n  \"simulated_best_per_degree\": %llu,\n  \"rejected\": {",
		p->considered, p->feasible, p->simulated, p->too_long, p->pruned,
		p->simulated_picks);
	for (i = 1, first = 1; i < TPP_REJ__COUNT; i++) {
		fprintf(f, "%s", first ? "" : ", ");
		tpp_json_str(f, tpp_reject_name(i));
		fprintf(f, ": %llu", p->rejected[i]);
		first = 0;
	}
	fprintf(f, "},\n  \"rejected_by_code\": {");
	for (i = 1; i < TPP_REJ__COUNT; i++)
		fprintf(f, "%s\"%s\": %llu", i > 1 ? ", " : "", tpp_reject_code(i), p->rejected[i]);
	fprintf(f, "},\n  \"best_per_degree\": {\"tp\": [");
	json_degrees(f, p->best_tp, p->n_best_tp);
	fprintf(f, "], \"pp\": [");
	json_degrees(f, p->best_pp, p->n_best_pp);
	/* a search its time limit stopped refined no table and ran no
	 * follow-up: none of them is complete */
	fprintf(f, "]},\n  \"best_per_degree_complete\": %s,\n  \"layouts\": [\n",
		p->degrees_cut || p->timed_out ? "false" : "true");
	for (i = 0; i < p->n_top; i++) {
		json_eval(f, &p->top[i], "    ",
			  tpp_plan_ties_best(p, i) ? "true" : "false", x->train_steps);
		fprintf(f, "%s\n", i + 1 < p->n_top ? "," : "");
	}
	fprintf(f, "  ],\n  \"fewer_gpus\": ");
	if (x->fewer && x->fewer->gpus > 0) {
		fprintf(f, "{\n    \"gpus\": %d,\n    \"tie\": %s,\n    \"best\":\n", x->fewer->gpus,
			x->fewer->tie ? "true" : "false");
		json_eval(f, &x->fewer->best, "      ", NULL, x->train_steps);
		fprintf(f, "\n  }");
	} else {
		fputs("null", f);
	}
	fprintf(f, ",\n  \"best_without_zero3\":");
	if (x->no_zero3 && x->no_zero3->status == TPP_ALT_FOUND) {
		fputc('\n', f);
		json_eval(f, &x->no_zero3->best, "    ", NULL, x->train_steps);
	} else {
		fputs(" null", f);
	}
	fprintf(f, ",\n  \"best_without_zero3_search\": \"%s\"",
		tpp_cli_alt_status_names[x->no_zero3 ? x->no_zero3->status
				       : p->timed_out ? TPP_ALT_STOPPED : TPP_ALT_NOT_NEEDED]);
	fprintf(f, ",\n  \"fewer_gpus_searched\": [");
	for (i = 0; x->fewer && i < x->fewer->n_searched; i++)
		fprintf(f, "%s%d", i ? ", " : "", x->fewer->searched[i]);
	fprintf(f, "],\n  \"fewer_gpus_complete\": %s",
		p->timed_out ? "false" : !x->fewer || x->fewer->complete ? "true" : "false");
	fprintf(f, ",\n  \"closest_miss\": ");
	if (p->have_min_mem && status == TPP_E_INFEASIBLE && !p->timed_out)
		json_eval(f, &p->min_mem, "    ", NULL, 0);
	else
		fputs("null", f);
	/* with no feasible layout, the GPUs it would take */
	fprintf(f, ",\n  \"more_gpus\": ");
	if (x->more) {
		fprintf(f, "{\n    \"gpus\": ");
		if (x->more->gpus > 0)
			fprintf(f, "%d", x->more->gpus);
		else
			fputs("null", f);
		fprintf(f, ",\n    \"searched_up_to_gpus\": %d,\n    \"best\":", x->more->searched_up_to);
		if (x->more->gpus > 0) {
			fputc('\n', f);
			json_eval(f, &x->more->best, "      ", NULL, x->train_steps);
		} else {
			fputs(" null", f);
		}
		fprintf(f, "\n  }");
	} else {
		fputs("null", f);
	}
	fprintf(f, "\n}\n");
}
