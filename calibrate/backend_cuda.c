/*
 * backend_cuda.c - the cuda backend of `tpplan calibrate`: one GPU per MPI
 * process, cuBLAS GEMMs (cublasGemmEx, fp32 accumulation) and NCCL
 * collectives on one non-blocking stream, timed with cudaEvents.
 *
 * Follows nccl-tests (src/common.cu; shared/reference/calibration.md 1.3,
 * 5.1): the GPU is the process's rank among the processes of its host,
 * found by hashing host names (GPU 0 where each process sees only its
 * own GPU; two processes on one GPU are refused); MPI only bootstraps NCCL (rank 0 of each
 * group calls ncclGetUniqueId, MPI_Bcast, ncclCommInitRank).  The GEMM
 * cache flush zeroes a 256 MiB buffer between iterations (mamf-finder,
 * calibration.md 5.2).  Plain C against the runtime API, no kernels.
 *
 * Every CUDA, cuBLAS, NCCL and MPI error is converted here into a
 * struct tpp_err naming the call, the library's message and the rank.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <nccl.h>

#include "backend_impl.h"
#include "nv_driver.h"

#define FLUSH_BYTES ((size_t)256 << 20)

struct cuda_ctx {
	int world_rank, device, local_rank;
	cudaStream_t stream;
	cudaEvent_t ev0, ev1;
	cublasHandle_t blas;
	void *flush_buf;
	unsigned flush_round;
};

struct cuda_comm {
	MPI_Comm mpi;
	ncclComm_t nccl;
	int rank, size;
	int failed; /* an NCCL or stream error was seen: abort, not destroy */
};

/* ---- errors at the boundary ------------------------------------------------ */

static int cuda_fail(struct tpp_err *err, const struct cuda_ctx *x,
		     const char *call, const char *msg)
{
	if (!x || x->device < 0)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "cuda (rank %d): %s: %s",
				   x ? x->world_rank : -1, call, msg);
	return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
			   "cuda (rank %d, GPU %d): %s: %s", x->world_rank,
			   x->device, call, msg);
}

static int ck_cuda(struct tpp_err *err, const struct cuda_ctx *x,
		   cudaError_t e, const char *call)
{
	if (e == cudaSuccess)
		return TPP_OK;
	return cuda_fail(err, x, call, cudaGetErrorString(e));
}

static int ck_blas(struct tpp_err *err, const struct cuda_ctx *x,
		   cublasStatus_t s, const char *call)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return TPP_OK;
	return cuda_fail(err, x, call, cublasGetStatusString(s));
}

static int ck_nccl(struct tpp_err *err, const struct cuda_ctx *x,
		   ncclResult_t r, const char *call, ncclComm_t comm)
{
	char msg[512];
	const char *last;
	if (r == ncclSuccess || r == ncclInProgress)
		return TPP_OK;
	last = ncclGetLastError(comm);
	snprintf(msg, sizeof(msg), "%s%s%s", ncclGetErrorString(r),
		 last && *last ? ": " : "", last ? last : "");
	return cuda_fail(err, x, call, msg);
}

static int ck_mpi(struct tpp_err *err, const struct cuda_ctx *x, int rc,
		  const char *call)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (rc == MPI_SUCCESS)
		return TPP_OK;
	if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
		len = 0;
	s[len > 0 ? len : 0] = '\0';
	return cuda_fail(err, x, call, len > 0 ? s : "MPI error");
}

#define CK_CUDA(call) ck_cuda(err, x, (call), #call)
#define CK_BLAS(call) ck_blas(err, x, (call), #call)

/* ck_nccl for a call on communicator c; an error marks c failed, so that
 * it is aborted (ncclCommAbort), not destroyed: ncclCommDestroy waits for
 * the operations still queued, which after an error (a peer gone) may
 * never finish (NCCL docs, "Fault tolerance"). */
static int ck_comm(struct tpp_err *err, const struct cuda_ctx *x,
		   struct cuda_comm *c, ncclResult_t r, const char *call)
{
	int rc = ck_nccl(err, x, r, call, c->nccl);
	if (rc)
		c->failed = 1;
	return rc;
}

/* ---- init: pick the GPU ------------------------------------------------------ */

