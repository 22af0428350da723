/*
 * test_exec.c - the fp64 reference layer of `tpplan exec` (exec/ref.c):
 * its backward against central finite differences of the loss
 * sum(out * dout) for the input and a sample of every weight matrix, on a
 * small random shape (hidden 16, heads 2, ffn 32, seq 6, 2 sequences);
 * causality (a later token does not change an earlier output); the
 * generator's determinism; the --scale-down shape (tpp_exec_shape_scale)
 * and the memory estimate of the memory check (tpp_exec_mem_rank): exact
 * bytes of a tiny run counted by hand, the fp64 reference on rank 0 only,
 * the cpu backend's buffers on the host, and GPT-3 175B (the run that
 * grew past 13 GB unchecked) far beyond a small machine; the attention
 * core's prediction (its GEMMs and the softmax between them); the
 * check's relative error, NaN anywhere in a block included.  No MPI.
 */
#include <stdlib.h>

#include "exec_impl.h"
#include "tpp_test.h"

static const struct tpp_exec_shape shp = {16, 2, 32, 6, 2};

static double loss(double *const W[TPP_W__COUNT], const double *x,
		   const double *dout, struct tpp_ref_cache *c)
{
	size_t n = (size_t)shp.mbs * shp.seq * shp.hidden, i;
	double *out = malloc(sizeof(double) * n), s = 0;
	tpp_ref_fwd(&shp, W, x, out, c);
	for (i = 0; i < n; i++)
		s += out[i] * dout[i];
	free(out);
	return s;
}

/* --scale-down: 175B / 4 as the CLI runs it; overrides win; clamps */
static void check_scale(void)
{
	const struct tpp_exec_shape g3 = {12288, 96, 49152, 2048, 1};
	struct tpp_exec_shape none = {0, 0, 0, 0, 0}, over = {0, 0, 0, 100, 0}, s;
	tpp_exec_shape_scale(&g3, 4, &none, &s);
	CHECK(s.hidden == 3072 && s.heads == 96 && s.ffn == 12288 && s.seq == 512 && s.mbs == 1);
	tpp_exec_shape_scale(&g3, 1, &none, &s);
	CHECK(!memcmp(&s, &g3, sizeof(s)));
	tpp_exec_shape_scale(&g3, 4, &over, &s);
	CHECK(s.hidden == 3072 && s.seq == 100);
	tpp_exec_shape_scale(&g3, 1e6, &none, &s);
	CHECK(s.hidden == 96 && s.heads == 96 && s.ffn == 1 && s.seq == 1);
}

/* the memory estimate */
static void check_mem(void)
{
	struct tpp_exec_opts o;
	struct tpp_exec_mem m, m1, m4;
	const double base = 4.0 * TPP_EXEC_CHUNK + TPP_EXEC_PROC_BYTES;
	tpp_exec_opts_default(&o);
	o.shape = (struct tpp_exec_shape){8, 2, 16, 4, 1};
	o.layers = 1;
	o.microbatches = 1;
	o.check = 0;
	o.backend = "cuda";
	/* by hand, bytes, every buffer rounded up to 64: gradients 2048,
	 * weights 768+256+512+512, 4 [T,h] activations 4*128, the cache
	 * 2*128 (ln) + 4*64 (mu, rs) + 384 (qkv) + 128 (p) + 128 (ctx) +
	 * 128 (x2) + 2*256 (u, g), temporaries 3*128 + 3*128 + 384 + 128 +
	 * 256 + 64 */
	tpp_exec_mem_rank(&o, 0, &m);
	CHECK(m.dev_bytes == 8000);
	CHECK(m.host_bytes == base && m.ref_bytes == 0);
	/* cpu: the same buffers, in host memory */
	o.backend = "cpu";
	tpp_exec_mem_rank(&o, 0, &m);
	CHECK(m.dev_bytes == 0 && m.host_bytes == base + 8000);
	/* the check: fp64 weights and gradients 2*8*512, the cache
	 * 8*(8*32 + 4*4 + 32 + 2*64), outputs and input gradients 2*8*32,
	 * two buffers 2*8*32, backward temporaries 8*(64 + 6*32 + 16) on
	 * rank 0; everyone's transfer buffer 4*192 */
	o.check = 1;
	tpp_exec_mem_rank(&o, 0, &m);
	CHECK(m.ref_bytes == 14848);
	CHECK(m.host_bytes == base + 8000 + 14848 + 768);
	o.tp = 2;
	tpp_exec_mem_rank(&o, 1, &m1);
	CHECK(m1.ref_bytes == 0 && m1.host_bytes < m.host_bytes);

	/* 175B, tp=2, 2 layers (the reviewer's run): each rank holds
	 * 2 x 2 layers of half a layer's 12 h^2 fp32 weights (14.5 GB), rank
	 * 0 also the fp64 reference (weights and gradients: 58 GB) */
	tpp_exec_opts_default(&o);
	o.shape = (struct tpp_exec_shape){12288, 96, 49152, 2048, 1};
	o.tp = 2;
	tpp_exec_mem_rank(&o, 1, &m1);
	tpp_exec_mem_rank(&o, 0, &m);
	CHECK(m1.host_bytes > 2 * 2 * 4 * 6.0 * 12288 * 12288);
	CHECK(m.ref_bytes > 2 * 2 * 8 * 12.0 * 12288 * 12288);
	CHECK_REL(m.host_bytes, m1.host_bytes + m.ref_bytes, 1e-12);
	/* --scale-down 4 divides it by about 16 */
	o.model = o.shape;
	o.over = (struct tpp_exec_shape){0, 0, 0, 0, 0};
	tpp_exec_shape_scale(&o.model, 4, &o.over, &o.shape);
	tpp_exec_mem_rank(&o, 0, &m4);
	CHECK(m.host_bytes / m4.host_bytes > 12 && m.host_bytes / m4.host_bytes < 20);
}

