/*
 * ref.c - the unsharded reference of `tpplan exec`: one GPT block (the
 * math of exec.h) forward and backward in fp64 on the host, with CBLAS
 * dgemm, plus the seeded generator every rank draws weights and inputs
 * from.  Rank 0 runs it over all micro-batches of all DP replicas and
 * compares the sharded run's outputs and gradients with it (run.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "exec_impl.h"

const char *const tpp_exec_w_names[TPP_W__COUNT] = {
	[TPP_W_QKV] = "qkv", [TPP_W_PROJ] = "proj",
	[TPP_W_FC1] = "fc1", [TPP_W_FC2] = "fc2",
};

void tpp_exec_wdims(const struct tpp_exec_shape *s, enum tpp_exec_w w,
		    int *rows, int *cols)
{
	switch (w) {
	case TPP_W_QKV: *rows = s->hidden; *cols = 3 * s->hidden; break;
	case TPP_W_PROJ: *rows = s->hidden; *cols = s->hidden; break;
	case TPP_W_FC1: *rows = s->hidden; *cols = s->ffn; break;
	default: *rows = s->ffn; *cols = s->hidden; break;
	}
}

/* splitmix64 finaliser */
static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double tpp_exec_rand(uint64_t seed, uint64_t tag, uint64_t idx)
{
	uint64_t z = mix(mix(mix(seed) ^ tag) ^ idx);
	return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

uint64_t tpp_exec_tag_w(int layer, enum tpp_exec_w w)
{
	return 1000 + (uint64_t)layer * 8 + (uint64_t)w;
}

uint64_t tpp_exec_tag_x(int gmb) { return (1ULL << 40) | (uint64_t)gmb; }
uint64_t tpp_exec_tag_dout(int gmb) { return (2ULL << 40) | (uint64_t)gmb; }

double tpp_exec_weight(uint64_t seed, const struct tpp_exec_shape *s,
		       int layer, enum tpp_exec_w w, int r, int c)
{
	int rows, cols;
	tpp_exec_wdims(s, w, &rows, &cols);
	return tpp_exec_rand(seed, tpp_exec_tag_w(layer, w),
			     (uint64_t)r * (uint64_t)cols + (uint64_t)c) *
	       sqrt(3.0 / rows);
}

int tpp_ref_cache_new(const struct tpp_exec_shape *s, struct tpp_ref_cache *c)
{
	size_t T = (size_t)s->mbs * (size_t)s->seq, h = (size_t)s->hidden;
	size_t f = (size_t)s->ffn;
	size_t P = (size_t)s->mbs * (size_t)s->heads * (size_t)s->seq * (size_t)s->seq;
	memset(c, 0, sizeof(*c));
	c->x = malloc(sizeof(double) * T * h);
	c->ln1 = malloc(sizeof(double) * T * h);
	c->mu1 = malloc(sizeof(double) * T);
	c->rs1 = malloc(sizeof(double) * T);
	c->qkv = malloc(sizeof(double) * T * 3 * h);
	c->p = malloc(sizeof(double) * P);
	c->ctx = malloc(sizeof(double) * T * h);
	c->x2 = malloc(sizeof(double) * T * h);
	c->ln2 = malloc(sizeof(double) * T * h);
	c->mu2 = malloc(sizeof(double) * T);
	c->rs2 = malloc(sizeof(double) * T);
	c->u = malloc(sizeof(double) * T * f);
	c->g = malloc(sizeof(double) * T * f);
	if (!c->x || !c->ln1 || !c->mu1 || !c->rs1 || !c->qkv || !c->p ||
	    !c->ctx || !c->x2 || !c->ln2 || !c->mu2 || !c->rs2 || !c->u || !c->g) {
		tpp_ref_cache_free(c);
		return TPP_E_SYSTEM;
	}
	return TPP_OK;
}

void tpp_ref_cache_free(struct tpp_ref_cache *c)
{
	if (!c)
		return;
	free(c->x); free(c->ln1); free(c->mu1); free(c->rs1); free(c->qkv);
	free(c->p); free(c->ctx); free(c->x2); free(c->ln2); free(c->mu2);
	free(c->rs2); free(c->u); free(c->g);
	memset(c, 0, sizeof(*c));
}

/* C[M,N] = alpha op(A) op(B) + beta C, row-major */
static void mm(int ta, int tb, int M, int N, int K, double alpha,
	       const double *A, int lda, const double *B, int ldb, double beta,
	       double *C, int ldc)
{
	cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
		    tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B,
		    ldb, beta, C, ldc);
}

