/*
 * backend_cpu.c - the cpu backend of `tpplan calibrate`: MPI collectives on
 * fp32 host buffers, CBLAS sgemm, MPI_Wtime timing.
 *
 * It measures what an MPI job of CPU processes sees (the harness, a
 * cluster without GPUs, the tests); the figures have the same meaning as
 * the cuda backend's (nccl-tests size and bus-bandwidth conventions, see
 * shared/reference/calibration.md 1.6).  Each communicator is a private
 * MPI_Comm_dup with MPI_ERRORS_RETURN so MPI failures come back as
 * struct tpp_err instead of aborting the job.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "backend_impl.h"

/* OpenBLAS extras; weak so another CBLAS links too (then they are NULL). */
char *openblas_get_config(void);
void openblas_set_num_threads(int num_threads);
#pragma weak openblas_get_config
#pragma weak openblas_set_num_threads

struct cpu_ctx {
	double t0, t1;
	unsigned char *flush_buf;
	size_t flush_bytes;
	unsigned flush_round;
	int local_size; /* processes on this host */
};

struct cpu_comm {
	MPI_Comm comm;
	int rank, size;
};

/* Largest data cache (bytes), 0 when the system does not say. */
static long llc_bytes(void)
{
	long v = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
	v = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (v <= 0)
		v = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
	return v > 0 ? v : 0;
}

static int cpu_init(struct tpp_backend *b, MPI_Comm world, struct tpp_err *err)
{
	struct cpu_ctx *x = calloc(1, sizeof(*x));
	MPI_Comm node;
	int rc;
	if (!x)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	rc = MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
				 &node);
	if (rc != MPI_SUCCESS) {
		free(x);
		return tpp_bk_mpi_err(err, rc, "MPI_Comm_split_type");
	}
	MPI_Comm_size(node, &x->local_size);
	MPI_Comm_free(&node);
	/*
	 * One BLAS thread per core this process can claim: without this every
	 * process starts a thread per core and the GEMMs of a node's processes
	 * time each other's context switches.  The user's setting wins.
	 */
	if (openblas_set_num_threads && !getenv("OPENBLAS_NUM_THREADS") &&
	    !getenv("OMP_NUM_THREADS")) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		long t = cores > 0 ? cores / x->local_size : 1;
		openblas_set_num_threads(t < 1 ? 1 : (int)t);
	}
	b->ctx = x;
	return TPP_OK;
}

static void cpu_fini(struct tpp_backend *b)
{
	struct cpu_ctx *x = b->ctx;
	if (!x)
		return;
	free(x->flush_buf);
	free(x);
	b->ctx = NULL;
}

static int cpu_alloc(struct tpp_backend *b, size_t bytes, void **out,
		     struct tpp_err *err)
{
	size_t sz = (bytes + 63) / 64 * 64;
	void *p;
	(void)b;
	if (bytes == 0 || sz < bytes)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
				   "cpu: cannot allocate %zu bytes", bytes);
	p = aligned_alloc(64, sz);
	if (!p)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
				   "cpu: out of memory allocating %.1f MiB",
				   bytes / 1048576.0);
	*out = p;
	return TPP_OK;
}

static void cpu_release(struct tpp_backend *b, void *buf)
{
	(void)b;
	free(buf);
}

static int cpu_upload(struct tpp_backend *b, void *dst, const void *host,
		      size_t bytes, struct tpp_err *err)
{
	(void)b;
	(void)err;
	memcpy(dst, host, bytes);
	return TPP_OK;
}

static int cpu_download(struct tpp_backend *b, void *host, const void *src,
			size_t bytes, struct tpp_err *err)
{
	(void)b;
	(void)err;
	memcpy(host, src, bytes);
	return TPP_OK;
}

static int cpu_comm_new(struct tpp_backend *b, MPI_Comm comm, void **impl,
			struct tpp_err *err)
{
	struct cpu_comm *c = calloc(1, sizeof(*c));
	int rc;
	(void)b;
	if (!c)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	rc = MPI_Comm_dup(comm, &c->comm);
	if (rc != MPI_SUCCESS) {
		free(c);
		return tpp_bk_mpi_err(err, rc, "MPI_Comm_dup");
	}
	MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
	MPI_Comm_rank(c->comm, &c->rank);
	MPI_Comm_size(c->comm, &c->size);
	*impl = c;
	return TPP_OK;
}