/* Exec's prediction of the attention core counts what the phase times:
 * per head its GEMMs and the memory-bound softmax on the fp32 scores
 * between them (2 passes of s x s x 4 bytes forward, 3 backward). */
static void test_predict_attention(void)
{
	struct tpp_exec_opts o;
	struct tpp_exec_result r;
	struct tpp_cluster c;
	struct tpp_err err;
	double pred[TPP_PH__COUNT], S = 512, d = 64, hd;
	char note[256];
	const struct tpp_gpu *g;
	if (tpp_cluster_load("dgx-a100", NULL, &c, &err)) {
		tpp_err_print(stderr, &err);
		CHECK(0);
		return;
	}
	tpp_exec_opts_default(&o);
	o.prec = TPP_PREC_BF16;
	o.shape = (struct tpp_exec_shape){768, 12, 3072, 512, 1};
	o.layers = 2;
	memset(&r, 0, sizeof(r));
	r.count[TPP_PH_LAYER_FWD] = 4;
	r.count[TPP_PH_LAYER_BWD] = 4;
	tpp_exec_predict(&o, &c, &r, pred, note, sizeof(note));
	g = &c.gpu;
	hd = 4 * 12 * (tpp_gemm_time(g, TPP_PREC_BF16, S, S, d) +
		       tpp_gemm_time(g, TPP_PREC_BF16, S, d, S) + tpp_hbm_time(g, 2 * S * S * 4));
	CHECK_REL(pred[TPP_PH_ATTN_FWD], hd, 1e-9);
	hd = 4 * 12 * (tpp_gemm_time(g, TPP_PREC_BF16, S, S, d) +
		       3 * tpp_gemm_time(g, TPP_PREC_BF16, S, d, S) + tpp_hbm_time(g, 3 * S * S * 4));
	CHECK_REL(pred[TPP_PH_ATTN_BWD], hd, 1e-9);
	/* the softmax is a visible share of it, not rounding */
	CHECK(tpp_hbm_time(g, 2 * S * S * 4) > 0.05 * tpp_gemm_time(g, TPP_PREC_BF16, S, S, d));
}

/* The check's error of a block: a NaN anywhere is an infinite error (a
 * NaN followed by finite values was replaced by the next difference, so
 * a partly unreceived tensor could pass the check). */
static void test_rel_err(void)
{
	const double ref[6] = {1, -2, 4, 0.5, 0, 100};
	float got[6];
	int i;
	for (i = 0; i < 6; i++)
		got[i] = (float)ref[i];
	CHECK(tpp_exec_rel_err(got, ref, 2, 3, 3) == 0);
	got[5] = 101;
	CHECK_REL(tpp_exec_rel_err(got, ref, 2, 3, 3), 0.01, 1e-12);
	got[5] = 100;
	got[1] = NAN; /* first, middle and last place */
	CHECK(isinf(tpp_exec_rel_err(got, ref, 2, 3, 3)));
	got[1] = -2;
	got[0] = NAN;
	CHECK(isinf(tpp_exec_rel_err(got, ref, 2, 3, 3)));
	got[0] = 1;
	got[5] = NAN;
	CHECK(isinf(tpp_exec_rel_err(got, ref, 2, 3, 3)));
	/* the block's row stride: the second row of ref starts at 3 */
	got[5] = 100;
	CHECK(tpp_exec_rel_err(got, ref, 1, 2, 3) == 0);
	/* a zero reference: the absolute difference */
	{
		const double z[2] = {0, 0};
		const float g[2] = {0, 0.25f};
		CHECK(tpp_exec_rel_err(g, z, 1, 2, 2) == 0.25);
	}
}

