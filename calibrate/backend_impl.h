/*
 * backend_impl.h - what a backend implements: struct tpp_backend_ops, a
 * table of function pointers (append-only; optional slots may be NULL, the
 * front end in bench.c then answers "backend X lacks Y").  Only backends
 * and the harness include this header; it is the one that brings in mpi.h.
 *
 * Contract common to every slot: return TPP_OK or a status with the message
 * in *err (foreign errors converted here, at the boundary, by the backend);
 * outputs written only on success.
 */
#ifndef TPP_BACKEND_IMPL_H
#define TPP_BACKEND_IMPL_H

#include <mpi.h>
#include <string.h>

#include "backend.h"

struct tpp_backend_ops {
	const char *name;
	/* required */
	int (*init)(struct tpp_backend *b, MPI_Comm world, struct tpp_err *err);
	void (*fini)(struct tpp_backend *b);
	int (*alloc)(struct tpp_backend *b, size_t bytes, void **out,
		     struct tpp_err *err);
	void (*release)(struct tpp_backend *b, void *buf);
	int (*upload)(struct tpp_backend *b, void *dst, const void *host,
		      size_t bytes, struct tpp_err *err);
	int (*download)(struct tpp_backend *b, void *host, const void *src,
			size_t bytes, struct tpp_err *err);
	/* comm_new fills *impl with the backend's communicator state; rank and
	 * size are filled by the front end. */
	int (*comm_new)(struct tpp_backend *b, MPI_Comm comm, void **impl,
			struct tpp_err *err);
	void (*comm_free)(struct tpp_backend *b, void *impl);
	int (*barrier)(struct tpp_backend *b, void *impl, struct tpp_err *err);
	int (*time_begin)(struct tpp_backend *b, struct tpp_err *err);
	int (*time_end)(struct tpp_backend *b, double *seconds,
			struct tpp_err *err);
	/* optional: one slot per collective, indexed by enum tpp_coll */
	int (*coll[TPP_COLL__COUNT])(struct tpp_backend *b, void *impl,
				     const void *send, void *recv, size_t count,
				     struct tpp_err *err);
	/* optional */
	size_t (*gemm_elem_bytes)(const struct tpp_backend *b,
				  enum tpp_prec prec);
	int (*gemm)(struct tpp_backend *b, enum tpp_prec prec, int m, int n,
		    int k, const void *A, const void *B, void *C,
		    struct tpp_err *err);
	int (*flush)(struct tpp_backend *b, struct tpp_err *err);
	int (*describe)(struct tpp_backend *b, struct tpp_backend_info *info,
			struct tpp_err *err);
	/* ---- appended for `tpplan exec`; optional ---- */
	int (*gemm_ex)(struct tpp_backend *b, enum tpp_prec prec, int ta, int tb,
		       int m, int n, int k, float alpha, const void *A, int lda,
		       const void *B, int ldb, float beta, void *C, int ldc,
		       struct tpp_err *err);
	int (*send)(struct tpp_backend *b, void *impl, const void *buf,
		    size_t count, int peer, struct tpp_err *err);
	int (*recv)(struct tpp_backend *b, void *impl, void *buf, size_t count,
		    int peer, struct tpp_err *err);
	/* element-wise group: all set or all NULL */
	int (*gelu_fwd)(struct tpp_backend *b, size_t n, const void *x, void *y,
			struct tpp_err *err);
	int (*gelu_bwd)(struct tpp_backend *b, size_t n, const void *x,
			const void *dy, void *dx, struct tpp_err *err);
	int (*softmax_fwd)(struct tpp_backend *b, int rows, int cols, int ld,
			   void *s, struct tpp_err *err);
	int (*softmax_bwd)(struct tpp_backend *b, int rows, int cols, int ld,
			   const void *p, void *dp, struct tpp_err *err);
	int (*layernorm_fwd)(struct tpp_backend *b, int rows, int cols,
			     const void *x, void *y, void *mean, void *rstd,
			     struct tpp_err *err);
	int (*layernorm_bwd)(struct tpp_backend *b, int rows, int cols,
			     const void *x, const void *mean, const void *rstd,
			     const void *dy, void *dx, struct tpp_err *err);
	int (*axpby)(struct tpp_backend *b, size_t n, float alpha, const void *x,
		     float beta, void *y, struct tpp_err *err);
	/* optional: wait for pending work (NULL: nothing is ever pending) */
	int (*sync)(struct tpp_backend *b, struct tpp_err *err);
	/* optional: free and total device memory (NULL: buffers are host memory) */
	int (*mem_info)(struct tpp_backend *b, size_t *free_bytes,
			size_t *total_bytes, struct tpp_err *err);
};

struct tpp_backend {
	const struct tpp_backend_ops *ops;
	MPI_Comm world;
	int rank, size;
	void *ctx; /* the backend's own state, set by init */
};

struct tpp_bk_comm {
	int rank, size;
	void *impl;
};

/* The backends compiled in (backend_cpu.c, backend_cuda.c). */
extern const struct tpp_backend_ops tpp_backend_cpu_ops;
#ifdef TPP_HAVE_CUDA_BACKEND
extern const struct tpp_backend_ops tpp_backend_cuda_ops;
#endif

/* "backend X lacks Y" (TPP_E_USAGE) into *err (bench.c). */
int tpp_bk_lacks(const struct tpp_backend *b, enum tpp_bk_op op,
		 struct tpp_err *err);

/* Convert an MPI error code into *err (TPP_E_SYSTEM). */
static inline int tpp_bk_mpi_err(struct tpp_err *err, int rc, const char *what)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
		len = 0;
	s[len < 0 ? 0 : len] = '\0';
	return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "%s: MPI error %d: %s",
			   what, rc, len > 0 ? s : "unknown");
}

/* First line of MPI_Get_library_version, trimmed, into out. */
static inline void tpp_bk_mpi_version(char *out, size_t size)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = 0;
	char *nl;
	out[0] = '\0';
	if (MPI_Get_library_version(v, &len) != MPI_SUCCESS)
		return;
	v[len < 0 ? 0 : (len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1)] = '\0';
	nl = strchr(v, '\n');
	if (nl)
		*nl = '\0';
	while (*v && (v[strlen(v) - 1] == ' ' || v[strlen(v) - 1] == ','))
		v[strlen(v) - 1] = '\0';
	tpp_strlcpy(out, v, size);
}

#endif
