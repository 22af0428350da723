/*
 * run.c - `tpplan exec` on every rank: the rank grid (TP innermost, then
 * DP, then PP, as Megatron orders them; communicators by MPI_Comm_split),
 * the sharded GPT block forward and backward on a backend (Megatron-LM,
 * Shoeybi et al. 2019 s3; sequence parallelism, Korthikanti et al. 2022
 * s4.2.2), pipeline stages with point-to-point transfers in the 1F1B
 * schedule (PipeDream-flush, Narayanan et al. 2021; or GPipe order with
 * --schedule gpipe), the DP gradient all-reduce, per-phase timing, the
 * watchdog, and the comparison with the fp64 reference (ref.c) on rank 0.
 *
 * Every backend call is timed on its own (tpp_backend_time_begin/end,
 * which wait for the work), so the wall clock around a layer or a step
 * measures the same serial work.  Gradients are summed, not averaged.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_impl.h"
#include "bench.h"
#include "exec_impl.h"

const char *const tpp_exec_sched_names[TPP_EXEC_SCHED__COUNT] = {
	[TPP_EXEC_SCHED_1F1B] = "1f1b",
	[TPP_EXEC_SCHED_GPIPE] = "gpipe",
};

const char *const tpp_exec_phase_names[TPP_PH__COUNT] = {
	[TPP_PH_GEMM_QKV] = "gemm qkv (fwd)",
	[TPP_PH_GEMM_PROJ] = "gemm proj (fwd)",
	[TPP_PH_GEMM_FC1] = "gemm fc1 (fwd)",
	[TPP_PH_GEMM_FC2] = "gemm fc2 (fwd)",
	[TPP_PH_GEMM_BWD] = "gemm bwd (dgrad+wgrad)",
	[TPP_PH_ATTN_FWD] = "attention core fwd",
	[TPP_PH_ATTN_BWD] = "attention core bwd",
	[TPP_PH_ELEMWISE] = "element-wise",
	[TPP_PH_TP_AR] = "tp all_reduce",
	[TPP_PH_TP_AG] = "tp all_gather",
	[TPP_PH_TP_RS] = "tp reduce_scatter",
	[TPP_PH_TP_WAIT] = "tp wait (--barrier)",
	[TPP_PH_PP_P2P] = "pp send/recv",
	[TPP_PH_DP_AR] = "dp all_reduce",
	[TPP_PH_LAYER_FWD] = "layer fwd",
	[TPP_PH_LAYER_BWD] = "layer bwd",
	[TPP_PH_STEP] = "step",
};

void tpp_exec_opts_default(struct tpp_exec_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "cpu";
	o->prec = TPP_PREC_FP32;
	o->shape = (struct tpp_exec_shape){64, 4, 256, 32, 1};
	o->tp = o->pp = o->dp = 1;
	o->layers = 2;
	o->microbatches = 2;
	o->sched = TPP_EXEC_SCHED_1F1B;
	o->iters = 5;
	o->warmup = 2;
	o->timeout_s = 120;
	o->check = 1;
	o->seed = 1;
	o->scale = 1;
}

/*
 * max |err| / max |ref| allowed per tensor.  fp32: unit roundoff 2^-24 =
 * 6e-8; measured 7e-7 (output) to 1.3e-6 (gradients) at hidden 1024, ffn
 * 4096, seq 256, 8 layers on 2 TP ranks, so 1e-4 leaves ~75x for deeper or
 * wider shapes while a 0.1 % slip (a branch scaled by 0.999) fails.  The
 * 16-bit and tf32 GEMMs round each product's inputs (bf16 u = 2^-8 =
 * 3.9e-3, fp16 and tf32 u = 2^-11 = 4.9e-4) and the errors of L layers
 * add: 6e-2 and 2e-2 are about 15 u and 40 u.
 */
double tpp_exec_tolerance(enum tpp_prec prec)
{
	switch (prec) {
	case TPP_PREC_FP32: return 1e-4;
	case TPP_PREC_TF32: return 2e-2;
	case TPP_PREC_FP16: return 2e-2;
	default: return 6e-2;
	}
}

/* activations of one layer and micro-batch kept for the backward */
struct lcache {
	float *ln1, *mu1, *rs1, *qkv, *p, *ctx, *x2, *ln2, *mu2, *rs2, *u, *g;
};

struct ex {
	const struct tpp_exec_opts *o;
	struct tpp_backend *b;
	struct tpp_err *err;
	int wrank, wsize, tpr, ppr, dpr;
	struct tpp_bk_comm *tpc, *dpc, *ppc;
	/* 1F1B: two-rank communicators with the next / previous stage for
	 * the paired transfers (NULL: none, or the backend has no send_recv;
	 * then the pair is ordered on ppc, see exchange()) */
	struct tpp_bk_comm *pnext, *pprev;
	int T, Tl, h, f, a, d, hl, fl, al, S, M;
	int l0, nl;
	float *W[64][TPP_W__COUNT], *dW[64][TPP_W__COUNT], *dWall, *dWsum;
	size_t wn[TPP_W__COUNT], dWn;
	int nslots;           /* activation slots: micro-batches in flight at most */
	struct lcache *lc;    /* [nl * nslots]; micro-batch m in slot m % nslots */
	float **xs;           /* [M * (nl + 1)]: stage input, layer outputs */
	float **dxs;          /* [M]: gradient wrt the stage input */
	float **dys;          /* [M]: gradient wrt the stage output */
	float *tF, *tF2, *tL, *gA, *gB, *dx2b, *dqkv, *dctx, *dg, *dp;
	void **bufs;
	int nbufs, capbufs;
	double acc[TPP_PH__COUNT];
	int cnt[TPP_PH__COUNT];
	int die_rank, dying;
	/* test hook TPP_EXEC_TEST_LOST_RECV: GPipe stages receive their input
	 * into scratch, as if the compute ran before the transfer landed (the
	 * bug poison_received() exists to catch) */
	int lost_recv;
};

/* ---- watchdog (every rank, tpp_bench_watchdog_arm) ------------------------ */

/* Why an expired watchdog ends the run: the ranks wait on each other
 * (WD_STALLED), or this rank's own work is slow, not stalled: the
 * set-up's buffers (WD_SLOW) and the fp64 reference (WD_SLOW_REF). */
static const char WD_STALLED[] = "a rank died, a collective stalled, or the work is slower than that (a larger --timeout lets it finish)";
static const char WD_SLOW[] = "a larger --timeout or a smaller shape lets it finish";
static const char WD_SLOW_REF[] = "a larger --timeout, a smaller shape or --no-check lets it finish";

static void wd_arm(const struct ex *E, const char *what, const char *why)
{
	char msg[512];
	if (E->o->timeout_s <= 0)
		return;
	snprintf(msg, sizeof(msg),
		 "tpplan: exec: rank %d: %s did not finish within %d s (--timeout); %s, aborting the run\n",
		 E->wrank, what, E->o->timeout_s, why);
	tpp_bench_watchdog_arm(E->o->timeout_s, msg);
}

static void wd_disarm(const struct ex *E)
{
	if (E->o->timeout_s > 0)
		tpp_bench_watchdog_disarm();
}

/* ---- buffers ---------------------------------------------------------------- */

/* Zeros uploaded in chunks (balloc); never written (not const: in .bss,
 * not 1 MiB of the executable). */
static float zero_chunk[TPP_EXEC_CHUNK];

/* n floats of backend buffer p set from chunk (TPP_EXEC_CHUNK floats of
 * one value), uploaded a chunk at a time. */
static int fill(struct ex *E, void *p, size_t n, const float *chunk)
{
	size_t i, k;
	int rc;
	for (i = 0; i < n; i += k) {
		k = n - i < TPP_EXEC_CHUNK ? n - i : TPP_EXEC_CHUNK;
		if ((rc = tpp_backend_upload(E->b, (char *)p + i * sizeof(float), chunk,
					     k * sizeof(float), E->err)))
			return rc;
	}
	return TPP_OK;
}