int main(void)
{
	test_predict_attention();
	test_rel_err();
	size_t n = (size_t)shp.mbs * shp.seq * shp.hidden, i;
	double *W[TPP_W__COUNT], *dW[TPP_W__COUNT];
	double *x = malloc(sizeof(double) * n), *dout = malloc(sizeof(double) * n);
	double *out = malloc(sizeof(double) * n), *dx = malloc(sizeof(double) * n);
	double *out2 = malloc(sizeof(double) * n);
	struct tpp_ref_cache c;
	const double eps = 1e-5;
	int w, k;

	CHECK(tpp_ref_cache_new(&shp, &c) == TPP_OK);
	for (w = 0; w < TPP_W__COUNT; w++) {
		int rows, cols, r, cc;
		tpp_exec_wdims(&shp, (enum tpp_exec_w)w, &rows, &cols);
		W[w] = malloc(sizeof(double) * (size_t)rows * cols);
		dW[w] = calloc((size_t)rows * cols, sizeof(double));
		for (r = 0; r < rows; r++)
			for (cc = 0; cc < cols; cc++)
				W[w][(size_t)r * cols + cc] =
					tpp_exec_weight(7, &shp, 0, (enum tpp_exec_w)w, r, cc);
	}
	for (i = 0; i < n; i++) {
		x[i] = tpp_exec_rand(7, tpp_exec_tag_x(0), i);
		dout[i] = tpp_exec_rand(7, tpp_exec_tag_dout(0), i);
	}
	CHECK(tpp_exec_rand(7, 5, 9) == tpp_exec_rand(7, 5, 9));
	CHECK(tpp_exec_rand(7, 5, 9) != tpp_exec_rand(8, 5, 9));

	tpp_ref_fwd(&shp, W, x, out, &c);
	tpp_ref_bwd(&shp, W, &c, dout, dx, dW);

	/* input gradient: every 7th element */
	for (i = 0; i < n; i += 7) {
		double v = x[i], lp, lm;
		x[i] = v + eps;
		lp = loss(W, x, dout, &c);
		x[i] = v - eps;
		lm = loss(W, x, dout, &c);
		x[i] = v;
		CHECK_REL(dx[i], (lp - lm) / (2 * eps), 1e-5);
	}
	/* weight gradients: a sample of each matrix */
	for (w = 0; w < TPP_W__COUNT; w++) {
		int rows, cols;
		tpp_exec_wdims(&shp, (enum tpp_exec_w)w, &rows, &cols);
		for (k = 0; k < 12; k++) {
			size_t j = ((size_t)k * 97 + 13) % ((size_t)rows * cols);
			double v = W[w][j], lp, lm;
			W[w][j] = v + eps;
			lp = loss(W, x, dout, &c);
			W[w][j] = v - eps;
			lm = loss(W, x, dout, &c);
			W[w][j] = v;
			CHECK_REL(dW[w][j], (lp - lm) / (2 * eps), 1e-5);
		}
	}
	/* causal: changing the last token of sequence 0 leaves its earlier
	 * tokens' outputs unchanged, and changes the last one */
	x[(size_t)(shp.seq - 1) * shp.hidden] += 0.5;
	tpp_ref_fwd(&shp, W, x, out2, &c);
	CHECK(!memcmp(out, out2, sizeof(double) * (size_t)(shp.seq - 1) * shp.hidden));
	CHECK(out[(size_t)(shp.seq - 1) * shp.hidden] != out2[(size_t)(shp.seq - 1) * shp.hidden]);

	tpp_ref_cache_free(&c);
	tpp_ref_cache_free(NULL);
	for (w = 0; w < TPP_W__COUNT; w++) {
		free(W[w]);
		free(dW[w]);
	}
	free(x); free(dout); free(out); free(dx); free(out2);
	check_scale();
	check_mem();
	printf("test_exec: %d checks, %d failed\n", tpp_test_checks, tpp_test_failures);
	return tpp_test_failures ? 1 : 0;
}