static void cpu_comm_free(struct tpp_backend *b, void *impl)
{
	struct cpu_comm *c = impl;
	(void)b;
	if (!c)
		return;
	MPI_Comm_free(&c->comm);
	free(c);
}

static int cpu_barrier(struct tpp_backend *b, void *impl, struct tpp_err *err)
{
	struct cpu_comm *c = impl;
	int rc = MPI_Barrier(c->comm);
	(void)b;
	return rc == MPI_SUCCESS ? TPP_OK : tpp_bk_mpi_err(err, rc, "MPI_Barrier");
}

/* MPI counts are int: refuse what does not fit. */
static int count_ok(size_t count, int n, struct tpp_err *err, const char *what)
{
	if (count > (size_t)INT_MAX / (size_t)n)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "cpu: %s of %zu elements x %d ranks exceeds MPI's int counts",
				   what, count, n);
	return TPP_OK;
}

static int cpu_all_reduce(struct tpp_backend *b, void *impl, const void *send,
			  void *recv, size_t count, struct tpp_err *err)
{
	struct cpu_comm *c = impl;
	int rc;
	(void)b;
	if (count_ok(count, 1, err, "MPI_Allreduce"))
		return TPP_E_USAGE;
	rc = MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, c->comm);
	return rc == MPI_SUCCESS ? TPP_OK : tpp_bk_mpi_err(err, rc, "MPI_Allreduce");
}

static int cpu_all_gather(struct tpp_backend *b, void *impl, const void *send,
			  void *recv, size_t count, struct tpp_err *err)
{
	struct cpu_comm *c = impl;
	int rc;
	(void)b;
	if (count_ok(count, c->size, err, "MPI_Allgather"))
		return TPP_E_USAGE;
	rc = MPI_Allgather(send, (int)count, MPI_FLOAT, recv, (int)count,
			   MPI_FLOAT, c->comm);
	return rc == MPI_SUCCESS ? TPP_OK : tpp_bk_mpi_err(err, rc, "MPI_Allgather");
}

static int cpu_reduce_scatter(struct tpp_backend *b, void *impl,
			      const void *send, void *recv, size_t count,
			      struct tpp_err *err)
{
	struct cpu_comm *c = impl;
	int rc;
	(void)b;
	if (count_ok(count, c->size, err, "MPI_Reduce_scatter_block"))
		return TPP_E_USAGE;
	rc = MPI_Reduce_scatter_block(send, recv, (int)count, MPI_FLOAT,
				      MPI_SUM, c->comm);
	return rc == MPI_SUCCESS ? TPP_OK
				 : tpp_bk_mpi_err(err, rc, "MPI_Reduce_scatter_block");
}

static int cpu_all_to_all(struct tpp_backend *b, void *impl, const void *send,
			  void *recv, size_t count, struct tpp_err *err)
{
	struct cpu_comm *c = impl;
	int rc;
	(void)b;
	if (count_ok(count, c->size, err, "MPI_Alltoall"))
		return TPP_E_USAGE;
	rc = MPI_Alltoall(send, (int)count, MPI_FLOAT, recv, (int)count,
			  MPI_FLOAT, c->comm);
	return rc == MPI_SUCCESS ? TPP_OK : tpp_bk_mpi_err(err, rc, "MPI_Alltoall");
}

static int cpu_send_recv(struct tpp_backend *b, void *impl, const void *send,
			 void *recv, size_t count, struct tpp_err *err)
{
	struct cpu_comm *c = impl;
	int rc, next = (c->rank + 1) % c->size;
	int prev = (c->rank + c->size - 1) % c->size;
	(void)b;
	if (count_ok(count, 1, err, "MPI_Sendrecv"))
		return TPP_E_USAGE;
	rc = MPI_Sendrecv(send, (int)count, MPI_FLOAT, next, 17, recv,
			  (int)count, MPI_FLOAT, prev, 17, c->comm,
			  MPI_STATUS_IGNORE);
	return rc == MPI_SUCCESS ? TPP_OK : tpp_bk_mpi_err(err, rc, "MPI_Sendrecv");
}