/* djb2 over the host name up to the first '.', as nccl-tests getHostHash. */
static uint64_t host_hash(void)
{
	char host[1024];
	uint64_t h = 5381;
	size_t i;
	if (gethostname(host, sizeof(host)) != 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	for (i = 0; host[i] && host[i] != '.'; i++)
		h = h * 33 + (unsigned char)host[i];
	return h;
}

/* This process's rank among the processes of its host (*out) and how many
 * there are (*count). */
static int local_rank(MPI_Comm world, int rank, int size, int *out, int *count,
		      struct tpp_err *err)
{
	uint64_t *all = malloc(sizeof(*all) * (size_t)size);
	int i, n = 0, k = 0, rc;
	if (!all)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	all[rank] = host_hash();
	rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all,
			   sizeof(uint64_t), MPI_BYTE, world);
	if (rc != MPI_SUCCESS) {
		free(all);
		return ck_mpi(err, NULL, rc, "MPI_Allgather(host hashes)");
	}
	for (i = 0; i < size; i++)
		if (all[i] == all[rank]) {
			n += i < rank;
			k++;
		}
	free(all);
	*out = n;
	*count = k;
	return TPP_OK;
}

/* Two processes of one host on one GPU would time each other's work (and
 * NCCL refuses a communicator with a GPU twice): every process sends its
 * host and its GPU's UUID, and a GPU seen twice on a host is an error on
 * every rank, naming the two ranks.  Collective: every rank calls it, a
 * rank without a GPU (have == 0, its own error already set) too, so that
 * none waits here for it. */
static int check_gpu_unique(MPI_Comm world, struct cuda_ctx *x, int size,
			    int have, struct tpp_err *err)
{
	struct gpu_id {
		uint64_t host;
		int have;
		unsigned char uuid[16];
	} *all = calloc((size_t)size, sizeof(*all));
	struct cudaDeviceProp prop;
	int i, j, rc = TPP_OK;
	if (!all)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	if (have && (rc = CK_CUDA(cudaGetDeviceProperties(&prop, x->device))))
		have = 0;
	all[x->world_rank].host = host_hash();
	all[x->world_rank].have = have;
	if (have)
		memcpy(all[x->world_rank].uuid, prop.uuid.bytes, sizeof(all->uuid));
	i = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, sizeof(*all),
			  MPI_BYTE, world);
	if (i != MPI_SUCCESS) {
		free(all);
		return rc ? rc : ck_mpi(err, x, i, "MPI_Allgather(GPU UUIDs)");
	}
	for (i = 0; i < size && !rc; i++)
		for (j = i + 1; j < size && !rc; j++)
			if (all[i].have && all[j].have && all[i].host == all[j].host &&
			    !memcmp(all[i].uuid, all[j].uuid, sizeof(all->uuid)))
				rc = tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
						 "cuda (rank %d): ranks %d and %d run on the same GPU of one host; "
						 "give each process its own GPU (one process per GPU, or "
						 "CUDA_VISIBLE_DEVICES naming a different GPU for each)",
						 x->world_rank, i, j);
	free(all);
	return rc;
}

static void cuda_fini(struct tpp_backend *b);

static int cuda_init(struct tpp_backend *b, MPI_Comm world, struct tpp_err *err)
{
	struct cuda_ctx *x = calloc(1, sizeof(*x));
	int ndev = 0, nlocal = 0, rc;
	if (!x)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	x->world_rank = b->rank;
	x->device = -1;
	b->ctx = x;
	if ((rc = local_rank(world, b->rank, b->size, &x->local_rank, &nlocal, err)))
		goto fail;
	rc = CK_CUDA(cudaGetDeviceCount(&ndev));
	/* The GPU: the process's rank among its host's processes when the
	 * host shows every process all its GPUs (mpiexec); GPU 0 when each
	 * process sees one GPU of its own (a scheduler that sets
	 * CUDA_VISIBLE_DEVICES per process, Slurm's --gpus-per-task=1);
	 * check_gpu_unique finds two processes on one GPU either way. */
	if (!rc && x->local_rank < ndev)
		x->device = x->local_rank;
	else if (!rc && ndev == 1)
		x->device = 0;
	else if (!rc)
		rc = tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
				 "cuda (rank %d): this host runs %d processes but has %d GPUs visible; start one process per GPU",
				 b->rank, nlocal, ndev);
	if (!rc)
		rc = CK_CUDA(cudaSetDevice(x->device));
	{
		struct tpp_err mine;
		int urc = check_gpu_unique(world, x, b->size, rc == TPP_OK, rc ? &mine : err);
		if (!rc)
			rc = urc;
	}
	if (rc ||
	    (rc = CK_CUDA(cudaStreamCreateWithFlags(&x->stream, cudaStreamNonBlocking))) ||
	    (rc = CK_CUDA(cudaEventCreate(&x->ev0))) ||
	    (rc = CK_CUDA(cudaEventCreate(&x->ev1))) ||
	    (rc = CK_BLAS(cublasCreate(&x->blas))) ||
	    (rc = CK_BLAS(cublasSetStream(x->blas, x->stream))))
		goto fail;
	return TPP_OK;
