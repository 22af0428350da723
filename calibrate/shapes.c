/*
 * shapes.c - the GEMM shapes a model's layers produce, for the calibration
 * sweep (calibration.md 5.2, "model-driven set").
 *
 * For each TP degree t (powers of two up to max_tp that divide the heads
 * and the FFN), and T tokens per micro-batch: the QKV projection
 * (T x (q + 2 kv)/t x h), the attention output (T x h x q/t), the MLP up
 * (and gate, fused: T x g f/t x h), the MLP down (T x h x f/t) and the
 * logits (T x V/t x h), each in its forward (M, N, K), input-gradient
 * (M, K, N) and weight-gradient (K, N, M) orientation.  Duplicates are
 * dropped.
 */
#include "calibration.h"

#include "cost.h"

static int add(struct tpp_cal_shape *out, int cap, int n, double m, double nn,
	       double k)
{
	int i;
	if (m < 1 || nn < 1 || k < 1 || m > (1 << 20) || nn > (1 << 20) || k > (1 << 20))
		return n;
	for (i = 0; i < n; i++)
		if (out[i].m == (int)m && out[i].n == (int)nn && out[i].k == (int)k)
			return n;
	if (n < cap) {
		out[n].m = (int)m;
		out[n].n = (int)nn;
		out[n].k = (int)k;
	}
	return n + 1;
}

int tpp_cal_model_shapes(const struct tpp_model *m, int tokens, int max_tp,
			 struct tpp_cal_shape *out, int cap)
{
	double h = m->hidden, T = tokens;
	double q = (double)m->heads * m->head_dim, kv = (double)m->kv_heads * m->head_dim;
	double up = (m->mlp == TPP_MLP_SWIGLU ? 2.0 : 1.0) * m->ffn;
	int n = 0, t;

	for (t = 1; t <= max_tp; t *= 2) {
		double lin[5][2]; /* (N, K) of Y[T, N] = X[T, K] W[K, N] */
		int i;
		if (!tpp_tp_divides(m, t))
			continue;
		lin[0][0] = (q + 2 * kv) / t; lin[0][1] = h;      /* QKV */
		lin[1][0] = h;                lin[1][1] = q / t;  /* attention out */
		lin[2][0] = up / t;           lin[2][1] = h;      /* MLP up (+ gate) */
		lin[3][0] = h;                lin[3][1] = m->ffn / t; /* MLP down */
		lin[4][0] = tpp_vocab_padded(m, t) / t; lin[4][1] = h; /* logits */
		for (i = 0; i < 5; i++) {
			n = add(out, cap, n, T, lin[i][0], lin[i][1]);  /* forward */
			n = add(out, cap, n, T, lin[i][1], lin[i][0]);  /* input gradient */
			n = add(out, cap, n, lin[i][1], lin[i][0], T);  /* weight gradient */
		}
	}
	return n;
}
