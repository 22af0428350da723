/*
 * test_exec.c - the fp64 reference layer of `tpplan exec` (exec/ref.c):
 * its backward against central finite differences of the loss
 * sum(out * dout) for the input and a sample of every weight matrix, on a
 * small random shape (hidden 16, heads 2, ffn 32, seq 6, 2 sequences);
 * causality (a later token does not change an earlier output); and the
 * generator's determinism.  No MPI.
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

int main(void)
{
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
	printf("test_exec: %d checks, %d failed\n", tpp_test_checks, tpp_test_failures);
	return tpp_test_failures ? 1 : 0;
}