/* A zeroed backend buffer of n floats, freed at the end. */
static int balloc(struct ex *E, size_t n, float **out)
{
	void *p;
	int rc;
	if (E->nbufs == E->capbufs) {
		int cap = E->capbufs ? E->capbufs * 2 : 64;
		void **nb = realloc(E->bufs, sizeof(*nb) * (size_t)cap);
		if (!nb)
			return tpp_err_set(E->err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
		E->bufs = nb;
		E->capbufs = cap;
	}
	if (n == 0)
		n = 1;
	if ((rc = tpp_backend_alloc(E->b, n * sizeof(float), &p, E->err)))
		return rc;
	E->bufs[E->nbufs++] = p;
	if ((rc = fill(E, p, n, zero_chunk)))
		return rc;
	*out = p;
	return TPP_OK;
}

/* n floats of buffer p set to NaN (untimed, before a step). */
static int poison(struct ex *E, float *p, size_t n)
{
	static float nan_chunk[TPP_EXEC_CHUNK];
	size_t i;
	if (!(nan_chunk[0] != nan_chunk[0])) /* first use */
		for (i = 0; i < TPP_EXEC_CHUNK; i++)
			nan_chunk[i] = NAN;
	return fill(E, p, n, nan_chunk);
}

/*
 * Before every step, what the step must receive is set to NaN: a stage's
 * input and the gradient of its output (from the neighbouring stages) and
 * the data-parallel sum.  Every step reads the same weights and data, so a
 * step that used a buffer before its transfer arrived (a missing wait, a
 * misordered 1F1B exchange) would otherwise compute with the last step's
 * identical values and pass the check; with NaN it fails it.
 */
static int poison_received(struct ex *E)
{
	size_t n = (size_t)E->Tl * E->h;
	int m, rc;
	for (m = 0; m < E->M; m++) {
		if (E->ppr > 0 && (rc = poison(E, E->xs[m * (E->nl + 1)], n)))
			return rc;
		if (E->ppr < E->o->pp - 1 && (rc = poison(E, E->dys[m], n)))
			return rc;
	}
	if (E->o->dp > 1 && E->dWsum != E->dWall && (rc = poison(E, E->dWsum, E->dWn)))
		return rc;
	return tpp_backend_sync(E->b, E->err);
}

/* ---- timed operations ------------------------------------------------------- */

#define OP(E, ph, call)                                                        \
	do {                                                                   \
		double s_;                                                     \
		if ((rc = tpp_backend_time_begin((E)->b, (E)->err)))           \
			return rc;                                             \
		if ((rc = (call)))                                             \
			return rc;                                             \
		if ((rc = tpp_backend_time_end((E)->b, &s_, (E)->err)))        \
			return rc;                                             \
		(E)->acc[ph] += s_;                                            \
		(E)->cnt[ph]++;                                                \
	} while (0)

/* row-major C[M,N] = alpha op(A) op(B) + beta C */
static int mm(struct ex *E, int ta, int tb, int M, int N, int K, float alpha,
	      const float *A, int lda, const float *B, int ldb, float beta,
	      float *C, int ldc)
{
	return tpp_backend_gemm_ex(E->b, E->o->prec, tb, ta, N, M, K, alpha, B,
				   ldb, A, lda, beta, C, ldc, E->err);
}

#define MM(E, ph, ...) OP(E, ph, mm(E, __VA_ARGS__))

/* A TP collective; with --barrier a barrier over the TP group first, timed
 * apart as TPP_PH_TP_WAIT, so that the collective's own time leaves out
 * the wait for the group's slowest rank (as Megatron's
 * --barrier-with-L1-time does for its timers). */
#define TPC(E, ph, op, send, recv, count)                                     \
	do {                                                                   \
		if ((E)->o->barrier)                                           \
			OP(E, TPP_PH_TP_WAIT, tpp_backend_barrier((E)->b, (E)->tpc, (E)->err)); \
		OP(E, ph, tpp_backend_coll((E)->b, (E)->tpc, op, send, recv, count, (E)->err)); \
	} while (0)

/* Row-parallel output: partial [T,h] in src -> dst ([Tl,h]); tp 1: copy. */
static int tp_reduce(struct ex *E, const float *src, float *dst)
{
	int rc;
	if (E->o->tp == 1) {
		OP(E, TPP_PH_ELEMWISE, tpp_backend_axpby(E->b, (size_t)E->T * E->h, 1, src, 0, dst, E->err));
	} else if (E->o->sp) {
		TPC(E, TPP_PH_TP_RS, TPP_COLL_REDUCE_SCATTER, src, dst, (size_t)E->Tl * E->h);
	} else {
		TPC(E, TPP_PH_TP_AR, TPP_COLL_ALL_REDUCE, src, dst, (size_t)E->T * E->h);
	}
	return TPP_OK;
}

/* Sequence parallel: local [Tl,h] -> full [T,h] (all-gather); else the
 * local buffer is already full: *full = local. */
static int sp_gather(struct ex *E, const float *local, float *buf, const float **full)
{
	int rc;
	if (!E->o->sp) {
		*full = local;
		return TPP_OK;
	}
	TPC(E, TPP_PH_TP_AG, TPP_COLL_ALL_GATHER, local, buf, (size_t)E->Tl * E->h);
	*full = buf;
	return TPP_OK;
}

/* ---- the layer --------------------------------------------------------------- */

static int layer_fwd(struct ex *E, int li, const float *x, float *out, struct lcache *c)
{
	float *const *W = E->W[li];
	int T = E->T, Tl = E->Tl, h = E->h, hl = E->hl, fl = E->fl, S = E->S;
	int d = E->d, b, j, rc;
	float scale = 1.0f / sqrtf((float)d);
	const float *full;
	size_t nl = (size_t)Tl * h;

	if (E->o->sp) {
		OP(E, TPP_PH_ELEMWISE, tpp_backend_layernorm_fwd(E->b, Tl, h, x, E->tL, c->mu1, c->rs1, E->err));
		TPC(E, TPP_PH_TP_AG, TPP_COLL_ALL_GATHER, E->tL, c->ln1, nl);
	} else {
		OP(E, TPP_PH_ELEMWISE, tpp_backend_layernorm_fwd(E->b, T, h, x, c->ln1, c->mu1, c->rs1, E->err));
	}
	MM(E, TPP_PH_GEMM_QKV, 0, 0, T, 3 * hl, h, 1, c->ln1, h, W[TPP_W_QKV], 3 * hl, 0, c->qkv, 3 * hl);
	for (b = 0; b < E->o->shape.mbs; b++)
		for (j = 0; j < E->al; j++) {
			const float *q = c->qkv + (size_t)b * S * 3 * hl + (size_t)3 * d * j;
			float *p = c->p + ((size_t)b * E->al + j) * S * S;
			MM(E, TPP_PH_ATTN_FWD, 0, 1, S, S, d, scale, q, 3 * hl, q + d, 3 * hl, 0, p, S);
			OP(E, TPP_PH_ATTN_FWD, tpp_backend_softmax_fwd(E->b, S, S, S, p, E->err));
			MM(E, TPP_PH_ATTN_FWD, 0, 0, S, d, S, 1, p, S, q + 2 * d, 3 * hl, 0,
			   c->ctx + (size_t)b * S * hl + (size_t)d * j, hl);
		}
	MM(E, TPP_PH_GEMM_PROJ, 0, 0, T, h, hl, 1, c->ctx, hl, W[TPP_W_PROJ], h, 0, E->tF, h);
	if ((rc = tp_reduce(E, E->tF, E->tL)))
		return rc;
	OP(E, TPP_PH_ELEMWISE, tpp_backend_axpby(E->b, nl, 1, x, 0, c->x2, E->err));
	OP(E, TPP_PH_ELEMWISE, tpp_backend_axpby(E->b, nl, 1, E->tL, 1, c->x2, E->err));
	/* MLP */
	if (E->o->sp) {
		OP(E, TPP_PH_ELEMWISE, tpp_backend_layernorm_fwd(E->b, Tl, h, c->x2, E->tL, c->mu2, c->rs2, E->err));
		TPC(E, TPP_PH_TP_AG, TPP_COLL_ALL_GATHER, E->tL, c->ln2, nl);
	} else {
		OP(E, TPP_PH_ELEMWISE, tpp_backend_layernorm_fwd(E->b, T, h, c->x2, c->ln2, c->mu2, c->rs2, E->err));
	}
	MM(E, TPP_PH_GEMM_FC1, 0, 0, T, fl, h, 1, c->ln2, h, W[TPP_W_FC1], fl, 0, c->u, fl);
	OP(E, TPP_PH_ELEMWISE, tpp_backend_gelu_fwd(E->b, (size_t)T * fl, c->u, c->g, E->err));
	MM(E, TPP_PH_GEMM_FC2, 0, 0, T, h, fl, 1, c->g, fl, W[TPP_W_FC2], h, 0, E->tF, h);
	if ((rc = tp_reduce(E, E->tF, E->tL)))
		return rc;
	OP(E, TPP_PH_ELEMWISE, tpp_backend_axpby(E->b, nl, 1, c->x2, 0, out, E->err));
	OP(E, TPP_PH_ELEMWISE, tpp_backend_axpby(E->b, nl, 1, E->tL, 1, out, E->err));
	(void)full;
	return TPP_OK;
}

/* dy [Tl,h] -> dx [Tl,h]; weight gradients into dW (beta 0 on the first
 * micro-batch of the step, then accumulated). */
static int layer_bwd(struct ex *E, int li, const float *x, const struct lcache *c,
		     const float *dy, float *dx, float beta)
{
	float *const *W = E->W[li];
	float *const *dW = E->dW[li];
	int T = E->T, Tl = E->Tl, h = E->h, hl = E->hl, fl = E->fl, S = E->S;
	int d = E->d, b, j, rc;
	float scale = 1.0f / sqrtf((float)d);
	const float *full;
	size_t nl = (size_t)Tl * h;
	float *dx2 = E->dx2b;

	/* MLP */
	if ((rc = sp_gather(E, dy, E->tF2, &full)))
		return rc;
	MM(E, TPP_PH_GEMM_BWD, 1, 0, fl, h, T, 1, c->g, fl, full, h, beta, dW[TPP_W_FC2], h);
	MM(E, TPP_PH_GEMM_BWD, 0, 1, T, fl, h, 1, full, h, W[TPP_W_FC2], h, 0, E->dg, fl);
	OP(E, TPP_PH_ELEMWISE, tpp_backend_gelu_bwd(E->b, (size_t)T * fl, c->u, E->dg, E->dg, E->err));
	MM(E, TPP_PH_GEMM_BWD, 1, 0, h, fl, T, 1, c->ln2, h, E->dg, fl, beta, dW[TPP_W_FC1], fl);
	MM(E, TPP_PH_GEMM_BWD, 0, 1, T, h, fl, 1, E->dg, fl, W[TPP_W_FC1], fl, 0, E->tF, h);
	if ((rc = tp_reduce(E, E->tF, E->tL)))
		return rc;
	OP(E, TPP_PH_ELEMWISE, tpp_backend_layernorm_bwd(E->b, Tl, h, c->x2, c->mu2, c->rs2, E->tL, dx2, E->err));
	OP(E, TPP_PH_ELEMWISE, tpp_backend_axpby(E->b, nl, 1, dy, 1, dx2, E->err));
	/* attention */
	if ((rc = sp_gather(E, dx2, E->tF2, &full)))
		return rc;
	MM(E, TPP_PH_GEMM_BWD, 1, 0, hl, h, T, 1, c->ctx, hl, full, h, beta, dW[TPP_W_PROJ], h);
	MM(E, TPP_PH_GEMM_BWD, 0, 1, T, hl, h, 1, full, h, W[TPP_W_PROJ], h, 0, E->dctx, hl);
	for (b = 0; b < E->o->shape.mbs; b++)
		for (j = 0; j < E->al; j++) {
			size_t off = (size_t)b * S * 3 * hl + (size_t)3 * d * j;
			const float *q = c->qkv + off;
			const float *p = c->p + ((size_t)b * E->al + j) * S * S;
			const float *dO = E->dctx + (size_t)b * S * hl + (size_t)d * j;
			float *dq = E->dqkv + off;
			MM(E, TPP_PH_ATTN_BWD, 0, 1, S, S, d, 1, dO, hl, q + 2 * d, 3 * hl, 0, E->dp, S);
			MM(E, TPP_PH_ATTN_BWD, 1, 0, S, d, S, 1, p, S, dO, hl, 0, dq + 2 * d, 3 * hl);
			OP(E, TPP_PH_ATTN_BWD, tpp_backend_softmax_bwd(E->b, S, S, S, p, E->dp, E->err));
			MM(E, TPP_PH_ATTN_BWD, 0, 0, S, d, S, scale, E->dp, S, q + d, 3 * hl, 0, dq, 3 * hl);
			MM(E, TPP_PH_ATTN_BWD, 1, 0, S, d, S, scale, E->dp, S, q, 3 * hl, 0, dq + d, 3 * hl);
		}
	MM(E, TPP_PH_GEMM_BWD, 1, 0, h, 3 * hl, T, 1, c->ln1, h, E->dqkv, 3 * hl, beta, dW[TPP_W_QKV], 3 * hl);
	MM(E, TPP_PH_GEMM_BWD, 0, 1, T, h, 3 * hl, 1, E->dqkv, 3 * hl, W[TPP_W_QKV], 3 * hl, 0, E->tF, h);
	if ((rc = tp_reduce(E, E->tF, E->tL)))
		return rc;
	OP(E, TPP_PH_ELEMWISE, tpp_backend_layernorm_bwd(E->b, Tl, h, x, c->mu1, c->rs1, E->tL, dx, E->err));
	OP(E, TPP_PH_ELEMWISE, tpp_backend_axpby(E->b, nl, 1, dx2, 1, dx, E->err));
	return TPP_OK;
}

/* ---- set-up ------------------------------------------------------------------ */

static int check_opts(const struct tpp_exec_opts *o, int wsize, struct tpp_err *err)
{
	const struct tpp_exec_shape *s = &o->shape;
	long T = (long)s->mbs * s->seq;
	/* in long long: degrees up to INT_MAX each must not wrap to wsize */
	long long ranks = (long long)o->tp * o->pp * o->dp;
	if (ranks != wsize)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "the layout needs tp*pp*dp = %d*%d*%d = %lld ranks, the job has %d (mpiexec -np %lld)",
				   o->tp, o->pp, o->dp, ranks, wsize, ranks);
	/* the token count is a GEMM dimension (int) */
	if (T > INT_MAX)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "mbs x seq = %d x %d = %ld tokens per micro-batch: more than %d",
				   s->mbs, s->seq, T, INT_MAX);
	if (s->hidden % s->heads)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "heads %d do not divide hidden %d", s->heads, s->hidden);
	if (s->heads % o->tp || s->ffn % o->tp)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "tp=%d must divide heads %d and ffn %d", o->tp, s->heads, s->ffn);
	if (o->sp && (o->tp < 2 || T % o->tp))
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "sp=1 needs tp >= 2 dividing the %ld tokens of a micro-batch", T);
	if (o->pp > 64)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "pp=%d: exec runs at most 64 pipeline stages", o->pp);
	if (o->layers < o->pp || (o->layers + o->pp - 1) / o->pp > 64)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "--layers %d: need pp (%d) <= layers <= 64 per stage",
				   o->layers, o->pp);
	/*
	 * Shapes the numerics check cannot judge.  LayerNorm over h elements
	 * divides by their spread: over h = 1 it is constant (output = input,
	 * every weight gradient 0, so a wrongly sharded layer passes), and
	 * over 2-4 random elements the spread is often tiny, so fp32 rounding
	 * is amplified past the tolerance on correct runs (hidden 4, 64
	 * layers: 4 of 30 seeds fail; hidden 8 and up: none of 40, also at 256
	 * layers over 4 stages).  With one token per sequence attention's
	 * softmax is constant and q and k get no gradient.
	 */
	if (o->check && (s->hidden < TPP_EXEC_CHECK_MIN_HIDDEN || s->seq < 2))
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "hidden %d, seq %d: the numerics check needs hidden >= %d (LayerNorm over fewer elements is ill-conditioned in fp32, over one constant) and seq >= 2 (one token gives q and k no gradient); give larger sizes or --no-check",
				   s->hidden, s->seq, TPP_EXEC_CHECK_MIN_HIDDEN);
	if (o->prec == TPP_PREC_FP8)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0, "exec does not run fp8");
	if ((unsigned)o->sched >= TPP_EXEC_SCHED__COUNT)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0, "unknown pipeline schedule %d", (int)o->sched);
	return TPP_OK;
}

