/*
 * cost.c - analytic step-time and memory model for one layout.
 *
 * Where it sits: planner/search enumerates layouts and calls tpp_cost_eval
 * for each; the CLI prints the result.  Pure C, no allocation.
 *
 * Sources (section numbers refer to ../shared/reference/):
 *   FLOPs          costmodel.md 1.1, 1.5 (PaLM/SC21 model-FLOPs convention)
 *   GEMM time      calibration.md 4.5, 5.2: roofline with wave quantization,
 *                  ceiling = the measured rate sustained at the power limit
 *                  (MSMF, ml-engineering) when the cluster has it
 *   element-wise   roofline on HBM bandwidth; bytes from Korthikanti et al.
 *                  2022 Table 2 store sizes (costmodel.md 3.3)
 *   collectives    calibration.md 1.6 (nccl-tests bus-bandwidth factors),
 *                  3.3 (ring, hierarchical composition), 4.2
 *   pipeline       costmodel.md 4.1 (1F1B / interleaved bubble), 2.3 (P2P,
 *                  scatter/gather optimisation)
 *   data parallel  costmodel.md 2.4 (DDP, ZeRO-1/2/3 volumes), 5.1 (overlap)
 *   memory         costmodel.md 3.1-3.5 (Megatron bytes/param, Korthikanti
 *                  activations, in-flight micro-batches, logits)
 */
#include "cost.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

const char *const tpp_recompute_names[TPP_RECOMPUTE__COUNT] = {
	[TPP_RECOMPUTE_NONE] = "none",
	[TPP_RECOMPUTE_SELECTIVE] = "selective",
	[TPP_RECOMPUTE_FULL] = "full",
};

const char *const tpp_sched_names[TPP_SCHED__COUNT] = {
	[TPP_SCHED_1F1B] = "1f1b",
	[TPP_SCHED_INTERLEAVED] = "interleaved",
	[TPP_SCHED_ZB_H1] = "zb-h1",
};

const char *const tpp_fp8_recipe_names[TPP_FP8__COUNT] = {
	[TPP_FP8_CURRENT] = "current",
	[TPP_FP8_DELAYED] = "delayed",
};

const char *const tpp_attn_names[TPP_ATTN__COUNT] = {
	[TPP_ATTN_UNFUSED] = "unfused",
	[TPP_ATTN_FLASH] = "flash",
};

const char *const tpp_time_part_names[TPP_TIME_PARTS] = {
	"compute", "recompute", "tp_comm", "cp_comm",
	"pp_p2p", "bubble", "dp_comm", "optimizer",
};

const char tpp_cost_flops_doc[] =
	"model FLOPs = tokens * (6 * N_matmul + 12 * L * q_dim * s) "
	"(PaLM App. B / SC21 Eq. 3 without recompute; attention counted "
	"non-causal; N_matmul includes the LM head, not the embedding lookup); "
	"hardware FLOPs add what recomputation executes, counted alike";

double tpp_time_part(const struct tpp_time_breakdown *t, int i)
{
	switch (i) {
	case 0: return t->compute_s;
	case 1: return t->recompute_s;
	case 2: return t->tp_comm_s;
	case 3: return t->cp_comm_s;
	case 4: return t->pp_p2p_s;
	case 5: return t->bubble_s;
	case 6: return t->dp_comm_s;
	case 7: return t->optimizer_s;
	default: TPP_ASSERT(0);
	}
	return 0;
}

void tpp_cost_opts_default(struct tpp_cost_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->prec = TPP_PREC_BF16;
	/* fused attention kernels: Megatron-Core's attention_backend auto
	 * (Transformer Engine's flash / cuDNN fused attention) */
	o->attn = TPP_ATTN_FLASH;
	o->fp8_recipe = TPP_FP8_CURRENT;
	/* costmodel.md 3.6: practitioners reserve about 2-5 GB per GPU for
	 * the CUDA context, NCCL buffers, cuBLAS workspaces and
	 * fragmentation (an unsourced rule of thumb; tunable). */
	o->mem_reserve_bytes = 3.0 * TPP_GiB;
	/* costmodel.md 3.3/3.7: Megatron's estimator multiplies activations
	 * by 1.05 for temporaries. */
	o->act_temp_factor = 1.05;
	o->dp_overlap = 1;
	o->p2p_overlap = 1;
	o->gpu_speed_sigma = TPP_GPU_SPEED_SIGMA_DEFAULT; /* see tpp_straggler_factor */
}

void tpp_cost_opts_megatron(struct tpp_cost_opts *o)
{
	tpp_cost_opts_default(o);
	o->dp_overlap = 0;
	o->p2p_overlap = 0;
}

int tpp_p2p_blocking(const struct tpp_cost_opts *o, const struct tpp_layout *l)
{
	/* Megatron overlaps transfers only in the interleaved schedule
	 * (overlap_p2p_comm; without VPP batch_p2p_comm is used, costmodel.md
	 * 5.1); zero-bubble schedules post them asynchronously. */
	return !(o->p2p_overlap && (l->vp > 1 || l->zb));
}

enum tpp_sched tpp_layout_sched(const struct tpp_layout *l)
{
	if (l->zb)
		return TPP_SCHED_ZB_H1;
	return l->vp > 1 ? TPP_SCHED_INTERLEAVED : TPP_SCHED_1F1B;
}

int tpp_layout_microbatches(const struct tpp_layout *l)
{
	long long per = (long long)l->dp * l->mbs;
	return per > 0 ? (int)(l->gbs / per) : 0;
}

int tpp_zero_per_microbatch(const struct tpp_layout *l)
{
	return l->zero == 3 && l->pp == 1;
}

/*
 * A ZeRO-3 (pp = 1) gather or reduce-scatter of `bytes` (the gathered /
 * reduced size) over n ranks: NCCL's time, or bytes / o->zero3_rate_Bps
 * where an implementation moves them slower (TPP_DEEPSPEED_2021_ZERO3_BPS).
 */
static double zero3_coll_time(const struct tpp_cluster *c, const struct tpp_cost_opts *o,
			      enum tpp_coll k, double bytes, int n, int stride)
{
	double t = tpp_coll_time(c, k, bytes, n, stride);
	if (o->zero3_rate_Bps > 0 && bytes / o->zero3_rate_Bps > t)
		t = bytes / o->zero3_rate_Bps;
	return t;
}

/*
 * Sources: TorchTitan's apply_fsdp ("reshard_after_forward = not
 * pp_enabled" under its default policy: "For PP, do not reshard after
 * forward to avoid per-microbatch all-gathers"), and PyTorch's
 * torch/distributed/pipelining/stage.py backward_maybe_with_nosync, which
 * for an FSDP2 stage sets set_reshard_after_backward(False) and
 * set_requires_gradient_sync(False) for every backward and runs the FSDP
 * post-backward (the reduce-scatters) only after the last one.
 */
int tpp_zero_pipelined(const struct tpp_layout *l)
{
	/* with one data-parallel rank there is nothing to shard (TorchTitan
	 * applies FSDP only over a data-parallel mesh of more than one) */
	return l->zero >= 2 && l->pp > 1 && (long long)l->dp * l->cp > 1;
}

int tpp_fp8_params(const struct tpp_cost_opts *o, const struct tpp_layout *l)
{
	return o->prec == TPP_PREC_FP8 && l->zero >= 1 && !tpp_zero_pipelined(l);
}

void tpp_layout_format(const struct tpp_layout *l, char *buf, size_t size)
{
	snprintf(buf, size,
		 "tp=%d,pp=%d,dp=%d,cp=%d,mbs=%d,vp=%d,sp=%d,recompute=%s,zero=%d,schedule=%s,tp_overlap=%d",
		 l->tp, l->pp, l->dp, l->cp, l->mbs, l->vp, l->sp,
		 tpp_recompute_names[l->recompute], l->zero,
		 tpp_sched_names[tpp_layout_sched(l)], l->tp_overlap);
	/* block recompute only: every existing layout keeps its string */
	if (l->recompute == TPP_RECOMPUTE_FULL && l->recompute_layers > 0) {
		size_t n = strlen(buf);
		if (n < size)
			snprintf(buf + n, size - n, ",recompute_layers=%d", l->recompute_layers);
	}
}

int tpp_vocab_padded(const struct tpp_model *m, int tp)
{
	/* Megatron --make-vocab-size-divisible-by 128, times TP (costmodel.md 8). */
	long long mult = 128LL * (tp > 0 ? tp : 1);
	return (int)(((long long)m->vocab + mult - 1) / mult * mult);
}

/* ------------------------------------------------------------------------ */
/* Hardware primitives                                                       */

/* Fraction of compute throughput communication kernels take while they
 * overlap it: Calculon's processor_usage, 0.15 for collectives inside the
 * scale-up fabric (NVLink), 0.02 over the network (IB) (calibration.md
 * 4.4, 8). */
#define TPP_OVERLAP_SM_SHARE 0.15
#define TPP_OVERLAP_SM_SHARE_NET 0.02

/* The share for a collective on tier t. */
static double overlap_share(const struct tpp_tier *t)
{
	switch (t->kind) {
	case TPP_TIER_INFINIBAND:
	case TPP_TIER_ROCE:
	case TPP_TIER_ETHERNET:
		return TPP_OVERLAP_SM_SHARE_NET;
	default:
		return TPP_OVERLAP_SM_SHARE;
	}
}

/*
 * Precision whose measured GEMM figure stands for p: p's own, else (fp16
 * and bf16 run on the same tensor-core path) the other 16-bit one; -1
 * when none is measured.
 */
static int gemm_measured_prec(const struct tpp_gpu *g, enum tpp_prec p)
{
	static const enum tpp_prec alt[] = {TPP_PREC_BF16, TPP_PREC_FP16};
	size_t i;
	if (g->gemm_flops[p] > 0 && g->peak_flops[p] > 0)
		return (int)p;
	if (p == TPP_PREC_FP16 || p == TPP_PREC_BF16)
		for (i = 0; i < TPP_ARRAY_LEN(alt); i++)
			if (g->gemm_flops[alt[i]] > 0 && g->peak_flops[alt[i]] > 0)
				return (int)alt[i];
	return -1;
}

double tpp_gemm_measured(const struct tpp_gpu *g, enum tpp_prec p, int *from)
{
	int q = gemm_measured_prec(g, p);
	if (from)
		*from = q;
	return q >= 0 ? g->gemm_flops[q] : 0;
}

/* For fp8 without a measured rate of its own: the 16-bit precision whose
 * measured rate stands in (TPP_FP8_OF_16BIT_CEILING), else -1. */
static int gemm_fp8_from16(const struct tpp_gpu *g, enum tpp_prec p)
{
	if (p != TPP_PREC_FP8 || g->peak_flops[p] <= 0 || gemm_measured_prec(g, p) >= 0)
		return -1;
	return gemm_measured_prec(g, TPP_PREC_BF16);
}

/*
 * Measured GEMM rate as a fraction of the datasheet peak (calibration.md
 * 7.2): the rate sustained at the power limit (MSMF) where the cluster
 * file gives it, which is what a training run's back-to-back GEMMs get
 * (topologies/README.md "GEMM ceiling"); for fp8 without one, the 16-bit
 * fraction times TPP_FP8_OF_16BIT_CEILING; else TPP_GEMM_CEILING_DEFAULT.
 * This is the rate at the shape it was measured at.
 */
static double gemm_ceiling(const struct tpp_gpu *g, enum tpp_prec p)
{
	int q = gemm_measured_prec(g, p);
	if (q >= 0)
		return g->gemm_flops[q] / g->peak_flops[q];
	q = gemm_fp8_from16(g, p);
	if (q >= 0)
		return g->gemm_flops[q] / g->peak_flops[q] * TPP_FP8_OF_16BIT_CEILING;
	return TPP_GEMM_CEILING_DEFAULT;
}

double tpp_gemm_ceiling(const struct tpp_gpu *g, enum tpp_prec p, int *from16)
{
	if (from16)
		*from16 = gemm_fp8_from16(g, p);
	return gemm_ceiling(g, p);
}

/* The measured GEMM table that prices precision p (a calibration's), and
 * in *eff_per_rate what turns its FLOP/s into p's efficiency (fraction of
 * p's peak): p's own table, 1 / peak; for fp8 without one, the 16-bit
 * table whose figure its ceiling comes from (gemm_fp8_from16), times
 * TPP_FP8_OF_16BIT_CEILING / that precision's peak; NULL when none. */
static const struct tpp_gemm_table *gemm_table_for(const struct tpp_gpu *g, enum tpp_prec p,
						   double *eff_per_rate)
{
	int q;
	if (g->gemm_table[p].n > 0 && g->peak_flops[p] > 0) {
		*eff_per_rate = 1.0 / g->peak_flops[p];
		return &g->gemm_table[p];
	}
	q = gemm_fp8_from16(g, p);
	if (q >= 0 && g->gemm_table[q].n > 0) {
		*eff_per_rate = TPP_FP8_OF_16BIT_CEILING / g->peak_flops[q];
		return &g->gemm_table[q];
	}
	*eff_per_rate = 0;
	return NULL;
}

static double peak_flops(const struct tpp_gpu *g, enum tpp_prec p)
{
	return g->peak_flops[p];
}

static double prec_bytes(enum tpp_prec p)
{
	switch (p) {
	case TPP_PREC_FP32:
	case TPP_PREC_TF32: return 4;
	case TPP_PREC_FP8: return 1;
	default: return 2;
	}
}

/* Bytes per activation element: 16-bit, also under fp8 (Transformer
 * Engine keeps activations and the tensors communicated in bf16). */
static double act_elem_bytes(enum tpp_prec p)
{
	return prec_bytes(p == TPP_PREC_FP8 ? TPP_PREC_BF16 : p);
}

/*
 * Precision of the GEMMs that FP8 training leaves in 16 bits: Transformer
 * Engine's FP8 recipes quantize the Linear layers only (dot-product
 * attention stays in bf16 unless fp8_dpa is set, default False), and
 * Megatron's LM head is a plain ColumnParallelLinear outside TE, so the
 * attention core and the logits GEMMs run at the 16-bit rate.
 */
static enum tpp_prec prec16(const struct tpp_gpu *g, enum tpp_prec p)
{
	if (p == TPP_PREC_FP8 && g->peak_flops[TPP_PREC_BF16] > 0)
		return TPP_PREC_BF16;
	return p;
}

/* HBM efficiency by transfer size: Calculon's default curve
 * (calibration.md 5.3): >=100 MB 0.90, >=10 MB 0.75, >=1 MB 0.6, else 0.3. */
static const struct {
	double bytes, eff;
} hbm_steps[] = {{100e6, 0.90}, {10e6, 0.75}, {1e6, 0.60}};
#define TPP_HBM_EFF_SMALL 0.30

/*
 * Time of a memory-bound pass over `bytes`.  Calculon's curve is a step
 * function, so on its own a pass just over a step (10.0 MB at 0.75) would
 * take less time than one just under it (9.9 MB at 0.6); moving more bytes
 * never takes less time, so past each step the time stays at the step's
 * value from below until the higher efficiency catches up (e.g. 10 to
 * 12.5 MB all take the time of 10 MB at 0.6).
 */
double tpp_hbm_time(const struct tpp_gpu *g, double bytes)
{
	size_t i, n = TPP_ARRAY_LEN(hbm_steps);
	if (bytes <= 0)
		return 0;
	for (i = 0; i < n; i++)
		if (bytes >= hbm_steps[i].bytes) {
			double below = i + 1 < n ? hbm_steps[i + 1].eff : TPP_HBM_EFF_SMALL;
			double t = bytes / (g->hbm_Bps * hbm_steps[i].eff);
			double at_step = hbm_steps[i].bytes / (g->hbm_Bps * below);
			return t > at_step ? t : at_step;
		}
	return bytes / (g->hbm_Bps * TPP_HBM_EFF_SMALL);
}

static double mem_time(const struct tpp_gpu *g, double bytes)
{
	return tpp_hbm_time(g, bytes);
}

/*
 * Wave-quantization efficiency (calibration.md 5.2): output tiles
 * C = ceil(M/Tm) * ceil(N/Tn) * batch run in W = ceil(C/S) waves on S SMs;
 * efficiency C / (W*S).  The best of the common cuBLAS tile shapes
 * 256x128 / 128x256 is taken (the library picks among them).
 */
static double wave_eff(int sms, double M, double N, double batch)
{
	static const double tiles[][2] = {{256, 128}, {128, 256}, {128, 128}};
	double best = 0;
	size_t i;
	if (sms <= 0)
		return 1.0;
	for (i = 0; i < TPP_ARRAY_LEN(tiles); i++) {
		double c = ceil(M / tiles[i][0]) * ceil(N / tiles[i][1]) * batch;
		double w = ceil(c / sms);
		/* tile quantization: padded rows/cols do no useful work */
		double useful = (M * N * batch) / (c * tiles[i][0] * tiles[i][1]);
		double e = c / (w * sms) * useful;
		if (e > best)
			best = e;
	}
	return best;
}

/*
 * One GEMM C[M,N] = A[M,K] B[K,N], `batch` times (batched GEMM).
 * t = max(FLOPs / (peak * ceiling * wave * k_eff), bytes / HBM) -- the
 * roofline of calibration.md 4.5.  k_eff = K / (K + 128) charges the fixed
 * prologue/epilogue of each output tile against its K loop [derived: a tile
 * spends about two 64-deep k-steps outside the main loop].
 */
/*
 * Measured rate for a GEMM shape from the calibration table: inverse
 * squared-distance weighting, in log2(M, N, K) space, of the rates of the
 * four nearest measured shapes (an exact hit returns its measurement).
 * The table is the cost model's "interpolated table over shape"
 * (calibration.md 5.2); 0 when there is none.
 */
static double gemm_table_rate(const struct tpp_gemm_table *t, double M,
			      double N, double K)
{
	double lm = log2(M), ln = log2(N), lk = log2(K);
	double bd[4] = {1e300, 1e300, 1e300, 1e300}, br[4] = {0, 0, 0, 0};
	double wsum = 0, rsum = 0;
	int i, j;
	if (t->n < 1)
		return 0;
	for (i = 0; i < t->n; i++) {
		double dm = lm - log2(t->m[i]), dn = ln - log2(t->nn[i]), dk = lk - log2(t->k[i]);
		double d2 = dm * dm + dn * dn + dk * dk;
		if (d2 < 1e-12)
			return t->flops_per_s[i];
		for (j = 3; j >= 0 && d2 < bd[j]; j--)
			if (j < 3) {
				bd[j + 1] = bd[j];
				br[j + 1] = br[j];
			}
		if (j < 3) {
			bd[j + 1] = d2;
			br[j + 1] = t->flops_per_s[i];
		}
	}
	for (j = 0; j < 4; j++)
		if (bd[j] < 1e299) {
			wsum += 1.0 / bd[j];
			rsum += br[j] / bd[j];
		}
	return wsum > 0 ? rsum / wsum : 0;
}