static int cpu_time_begin(struct tpp_backend *b, struct tpp_err *err)
{
	struct cpu_ctx *x = b->ctx;
	(void)err;
	x->t0 = MPI_Wtime();
	return TPP_OK;
}

static int cpu_time_end(struct tpp_backend *b, double *seconds,
			struct tpp_err *err)
{
	struct cpu_ctx *x = b->ctx;
	(void)err;
	x->t1 = MPI_Wtime();
	*seconds = x->t1 - x->t0;
	return TPP_OK;
}

static size_t cpu_gemm_elem_bytes(const struct tpp_backend *b,
				  enum tpp_prec prec)
{
	(void)b;
	return prec == TPP_PREC_FP32 ? sizeof(float) : 0;
}

static int cpu_gemm(struct tpp_backend *b, enum tpp_prec prec, int m, int n,
		    int k, const void *A, const void *B, void *C,
		    struct tpp_err *err)
{
	(void)b;
	if (prec != TPP_PREC_FP32)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "cpu: GEMM in %s is not supported (fp32 only)",
				   tpp_prec_names[prec]);
	cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
		    A, m, B, k, 0.0f, C, m);
	return TPP_OK;
}

/* Write a buffer with a different byte each round so no layer can skip
 * the stores.  The last-level cache is the node's: the ranks on a host
 * flush together (each GEMM run starts in step), so each writes its
 * share of a quarter more than the cache, at least 4 MiB (more than a
 * core's private L2); 32 MiB where the system does not say. */
static int cpu_flush(struct tpp_backend *b, struct tpp_err *err)
{
	struct cpu_ctx *x = b->ctx;
	if (!x->flush_buf) {
		size_t llc = (size_t)llc_bytes();
		int local = x->local_size > 0 ? x->local_size : 1;
		size_t want = llc ? llc / 4 * 5 / (size_t)local : (size_t)32 << 20;
		if (want < ((size_t)4 << 20))
			want = (size_t)4 << 20;
		x->flush_buf = malloc(want);
		if (!x->flush_buf)
			return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
					   "cpu: out of memory for the cache flush buffer");
		x->flush_bytes = want;
	}
	memset(x->flush_buf, (int)(++x->flush_round & 0xff), x->flush_bytes);
	return TPP_OK;
}

/* "model name" of /proc/cpuinfo, with the online core count. */
static void cpu_model(char *out, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512], name[256] = "";
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			char *colon = strchr(line, ':');
			if (!strncmp(line, "model name", 10) && colon) {
				char *s = colon + 1, *nl;
				while (*s == ' ' || *s == '\t')
					s++;
				if ((nl = strchr(s, '\n')))
					*nl = '\0';
				tpp_strlcpy(name, s, sizeof(name));
				break;
			}
		}
		fclose(f);
	}
	snprintf(out, size, "%s, %ld cores", name[0] ? name : "unknown CPU",
		 cores > 0 ? cores : 0);
}

static int cpu_describe(struct tpp_backend *b, struct tpp_backend_info *info,
			struct tpp_err *err)
{
	(void)b;
	(void)err;
	cpu_model(info->device, sizeof(info->device));
	tpp_bk_mpi_version(info->mpi, sizeof(info->mpi));
	if (openblas_get_config) {
		const char *cfg = openblas_get_config();
		snprintf(info->blas, sizeof(info->blas), "%s%s",
			 cfg && !strncmp(cfg, "OpenBLAS", 8) ? "" : "OpenBLAS ",
			 cfg ? cfg : "");
	} else {
		tpp_strlcpy(info->blas, "CBLAS (not OpenBLAS)", sizeof(info->blas));
	}
	return TPP_OK;
}


/* ---- for `tpplan exec`: GEMM with transposes, point-to-point, element-wise
 * kernels on fp32 host memory ---------------------------------------------- */