fail:
	cuda_fini(b);
	return rc;
}

static void cuda_fini(struct tpp_backend *b)
{
	struct cuda_ctx *x = b->ctx;
	if (!x)
		return;
	if (x->stream)
		cudaStreamSynchronize(x->stream);
	if (x->flush_buf)
		cudaFree(x->flush_buf);
	if (x->blas)
		cublasDestroy(x->blas);
	if (x->ev0)
		cudaEventDestroy(x->ev0);
	if (x->ev1)
		cudaEventDestroy(x->ev1);
	if (x->stream)
		cudaStreamDestroy(x->stream);
	free(x);
	b->ctx = NULL;
}

/* ---- buffers ----------------------------------------------------------------- */

static int cuda_alloc(struct tpp_backend *b, size_t bytes, void **out,
		      struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, bytes);
	if (e != cudaSuccess) {
		char call[64];
		snprintf(call, sizeof(call), "cudaMalloc(%.1f MiB)", bytes / 1048576.0);
		return cuda_fail(err, x, call, cudaGetErrorString(e));
	}
	*out = p;
	return TPP_OK;
}

static void cuda_release(struct tpp_backend *b, void *buf)
{
	struct cuda_ctx *x = b->ctx;
	if (!buf)
		return;
	cudaStreamSynchronize(x->stream);
	cudaFree(buf);
}

static int cuda_upload(struct tpp_backend *b, void *dst, const void *host,
		       size_t bytes, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	int rc;
	if ((rc = CK_CUDA(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice,
					  x->stream))))
		return rc;
	return CK_CUDA(cudaStreamSynchronize(x->stream));
}

static int cuda_download(struct tpp_backend *b, void *host, const void *src,
			 size_t bytes, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	int rc;
	if ((rc = CK_CUDA(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost,
					  x->stream))))
		return rc;
	return CK_CUDA(cudaStreamSynchronize(x->stream));
}

/* ---- communicators ------------------------------------------------------------- */

static int cuda_comm_new(struct tpp_backend *b, MPI_Comm comm, void **impl,
			 struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	struct cuda_comm *c = calloc(1, sizeof(*c));
	struct {
		int status;
		ncclUniqueId id;
	} boot;
	int rc;
	if (!c)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	c->mpi = MPI_COMM_NULL;
	if ((rc = ck_mpi(err, x, MPI_Comm_dup(comm, &c->mpi), "MPI_Comm_dup")))
		goto fail;
	MPI_Comm_set_errhandler(c->mpi, MPI_ERRORS_RETURN);
	MPI_Comm_rank(c->mpi, &c->rank);
	MPI_Comm_size(c->mpi, &c->size);
	/* Rank 0 sends its status with the id so a failed ncclGetUniqueId
	 * fails every rank instead of leaving them in ncclCommInitRank. */
	memset(&boot, 0, sizeof(boot));
	if (c->rank == 0)
		boot.status = ncclGetUniqueId(&boot.id) == ncclSuccess ? 0 : 1;
	if ((rc = ck_mpi(err, x, MPI_Bcast(&boot, sizeof(boot), MPI_BYTE, 0, c->mpi),
			 "MPI_Bcast(ncclUniqueId)")))
		goto fail;
	/* "Ensure Bcast is complete for HCOLL" (nccl-tests). */
	if ((rc = ck_mpi(err, x, MPI_Barrier(c->mpi), "MPI_Barrier")))
		goto fail;
	if (boot.status) {
		rc = cuda_fail(err, x, "ncclGetUniqueId", "failed on the group's first rank");
		goto fail;
	}
	if ((rc = ck_nccl(err, x, ncclCommInitRank(&c->nccl, c->size, boot.id, c->rank),
			  "ncclCommInitRank", NULL)))
		goto fail;
	*impl = c;
	return TPP_OK;
fail:
	if (c->mpi != MPI_COMM_NULL)
		MPI_Comm_free(&c->mpi);
	free(c);
	return rc;
}