/*
 * The ceiling free of the shape model's own losses: a measured rate comes
 * from one shape (gpu.measured.gemm_shape), whose wave / tile and K-loop
 * losses the shape model would charge again on top of it, pricing the
 * measured shape itself 2-6 % under its measurement.  Dividing them out
 * makes the model give that shape exactly the measured rate.  Without a
 * shape the rate is taken as the large-shape ceiling as it is.  At most
 * the datasheet peak.
 */
double tpp_gemm_shape_eff(int sms, double M, double N, double K)
{
	return wave_eff(sms, M, N, 1) * (K / (K + 128.0));
}

static double gemm_peak_ceiling(const struct tpp_gpu *g, enum tpp_prec p)
{
	int q = gemm_measured_prec(g, p);
	double c = gemm_ceiling(g, p);
	if (q < 0)
		q = gemm_fp8_from16(g, p); /* the 16-bit shape's losses */
	if (q >= 0 && g->gemm_shape[q][0] > 0) {
		const double *s = g->gemm_shape[q];
		c /= tpp_gemm_shape_eff(g->sm_count, s[0], s[1], s[2]);
	}
	/* cluster.c refuses a shape that would put it past the peak; a
	 * GPU built in code could still */
	return c < 1.0 ? c : 1.0;
}

/*
 * The GEMM on all SMs but `reserve` (kept for communication kernels that
 * run beside it, e.g. Transformer Engine's set_sm_margin): waves over the
 * remaining SMs and the rate scaled by their share.  Without an SM count,
 * the share falls back on TPP_OVERLAP_SM_SHARE.
 */
static double gemm_time_sms(const struct tpp_gpu *g, enum tpp_prec p, double M,
			    double N, double K, double batch, int reserve)
{
	double flops = 2.0 * M * N * K * batch;
	int sms = g->sm_count > reserve ? g->sm_count - reserve : g->sm_count;
	double share = 1.0;
	double eff;
	if (reserve > 0)
		share = g->sm_count > reserve ? (double)sms / g->sm_count
					      : 1.0 - TPP_OVERLAP_SM_SHARE;
	eff = gemm_peak_ceiling(g, p) * wave_eff(sms, M, N, batch) * (K / (K + 128.0));
	{
		/* measured shapes include their own quantization effects; fp8
		 * without a table of its own reads the 16-bit one, as its
		 * ceiling does (TPP_FP8_OF_16BIT_CEILING) */
		double scale;
		const struct tpp_gemm_table *t = gemm_table_for(g, p, &scale);
		double rate = t ? gemm_table_rate(t, M, N, K) : 0;
		if (rate > 0)
			eff = rate * scale;
	}
	eff *= share;
	double t_c = flops / (peak_flops(g, p) * eff);
	double bytes = (M * K + K * N + M * N) * batch * prec_bytes(p);
	double t_m = mem_time(g, bytes);
	return t_c > t_m ? t_c : t_m;
}

static double gemm_time(const struct tpp_gpu *g, enum tpp_prec p, double M,
			double N, double K, double batch)
{
	return gemm_time_sms(g, p, M, N, K, batch, 0);
}

double tpp_gemm_time(const struct tpp_gpu *g, enum tpp_prec p, double M,
		     double N, double K)
{
	return gemm_time(g, p, M, N, K, 1);
}

double tpp_gemm_time_sms(const struct tpp_gpu *g, enum tpp_prec p, double M,
			 double N, double K, int reserve)
{
	return gemm_time_sms(g, p, M, N, K, 1, reserve);
}

int tpp_gemm_table_spans(const struct tpp_gpu *g, enum tpp_prec p, double M,
			 double N, double K)
{
	double scale;
	const struct tpp_gemm_table *t = gemm_table_for(g, p, &scale);
	double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {0, 0, 0}, x[3] = {M, N, K};
	int i, j;
	if (!t)
		return 1;
	for (i = 0; i < t->n; i++) {
		const double v[3] = {t->m[i], t->nn[i], t->k[i]};
		for (j = 0; j < 3; j++) {
			lo[j] = fmin(lo[j], v[j]);
			hi[j] = fmax(hi[j], v[j]);
		}
	}
	for (j = 0; j < 3; j++)
		if (x[j] < lo[j] || x[j] > hi[j])
			return 0;
	return 1;
}

double tpp_gemm_table_max_work(const struct tpp_gpu *g, enum tpp_prec p)
{
	double scale, w = 0;
	const struct tpp_gemm_table *t = gemm_table_for(g, p, &scale);
	int i;
	for (i = 0; t && i < t->n; i++)
		w = fmax(w, t->m[i] * t->nn[i] * t->k[i]);
	return w;
}

/* Forward + dgrad + wgrad of a linear layer Y[M,N] = X[M,K] W[K,N]. */
static double linear_fwd(const struct tpp_gpu *g, enum tpp_prec p, double M,
			 double N, double K)
{
	return gemm_time(g, p, M, N, K, 1);
}

static double linear_dgrad(const struct tpp_gpu *g, enum tpp_prec p, double M,
			   double N, double K)
{
	return gemm_time(g, p, M, K, N, 1); /* dX = dY W^T */
}

static double linear_wgrad(const struct tpp_gpu *g, enum tpp_prec p, double M,
			   double N, double K)
{
	return gemm_time(g, p, K, N, M, 1); /* dW = X^T dY */
}

/*
 * Fused (flash) attention throughput as a fraction of the GPU's 16-bit
 * GEMM ceiling, by sequence length: cuDNN's fused attention on H100 SXM5,
 * BF16, head dim 128, from the FlashAttention-3 paper (Shah et al. 2024,
 * arXiv 2407.08608): forward with causal mask (Fig. 5) 315 / 410 / 484 /
 * 518 / 529 / 539 TFLOP/s and backward (Fig. 6) 305 / 408 / 465 / 499 /
 * 518 / 516 TFLOP/s at 512 ... 16k tokens, over H100's bf16 MAMF of
 * 794.5 TFLOP/s (calibration.md 7.2), the burst GEMM rate of the same kind
 * of short benchmark.  Applied to the cluster's measured GEMM rate, which
 * is the one sustained at the power limit (MSMF) where published, the
 * fraction gives attention at the same sustained clock.  cuDNN is
 * Transformer Engine's fused-attention backend, which Megatron uses.
 * Other GPUs are assumed to reach the same fraction of their own GEMM
 * rate (no comparable published measurement in the references); `tpplan
 * calibrate` does not measure attention yet.
 */
static const struct {
	double seq, fwd, bwd;
} flash_eff[] = {
	{512, 315 / 794.5, 305 / 794.5},    {1024, 410 / 794.5, 408 / 794.5},
	{2048, 484 / 794.5, 465 / 794.5},   {4096, 518 / 794.5, 499 / 794.5},
	{8192, 529 / 794.5, 518 / 794.5},   {16384, 539 / 794.5, 516 / 794.5},
};

/* flash_eff interpolated in log2(seq), clamped at both ends. */
static void flash_rate(double seq, double *fwd, double *bwd)
{
	size_t i, n = TPP_ARRAY_LEN(flash_eff);
	double x;
	if (seq <= flash_eff[0].seq) {
		*fwd = flash_eff[0].fwd;
		*bwd = flash_eff[0].bwd;
		return;
	}
	for (i = 1; i < n; i++)
		if (seq <= flash_eff[i].seq)
			break;
	if (i == n) {
		*fwd = flash_eff[n - 1].fwd;
		*bwd = flash_eff[n - 1].bwd;
		return;
	}
	x = log2(seq / flash_eff[i - 1].seq) / log2(flash_eff[i].seq / flash_eff[i - 1].seq);
	*fwd = flash_eff[i - 1].fwd + x * (flash_eff[i].fwd - flash_eff[i - 1].fwd);
	*bwd = flash_eff[i - 1].bwd + x * (flash_eff[i].bwd - flash_eff[i - 1].bwd);
}

/*
 * Core attention of `bh` (sequence, head) pairs, sq queries against sk
 * keys of head dimension dh (under CP each kernel sees sq = s/cp local
 * queries; the keys of all ranks pass through).  16-bit throughout:
 * attention stays in bf16 under fp8 recipes (prec16).
 *   unfused: QK^T and softmax(.)V as batched GEMMs over the whole s x s
 *            score matrix (causal masking skips nothing); backward 4 GEMMs
 *            (dV, dP, dQ, dK) = 2x the forward's 2.
 *   flash:   one fused kernel at the measured rate of flash_eff; causal
 *            blocks above the diagonal are skipped (FLOPs x 0.5); the
 *            backward recomputes S = QK^T from the saved softmax
 *            statistics, 5 GEMMs = 2.5x the forward's FLOPs (Dao 2023,
 *            FlashAttention-2 sec. 3.1; flash-attention
 *            benchmarks/benchmark_flash_attention.py counts bwd = 2.5 fwd).
 *            HBM traffic (Q, K, V, O once, their gradients once; K and
 *            V over the K/V heads, fewer under GQA) bounds it from below.
 */
void tpp_attn_core_time(const struct tpp_gpu *g, enum tpp_prec p,
			enum tpp_attn attn, double bh, double bkv, double sq,
			double sk, double dh, double *fwd_s, double *bwd_s)
{
	enum tpp_prec p16 = prec16(g, p);
	double ef, eb, flops, rate, io;

	if (attn != TPP_ATTN_FLASH) {
		double f = gemm_time(g, p16, sq, sk, dh, bh) + gemm_time(g, p16, sq, dh, sk, bh);
		*fwd_s = f;
		*bwd_s = 2.0 * f;
		return;
	}
	flash_rate(sq, &ef, &eb);
	flops = 0.5 * 4.0 * sq * sk * dh * bh;
	rate = peak_flops(g, p16) * gemm_ceiling(g, p16);
	/* Q, O over the query heads and K, V over the K/V heads, 16-bit */
	io = (2.0 * sq * bh + 2.0 * sk * bkv) * dh * 2.0;
	*fwd_s = fmax(flops / (rate * ef), mem_time(g, io));
	*bwd_s = fmax(2.5 * flops / (rate * eb), mem_time(g, 2.0 * io));
}


/* ------------------------------------------------------------------------ */
/* Collectives                                                               */

/* nccl-tests bus-bandwidth factor (calibration.md 1.6). */
static double bus_factor(enum tpp_coll coll, int n)
{
	switch (coll) {
	case TPP_COLL_ALL_REDUCE: return 2.0 * (n - 1) / n;
	case TPP_COLL_ALL_GATHER:
	case TPP_COLL_REDUCE_SCATTER:
	case TPP_COLL_ALL_TO_ALL: return (double)(n - 1) / n;
	default: return 1.0;
	}
}

/* Ring steps: 2(n-1) for all-reduce, n-1 for the others (calibration.md 2.3). */
static double ring_steps(enum tpp_coll coll, int n)
{
	switch (coll) {
	case TPP_COLL_ALL_REDUCE: return 2.0 * (n - 1);
	case TPP_COLL_SEND_RECV: return 1.0;
	default: return (double)(n - 1);
	}
}

/*
 * Wire efficiency of an NVLS all-reduce on a tier that has NVLS and no
 * measured all-reduce figure: B_wire = busbw (n+1) / (2 (n-1)) over the
 * datasheet rate, for the parts measured on 8 GPUs (calibration.md 7.1,
 * the preset files' figures): H100 480 -> 0.686, H200 482.3 -> 0.689,
 * B200 838 -> 0.599 of 450 / 450 / 900 GB/s; their median.  (A ring
 * gets 0.76-0.82, TPP_DEFAULT_LINK_EFF; GB200's 850 on an NVL72 is left
 * out: its slide does not say over how many GPUs.)
 */
#define TPP_DEFAULT_NVLS_EFF 0.686

/* NCCL base latency of a ring collective, LL128 protocol (tuning.cc,
 * calibration.md 2.3): 14.0 us, the protocol of the per-hop latencies
 * the presets give (Ring/LL128: NVLink 1.9 us, network 4.0 us); NCCL
 * pairs Simple's 8.4 us base with its own hops (3.4 / 14 us). */
#define TPP_COLL_BASE_LAT_S 14.0e-6

/*
 * Achievable bus bandwidth of `coll` on tier `t` for a group of m GPUs of
 * one domain, at message size `bytes` (nccl-tests size convention).
 * Measured curve or figure first; every other collective falls back on
 * the all-reduce figure (all-gather / reduce-scatter: the same ring bus
 * traffic; all-to-all and send/recv: the same links at the same per-GPU
 * rate) unless the tier has NVLS, which speeds up only all-reduce
 * (calibration.md 3.3); else the datasheet rate times
 * tpp_tier_default_eff (cluster.c).
 */
/* Full mesh without a switch (AMD xGMI): m GPUs use m-1 of their span-1
 * links (calibration.md 4.3). */
static double mesh_scale(const struct tpp_tier *t, int m)
{
	if (t->mesh && t->span_gpus > 1 && m > 1 && m < t->span_gpus)
		return (double)(m - 1) / (t->span_gpus - 1);
	return 1.0;
}

/* Whether an all-reduce of m GPUs on tier t runs as a ring although the
 * tier's all-reduce figures are NVLS ones (fewer than 5 GPUs, or `ring`:
 * one stretch of a ring across domains). */
static int nvls_ring(const struct tpp_tier *t, enum tpp_coll coll, int m, int ring)
{
	return coll == TPP_COLL_ALL_REDUCE && t->nvls && (ring || m < TPP_NVLS_MIN_GPUS);
}

/*
 * An NVLS all-reduce figure measured over g GPUs, for m GPUs: each GPU
 * sends and receives S (m+1)/m over its links (calibration.md 3.3), so
 * algbw = B_wire m/(m+1) hardly changes with m while busbw = algbw
 * 2(m-1)/m does; the figure at m is the measured one times
 * [(m-1)/(m+1)] / [(g-1)/(g+1)].  From 8 x H200's 473 GB/s this gives
 * 405, 434 and 456 GB/s at 5, 6 and 7 GPUs, against a measured 414, 436
 * and 460 (calibration.md 7.1, NVLS ramp by GPU count).  1 when m or g is
 * under 5 (NCCL runs a ring there: nothing NVLS to scale) or unknown (0).
 */
double tpp_nvls_scale(int m, int g)
{
	if (m < TPP_NVLS_MIN_GPUS || g < TPP_NVLS_MIN_GPUS || m == g)
		return 1.0;
	return ((m - 1.0) / (m + 1.0)) / ((g - 1.0) / (g + 1.0));
}

/* The factor for an NVLS all-reduce of m GPUs and `bytes` on tier t,
 * whose figures were measured over t->nvls_gpus (tpp_nvls_scale); 1 for
 * anything else: rings, messages under TPP_NVLS_MIN_BYTES, and a tier
 * that does not say over how many GPUs it measured. */
static double nvls_group_scale(const struct tpp_tier *t, enum tpp_coll coll, int m,
			       double bytes)
{
	if (coll != TPP_COLL_ALL_REDUCE || !t->nvls || nvls_ring(t, coll, m, 0) ||
	    bytes < TPP_NVLS_MIN_BYTES)
		return 1.0;
	return tpp_nvls_scale(m, t->nvls_gpus);
}

/* A tier's measured bus bandwidth for `coll` at large sizes: its figure,
 * else its size curve's largest size, else 0. */
static double tier_busbw_plateau(const struct tpp_tier *t, enum tpp_coll coll)
{
	if (t->busbw_Bps[coll] > 0)
		return t->busbw_Bps[coll];
	if (t->curve_n[coll] >= 2)
		return t->curve_busbw_Bps[coll][t->curve_n[coll] - 1];
	return 0;
}

static double tier_busbw(const struct tpp_tier *t, enum tpp_coll coll, int m,
			 double bytes, int ring)
{
	double bw;
	if (nvls_ring(t, coll, m, ring)) {
		/* a ring all-reduce is a reduce-scatter and an all-gather
		 * ring: the same bus traffic (calibration.md 1.6), so their
		 * figures; else the datasheet rate, not the NVLS figure */
		bw = tpp_tier_busbw_at(t, TPP_COLL_REDUCE_SCATTER, bytes);
		if (bw <= 0)
			bw = tpp_tier_busbw_at(t, TPP_COLL_ALL_GATHER, bytes);
	} else {
		bw = tpp_tier_busbw_at(t, coll, bytes);
		/*
		 * No figure of its own: the all-reduce's, as measured at its
		 * plateau, not its size curve read at this size.  The curve
		 * is end to end: at mid sizes it carries the all-reduce's
		 * 2 (n - 1) hops of latency (8 x A100 at 4 MiB: 60 GB/s
		 * against 234.9), which a send / all-to-all does not take and
		 * flat_time adds for its own steps on top.  (All-gather and
		 * reduce-scatter read that curve end to end instead: the
		 * same ring, curve_of.)
		 */
		if (bw <= 0 && coll != TPP_COLL_ALL_REDUCE && !t->nvls)
			bw = tier_busbw_plateau(t, TPP_COLL_ALL_REDUCE);
		/* a measured NVLS figure, for a group of another size
		 * than the one it was measured over */
		if (bw > 0 && !ring)
			bw *= nvls_group_scale(t, coll, m, bytes);
	}
	if (bw <= 0)
		bw = t->bw_Bps * tpp_tier_default_eff(t);
	return bw * mesh_scale(t, m);
}

/* The measured curve to price `coll` with on tier `t`: its own; for
 * all-gather / reduce-scatter the other one's (the same ring: n-1 steps of
 * S/n, the same bus traffic), else the all-reduce one unless the tier has
 * NVLS (whose all-reduce is a different algorithm); -1 if none. */
