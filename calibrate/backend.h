/*
 * backend.h - the measurement backends of `tpplan calibrate`: one device
 * (a CPU process with BLAS, or one GPU with cuBLAS) plus the collectives
 * between the processes of an MPI job (MPI, or NCCL bootstrapped over MPI).
 *
 * Data flow: bench.c (the backend-agnostic harness) opens one backend per
 * process, opens a communicator per group shape it measures, runs the
 * collective and GEMM sweeps through these calls and fills struct
 * tpp_calibration.  Layout follows ggml-backend: opaque handles and free
 * functions here, the struct of function pointers in backend_impl.h;
 * optional slots may be NULL, and the calls below then fail with
 * "backend X lacks Y" (tpp_backend_has() asks first).
 *
 * No MPI, CUDA or NCCL types appear here: the MPI communicator is passed as
 * `const void *` pointing at an MPI_Comm.
 *
 * Buffers are flat byte ranges in the backend's memory (host memory for
 * cpu, device memory for cuda): `(char *)buf + offset` addresses a byte
 * inside one, and the contents are only reachable through
 * tpp_backend_upload / tpp_backend_download.  Collective data are fp32.
 *
 * Every call returns TPP_OK or a status (TPP_E_SYSTEM for backend / MPI /
 * CUDA / NCCL failures, TPP_E_USAGE for an unsupported request) with the
 * message in *err; outputs are written only on success.
 */
#ifndef TPP_BACKEND_H
#define TPP_BACKEND_H

#include <stddef.h>

#include "calibration.h"

struct tpp_backend;  /* one process's backend (device, BLAS/cuBLAS, timers) */
struct tpp_bk_comm;  /* one communicator of a group of processes */

/* Optional operations, for tpp_backend_has().  Collectives are indexed by
 * enum tpp_coll (TPP_BK_OP_COLL + op). */
enum tpp_bk_op {
	TPP_BK_OP_COLL = 0, /* + enum tpp_coll */
	TPP_BK_OP_GEMM = TPP_COLL__COUNT,
	TPP_BK_OP_FLUSH,
	TPP_BK_OP_DESCRIBE,
	/* appended for `tpplan exec` (exec/): */
	TPP_BK_OP_GEMM_EX,  /* tpp_backend_gemm_ex */
	TPP_BK_OP_P2P,      /* tpp_backend_send / tpp_backend_recv */
	TPP_BK_OP_ELEMWISE, /* GeLU, causal softmax, LayerNorm, axpby */
	TPP_BK_OP_MEM_INFO, /* tpp_backend_mem_info (a device with memory of its own) */
	TPP_BK_OP__COUNT
};
extern const char *const tpp_bk_op_names[TPP_BK_OP__COUNT];

/* Device and software description (empty strings: unknown). */
struct tpp_backend_info {
	char device[TPP_CAL_STR]; /* "NVIDIA H100 80GB HBM3, 132 SMs, 79.1 GiB" */
	char mpi[TPP_CAL_STR];    /* first line of MPI_Get_library_version */
	char blas[TPP_CAL_STR];   /* openblas_get_config() / "cuBLAS 13.0.2" */
	char cuda[64], nccl[64], driver[64];
};

/* Names of the backends compiled in, NULL-terminated ("cpu", "cuda"). */
extern const char *const tpp_backend_names[];

/*
 * Open backend `name` in this process.  Collective over the MPI
 * communicator *mpi_comm (an MPI_Comm, usually MPI_COMM_WORLD), which must
 * stay valid until tpp_backend_free.  The cuda backend picks the GPU from
 * the process's rank among the processes of its host.  *out is set on
 * success only; free it with tpp_backend_free.  TPP_E_USAGE when `name` is
 * not compiled in.
 */
int tpp_backend_new(const char *name, const void *mpi_comm,
		    struct tpp_backend **out, struct tpp_err *err);
/* Release everything the backend holds; NULL is a no-op.  Communicators
 * must be freed first. */