static void cuda_comm_free(struct tpp_backend *b, void *impl)
{
	struct cuda_ctx *x = b->ctx;
	struct cuda_comm *c = impl;
	if (!c)
		return;
	if (c->nccl && c->failed) {
		ncclCommAbort(c->nccl);
	} else {
		cudaStreamSynchronize(x->stream);
		if (c->nccl)
			ncclCommDestroy(c->nccl);
	}
	if (c->mpi != MPI_COMM_NULL)
		MPI_Comm_free(&c->mpi);
	free(c);
}

/* Wait for the stream, then report NCCL errors raised while it ran. */
static int sync_stream(struct cuda_ctx *x, struct cuda_comm *c,
		       struct tpp_err *err)
{
	ncclResult_t async = ncclSuccess;
	int rc;
	if ((rc = CK_CUDA(cudaStreamSynchronize(x->stream)))) {
		if (c)
			c->failed = 1;
		return rc;
	}
	if (c && ncclCommGetAsyncError(c->nccl, &async) == ncclSuccess &&
	    async != ncclSuccess)
		return ck_comm(err, x, c, async, "NCCL (asynchronous)");
	return TPP_OK;
}

static int cuda_barrier(struct tpp_backend *b, void *impl, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	struct cuda_comm *c = impl;
	int rc;
	if ((rc = sync_stream(x, c, err)))
		return rc;
	return ck_mpi(err, x, MPI_Barrier(c->mpi), "MPI_Barrier");
}

/* ---- collectives (fp32, sum) ------------------------------------------------------ */

static int cuda_all_reduce(struct tpp_backend *b, void *impl, const void *send,
			   void *recv, size_t count, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	struct cuda_comm *c = impl;
	return ck_comm(err, x, c,
		       ncclAllReduce(send, recv, count, ncclFloat, ncclSum, c->nccl, x->stream),
		       "ncclAllReduce");
}

static int cuda_all_gather(struct tpp_backend *b, void *impl, const void *send,
			   void *recv, size_t count, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	struct cuda_comm *c = impl;
	return ck_comm(err, x, c,
		       ncclAllGather(send, recv, count, ncclFloat, c->nccl, x->stream),
		       "ncclAllGather");
}

static int cuda_reduce_scatter(struct tpp_backend *b, void *impl,
			       const void *send, void *recv, size_t count,
			       struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	struct cuda_comm *c = impl;
	return ck_comm(err, x, c,
		       ncclReduceScatter(send, recv, count, ncclFloat, ncclSum, c->nccl,
					 x->stream),
		       "ncclReduceScatter");
}

/* Close a group opened by ncclGroupStart, keeping the first error. */
static int group_end(struct cuda_ctx *x, struct cuda_comm *c, int rc,
		     struct tpp_err *err)
{
	ncclResult_t r = ncclGroupEnd();
	if (rc)
		return rc;
	return ck_comm(err, x, c, r, "ncclGroupEnd");
}

/* all_to_all as grouped send/recv, as nccl-tests alltoall.cu does. */
static int cuda_all_to_all(struct tpp_backend *b, void *impl, const void *send,
			   void *recv, size_t count, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	struct cuda_comm *c = impl;
	size_t block = count * sizeof(float);
	int p, rc = TPP_OK;
	if ((rc = ck_comm(err, x, c, ncclGroupStart(), "ncclGroupStart")))
		return rc;
	for (p = 0; p < c->size && !rc; p++) {
		rc = ck_comm(err, x, c,
			     ncclSend((const char *)send + (size_t)p * block, count,
				      ncclFloat, p, c->nccl, x->stream),
			     "ncclSend");
		if (!rc)
			rc = ck_comm(err, x, c,
				     ncclRecv((char *)recv + (size_t)p * block, count,
					      ncclFloat, p, c->nccl, x->stream),
				     "ncclRecv");
	}
	return group_end(x, c, rc, err);
}