static int curve_of(const struct tpp_tier *t, enum tpp_coll coll, int n)
{
	if (nvls_ring(t, coll, n, 0)) /* a ring, as tier_busbw */
		return t->curve_n[TPP_COLL_REDUCE_SCATTER] >= 2 ? TPP_COLL_REDUCE_SCATTER
		       : t->curve_n[TPP_COLL_ALL_GATHER] >= 2 ? TPP_COLL_ALL_GATHER
							      : -1;
	if (t->curve_n[coll] >= 2)
		return (int)coll;
	if (coll == TPP_COLL_ALL_GATHER && t->curve_n[TPP_COLL_REDUCE_SCATTER] >= 2)
		return TPP_COLL_REDUCE_SCATTER;
	if (coll == TPP_COLL_REDUCE_SCATTER && t->curve_n[TPP_COLL_ALL_GATHER] >= 2)
		return TPP_COLL_ALL_GATHER;
	if ((coll == TPP_COLL_ALL_GATHER || coll == TPP_COLL_REDUCE_SCATTER) &&
	    !t->nvls && t->curve_n[TPP_COLL_ALL_REDUCE] >= 2)
		return TPP_COLL_ALL_REDUCE;
	return -1;
}

/* Time of a collective entirely inside one domain of tier `t`. */
static double flat_time(const struct tpp_tier *t, enum tpp_coll coll,
			double bytes, int n)
{
	double busbw, alpha, f = bus_factor(coll, n);
	int cv = curve_of(t, coll, n);

	if (cv >= 0) {
		/*
		 * A measured curve is end to end: inside its range t = S f /
		 * busbw(S) with busbw interpolated in log2(S); below it linear
		 * in S from the hop-model latency at S = 0 to the smallest
		 * size's time (which is about that latency when the curve
		 * starts at a few KiB, and keeps mid sizes honest when it starts
		 * at 100 MiB); above it the largest size's time plus the rest
		 * at the fitted (calibration) or last measured bandwidth --
		 * tpp_tier_busbw_at's rule, which the hierarchical path reads
		 * too.
		 */
		double b0 = t->curve_bytes[cv][0];
		/* mesh links, or an NVLS group of another size than the
		 * curve's (at the size the bandwidth is read at) */
		double mesh = mesh_scale(t, n);
		if (bytes <= b0) {
			double t0 = b0 * f / (t->curve_busbw_Bps[cv][0] * mesh *
					      nvls_group_scale(t, coll, n, b0));
			double a0 = TPP_COLL_BASE_LAT_S + ring_steps(coll, n) * t->latency_s;
			if (a0 >= t0)
				return t0;
			return a0 + (t0 - a0) * bytes / b0;
		}
		return bytes * f / (tpp_tier_busbw_at(t, (enum tpp_coll)cv, bytes) * mesh *
				    nvls_group_scale(t, coll, n, bytes));
	}
	busbw = tier_busbw(t, coll, n, bytes, 0);
	alpha = TPP_COLL_BASE_LAT_S + ring_steps(coll, n) * t->latency_s;
	/* an NVLS all-reduce (a measured NVLS figure prices its bandwidth)
	 * takes a constant number of steps, as below: NCCL's NVLS latency is
	 * one intra-node term whatever the GPU count (calibration.md 2.3),
	 * not a ring's 2 (n - 1) hops (284 us for 72 GPUs of an NVL72) */
	if (coll == TPP_COLL_ALL_REDUCE && t->nvls && !nvls_ring(t, coll, n, 0))
		alpha = TPP_COLL_BASE_LAT_S + 2 * t->latency_s;
	/* a calibrated latency replaces NCCL's hop model */
	if (t->busbw_src[coll] == TPP_SRC_CALIBRATION && t->busbw_alpha_s[coll] > 0 &&
	    !nvls_ring(t, coll, n, 0))
		alpha = t->busbw_alpha_s[coll];
	/*
	 * In-switch reduction (NVLink SHARP on NVSwitch, IB SHARP) when the
	 * tier has it and no measured all-reduce figure (a measured busbw
	 * already includes it): each GPU sends its data once and receives the
	 * result once, algbw = B_wire n/(n+1) (calibration.md 1.6, 3.3), and a
	 * constant number of steps.  NCCL uses NVLS from 5 GPUs up.  On
	 * NVLink, B_wire is the datasheet rate times TPP_DEFAULT_NVLS_EFF,
	 * what the measured NVLS parts get, not a ring's 0.8.
	 */
	if (coll == TPP_COLL_ALL_REDUCE && (t->nvls || t->sharp) && n >= TPP_NVLS_MIN_GPUS &&
	    t->busbw_Bps[coll] <= 0) {
		double wire = t->nvls ? t->bw_Bps * TPP_DEFAULT_NVLS_EFF : busbw;
		return TPP_COLL_BASE_LAT_S + 2 * t->latency_s +
		       bytes * (n + 1.0) / n / wire;
	}
	return alpha + bytes * f / busbw;
}

/*
 * Groups of n GPUs `stride` apart whose blocks of n*stride GPUs do not
 * tile the domains of span S (e.g. TP = 3 on 8-GPU nodes, or a group of
 * 16, 32, 64 or 128 on 72-GPU NVL72 racks): some instances straddle a
 * domain boundary with uneven shares.  Over the instances the cluster of
 * `total` GPUs holds, the fewest members any straddling instance has in
 * one of its domains (*m_min) and the domains that instance touches
 * (*k_dom); *m_min = 0 when no instance straddles.  Member counts depend
 * only on an instance's first GPU modulo S, so blocks are visited over
 * one period (S / gcd(n*stride, S) blocks) and offsets over at most S;
 * within an instance the interior domains' counts repeat with the
 * residue of the domain start modulo stride, so at most `stride` of them
 * are visited, and none once the instance's count is at most S / stride,
 * the fewest an interior domain can hold; the search stops at the first
 * instance with one member in a domain (none has fewer).  The search
 * prices this for every layout whose data-parallel group straddles
 * (NVL72), so the shortcuts matter: 87x fewer steps over 257,000 (n,
 * stride, S) cases, the same answers.
 */
static void straddle_scan(long long n, long long stride, long long S, long long total,
			  int *m_min, int *k_dom)
{
	long long block = n * stride, blocks, period = S / tpp_gcd(block, S), b, o, olim;
	/* an interior domain holds at least S / stride members */
	long long q = S / stride;
	*m_min = 0;
	*k_dom = 0;
	blocks = total / block > 0 ? total / block : 1;
	if (blocks > period)
		blocks = period;
	olim = stride < S ? stride : S;
	for (b = 0; b < blocks; b++)
		for (o = 0; o < olim; o++) {
			long long p0 = b * block + o, last = p0 + (n - 1) * stride;
			long long d0 = p0 / S, d1 = last / S, d, lim, m;
			if (d0 == d1)
				continue;
			/* first and last domain */
			m = ((d0 + 1) * S - 1 - p0) / stride + 1;
			d = (last - d1 * S) / stride + 1;
			if (d < m)
				m = d;
			/* interior domains, when one could hold fewer */
			lim = d1 - d0 - 1 < stride ? d1 - d0 - 1 : stride;
			for (d = d0 + 1; d <= d0 + lim && m > q; d++) {
				long long lo = d * S - p0, hi = (d + 1) * S - 1 - p0;
				long long cnt = hi / stride - (lo + stride - 1) / stride + 1;
				if (cnt > 0 && cnt < m)
					m = cnt;
			}
			if (*m_min == 0 || m < *m_min) {
				*m_min = (int)m;
				*k_dom = (int)(d1 - d0 + 1);
				if (m == 1)
					return; /* none has fewer */
			}
		}
}

/*
 * straddle_scan, remembered: a search prices the same few groups (n,
 * stride) on one cluster for hundreds of thousands of layouts, and the
 * scan was 14 % of a 4096-GPU NVL72 search.  A small direct-mapped table
 * per thread (no allocation; the answer is a function of its key alone,
 * so a stale entry can only miss, never differ).
 */
static void straddle_min(long long n, long long stride, long long S, long long total,
			 int *m_min, int *k_dom)
{
	static _Thread_local struct {
		long long n, stride, S, total;
		int m, k;
	} memo[64];
	unsigned h = (unsigned)(((unsigned long long)n * 2654435761u) ^
				((unsigned long long)stride * 40503u) ^ (unsigned long long)S) & 63u;
	if (memo[h].n == n && memo[h].stride == stride && memo[h].S == S &&
	    memo[h].total == total) {
		*m_min = memo[h].m;
		*k_dom = memo[h].k;
		return;
	}
	straddle_scan(n, stride, S, total, m_min, k_dom);
	memo[h].n = n;
	memo[h].stride = stride;
	memo[h].S = S;
	memo[h].total = total;
	memo[h].m = *m_min;
	memo[h].k = *k_dom;
}

/*
 * Flat ring of n GPUs over `k` domains of the inner tier with `g` members
 * in the domain that has the fewest: every GPU drives its own share of
 * the outer tier, the ring crosses a domain boundary where it leaves
 * one, and the slower of the two link kinds bounds it: the inner ring
 * of g members, or g times the outer per-GPU rate, the members of that
 * domain carrying its crossings over their own NICs (calibration.md 3.3:
 * the node's aggregate NIC bandwidth bounds a ring across nodes).
 */
static double ring_across(const struct tpp_tier *outer, const struct tpp_tier *inner,
			  enum tpp_coll coll, double bytes, int n, int g, int k)
{
	double bw_o = tier_busbw(outer, coll, n, bytes / g, 0) * g;
	/* inside a domain the ring is a ring, not NVLS */
	double bw_i = tier_busbw(inner, coll, g, bytes, 1);
	double bw = bw_o < bw_i ? bw_o : bw_i;
	double steps = ring_steps(coll, n);
	double hops_out = coll == TPP_COLL_ALL_REDUCE ? 2.0 * (k - 1) : (double)(k - 1);
	return TPP_COLL_BASE_LAT_S + (steps - hops_out) * inner->latency_s +
	       hops_out * outer->latency_s + bytes * bus_factor(coll, n) / bw;
}

double tpp_coll_time(const struct tpp_cluster *c, enum tpp_coll coll,
		     double bytes, int n, int stride)
{
	int ti, inner_per_domain, k;
	double flat, hier;
	const struct tpp_tier *outer, *inner;

	if (n <= 1 || bytes <= 0)
		return 0;
	if (stride < 1)
		stride = 1;
	ti = tpp_cluster_tier_for(c, n, stride);
	outer = &c->tiers[ti];
	/* one pair on the tier that joins them: a measured curve is end to
	 * end and a calibrated latency replaces the hop model (flat_time),
	 * not added to them */
	if (coll == TPP_COLL_SEND_RECV)
		return flat_time(outer, coll, bytes, 2);
	if (ti == 0)
		return flat_time(outer, coll, bytes, n);

	/* Members per domain of the next-inner tier. */
	inner = &c->tiers[ti - 1];
	/*
	 * Instances that do not tile the inner domains (a block of n*stride
	 * GPUs that is not a multiple of the inner span, e.g. TP = 3 on
	 * 8-GPU nodes, or 16 to 128 GPUs on 72-GPU NVL72 racks) split
	 * unevenly over domains: the worst one's ring crosses a boundary
	 * through the outer links of the members on the thinner side, one
	 * GPU's (TP = 3: GPUs 6, 7 | 8) at the outer tier's per-GPU rate, g
	 * GPUs' as a flat ring with g members per domain (GPUs 64-71 | 72-95
	 * of a group of 32 on NVL72: g = 8).  So do blocks that tile them
	 * with a stride under the span that does not divide it: 9 GPUs 16
	 * apart fill two racks of 72 as 5 | 4, not 3 | 3 | 3 (and 8 GPUs 3
	 * apart three nodes of 8 as 3 | 3 | 2).
	 */
	if (inner->span_gpus > 0 &&
	    (((long long)n * stride) % inner->span_gpus ||
	     (stride < inner->span_gpus && inner->span_gpus % stride))) {
		int g, kd;
		straddle_min(n, stride, inner->span_gpus, tpp_cluster_gpus(c), &g, &kd);
		if (g <= 1)
			return flat_time(outer, coll, bytes, n);
		return ring_across(outer, inner, coll, bytes, n, g, kd);
	}
	inner_per_domain = 1;
	if (inner->span_gpus > stride)
		inner_per_domain = inner->span_gpus / stride;
	if (inner_per_domain > n)
		inner_per_domain = n;
	while (inner_per_domain > 1 && n % inner_per_domain)
		inner_per_domain--;
	k = n / inner_per_domain;
	/* one member per inner domain: every hop is on the outer tier, which
	 * prices it (its measured rail figure, in-network reduction,
	 * calibrated latency) */
	if (inner_per_domain == 1)
		return flat_time(outer, coll, bytes, n);

	/* Flat ring: crosses a domain boundary every `inner_per_domain` hops
	 * (ring_across). */
	flat = ring_across(outer, inner, coll, bytes, n, inner_per_domain, k);
	if (inner_per_domain == 1)
		return flat;
	/*
	 * All-reduce may also run hierarchically (calibration.md 3.3: the 2-D
	 * form, which NCCL's tree approximates with logarithmic latency):
	 * reduce-scatter inside the domain, all-reduce across domains on 1/g
	 * of the data, all-gather inside.  All-gather and reduce-scatter
	 * have only the ring in NCCL (calibration.md 2.3, 3.3): (n-1) hops,
	 * which across many nodes makes their latency grow with n.
	 */
	if (coll != TPP_COLL_ALL_REDUCE)
		return flat;
	hier = flat_time(inner, TPP_COLL_REDUCE_SCATTER, bytes, inner_per_domain) +
	       tpp_coll_time(c, coll, bytes / inner_per_domain, k,
			     stride * inner_per_domain) +
	       flat_time(inner, TPP_COLL_ALL_GATHER, bytes, inner_per_domain);
	return hier < flat ? hier : flat;
}

/* ------------------------------------------------------------------------ */
/* Layout validity                                                           */

const char *const tpp_invalid_names[TPP_INV__COUNT] = {
	[TPP_INV_NONE] = "valid",
	[TPP_INV_DEGREE] = "degrees, micro-batch and batch must be >= 1, zero 0..3",
	[TPP_INV_TP] = "tp does not divide heads/kv-heads/ffn",
	[TPP_INV_LAYERS] = "more model chunks (pp*vp) than layers (or than 1024)",
	[TPP_INV_SCHEDULE] = "interleaving / zero-bubble need pp >= 2; interleaving needs micro-batches a multiple of pp; zb-h1 needs vp = 1",
	[TPP_INV_SP] = "sequence parallelism needs tp >= 2; TP overlap needs sequence parallelism and the TP group in one NVLink domain",
	[TPP_INV_SEQ] = "cp/sp do not divide the sequence",
	[TPP_INV_BATCH] = "dp*mbs does not divide the global batch",
	[TPP_INV_ZERO] = "zero=2/3 with pipelining",
	[TPP_INV_PRECISION] = "no peak for the precision on this GPU",
	[TPP_INV_CP_ATTN] = "context parallelism needs flash attention (--attention flash)",
	[TPP_INV_RECOMPUTE] = "recompute_layers needs recompute=full and at most the layers of a model chunk",
	[TPP_INV_INTERLEAVE_PP2] = "interleaving with blocking pipeline transfers needs pp >= 3 (Megatron's check; --no-p2p-overlap, or a 2021-22 stack)",
};

int tpp_tp_divides(const struct tpp_model *m, int tp)
{
	return !(m->heads % tp || m->kv_heads % tp || m->ffn % tp);
}

enum tpp_invalid tpp_layout_invalid_outer(const struct tpp_model *m,
					  const struct tpp_cluster *c,
					  const struct tpp_layout *l)
{
	if (l->tp < 1 || l->pp < 1 || l->dp < 1 || l->cp < 1 || l->mbs < 1 ||
	    l->vp < 1 || l->gbs < 1 || l->zero < 0 || l->zero > 3 ||
	    (long long)l->tp * l->pp * l->dp * l->cp > (1LL << 30))
		return TPP_INV_DEGREE;
	if (!tpp_tp_divides(m, l->tp))
		return TPP_INV_TP;
	/* every model chunk holds at least one layer; uneven splits are
	 * allowed (tpp_chunk_layers) */
	if ((long long)l->pp * l->vp > m->layers ||
	    (long long)l->pp * l->vp > TPP_MAX_CHUNKS)
		return TPP_INV_LAYERS;
	/* the schedule, SP and TP-overlap rules below that need no model are
	 * restated for a --layout's given fields (cli/args.c
	 * layout_contradiction): change them together */
	if ((l->vp > 1 || l->zb) && l->pp < 2)
		return TPP_INV_SCHEDULE;
	if (l->zb && l->vp > 1)
		return TPP_INV_SCHEDULE;
	if ((l->sp || l->tp_overlap) && l->tp < 2)
		return TPP_INV_SP;
	/* Transformer Engine's userbuffers overlap needs SP and CUDA IPC
	 * over NVLink between the TP ranks, i.e. a TP group inside one NVLink
	 * domain (not PCIe, not AMD's xGMI) */
	if (l->tp_overlap &&
	    (!l->sp || (c && (tpp_cluster_tier_for(c, l->tp, 1) != 0 ||
			      (c->tiers[0].kind != TPP_TIER_NVLINK &&
			       c->tiers[0].kind != TPP_TIER_NVL_DOMAIN)))))
		return TPP_INV_SP;
	/* CP splits the sequence into 2*cp chunks for causal load balance
	 * (costmodel.md 2.5); SP splits each CP chunk over tp. */
	if (m->seq % (l->cp * (l->cp > 1 ? 2 : 1)) ||
	    (l->sp && (m->seq / l->cp) % l->tp))
		return TPP_INV_SEQ;
	if (l->gbs % ((long long)l->dp * l->mbs))
		return TPP_INV_BATCH;
	/* Megatron interleaving: micro-batches a multiple of pp (costmodel.md 4.1) */
	if (l->vp > 1 && tpp_layout_microbatches(l) % l->pp)
		return TPP_INV_SCHEDULE;
	return TPP_INV_NONE;
}