static void ln_fwd(int rows, int cols, const double *x, double *y, double *mu,
		   double *rs)
{
	int i, j;
	for (i = 0; i < rows; i++) {
		const double *r = x + (size_t)i * cols;
		double m = 0, v = 0;
		for (j = 0; j < cols; j++)
			m += r[j];
		m /= cols;
		for (j = 0; j < cols; j++)
			v += (r[j] - m) * (r[j] - m);
		v /= cols;
		mu[i] = m;
		rs[i] = 1.0 / sqrt(v + 1e-5);
		for (j = 0; j < cols; j++)
			y[(size_t)i * cols + j] = (r[j] - m) * rs[i];
	}
}

/* dx += LN'(dy) */
static void ln_bwd_add(int rows, int cols, const double *x, const double *mu,
		       const double *rs, const double *dy, double *dx)
{
	int i, j;
	for (i = 0; i < rows; i++) {
		const double *r = x + (size_t)i * cols, *g = dy + (size_t)i * cols;
		double sg = 0, sgx = 0;
		for (j = 0; j < cols; j++) {
			sg += g[j];
			sgx += g[j] * (r[j] - mu[i]) * rs[i];
		}
		sg /= cols;
		sgx /= cols;
		for (j = 0; j < cols; j++)
			dx[(size_t)i * cols + j] +=
				rs[i] * (g[j] - sg - (r[j] - mu[i]) * rs[i] * sgx);
	}
}

#define GC 0.7978845608028654

static double gelu(double v)
{
	return 0.5 * v * (1.0 + tanh(GC * (v + 0.044715 * v * v * v)));
}

static double gelu_d(double v)
{
	double t = tanh(GC * (v + 0.044715 * v * v * v));
	return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * GC * (1.0 + 3 * 0.044715 * v * v);
}

void tpp_ref_fwd(const struct tpp_exec_shape *s, double *const W[TPP_W__COUNT],
		 const double *x, double *out, struct tpp_ref_cache *c)
{
	int T = s->mbs * s->seq, h = s->hidden, f = s->ffn, S = s->seq;
	int a = s->heads, d = h / a, b, hd, i, j;
	size_t n, k;
	double scale = 1.0 / sqrt((double)d);
	memcpy(c->x, x, sizeof(double) * (size_t)T * h);
	ln_fwd(T, h, x, c->ln1, c->mu1, c->rs1);
	mm(0, 0, T, 3 * h, h, 1, c->ln1, h, W[TPP_W_QKV], 3 * h, 0, c->qkv, 3 * h);
	for (b = 0; b < s->mbs; b++)
		for (hd = 0; hd < a; hd++) {
			const double *q = c->qkv + (size_t)b * S * 3 * h + (size_t)3 * d * hd;
			double *p = c->p + ((size_t)b * a + hd) * S * S;
			mm(0, 1, S, S, d, scale, q, 3 * h, q + d, 3 * h, 0, p, S);
			for (i = 0; i < S; i++) {
				double *r = p + (size_t)i * S, mx = r[0], sum = 0;
				for (j = 1; j <= i; j++)
					mx = r[j] > mx ? r[j] : mx;
				for (j = 0; j <= i; j++)
					sum += (r[j] = exp(r[j] - mx));
				for (j = 0; j < S; j++)
					r[j] = j <= i ? r[j] / sum : 0;
			}
			mm(0, 0, S, d, S, 1, p, S, q + 2 * d, 3 * h, 0,
			   c->ctx + (size_t)b * S * h + (size_t)d * hd, h);
		}
	memcpy(c->x2, x, sizeof(double) * (size_t)T * h);
	mm(0, 0, T, h, h, 1, c->ctx, h, W[TPP_W_PROJ], h, 1, c->x2, h);
	ln_fwd(T, h, c->x2, c->ln2, c->mu2, c->rs2);
	mm(0, 0, T, f, h, 1, c->ln2, h, W[TPP_W_FC1], f, 0, c->u, f);
	n = (size_t)T * f;
	for (k = 0; k < n; k++)
		c->g[k] = gelu(c->u[k]);
	memcpy(out, c->x2, sizeof(double) * (size_t)T * h);
	mm(0, 0, T, h, f, 1, c->g, f, W[TPP_W_FC2], h, 1, out, h);
}