/* Ring shift: send to rank+1, receive from rank-1 (nccl-tests sendrecv). */
static int cuda_send_recv(struct tpp_backend *b, void *impl, const void *send,
			  void *recv, size_t count, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	struct cuda_comm *c = impl;
	int next = (c->rank + 1) % c->size, prev = (c->rank + c->size - 1) % c->size;
	int rc;
	if ((rc = ck_comm(err, x, c, ncclGroupStart(), "ncclGroupStart")))
		return rc;
	rc = ck_comm(err, x, c, ncclSend(send, count, ncclFloat, next, c->nccl, x->stream),
		     "ncclSend");
	if (!rc)
		rc = ck_comm(err, x, c,
			     ncclRecv(recv, count, ncclFloat, prev, c->nccl, x->stream),
			     "ncclRecv");
	return group_end(x, c, rc, err);
}

/* ---- timing ------------------------------------------------------------------------ */

static int cuda_time_begin(struct tpp_backend *b, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	return CK_CUDA(cudaEventRecord(x->ev0, x->stream));
}

static int cuda_time_end(struct tpp_backend *b, double *seconds,
			 struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	float ms = 0;
	int rc;
	if ((rc = CK_CUDA(cudaEventRecord(x->ev1, x->stream))) ||
	    (rc = CK_CUDA(cudaEventSynchronize(x->ev1))) ||
	    (rc = CK_CUDA(cudaEventElapsedTime(&ms, x->ev0, x->ev1))))
		return rc;
	*seconds = ms * 1e-3;
	return TPP_OK;
}

/* ---- GEMM ----------------------------------------------------------------------------- */

static size_t cuda_gemm_elem_bytes(const struct tpp_backend *b,
				   enum tpp_prec prec)
{
	(void)b;
	switch (prec) {
	case TPP_PREC_FP32:
	case TPP_PREC_TF32:
		return 4;
	case TPP_PREC_FP16:
	case TPP_PREC_BF16:
		return 2;
	default:
		return 0; /* fp8 needs cublasLt with scales: not done here */
	}
}

static int cuda_gemm(struct tpp_backend *b, enum tpp_prec prec, int m, int n,
		     int k, const void *A, const void *B, void *C,
		     struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	const float alpha = 1.0f, beta = 0.0f;
	cudaDataType_t t;
	cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
	switch (prec) {
	case TPP_PREC_FP32: t = CUDA_R_32F; break;
	case TPP_PREC_TF32: t = CUDA_R_32F; ct = CUBLAS_COMPUTE_32F_FAST_TF32; break;
	case TPP_PREC_FP16: t = CUDA_R_16F; break;
	case TPP_PREC_BF16: t = CUDA_R_16BF; break;
	default:
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "cuda: GEMM in %s is not supported (fp32, tf32, fp16, bf16)",
				   tpp_prec_names[prec]);
	}
	return CK_BLAS(cublasGemmEx(x->blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k,
				    &alpha, A, t, m, B, t, k, &beta, C, t, m, ct,
				    CUBLAS_GEMM_DEFAULT));
}

/* Zero-ish a 256 MiB buffer on the stream (larger than any L2 so far). */
static int cuda_flush(struct tpp_backend *b, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	int rc;
	if (!x->flush_buf && (rc = CK_CUDA(cudaMalloc(&x->flush_buf, FLUSH_BYTES))))
		return rc;
	return CK_CUDA(cudaMemsetAsync(x->flush_buf, (int)(++x->flush_round & 0xff),
				       FLUSH_BYTES, x->stream));
}

/* ---- description ------------------------------------------------------------------------ */