enum tpp_invalid tpp_layout_invalid(const struct tpp_model *m,
				    const struct tpp_cluster *c,
				    const struct tpp_cost_opts *o,
				    const struct tpp_layout *l)
{
	enum tpp_invalid why = tpp_layout_invalid_outer(m, c, l);
	if (why != TPP_INV_NONE)
		return why;
	/* Sharded gradients (ZeRO-2) and parameters (ZeRO-3) with pipeline
	 * parallelism are valid: DeepSpeed's PipelineEngine refuses them
	 * (it asserts ZeRO stage < 2) and Megatron shards the optimizer alone
	 * under pipelining, but PyTorch FSDP2 under torch.distributed
	 * .pipelining (TorchTitan) runs them, and they are priced as it does
	 * (tpp_zero_pipelined). */
	if (o && c && c->gpu.peak_flops[o->prec] <= 0)
		return TPP_INV_PRECISION;
	/* Ring attention (costmodel.md 2.5) combines the partial results of
	 * each K/V block with the online-softmax rescaling of flash attention;
	 * an unfused softmax needs every key of a row at once, so Megatron
	 * offers CP only with fused attention kernels. */
	if (o && l->cp > 1 && o->attn == TPP_ATTN_UNFUSED)
		return TPP_INV_CP_ATTN;
	if (l->recompute_layers < 0 ||
	    (l->recompute_layers > 0 &&
	     (l->recompute != TPP_RECOMPUTE_FULL ||
	      l->recompute_layers > tpp_max_chunk_layers(m, l))))
		return TPP_INV_RECOMPUTE;
	/* Megatron's validate_args: the interleaved schedule without
	 * --overlap-p2p-communication needs pp > 2 ("to avoid having
	 * multiple p2p sends and recvs between same 2 ranks per
	 * communication batch"); the Megatron of 2021 asserted pp > 2 for
	 * interleaving at all (its transfers block: p2p_overlap off) */
	if (o && l->vp > 1 && l->pp == 2 && !o->p2p_overlap)
		return TPP_INV_INTERLEAVE_PP2;
	return TPP_INV_NONE;
}

int tpp_layout_check(const struct tpp_model *m, const struct tpp_cluster *c,
		     const struct tpp_layout *l, struct tpp_err *err)
{
	enum tpp_invalid why = tpp_layout_invalid(m, c, NULL, l);
	char lb[200];
	if (why == TPP_INV_NONE)
		return TPP_OK;
	if (!err) /* nothing to format the message into */
		return TPP_E_INFEASIBLE;
	tpp_layout_format(l, lb, sizeof(lb));
	return tpp_err_set(err, TPP_E_INFEASIBLE, NULL, 0, 0, "%s: %s", lb,
			   tpp_invalid_names[why]);
}

/* ------------------------------------------------------------------------ */
/* Per-layer work                                                            */

struct layer_cost {
	double fwd_s;        /* compute (GEMM + element-wise), forward */
	double bwd_s;        /* compute, backward (= bwd_in_s + bwd_w_s) */
	double bwd_in_s;     /* backward input gradient: dgrad GEMMs, attention,
				element-wise (zero-bubble "B") */
	double bwd_w_s;      /* weight-gradient GEMMs (zero-bubble "W") */
	double recomp_s;     /* compute re-executed in backward */
	double tp_fwd_s;     /* TP collectives, forward */
	double tp_recomp_s;  /* TP collectives of a full-recompute forward */
	double tp_bwd_s;     /* TP collectives, backward (incl. recompute) */
	double cp_f_s, cp_b_s; /* exposed CP exchange, forward and backward
				  (incl. recompute) */
	double cp_recomp_s;  /* its part in the recomputed forward (in cp_b_s) */
	double flops_fwd;    /* per GPU, forward */
	double flops_recomp; /* per GPU, recomputation */
};

/* A layer's whole forward and backward time (recompute, TP collectives
 * and the exposed CP ring included): what data-parallel traffic on its
 * own stream can hide under. */
static double layer_fwd_cover(const struct layer_cost *lc)
{
	return lc->fwd_s + lc->tp_fwd_s + lc->cp_f_s;
}

static double layer_bwd_cover(const struct layer_cost *lc)
{
	return lc->bwd_s + lc->recomp_s + lc->tp_bwd_s + lc->cp_b_s;
}

/* The same without the weight gradient: a layer's B under ZB-H1's split,
 * the part of its backward the next chunk's input gradient waits for. */
static double layer_bin_cover(const struct layer_cost *lc)
{
	return lc->bwd_in_s + lc->recomp_s + lc->tp_bwd_s + lc->cp_b_s;
}

/*
 * k is the straggler factor (tpp_straggler_factor), applied to every
 * compute time by work_get after this: where a transfer hides behind
 * compute (TP overlap, the CP ring), what stays exposed is weighed
 * against the slowest GPU's compute, k times the times here.
 */
static void layer_cost(const struct tpp_model *m, const struct tpp_cluster *c,
		       const struct tpp_cost_opts *o, const struct tpp_layout *l,
		       double k, struct layer_cost *lc)
{
	const struct tpp_gpu *g = &c->gpu;
	enum tpp_prec p = o->prec;
	double t = l->tp, cp = l->cp;
	double s = m->seq, sl = s / cp;     /* local sequence under CP */
	double b = l->mbs, h = m->hidden;
	double T = b * sl;                  /* tokens per GPU per micro-batch */
	double qd = (double)m->heads * m->head_dim;
	double kvd = (double)m->kv_heads * m->head_dim;
	double f = m->ffn, dh = m->head_dim;
	double heads_local = m->heads / t;
	double up_n = (m->mlp == TPP_MLP_SWIGLU ? 2.0 : 1.0) * f / t;
	double rep = l->sp ? 1.0 / t : 1.0; /* replicated part, split by SP */
	double gemm_f, gemm_b, gemm_w, attn_f, attn_b, ew_f, ew_attn_f, fp8_f, fp8_b;
	double lin_w[4], dims[4][2];
	double tp_one;

	/* Linear layers (costmodel.md 1.1; GQA/SwiGLU per 1.6). */
	/* per linear layer: QKV, attention out, MLP up (and gate), MLP down */
	{
		/* N, K of each */
		dims[0][0] = (qd + 2 * kvd) / t; dims[0][1] = h;
		dims[1][0] = h;                  dims[1][1] = qd / t;
		dims[2][0] = up_n;               dims[2][1] = h;
		dims[3][0] = h;                  dims[3][1] = f / t;
		int i;
		gemm_f = gemm_b = gemm_w = 0;
		for (i = 0; i < 4; i++) {
			lin_w[i] = linear_wgrad(g, p, T, dims[i][0], dims[i][1]);
			gemm_f += linear_fwd(g, p, T, dims[i][0], dims[i][1]);
			gemm_b += linear_dgrad(g, p, T, dims[i][0], dims[i][1]);
			gemm_w += lin_w[i];
		}
	}
	/* Core attention; keys span the whole sequence under CP. */
	tpp_attn_core_time(g, p, o->attn, b * heads_local, b * m->kv_heads / t, sl, s, dh,
			   &attn_f, &attn_b);

	/*
	 * Element-wise HBM traffic, forward (bytes; 16-bit activations).
	 * Each fused kernel reads its inputs and writes its output, sizes as
	 * in Korthikanti et al. Table 2:  LayerNorm 2+2 per token*h (x2),
	 * bias-dropout-add 2+2 read, 2 write, 1 mask (x2), MLP activation
	 * read the fc1 output(s), write the activation; softmax and its
	 * dropout on the a*s*s scores (unfused attention only).
	 */
	{
		double bda = m->dropout ? 7.0 : 6.0;
		double act_rw = m->mlp == TPP_MLP_SWIGLU ? 6.0 * f / t : 4.0 * f / t;
		ew_f = T * h * (4.0 + bda + 4.0 + bda) * rep + T * act_rw;
		ew_attn_f = 0;
		if (o->attn == TPP_ATTN_UNFUSED) {
			double scores = b * heads_local * sl * s; /* elements */
			ew_attn_f = scores * (4.0 + (m->dropout ? 5.0 : 0.0));
		}
	}

	/*
	 * FP8 quantization (Transformer Engine's fused cast-transpose): every
	 * Linear input is read in bf16 and written as fp8 plus its fp8
	 * transpose for the weight gradient, 4 bytes per element; in backward
	 * the same for every output gradient.  Current scaling reads each
	 * tensor once more first, to find its amax ("two tensor reads per
	 * quantization", TE docs, FP8 Delayed Scaling page): 6 bytes.  The
	 * gathered [T, h] inputs of QKV and fc1 (SP) are counted whole.
	 * Weights are quantized once per step (cached across micro-batches),
	 * not counted.
	 */
	fp8_f = fp8_b = 0;
	if (p == TPP_PREC_FP8) {
		double per_elem = o->fp8_recipe == TPP_FP8_CURRENT ? 6.0 : 4.0;
		fp8_f = per_elem * T * (h + qd / t + h + f / t);
		fp8_b = per_elem * T * ((qd + 2 * kvd) / t + h + up_n + h);
	}

	lc->fwd_s = gemm_f + attn_f + mem_time(g, ew_f) + mem_time(g, ew_attn_f) +
		    mem_time(g, fp8_f);
	/* Backward: GEMMs as dgrad + wgrad, core attention per
	 * tpp_attn_core_time, element-wise about twice the forward traffic
	 * (read saved input and incoming gradient, write the outgoing
	 * gradient). */
	lc->bwd_in_s = gemm_b + attn_b + 2 * (mem_time(g, ew_f) + mem_time(g, ew_attn_f)) +
		       mem_time(g, fp8_b);
	lc->bwd_w_s = gemm_w;
	lc->bwd_s = lc->bwd_in_s + lc->bwd_w_s;

	/* in the model FLOPs' convention (attention non-causal, as
	 * tpp_cost_flops_doc), so that hardware FLOPs are the model's plus
	 * the recomputation counted alike, whatever the kernel skips */
	lc->flops_fwd = 2.0 * T * h * ((qd + 2 * kvd) / t + qd / t + up_n + f / t) +
			4.0 * T * s * dh * heads_local;

	/* Tensor-parallel collectives (costmodel.md 2.1, 2.2): forward 2
	 * all-reduces of b*s*h (or 2 all-gathers + 2 reduce-scatters with
	 * SP, same bus traffic); backward the same. */
	if (l->tp > 1) {
		double msg = T * h * act_elem_bytes(p);
		if (l->sp)
			tp_one = 2 * (tpp_coll_time(c, TPP_COLL_ALL_GATHER, msg, l->tp, 1) +
				      tpp_coll_time(c, TPP_COLL_REDUCE_SCATTER, msg, l->tp, 1));
		else
			tp_one = 2 * tpp_coll_time(c, TPP_COLL_ALL_REDUCE, msg, l->tp, 1);
	} else {
		tp_one = 0;
	}
	lc->tp_fwd_s = tp_one;
	lc->tp_bwd_s = tp_one;
	lc->tp_recomp_s = l->recompute == TPP_RECOMPUTE_FULL ? tp_one : 0;
	/* Megatron SP keeps only the sequence-sharded input of the QKV and
	 * fc1 GEMMs and all-gathers it again in backward for the weight
	 * gradient (costmodel.md 2.2; Korthikanti et al. 2022 sec. 4.2.2):
	 * 2 more all-gathers per layer.  Korthikanti Table 4 shows them
	 * exposed: SP saves 0.5 ms of the 22B forward but only 0.1 ms of its
	 * backward. */
	if (l->sp && l->tp > 1)
		lc->tp_bwd_s += 2 * tpp_coll_time(c, TPP_COLL_ALL_GATHER,
						  T * h * act_elem_bytes(p),
						  l->tp, 1);

	/* Context parallelism (costmodel.md 2.5): K,V of the local chunk go
	 * round the ring, c-1 steps forward, twice that backward; overlapped
	 * with the attention blocks, so only the excess is exposed. */
	if (l->cp > 1) {
		double kv = 2.0 * b * sl * kvd / t * 2.0;
		double ring = (cp - 1) * tpp_coll_time(c, TPP_COLL_SEND_RECV, kv, l->cp, l->tp);
		double exposed_f = ring - k * attn_f;
		double exposed_b = 2 * ring - k * attn_b;
		double share = overlap_share(&c->tiers[tpp_cluster_tier_for(c, l->cp, l->tp)]);
		lc->cp_f_s = exposed_f > 0 ? exposed_f : 0;
		lc->cp_b_s = exposed_b > 0 ? exposed_b : 0;
		/* the hidden transfers' kernels slow the attention beside them */
		lc->fwd_s += share * fmin(ring, attn_f);
		lc->bwd_in_s += share * fmin(2 * ring, attn_b);
		lc->bwd_s = lc->bwd_in_s + lc->bwd_w_s;
	} else {
		lc->cp_f_s = lc->cp_b_s = 0;
	}

	/* Recomputation (costmodel.md 1.7). */
	switch (l->recompute) {
	case TPP_RECOMPUTE_FULL:
		lc->recomp_s = lc->fwd_s;
		lc->flops_recomp = lc->flops_fwd;
		/* the forward's collectives run again (lc->tp_recomp_s) */
		break;
	case TPP_RECOMPUTE_SELECTIVE:
		lc->recomp_s = attn_f + mem_time(g, ew_attn_f);
		lc->flops_recomp = 4.0 * T * s * dh * heads_local;
		break;
	default:
		lc->recomp_s = 0;
		lc->flops_recomp = 0;
	}
	/* Full and selective recompute re-run the attention core, whose K/V
	 * ring under CP runs again beside it: its exposed forward part once
	 * more, in the backward (as the TP collectives, tp_recomp_s). */
	lc->cp_recomp_s = l->recompute != TPP_RECOMPUTE_NONE ? lc->cp_f_s : 0;
	lc->cp_b_s += lc->cp_recomp_s;

	/*
	 * TP communication overlap (Megatron --tp-comm-overlap, Transformer
	 * Engine userbuffers; needs SP, costmodel.md 5.1), with TE's default
	 * method per GEMM (transformer_engine/pytorch/module/base.py,
	 * initialize_ub):
	 *   ring_exchange (qkv / fc1 forward, proj / fc2 dgrad): the
	 *     all-gather runs as tp point-to-point steps on the copy engines
	 *     while the GEMM runs in tp chunks of T/tp rows, one per arrived
	 *     shard: tp GEMMs of T/tp rows (their own wave quantization, the
	 *     weight read tp times), each step max(chunk GEMM, transfer);
	 *   pipeline (proj / fc2 forward, GEMM then reduce-scatter): 4 chunks
	 *     of T/4 rows, each reduce-scattered while the next is computed,
	 *     the GEMM on all SMs but the 16 the reduction kernels use
	 *     (num_sm 16, set_sm_margin); the last chunk's reduce-scatter
	 *     is exposed;
	 *   bulk (qkv / fc1 dgrad beside the re-gather of their input, their
	 *     wgrad beside the reduce-scatter of the dgrad output): the GEMM
	 *     on all SMs but 16, the collective whole beside it.
	 * proj / fc2 wgrad have no collective.  What a method cannot hide
	 * stays in tp_*_s; the slower, chunked or SM-reduced GEMMs are the
	 * compute part.
	 */
	if (l->tp_overlap && l->sp && l->tp > 1) {
		const int ub_sms = 16;   /* TE default num_sm, pipeline and bulk */
		const double splits = 4; /* TE default num_splits, pipeline */
		double msg = T * h * act_elem_bytes(p);
		double ag = tpp_coll_time(c, TPP_COLL_ALL_GATHER, msg, l->tp, 1);
		double rs = tpp_coll_time(c, TPP_COLL_REDUCE_SCATTER, msg, l->tp, 1);
		double rs_c = tpp_coll_time(c, TPP_COLL_REDUCE_SCATTER, msg / splits, l->tp, 1);
		double step = ag / (t - 1);  /* one ring-exchange transfer */
		double cf = 0, xf = 0, cd = 0, cw = 0, xb = 0;
		int i;
		for (i = 0; i < 4; i++) {
			double N = dims[i][0], K = dims[i][1], gc, tot;
			if (i == 0 || i == 2) {
				/* forward AG + GEMM, ring exchange */
				gc = gemm_time(g, p, T / t, N, K, 1);
				tot = k * gc + (t - 1) * fmax(k * gc, step);
				cf += t * gc;
				xf += tot - t * k * gc;
				/* dgrad beside the input re-gather (bulk), wgrad
				 * beside the dgrad's reduce-scatter (bulk) */
				gc = gemm_time_sms(g, p, T, K, N, 1, ub_sms);
				cd += gc;
				xb += fmax(0, ag - k * gc);
				gc = gemm_time_sms(g, p, K, N, T, 1, ub_sms);
				cw += gc;
				xb += fmax(0, rs - k * gc);
			} else {
				/* forward GEMM + RS, pipeline in 4 chunks */
				gc = gemm_time_sms(g, p, T / splits, N, K, 1, ub_sms);
				tot = k * gc + (splits - 1) * fmax(k * gc, rs_c) + rs_c;
				cf += splits * gc;
				xf += tot - splits * k * gc;
				/* dgrad: AG of the output gradient + GEMM, ring
				 * exchange; wgrad alone */
				gc = gemm_time(g, p, T / t, K, N, 1);
				tot = k * gc + (t - 1) * fmax(k * gc, step);
				cd += t * gc;
				xb += tot - t * k * gc;
				cw += lin_w[i];
			}
		}
		lc->fwd_s += cf - gemm_f;
		lc->tp_fwd_s = xf;
		lc->bwd_in_s += cd - gemm_b;
		lc->bwd_w_s += cw - gemm_w;
		lc->tp_bwd_s = xb;
		if (l->recompute == TPP_RECOMPUTE_FULL) {
			lc->recomp_s += cf - gemm_f;
			lc->tp_recomp_s = xf;
		}
		lc->bwd_s = lc->bwd_in_s + lc->bwd_w_s;
	}
	lc->tp_bwd_s += lc->tp_recomp_s; /* counted with the backward */
}

/* ------------------------------------------------------------------------ */
/* Memory (costmodel.md 3)                                                   */

/*
 * Activation bytes stored per layer per micro-batch on one GPU.
 * Korthikanti et al. 2022 Table 2, generalised for GQA, SwiGLU and
 * no-dropout models as in costmodel.md 3.3:
 *   replicated across TP unless SP:  LN inputs 4sbh + attention/MLP inputs
 *                                    4sbh + dropout masks 2sbh (if dropout)
 *   split by TP:  Q 2 s b q_dim, K and V 2 s b kv_dim each, out-proj input
 *                 2 s b q_dim, MLP: GeLU 4 s b f (input + fc2 input),
 *                 SwiGLU 6 s b f (gate, up, product)
 *   attention scores (unfused, not recomputed):  softmax out 2as^2b,
 *                 dropout mask as^2b + output 2as^2b  (5as^2b with dropout)
 *   flash attention keeps the fp32 softmax statistics 4 a s b instead.
 *   full recompute keeps only the layer input 2sbh (/t with SP).
 */