/* Upload a shard of weight w of global layer l into dst, a block of
 * rows at a time (TPP_EXEC_CHUNK floats of host staging, or one row). */
static int upload_weight(struct ex *E, int l, enum tpp_exec_w w, float *dst)
{
	const struct tpp_exec_shape *s = &E->o->shape;
	int rows, cols, lr, lc, r, c, r0, nr, rc = TPP_OK;
	float *host;
	tpp_exec_wdims(s, w, &rows, &cols);
	lr = (w == TPP_W_PROJ || w == TPP_W_FC2) ? rows / E->o->tp : rows;
	lc = (w == TPP_W_QKV || w == TPP_W_FC1) ? cols / E->o->tp : cols;
	nr = lc < TPP_EXEC_CHUNK ? TPP_EXEC_CHUNK / lc : 1;
	if (nr > lr)
		nr = lr;
	host = malloc(sizeof(float) * (size_t)nr * lc);
	if (!host)
		return tpp_err_set(E->err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	for (r0 = 0; !rc && r0 < lr; r0 += nr) {
		int n = lr - r0 < nr ? lr - r0 : nr;
		for (r = r0; r < r0 + n; r++)
			for (c = 0; c < lc; c++) {
				int gr = r, gc = c;
				if (lr != rows)
					gr = E->tpr * lr + r;
				if (lc != cols)
					gc = E->tpr * lc + c;
				if (w == TPP_W_FC1 && E->o->wrong_shard)
					gc = (E->tpr * lc + c + 1) % cols; /* off by one column */
				host[(size_t)(r - r0) * lc + c] =
					(float)tpp_exec_weight(E->o->seed, s, l, w, gr, gc);
			}
		rc = tpp_backend_upload(E->b, dst + (size_t)r0 * lc, host,
					sizeof(float) * (size_t)n * lc, E->err);
	}
	free(host);
	return rc;
}

/* Rows [row0, row0+Tl) of the [T,h] tensor of tag into dst, in chunks. */
static int upload_act(struct ex *E, uint64_t tag, int row0, float *dst)
{
	size_t n = (size_t)E->Tl * E->h, i, j, k;
	size_t cap = n < TPP_EXEC_CHUNK ? n : TPP_EXEC_CHUNK;
	float *host = malloc(sizeof(float) * cap);
	int rc = TPP_OK;
	if (!host)
		return tpp_err_set(E->err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	for (i = 0; !rc && i < n; i += k) {
		k = n - i < cap ? n - i : cap;
		for (j = 0; j < k; j++)
			host[j] = (float)tpp_exec_rand(E->o->seed, tag, (uint64_t)row0 * E->h + i + j);
		rc = tpp_backend_upload(E->b, dst + i, host, sizeof(float) * k, E->err);
	}
	free(host);
	return rc;
}

/* Collective over the world; color MPI_UNDEFINED: no communicator (*out NULL). */
static int comm_split(struct ex *E, int color, int key, struct tpp_bk_comm **out)
{
	MPI_Comm c;
	int rc = MPI_Comm_split(MPI_COMM_WORLD, color, key, &c);
	*out = NULL;
	if (rc != MPI_SUCCESS)
		return tpp_bk_mpi_err(E->err, rc, "MPI_Comm_split");
	if (c == MPI_COMM_NULL)
		return TPP_OK;
	rc = tpp_backend_comm_new(E->b, &c, out, E->err);
	MPI_Comm_free(&c);
	return rc;
}

/*
 * 1F1B: a two-rank communicator for each pair of neighbouring stages
 * (q, q+1) of a pipeline (same TP and DP rank), stage q its rank 0.  Two
 * splits, even q then odd q, since a rank is in two pairs.  Every rank
 * takes part in both (MPI_Comm_split is collective over the world).
 */
static int pair_comms(struct ex *E)
{
	int pp = E->o->pp, line = E->dpr * E->o->tp + E->tpr, par, rc;
	for (par = 0; par < 2; par++) {
		struct tpp_bk_comm *c;
		/* the pair (q, q+1) with q of parity par that holds this stage */
		int q = E->ppr % 2 == par ? E->ppr : E->ppr - 1;
		int ok = q >= 0 && q + 1 < pp;
		if ((rc = comm_split(E, ok ? line * pp + q : MPI_UNDEFINED, E->ppr, &c)))
			return rc;
		if (c && q == E->ppr)
			E->pnext = c;
		else if (c)
			E->pprev = c;
	}
	return TPP_OK;
}

static int setup(struct ex *E)
{
	const struct tpp_exec_opts *o = E->o;
	int tp = o->tp, dp = o->dp, i, m, w, rc;
	size_t T, Tl, h, hl, fl, P;
	E->tpr = E->wrank % tp;
	E->dpr = (E->wrank / tp) % dp;
	E->ppr = E->wrank / (tp * dp);
	E->S = o->shape.seq;
	E->T = o->shape.mbs * o->shape.seq;
	E->Tl = o->sp ? E->T / tp : E->T;
	E->h = o->shape.hidden;
	E->f = o->shape.ffn;
	E->a = o->shape.heads;
	E->d = E->h / E->a;
	E->hl = E->h / tp;
	E->fl = E->f / tp;
	E->al = E->a / tp;
	E->M = o->microbatches;
	E->l0 = 0;
	for (i = 0; i < E->ppr; i++)
		E->l0 += tpp_chunk_layers(o->layers, o->pp, i);
	E->nl = tpp_chunk_layers(o->layers, o->pp, E->ppr);
	if ((rc = comm_split(E, E->ppr * dp + E->dpr, E->tpr, &E->tpc)) ||
	    (rc = comm_split(E, E->ppr * tp + E->tpr, E->dpr, &E->dpc)) ||
	    (rc = comm_split(E, E->dpr * tp + E->tpr, E->ppr, &E->ppc)))
		return rc;
	/* the same on every rank: the backend and the options are */
	if (o->pp > 1 && o->sched == TPP_EXEC_SCHED_1F1B &&
	    tpp_backend_has(E->b, (enum tpp_bk_op)(TPP_BK_OP_COLL + TPP_COLL_SEND_RECV)) &&
	    (rc = pair_comms(E)))
		return rc;
	/* 1F1B: stage r holds at most pp - r micro-batches between their
	 * forward and backward (warm-up pp - r - 1, plus the one of the
	 * steady state); GPipe holds all of them */
	E->nslots = E->M;
	if (o->sched == TPP_EXEC_SCHED_1F1B && o->pp - E->ppr < E->M)
		E->nslots = o->pp - E->ppr;
	T = (size_t)E->T; Tl = (size_t)E->Tl; h = (size_t)E->h;
	hl = (size_t)E->hl; fl = (size_t)E->fl;
	P = (size_t)o->shape.mbs * E->al * E->S * E->S;
	E->wn[TPP_W_QKV] = h * 3 * hl;
	E->wn[TPP_W_PROJ] = hl * h;
	E->wn[TPP_W_FC1] = h * fl;
	E->wn[TPP_W_FC2] = fl * h;
	E->dWn = (size_t)E->nl * (E->wn[0] + E->wn[1] + E->wn[2] + E->wn[3]);
	if ((rc = balloc(E, E->dWn, &E->dWall)))
		return rc;
	E->dWsum = E->dWall;
	if (o->dp > 1 && (rc = balloc(E, E->dWn, &E->dWsum)))
		return rc;
	{
		float *p = E->dWall;
		for (i = 0; i < E->nl; i++) {
			char what[64];
			/* this rank's own work, a step's --timeout per
			 * layer (the whole set-up of many layers can take
			 * longer than a step: slow, not stalled) */
			snprintf(what, sizeof(what), "set-up of layer %d's weights", E->l0 + i + 1);
			wd_arm(E, what, WD_SLOW);
			for (w = 0; w < TPP_W__COUNT; w++) {
				if ((rc = balloc(E, E->wn[w], &E->W[i][w])) ||
				    (rc = upload_weight(E, E->l0 + i, (enum tpp_exec_w)w, E->W[i][w])))
					return rc;
				E->dW[i][w] = p;
				p += E->wn[w];
			}
		}
	}
	E->lc = calloc((size_t)E->nl * E->nslots, sizeof(*E->lc));
	E->xs = calloc((size_t)E->M * (E->nl + 1), sizeof(*E->xs));
	E->dxs = calloc((size_t)E->M, sizeof(*E->dxs));
	E->dys = calloc((size_t)E->M, sizeof(*E->dys));
	if (!E->lc || !E->xs || !E->dxs || !E->dys)
		return tpp_err_set(E->err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	for (m = 0; m < E->M; m++) {
		int gmb = E->dpr * E->M + m;
		char what[64];
		snprintf(what, sizeof(what), "set-up of micro-batch %d's buffers", m + 1);
		wd_arm(E, what, WD_SLOW);
		for (i = 0; i <= E->nl; i++)
			if ((rc = balloc(E, Tl * h, &E->xs[m * (E->nl + 1) + i])))
				return rc;
		if ((rc = balloc(E, Tl * h, &E->dxs[m])) || (rc = balloc(E, Tl * h, &E->dys[m])))
			return rc;
		if (E->ppr == 0 &&
		    (rc = upload_act(E, tpp_exec_tag_x(gmb), o->sp ? E->tpr * E->Tl : 0,
				     E->xs[m * (E->nl + 1)])))
			return rc;
		if (E->ppr == o->pp - 1 &&
		    (rc = upload_act(E, tpp_exec_tag_dout(gmb), o->sp ? E->tpr * E->Tl : 0,
				     E->dys[m])))
			return rc;
		for (i = 0; m < E->nslots && i < E->nl; i++) {
			struct lcache *c = &E->lc[i * E->nslots + m];
			if ((rc = balloc(E, T * h, &c->ln1)) || (rc = balloc(E, Tl, &c->mu1)) ||
			    (rc = balloc(E, Tl, &c->rs1)) || (rc = balloc(E, T * 3 * hl, &c->qkv)) ||
			    (rc = balloc(E, P, &c->p)) || (rc = balloc(E, T * hl, &c->ctx)) ||
			    (rc = balloc(E, Tl * h, &c->x2)) || (rc = balloc(E, T * h, &c->ln2)) ||
			    (rc = balloc(E, Tl, &c->mu2)) || (rc = balloc(E, Tl, &c->rs2)) ||
			    (rc = balloc(E, T * fl, &c->u)) || (rc = balloc(E, T * fl, &c->g)))
				return rc;
		}
	}
	if ((rc = balloc(E, T * h, &E->tF)) || (rc = balloc(E, T * h, &E->tF2)) ||
	    (rc = balloc(E, T * h, &E->tL)) || (rc = balloc(E, Tl * h, &E->gA)) ||
	    (rc = balloc(E, Tl * h, &E->gB)) || (rc = balloc(E, Tl * h, &E->dx2b)) ||
	    (rc = balloc(E, T * 3 * hl, &E->dqkv)) || (rc = balloc(E, T * hl, &E->dctx)) ||
	    (rc = balloc(E, T * fl, &E->dg)) || (rc = balloc(E, (size_t)E->S * E->S, &E->dp)))
		return rc;
	return TPP_OK;
}

/* ---- one step ------------------------------------------------------------------ */

/*
 * Point-to-point transfers between neighbouring stages (same TP and DP
 * rank), one activation [Tl, h] each.  Sends may block until the peer
 * receives (MPI_Send of a large message; ncclSend), so the schedule
 * issues them in an order that cannot deadlock: every transfer meets its
 * partner at the same position of both stages' sequences (checked in
 * step_1f1b), and the 1F1B steady state pairs a forward send with a
 * backward receive as one exchange, as Megatron-LM's
 * send_forward_recv_backward / send_backward_recv_forward do.
 */
static int p2p(struct ex *E, int send, float *buf, int peer)
{
	int rc;
	size_t n = (size_t)E->Tl * E->h;
	if (send)
		OP(E, TPP_PH_PP_P2P, tpp_backend_send(E->b, E->ppc, buf, n, peer, E->err));
	else
		OP(E, TPP_PH_PP_P2P, tpp_backend_recv(E->b, E->ppc, buf, n, peer, E->err));
	return TPP_OK;
}

/*
 * Send `out` to the neighbour `peer` (ppr + 1 or ppr - 1) and receive `in`
 * from it, the neighbour doing the same at the same time.  On the pair's
 * two-rank communicator a send_recv (MPI_Sendrecv; NCCL send and receive
 * in one group) moves both at once; without one the lower stage sends
 * first and the upper receives first, so the two meet either way.
 */
static int exchange(struct ex *E, const float *out, float *in, int peer)
{
	struct tpp_bk_comm *pair = peer > E->ppr ? E->pnext : E->pprev;
	int rc;
	if (pair) {
		OP(E, TPP_PH_PP_P2P, tpp_backend_coll(E->b, pair, TPP_COLL_SEND_RECV, out, in,
						      (size_t)E->Tl * E->h, E->err));
		return TPP_OK;
	}
	if (peer > E->ppr)
		return (rc = p2p(E, 1, (float *)out, peer)) ? rc : p2p(E, 0, in, peer);
	return (rc = p2p(E, 0, in, peer)) ? rc : p2p(E, 1, (float *)out, peer);
}

/* The stage's layers forward for micro-batch m (input xs[m][0] in place). */
static int fwd_mb(struct ex *E, int m, int timed_first)
{
	float **xs = &E->xs[m * (E->nl + 1)];
	int i, rc;
	double t;
	for (i = 0; i < E->nl; i++) {
		t = MPI_Wtime();
		if ((rc = layer_fwd(E, i, xs[i], xs[i + 1], &E->lc[i * E->nslots + m % E->nslots])))
			return rc;
		E->acc[TPP_PH_LAYER_FWD] += MPI_Wtime() - t;
		E->cnt[TPP_PH_LAYER_FWD]++;
	}
	if (timed_first && E->die_rank == E->wrank) {
		fprintf(stderr, "tpplan: exec: rank %d: TPP_EXEC_TEST_DIE: exiting now\n", E->wrank);
		_exit(9);
	}
	return TPP_OK;
}

/* The stage's layers backward for micro-batch m (output gradient dys[m]
 * in place; input gradient into dxs[m]); the first of the step overwrites
 * the weight gradients, the others add to them. */
static int bwd_mb(struct ex *E, int m, int *first)
{
	float **xs = &E->xs[m * (E->nl + 1)];
	const float *dy = E->dys[m];
	int i, rc;
	double t;
	for (i = E->nl - 1; i >= 0; i--) {
		float *dx = i == 0 ? E->dxs[m] : (dy == E->gA ? E->gB : E->gA);
		t = MPI_Wtime();
		if ((rc = layer_bwd(E, i, xs[i], &E->lc[i * E->nslots + m % E->nslots], dy, dx,
				    *first ? 0.0f : 1.0f)))
			return rc;
		E->acc[TPP_PH_LAYER_BWD] += MPI_Wtime() - t;
		E->cnt[TPP_PH_LAYER_BWD]++;
		dy = dx;
	}
	*first = 0;
	return TPP_OK;
}

/* GPipe: all forwards, then all backwards (last micro-batch first). */
static int step_gpipe(struct ex *E, int timed_first)
{
	int m, rc, first = 1, last = E->ppr == E->o->pp - 1;
	for (m = 0; m < E->M; m++) {
		float *in = E->lost_recv ? E->tF : E->xs[m * (E->nl + 1)];
		if ((E->ppr > 0 && (rc = p2p(E, 0, in, E->ppr - 1))) ||
		    (rc = fwd_mb(E, m, timed_first)) ||
		    (!last && (rc = p2p(E, 1, E->xs[m * (E->nl + 1) + E->nl], E->ppr + 1))))
			return rc;
	}
	for (m = E->M - 1; m >= 0; m--) {
		if ((!last && (rc = p2p(E, 0, E->dys[m], E->ppr + 1))) ||
		    (rc = bwd_mb(E, m, &first)) ||
		    (E->ppr > 0 && (rc = p2p(E, 1, E->dxs[m], E->ppr - 1))))
			return rc;
	}
	return TPP_OK;
}

/*
 * 1F1B (PipeDream-flush; Megatron-LM forward_backward_pipelining_without_
 * interleaving): stage r of p runs w = min(p - r - 1, m) warm-up forwards,
 * then m - w times one forward and one backward, then w backwards;
 * micro-batches go backward in forward order.
 *
 * Why the transfers meet.  Stage r with the next stage r+1 (w' = its
 * warm-up): if m >= p - r - 1, w' = w - 1 and r sends w activations alone
 * (warm-up), exchanges m - w times (activation out, gradient in), receives
 * w gradients alone (cool-down); r+1 receives w' + 1 = w activations alone
 * (warm-up and the one before the steady state), exchanges m - w' - 1 =
 * m - w times (gradient out, activation in), and sends 1 + w' = w
 * gradients alone (the last steady backward and the cool-down).  If
 * m < p - r - 1, w = w' = m and neither has a steady state: m activations,
 * then m gradients.  So position k of r's sequence with r+1 is position k
 * of r+1's with r, with the same kind; a rank's sequence interleaves its
 * two neighbours in the order the data dependences impose, so no cycle
 * of waits can form.
 */
static int step_1f1b(struct ex *E, int timed_first)
{
	int p = E->o->pp, r = E->ppr, M = E->M, rc, first = 1, k;
	int w = p - r - 1 < M ? p - r - 1 : M, steady = M - w;
	int nf = 0, nb = 0; /* next micro-batch forward, backward */
	int has_prev = r > 0, has_next = r < p - 1;
#define XIN(m) (E->xs[(m) * (E->nl + 1)])
#define XOUT(m) (E->xs[(m) * (E->nl + 1) + E->nl])
	for (k = 0; k < w; k++, nf++)
		if ((has_prev && (rc = p2p(E, 0, XIN(nf), r - 1))) ||
		    (rc = fwd_mb(E, nf, timed_first)) ||
		    (has_next && (rc = p2p(E, 1, XOUT(nf), r + 1))))
			return rc;
	if (steady > 0 && has_prev && (rc = p2p(E, 0, XIN(nf), r - 1)))
		return rc;
	for (k = 0; k < steady; k++, nb++) {
		/* forward of nf, its activation out and nb's gradient in */
		if ((rc = fwd_mb(E, nf, timed_first)) ||
		    (has_next && (rc = exchange(E, XOUT(nf), E->dys[nb], r + 1))))
			return rc;
		nf++;
		if ((rc = bwd_mb(E, nb, &first)))
			return rc;
		/* nb's input gradient out and, but for the last, nf's input in */
		if (has_prev) {
			if (k == steady - 1)
				rc = p2p(E, 1, E->dxs[nb], r - 1);
			else
				rc = exchange(E, E->dxs[nb], XIN(nf), r - 1);
			if (rc)
				return rc;
		}
	}
	for (k = 0; k < w; k++, nb++)
		if ((has_next && (rc = p2p(E, 0, E->dys[nb], r + 1))) ||
		    (rc = bwd_mb(E, nb, &first)) ||
		    (has_prev && (rc = p2p(E, 1, E->dxs[nb], r - 1))))
			return rc;
#undef XIN
#undef XOUT
	return TPP_OK;
}

static int step(struct ex *E, int timed_first)
{
	const struct tpp_exec_opts *o = E->o;
	int rc;
	double t0 = MPI_Wtime();
	memset(E->acc, 0, sizeof(E->acc));
	memset(E->cnt, 0, sizeof(E->cnt));
	rc = o->sched == TPP_EXEC_SCHED_GPIPE ? step_gpipe(E, timed_first)
					      : step_1f1b(E, timed_first);
	if (rc)
		return rc;
	if (o->dp > 1)
		OP(E, TPP_PH_DP_AR, tpp_backend_coll(E->b, E->dpc, TPP_COLL_ALL_REDUCE, E->dWall, E->dWsum, E->dWn, E->err));
	if ((rc = tpp_backend_sync(E->b, E->err)))
		return rc;
	E->acc[TPP_PH_STEP] = MPI_Wtime() - t0;
	E->cnt[TPP_PH_STEP] = 1;
	return TPP_OK;
}

/* ---- error agreement (as calibrate/bench.c) ---------------------------------------- */

static int agree(struct ex *E, int rc)
{
	int in[2] = {rc, E->wrank}, out[2], root;
	char msg[sizeof(E->err->msg)];
	MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
	if (!out[0])
		return TPP_OK;
	root = out[1];
	if (root == E->wrank)
		tpp_strlcpy(msg, E->err->msg, sizeof(msg));
	MPI_Bcast(msg, (int)sizeof(msg), MPI_CHAR, root, MPI_COMM_WORLD);
	if (E->wsize > 1 && strncmp(msg, "rank ", 5))
		tpp_err_set(E->err, out[0], NULL, 0, 0, "rank %d: %s", root, msg);
	else
		tpp_err_set(E->err, out[0], NULL, 0, 0, "%s", msg);
	return out[0];
}

/* ---- the check (rank 0 against the fp64 reference) ----------------------------------- */

struct chk {
	int L, G;                  /* layers, global micro-batches */
	double **W, **dW;          /* [L * 4] of the full fp64 weights, gradients */
	double **out, **dx;        /* [G] of [T,h] */
	double err[3];             /* out, dx, dw */
	double worst;
	char worst_name[128];
	float *host;
};

static int reference(struct ex *E, struct chk *K)
{
	const struct tpp_exec_opts *o = E->o;
	const struct tpp_exec_shape *s = &o->shape;
	size_t Th = (size_t)E->T * E->h, i;
	int l, w, g, r, c, rc = TPP_OK;
	struct tpp_ref_cache *cache = calloc((size_t)K->L, sizeof(*cache));
	double *a = malloc(sizeof(double) * Th), *bb = malloc(sizeof(double) * Th);
	K->W = calloc((size_t)K->L * 4, sizeof(*K->W));
	K->dW = calloc((size_t)K->L * 4, sizeof(*K->dW));
	if (!cache || !a || !bb || !K->W || !K->dW) {
		rc = TPP_E_SYSTEM;
		goto out;
	}
	for (l = 0; l < K->L; l++) {
		char what[64];
		/* a layer's weights at a time, as its forward below */
		snprintf(what, sizeof(what), "the fp64 reference's weights of layer %d", l + 1);
		wd_arm(E, what, WD_SLOW_REF);
		if ((rc = tpp_ref_cache_new(s, &cache[l])))
			goto out;
		for (w = 0; w < TPP_W__COUNT; w++) {
			int rows, cols;
			tpp_exec_wdims(s, (enum tpp_exec_w)w, &rows, &cols);
			K->W[l * 4 + w] = malloc(sizeof(double) * (size_t)rows * cols);
			K->dW[l * 4 + w] = calloc((size_t)rows * cols, sizeof(double));
			if (!K->W[l * 4 + w] || !K->dW[l * 4 + w]) {
				rc = TPP_E_SYSTEM;
				goto out;
			}
			for (r = 0; r < rows; r++)
				for (c = 0; c < cols; c++)
					K->W[l * 4 + w][(size_t)r * cols + c] =
						(double)(float)tpp_exec_weight(o->seed, s, l, (enum tpp_exec_w)w, r, c);
		}
	}
	for (g = 0; g < K->G; g++) {
		K->out[g] = malloc(sizeof(double) * Th);
		K->dx[g] = malloc(sizeof(double) * Th);
		if (!K->out[g] || !K->dx[g]) {
			rc = TPP_E_SYSTEM;
			goto out;
		}
		for (i = 0; i < Th; i++)
			a[i] = (float)tpp_exec_rand(o->seed, tpp_exec_tag_x(g), i);
		for (l = 0; l < K->L; l++) {
			char what[96];
			/* the reference is one serial fp64 pass over what all
			 * ranks ran: a step's --timeout each layer, not for all */
			snprintf(what, sizeof(what), "the fp64 reference's forward of layer %d, micro-batch %d,", l + 1, g + 1);
			wd_arm(E, what, WD_SLOW_REF);
			tpp_ref_fwd(s, &K->W[l * 4], a, bb, &cache[l]);
			memcpy(a, bb, sizeof(double) * Th);
		}
		memcpy(K->out[g], a, sizeof(double) * Th);
		for (i = 0; i < Th; i++)
			a[i] = (float)tpp_exec_rand(o->seed, tpp_exec_tag_dout(g), i);
		for (l = K->L - 1; l >= 0; l--) {
			char what[96];
			snprintf(what, sizeof(what), "the fp64 reference's backward of layer %d, micro-batch %d,", l + 1, g + 1);
			wd_arm(E, what, WD_SLOW_REF);
			tpp_ref_bwd(s, &K->W[l * 4], &cache[l], a, bb, &K->dW[l * 4]);
			memcpy(a, bb, sizeof(double) * Th);
		}
		memcpy(K->dx[g], a, sizeof(double) * Th);
	}
out:
	if (cache)
		for (l = 0; l < K->L; l++)
			tpp_ref_cache_free(&cache[l]);
	free(cache);
	free(a);
	free(bb);
	if (rc)
		tpp_err_set(E->err, rc, NULL, 0, 0, "out of memory for the reference");
	return rc;
}

/* Move n floats of rank q's backend buffer dev to rank 0's K->host;
 * spoil: the --wrong-copy test hook, rank q's copy is off.  MPI counts
 * are ints: a tensor of 2^31 floats or more (8 GiB, a node with the
 * memory for its fp64 reference) goes in pieces. */
static int xfer(struct ex *E, int q, const float *dev, size_t n, float *host, int spoil)
{
	const size_t piece = (size_t)1 << 30;
	size_t off, k;
	int rc;
	if (E->wrank == q) {
		if ((rc = tpp_backend_download(E->b, host, dev, n * sizeof(float), E->err)))
			return rc;
		if (spoil && n)
			host[n - 1] += 1.0f;
		for (off = 0; q != 0 && off < n; off += k) {
			k = n - off < piece ? n - off : piece;
			if ((rc = MPI_Send(host + off, (int)k, MPI_FLOAT, 0, 77, MPI_COMM_WORLD)))
				return tpp_bk_mpi_err(E->err, rc, "MPI_Send");
		}
	} else if (E->wrank == 0) {
		for (off = 0; off < n; off += k) {
			k = n - off < piece ? n - off : piece;
			if ((rc = MPI_Recv(host + off, (int)k, MPI_FLOAT, q, 77, MPI_COMM_WORLD,
					   MPI_STATUS_IGNORE)))
				return tpp_bk_mpi_err(E->err, rc, "MPI_Recv");
		}
	}
	return TPP_OK;
}

/* rank 0: max|got - ref| / max|ref| of a rows x cols block (ref row stride ld) */
static void compare(struct chk *K, int kind, const float *got, const double *ref,
		    int rows, int cols, int ld, const char *name)
{
	double e = tpp_exec_rel_err(got, ref, rows, cols, ld);
	if (e > K->err[kind])
		K->err[kind] = e;
	if (e > K->worst || !K->worst_name[0]) {
		K->worst = e;
		tpp_strlcpy(K->worst_name, name, sizeof(K->worst_name));
	}
}

/* Every rank: rank q's results go to rank 0, which compares them. */
static int walk(struct ex *E, struct chk *K, int q)
{
	const struct tpp_exec_opts *o = E->o;
	int tp = o->tp, dp = o->dp;
	int tpr = q % tp, dpr = (q / tp) % dp, ppr = q / (tp * dp);
	int l0 = 0, nl, m, i, w, rc, row0 = o->sp ? tpr * E->Tl : 0;
	size_t n = (size_t)E->Tl * E->h;
	char name[128];
	int spoil = o->wrong_copy && tp > 1 && tpr == tp - 1;
	if (E->wrank != 0 && E->wrank != q)
		return TPP_OK;
	for (i = 0; i < ppr; i++)
		l0 += tpp_chunk_layers(o->layers, o->pp, i);
	nl = tpp_chunk_layers(o->layers, o->pp, ppr);
	/* every TP rank: without SP each holds the whole (all-reduced)
	 * tensor, and a wrong copy on any of them is a wrong result */
	if (ppr == o->pp - 1)
		for (m = 0; m < E->M; m++) {
			int g = dpr * E->M + m;
			if ((rc = xfer(E, q, E->xs[m * (E->nl + 1) + E->nl], n, K->host, spoil)))
				return rc;
			snprintf(name, sizeof(name), "output of micro-batch %d (rank %d)", g + 1, q);
			if (E->wrank == 0)
				compare(K, 0, K->host, K->out[g] + (size_t)row0 * E->h, E->Tl, E->h, E->h, name);
		}
	if (ppr == 0)
		for (m = 0; m < E->M; m++) {
			int g = dpr * E->M + m;
			if ((rc = xfer(E, q, E->dxs[m], n, K->host, spoil)))
				return rc;
			snprintf(name, sizeof(name), "input gradient of micro-batch %d (rank %d)", g + 1, q);
			if (E->wrank == 0)
				compare(K, 1, K->host, K->dx[g] + (size_t)row0 * E->h, E->Tl, E->h, E->h, name);
		}
	for (i = 0; i < nl; i++) {
		/* a layer at a time: rank 0 compares them all, which
		 * can take longer than a step in all */
		snprintf(name, sizeof(name), "the numerics check's transfer of rank %d, layer %d", q, l0 + i + 1);
		wd_arm(E, name, WD_STALLED);
		for (w = 0; w < TPP_W__COUNT; w++) {
			int rows, cols, lr, lc;
			const float *dev = NULL;
			tpp_exec_wdims(&o->shape, (enum tpp_exec_w)w, &rows, &cols);
			lr = (w == TPP_W_PROJ || w == TPP_W_FC2) ? rows / tp : rows;
			lc = (w == TPP_W_QKV || w == TPP_W_FC1) ? cols / tp : cols;
			if (E->wrank == q)
				dev = E->dWsum + (E->dW[i][w] - E->dWall);
			if ((rc = xfer(E, q, dev, (size_t)lr * lc, K->host, 0)))
				return rc;
			snprintf(name, sizeof(name), "gradient of %s, layer %d (rank %d)",
				 tpp_exec_w_names[w], l0 + i + 1, q);
			if (E->wrank == 0)
				compare(K, 2, K->host,
					K->dW[(l0 + i) * 4 + w] + (size_t)(lr != rows ? tpr * lr : 0) * cols +
						(lc != cols ? tpr * lc : 0),
					lr, lc, cols, name);
		}
	}
	return TPP_OK;
}

static int check(struct ex *E, struct tpp_exec_result *res)
{
	struct chk K;
	int rc = TPP_OK, q, i, G = E->o->dp * E->M;
	size_t maxn = (size_t)E->T * (E->h > E->f ? E->h : E->f) * 3;
	memset(&K, 0, sizeof(K));
	K.L = E->o->layers;
	K.G = G;
	K.host = malloc(sizeof(float) * maxn);
	K.out = calloc((size_t)G, sizeof(double *));
	K.dx = calloc((size_t)G, sizeof(double *));
	if (!K.host || !K.out || !K.dx)
		rc = tpp_err_set(E->err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	{
		size_t wmax = (size_t)E->h * 3 * E->h;
		size_t f2 = (size_t)E->h * E->f;
		if (!rc && (wmax > maxn || f2 > maxn)) {
			float *nh = realloc(K.host, sizeof(float) * (wmax > f2 ? wmax : f2));
			if (!nh)
				rc = tpp_err_set(E->err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
			else
				K.host = nh;
		}
	}
	/* rank 0 alone computes the reference, arming its watchdog layer by
	 * layer; the others only wait for it (should rank 0 die, the MPI
	 * launcher ends them), then each transfer of the walk has its own */
	if (E->wrank != 0)
		wd_disarm(E);
	if (!rc && E->wrank == 0)
		rc = reference(E, &K);
	rc = agree(E, rc);
	for (q = 0; !rc && q < E->wsize; q++) {
		char what[64];
		snprintf(what, sizeof(what), "the numerics check's transfer of rank %d", q);
		/* rank 0 and q arm it layer by layer in walk(); the
		 * others only wait for them, as for the reference */
		if (E->wrank == 0 || E->wrank == q)
			wd_arm(E, what, WD_STALLED);
		else
			wd_disarm(E);
		rc = agree(E, walk(E, &K, q));
	}
	if (!rc && E->wrank == 0) {
		res->checked = 1;
		res->err_out = K.err[0];
		res->err_dx = K.err[1];
		res->err_dw = K.err[2];
		res->tol = tpp_exec_tolerance(E->o->prec);
		tpp_strlcpy(res->worst, K.worst_name, sizeof(res->worst));
	}
	for (i = 0; i < K.L * 4; i++) {
		if (K.W)
			free(K.W[i]);
		if (K.dW)
			free(K.dW[i]);
	}
	free(K.W);
	free(K.dW);
	for (i = 0; i < G; i++) {
		if (K.out)
			free(K.out[i]);
		if (K.dx)
			free(K.dx[i]);
	}
	free(K.out);
	free(K.dx);
	free(K.host);
	return rc;
}

/* ---- the memory check (before any buffer) -------------------------------------------- */

#define MEM_FRACTION 0.9  /* of a node's physical or a device's free memory */
#define MEM_FACTORS 19    /* --scale-down 2, 4, ..., 2^19 tried for the advice (--scale-down takes at most 1e6) */

static void fmt_bytes(char *buf, size_t size, double b)
{
	if (b >= 1024.0 * 1024 * 1024)
		snprintf(buf, size, "%.1f GiB", b / (1024.0 * 1024 * 1024));
	else
		snprintf(buf, size, "%.0f MiB", b / (1024.0 * 1024));
}

/*
 * Collective over the world, before setup() allocates: each rank counts
 * what it will allocate (tpp_exec_mem_rank), the ranks of a node add up
 * their host bytes, and the run goes ahead only if on every node that sum
 * stays within MEM_FRACTION of the physical memory and on every rank the
 * device bytes within MEM_FRACTION of the device's free memory.  The same
 * sums for the run without the check and for each --scale-down 2^k above
 * o->scale (with a model) give the advice.  Returns TPP_E_INPUT on the
 * ranks that do not fit (the message has their figures), TPP_OK on the
 * others: agree() then reports the lowest failing rank.
 */
static int mem_check(struct ex *E)
{
	enum { NC = 2 + MEM_FACTORS };
	const struct tpp_exec_opts *o = E->o;
	struct tpp_exec_opts c;
	struct tpp_exec_mem mine[NC];
	struct tpp_err tmp;
	double host[NC], node_host[NC], factor[NC], phys = INFINITY, dev_free = INFINITY;
	int ok[NC], all_ok[NC], k, rc = TPP_OK, mpirc, node_ranks = 1, best = -1;
	const char *hook = getenv("TPP_EXEC_TEST_MEM_BYTES");
	int from_cgroup = 0;
	MPI_Comm node;
	char need_s[32], lim_s[32], mine_s[32], ref_s[32], advice[256];

	/* the physical memory, or a memory cgroup's smaller limit (a
	 * container, a Slurm or Kubernetes job: past it the OOM killer ends
	 * the run) */
	phys = tpp_host_mem_limit(&from_cgroup);
	if (tpp_backend_has(E->b, TPP_BK_OP_MEM_INFO)) {
		size_t fr = 0, tot = 0;
		rc = tpp_backend_mem_info(E->b, &fr, &tot, E->err);
		dev_free = (double)fr;
	}
	if (hook && *hook) {
		phys = strtod(hook, NULL);
		if (dev_free < INFINITY)
			dev_free = phys;
	}
	/* candidate 0: the run as given; 1: without the check; 2..: with
	 * --scale-down factor[k] */
	for (k = 0; k < NC; k++) {
		c = *o;
		factor[k] = k < 2 ? o->scale : ldexp(1, k - 1);
		ok[k] = 1;
		if (k == 1) {
			ok[k] = o->check;
			c.check = 0;
		} else if (k >= 2) {
			ok[k] = o->model.heads > 0 && factor[k] > o->scale;
			if (ok[k]) {
				tpp_exec_shape_scale(&o->model, factor[k], &o->over, &c.shape);
				ok[k] = check_opts(&c, E->wsize, &tmp) == TPP_OK;
			}
		}
		if (ok[k])
			tpp_exec_mem_rank(&c, E->wrank, &mine[k]);
		else
			memset(&mine[k], 0, sizeof(mine[k]));
		host[k] = mine[k].host_bytes;
	}
	mpirc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, E->wrank,
				    MPI_INFO_NULL, &node);
	if (mpirc != MPI_SUCCESS)
		return tpp_bk_mpi_err(E->err, mpirc, "MPI_Comm_split_type");
	MPI_Comm_size(node, &node_ranks);
	MPI_Allreduce(host, node_host, NC, MPI_DOUBLE, MPI_SUM, node);
	MPI_Comm_free(&node);
	for (k = 0; k < NC; k++)
		ok[k] = ok[k] && node_host[k] <= MEM_FRACTION * phys &&
			mine[k].dev_bytes <= MEM_FRACTION * dev_free;
	MPI_Allreduce(ok, all_ok, NC, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (rc || all_ok[0] || ok[0])
		return rc;
	for (k = 2; k < NC && best < 0; k++)
		if (all_ok[k])
			best = k;
	if (best >= 0) {
		struct tpp_exec_shape sh;
		tpp_exec_shape_scale(&o->model, factor[best], &o->over, &sh);
		snprintf(advice, sizeof(advice),
			 "--scale-down %g would fit (hidden %d, heads %d, ffn %d, seq %d)%s",
			 factor[best], sh.hidden, sh.heads, sh.ffn, sh.seq,
			 all_ok[1] ? ", as would --no-check (no fp64 reference)" : "");
	} else if (o->model.heads > 0) {
		snprintf(advice, sizeof(advice),
			 "%sno --scale-down up to %.0f fits; run fewer --layers or --microbatches, or on more ranks",
			 all_ok[1] ? "--no-check (no fp64 reference) would fit; " : "",
			 ldexp(1, MEM_FACTORS));
	} else {
		snprintf(advice, sizeof(advice),
			 "%sgive a smaller shape (--hidden, --ffn, --seq), fewer --layers or --microbatches",
			 all_ok[1] ? "--no-check (no fp64 reference) would fit; or " : "");
	}
	if (node_host[0] > MEM_FRACTION * phys) {
		int cg = from_cgroup && !(hook && *hook);
		fmt_bytes(need_s, sizeof(need_s), node_host[0]);
		fmt_bytes(lim_s, sizeof(lim_s), phys);
		fmt_bytes(mine_s, sizeof(mine_s), mine[0].host_bytes);
		fmt_bytes(ref_s, sizeof(ref_s), mine[0].ref_bytes);
		return tpp_err_set(E->err, TPP_E_INPUT, NULL, 0, 0,
				   "not enough memory: the %d rank%s on this node would allocate %s of host memory (this rank %s%s%s%s), more than %.0f%% of %s%s%s; %s",
				   node_ranks, node_ranks == 1 ? "" : "s", need_s, mine_s,
				   mine[0].ref_bytes > 0 ? ", " : "",
				   mine[0].ref_bytes > 0 ? ref_s : "",
				   mine[0].ref_bytes > 0 ? " of it for the fp64 reference" : "",
				   100 * MEM_FRACTION, cg ? "the " : "the node's ", lim_s,
				   cg ? " this job may use (its memory cgroup's limit)" : " of physical memory",
				   advice);
	}
	fmt_bytes(need_s, sizeof(need_s), mine[0].dev_bytes);
	fmt_bytes(lim_s, sizeof(lim_s), dev_free);
	return tpp_err_set(E->err, TPP_E_INPUT, NULL, 0, 0,
			   "not enough device memory: this rank would allocate %s on its %s device, more than %.0f%% of the %s free there; %s",
			   need_s, o->backend, 100 * MEM_FRACTION, lim_s, advice);
}

/* ---- the run -------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* A hash of everything that decides what a rank runs, field by field (no
 * struct padding). */
static unsigned long long opts_hash(const struct tpp_exec_opts *o)
{
	const struct tpp_exec_shape *sh[3] = {&o->shape, &o->model, &o->over};
	const int v[] = {(int)o->prec, o->tp, o->pp, o->dp, o->sp, o->layers,
			 o->microbatches, (int)o->sched, o->iters, o->warmup,
			 o->timeout_s, o->check, o->wrong_shard, o->wrong_copy,
			 o->barrier};
	unsigned long long h = TPP_FNV1A_INIT;
	int i;
	h = tpp_fnv1a(h, o->backend, strlen(o->backend) + 1);
	h = tpp_fnv1a(h, v, sizeof(v));
	for (i = 0; i < 3; i++) {
		const int d[5] = {sh[i]->hidden, sh[i]->heads, sh[i]->ffn, sh[i]->seq,
				  sh[i]->mbs};
		h = tpp_fnv1a(h, d, sizeof(d));
	}
	h = tpp_fnv1a(h, &o->seed, sizeof(o->seed));
	return tpp_fnv1a(h, &o->scale, sizeof(o->scale));
}

int tpp_exec_run(const struct tpp_exec_opts *o, struct tpp_exec_result *res,
		 struct tpp_err *err)
{
	struct ex E;
	int rc, it, p, i;
	double *times = NULL, med[TPP_PH__COUNT], medmax[TPP_PH__COUNT];
	int cntmax[TPP_PH__COUNT];
	const char *die = getenv("TPP_EXEC_TEST_DIE");
	MPI_Comm world = MPI_COMM_WORLD;

	memset(&E, 0, sizeof(E));
	memset(res, 0, sizeof(*res));
	E.o = o;
	E.err = err;
	E.die_rank = die && *die ? atoi(die) : -1;
	E.lost_recv = getenv("TPP_EXEC_TEST_LOST_RECV") != NULL;
	MPI_Comm_rank(MPI_COMM_WORLD, &E.wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &E.wsize);
	res->ranks = E.wsize;
	/*
	 * Every rank must run the same thing: ranks started with different
	 * flags (an MPMD command line) or reading --plan / --model files that
	 * differ between nodes would wait on each other in collectives of
	 * other sizes or counts until --timeout, or forever with 0.  The
	 * check is a collective too: under this rank's --timeout.
	 */
	wd_arm(&E, "set-up", WD_STALLED);
	{
		unsigned long long h = opts_hash(o), lo, hi;
		MPI_Allreduce(&h, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
		MPI_Allreduce(&h, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
		if (lo != hi)
			rc = tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
					 "the ranks were given different options (or read --plan / --model files that differ between nodes): every rank must run the same command");
		else
			rc = check_opts(o, E.wsize, err);
	}
	if (rc) {
		wd_disarm(&E);
		return rc; /* same on every rank */
	}
	rc = tpp_backend_new(o->backend, &world, &E.b, err);
	rc = agree(&E, rc);
	if (rc)
		goto out;
	if (!tpp_backend_has(E.b, TPP_BK_OP_GEMM_EX) || !tpp_backend_has(E.b, TPP_BK_OP_ELEMWISE) ||
	    !tpp_backend_has(E.b, TPP_BK_OP_P2P))
		rc = tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				 "backend %s lacks what exec needs (GEMM with transposes, element-wise kernels, send/recv)",
				 o->backend);
	rc = agree(&E, rc);
	/* nothing large is allocated before this */
	if (!rc)
		rc = agree(&E, mem_check(&E));
	if (!rc)
		rc = setup(&E);
	/* waiting for the others: stalled if it takes a step's --timeout */
	wd_arm(&E, "set-up", WD_STALLED);
	rc = agree(&E, rc);
	times = calloc((size_t)(o->iters > 0 ? o->iters : 1) * TPP_PH__COUNT, sizeof(double));
	if (!rc && !times)
		rc = tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	for (it = 0; !rc && it < o->warmup + o->iters; it++) {
		char what[64];
		snprintf(what, sizeof(what), "step %d", it + 1);
		wd_arm(&E, what, WD_STALLED);
		if ((rc = agree(&E, poison_received(&E))))
			break;
		MPI_Barrier(MPI_COMM_WORLD);
		rc = step(&E, it == o->warmup);
		if (!rc && it >= o->warmup)
			for (p = 0; p < TPP_PH__COUNT; p++)
				times[(size_t)p * o->iters + (it - o->warmup)] = E.acc[p];
		rc = agree(&E, rc);
	}
	if (!rc) {
		for (p = 0; p < TPP_PH__COUNT; p++) {
			double *v = &times[(size_t)p * o->iters];
			qsort(v, (size_t)o->iters, sizeof(double), cmp_double);
			med[p] = o->iters % 2 ? v[o->iters / 2]
					      : 0.5 * (v[o->iters / 2 - 1] + v[o->iters / 2]);
		}
		MPI_Reduce(med, medmax, TPP_PH__COUNT, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		MPI_Reduce(E.cnt, cntmax, TPP_PH__COUNT, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
		if (E.wrank == 0)
			for (p = 0; p < TPP_PH__COUNT; p++) {
				res->measured_s[p] = medmax[p];
				res->count[p] = cntmax[p];
			}
	}
	if (!rc && o->check) {
		wd_arm(&E, "the numerics check's set-up", WD_STALLED);
		rc = check(&E, res);
		if (!rc && E.wrank == 0 &&
		    !(res->err_out <= res->tol && res->err_dx <= res->tol && res->err_dw <= res->tol))
			rc = tpp_err_set(err, TPP_E_INFEASIBLE, NULL, 0, 0,
					 "numerics check failed: %s is off by %.3g relative (tolerance %.3g for %s)",
					 res->worst, fmax(res->err_out, fmax(res->err_dx, res->err_dw)),
					 res->tol, tpp_prec_names[o->prec]);
		rc = agree(&E, rc);
	}
out:
	wd_disarm(&E);
	free(times);
	if (E.b) {
		for (i = 0; i < E.nbufs; i++)
			tpp_backend_release(E.b, E.bufs[i]);
		tpp_backend_comm_free(E.b, E.tpc);
		tpp_backend_comm_free(E.b, E.dpc);
		tpp_backend_comm_free(E.b, E.ppc);
		tpp_backend_comm_free(E.b, E.pnext);
		tpp_backend_comm_free(E.b, E.pprev);
		tpp_backend_free(E.b);
	}
	free(E.bufs);
	free(E.lc);
	free(E.xs);
	free(E.dxs);
	free(E.dys);
	return rc;
}