static void version_str(char *out, size_t size, int v)
{
	/* CUDA: 1000*major + 10*minor */
	snprintf(out, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* The kernel module's release ("580.82.07") from /proc (nv_driver.h),
 * else the CUDA version the driver supports. */
static void driver_version(char *out, size_t size)
{
	FILE *f = fopen("/proc/driver/nvidia/version", "r");
	char line[512];
	int v = 0;
	out[0] = '\0';
	if (f) {
		if (fgets(line, sizeof(line), f))
			tpp_nv_driver_release(line, out, size);
		fclose(f);
	}
	if (!out[0] && cudaDriverGetVersion(&v) == cudaSuccess)
		snprintf(out, size, "supports CUDA %d.%d", v / 1000, (v % 1000) / 10);
}

static int cuda_describe(struct tpp_backend *b, struct tpp_backend_info *info,
			 struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	struct cudaDeviceProp prop;
	int v = 0, sms = 0, rc;
	if ((rc = CK_CUDA(cudaGetDeviceProperties(&prop, x->device))))
		return rc;
	cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, x->device);
	prop.name[sizeof(prop.name) - 1] = '\0';
	snprintf(info->device, sizeof(info->device), "%.160s, %d SMs, %.1f GiB, sm_%d%d",
		 prop.name, sms,
		 prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0), prop.major,
		 prop.minor);
	tpp_bk_mpi_version(info->mpi, sizeof(info->mpi));
	if (cudaRuntimeGetVersion(&v) == cudaSuccess)
		version_str(info->cuda, sizeof(info->cuda), v);
	driver_version(info->driver, sizeof(info->driver));
	if (ncclGetVersion(&v) == ncclSuccess) {
		/* NCCL >= 2.9: 10000*major + 100*minor + patch */
		if (v >= 10000)
			snprintf(info->nccl, sizeof(info->nccl), "%d.%d.%d",
				 v / 10000, (v % 10000) / 100, v % 100);
		else
			snprintf(info->nccl, sizeof(info->nccl), "%d.%d.%d",
				 v / 1000, (v % 1000) / 100, v % 100);
	}
	if (cublasGetVersion(x->blas, &v) == CUBLAS_STATUS_SUCCESS)
		snprintf(info->blas, sizeof(info->blas), "cuBLAS %d.%d.%d",
			 v / 10000, (v % 10000) / 100, v % 100);
	return TPP_OK;
}


/* ---- for `tpplan exec`: GEMM with transposes, point-to-point, element-wise
 * kernels (backend_cuda_kernels.cu) ------------------------------------------ */

cudaError_t tpp_cuk_gelu_fwd(cudaStream_t st, size_t n, const float *x, float *y);
cudaError_t tpp_cuk_gelu_bwd(cudaStream_t st, size_t n, const float *x,
			     const float *dy, float *dx);
cudaError_t tpp_cuk_axpby(cudaStream_t st, size_t n, float a, const float *x,
			  float b, float *y);
cudaError_t tpp_cuk_softmax_fwd(cudaStream_t st, int rows, int cols, int ld, float *s);
cudaError_t tpp_cuk_softmax_bwd(cudaStream_t st, int rows, int cols, int ld,
				const float *p, float *dp);
cudaError_t tpp_cuk_ln_fwd(cudaStream_t st, int rows, int cols, const float *x,
			   float *y, float *mean, float *rstd);
cudaError_t tpp_cuk_ln_bwd(cudaStream_t st, int rows, int cols, const float *x,
			   const float *mean, const float *rstd, const float *dy,
			   float *dx);

/* fp32 storage; bf16 / fp16 / tf32: cuBLAS rounds the inputs to that type
 * on the tensor cores and accumulates in fp32 */
static int cuda_gemm_ex(struct tpp_backend *b, enum tpp_prec prec, int ta,
			int tb, int m, int n, int k, float alpha, const void *A,
			int lda, const void *B, int ldb, float beta, void *C,
			int ldc, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	cublasComputeType_t ct;
	switch (prec) {
	case TPP_PREC_FP32: ct = CUBLAS_COMPUTE_32F; break;
	case TPP_PREC_TF32: ct = CUBLAS_COMPUTE_32F_FAST_TF32; break;
	case TPP_PREC_FP16: ct = CUBLAS_COMPUTE_32F_FAST_16F; break;
	case TPP_PREC_BF16: ct = CUBLAS_COMPUTE_32F_FAST_16BF; break;
	default:
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "cuda: GEMM in %s is not supported by exec",
				   tpp_prec_names[prec]);
	}
	return CK_BLAS(cublasGemmEx(x->blas, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
				    tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha,
				    A, CUDA_R_32F, lda, B, CUDA_R_32F, ldb, &beta,
				    C, CUDA_R_32F, ldc, ct, CUBLAS_GEMM_DEFAULT));
}

static int cuda_send(struct tpp_backend *b, void *impl, const void *buf,
		     size_t count, int peer, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	struct cuda_comm *c = impl;
	return ck_nccl(err, x, ncclSend(buf, count, ncclFloat, peer, c->nccl, x->stream),
		       "ncclSend", c->nccl);
}

