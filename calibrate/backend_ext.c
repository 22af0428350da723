/*
 * backend_ext.c - front end of the backend calls that `tpplan exec` added
 * to backend.h (GEMM with transposes, point-to-point, element-wise
 * kernels, the device memory query): each checks that the backend has the slot and dispatches
 * through struct tpp_backend_ops; bench.c holds the rest of the front end.
 */
#include "backend_impl.h"

int tpp_backend_gemm_ex(struct tpp_backend *b, enum tpp_prec prec, int ta,
			int tb, int m, int n, int k, float alpha, const void *A,
			int lda, const void *B, int ldb, float beta, void *C,
			int ldc, struct tpp_err *err)
{
	if (!b->ops->gemm_ex)
		return tpp_bk_lacks(b, TPP_BK_OP_GEMM_EX, err);
	TPP_ASSERT(m > 0 && n > 0 && k > 0);
	return b->ops->gemm_ex(b, prec, ta, tb, m, n, k, alpha, A, lda, B, ldb,
			       beta, C, ldc, err);
}

int tpp_backend_send(struct tpp_backend *b, struct tpp_bk_comm *c,
		     const void *buf, size_t count, int peer,
		     struct tpp_err *err)
{
	if (!tpp_backend_has(b, TPP_BK_OP_P2P))
		return tpp_bk_lacks(b, TPP_BK_OP_P2P, err);
	TPP_ASSERT(peer >= 0 && peer < c->size);
	return b->ops->send(b, c->impl, buf, count, peer, err);
}

int tpp_backend_recv(struct tpp_backend *b, struct tpp_bk_comm *c, void *buf,
		     size_t count, int peer, struct tpp_err *err)
{
	if (!tpp_backend_has(b, TPP_BK_OP_P2P))
		return tpp_bk_lacks(b, TPP_BK_OP_P2P, err);
	TPP_ASSERT(peer >= 0 && peer < c->size);
	return b->ops->recv(b, c->impl, buf, count, peer, err);
}

#define EW_CHECK(b, err)                                                     \
	do {                                                                 \
		if (!tpp_backend_has((b), TPP_BK_OP_ELEMWISE))                 \
			return tpp_bk_lacks((b), TPP_BK_OP_ELEMWISE, (err));   \
	} while (0)

int tpp_backend_gelu_fwd(struct tpp_backend *b, size_t n, const void *x,
			 void *y, struct tpp_err *err)
{
	EW_CHECK(b, err);
	return b->ops->gelu_fwd(b, n, x, y, err);
}

int tpp_backend_gelu_bwd(struct tpp_backend *b, size_t n, const void *x,
			 const void *dy, void *dx, struct tpp_err *err)
{
	EW_CHECK(b, err);
	return b->ops->gelu_bwd(b, n, x, dy, dx, err);
}

int tpp_backend_softmax_fwd(struct tpp_backend *b, int rows, int cols, int ld,
			    void *s, struct tpp_err *err)
{
	EW_CHECK(b, err);
	return b->ops->softmax_fwd(b, rows, cols, ld, s, err);
}

int tpp_backend_softmax_bwd(struct tpp_backend *b, int rows, int cols, int ld,
			    const void *p, void *dp, struct tpp_err *err)
{
	EW_CHECK(b, err);
	return b->ops->softmax_bwd(b, rows, cols, ld, p, dp, err);
}

int tpp_backend_layernorm_fwd(struct tpp_backend *b, int rows, int cols,
			      const void *x, void *y, void *mean, void *rstd,
			      struct tpp_err *err)
{
	EW_CHECK(b, err);
	return b->ops->layernorm_fwd(b, rows, cols, x, y, mean, rstd, err);
}

int tpp_backend_layernorm_bwd(struct tpp_backend *b, int rows, int cols,
			      const void *x, const void *mean, const void *rstd,
			      const void *dy, void *dx, struct tpp_err *err)
{
	EW_CHECK(b, err);
	return b->ops->layernorm_bwd(b, rows, cols, x, mean, rstd, dy, dx, err);
}

int tpp_backend_axpby(struct tpp_backend *b, size_t n, float alpha,
		      const void *x, float beta, void *y, struct tpp_err *err)
{
	EW_CHECK(b, err);
	return b->ops->axpby(b, n, alpha, x, beta, y, err);
}

int tpp_backend_sync(struct tpp_backend *b, struct tpp_err *err)
{
	return b->ops->sync ? b->ops->sync(b, err) : TPP_OK;
}

int tpp_backend_mem_info(struct tpp_backend *b, size_t *free_bytes,
			 size_t *total_bytes, struct tpp_err *err)
{
	if (!b->ops->mem_info)
		return tpp_bk_lacks(b, TPP_BK_OP_MEM_INFO, err);
	return b->ops->mem_info(b, free_bytes, total_bytes, err);
}