static int cpu_gemm_ex(struct tpp_backend *b, enum tpp_prec prec, int ta,
		       int tb, int m, int n, int k, float alpha, const void *A,
		       int lda, const void *B, int ldb, float beta, void *C,
		       int ldc, struct tpp_err *err)
{
	(void)b;
	if (prec != TPP_PREC_FP32)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "cpu: GEMM in %s is not supported (fp32 only)",
				   tpp_prec_names[prec]);
	cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans,
		    tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, A, lda, B,
		    ldb, beta, C, ldc);
	return TPP_OK;
}

static int cpu_send(struct tpp_backend *b, void *impl, const void *buf,
		    size_t count, int peer, struct tpp_err *err)
{
	struct cpu_comm *c = impl;
	int rc;
	(void)b;
	if (count_ok(count, 1, err, "MPI_Send"))
		return TPP_E_USAGE;
	rc = MPI_Send(buf, (int)count, MPI_FLOAT, peer, 23, c->comm);
	return rc == MPI_SUCCESS ? TPP_OK : tpp_bk_mpi_err(err, rc, "MPI_Send");
}

static int cpu_recv(struct tpp_backend *b, void *impl, void *buf, size_t count,
		    int peer, struct tpp_err *err)
{
	struct cpu_comm *c = impl;
	int rc;
	(void)b;
	if (count_ok(count, 1, err, "MPI_Recv"))
		return TPP_E_USAGE;
	rc = MPI_Recv(buf, (int)count, MPI_FLOAT, peer, 23, c->comm,
		      MPI_STATUS_IGNORE);
	return rc == MPI_SUCCESS ? TPP_OK : tpp_bk_mpi_err(err, rc, "MPI_Recv");
}

#define GELU_C 0.7978845608028654f /* sqrt(2 / pi) */

static int cpu_gelu_fwd(struct tpp_backend *b, size_t n, const void *x,
			void *y, struct tpp_err *err)
{
	const float *in = x;
	float *out = y;
	size_t i;
	(void)b;
	(void)err;
	for (i = 0; i < n; i++) {
		float v = in[i];
		out[i] = 0.5f * v * (1.0f + tanhf(GELU_C * (v + 0.044715f * v * v * v)));
	}
	return TPP_OK;
}

static int cpu_gelu_bwd(struct tpp_backend *b, size_t n, const void *x,
			const void *dy, void *dx, struct tpp_err *err)
{
	const float *in = x, *g = dy;
	float *out = dx;
	size_t i;
	(void)b;
	(void)err;
	for (i = 0; i < n; i++) {
		float v = in[i];
		float t = tanhf(GELU_C * (v + 0.044715f * v * v * v));
		float d = 0.5f * (1.0f + t) +
			  0.5f * v * (1.0f - t * t) * GELU_C * (1.0f + 3.0f * 0.044715f * v * v);
		out[i] = g[i] * d;
	}
	return TPP_OK;
}

static int cpu_softmax_fwd(struct tpp_backend *b, int rows, int cols, int ld,
			   void *s, struct tpp_err *err)
{
	float *a = s;
	int i, j;
	(void)b;
	(void)err;
	for (i = 0; i < rows; i++) {
		float *r = a + (size_t)i * (size_t)ld;
		int last = i < cols ? i : cols - 1;
		float mx = r[0], sum = 0.0f;
		for (j = 1; j <= last; j++)
			mx = r[j] > mx ? r[j] : mx;
		for (j = 0; j <= last; j++) {
			r[j] = expf(r[j] - mx);
			sum += r[j];
		}
		for (j = 0; j <= last; j++)
			r[j] /= sum;
		for (; j < cols; j++)
			r[j] = 0.0f;
	}
	return TPP_OK;
}

static int cpu_softmax_bwd(struct tpp_backend *b, int rows, int cols, int ld,
			   const void *p, void *dp, struct tpp_err *err)
{
	const float *P = p;
	float *D = dp;
	int i, j;
	(void)b;
	(void)err;
	for (i = 0; i < rows; i++) {
		const float *pr = P + (size_t)i * (size_t)ld;
		float *dr = D + (size_t)i * (size_t)ld;
		float dot = 0.0f;
		for (j = 0; j < cols; j++)
			dot += pr[j] * dr[j];
		for (j = 0; j < cols; j++)
			dr[j] = pr[j] * (dr[j] - dot);
	}
	return TPP_OK;
}