static double act_per_layer(const struct tpp_model *m,
			    const struct tpp_cost_opts *o,
			    const struct tpp_layout *l)
{
	double t = l->tp, s = (double)m->seq / l->cp, b = l->mbs, h = m->hidden;
	double S = m->seq; /* keys span the full sequence */
	double qd = (double)m->heads * m->head_dim;
	double kvd = (double)m->kv_heads * m->head_dim;
	double f = m->ffn, a = m->heads;
	double rep = l->sp ? 1.0 / t : 1.0;
	double replicated, split, scores, lin, out_proj;

	if (l->recompute == TPP_RECOMPUTE_FULL)
		return 2.0 * s * b * h * rep;
	/*
	 * FP8: Transformer Engine's Linear and LayerNormLinear keep the input
	 * they need for the weight gradient quantized, 1 byte per element
	 * (linear.py / layernorm_linear.py: the quantized input, column-wise
	 * (transposed) usage only unless SP must gather it, saved in place of
	 * the 16-bit one; the LayerNorm writes its output quantized).  So the
	 * QKV and FC1 inputs (the LN outputs) and the FC2 input take 1 byte.
	 * The out-projection's input is the attention output, which flash
	 * attention keeps in 16 bits for its own backward: the fp8 copy adds
	 * 1 byte there; unfused, or under selective recompute (the attention
	 * core is checkpointed: only its inputs Q, K, V are kept, its output
	 * and softmax statistics are recomputed), nothing else keeps it
	 * (1 byte).
	 */
	int flash_keeps = o->attn == TPP_ATTN_FLASH && l->recompute != TPP_RECOMPUTE_SELECTIVE;
	lin = o->prec == TPP_PREC_FP8 ? 1.0 : 2.0;
	out_proj = o->prec != TPP_PREC_FP8 ? 2.0 : flash_keeps ? 3.0 : 1.0;
	/* LN inputs 4, QKV and FC1 inputs 2 lin, dropout masks 2 */
	replicated = s * b * h * (4.0 + 2.0 * lin + (m->dropout ? 2.0 : 0.0));
	/* Q, K, V; out-projection input; GeLU input (SwiGLU: gate and up)
	 * and the FC2 input */
	split = s * b * (2.0 * qd + 4.0 * kvd + out_proj * qd +
			 ((m->mlp == TPP_MLP_SWIGLU ? 4.0 : 2.0) + lin) * f);
	if (flash_keeps)
		scores = 4.0 * a * s * b; /* fp32 softmax statistics (log-sum-exp) */
	else if (l->recompute == TPP_RECOMPUTE_SELECTIVE || o->attn == TPP_ATTN_FLASH)
		scores = 0;
	else
		scores = (m->dropout ? 5.0 : 2.0) * a * s * S * b;
	return replicated * rep + (split + scores) / t;
}

/*
 * ZB-H1's deferred weight gradients (Qi et al. 2024): after a
 * micro-batch's input-gradient pass B, its weight-gradient pass W still
 * needs each linear layer's input X and the gradient dY of its output
 * (dW = X^T dY), per layer per micro-batch and TP rank:
 *   X   QKV and FC1 inputs (the LayerNorm outputs) lin s b h, split by SP;
 *       out-projection input lin s b qd / t; FC2 input lin s b f / t
 *       (lin: 2 bytes, 1 under FP8, as act_per_layer keeps them);
 *   dY  QKV 2 s b (qd + 2 kvd) / t; out-projection and FC2 2 s b h (a
 *       row-parallel layer's output gradient is whole on every TP rank,
 *       all-gathered under SP); FC1 2 s b up / t (SwiGLU: gate and up).
 * Without TP, 16-bit, GeLU, qd = h, f = 4h: 32 s b h [derived].  As a
 * share of what a forward keeps per layer (act_per_layer; block
 * recompute: the chunk's mix of checkpointed and whole layers): under
 * full recompute W holds the recomputed inputs, many times the
 * checkpoint.
 */
double tpp_zb_w_share(const struct tpp_model *m, const struct tpp_cost_opts *o,
		      const struct tpp_layout *l)
{
	double t = l->tp, s = (double)m->seq / l->cp, b = l->mbs, h = m->hidden;
	double qd = (double)m->heads * m->head_dim;
	double kvd = (double)m->kv_heads * m->head_dim;
	double f = m->ffn, up = (m->mlp == TPP_MLP_SWIGLU ? 2.0 : 1.0) * f;
	double rep = l->sp ? 1.0 / t : 1.0;
	double lin = o->prec == TPP_PREC_FP8 ? 1.0 : 2.0;
	double x = s * b * (2.0 * lin * h * rep + lin * (qd + f) / t);
	double dy = s * b * (2.0 * (qd + 2.0 * kvd + up) / t + 4.0 * h);
	double kept = act_per_layer(m, o, l);
	if (l->recompute == TPP_RECOMPUTE_FULL && l->recompute_layers > 0) {
		struct tpp_layout ln = *l;
		double phi = tpp_recompute_share(m, l);
		ln.recompute = TPP_RECOMPUTE_NONE;
		ln.recompute_layers = 0;
		kept = phi * kept + (1.0 - phi) * act_per_layer(m, o, &ln);
	}
	return kept > 0 ? (x + dy) / kept : 0;
}

double tpp_zb_budget(int p, int m, double share)
{
	double n = p < m ? p : m;
	return n * (share > 1.0 ? share : 1.0);
}

int tpp_zb_last_deferred(int p, int m, double share)
{
	/* the last rank starts a forward with none in flight: max(1, s) +
	 * s k <= n max(1, s), so k <= (n - 1) max(1, s) / s W's wait then,
	 * and one more after its last forward's B */
	double n = p < m ? p : m, mx = share > 1.0 ? share : 1.0;
	double k = share > 0 ? floor((n - 1.0) * mx / share + 1e-9) + 1.0 : m;
	return k < m ? (int)k : m;
}

/* Bytes of one gradient element: fp32 main gradients, or the 16-bit
 * training type with o->grads16. */
static double grad_elem_bytes(const struct tpp_cost_opts *o)
{
	return o->grads16 ? 2.0 : 4.0;
}

/* Bytes per parameter for mixed-precision Adam (costmodel.md 3.1,
 * Megatron: 16-bit param 2, fp32 main grad 4, fp32 master 4, Adam m and v
 * 8), by what ZeRO shards over d.  ZeRO-2/3 under pipelining
 * (tpp_zero_pipelined) hold the gathered 16-bit parameters and the
 * unsharded gradients through the step: FSDP2 accumulates them in its
 * reduce dtype (fp32, TorchTitan's default mixed_precision_reduce) when
 * gradient sync is off, beside the fp32 sharded master and Adam states;
 * the sharded fp32 gradient appears only when the reduce-scatter frees the
 * unsharded one (zero_grad sets it to None between steps): at the peak
 * 2 + 4 + 12/d, as ZeRO-1. */
static void state_bytes(const struct tpp_cost_opts *o, const struct tpp_layout *l,
			double d, double *w, double *gr, double *opt)
{
	*w = 2.0;
	*gr = grad_elem_bytes(o);
	*opt = 12.0;
	if (l->zero >= 1)
		*opt /= d;
	if (tpp_zero_pipelined(l))
		return;
	if (l->zero >= 2)
		*gr /= d;
	if (l->zero >= 3)
		*w /= d;
}

/* ------------------------------------------------------------------------ */

/* Pipeline work of one micro-batch                                          */

int tpp_chunk_layers(int layers, int nchunks, int k)
{
	/*
	 * As even as possible; the remainder goes to the middle chunks first,
	 * since the first chunk also runs the embedding and the last the LM
	 * head and loss (costmodel.md 4.3), then to the first chunk.
	 */
	int base = layers / nchunks, rem = layers % nchunks;
	if (nchunks <= 2)
		return base + (k < rem);
	if (k >= 1 && k <= nchunks - 2)
		return base + (k <= rem);
	if (k == 0)
		return base + (rem > nchunks - 2);
	return base;
}

int tpp_max_chunk_layers(const struct tpp_model *m, const struct tpp_layout *l)
{
	int n = l->pp * l->vp;
	return n > 0 ? (m->layers + n - 1) / n : m->layers;
}

/*
 * Share of all layers that full recompute re-runs: every layer, or with
 * block recompute the first recompute_layers of each of the pp*vp model
 * chunks (Megatron --recompute-method block, per model chunk).  The cost
 * model spreads it evenly over the layers: a rank's chunks are within one
 * layer of each other.
 */
double tpp_recompute_share(const struct tpp_model *m, const struct tpp_layout *l)
{
	int n = l->pp * l->vp, k, sum = 0;
	if (l->recompute != TPP_RECOMPUTE_FULL)
		return l->recompute == TPP_RECOMPUTE_NONE ? 0.0 : 1.0;
	if (l->recompute_layers <= 0 || n < 1)
		return 1.0;
	for (k = 0; k < n; k++) {
		int lk = tpp_chunk_layers(m->layers, n, k);
		sum += lk < l->recompute_layers ? lk : l->recompute_layers;
	}
	return (double)sum / m->layers;
}

/* One layer's parameters on one GPU: the TP-sharded ones over tp, the
 * replicated ones (norms) whole. */
static double layer_params_gpu(const struct tpp_model *m, double tp)
{
	double rep = tpp_model_params_per_layer_replicated(m);
	return (tpp_model_params_per_layer(m) - rep) / tp + rep;
}

/* Everything per micro-batch that the analytic step and the simulator share. */
struct work {
	struct layer_cost lc;
	double emb_f, emb_b, emb_tp;        /* first chunk */
	double head_f, head_b, head_w, head_tp; /* last chunk */
	double emb_tp_b, head_tp_f;         /* SP: embedding backward all-gather,
					       LM-head forward all-gather */
	double p2p_one;                     /* one boundary transfer */
	double T;                           /* tokens per GPU per micro-batch */
};

static void work_compute(const struct tpp_model *m, const struct tpp_cluster *c,
			 const struct tpp_cost_opts *o, const struct tpp_layout *l,
			 double k, struct work *w)
{
	const struct tpp_gpu *g = &c->gpu;
	enum tpp_prec p = o->prec;
	double t = l->tp, h = m->hidden;
	double T = (double)l->mbs * m->seq / l->cp;
	double Vp = tpp_vocab_padded(m, l->tp);
	double ab = act_elem_bytes(p);

	w->T = T;
	layer_cost(m, c, o, l, k, &w->lc);
	/* Embedding (first chunk): the lookup is a gather (memory-bound);
	 * the vocab-parallel embedding all-reduces its output (costmodel.md
	 * 2.1), reduce-scatters it under SP. */
	w->emb_f = mem_time(g, T * h * ab * 2);
	w->emb_b = mem_time(g, T * h * ab * 2 + T * h * 4);
	w->emb_tp = l->tp > 1 ? tpp_coll_time(c, l->sp ? TPP_COLL_REDUCE_SCATTER : TPP_COLL_ALL_REDUCE,
					       T * h * ab, l->tp, 1) : 0;
	/* under SP the reduce-scatter's backward is an all-gather of the
	 * output gradient (Megatron's reduce_scatter_to_sequence_parallel_region) */
	w->emb_tp_b = l->tp > 1 && l->sp ? tpp_coll_time(c, TPP_COLL_ALL_GATHER, T * h * ab, l->tp, 1) : 0;
	/*
	 * LM head (last chunk): logits GEMM over V/t, Megatron's
	 * vocab-parallel cross-entropy (tensor_parallel/cross_entropy.py,
	 * unfused) on the T x V/t logits, and the backward collective of its
	 * input gradient.  The cross-entropy is a chain of separate
	 * element-wise kernels over the logits, bytes per logit:
	 *   forward:  cast to fp32 (read 2, write 4), max (read 4), subtract
	 *             the max in place (4 + 4), exp in place (4 + 4), sum
	 *             (read 4), divide by the sum in place, kept as the
	 *             softmax for backward (4 + 4)                     = 38
	 *   backward: scale the softmax by the loss gradient in place
	 *             (4 + 4), cast back to 16 bits (4 + 2)            = 14
	 * (the target gather and the b*s-sized all-reduces are negligible).
	 */
	w->head_f = linear_fwd(g, prec16(g, p), T, Vp / t, h) + mem_time(g, T * Vp / t * 38.0);
	w->head_b = linear_dgrad(g, prec16(g, p), T, Vp / t, h) + mem_time(g, T * Vp / t * 14.0);
	w->head_w = linear_wgrad(g, prec16(g, p), T, Vp / t, h);
	w->head_tp = l->tp > 1 ? tpp_coll_time(c, l->sp ? TPP_COLL_REDUCE_SCATTER : TPP_COLL_ALL_REDUCE,
						T * h * ab, l->tp, 1) : 0;
	/* under SP the LM head (a ColumnParallelLinear with
	 * sequence_parallel) all-gathers its sequence-sharded input in
	 * forward; its backward reduce-scatters the input gradient */
	w->head_tp_f = l->tp > 1 && l->sp ? tpp_coll_time(c, TPP_COLL_ALL_GATHER, T * h * ab, l->tp, 1) : 0;
	w->p2p_one = 0;
}

/*
 * The per-micro-batch work depends on (tp, cp, mbs, sp, tp_overlap,
 * recompute) only;
 * the planner's inner loops vary the other fields, so a small cache of
 * recent results saves most GEMM and collective evaluations.
 */
/* Direct-mapped: a key hashes to one of TPP_CACHE_SLOTS slots, a miss
 * replaces it.  256 slots hold every (tp, cp, mbs, sp, overlap,
 * recompute) combination a search's inner loops revisit. */
#define TPP_CACHE_SLOTS 256
#define TPP_PEAK_SLOTS 64
struct tpp_cost_cache {
	const void *m, *c, *o;  /* what the entries were computed for */
	double straggler_gpus, straggler_k; /* last tpp_straggler_factor */
	struct {
		int valid, tp, cp, mbs, sp, tp_overlap, recompute;
		double k; /* the straggler factor it was computed with */
		struct work w;
	} e[TPP_CACHE_SLOTS];
	/* interleaved activation peaks with uneven chunks, per rank in
	 * layers (tpp_interleaved_peak of the chunks' layer counts), which
	 * depend only on (pp, vp, micro-batches) for one model */
	struct {
		int valid, layers, pp, vp, mb;
		double peak[TPP_MAX_CHUNKS];
	} peak[TPP_PEAK_SLOTS];
};

struct tpp_cost_cache *tpp_cost_cache_new(void)
{
	return calloc(1, sizeof(struct tpp_cost_cache));
}

void tpp_cost_cache_free(struct tpp_cost_cache *cache)
{
	free(cache);
}

/*
 * Identical GPUs are not equally fast: across large clusters Sinha et al.
 * (SC22, arXiv 2208.11035, "Not All GPUs Are Created Equal") measured an
 * 8 % average performance variation between GPUs of one SKU (power
 * management and manufacturing spread; arXiv v3 -- the SC22 abstract
 * quotes 32 % under a broader definition).  Read as a +-2 sigma range,
 * sigma = 2 % of the median GPU's speed (o->gpu_speed_sigma, an
 * interpretation: `--gpu-variation` sets another).  A synchronous
 * step (TP collectives every layer, pipeline hand-offs every micro-batch,
 * the DP reduction every step) waits for the slowest of its N GPUs, whose
 * expected shortfall for normally spread speeds is sigma times the
 * expected largest of N standard normal draws (normal_max_mean).  Compute
 * time scales by that; the measured GEMM ceiling is one (median) GPU's.
 */
/*
 * Expected largest of n independent standard normal draws, by Blom's
 * (1958) plotting position: E[max] ~ Phi^-1((n - 0.375) / (n + 0.25)),
 * within 0.03 of the exact value for every n, 0.016 from n = 10 up to
 * 2^24 (exact 1.424 for 8, 2.344 for 64, 3.248 for 1024; Blom 1.434,
 * 2.337, 3.234: low by up to 0.016 from n = 200 up).  The Gumbel limit
 * sqrt(2 ln n) is only its leading term and overstates it by 43 % at 8,
 * 23 % at 64 and 15 % at 1024 (2.04, 2.88, 3.72).  Phi^-1 is GSL's.
 */
static double normal_max_mean(double n)
{
	return gsl_cdf_ugaussian_Pinv((n - 0.375) / (n + 0.25));
}

double tpp_straggler_factor(const struct tpp_cost_opts *o, double gpus)
{
	if (gpus < 2 || o->gpu_speed_sigma <= 0)
		return 1.0;
	return 1.0 + o->gpu_speed_sigma * normal_max_mean(gpus);
}

static void work_get(const struct tpp_model *m, const struct tpp_cluster *c,
		     const struct tpp_cost_opts *o, const struct tpp_layout *l,
		     struct tpp_cost_cache *cache, struct work *w)
{
	double gpus = (double)l->tp * l->pp * l->dp * l->cp, k;
	int i;
	if (cache && (cache->m != m || cache->c != c || cache->o != o)) {
		memset(cache, 0, sizeof(*cache));
		cache->m = m;
		cache->c = c;
		cache->o = o;
	}
	/* The slowest GPU paces a synchronous step (tpp_straggler_factor);
	 * a search keeps the GPU count: one log and sqrt per search */
	if (cache && cache->straggler_gpus == gpus) {
		k = cache->straggler_k;
	} else {
		k = tpp_straggler_factor(o, gpus);
		if (cache) {
			cache->straggler_gpus = gpus;
			cache->straggler_k = k;
		}
	}
	if (cache) {
		{
			unsigned hsh = (unsigned)l->tp * 2654435761u ^
				       (unsigned)l->cp * 40503u ^
				       (unsigned)l->mbs * 2246822519u ^
				       (unsigned)(l->sp + 2 * l->tp_overlap + 4 * (int)l->recompute) * 3266489917u;
			i = (int)((hsh ^ (hsh >> 15)) % TPP_CACHE_SLOTS);
		}
		if (cache->e[i].valid && cache->e[i].tp == l->tp &&
		    cache->e[i].cp == l->cp && cache->e[i].mbs == l->mbs &&
		    cache->e[i].sp == l->sp &&
		    cache->e[i].tp_overlap == l->tp_overlap &&
		    cache->e[i].recompute == (int)l->recompute && cache->e[i].k == k) {
			*w = cache->e[i].w;
		} else {
			work_compute(m, c, o, l, k, w);
			cache->e[i].valid = 1;
			cache->e[i].tp = l->tp;
			cache->e[i].cp = l->cp;
			cache->e[i].mbs = l->mbs;
			cache->e[i].sp = l->sp;
			cache->e[i].tp_overlap = l->tp_overlap;
			cache->e[i].recompute = (int)l->recompute;
			cache->e[i].k = k;
			cache->e[i].w = *w;
		}
	} else {
		work_compute(m, c, o, l, k, w);
	}
	/* every compute time at the slowest GPU's pace */
	{
		struct layer_cost *lc = &w->lc;
		lc->fwd_s *= k;
		lc->bwd_s *= k;
		lc->bwd_in_s *= k;
		lc->bwd_w_s *= k;
		lc->recomp_s *= k;
		w->emb_f *= k;
		w->emb_b *= k;
		w->head_f *= k;
		w->head_b *= k;
		w->head_w *= k;
	}
	/*
	 * ZeRO-3 / FSDP with overlap: each layer's parameter gather (and its
	 * gradient reduce-scatter) runs beside that layer's compute (the
	 * exposure is priced in tpp_cost_eval); the collective kernels slow
	 * the compute they hide behind by the tier's share.  Here, past the
	 * per-layer cache, as it depends on dp and the ZeRO stage.
	 */
	if (tpp_zero_per_microbatch(l) && o->dp_overlap && (long long)l->dp * l->cp > 1) {
		struct layer_cost *lc = &w->lc;
		int nd = l->dp * l->cp;
		double pl = layer_params_gpu(m, l->tp);
		double share = overlap_share(&c->tiers[tpp_cluster_tier_for(c, nd, l->tp)]);
		double ag = zero3_coll_time(c, o, TPP_COLL_ALL_GATHER, pl * 2.0, nd, l->tp);
		double rs = zero3_coll_time(c, o, TPP_COLL_REDUCE_SCATTER, pl * grad_elem_bytes(o),
					    nd, l->tp);
		lc->fwd_s += share * fmin(ag, lc->fwd_s);
		if (l->recompute == TPP_RECOMPUTE_FULL)
			lc->recomp_s += share * fmin(ag, lc->recomp_s);
		lc->bwd_in_s += share * fmin(ag + rs, lc->bwd_in_s + lc->bwd_w_s);
		lc->bwd_s = lc->bwd_in_s + lc->bwd_w_s;
	}

