/*
 * exec_impl.h - internals of exec/ shared by its files and the unit test:
 * the seeded data generator and the unsharded fp64 reference layer
 * (ref.c).  Row-major arrays; T = mbs * seq tokens per micro-batch.
 */
#ifndef TPP_EXEC_IMPL_H
#define TPP_EXEC_IMPL_H

#include <stdint.h>

#include "exec.h"

/* Host staging of an upload, floats at most (run.c; a row of a weight
 * matrix may be longer, and is staged whole). */
#define TPP_EXEC_CHUNK (1 << 18)
/* Host memory of a rank besides exec's own buffers (MPI, BLAS buffers,
 * the program; about 20 MiB measured with one BLAS thread), counted by
 * tpp_exec_mem_rank. */
#define TPP_EXEC_PROC_BYTES (64.0 * 1024 * 1024)

/* The four weight matrices of a layer, [in, out] row-major. */
enum tpp_exec_w { TPP_W_QKV, TPP_W_PROJ, TPP_W_FC1, TPP_W_FC2, TPP_W__COUNT };
extern const char *const tpp_exec_w_names[TPP_W__COUNT];

/* Full (unsharded) dimensions of weight w.  QKV columns are grouped by
 * head: head i owns columns [3d i, 3d (i+1)) as q | k | v. */
void tpp_exec_wdims(const struct tpp_exec_shape *s, enum tpp_exec_w w,
		    int *rows, int *cols);

/* Uniform in [-1, 1) from (seed, tag, index); the same on every rank. */
double tpp_exec_rand(uint64_t seed, uint64_t tag, uint64_t idx);
/* Tags: weight w of global layer l; input / output gradient of global
 * micro-batch g (dp replica * microbatches + index). */
uint64_t tpp_exec_tag_w(int layer, enum tpp_exec_w w);
uint64_t tpp_exec_tag_x(int gmb);
uint64_t tpp_exec_tag_dout(int gmb);
/* Weight element (row r, column c of the full matrix), scaled 1/sqrt(in)
 * to keep activations of unit size. */
double tpp_exec_weight(uint64_t seed, const struct tpp_exec_shape *s,
		       int layer, enum tpp_exec_w w, int r, int c);

/* What the reference backward needs from the forward. */
struct tpp_ref_cache {
	double *x, *ln1, *mu1, *rs1, *qkv, *p, *ctx, *x2, *ln2, *mu2, *rs2, *u, *g;
};
/* Allocate / free a cache for shape s; TPP_E_SYSTEM when out of memory. */
int tpp_ref_cache_new(const struct tpp_exec_shape *s, struct tpp_ref_cache *c);
void tpp_ref_cache_free(struct tpp_ref_cache *c);

/* One layer forward: out[T, h] from x[T, h] with the full weights W. */
void tpp_ref_fwd(const struct tpp_exec_shape *s, double *const W[TPP_W__COUNT],
		 const double *x, double *out, struct tpp_ref_cache *c);
/* Backward: dx[T, h] from dout; weight gradients added into dW. */
void tpp_ref_bwd(const struct tpp_exec_shape *s, double *const W[TPP_W__COUNT],
		 const struct tpp_ref_cache *c, const double *dout, double *dx,
		 double *const dW[TPP_W__COUNT]);

/* The check's error of a rows x cols block: max |got - ref| / max |ref|
 * (max |got - ref| when ref is all zero); got row-major, ref with row
 * stride ld.  INFINITY when got holds a NaN anywhere. */
double tpp_exec_rel_err(const float *got, const double *ref, int rows, int cols,
			int ld);

#endif