#define LN_EPS 1e-5f

static int cpu_layernorm_fwd(struct tpp_backend *b, int rows, int cols,
			     const void *x, void *y, void *mean, void *rstd,
			     struct tpp_err *err)
{
	const float *in = x;
	float *out = y, *mu = mean, *rs = rstd;
	int i, j;
	(void)b;
	(void)err;
	for (i = 0; i < rows; i++) {
		const float *r = in + (size_t)i * (size_t)cols;
		float *o = out + (size_t)i * (size_t)cols;
		double m = 0, v = 0;
		for (j = 0; j < cols; j++)
			m += r[j];
		m /= cols;
		for (j = 0; j < cols; j++)
			v += (r[j] - m) * (r[j] - m);
		v /= cols;
		mu[i] = (float)m;
		rs[i] = 1.0f / sqrtf((float)v + LN_EPS);
		for (j = 0; j < cols; j++)
			o[j] = (r[j] - mu[i]) * rs[i];
	}
	return TPP_OK;
}

static int cpu_layernorm_bwd(struct tpp_backend *b, int rows, int cols,
			     const void *x, const void *mean, const void *rstd,
			     const void *dy, void *dx, struct tpp_err *err)
{
	const float *in = x, *mu = mean, *rs = rstd, *g = dy;
	float *out = dx;
	int i, j;
	(void)b;
	(void)err;
	for (i = 0; i < rows; i++) {
		const float *r = in + (size_t)i * (size_t)cols;
		const float *gr = g + (size_t)i * (size_t)cols;
		float *o = out + (size_t)i * (size_t)cols;
		float sg = 0.0f, sgx = 0.0f;
		for (j = 0; j < cols; j++) {
			float xh = (r[j] - mu[i]) * rs[i];
			sg += gr[j];
			sgx += gr[j] * xh;
		}
		sg /= cols;
		sgx /= cols;
		for (j = 0; j < cols; j++) {
			float xh = (r[j] - mu[i]) * rs[i];
			o[j] = rs[i] * (gr[j] - sg - xh * sgx);
		}
	}
	return TPP_OK;
}

static int cpu_axpby(struct tpp_backend *b, size_t n, float alpha,
		     const void *x, float beta, void *y, struct tpp_err *err)
{
	const float *in = x;
	float *out = y;
	size_t i;
	(void)b;
	(void)err;
	for (i = 0; i < n; i++)
		out[i] = alpha * in[i] + beta * out[i];
	return TPP_OK;
}

const struct tpp_backend_ops tpp_backend_cpu_ops = {
	.name = "cpu",
	.init = cpu_init,
	.fini = cpu_fini,
	.alloc = cpu_alloc,
	.release = cpu_release,
	.upload = cpu_upload,
	.download = cpu_download,
	.comm_new = cpu_comm_new,
	.comm_free = cpu_comm_free,
	.barrier = cpu_barrier,
	.time_begin = cpu_time_begin,
	.time_end = cpu_time_end,
	.coll = {
		[TPP_COLL_ALL_REDUCE] = cpu_all_reduce,
		[TPP_COLL_ALL_GATHER] = cpu_all_gather,
		[TPP_COLL_REDUCE_SCATTER] = cpu_reduce_scatter,
		[TPP_COLL_ALL_TO_ALL] = cpu_all_to_all,
		[TPP_COLL_SEND_RECV] = cpu_send_recv,
	},
	.gemm_elem_bytes = cpu_gemm_elem_bytes,
	.gemm = cpu_gemm,
	.flush = cpu_flush,
	.describe = cpu_describe,
	.gemm_ex = cpu_gemm_ex,
	.send = cpu_send,
	.recv = cpu_recv,
	.gelu_fwd = cpu_gelu_fwd,
	.gelu_bwd = cpu_gelu_bwd,
	.softmax_fwd = cpu_softmax_fwd,
	.softmax_bwd = cpu_softmax_bwd,
	.layernorm_fwd = cpu_layernorm_fwd,
	.layernorm_bwd = cpu_layernorm_bwd,
	.axpby = cpu_axpby,
};