	/* Block recompute re-runs only a share of the layers (and of their
	 * forward TP collectives): per layer on average. */
	if (l->recompute == TPP_RECOMPUTE_FULL && l->recompute_layers > 0) {
		struct layer_cost *lc = &w->lc;
		double phi = tpp_recompute_share(m, l);
		lc->tp_bwd_s -= (1.0 - phi) * lc->tp_recomp_s;
		lc->tp_recomp_s *= phi;
		lc->cp_b_s -= (1.0 - phi) * lc->cp_recomp_s;
		lc->cp_recomp_s *= phi;
		lc->recomp_s *= phi;
		lc->flops_recomp *= phi;
	}
	/*
	 * Pipeline P2P (costmodel.md 2.3): b*s*h per boundary per direction,
	 * over the tier joining ranks tp*cp*dp apart.  What each TP rank
	 * sends:
	 *   SP          its sequence shard, 1/t of it (Megatron-Core's
	 *               get_tensor_shapes divides the sequence by tp);
	 *   no SP, legacy scatter/gather (Megatron-LM before Megatron-Core,
	 *               SC21 sec. 4.1, o->p2p_scatter_gather): 1/t, and the
	 *               receiver all-gathers the whole tensor over the TP
	 *               group before it can use it;
	 *   no SP, Megatron-Core: the whole tensor, every TP rank to its
	 *               peer (its schedules send [s, b, h] unless SP).
	 */
	w->p2p_one = 0;
	if (l->pp > 1) {
		double whole = w->T * m->hidden * act_elem_bytes(o->prec);
		int split = l->sp || o->p2p_scatter_gather;
		w->p2p_one = tpp_coll_time(c, TPP_COLL_SEND_RECV,
					   split ? whole / l->tp : whole, l->pp,
					   l->tp * l->cp * l->dp);
		if (!l->sp && o->p2p_scatter_gather && l->tp > 1)
			w->p2p_one += tpp_coll_time(c, TPP_COLL_ALL_GATHER, whole,
						    l->tp, 1);
	}
}



/* Forward / input-gradient / weight-gradient time of chunk k of n. */
static void chunk_fbw(const struct tpp_model *m, const struct work *w, int n,
		      int k, double *f, double *b, double *wg)
{
	const struct layer_cost *lc = &w->lc;
	double nl = tpp_chunk_layers(m->layers, n, k);
	*f = nl * layer_fwd_cover(lc);
	*b = nl * layer_bin_cover(lc);
	*wg = nl * lc->bwd_w_s;
	if (k == 0) {
		*f += w->emb_f + w->emb_tp;
		*b += w->emb_b + w->emb_tp_b;
	}
	if (k == n - 1) {
		*f += w->head_f + w->head_tp_f;
		*b += w->head_b + w->head_tp;
		*wg += w->head_w;
	}
}

int tpp_cost_stages(const struct tpp_model *m, const struct tpp_cluster *c,
		    const struct tpp_cost_opts *o, const struct tpp_layout *l,
		    struct tpp_stages *st, struct tpp_err *err)
{
	struct work w;
	int rc, k, n = l->pp * l->vp;

	if ((rc = tpp_layout_check(m, c, l, err)))
		return rc;
	if (n > TPP_MAX_CHUNKS)
		return tpp_err_set(err, TPP_E_INFEASIBLE, NULL, 0, 0,
				   "pp*vp = %d exceeds %d model chunks", n,
				   TPP_MAX_CHUNKS);
	work_get(m, c, o, l, NULL, &w);
	memset(st, 0, sizeof(*st));
	st->pp = l->pp;
	st->vp = l->vp;
	st->nchunks = n;
	st->microbatches = tpp_layout_microbatches(l);
	st->p2p_s = w.p2p_one;
	st->p2p_blocking = tpp_p2p_blocking(o, l);
	for (k = 0; k < n; k++) {
		st->layers[k] = tpp_chunk_layers(m->layers, n, k);
		chunk_fbw(m, &w, n, k, &st->f_s[k], &st->b_s[k], &st->w_s[k]);
	}
	return TPP_OK;
}

/*
 * Parameters held by one GPU of pipeline rank r (costmodel.md 3.2): its
 * layers (TP-split weights / t plus the replicated norms and biases), the
 * embedding (and learned positions) with the first chunk, the LM head (or
 * the tied copy of the embedding) with the last.  Also returns the rank's
 * layer count and whether it holds the first / last chunk.
 */
int tpp_rank_layers(int layers, int pp, int vp, int r)
{
	/* closed form of sum_j tpp_chunk_layers(layers, pp*vp, j*pp + r) */
	int n = pp * vp, base = layers / n, rem = layers % n, cnt = 0, e, rr;
	if (n <= 2) {
		int j;
		for (j = 0; j < vp; j++)
			cnt += j * pp + r < rem;
		return base * vp + cnt;
	}
	/* chunks 1..e get one more; chunk 0 too when rem = n - 1 */
	e = rem < n - 2 ? rem : n - 2;
	rr = r >= 1 ? r : pp;
	if (e >= rr)
		cnt = (e - rr) / pp + 1;
	if (r == 0 && rem == n - 1)
		cnt++;
	return base * vp + cnt;
}

/* What rank_params needs that does not depend on the rank (computed once
 * per layout: the per-rank loops run pp times per evaluation). */
struct rank_param_ctx {
	double layer_gpu; /* one layer's parameters on one GPU */
	double emb, pos;  /* vocab-parallel embedding (or LM head) shard, positions */
	int n;            /* model chunks */
};

static void rank_param_ctx_init(const struct tpp_model *m, const struct tpp_layout *l,
				struct rank_param_ctx *x)
{
	double t = l->tp, h = m->hidden;
	x->layer_gpu = layer_params_gpu(m, t);
	x->emb = (double)tpp_vocab_padded(m, l->tp) * h / t;
	x->pos = m->mlp == TPP_MLP_GELU ? (double)m->seq * h : 0;
	x->n = l->pp * l->vp;
}

static double rank_params(const struct tpp_model *m, const struct tpp_layout *l,
			  const struct rank_param_ctx *x, int r, int *layers_r,
			  int *first, int *last)
{
	double P;
	/* chunk 0 and chunk n-1 live on ranks 0 and p-1 */
	*first = r == 0;
	*last = r == (x->n - 1) % l->pp;
	*layers_r = tpp_rank_layers(m->layers, l->pp, l->vp, r);
	P = *layers_r * x->layer_gpu;
	if (*first)
		P += x->emb + x->pos;
	if (*last && (x->n > 1 || !m->tied))
		P += x->emb;
	return P;
}

/*
 * The ranks whose maximum over all pipeline ranks a per-rank quantity can
 * take, when that quantity is, for the middle ranks 1 .. p-2, built by
 * sums and products of non-negative terms each non-increasing in r (block
 * recompute sums per-chunk terms that grow with the chunk's layers): the
 * rank's layer count
 * (the middle chunks take the remainder from chunk 1 on, tpp_chunk_layers,
 * so each chunk j p + r of rank r holds no fewer layers than that of rank
 * r + 1), its 1F1B in-flight micro-batches min(p - r, m) and its
 * interleaved warm-up 2 (p - r - 1) + (v - 1) p + 1.  Rank 0 (embedding)
 * and rank p-1 (LM head, last chunk) differ and are visited; of the middle
 * ranks only rank 1, which holds the most (the first of equals, as a loop
 * over every rank keeping a strict maximum would pick).  Returns the rank
 * after r: r + 1, or p - 1 after rank 1.
 */
static int next_max_rank(int r, int p)
{
	return r == 1 && p > 3 ? p - 1 : r + 1;
}

/*
 * Interleaved 1F1B activation peak of one pipeline rank (Megatron's
 * forward_backward_pipelining_with_interleaving, costmodel.md 3.4): the
 * rank runs m v chunk-micro-batches; the k-th forward is of its chunk
 * (k / p) mod v, the k-th backward of chunk v - 1 - (k / p) mod v; W =
 * min(2 (p - r - 1) + (v - 1) p, m v) warm-up forwards, then pairs
 * (forward W + i, backward i), then the remaining backwards.  x[j] is
 * what chunk j keeps per micro-batch.  The peak is the largest
 * D(i) = F(W + 1 + i) - B(i) (after a steady forward, before its
 * backward), F / B the sums of the first n forwards / backwards; F(m v)
 * when all are warm-up.  D repeats with period p v and changes at a
 * constant rate while neither sequence changes chunk, so it is walked a
 * run of such steps at a time (at most 2 v runs).  With equal chunks this
 * is (W + 1) x, the closed form; uneven chunks (layers not divisible by
 * p v) can hold more than that later in the steady state, when forwards
 * of heavy early chunks meet backwards of light late ones.
 */
static double seq_sum(const double *pre, int p, int v, long long n)
{
	long long g = n / p, rem = n % p;
	return p * ((double)(g / v) * pre[v] + pre[g % v]) +
	       (double)rem * (pre[g % v + 1] - pre[g % v]);
}

double tpp_interleaved_peak(const double *x, int p, int v, long long m, int r)
{
	double pf[TPP_MAX_CHUNKS + 1], d, best;
	long long T = m * v, W = 2LL * (p - r - 1) + (long long)(v - 1) * p;
	long long i, L, a_mod, b_mod;
	int j, fa, fb;
	TPP_ASSERT(p >= 1 && v >= 1 && v <= TPP_MAX_CHUNKS && m >= 1 && r >= 0 && r < p);
	pf[0] = 0;
	for (j = 0; j < v; j++)
		pf[j + 1] = pf[j] + x[j];
	if (W >= T)
		return seq_sum(pf, p, v, T);
	L = T - W < (long long)p * v ? T - W : (long long)p * v;
	/* walk D(i) = F(W + 1 + i) - B(i), i < L, a run of equal steps at a
	 * time: D(i + 1) - D(i) = x[chunk of forward W + 1 + i] -
	 * x[chunk of backward i], constant while neither changes chunk */
	d = best = seq_sum(pf, p, v, W + 1);
	a_mod = (W + 1) % p;
	fa = (int)(((W + 1) / p) % v);
	b_mod = 0;
	fb = 0;
	for (i = 0; i < L - 1;) {
		long long len = p - a_mod < p - b_mod ? p - a_mod : p - b_mod;
		if (len > L - 1 - i)
			len = L - 1 - i;
		d += (x[fa] - x[v - 1 - fb]) * (double)len;
		if (d > best)
			best = d;
		i += len;
		if ((a_mod += len) == p) {
			a_mod = 0;
			fa = fa + 1 == v ? 0 : fa + 1;
		}
		if ((b_mod += len) == p) {
			b_mod = 0;
			fb = fb + 1 == v ? 0 : fb + 1;
		}
	}
	return best;
}

/* Per-rank interleaved activation peak in layers (chunk k keeping its
 * layer count) into out[0 .. pp-1], from the cache where it has them. */
static const double *peak_layers(const struct tpp_model *m,
				 const struct tpp_layout *l, int mb,
				 struct tpp_cost_cache *cache, double *out)
{
	double x[TPP_MAX_CHUNKS];
	int r, j, slot = 0;
	if (cache) {
		slot = (int)(((unsigned)l->pp * 131u + (unsigned)l->vp * 31u +
			      (unsigned)mb) % TPP_PEAK_SLOTS);
		if (cache->peak[slot].valid && cache->peak[slot].layers == m->layers &&
		    cache->peak[slot].pp == l->pp && cache->peak[slot].vp == l->vp &&
		    cache->peak[slot].mb == mb)
			return cache->peak[slot].peak;
		out = cache->peak[slot].peak;
	}
	for (r = 0; r < l->pp; r++) {
		for (j = 0; j < l->vp; j++)
			x[j] = tpp_chunk_layers(m->layers, l->pp * l->vp, j * l->pp + r);
		out[r] = tpp_interleaved_peak(x, l->pp, l->vp, mb, r);
	}
	if (cache) {
		cache->peak[slot].valid = 1;
		cache->peak[slot].layers = m->layers;
		cache->peak[slot].pp = l->pp;
		cache->peak[slot].vp = l->vp;
		cache->peak[slot].mb = mb;
	}
	return out;
}

/*
 * Parameters per GPU of the unit ZeRO-3 / FSDP gathers at once: a
 * transformer layer (FSDP's wrapping), or with o->zero3_module_gather
 * (pp = 1) one submodule, of which a layer's largest sets what two of them
 * hold: the QKV projection h (q_dim + 2 kv_dim), the output projection
 * q_dim h, the MLP's first Linear h f (SwiGLU: gate and up, 2 h f) or its
 * second f h; each split over the TP ranks.
 */
static double zero3_unit_params(const struct tpp_model *m, const struct tpp_cost_opts *o,
				const struct tpp_layout *l)
{
	double h = m->hidden, f = m->ffn, t = l->tp;
	double qd = (double)m->heads * m->head_dim, kvd = (double)m->kv_heads * m->head_dim;
	double u, fc1 = h * f * (m->mlp == TPP_MLP_SWIGLU ? 2.0 : 1.0);
	if (!o->zero3_module_gather || l->pp > 1)
		return layer_params_gpu(m, l->tp);
	u = fmax(fmax(h * (qd + 2.0 * kvd), qd * h), fmax(fc1, f * h));
	return u / t;
}

/*
 * Memory of the most-loaded rank (costmodel.md 3) into e->mem and e->fits.
 * Under 1F1B rank r holds min(p - r, m) micro-batches of its layers (ZB-H1:
 * tpp_zb_budget on every rank, the budget of its deferred weight
 * gradients, and the last rank the LM head's);
 * interleaving multiplies the first rank's by 1 + (p-1)/(p v) (Korthikanti
 * et al. sec. 4.2.3, Megatron's estimator) when its chunks are equal, and
 * plays the schedule out when they are not (tpp_interleaved_peak).  cache
 * (NULL: none) keeps those per-rank peaks.  The first rank also keeps the
 * input ids and embedding dropout masks (costmodel.md 3.5); the last the
 * LM-head input and the fp32 logits, 4 s b h (1 + V/h) / t.
 */
static void mem_eval(const struct tpp_model *m, const struct tpp_cluster *c,
		     const struct tpp_cost_opts *o, const struct tpp_layout *l,
		     struct tpp_cost_cache *cache, struct tpp_eval *ep)
{
	double t = l->tp, pp = l->pp, d = l->dp, v = l->vp;
	double s = m->seq, h = m->hidden, T = (double)l->mbs * m->seq / l->cp;
	double Vp = tpp_vocab_padded(m, l->tp);
	double params_layer_gpu;
	double apl = act_per_layer(m, o, l), apl_kept = 0;
	double interleave = l->vp > 1 ? 1.0 + (pp - 1) / (pp * v) : 1.0;
	double bmb = l->mbs, best = -1, wb, gb, ob;
	int mb = tpp_layout_microbatches(l), r;
	/* chunks of different layer counts (layers not divisible by pp vp):
	 * the interleaved peak is played out per rank (tpp_interleaved_peak) */
	int uneven = m->layers % (l->pp * l->vp) != 0;
	double peak_buf[TPP_MAX_CHUNKS];
	const double *peaks = NULL;
	struct tpp_mem_breakdown *mem = &ep->mem;

	struct rank_param_ctx rpx;