void tpp_backend_free(struct tpp_backend *b);
const char *tpp_backend_name(const struct tpp_backend *b);
/* 1 when the optional operation `op` is implemented. */
int tpp_backend_has(const struct tpp_backend *b, enum tpp_bk_op op);
/* Fill *info (zeroed first); a backend without a describe slot leaves it
 * empty and returns TPP_OK. */
int tpp_backend_describe(struct tpp_backend *b, struct tpp_backend_info *info,
			 struct tpp_err *err);

/* ---- buffers --------------------------------------------------------------- */

/* Allocate `bytes` (> 0) of backend memory, 64-byte aligned at least. */
int tpp_backend_alloc(struct tpp_backend *b, size_t bytes, void **out,
		      struct tpp_err *err);
/* Free a buffer from tpp_backend_alloc; NULL is a no-op. */
void tpp_backend_release(struct tpp_backend *b, void *buf);
/* Copy host -> backend and backend -> host; both complete before return
 * (pending work of the backend is finished first). */
int tpp_backend_upload(struct tpp_backend *b, void *dst, const void *host,
		       size_t bytes, struct tpp_err *err);
int tpp_backend_download(struct tpp_backend *b, void *host, const void *src,
			 size_t bytes, struct tpp_err *err);

/* ---- communicators and collectives ----------------------------------------- */

/*
 * Open a communicator over the processes of *mpi_comm (an MPI_Comm, e.g.
 * from MPI_Comm_split by colour); collective over it.  The backend keeps
 * its own duplicate, so the caller may free its MPI_Comm afterwards.
 */
int tpp_backend_comm_new(struct tpp_backend *b, const void *mpi_comm,
			 struct tpp_bk_comm **out, struct tpp_err *err);
void tpp_backend_comm_free(struct tpp_backend *b, struct tpp_bk_comm *c);
int tpp_backend_comm_size(const struct tpp_bk_comm *c);
int tpp_backend_comm_rank(const struct tpp_bk_comm *c);

/*
 * Run collective `op` on fp32 data, sum reduction, out of place; `count`
 * is in elements and means (n = communicator size):
 *   all_reduce      send count, recv count
 *   all_gather      send count, recv n*count (rank q's block at q*count)
 *   reduce_scatter  send n*count, recv count (this rank's block)
 *   all_to_all      send n*count, recv n*count (block p goes to rank p)
 *   send_recv       send count to rank+1, recv count from rank-1 (ring)
 * The call may return before the data have arrived (cuda: enqueued on the
 * backend's stream); tpp_backend_time_end / tpp_backend_download wait.
 */
int tpp_backend_coll(struct tpp_backend *b, struct tpp_bk_comm *c,
		     enum tpp_coll op, const void *send, void *recv,
		     size_t count, struct tpp_err *err);
/* Wait for the backend's pending work, then barrier over the communicator. */
int tpp_backend_barrier(struct tpp_backend *b, struct tpp_bk_comm *c,
			struct tpp_err *err);

/* ---- GEMM ------------------------------------------------------------------ */

/* Bytes per element of GEMM operands in `prec`, 0 when unsupported. */
size_t tpp_backend_gemm_elem_bytes(const struct tpp_backend *b,
				   enum tpp_prec prec);
/*
 * C = A * B, column-major, no transposes: A is m x k (lda m), B is k x n
 * (ldb k), C is m x n (ldc m), all in `prec`'s element type (fp16 / bf16
 * operands accumulate in fp32; tf32 rounds fp32 inputs).  Asynchronous like
 * the collectives.
 */
int tpp_backend_gemm(struct tpp_backend *b, enum tpp_prec prec, int m, int n,
		     int k, const void *A, const void *B, void *C,
		     struct tpp_err *err);
/* Evict the caches GEMM operands could stay in (write a buffer larger than
 * the last-level cache; 256 MiB on a GPU).  Not timed. */
int tpp_backend_flush(struct tpp_backend *b, struct tpp_err *err);

/* ---- timing ---------------------------------------------------------------- */

/*
 * Mark the start and end of a timed region of this process's work;
 * time_end waits for the work and stores the elapsed seconds (cpu: wall
 * clock MPI_Wtime; cuda: cudaEvents on the stream).
 */