void tpp_ref_bwd(const struct tpp_exec_shape *s, double *const W[TPP_W__COUNT],
		 const struct tpp_ref_cache *c, const double *dout, double *dx,
		 double *const dW[TPP_W__COUNT])
{
	int T = s->mbs * s->seq, h = s->hidden, f = s->ffn, S = s->seq;
	int a = s->heads, d = h / a, b, hd, i, j;
	size_t n = (size_t)T * f, k;
	double scale = 1.0 / sqrt((double)d);
	double *dg = malloc(sizeof(double) * n);
	double *dx2 = malloc(sizeof(double) * (size_t)T * h);
	double *dln = malloc(sizeof(double) * (size_t)T * h);
	double *dctx = malloc(sizeof(double) * (size_t)T * h);
	double *dqkv = malloc(sizeof(double) * (size_t)T * 3 * h);
	double *dp = malloc(sizeof(double) * (size_t)S * S);
	TPP_ASSERT(dg && dx2 && dln && dctx && dqkv && dp);
	/* MLP */
	mm(1, 0, f, h, T, 1, c->g, f, dout, h, 1, dW[TPP_W_FC2], h);
	mm(0, 1, T, f, h, 1, dout, h, W[TPP_W_FC2], h, 0, dg, f);
	for (k = 0; k < n; k++)
		dg[k] *= gelu_d(c->u[k]);
	mm(1, 0, h, f, T, 1, c->ln2, h, dg, f, 1, dW[TPP_W_FC1], f);
	mm(0, 1, T, h, f, 1, dg, f, W[TPP_W_FC1], f, 0, dln, h);
	memcpy(dx2, dout, sizeof(double) * (size_t)T * h);
	ln_bwd_add(T, h, c->x2, c->mu2, c->rs2, dln, dx2);
	/* attention */
	mm(1, 0, h, h, T, 1, c->ctx, h, dx2, h, 1, dW[TPP_W_PROJ], h);
	mm(0, 1, T, h, h, 1, dx2, h, W[TPP_W_PROJ], h, 0, dctx, h);
	for (b = 0; b < s->mbs; b++)
		for (hd = 0; hd < a; hd++) {
			size_t off = (size_t)b * S * 3 * h + (size_t)3 * d * hd;
			const double *q = c->qkv + off;
			const double *p = c->p + ((size_t)b * a + hd) * S * S;
			const double *dO = dctx + (size_t)b * S * h + (size_t)d * hd;
			double *dq = dqkv + off;
			mm(0, 1, S, S, d, 1, dO, h, q + 2 * d, 3 * h, 0, dp, S);
			mm(1, 0, S, d, S, 1, p, S, dO, h, 0, dq + 2 * d, 3 * h);
			for (i = 0; i < S; i++) {
				double dot = 0;
				for (j = 0; j < S; j++)
					dot += p[(size_t)i * S + j] * dp[(size_t)i * S + j];
				for (j = 0; j < S; j++)
					dp[(size_t)i * S + j] = p[(size_t)i * S + j] *
								(dp[(size_t)i * S + j] - dot);
			}
			mm(0, 0, S, d, S, scale, dp, S, q + d, 3 * h, 0, dq, 3 * h);
			mm(1, 0, S, d, S, scale, dp, S, q, 3 * h, 0, dq + d, 3 * h);
		}
	mm(1, 0, h, 3 * h, T, 1, c->ln1, h, dqkv, 3 * h, 1, dW[TPP_W_QKV], 3 * h);
	mm(0, 1, T, h, 3 * h, 1, dqkv, 3 * h, W[TPP_W_QKV], 3 * h, 0, dln, h);
	memcpy(dx, dx2, sizeof(double) * (size_t)T * h);
	ln_bwd_add(T, h, c->x, c->mu1, c->rs1, dln, dx);
	free(dg); free(dx2); free(dln); free(dctx); free(dqkv); free(dp);
}

double tpp_exec_rel_err(const float *got, const double *ref, int rows, int cols,
			int ld)
{
	double md = 0, mr = 0, e;
	int r, c, has_nan = 0;
	for (r = 0; r < rows; r++)
		for (c = 0; c < cols; c++) {
			double v = ref[(size_t)r * ld + c];
			double dd = fabs(got[(size_t)r * cols + c] - v);
			/* a NaN is remembered apart: folded into the maximum,
			 * the next finite difference would replace it */
			if (isnan(dd))
				has_nan = 1;
			else if (dd > md)
				md = dd;
			mr = fabs(v) > mr ? fabs(v) : mr;
		}
	e = mr > 0 ? md / mr : md;
	return has_nan || isnan(e) ? INFINITY : e;
}