	rank_param_ctx_init(m, l, &rpx);
	params_layer_gpu = rpx.layer_gpu;
	state_bytes(o, l, d * l->cp, &wb, &gb, &ob);
	/* block recompute: of each of the rank's chunks the first
	 * recompute_layers keep only their input, the others everything */
	if (l->recompute == TPP_RECOMPUTE_FULL && l->recompute_layers > 0) {
		struct tpp_layout ln = *l;
		ln.recompute = TPP_RECOMPUTE_NONE;
		ln.recompute_layers = 0;
		apl_kept = act_per_layer(m, o, &ln);
	}
	/* ZB-H1: the share a deferred W holds, once for every rank */
	double zb_share = l->zb ? tpp_zb_w_share(m, o, l) : 0;
	/*
	 * The layer being recomputed (Chen et al. 2016: checkpointing's
	 * memory is the checkpoints plus the largest recomputed segment's):
	 * Megatron checkpoints each layer on its own (recompute_num_layers
	 * 1, or the block method's individual layers), and its backward
	 * first re-runs that layer's forward for one micro-batch, so for a
	 * while the layer holds everything a layer without recomputation
	 * keeps, of which it had stored apl.  Selective recompute likewise
	 * re-materialises the attention core's output: unfused, its scores
	 * (softmax, mask, dropout: 5 a s^2 b / t); flash, the fp32
	 * log-sum-exp it kept (4 a s b / t).  Transient, one layer and one
	 * micro-batch, beside all the checkpoints of the rank's in-flight
	 * micro-batches (a backward's first layer).  Under block recompute a
	 * chunk's backward starts at its last layers, which keep everything
	 * and are freed before the first recomputed one is re-run (at least
	 * one layer's worth, no less than the working set): only a chunk
	 * all of whose layers are recomputed adds it (in the rank loop).
	 */
	double work = 0;
	if (l->recompute != TPP_RECOMPUTE_NONE) {
		struct tpp_layout ln = *l;
		ln.recompute = TPP_RECOMPUTE_NONE;
		ln.recompute_layers = 0;
		work = act_per_layer(m, o, &ln) - apl;
		if (work < 0)
			work = 0;
	}
	/* uneven interleaved chunks: the played-out peak is not monotone
	 * in the rank (tpp_interleaved_peak), so every rank is visited */
	for (r = 0; r < l->pp;
	     r = l->vp > 1 && uneven ? r + 1 : next_max_rank(r, l->pp)) {
		int layers_r, first, last;
		double P = rank_params(m, l, &rpx, r, &layers_r, &first, &last);
		double inflight, fwd_inflight, held, act, other, total, wcache;
		inflight = fwd_inflight = pp - r < mb ? pp - r : mb;
		/* ZB-H1: every rank may hold its budget (tpp_zb_budget), within
		 * which the simulator's greedy order defers the weight
		 * gradients; forwards in flight, which alone keep the first
		 * rank's input ids and masks, stay the 1F1B count */
		if (l->zb)
			inflight = tpp_zb_budget(l->pp, mb, zb_share);
		/*
		 * fp8 with 16-bit weights (zero 0, tpp_fp8_params): Transformer
		 * Engine keeps each Linear weight quantized from the first
		 * micro-batch to the optimizer step (Megatron passes
		 * is_first_microbatch unless disable_parameter_transpose_cache;
		 * TE's get_weight_workspace caches it rowwise for the forward
		 * GEMM and columnwise for the dgrad GEMM): 2 bytes per layer
		 * parameter (LayerNorm and bias parameters, a few per
		 * thousand, counted too), alive through the step, counted
		 * with the weights.  The LM head and embedding are not TE
		 * layers.
		 */
		wcache = o->prec == TPP_PREC_FP8 && l->zero == 0 ?
			2.0 * layers_r * params_layer_gpu : 0;
		other = 0;
		if (first)
			other += (8.0 * s * bmb + (m->dropout ? s * bmb * h : 0)) *
				 fwd_inflight * interleave / (l->sp ? t : 1.0) / l->cp;
		if (last)
			other += 4.0 * T * h * (1.0 + Vp / h) / t;
		/* ZB-H1's deferred LM-head weight gradient (its W, chunk_fbw)
		 * keeps the logits' 16-bit gradient and the head's input, for
		 * as many micro-batches as the greedy lets wait on the last
		 * rank (tpp_zb_last_deferred: more than min(p, m) where a W
		 * holds less than a forward, e.g. unfused attention) */
		if (last && l->zb)
			other += tpp_zb_last_deferred(l->pp, mb, zb_share) * 2.0 * T * (Vp / t + h);
		/*
		 * Interleaved 1F1B: rank r runs 2 (p - r - 1) + (v - 1) p
		 * warm-up forwards of model chunks, then one more before its
		 * first backward (Megatron's get_pp_rank_microbatches,
		 * costmodel.md 3.4), at most the m v there are: it holds that
		 * many chunks at the peak.  Rank 0: p v + p - 1 chunks =
		 * p (1 + (p-1)/(p v)) micro-batches of all its layers, K22's
		 * factor; the last rank still holds (v - 1) p + 1, not v.
		 */
		held = 2.0 * (pp - r - 1) + (v - 1) * pp + 1;
		if (held > (double)mb * v)
			held = (double)mb * v;
		act = apl * layers_r;
		if (l->vp > 1 && uneven) {
			/*
			 * Chunks of base or base + 1 layers.  Each keeps
			 * A + B * (its layers) per micro-batch: B = apl, A = 0
			 * without block recompute or when it covers every
			 * layer of a chunk (R >= base + 1); else (R <= base)
			 * the first R layers keep apl and the rest apl_kept,
			 * A = (apl - apl_kept) R, B = apl_kept.  The rank
			 * holds `held` chunks at the peak (one forward in, one
			 * backward out in the steady state), so the peak is A
			 * times that plus B times the peak in layers, which
			 * depends only on (pp, vp, micro-batches): cached.
			 */
			int base = m->layers / (l->pp * l->vp), R = l->recompute_layers;
			double A = 0, B = apl;
			if (apl_kept > 0 && R <= base) {
				A = (apl - apl_kept) * R;
				B = apl_kept;
			}
			if (!peaks)
				peaks = peak_layers(m, l, mb, cache, peak_buf);
			act = A * held + B * peaks[r];
		} else {
			if (apl_kept > 0) {
				/* block recompute: of each chunk the layers
				 * past the first recompute_layers keep
				 * everything */
				int j, kept = 0;
				for (j = 0; j < l->vp; j++) {
					int lk = tpp_chunk_layers(m->layers, l->pp * l->vp, j * l->pp + r);
					kept += lk > l->recompute_layers ? lk - l->recompute_layers : 0;
				}
				act = apl * (layers_r - kept) + apl_kept * kept;
			}
			/* 1F1B: inflight micro-batches; interleaved with equal
			 * chunks: held chunks of 1/v of the rank's layers each */
			act *= l->vp > 1 ? held / v : inflight;
		}
		if (work > 0 && l->recompute == TPP_RECOMPUTE_FULL && l->recompute_layers > 0) {
			/* block: does a chunk of this rank recompute all its
			 * layers? */
			int j, all = 0;
			for (j = 0; j < l->vp && !all; j++)
				all = tpp_chunk_layers(m->layers, l->pp * l->vp, j * l->pp + r) <=
				      l->recompute_layers;
			other += all ? work : 0;
		} else {
			other += work;
		}
		total = P * (wb + gb + ob) + wcache + act * o->act_temp_factor + other;
		if (total > best) {
			best = total;
			mem->weights_bytes = P * wb + wcache;
			mem->grads_bytes = P * gb;
			mem->optim_bytes = P * ob;
			mem->act_bytes = act;
			mem->other_bytes = other + act * (o->act_temp_factor - 1.0);
			mem->at_optimizer_step = 0;
		}
		/*
		 * With 16-bit gradients the optimizer step casts its shard
		 * of them to fp32 before Adam (Megatron's
		 * _copy_model_grads_to_main_grads: main_param.grad =
		 * main_grad.float(), the whole rank's parameters without the
		 * distributed optimizer, its 1/(d cp) shard with it): 4 bytes
		 * a shard parameter beside the states, after the activations
		 * are freed.  That is the rank's peak when it exceeds the
		 * one above (ZeRO-0 with few activations: 20 B a parameter
		 * against 16).  FSDP2 under pipelining (tpp_zero_pipelined)
		 * casts the sharded gradient as its reduce-scatter frees the
		 * unsharded one (state_bytes): no extra.
		 */
		if (o->grads16 && !tpp_zero_pipelined(l)) {
			double shard = l->zero >= 1 ? P / (d * l->cp) : P;
			double at_step = P * (wb + gb + ob) + wcache + 4.0 * shard;
			if (at_step > best) {
				best = at_step;
				mem->weights_bytes = P * wb + wcache;
				mem->grads_bytes = P * gb;
				mem->optim_bytes = P * ob + 4.0 * shard;
				mem->act_bytes = 0;
				mem->other_bytes = 0;
				mem->at_optimizer_step = 1;
			}
		}
		if (r == 0) {
			mem->layer_states_bytes = layers_r * params_layer_gpu * (wb + gb + ob);
			mem->layer_act_bytes = act;
		}
	}
	/*
	 * Gathered 16-bit parameters of two units, the one computing and
	 * the one prefetched: layers (FSDP), or a layer's largest Linear
	 * weights (DeepSpeed, o->zero3_module_gather); none with one
	 * data-parallel rank, which holds every parameter already.  Where
	 * the activations peak, at the turn from the last forward to the
	 * backward, one of the two is the LM head (rpx.emb): FSDP keeps the
	 * output layer gathered from its forward into its backward
	 * (TorchTitan's apply_fsdp wraps norm and output with
	 * reshard_after_forward off under its default policy; FSDP1 does not
	 * reshard its root, which holds them), DeepSpeed gathers it as the
	 * backward's first module; beside it the last layer's unit,
	 * prefetched.  So the larger of two units and a unit plus the head
	 * (a 128k vocabulary: Llama 3 8B's head is 2.4 layers).
	 */
	if (tpp_zero_per_microbatch(l) && (long long)l->dp * l->cp > 1) {
		double unit = zero3_unit_params(m, o, l);
		mem->weights_bytes += fmax(2.0 * unit, unit + rpx.emb) * 2.0;
	}
	mem->reserve_bytes = o->mem_reserve_bytes;
	mem->total_bytes = mem->weights_bytes + mem->grads_bytes +
			   mem->optim_bytes + mem->act_bytes + mem->other_bytes +
			   mem->reserve_bytes;
	ep->fits = mem->total_bytes <= c->gpu.hbm_bytes;
}

int tpp_cost_memory(const struct tpp_model *m, const struct tpp_cluster *c,
		    const struct tpp_cost_opts *o, const struct tpp_layout *l,
		    struct tpp_cost_cache *cache, struct tpp_mem_breakdown *mem,
		    int *fits)
{
	struct tpp_eval e;
	if (tpp_layout_invalid(m, c, o, l) != TPP_INV_NONE)
		return TPP_E_INFEASIBLE;
	mem_eval(m, c, o, l, cache, &e);
	*mem = e.mem;
	*fits = e.fits;
	return TPP_OK;
}

int tpp_recompute_layers_min(const struct tpp_model *m, const struct tpp_cluster *c,
			     const struct tpp_cost_opts *o, const struct tpp_layout *l,
			     struct tpp_cost_cache *cache)
{
	struct tpp_layout x = *l;
	struct tpp_eval e;
	int whole = tpp_max_chunk_layers(m, l), lo = 1, hi = whole;

	x.recompute = TPP_RECOMPUTE_FULL;
	x.recompute_layers = 0;
	mem_eval(m, c, o, &x, cache, &e);
	if (!e.fits)
		return -1;
	/* memory falls as more layers of a chunk are recomputed, and hi
	 * (a whole chunk) is every layer, which fits: the smallest count
	 * that fits, by bisection over 1 .. hi */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		x.recompute_layers = mid;
		mem_eval(m, c, o, &x, cache, &e);
		if (e.fits)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < whole ? lo : 0;
}

/* ------------------------------------------------------------------------ */

void tpp_eval_set_step(struct tpp_eval *e, const struct tpp_model *m,
		       const struct tpp_cluster *c, const struct tpp_cost_opts *o,
		       double step_s)
{
	const struct tpp_layout *l = &e->layout;
	double tokens = (double)l->gbs * m->seq;
	double gpus = (double)l->tp * l->pp * l->dp * l->cp;
	double peak = c->gpu.peak_flops[o->prec];
	e->step_s = step_s;
	e->tokens_per_s = tokens / step_s;
	e->model_tflops_per_gpu = e->model_flops_per_step / step_s / gpus / TPP_TFLOPS;
	e->hw_tflops_per_gpu = e->hw_flops_per_step / step_s / gpus / TPP_TFLOPS;
	e->mfu = e->model_tflops_per_gpu * TPP_TFLOPS / peak;
	e->hfu = e->hw_tflops_per_gpu * TPP_TFLOPS / peak;
}

int tpp_cost_eval(const struct tpp_model *m, const struct tpp_cluster *c,
		  const struct tpp_cost_opts *o, const struct tpp_layout *l,
		  struct tpp_eval *out, struct tpp_err *err)
{
	return tpp_cost_eval_cached(m, c, o, l, NULL, out, err);
}

int tpp_cost_eval_cached(const struct tpp_model *m, const struct tpp_cluster *c,
			 const struct tpp_cost_opts *o, const struct tpp_layout *l,
			 struct tpp_cost_cache *cache, struct tpp_eval *out,
			 struct tpp_err *err)
{
	struct tpp_eval e;
	struct work w;
	const struct layer_cost *lc = &w.lc;
	const struct tpp_gpu *g = &c->gpu;
	enum tpp_prec p = o->prec;
	int rc, mb, r, j, n, r_max = 0;
	double t = l->tp, d = l->dp, v = l->vp;
	double s = m->seq, h = m->hidden;
	double t_max = 0, t_sum = 0, p2p, p2p_pace, zb_sum = 0, zb_max = 0, pace, pace_max = 0, win0 = 0;
	double pre_f = 0, pre_bw = 0, bound_pipe = 0, layer_all;
	/* the reduction's tail: a rank's last operation's earliest end less
	 * the part of it before its first bucket, and its chunk's share of
	 * the rank's layers (the rank with the latest such end) */
	double tail_a = 0, tail_share = 0;
	/* only where the reduction overlaps the backward (the bound's use) */
	int want_tail = o->dp_overlap && (long long)l->dp * l->cp > 1 &&
			!tpp_zero_per_microbatch(l) && !tpp_zero_pipelined(l);
	int dp_bound_binds; /* the reduction's bound exceeds the pipeline's */
	double P_max = 0, gather_max = 0; /* parameters, their all-gather bytes */

	if ((rc = tpp_layout_check(m, c, l, err)))
		return rc;
	if (peak_flops(g, p) <= 0)
		return tpp_err_set(err, TPP_E_INFEASIBLE, NULL, 0, 0,
				   "%s: %s has no %s peak in its cluster description",
				   tpp_invalid_names[TPP_INV_PRECISION], g->name,
				   tpp_prec_names[p]);
	if (l->cp > 1 && o->attn == TPP_ATTN_UNFUSED)
		return tpp_err_set(err, TPP_E_INFEASIBLE, NULL, 0, 0, "cp=%d: %s",
				   l->cp, tpp_invalid_names[TPP_INV_CP_ATTN]);
	memset(&e, 0, sizeof(e));
	e.layout = *l;
	mb = tpp_layout_microbatches(l);
	e.microbatches = mb;
	n = l->pp * l->vp;

	work_get(m, c, o, l, cache, &w);
	e.layer_fwd_s = lc->fwd_s + lc->tp_fwd_s;
	e.layer_bwd_s = lc->bwd_s + lc->recomp_s + lc->tp_bwd_s;
	e.pp_tier = l->pp > 1 ? tpp_cluster_tier_for(c, l->pp, l->tp * l->cp * l->dp) : -1;
	e.tp_tier = l->tp > 1 ? tpp_cluster_tier_for(c, l->tp, 1) : -1;
	/* CP ranks are tp apart, as DP's (the K/V ring of layer_cost) */
	e.cp_tier = l->cp > 1 ? tpp_cluster_tier_for(c, l->cp, l->tp) : -1;
	/* per micro-batch per pipeline rank: v chunks, forward and backward;
	 * a rank's pace counts them only when they block it (tpp_p2p_blocking:
	 * an overlapped transfer runs while the sender goes on) */
	p2p = l->pp > 1 ? 2.0 * v * w.p2p_one : 0;
	p2p_pace = tpp_p2p_blocking(o, l) ? p2p : 0;
	/* one layer's forward, backward and weight gradient with its
	 * recompute and exposed TP / CP communication */
	layer_all = lc->fwd_s + lc->tp_fwd_s + lc->cp_f_s + lc->bwd_in_s + lc->recomp_s +
		    lc->tp_bwd_s + lc->cp_b_s + lc->bwd_w_s;

	/*
	 * ZB-H1 (v = 1): every forward's compute and, past chunk r, every
	 * input gradient's -- micro-batch 0's round trip from rank r to the
	 * last rank and back (zb_bsuf[r] = the B of chunks r+1 .. n-1).
	 */
	double zb_ftot = 0, zb_bsuf[TPP_MAX_CHUNKS];
	if (l->zb && n <= TPP_MAX_CHUNKS) {
		double acc = 0, f_, b_, w_;
		int k;
		for (k = n - 1; k >= 0; k--) {
			chunk_fbw(m, &w, n, k, &f_, &b_, &w_);
			zb_bsuf[k] = acc;
			acc += b_;
			zb_ftot += f_;
		}
	}