int tpp_backend_time_begin(struct tpp_backend *b, struct tpp_err *err);
int tpp_backend_time_end(struct tpp_backend *b, double *seconds,
			 struct tpp_err *err);

/* ---- for `tpplan exec` (appended; optional slots) ----------------------------
 *
 * Operands are fp32 arrays in backend memory; `count`, `n`, `rows`, `cols`
 * are elements.  Asynchronous like the collectives (cuda: on the backend's
 * stream); TPP_E_USAGE "backend X lacks Y" when the slot is empty.
 */

/*
 * C = alpha * op(A) op(B) + beta * C, column-major, op(X) = X or X^T
 * (ta / tb nonzero: transposed); op(A) is m x k, op(B) k x n, C m x n,
 * leading dimensions as in BLAS.  fp32 storage; `prec` is the arithmetic:
 * fp32 (cpu, cuda), tf32 / bf16 / fp16 (cuda: inputs rounded to that type
 * inside cuBLAS, fp32 accumulation and output).
 */
int tpp_backend_gemm_ex(struct tpp_backend *b, enum tpp_prec prec, int ta,
			int tb, int m, int n, int k, float alpha, const void *A,
			int lda, const void *B, int ldb, float beta, void *C,
			int ldc, struct tpp_err *err);
/* Point-to-point: send `count` fp32 to rank `peer` of the communicator, or
 * receive them from it.  Blocking on cpu; on cuda enqueued (NCCL). */
int tpp_backend_send(struct tpp_backend *b, struct tpp_bk_comm *c,
		     const void *buf, size_t count, int peer,
		     struct tpp_err *err);
int tpp_backend_recv(struct tpp_backend *b, struct tpp_bk_comm *c, void *buf,
		     size_t count, int peer, struct tpp_err *err);
/* y = gelu(x) (tanh form); dx = dy * gelu'(x).  In place allowed. */
int tpp_backend_gelu_fwd(struct tpp_backend *b, size_t n, const void *x,
			 void *y, struct tpp_err *err);
int tpp_backend_gelu_bwd(struct tpp_backend *b, size_t n, const void *x,
			 const void *dy, void *dx, struct tpp_err *err);
/*
 * Causal softmax in place over `rows` rows of `cols` (row stride ld): row i
 * keeps columns j <= i, the rest become 0.  Backward in place: dp becomes
 * p * (dp - sum_j dp p) (the gradient before the softmax).
 */
int tpp_backend_softmax_fwd(struct tpp_backend *b, int rows, int cols, int ld,
			    void *s, struct tpp_err *err);
int tpp_backend_softmax_bwd(struct tpp_backend *b, int rows, int cols, int ld,
			    const void *p, void *dp, struct tpp_err *err);
/*
 * LayerNorm without affine parameters over rows of `cols` (eps 1e-5):
 * y = (x - mean) * rstd; mean and rstd (rows each) are saved for the
 * backward, which writes dx (overwriting it) from dy.
 */
int tpp_backend_layernorm_fwd(struct tpp_backend *b, int rows, int cols,
			      const void *x, void *y, void *mean, void *rstd,
			      struct tpp_err *err);
int tpp_backend_layernorm_bwd(struct tpp_backend *b, int rows, int cols,
			      const void *x, const void *mean, const void *rstd,
			      const void *dy, void *dx, struct tpp_err *err);
/* y = alpha * x + beta * y over n elements. */
int tpp_backend_axpby(struct tpp_backend *b, size_t n, float alpha,
		      const void *x, float beta, void *y, struct tpp_err *err);
/* Wait for the backend's pending work (no communication). */
int tpp_backend_sync(struct tpp_backend *b, struct tpp_err *err);
/*
 * Free and total bytes of this process's device memory (cuda:
 * cudaMemGetInfo on its GPU), for `tpplan exec`'s memory check.  A backend
 * whose buffers are host memory (cpu) has no slot: "backend X lacks Y"
 * (TPP_E_USAGE); ask tpp_backend_has(b, TPP_BK_OP_MEM_INFO) first.
 */
int tpp_backend_mem_info(struct tpp_backend *b, size_t *free_bytes,
			 size_t *total_bytes, struct tpp_err *err);

#endif