static int cuda_recv(struct tpp_backend *b, void *impl, void *buf, size_t count,
		     int peer, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	struct cuda_comm *c = impl;
	return ck_nccl(err, x, ncclRecv(buf, count, ncclFloat, peer, c->nccl, x->stream),
		       "ncclRecv", c->nccl);
}

static int cuda_gelu_fwd(struct tpp_backend *b, size_t n, const void *in,
			 void *out, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	return CK_CUDA(tpp_cuk_gelu_fwd(x->stream, n, in, out));
}

static int cuda_gelu_bwd(struct tpp_backend *b, size_t n, const void *in,
			 const void *dy, void *dx, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	return CK_CUDA(tpp_cuk_gelu_bwd(x->stream, n, in, dy, dx));
}

static int cuda_softmax_fwd(struct tpp_backend *b, int rows, int cols, int ld,
			    void *s, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	return CK_CUDA(tpp_cuk_softmax_fwd(x->stream, rows, cols, ld, s));
}

static int cuda_softmax_bwd(struct tpp_backend *b, int rows, int cols, int ld,
			    const void *p, void *dp, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	return CK_CUDA(tpp_cuk_softmax_bwd(x->stream, rows, cols, ld, p, dp));
}

static int cuda_ln_fwd(struct tpp_backend *b, int rows, int cols, const void *in,
		       void *y, void *mean, void *rstd, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	return CK_CUDA(tpp_cuk_ln_fwd(x->stream, rows, cols, in, y, mean, rstd));
}

static int cuda_ln_bwd(struct tpp_backend *b, int rows, int cols, const void *in,
		       const void *mean, const void *rstd, const void *dy,
		       void *dx, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	return CK_CUDA(tpp_cuk_ln_bwd(x->stream, rows, cols, in, mean, rstd, dy, dx));
}

static int cuda_axpby(struct tpp_backend *b, size_t n, float alpha,
		      const void *in, float beta, void *y, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	return CK_CUDA(tpp_cuk_axpby(x->stream, n, alpha, in, beta, y));
}

static int cuda_sync(struct tpp_backend *b, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	return CK_CUDA(cudaStreamSynchronize(x->stream));
}

static int cuda_mem_info(struct tpp_backend *b, size_t *free_bytes,
			 size_t *total_bytes, struct tpp_err *err)
{
	struct cuda_ctx *x = b->ctx;
	size_t f = 0, t = 0;
	int rc;
	if ((rc = CK_CUDA(cudaMemGetInfo(&f, &t))))
		return rc;
	*free_bytes = f;
	*total_bytes = t;
	return TPP_OK;
}

const struct tpp_backend_ops tpp_backend_cuda_ops = {
	.name = "cuda",
	.init = cuda_init,
	.fini = cuda_fini,
	.alloc = cuda_alloc,
	.release = cuda_release,
	.upload = cuda_upload,
	.download = cuda_download,
	.comm_new = cuda_comm_new,
	.comm_free = cuda_comm_free,
	.barrier = cuda_barrier,
	.time_begin = cuda_time_begin,
	.time_end = cuda_time_end,
	.coll = {
		[TPP_COLL_ALL_REDUCE] = cuda_all_reduce,
		[TPP_COLL_ALL_GATHER] = cuda_all_gather,
		[TPP_COLL_REDUCE_SCATTER] = cuda_reduce_scatter,
		[TPP_COLL_ALL_TO_ALL] = cuda_all_to_all,
		[TPP_COLL_SEND_RECV] = cuda_send_recv,
	},
	.gemm_elem_bytes = cuda_gemm_elem_bytes,
	.gemm = cuda_gemm,
	.flush = cuda_flush,
	.describe = cuda_describe,
	.gemm_ex = cuda_gemm_ex,
	.send = cuda_send,
	.recv = cuda_recv,
	.gelu_fwd = cuda_gelu_fwd,
	.gelu_bwd = cuda_gelu_bwd,
	.softmax_fwd = cuda_softmax_fwd,
	.softmax_bwd = cuda_softmax_bwd,
	.layernorm_fwd = cuda_ln_fwd,
	.layernorm_bwd = cuda_ln_bwd,
	.axpby = cuda_axpby,
	.sync = cuda_sync,
	.mem_info = cuda_mem_info,
};