	/*
	 * Per-rank time of one micro-batch: its v chunks (chunk k runs on
	 * rank k mod p) plus its transfers.  The slowest rank sets the pace.
	 */
	for (r = 0; r < l->pp; r++) {
		/* the rank's chunks: its layers, plus the embedding on chunk 0
		 * (rank 0) and the LM head on chunk n-1 (rank (n-1) mod p) */
		int nl = tpp_rank_layers(m->layers, l->pp, l->vp, r);
		double busy = nl * layer_all, wsum = nl * lc->bwd_w_s, f, b, wg, zb_fill, lb;
		if (r == 0)
			busy += w.emb_f + w.emb_tp + w.emb_b + w.emb_tp_b;
		if (r == (n - 1) % l->pp) {
			busy += w.head_f + w.head_b + w.head_tp + w.head_tp_f + w.head_w;
			wsum += w.head_w;
		}
		/*
		 * Lower bound for any schedule: rank r cannot start before the
		 * first micro-batch's forward has passed chunks 0..r-1, then
		 * does all its work; under 1F1B and interleaving its last
		 * backward is followed by that micro-batch's backward through
		 * chunks r-1..0 (ZB-H1 may overlap that with deferred W).
		 */
		chunk_fbw(m, &w, n, r, &f, &b, &wg);
		lb = pre_f + mb * busy + (l->zb ? 0 : pre_bw);
		/*
		 * Rank r's last operation is the last micro-batch's backward
		 * of its first chunk (chunk r; under ZB-H1 that micro-batch's
		 * W, the oldest-first W's last), and its compute ends no
		 * earlier than pre_f + m busy; that chunk's gradient buckets
		 * become ready over it, a layer's share at a time, and are
		 * reduced last (the reduction's bound, below).
		 */
		if (want_tail) {
			double nlc = tpp_chunk_layers(m->layers, n, r);
			double a = pre_f + mb * busy - (b + wg) * (1.0 - 1.0 / nlc);
			if (r == 0 || a > tail_a) {
				tail_a = a;
				tail_share = nlc / nl;
			}
		}
		/*
		 * ZB-H1's fill: rank r's first backward (micro-batch 0's B)
		 * waits for that micro-batch's forward through every chunk
		 * and its B back through chunks past r, and until then the
		 * rank can run only forwards, at most min(p - r, m) (the 1F1B
		 * limit every ZB-H1 order keeps); the rest of its work comes
		 * after.  No W runs before the first B.  (Without it the
		 * ZB-H1 bound left out the fill and the search simulated
		 * many more ZB-H1 layouts than it needed to.)
		 */
		if (l->zb && n <= TPP_MAX_CHUNKS) {
			double nr = l->pp - r < mb ? l->pp - r : mb, first_b;
			first_b = zb_ftot + zb_bsuf[r];
			if (pre_f + nr * f > first_b)
				first_b = pre_f + nr * f;
			if (first_b + mb * busy - nr * f > lb)
				lb = first_b + mb * busy - nr * f;
		}
		if (lb > bound_pipe)
			bound_pipe = lb;
		pre_f += f;
		pre_bw += b + wg;
		/*
		 * ZB-H1's transfers fly beside the compute (tpp_p2p_blocking)
		 * but not outside its window: rank r keeps at most p - r
		 * micro-batches between a forward and its backward (the 1F1B
		 * limit, as the simulator plays it), and one micro-batch's
		 * round trip from r to the last rank and back holds its F and
		 * B on p - r ranks and 2 (p - r - 1) transfers.  So the
		 * steady state runs one micro-batch per
		 *   max(busy, busy - W + (p - r - 1) / (p - r) * 2 t_p2p)
		 * on rank r (W, its weight gradients, fill the waits): the
		 * transfers are hidden only while they are shorter than a
		 * stage's compute.  Rank 0's window is the longest; the step
		 * is its first micro-batch's round trip (the fill and drain,
		 * priced below) and m - 1 periods, so each of those m - 1
		 * adds what its period exceeds the busiest rank's pace.
		 * (Checked against the simulator on a 1 Gb/s pipeline where a
		 * transfer is 3-6 times a stage's F + B: within 5 % from m = 4
		 * micro-batches on p = 4 up, 10 % short at m = 2; it also
		 * prices NIC sharing with the DP buckets, which this does
		 * not.)
		 */
		pace = busy + p2p_pace;
		if (!p2p_pace && l->zb && l->pp > 1) {
			double win = busy - wsum + p2p * (l->pp - 1 - r) / (double)(l->pp - r);
			if (win > pace)
				pace = win;
			if (r == 0)
				win0 = win;
		}
		if (pace > pace_max)
			pace_max = pace;
		t_sum += busy + p2p_pace;
		/* ZB-H1 fills each rank's drain with its deferred weight
		 * gradients: bubble (p-1)(F + B - W) instead of (p-1)(F+B+W)
		 * (Qi et al. 2024; costmodel.md 4.2) -- with m >= p.  With
		 * fewer micro-batches there are fewer W to defer: m = 1 is one
		 * chain p F + p B + W.  The bubble is (p-1)(F + B - W) +
		 * (p - m) W then, which the simulator gives exactly for F = B =
		 * W and every m (tests/test_sim.c): (p - m) / (p - 1) W more
		 * for each rank. */
		zb_fill = busy + p2p_pace - 2 * wsum;
		if (mb < l->pp)
			zb_fill += (double)(l->pp - mb) / (l->pp - 1) * wsum;
		zb_sum += zb_fill > 0 ? zb_fill : 0;
		if (busy + p2p_pace > t_max) {
			t_max = busy + p2p_pace;
			r_max = r;
			zb_max = zb_fill > 0 ? zb_fill : 0;
		}
	}
	e.stage_mb_s = pace_max;

	/*
	 * Pipeline (costmodel.md 4.1): the steady state runs m micro-batches
	 * at the pace of the slowest rank; fill and drain add the other
	 * ranks once, shortened v times by interleaving.  Uniform ranks give
	 * (m + (p-1)/v) * t, the SC21 closed form.
	 */
	{
		int layers_r = tpp_rank_layers(m->layers, l->pp, l->vp, r_max);
		double edge = 0;
		if (r_max == 0)
			edge += w.emb_f + w.emb_b;
		if (r_max == (n - 1) % l->pp)
			edge += w.head_f + w.head_b + w.head_w;
		e.t.compute_s = mb * (layers_r * (lc->fwd_s + lc->bwd_s) + edge);
		e.t.recompute_s = (double)mb * layers_r * lc->recomp_s;
		e.t.tp_comm_s = mb * (layers_r * (lc->tp_fwd_s + lc->tp_bwd_s) +
				      (r_max == 0 ? w.emb_tp + w.emb_tp_b : 0) +
				      (r_max == (n - 1) % l->pp ? w.head_tp + w.head_tp_f : 0));
		e.t.cp_comm_s = (double)mb * layers_r * (lc->cp_f_s + lc->cp_b_s);
		/* overlapped: only those on the fill and drain path, 2 (p v - 1)
		 * (as tpp_sim_eval's breakdown) */
		e.t.pp_p2p_s = p2p_pace > 0 ? mb * p2p
					    : fmin(mb * p2p, 2.0 * (n - 1) * w.p2p_one) +
						      (mb - 1) * fmax(win0 - t_max, 0);
		e.t.bubble_s = l->zb ? zb_sum - zb_max : (t_sum - t_max) / v;
		e.bound_s = bound_pipe;
	}

	/* Parameters of the rank holding the most (costmodel.md 3.2). */
	{
		struct rank_param_ctx rpx;
		/* gathered 16-bit, a layer's in fp8 with fp8 primary weights */
		double fp8_layer;
		rank_param_ctx_init(m, l, &rpx);
		fp8_layer = tpp_fp8_params(o, l) ? rpx.layer_gpu : 0;
		for (r = 0; r < l->pp; r = next_max_rank(r, l->pp)) {
			int nl, first, last;
			double P = rank_params(m, l, &rpx, r, &nl, &first, &last);
			double gb_r = 2.0 * P - nl * fp8_layer;
			if (P > P_max)
				P_max = P;
			if (gb_r > gather_max)
				gather_max = gb_r;
		}
	}

	/* Data parallel (costmodel.md 2.4, 5.1). */
	e.dp_tier = -1;
	if (l->dp * l->cp > 1) {
		int stride = l->tp; /* DP (and CP) ranks are tp apart; they reduce together */
		int nd = l->dp * l->cp;
		/* fp32 main gradients (Megatron's default, the 4 B of the 18
		 * bytes per parameter counted in memory) */
		double grad_bytes = P_max * grad_elem_bytes(o);
		double param_bytes = gather_max;
		double t_grad, t_param;
		e.dp_tier = tpp_cluster_tier_for(c, nd, stride);
		if (tpp_zero_per_microbatch(l)) {
			/*
			 * ZeRO-3 / FSDP: every micro-batch gathers the
			 * parameters for the forward, again for the backward
			 * (and once more for a full-recompute forward), and
			 * reduce-scatters the gradients.  Without overlap
			 * (dp_overlap off) counted as exposed: a layer cannot
			 * start before its parameters arrive.  Each at NCCL's
			 * rate, or at an implementation's where it is slower
			 * (zero3_coll_time: DeepSpeed of 2021, whose SC21
			 * Table 2 runs validate prices so, prefetched).
			 */
			double gathers = l->recompute == TPP_RECOMPUTE_FULL
						 ? 2 + tpp_recompute_share(m, l) : 2;
			/* one gather / reduce-scatter per layer (the FSDP unit) */
			double L = m->layers;
			double ag = L * zero3_coll_time(c, o, TPP_COLL_ALL_GATHER, param_bytes / L, nd,
							stride);
			double rs = L * zero3_coll_time(c, o, TPP_COLL_REDUCE_SCATTER, grad_bytes / L, nd,
							stride);
			double x_mb = gathers * ag + rs;
			if (o->dp_overlap) {
				/*
				 * With prefetching (FSDP, Megatron FSDP with
				 * overlap) layer i+1's gather runs under layer
				 * i's compute and layer i's reduce-scatter under
				 * layer i-1's backward: per pass only what the
				 * compute cannot cover, plus the first layer's
				 * gather (last layer's reduce-scatter).  The
				 * cover is the layers' whole time, the exposed
				 * context-parallel ring included: the gathers run
				 * on their own stream while a layer waits too.
				 */
				double f_all = L * layer_fwd_cover(lc);
				double b_all = L * layer_bwd_cover(lc);
				double c_b = (gathers - 1) * ag + rs;
				x_mb = fmax(ag - f_all, 0) + ag / L +
				       fmax(c_b - b_all, 0) + c_b / L;
			}
			e.t.dp_comm_s = mb * x_mb;
			e.dp_grad_s = x_mb;
		} else {
			if (l->zero == 0) {
				t_grad = tpp_coll_time(c, TPP_COLL_ALL_REDUCE, grad_bytes, nd, stride);
				t_param = 0;
			} else {
				t_grad = tpp_coll_time(c, TPP_COLL_REDUCE_SCATTER, grad_bytes, nd, stride);
				t_param = tpp_coll_time(c, TPP_COLL_ALL_GATHER, param_bytes, nd, stride);
			}
			e.dp_grad_s = t_grad;
			e.dp_param_s = t_param;
			/*
			 * ZeRO-2 keeps only its shard of the gradients
			 * (memory: 4/d bytes per parameter), so every
			 * micro-batch's gradients are reduce-scattered as its
			 * backward produces them, not once per step
			 * (DeepSpeed stage 2 reduces each backward's buckets
			 * into the partition; ZeRO paper Sec. 5.2: the same
			 * volume as an all-reduce per accumulation).  The
			 * last micro-batch's reduction is the bucketed one
			 * below (and the simulator's); the m - 1 before it
			 * each expose what their backward does not cover, or
			 * one layer's bucket -- all of it without overlap.
			 * Not under pipelining (tpp_zero_pipelined: one
			 * reduction per step).
			 */
			if (l->zero == 2 && mb > 1 && !tpp_zero_pipelined(l)) {
				double layers_r = (double)m->layers / l->pp;
				double bwd_mb = layers_r * layer_bwd_cover(lc);
				double x = t_grad;
				if (o->dp_overlap)
					x = fmax(t_grad - bwd_mb, t_grad / layers_r);
				e.dp_accum_exposed_s = (mb - 1) * x;
			}
			if (o->dp_overlap) {
				/* Buckets are reduced while the last
				 * micro-batch's backward runs; parameters are
				 * gathered under the first forward.  One
				 * layer's bucket stays exposed each way. */
				double layers_r = (double)m->layers / l->pp;
				double bucket_g = t_grad / layers_r;
				double bucket_p = t_param / layers_r;
				double last_bwd = layers_r * layer_bwd_cover(lc);
				double first_fwd = layers_r * layer_fwd_cover(lc);
				double ex_g = t_grad - last_bwd, ex_p = t_param - first_fwd;
				e.dp_param_exposed_s = t_param > 0 ? (ex_p > bucket_p ? ex_p : bucket_p) : 0;
				/* FSDP2 under pipelining reduce-scatters after
				 * the stage's last backward (tpp_zero_pipelined):
				 * none of it under that backward */
				if (tpp_zero_pipelined(l))
					ex_g = t_grad;
				e.t.dp_comm_s = (ex_g > bucket_g ? ex_g : bucket_g) +
						e.dp_param_exposed_s + e.dp_accum_exposed_s;
			} else {
				e.dp_param_exposed_s = t_param;
				e.t.dp_comm_s = t_grad + t_param + e.dp_accum_exposed_s;
			}
		}
	}

	/*
	 * Optimizer step: memory-bound passes over the local shard of the
	 * fp32 state, counted per parameter for Megatron's mixed-precision
	 * optimizer with fused multi-tensor kernels (Apex FusedAdam):
	 *   unscale + inf/nan check of the fp32 main grad   read 4, write 4
	 *   gradient norm                                   read 4
	 *   clip (scale grads)                              read 4, write 4
	 *   Adam: read grad, master, m, v; write master, m, v  16 + 12
	 *   copy master to the 16-bit model weight          read 4, write 2
	 *   zero the gradient buffer                        write 4
	 * = 58 bytes per parameter.  With 16-bit gradients (o->grads16) the
	 * optimizer first copies its shard into an fp32 main gradient
	 * (Megatron's _copy_model_grads_to_main_grads: read 2, write 4) and
	 * zeroes a 16-bit buffer (write 2): 62.  All but the zeroing are
	 * over the optimizer's shard; the zeroing is over the gradient
	 * buffer the rank holds: all its parameters under ZeRO-0/1 (the
	 * distributed optimizer shards the states, not the buffer) and
	 * under FSDP2 with pipelining (it holds them unsharded until the
	 * reduce-scatter: tpp_zero_pipelined), the shard under ZeRO-2/3.
	 */
	{
		double shard = l->zero >= 1 ? P_max / (d * l->cp) : P_max;
		double buf = l->zero >= 2 && !tpp_zero_pipelined(l) ? shard : P_max;
		e.t.optimizer_s = mem_time(g, (o->grads16 ? 60.0 : 54.0) * shard +
					      (o->grads16 ? 2.0 : 4.0) * buf);
	}
	/*
	 * One micro-batch's chain, which no schedule shortens: the last
	 * micro-batch's forward waits on rank 0 behind chunk 0's m - 1
	 * forwards, then runs through every chunk and comes back through
	 * every chunk's input gradient to chunk 0's weight gradient, with a
	 * transfer between consecutive chunks (on different ranks when
	 * pp > 1; the simulator's transfers take at least p2p_one, blocking
	 * or not).  Each chunk at least floor(L / n) layers, the embedding
	 * and LM head with theirs.  It binds where the per-rank bound above
	 * does not see the transfers: interleaving with many chunks, whose
	 * 2 (n - 1) transfers are all on this path (175B on 4096 B200s at
	 * tp 8, pp 8, vp 12 without SP: 96 chunks, 3 ms transfers, the
	 * whole bound 0.94 s, with this 1.31 s, the simulated step 2.27 s).
	 *
	 * Then the gradient reduction (the simulator's buckets, ZeRO-3
	 * without pipelining aside): one stream per rank that carries
	 * e.dp_grad_s in all (more where transfers share its NICs).
	 * Without overlap -- --no-dp-overlap, or ZeRO-2/3 under pipelining,
	 * which reduce-scatter after each rank's last operation
	 * (tpp_sim_eval) -- it starts after the rank's last operation: at
	 * least one whole reduction follows the pipeline's end.  With
	 * overlap rank 0's first bucket is its first layer of chunk kk =
	 * (v-1) p, ready once the last micro-batch's backward of that chunk
	 * has done that layer's share (its B and W over the chunk's layers,
	 * at least one layer's B + W): the chain above as far as chunk kk
	 * (backward through chunks kk+1 .. n-1, p - 1 of them), then the
	 * whole reduction.  Where the reduction is long against the pipeline
	 * (few micro-batches, a slow data-parallel tier) this binds, and the
	 * search simulates far fewer layouts it could not rank first.
	 */
	dp_bound_binds = 0;
	{
		double lf = layer_fwd_cover(lc);
		double lbw = layer_bin_cover(lc);
		double per_chunk = (double)(m->layers / n), hop = l->pp > 1 ? w.p2p_one : 0;
		double f0 = per_chunk * lf + w.emb_f + w.emb_tp;
		double fsum = m->layers * lf + w.emb_f + w.emb_tp + w.head_f + w.head_tp_f;
		double bsum = m->layers * lbw + w.emb_b + w.emb_tp_b + w.head_b + w.head_tp;
		double chain = (mb - 1) * f0 + fsum + bsum + per_chunk * lc->bwd_w_s +
			       2.0 * (n - 1) * hop;
		if (chain > e.bound_s)
			e.bound_s = chain;
		if (!tpp_zero_per_microbatch(l) && e.dp_grad_s > 0 && (long long)l->dp * l->cp > 1) {
			if (!o->dp_overlap || tpp_zero_pipelined(l)) {
				e.bound_s += e.dp_grad_s;
			} else {
				double bsuf = l->pp > 1 ? (l->pp - 1) * per_chunk * lbw + w.head_b +
							  w.head_tp
							: 0;
				double dp_lb = (mb - 1) * f0 + fsum + bsuf + lbw + lc->bwd_w_s +
					       (n - 1 + l->pp - 1) * hop + e.dp_grad_s;
				/* and the last chunk's buckets after its first
				 * layer's share of the rank's last operation */
				double tail = tail_a + e.dp_grad_s * tail_share;
				if (tail > dp_lb)
					dp_lb = tail;
				if (dp_lb > e.bound_s) {
					e.bound_s = dp_lb;
					dp_bound_binds = 1;
				}
			}
		}
		/* the simulator adds ZeRO-3 traffic and the exposed parameter
		 * gather as they are here, then the optimizer */
		e.bound_s += e.t.optimizer_s + (tpp_zero_per_microbatch(l)
							? e.t.dp_comm_s
							: e.dp_param_exposed_s + e.dp_accum_exposed_s);
	}

	e.step_s = 0;
	for (j = 0; j < TPP_TIME_PARTS; j++)
		e.step_s += tpp_time_part(&e.t, j);
	/* the closed form spreads each rank's layers evenly over its chunks;
	 * with uneven chunks the fill can be longer: never below the bound
	 * (beyond the rounding of its other order of summation, which would
	 * put a bubble of 1e-16 s on a single stage) */
	if (e.step_s < e.bound_s * (1 - 1e-12)) {
		/* where the reduction's bound binds, what the closed form
		 * missed is reduction waiting for its first bucket */
		if (dp_bound_binds)
			e.t.dp_comm_s += e.bound_s - e.step_s;
		else
			e.t.bubble_s += e.bound_s - e.step_s;
		e.step_s = e.bound_s;
	}

	/* FLOPs: model FLOPs per the convention in tpp_cost_flops_doc. */
	{
		double tokens = (double)l->gbs * s;
		double qd = (double)m->heads * m->head_dim;
		double n_mm = m->layers * (h * qd * 2 + 2.0 * h * m->kv_heads * m->head_dim +
					   (m->mlp == TPP_MLP_SWIGLU ? 3.0 : 2.0) * h * m->ffn) +
			      (double)m->vocab * h;
		double per_tok = 6.0 * n_mm + 12.0 * m->layers * qd * s;
		/* lc->flops_recomp is per GPU for w.T local tokens of a TP shard */
		double recompute_per_tok = lc->flops_recomp / w.T * t * m->layers;
		e.model_flops_per_step = tokens * per_tok;
		e.hw_flops_per_step = e.model_flops_per_step + tokens * recompute_per_tok;
		tpp_eval_set_step(&e, m, c, o, e.step_s);
	}

	mem_eval(m, c, o, l, cache, &e);

	*out = e;
	return TPP_OK;
}
