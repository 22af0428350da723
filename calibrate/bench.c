/*
 * bench.c - the measurement harness of `tpplan calibrate`, backend-agnostic:
 * the backend front end (backend.h calls dispatched through the backend's
 * table of functions, "backend X lacks Y" for empty slots), the group
 * shapes a layout uses, the collective and GEMM sweeps, and the metadata of
 * struct tpp_calibration.
 *
 * Method (shared/reference/calibration.md 1.4, 1.6, 5.1, 5.2):
 *   - sizes from min to max bytes in x2 steps, nccl-tests size convention
 *     (all_reduce / send_recv: per-rank buffer; all_gather: gathered output;
 *     reduce_scatter: total input; all_to_all: per-rank send buffer);
 *   - per size: one checked run with known data (integer values whose sums
 *     are exact in fp32), `warmup` untimed runs, `iters` timed runs; every
 *     run starts after a job-wide MPI_Allreduce that is both the barrier and
 *     the error agreement; a run's time is the max over the ranks, and the
 *     point keeps the median, p10 and p90 over the runs;
 *   - groups: every power-of-two size 2..ranks_per_node inside a node
 *     (tier 0, all of them at once), and with several nodes one group of all
 *     ranks and the rail groups (one rank per node, all at once), tier 1;
 *     concurrent = groups running at once;
 *   - GEMM: C = A B column-major per shape, cache flushed before each timed
 *     run, the median over runs; a spot check of C's first column.
 * MPI is the control plane here (splits, timing reductions, host names);
 * the backend only moves data and runs GEMMs.
 */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend_impl.h"
#include "bench.h"

#ifdef TPP_HAVE_CUDA_BACKEND
#include <dlfcn.h>
#endif

/* ==== backend front end ====================================================== */

static const struct tpp_backend_ops *const registry[] = {
	&tpp_backend_cpu_ops,
};

#ifdef TPP_HAVE_CUDA_BACKEND
/*
 * The cuda backend is a module (calibrate/bench.cmake), loaded the first
 * time it is asked for: from the executable's folder, else through the
 * loader's search path (LD_LIBRARY_PATH); never unloaded.  NULL with the
 * loader's reason in *err when it cannot be loaded.
 */
static const struct tpp_backend_ops *cuda_ops(struct tpp_err *err)
{
	static const struct tpp_backend_ops *ops;
	char path[4096], why[512] = "";
	void *h = NULL;
	ssize_t n;
	if (ops)
		return ops;
	n = readlink("/proc/self/exe", path, sizeof(path) - sizeof(TPP_CUDA_MODULE) - 1);
	if (n > 0) {
		char *slash;
		path[n] = '\0';
		slash = strrchr(path, '/');
		if (slash) {
			memcpy(slash + 1, TPP_CUDA_MODULE, sizeof(TPP_CUDA_MODULE));
			if (!access(path, F_OK)) {
				h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
				if (!h)
					tpp_strlcpy(why, dlerror(), sizeof(why));
			}
		}
	}
	if (!h && !why[0]) {
		h = dlopen(TPP_CUDA_MODULE, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			tpp_strlcpy(why, dlerror(), sizeof(why));
	}
	if (!h) {
		tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
			    "backend cuda: cannot load its module %s: %s",
			    TPP_CUDA_MODULE, why);
		return NULL;
	}
	ops = (const struct tpp_backend_ops *)dlsym(h, "tpp_backend_cuda_ops");
	if (!ops)
		tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
			    "backend cuda: %s has no tpp_backend_cuda_ops",
			    TPP_CUDA_MODULE);
	return ops;
}
#endif

const char *const tpp_backend_names[] = {
	"cpu",
#ifdef TPP_HAVE_CUDA_BACKEND
	"cuda",
#endif
	NULL,
};

const char *const tpp_bk_op_names[TPP_BK_OP__COUNT] = {
	[TPP_BK_OP_COLL + TPP_COLL_ALL_REDUCE] = "all_reduce",
	[TPP_BK_OP_COLL + TPP_COLL_ALL_GATHER] = "all_gather",
	[TPP_BK_OP_COLL + TPP_COLL_REDUCE_SCATTER] = "reduce_scatter",
	[TPP_BK_OP_COLL + TPP_COLL_ALL_TO_ALL] = "all_to_all",
	[TPP_BK_OP_COLL + TPP_COLL_SEND_RECV] = "send_recv",
	[TPP_BK_OP_GEMM] = "gemm",
	[TPP_BK_OP_FLUSH] = "a cache flush",
	[TPP_BK_OP_DESCRIBE] = "describe",
	[TPP_BK_OP_GEMM_EX] = "a GEMM with transposes and alpha/beta",
	[TPP_BK_OP_P2P] = "point-to-point send/recv",
	[TPP_BK_OP_ELEMWISE] = "the element-wise kernels (GeLU, softmax, LayerNorm)",
	[TPP_BK_OP_MEM_INFO] = "a device memory query",
};

int tpp_bk_lacks(const struct tpp_backend *b, enum tpp_bk_op op,
		 struct tpp_err *err)
{
	return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0, "backend %s lacks %s",
			   b->ops->name, tpp_bk_op_names[op]);
}

int tpp_backend_new(const char *name, const void *mpi_comm,
		    struct tpp_backend **out, struct tpp_err *err)
{
	const struct tpp_backend_ops *ops = NULL;
	struct tpp_backend *b;
	size_t i;
	int rc;
	TPP_ASSERT(name && mpi_comm && out);
	for (i = 0; i < TPP_ARRAY_LEN(registry); i++)
		if (!strcmp(registry[i]->name, name))
			ops = registry[i];
#ifdef TPP_HAVE_CUDA_BACKEND
	if (!ops && !strcmp(name, "cuda") && !(ops = cuda_ops(err)))
		return TPP_E_SYSTEM;
#endif
	if (!ops) {
		char avail[128] = "";
		for (i = 0; tpp_backend_names[i]; i++) {
			if (i)
				strncat(avail, ", ", sizeof(avail) - strlen(avail) - 1);
			strncat(avail, tpp_backend_names[i], sizeof(avail) - strlen(avail) - 1);
		}
		if (!strcmp(name, "cuda"))
			return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
					   "backend cuda is not compiled in (configure with CUDA and NCCL found: -DTPP_WITH_CUDA=ON -DTPP_WITH_NCCL=ON); available: %s",
					   avail);
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "unknown backend '%s' (available: %s)", name, avail);
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	b->ops = ops;
	b->world = *(const MPI_Comm *)mpi_comm;
	MPI_Comm_rank(b->world, &b->rank);
	MPI_Comm_size(b->world, &b->size);
	if ((rc = ops->init(b, b->world, err))) {
		free(b);
		return rc;
	}
	*out = b;
	return TPP_OK;
}

void tpp_backend_free(struct tpp_backend *b)
{
	if (!b)
		return;
	b->ops->fini(b);
	free(b);
}

const char *tpp_backend_name(const struct tpp_backend *b)
{
	return b->ops->name;
}

int tpp_backend_has(const struct tpp_backend *b, enum tpp_bk_op op)
{
	TPP_ASSERT((int)op >= 0 && op < TPP_BK_OP__COUNT);
	if ((int)op < TPP_BK_OP_COLL + TPP_COLL__COUNT)
		return b->ops->coll[op - TPP_BK_OP_COLL] != NULL;
	switch (op) {
	case TPP_BK_OP_GEMM: return b->ops->gemm && b->ops->gemm_elem_bytes;
	case TPP_BK_OP_FLUSH: return b->ops->flush != NULL;
	case TPP_BK_OP_DESCRIBE: return b->ops->describe != NULL;
	case TPP_BK_OP_GEMM_EX: return b->ops->gemm_ex != NULL;
	case TPP_BK_OP_P2P: return b->ops->send && b->ops->recv;
	case TPP_BK_OP_ELEMWISE:
		return b->ops->gelu_fwd && b->ops->gelu_bwd && b->ops->softmax_fwd &&
		       b->ops->softmax_bwd && b->ops->layernorm_fwd &&
		       b->ops->layernorm_bwd && b->ops->axpby;
	case TPP_BK_OP_MEM_INFO: return b->ops->mem_info != NULL;
	default: return 0;
	}
}

int tpp_backend_describe(struct tpp_backend *b, struct tpp_backend_info *info,
			 struct tpp_err *err)
{
	memset(info, 0, sizeof(*info));
	return b->ops->describe ? b->ops->describe(b, info, err) : TPP_OK;
}

int tpp_backend_alloc(struct tpp_backend *b, size_t bytes, void **out,
		      struct tpp_err *err)
{
	TPP_ASSERT(bytes > 0);
	return b->ops->alloc(b, bytes, out, err);
}

void tpp_backend_release(struct tpp_backend *b, void *buf)
{
	if (buf)
		b->ops->release(b, buf);
}

int tpp_backend_upload(struct tpp_backend *b, void *dst, const void *host,
		       size_t bytes, struct tpp_err *err)
{
	return b->ops->upload(b, dst, host, bytes, err);
}

int tpp_backend_download(struct tpp_backend *b, void *host, const void *src,
			 size_t bytes, struct tpp_err *err)
{
	return b->ops->download(b, host, src, bytes, err);
}

int tpp_backend_comm_new(struct tpp_backend *b, const void *mpi_comm,
			 struct tpp_bk_comm **out, struct tpp_err *err)
{
	MPI_Comm mc = *(const MPI_Comm *)mpi_comm;
	struct tpp_bk_comm *c = calloc(1, sizeof(*c));
	int rc;
	if (!c)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	MPI_Comm_rank(mc, &c->rank);
	MPI_Comm_size(mc, &c->size);
	if ((rc = b->ops->comm_new(b, mc, &c->impl, err))) {
		free(c);
		return rc;
	}
	*out = c;
	return TPP_OK;
}

void tpp_backend_comm_free(struct tpp_backend *b, struct tpp_bk_comm *c)
{
	if (!c)
		return;
	b->ops->comm_free(b, c->impl);
	free(c);
}

int tpp_backend_comm_size(const struct tpp_bk_comm *c) { return c->size; }
int tpp_backend_comm_rank(const struct tpp_bk_comm *c) { return c->rank; }

int tpp_backend_coll(struct tpp_backend *b, struct tpp_bk_comm *c,
		     enum tpp_coll op, const void *send, void *recv,
		     size_t count, struct tpp_err *err)
{
	TPP_ASSERT((int)op >= 0 && op < TPP_COLL__COUNT);
	if (!b->ops->coll[op])
		return tpp_bk_lacks(b, (enum tpp_bk_op)(TPP_BK_OP_COLL + op), err);
	return b->ops->coll[op](b, c->impl, send, recv, count, err);
}

int tpp_backend_barrier(struct tpp_backend *b, struct tpp_bk_comm *c,
			struct tpp_err *err)
{
	return b->ops->barrier(b, c->impl, err);
}

size_t tpp_backend_gemm_elem_bytes(const struct tpp_backend *b,
				   enum tpp_prec prec)
{
	return tpp_backend_has(b, TPP_BK_OP_GEMM) ? b->ops->gemm_elem_bytes(b, prec) : 0;
}

int tpp_backend_gemm(struct tpp_backend *b, enum tpp_prec prec, int m, int n,
		     int k, const void *A, const void *B, void *C,
		     struct tpp_err *err)
{
	if (!tpp_backend_has(b, TPP_BK_OP_GEMM))
		return tpp_bk_lacks(b, TPP_BK_OP_GEMM, err);
	return b->ops->gemm(b, prec, m, n, k, A, B, C, err);
}

int tpp_backend_flush(struct tpp_backend *b, struct tpp_err *err)
{
	if (!b->ops->flush)
		return tpp_bk_lacks(b, TPP_BK_OP_FLUSH, err);
	return b->ops->flush(b, err);
}

int tpp_backend_time_begin(struct tpp_backend *b, struct tpp_err *err)
{
	return b->ops->time_begin(b, err);
}

int tpp_backend_time_end(struct tpp_backend *b, double *seconds,
			 struct tpp_err *err)
{
	return b->ops->time_end(b, seconds, err);
}

/* ==== options ================================================================== */

static const struct tpp_bench_shape grid_full[] = {
#define ROW(m, n) {m, n, 128}, {m, n, 256}, {m, n, 512}, {m, n, 1024}, {m, n, 2048}
#define ROWS(m) ROW(m, 128), ROW(m, 256), ROW(m, 512), ROW(m, 1024), ROW(m, 2048)
	ROWS(128), ROWS(256), ROWS(512), ROWS(1024), ROWS(2048),
#undef ROWS
#undef ROW
};

static const struct tpp_bench_shape grid_quick[] = {
#define ROW(m, n) {m, n, 64}, {m, n, 128}
#define ROWS(m) ROW(m, 64), ROW(m, 128)
	ROWS(64), ROWS(128),
#undef ROWS
#undef ROW
};

int tpp_bench_default_shapes(int quick, const struct tpp_bench_shape **out)
{
	*out = quick ? grid_quick : grid_full;
	return quick ? (int)TPP_ARRAY_LEN(grid_quick) : (int)TPP_ARRAY_LEN(grid_full);
}

void tpp_bench_opts_default(struct tpp_bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = "cpu";
	o->min_bytes = 8;
	o->max_bytes = 64.0 * 1024 * 1024;
	o->iters = 20;
	o->warmup = 5;
	o->coll_mask = (1u << TPP_COLL__COUNT) - 1;
	o->gemm = 1;
	o->settle_s = TPP_BENCH_SETTLE_S;
	o->timeout_s = 300;
	o->progress = -1;
}

void tpp_bench_opts_quick(struct tpp_bench_opts *o)
{
	o->quick = 1;
	o->min_bytes = 1024;
	o->max_bytes = 256.0 * 1024;
	o->iters = 5;
	o->warmup = 2;
	o->settle_s = 0;
}

/* ==== MPI life cycle =========================================================== */

int tpp_bench_init(int *rank, int *size, struct tpp_err *err)
{
	int inited = 0;
	MPI_Initialized(&inited);
	if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "MPI_Init failed");
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return TPP_OK;
}

void tpp_bench_finalize(void)
{
	int inited = 0, done = 0;
	MPI_Initialized(&inited);
	MPI_Finalized(&done);
	if (inited && !done)
		MPI_Finalize();
}

int tpp_bench_agree(int status)
{
	MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return status;
}

/* ==== run state ================================================================== */

#define STAGE_BYTES ((size_t)8 << 20) /* host staging for fills and checks */

struct run {
	const struct tpp_bench_opts *o;
	struct tpp_backend *b;
	MPI_Comm world;
	int rank, size;
	int local, rpn, node, nnodes;
	struct tpp_err *err;
	/* collective buffers (backend memory) and host staging */
	void *send, *recv;
	size_t buf_bytes;
	float *stage;
	/* per-iteration times: this rank's, and the max over ranks */
	double *t, *tmax;
	/* progress and the stall hook (tests) */
	int show, step, nsteps;
	int stall_rank, stalled;
	pid_t parent; /* the launcher (mpiexec, orted, slurmstepd) */
};

/* A group shape: which groups, on which tier, how many at once. */
struct shape {
	int tier, group, concurrent;
	int color, key; /* for MPI_Comm_split; color MPI_UNDEFINED: idle */
	const char *what;
};

/*
 * Job-wide error agreement, also a barrier: every rank passes its status;
 * all get the worst one, and the message of the lowest rank with it
 * (prefixed with that rank when there are several).  Returns the status.
 */
static int agree(struct run *R, int rc)
{
	int in[2] = {rc, R->rank}, out[2];
	int root;
	char msg[sizeof(R->err->msg)];
	/*
	 * A rank whose launcher died (mpiexec killed with SIGKILL leaves its
	 * ranks running, reparented) stops here instead of finishing the run
	 * and replacing the --out file after the user gave up on it.
	 */
	if (R->size > 1 && getppid() != R->parent) {
		fprintf(stderr, "tpplan: calibrate: rank %d: the launcher (pid %ld) exited; stopping\n",
			R->rank, (long)R->parent);
		_exit(TPP_E_SYSTEM);
	}
	MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MAXLOC, R->world);
	if (!out[0])
		return TPP_OK;
	root = out[1]; /* MPI_MAXLOC: the lowest rank among equals */
	if (root == R->rank)
		tpp_strlcpy(msg, R->err->msg, sizeof(msg));
	MPI_Bcast(msg, (int)sizeof(msg), MPI_CHAR, root, R->world);
	if (R->size > 1 && strncmp(msg, "rank ", 5) && !strstr(msg, "(rank "))
		tpp_err_set(R->err, out[0], NULL, 0, 0, "rank %d: %s", root, msg);
	else
		tpp_err_set(R->err, out[0], NULL, 0, 0, "%s", msg);
	return out[0];
}

/* ---- timeout watchdog (SIGALRM -> MPI_Abort) ------------------------------------ */

static char wd_msg[512];
static size_t wd_len;
static volatile sig_atomic_t wd_fired;

static void wd_handler(int sig)
{
	ssize_t w;
	(void)sig;
	if (wd_fired)
		_exit(TPP_E_SYSTEM); /* MPI_Abort itself hung */
	wd_fired = 1;
	w = write(STDERR_FILENO, wd_msg, wd_len);
	(void)w;
	alarm(10);
	MPI_Abort(MPI_COMM_WORLD, TPP_E_SYSTEM);
	_exit(TPP_E_SYSTEM);
}

void tpp_bench_watchdog_arm(int timeout_s, const char *msg)
{
	struct sigaction sa;
	if (timeout_s <= 0)
		return;
	alarm(0);
	tpp_strlcpy(wd_msg, msg, sizeof(wd_msg));
	wd_len = strlen(wd_msg);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wd_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned)timeout_s);
}

void tpp_bench_watchdog_disarm(void)
{
	alarm(0);
}

/* The calibration's watchdog runs on rank 0 (one abort is enough). */
static void wd_arm(const struct run *R, const char *what)
{
	char msg[512];
	if (R->rank != 0 || R->o->timeout_s <= 0)
		return;
	snprintf(msg, sizeof(msg),
		 "\ntpplan: calibrate: %s did not finish within %d s (--timeout); a rank or link stalled, aborting the run\n",
		 what, R->o->timeout_s);
	tpp_bench_watchdog_arm(R->o->timeout_s, msg);
}

static void wd_disarm(const struct run *R)
{
	if (R->rank == 0 && R->o->timeout_s > 0)
		tpp_bench_watchdog_disarm();
}

/* Test hook: TPP_CALIBRATE_TEST_STALL=R makes rank R hang in its first
 * collective step, so --timeout can be tested. */
static void stall_hook(struct run *R)
{
	int i;
	if (R->stalled || R->stall_rank != R->rank)
		return;
	R->stalled = 1;
	for (i = 0; i < 600; i++)
		sleep(1);
}

/* ---- progress (rank 0, terminal only) ---------------------------------------------- */

static void fmt_bytes(char *out, size_t size, double bytes)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (bytes >= 1024 && u < 4 && fmod(bytes, 1024) == 0) {
		bytes /= 1024;
		u++;
	}
	snprintf(out, size, "%.0f %s", bytes, unit[u]);
}

static void progress(struct run *R, const char *what)
{
	R->step++;
	if (!R->show)
		return;
	fprintf(stderr, "\r%-56.56s [%d/%d]", what, R->step, R->nsteps);
	fflush(stderr);
}

static void progress_done(struct run *R)
{
	if (R->show)
		fprintf(stderr, "\r%70s\r", "");
}

/* ---- statistics ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Quantile q of sorted v[0..n) with linear interpolation. */
static double quantile(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)pos;
	if (i >= n - 1)
		return v[n - 1];
	return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

/* ==== data with exactly known collective results ==================================== */

/* v(r, j) = a(j) + b(r): small integers, so every sum over up to 2^16
 * ranks is exact in fp32 and a misplaced block shows. */
static float val_a(size_t j)
{
	return (float)((int)(((uint32_t)j * 2654435761u) >> 13) % 17 - 8);
}

static float val_b(int r)
{
	return (float)(r % 251 - 125);
}

static size_t send_elems(enum tpp_coll op, int n, size_t count)
{
	return op == TPP_COLL_REDUCE_SCATTER || op == TPP_COLL_ALL_TO_ALL
		       ? count * (size_t)n : count;
}

static size_t recv_elems(enum tpp_coll op, int n, size_t count)
{
	return op == TPP_COLL_ALL_GATHER || op == TPP_COLL_ALL_TO_ALL
		       ? count * (size_t)n : count;
}

/* Expected element j of rank r's receive buffer. */
static float expect(enum tpp_coll op, int r, int n, size_t count, size_t j,
		    float sum_b)
{
	switch (op) {
	case TPP_COLL_ALL_REDUCE:
		return (float)n * val_a(j) + sum_b;
	case TPP_COLL_ALL_GATHER:
		return val_a(j % count) + val_b((int)(j / count));
	case TPP_COLL_REDUCE_SCATTER:
		return (float)n * val_a((size_t)r * count + j) + sum_b;
	case TPP_COLL_ALL_TO_ALL:
		return val_a((size_t)r * count + j % count) + val_b((int)(j / count));
	case TPP_COLL_SEND_RECV:
		return val_a(j) + val_b((r + n - 1) % n);
	default:
		TPP_ASSERT(0);
	}
	return 0;
}

/* Upload `elems` floats f(i) (i from 0) to buf through the staging buffer. */
static int upload_vals(struct run *R, void *buf, size_t elems, int r,
		       float poison)
{
	size_t chunk = STAGE_BYTES / sizeof(float), i0, i;
	int rc;
	for (i0 = 0; i0 < elems; i0 += chunk) {
		size_t n = elems - i0 < chunk ? elems - i0 : chunk;
		for (i = 0; i < n; i++)
			R->stage[i] = r < 0 ? poison : val_a(i0 + i) + val_b(r);
		if ((rc = tpp_backend_upload(R->b, (char *)buf + i0 * sizeof(float),
					     R->stage, n * sizeof(float), R->err)))
			return rc;
	}
	return TPP_OK;
}

/* One checked run of `op`; *wrong = number of wrong receive elements. */
static int coll_check(struct run *R, struct tpp_bk_comm *c, enum tpp_coll op,
		      size_t count, long long *wrong)
{
	int r = c->rank, n = c->size, q, rc;
	size_t re = recv_elems(op, n, count), chunk = STAGE_BYTES / sizeof(float);
	size_t i0, i;
	float sum_b = 0;
	*wrong = 0;
	for (q = 0; q < n; q++)
		sum_b += val_b(q);
	if ((rc = upload_vals(R, R->send, send_elems(op, n, count), r, 0)) ||
	    (rc = upload_vals(R, R->recv, re, -1, 0.5f)) ||
	    (rc = tpp_backend_coll(R->b, c, op, R->send, R->recv, count, R->err)))
		return rc;
	for (i0 = 0; i0 < re; i0 += chunk) {
		size_t m = re - i0 < chunk ? re - i0 : chunk;
		if ((rc = tpp_backend_download(R->b, R->stage,
					       (char *)R->recv + i0 * sizeof(float),
					       m * sizeof(float), R->err)))
			return rc;
		for (i = 0; i < m; i++)
			if (R->stage[i] != expect(op, r, n, count, i0 + i, sum_b))
				++*wrong;
	}
	return TPP_OK;
}

/* ==== collective sweep ================================================================= */

/* Element count per rank (the backend's `count`) for nccl-tests size `bytes`. */
static size_t coll_count(enum tpp_coll op, int n, double bytes)
{
	double per = op == TPP_COLL_ALL_REDUCE || op == TPP_COLL_SEND_RECV
			     ? sizeof(float) : sizeof(float) * (double)n;
	return (size_t)floor(bytes / per);
}

/* The nccl-tests size of a run with `count` (inverse of coll_count). */
static double coll_bytes(enum tpp_coll op, int n, size_t count)
{
	double per = op == TPP_COLL_ALL_REDUCE || op == TPP_COLL_SEND_RECV
			     ? sizeof(float) : sizeof(float) * (double)n;
	return (double)count * per;
}

static int nsizes(const struct tpp_bench_opts *o)
{
	int n = 0;
	double s;
	for (s = o->min_bytes; s <= o->max_bytes; s *= 2)
		n++;
	return n;
}

/* Time one size of `op` on this rank's group (c NULL: idle this shape). */
static int coll_point(struct run *R, struct tpp_bk_comm *c,
		      const struct shape *sh, enum tpp_coll op, size_t count,
		      struct tpp_cal_point *pt)
{
	const struct tpp_bench_opts *o = R->o;
	long long wrong = 0, wrong_all = 0;
	int rc = TPP_OK, it;
	double t = 0;
	char sz[32];

	fmt_bytes(sz, sizeof(sz), coll_bytes(op, sh->group, count));
	if (c)
		rc = coll_check(R, c, op, count, &wrong);
	if ((rc = agree(R, rc)))
		return rc;
	MPI_Allreduce(&wrong, &wrong_all, 1, MPI_LONG_LONG, MPI_SUM, R->world);
	if (wrong_all)
		return tpp_err_set(R->err, TPP_E_INFEASIBLE, NULL, 0, 0,
				   "%s check failed: %lld wrong values at %s in groups of %d (tier %d, backend %s)",
				   tpp_coll_names[op], wrong_all, sz, sh->group,
				   sh->tier, R->b->ops->name);
	if (c)
		stall_hook(R);
	for (it = 0; it < o->warmup + o->iters; it++) {
		if ((rc = agree(R, rc)))
			return rc;
		t = 0;
		if (c && !(rc = tpp_backend_time_begin(R->b, R->err)) &&
		    !(rc = tpp_backend_coll(R->b, c, op, R->send, R->recv, count,
					    R->err)))
			rc = tpp_backend_time_end(R->b, &t, R->err);
		if (it >= o->warmup)
			R->t[it - o->warmup] = t;
	}
	if ((rc = agree(R, rc)))
		return rc;
	MPI_Allreduce(R->t, R->tmax, o->iters, MPI_DOUBLE, MPI_MAX, R->world);
	qsort(R->tmax, (size_t)o->iters, sizeof(double), cmp_double);
	pt->bytes = coll_bytes(op, sh->group, count);
	pt->median_s = quantile(R->tmax, o->iters, 0.5);
	pt->p10_s = quantile(R->tmax, o->iters, 0.1);
	pt->p90_s = quantile(R->tmax, o->iters, 0.9);
	return TPP_OK;
}

static int coll_shape(struct run *R, const struct shape *sh,
		      struct tpp_calibration *cal)
{
	const struct tpp_bench_opts *o = R->o;
	MPI_Comm mc = MPI_COMM_NULL;
	struct tpp_bk_comm *c = NULL;
	int rc = TPP_OK, op;

	char what[96];

	snprintf(what, sizeof(what), "opening the %s groups of %d", sh->what, sh->group);
	wd_arm(R, what);
	MPI_Comm_split(R->world, sh->color, sh->key, &mc);
	if (mc != MPI_COMM_NULL) {
		rc = tpp_backend_comm_new(R->b, &mc, &c, R->err);
		MPI_Comm_free(&mc);
	}
	if ((rc = agree(R, rc)))
		goto out;
	for (op = 0; op < TPP_COLL__COUNT && !rc; op++) {
		struct tpp_cal_coll *tab;
		double s;
		if (!(o->coll_mask & (1u << op)))
			continue;
		if (!tpp_backend_has(R->b, (enum tpp_bk_op)(TPP_BK_OP_COLL + op))) {
			if (R->rank == 0)
				fprintf(stderr, "tpplan: calibrate: backend %s lacks %s; skipped\n",
					R->b->ops->name, tpp_coll_names[op]);
			continue;
		}
		TPP_ASSERT(cal->ncoll < TPP_CAL_MAX_COLL);
		tab = &cal->coll[cal->ncoll];
		memset(tab, 0, sizeof(*tab));
		tab->op = (enum tpp_coll)op;
		tab->tier = sh->tier;
		tab->group = sh->group;
		tab->concurrent = sh->concurrent;
		for (s = o->min_bytes; s <= o->max_bytes && !rc; s *= 2) {
			size_t count = coll_count((enum tpp_coll)op, sh->group, s);
			char sz[32];
			if (count == 0)
				continue;
			fmt_bytes(sz, sizeof(sz), coll_bytes((enum tpp_coll)op, sh->group, count));
			snprintf(what, sizeof(what), "%s g=%d%s  %s", tpp_coll_names[op],
				 sh->group, sh->tier ? " (nodes)" : "", sz);
			progress(R, what);
			wd_arm(R, what);
			TPP_ASSERT(tab->npoints < TPP_CAL_MAX_POINTS);
			rc = coll_point(R, c, sh, (enum tpp_coll)op, count,
					&tab->pts[tab->npoints]);
			if (!rc)
				tab->npoints++;
		}
		if (!rc && tab->npoints)
			cal->ncoll++;
		else if (!rc && R->rank == 0)
			/* every size too small for a whole element per rank */
			fprintf(stderr, "tpplan: calibrate: no %s of %d ranks from --min-bytes %.0f to "
				"--max-bytes %.0f (each rank needs a whole element); skipped\n",
				tpp_coll_names[op], sh->group, o->min_bytes, o->max_bytes);
	}
out:
	tpp_backend_comm_free(R->b, c);
	return rc;
}

/* The group shapes of this job (see the file comment). */
static int make_shapes(const struct run *R, struct shape *out, int max)
{
	int n = 0, g;
	for (g = 2; g <= R->rpn && n < max; g *= 2) {
		int per_node = R->rpn / g;
		int in = R->local < per_node * g;
		out[n++] = (struct shape){
			.tier = 0, .group = g, .concurrent = R->nnodes * per_node,
			.color = in ? R->node * per_node + R->local / g : MPI_UNDEFINED,
			.key = R->local, .what = "intra-node",
		};
	}
	if (R->nnodes > 1 && n < max)
		out[n++] = (struct shape){
			.tier = 1, .group = R->size, .concurrent = 1, .color = 0,
			.key = R->rank, .what = "all ranks",
		};
	if (R->nnodes > 1 && R->rpn > 1 && n < max)
		out[n++] = (struct shape){
			.tier = 1, .group = R->nnodes, .concurrent = R->rpn,
			.color = R->local, .key = R->node, .what = "rails",
		};
	return n;
}

/* ==== GEMM sweep ========================================================================= */

static uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/* Operand value: a multiple of 1/1024 in [-1, 1). */
static float gval(uint32_t seed, size_t i)
{
	uint64_t w = (uint64_t)i;
	uint32_t h = mix32(seed ^ mix32((uint32_t)w ^ (uint32_t)(w >> 32) * 0x9e3779b9u));
	return (float)((int)(h >> 21) - 1024) / 1024.0f;
}

static uint16_t f32_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	x += 0x7fffu + ((x >> 16) & 1u);
	return (uint16_t)(x >> 16);
}

static float bf16_to_f32(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;
	memcpy(&f, &x, 4);
	return f;
}

/* IEEE half, normal numbers (the operand values); tiny ones flush to 0. */
static uint16_t f32_to_f16(float f)
{
	uint32_t x, man, rem, h, sign;
	int e;
	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000u;
	e = (int)((x >> 23) & 0xff) - 127 + 15;
	man = x & 0x7fffffu;
	if ((x & 0x7fffffffu) == 0 || e <= 0)
		return (uint16_t)sign;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00u);
	h = sign | ((uint32_t)e << 10) | (man >> 13);
	rem = man & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
		h++;
	return (uint16_t)h;
}

static float f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 31, man = h & 0x3ffu, x;
	float f;
	if (e == 0)
		return (sign ? -1.0f : 1.0f) * (float)man * 5.9604644775390625e-8f;
	x = sign | ((e - 15 + 127) << 23) | (man << 13);
	memcpy(&f, &x, 4);
	return f;
}

/* The value element i of an operand holds, as the GEMM sees it. */
static float gval_as(enum tpp_prec p, uint32_t seed, size_t i)
{
	float v = gval(seed, i);
	if (p == TPP_PREC_BF16)
		return bf16_to_f32(f32_to_bf16(v));
	if (p == TPP_PREC_FP16)
		return f16_to_f32(f32_to_f16(v));
	return v;
}

static int upload_operand(struct run *R, enum tpp_prec p, size_t eb,
			  void *buf, size_t elems, uint32_t seed)
{
	size_t chunk = STAGE_BYTES / eb, i0, i;
	unsigned char *st = (unsigned char *)R->stage;
	int rc;
	for (i0 = 0; i0 < elems; i0 += chunk) {
		size_t n = elems - i0 < chunk ? elems - i0 : chunk;
		for (i = 0; i < n; i++) {
			float v = gval(seed, i0 + i);
			if (eb == 2) {
				uint16_t h = p == TPP_PREC_BF16 ? f32_to_bf16(v) : f32_to_f16(v);
				memcpy(st + i * 2, &h, 2);
			} else {
				memcpy(st + i * 4, &v, 4);
			}
		}
		if ((rc = tpp_backend_upload(R->b, (char *)buf + i0 * eb, st, n * eb,
					     R->err)))
			return rc;
	}
	return TPP_OK;
}

#define SEED_A 0x1234567u
#define SEED_B 0x89abcdeu

/* Compare C's first column (up to 16 rows) with a host dot product. */
static int gemm_check(struct run *R, enum tpp_prec p, size_t eb,
		      const struct tpp_bench_shape *s, const void *C, int *bad)
{
	double tol = p == TPP_PREC_FP32 ? 1e-3 : p == TPP_PREC_TF32 ? 1e-2 : 2e-2;
	int rows = s->m < 16 ? s->m : 16, i, kk, rc;
	unsigned char col[16 * 4];
	*bad = 0;
	if ((rc = tpp_backend_download(R->b, col, C, (size_t)rows * eb, R->err)))
		return rc;
	for (i = 0; i < rows; i++) {
		double ref = 0, mag = 0, got;
		for (kk = 0; kk < s->k; kk++) {
			double a = gval_as(p, SEED_A, (size_t)i + (size_t)kk * (size_t)s->m);
			double b = gval_as(p, SEED_B, (size_t)kk);
			ref += a * b;
			mag += fabs(a * b);
		}
		if (eb == 2) {
			uint16_t h;
			memcpy(&h, col + i * 2, 2);
			got = p == TPP_PREC_BF16 ? bf16_to_f32(h) : f16_to_f32(h);
		} else {
			float f;
			memcpy(&f, col + i * 4, 4);
			got = f;
		}
		if (!(fabs(got - ref) <= tol * mag + 1e-6))
			++*bad;
	}
	return TPP_OK;
}

/* One timed GEMM (flush first, not timed). */
static int gemm_once(struct run *R, enum tpp_prec p, const struct tpp_bench_shape *s,
		     void *A, void *B, void *C, int flush, double *t)
{
	int rc;
	*t = 0;
	if (flush && (rc = tpp_backend_flush(R->b, R->err)))
		return rc;
	if ((rc = tpp_backend_time_begin(R->b, R->err)) ||
	    (rc = tpp_backend_gemm(R->b, p, s->m, s->n, s->k, A, B, C, R->err)))
		return rc;
	return tpp_backend_time_end(R->b, t, R->err);
}

/* Target time per shape: enough runs for ~0.25 s, at least 3, at most iters. */
static int gemm_iters(const struct tpp_bench_opts *o, double probe_s)
{
	double want = probe_s > 0 ? ceil(0.25 / probe_s) : o->iters;
	int n = want > o->iters ? o->iters : (int)want;
	if (n < 3)
		n = o->iters < 3 ? o->iters : 3;
	return n;
}

/* The operands of GEMMs up to na, nb and nc elements of A, B and C, on
 * the device, A and B random (zeros would draw less power).  Not
 * collective: the caller agrees on the status. */
static int gemm_operands(struct run *R, enum tpp_prec p, size_t eb, size_t na, size_t nb,
			 size_t nc, void **A, void **B, void **C)
{
	int rc;
	if (!(rc = tpp_backend_alloc(R->b, na * eb, A, R->err)) &&
	    !(rc = tpp_backend_alloc(R->b, nb * eb, B, R->err)) &&
	    !(rc = tpp_backend_alloc(R->b, nc * eb, C, R->err)) &&
	    !(rc = upload_operand(R, p, eb, *A, na, SEED_A)))
		rc = upload_operand(R, p, eb, *B, nb, SEED_B);
	return rc;
}

/*
 * Settle before a precision's sweep: the GEMM rate the model wants is the
 * one a GPU sustains at its power limit (MSMF), which a training step's
 * seconds of back-to-back GEMMs run at, not the boost-clock burst a cool
 * device gives a short benchmark (topologies/README.md "GEMM ceiling").
 * As ml-engineering's mamf-finder settles the clock (up to 20 s of
 * 8192^3 matmuls, stopping once the clock stops dropping), every rank runs
 * one large shape back to back, without cache flushes, in windows of
 * TPP_BENCH_SETTLE_WINDOW_S (none past settle_s), all ranks at once, as a
 * node's GPUs load each other's power and cooling in training:
 *   - the shape is the sweep's largest, each side doubled (M and N up to
 *     TPP_BENCH_SETTLE_MAX_DIM, K up to TPP_BENCH_SETTLE_MAX_K) while one
 *     GEMM takes under TPP_BENCH_SETTLE_GEMM_S on the slowest rank, so
 *     that the per-GEMM timing's host round trip is a small part of the
 *     window;
 *   - it stops when the slowest rank's rates over the windows of the last
 *     TPP_BENCH_SETTLE_HOLD_S agree within 1 % (a slow slide of the clock,
 *     under 1 % a window, is not steady), once TPP_BENCH_SETTLE_MIN_S (or
 *     settle_s if less) has passed -- a clock needs seconds to sink -- or
 *     at settle_s, in seconds of GEMMs on the slowest rank; rank 0 says
 *     when the time ran out before the rate held.
 * The sweep that follows runs the device warm.  In g: the seconds it
 * took, the last window's rate (slowest rank) and the shape.
 */
static int gemm_settle(struct run *R, enum tpp_prec p, const struct tpp_bench_shape *shapes,
		       int nshapes, void *A, void *B, void *C, struct tpp_cal_gemm *g)
{
	const struct tpp_bench_opts *o = R->o;
	size_t eb = tpp_backend_gemm_elem_bytes(R->b, p);
	struct tpp_bench_shape big = shapes[0];
	void *SA = NULL, *SB = NULL, *SC = NULL;
	double spent = 0, hist[16];
	double window = o->settle_s < TPP_BENCH_SETTLE_WINDOW_S ? o->settle_s : TPP_BENCH_SETTLE_WINDOW_S;
	double min_s = o->settle_s < TPP_BENCH_SETTLE_MIN_S ? o->settle_s : TPP_BENCH_SETTLE_MIN_S;
	/* windows that span TPP_BENCH_SETTLE_HOLD_S, and one to compare */
	int hold = (int)ceil(TPP_BENCH_SETTLE_HOLD_S / window - 1e-9) + 1, nw = 0, held = 0;
	char what[96];
	int rc = TPP_OK, i;
	if (hold > (int)TPP_ARRAY_LEN(hist))
		hold = (int)TPP_ARRAY_LEN(hist);
	for (i = 1; i < nshapes; i++)
		if ((double)shapes[i].m * shapes[i].n * shapes[i].k >
		    (double)big.m * big.n * big.k)
			big = shapes[i];
	/*
	 * Grow the shape: each side doubles, M and N up to
	 * TPP_BENCH_SETTLE_MAX_DIM and K up to TPP_BENCH_SETTLE_MAX_K (a thin
	 * shape fills out), while the slowest rank's GEMM, timed after
	 * an untimed run, takes under TPP_BENCH_SETTLE_GEMM_S.  The first
	 * shape runs in the sweep's buffers, which hold it; a grown one in
	 * its own, with random operands as in the sweep (zeros draw less
	 * power).  Every decision is on values all ranks share.
	 */
	for (;;) {
		double t = 0, slowest = 0;
		struct tpp_bench_shape next = big;
		snprintf(what, sizeof(what), "gemm %s settle probe %dx%dx%d", tpp_prec_names[p],
			 big.m, big.n, big.k);
		wd_arm(R, what);
		rc = gemm_once(R, p, &big, A, B, C, 0, &t);
		if (!rc)
			rc = gemm_once(R, p, &big, A, B, C, 0, &t);
		if ((rc = agree(R, rc)))
			goto out;
		MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, R->world);
		if (slowest >= TPP_BENCH_SETTLE_GEMM_S)
			break;
		next.m = big.m * 2 <= TPP_BENCH_SETTLE_MAX_DIM ? big.m * 2 : big.m;
		next.n = big.n * 2 <= TPP_BENCH_SETTLE_MAX_DIM ? big.n * 2 : big.n;
		next.k = big.k * 2 <= TPP_BENCH_SETTLE_MAX_K ? big.k * 2 : big.k;
		if (next.m == big.m && next.n == big.n && next.k == big.k)
			break;
		big = next;
		tpp_backend_release(R->b, SA);
		tpp_backend_release(R->b, SB);
		tpp_backend_release(R->b, SC);
		SA = SB = SC = NULL;
		rc = gemm_operands(R, p, eb, (size_t)big.m * big.k, (size_t)big.k * big.n,
				   (size_t)big.m * big.n, &SA, &SB, &SC);
		if ((rc = agree(R, rc)))
			goto out;
		A = SA;
		B = SB;
		C = SC;
	}
	snprintf(what, sizeof(what), "gemm %s settle at %dx%dx%d", tpp_prec_names[p],
		 big.m, big.n, big.k);
	progress(R, what);
	while (spent < o->settle_s) {
		double busy = 0, t = 0, mine, slowest = 0, wmax = 0, lo, hi;
		/* the last window ends at settle_s */
		double want = o->settle_s - spent < window ? o->settle_s - spent : window;
		int runs = 0, j;
		wd_arm(R, what);
		/* a backend that timed 0 s would never fill the window */
		while (!rc && busy < want && runs < 10000000) {
			rc = gemm_once(R, p, &big, A, B, C, 0, &t);
			busy += t;
			runs++;
		}
		if ((rc = agree(R, rc)))
			break;
		mine = busy > 0 ? runs * 2.0 * big.m * (double)big.n * big.k / busy : 0;
		MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MIN, R->world);
		MPI_Allreduce(&busy, &wmax, 1, MPI_DOUBLE, MPI_MAX, R->world);
		spent += wmax;
		g->settled_s = spent;
		g->settled_flops_per_s = slowest;
		g->settled_m = big.m;
		g->settled_n = big.n;
		g->settled_k = big.k;
		hist[nw++ % hold] = slowest;
		if (nw < hold || spent < min_s)
			continue;
		lo = hi = hist[0];
		for (j = 1; j < hold; j++) {
			lo = fmin(lo, hist[j]);
			hi = fmax(hi, hist[j]);
		}
		if (hi <= 1.01 * lo) {
			held = 1;
			break;
		}
	}
	if (!rc && !held && R->rank == 0)
		fprintf(stderr, "%stpplan: calibrate: gemm %s: the rate still moved after %.1f s of settling (--gemm-settle); the sweep may run above the sustained clock\n",
			R->show ? "\n" : "", tpp_prec_names[p], spent);
out:
	tpp_backend_release(R->b, SA);
	tpp_backend_release(R->b, SB);
	tpp_backend_release(R->b, SC);
	return rc;
}

/* Share of a node's physical memory (host backend) or of a device's free
 * memory the measurement may take, as `tpplan exec` (exec/run.c). */
#define MEM_FRACTION 0.9

/*
 * What the run will allocate, before it does: a rank's collective send and
 * receive buffers (R->buf_bytes each), then, one precision at a time, the
 * GEMM operands of the largest shapes (gemm_prec: A m x k, B k x n, C m x
 * n).  On a device with memory of its own each rank's bytes against
 * MEM_FRACTION of its free memory; on the host the node's ranks' together
 * against MEM_FRACTION of the physical memory or a memory cgroup's
 * smaller limit (an allocation larger than that may still succeed and
 * then be killed, or swap, mid-run).
 * TPP_E_INPUT naming the bytes; the same on every rank.
 */
static int mem_check(struct run *R, const struct tpp_bench_shape *shapes, int nshapes)
{
	const struct tpp_bench_opts *o = R->o;
	double coll = 2.0 * (double)R->buf_bytes, gemm = 0, rank, limit = INFINITY, use;
	const char *where = "the node's physical memory";
	int p, i, dev = tpp_backend_has(R->b, TPP_BK_OP_MEM_INFO), from_cgroup = 0;
	if (o->gemm)
		for (p = 0; p < TPP_PREC__COUNT; p++) {
			double eb = (double)tpp_backend_gemm_elem_bytes(R->b, (enum tpp_prec)p);
			double ma = 0, mb = 0, mc = 0;
			if (!eb || (o->prec_mask && !(o->prec_mask & (1u << p))))
				continue;
			for (i = 0; i < nshapes; i++) {
				double m = shapes[i].m, n = shapes[i].n, k = shapes[i].k;
				ma = fmax(ma, m * k);
				mb = fmax(mb, k * n);
				mc = fmax(mc, m * n);
			}
			gemm = fmax(gemm, (ma + mb + mc) * eb);
		}
	rank = fmax(coll, gemm);
	if (dev) {
		size_t fr = 0, tot = 0;
		if (tpp_backend_mem_info(R->b, &fr, &tot, R->err) == TPP_OK && fr > 0)
			limit = (double)fr;
		where = "the device's free memory";
		use = rank;
	} else {
		/* or a memory cgroup's smaller limit: past it the OOM
		 * killer ends the run (common/tpp_mem.c) */
		limit = tpp_host_mem_limit(&from_cgroup);
		if (from_cgroup)
			where = "the memory this job may use (its cgroup's limit)";
		use = rank * (R->rpn > 0 ? R->rpn : 1);
	}
	if (use <= MEM_FRACTION * limit)
		return TPP_OK;
	{
		char who[64];
		int n = dev || R->rpn < 1 ? 1 : R->rpn;
		if (dev)
			snprintf(who, sizeof(who), "each rank");
		else if (n > 1)
			snprintf(who, sizeof(who), "the %d ranks on this node", n);
		else
			snprintf(who, sizeof(who), "this rank");
		/* what this machine cannot hold, as `tpplan exec` says it:
		 * TPP_E_INPUT (exit 3), with the flag that sets the bytes */
		return tpp_err_set(R->err, TPP_E_INPUT, NULL, 0, 0,
				   "not enough memory: %s would allocate %.1f GiB (%.1f GiB of %s each), more than %.0f%% of %s (%.1f GiB); %s",
				   who, use / TPP_GiB, rank / TPP_GiB,
				   gemm >= coll ? "GEMM operands" : "collective buffers",
				   100 * MEM_FRACTION, where, limit / TPP_GiB,
				   gemm >= coll ? "give smaller --gemm-shapes, or --no-gemm"
				   : o->min_bytes >= o->max_bytes
				   ? "give a smaller --min-bytes (above --max-bytes it sets the largest message too)"
				   : "give a smaller --max-bytes");
	}
}

static int gemm_prec(struct run *R, enum tpp_prec p, const struct tpp_bench_shape *shapes,
		     int nshapes, struct tpp_cal_gemm *g)
{
	const struct tpp_bench_opts *o = R->o;
	size_t eb = tpp_backend_gemm_elem_bytes(R->b, p), ma = 0, mb = 0, mcn = 0;
	void *A = NULL, *B = NULL, *C = NULL;
	int flush = tpp_backend_has(R->b, TPP_BK_OP_FLUSH);
	int rc = TPP_OK, i, it;

	for (i = 0; i < nshapes; i++) {
		size_t a = (size_t)shapes[i].m * (size_t)shapes[i].k;
		size_t b = (size_t)shapes[i].k * (size_t)shapes[i].n;
		size_t c = (size_t)shapes[i].m * (size_t)shapes[i].n;
		ma = a > ma ? a : ma;
		mb = b > mb ? b : mb;
		mcn = c > mcn ? c : mcn;
	}
	rc = gemm_operands(R, p, eb, ma, mb, mcn, &A, &B, &C);
	if ((rc = agree(R, rc)))
		goto out;
	memset(g, 0, sizeof(*g));
	g->prec = p;
	if (o->settle_s > 0 && nshapes > 0 && (rc = gemm_settle(R, p, shapes, nshapes, A, B, C, g)))
		goto out;
	for (i = 0; i < nshapes && !rc; i++) {
		const struct tpp_bench_shape *s = &shapes[i];
		struct tpp_cal_gemm_point *pt;
		double t = 0, probe = 0;
		int bad = 0, bad_all = 0, n;
		char what[96];
		snprintf(what, sizeof(what), "gemm %s %dx%dx%d", tpp_prec_names[p],
			 s->m, s->n, s->k);
		progress(R, what);
		wd_arm(R, what);
		/* the check and the warm-up runs need no flush */
		if (!(rc = gemm_once(R, p, s, A, B, C, 0, &t)))
			rc = gemm_check(R, p, eb, s, C, &bad);
		for (it = 0; it < o->warmup && !rc; it++)
			rc = gemm_once(R, p, s, A, B, C, 0, &t);
		if ((rc = agree(R, rc)))
			break;
		MPI_Allreduce(&bad, &bad_all, 1, MPI_INT, MPI_SUM, R->world);
		if (bad_all) {
			rc = tpp_err_set(R->err, TPP_E_INFEASIBLE, NULL, 0, 0,
					 "gemm %s %dx%dx%d check failed: %d wrong values (backend %s)",
					 tpp_prec_names[p], s->m, s->n, s->k, bad_all,
					 R->b->ops->name);
			break;
		}
		MPI_Allreduce(&t, &probe, 1, MPI_DOUBLE, MPI_MAX, R->world);
		/*
		 * The runs are sized on one flushed run timed whole: the
		 * cache flush before each timed run can cost far more than
		 * a small GEMM (a 64^3 fp32 GEMM takes ~13 us, writing a
		 * 600 MiB last-level cache ~60 ms), and sized on the GEMM
		 * alone --iters of them ran past --timeout.
		 */
		if (flush) {
			double w0 = MPI_Wtime(), wall, wall_max = 0;
			rc = gemm_once(R, p, s, A, B, C, flush, &t);
			wall = MPI_Wtime() - w0;
			if ((rc = agree(R, rc)))
				break;
			MPI_Allreduce(&wall, &wall_max, 1, MPI_DOUBLE, MPI_MAX, R->world);
			if (wall_max > probe)
				probe = wall_max;
		}
		n = gemm_iters(o, probe);
		for (it = 0; it < n; it++) {
			if ((rc = agree(R, rc)))
				break;
			rc = gemm_once(R, p, s, A, B, C, flush, &R->t[it]);
		}
		if ((rc = agree(R, rc)))
			break;
		MPI_Allreduce(R->t, R->tmax, n, MPI_DOUBLE, MPI_MAX, R->world);
		qsort(R->tmax, (size_t)n, sizeof(double), cmp_double);
		TPP_ASSERT(g->npoints < TPP_CAL_MAX_GEMM);
		pt = &g->pts[g->npoints++];
		pt->m = s->m;
		pt->n = s->n;
		pt->k = s->k;
		pt->median_s = quantile(R->tmax, n, 0.5);
		pt->flops_per_s = pt->median_s > 0
			? 2.0 * s->m * (double)s->n * s->k / pt->median_s : 0;
		if (pt->flops_per_s > g->best_flops_per_s)
			g->best_flops_per_s = pt->flops_per_s;
	}
	g->valid = !rc && g->npoints > 0;
out:
	tpp_backend_release(R->b, A);
	tpp_backend_release(R->b, B);
	tpp_backend_release(R->b, C);
	return rc;
}

/* ==== metadata ========================================================================== */

static void meta_hosts(struct run *R, struct tpp_calibration *cal)
{
	char name[MPI_MAX_PROCESSOR_NAME] = "";
	char *all = NULL;
	int len = 0, i, j, nhosts = 0;
	MPI_Get_processor_name(name, &len);
	if (R->rank == 0)
		all = calloc((size_t)R->size, MPI_MAX_PROCESSOR_NAME);
	MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all,
		   MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, R->world);
	if (R->rank != 0)
		return;
	if (!all) {
		tpp_strlcpy(cal->hosts, name, sizeof(cal->hosts));
		return;
	}
	cal->hosts[0] = '\0';
	for (i = 0; i < R->size; i++) {
		const char *h = all + (size_t)i * MPI_MAX_PROCESSOR_NAME;
		int seen = 0;
		for (j = 0; j < i && !seen; j++)
			seen = !strcmp(h, all + (size_t)j * MPI_MAX_PROCESSOR_NAME);
		if (seen)
			continue;
		nhosts++;
		if (strlen(cal->hosts) + strlen(h) + 2 < sizeof(cal->hosts) - 24) {
			if (cal->hosts[0])
				strcat(cal->hosts, ",");
			strcat(cal->hosts, h);
		} else if (!strstr(cal->hosts, ",...")) {
			strcat(cal->hosts, ",...");
		}
	}
	if (strstr(cal->hosts, ",...")) {
		char tail[24];
		snprintf(tail, sizeof(tail), " (%d hosts)", nhosts);
		strcat(cal->hosts, tail);
	}
	free(all);
}

static int meta_fill(struct run *R, struct tpp_calibration *cal)
{
	struct tpp_backend_info info;
	time_t now = time(NULL);
	struct tm tm;
	int rc;
	if (gmtime_r(&now, &tm))
		strftime(cal->created_utc, sizeof(cal->created_utc),
			 "%Y-%m-%dT%H:%M:%SZ", &tm);
	tpp_strlcpy(cal->tpplan_version, tpp_version, sizeof(cal->tpplan_version));
	tpp_strlcpy(cal->backend, R->b->ops->name, sizeof(cal->backend));
	cal->ranks = R->size;
	cal->ranks_per_node = R->rpn;
	meta_hosts(R, cal);
	rc = tpp_backend_describe(R->b, &info, R->err);
	if (rc)
		return rc;
	tpp_strlcpy(cal->device, info.device, sizeof(cal->device));
	tpp_strlcpy(cal->mpi, info.mpi, sizeof(cal->mpi));
	tpp_strlcpy(cal->blas, info.blas, sizeof(cal->blas));
	tpp_strlcpy(cal->cuda, info.cuda, sizeof(cal->cuda));
	tpp_strlcpy(cal->nccl, info.nccl, sizeof(cal->nccl));
	tpp_strlcpy(cal->driver, info.driver, sizeof(cal->driver));
	return TPP_OK;
}

/* ==== the run ============================================================================ */

static int check_opts(const struct tpp_bench_opts *o, struct tpp_err *err)
{
	if (!(o->min_bytes >= 1 && o->min_bytes <= o->max_bytes))
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "--min-bytes must be at least 1 and at most --max-bytes");
	if (nsizes(o) > TPP_CAL_MAX_POINTS)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "%d message sizes from --min-bytes to --max-bytes; at most %d fit a table",
				   nsizes(o), TPP_CAL_MAX_POINTS);
	if (o->iters < 1 || o->warmup < 0)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "--iters must be at least 1 and --warmup at least 0");
	if (o->nshapes > TPP_CAL_MAX_GEMM)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "%d GEMM shapes; at most %d", o->nshapes, TPP_CAL_MAX_GEMM);
	return TPP_OK;
}

/* Ranks per node, this rank's index on its node and its node's index. */
static int topology(struct run *R)
{
	MPI_Comm node, leaders;
	int mn, mx;
	const char *fake = getenv("TPP_CALIBRATE_TEST_RANKS_PER_NODE");
	MPI_Comm_split_type(R->world, MPI_COMM_TYPE_SHARED, R->rank, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &R->local);
	MPI_Comm_size(node, &R->rpn);
	if (fake && atoi(fake) > 0) {
		/* Test hook: pretend nodes hold this many ranks, so one machine
		 * exercises the multi-node group shapes (tier 1, rails). */
		MPI_Comm part;
		MPI_Comm_split(node, R->local / atoi(fake), R->local, &part);
		MPI_Comm_free(&node);
		node = part;
		MPI_Comm_rank(node, &R->local);
		MPI_Comm_size(node, &R->rpn);
	}
	MPI_Comm_split(R->world, R->local == 0 ? 0 : MPI_UNDEFINED, R->rank, &leaders);
	if (leaders != MPI_COMM_NULL) {
		MPI_Comm_rank(leaders, &R->node);
		MPI_Comm_size(leaders, &R->nnodes);
		MPI_Comm_free(&leaders);
	}
	MPI_Bcast(&R->node, 1, MPI_INT, 0, node);
	MPI_Bcast(&R->nnodes, 1, MPI_INT, 0, node);
	MPI_Comm_free(&node);
	MPI_Allreduce(&R->rpn, &mn, 1, MPI_INT, MPI_MIN, R->world);
	MPI_Allreduce(&R->rpn, &mx, 1, MPI_INT, MPI_MAX, R->world);
	if (mn != mx)
		return tpp_err_set(R->err, TPP_E_USAGE, NULL, 0, 0,
				   "nodes run different numbers of ranks (%d to %d); start the same number on every node",
				   mn, mx);
	return TPP_OK;
}

int tpp_bench_run(const struct tpp_bench_opts *o, struct tpp_calibration *cal,
		  struct tpp_err *err)
{
	struct run R;
	struct shape shapes[40];
	const struct tpp_bench_shape *gshapes = o->shapes;
	int nshapes, ngshapes = o->nshapes, rc, i, p, nops = 0, maxn;
	const char *stall = getenv("TPP_CALIBRATE_TEST_STALL");
	double s;

	memset(&R, 0, sizeof(R));
	memset(cal, 0, sizeof(*cal));
	R.o = o;
	R.world = MPI_COMM_WORLD;
	R.err = err;
	R.stall_rank = stall && *stall ? atoi(stall) : -1;
	R.parent = getppid();
	MPI_Comm_rank(R.world, &R.rank);
	MPI_Comm_size(R.world, &R.size);
	tpp_err_clear(err);
	if (!gshapes)
		ngshapes = tpp_bench_default_shapes(o->quick, &gshapes);

	rc = check_opts(o, err);
	if (!rc)
		rc = topology(&R);
	if ((rc = agree(&R, rc)))
		return rc;
	rc = tpp_backend_new(o->backend, &R.world, &R.b, err);
	if ((rc = agree(&R, rc)))
		goto out;

	nshapes = make_shapes(&R, shapes, (int)TPP_ARRAY_LEN(shapes));
	for (i = 0; i < TPP_COLL__COUNT; i++)
		nops += (o->coll_mask >> i) & 1;
	/* One rank has no group to time a collective on (a "collective" of
	 * one is a local copy, and a calibration table needs a group of 2 or
	 * more): GEMMs only, said so, or nothing to do. */
	if (!nshapes && nops) {
		if (!o->gemm) {
			rc = tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
					 "nothing to measure: collectives need 2 or more ranks (run under mpiexec -np N) and --no-gemm skips the GEMMs");
			goto out;
		}
		if (R.rank == 0)
			fprintf(stderr, "tpplan: calibrate: 1 rank: no collectives measured (they need 2 or more ranks: run under mpiexec -np N); GEMMs only\n");
		nops = 0;
	}
	if (nshapes * nops > TPP_CAL_MAX_COLL) {
		rc = tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				 "%d collective tables would not fit (at most %d)",
				 nshapes * nops, TPP_CAL_MAX_COLL);
		goto out;
	}
	/* steps for the progress display; buffer and timing array sizes */
	R.buf_bytes = 0;
	for (i = 0; i < nshapes; i++)
		for (p = 0; p < TPP_COLL__COUNT; p++) {
			if (!(o->coll_mask & (1u << p)))
				continue;
			for (s = o->min_bytes; s <= o->max_bytes; s *= 2) {
				size_t cnt = coll_count((enum tpp_coll)p, shapes[i].group, s);
				size_t b = (send_elems((enum tpp_coll)p, shapes[i].group, cnt) >
					    recv_elems((enum tpp_coll)p, shapes[i].group, cnt)
					    ? send_elems((enum tpp_coll)p, shapes[i].group, cnt)
					    : recv_elems((enum tpp_coll)p, shapes[i].group, cnt)) *
					   sizeof(float);
				if (!cnt)
					continue;
				R.nsteps++;
				R.buf_bytes = b > R.buf_bytes ? b : R.buf_bytes;
			}
		}
	if (o->gemm)
		for (p = 0; p < TPP_PREC__COUNT; p++)
			if (tpp_backend_gemm_elem_bytes(R.b, (enum tpp_prec)p) &&
			    (!o->prec_mask || (o->prec_mask & (1u << p))))
				R.nsteps += ngshapes + (o->settle_s > 0 && ngshapes > 0);
	if ((rc = agree(&R, mem_check(&R, gshapes, ngshapes))))
		goto out;
	maxn = o->iters > 3 ? o->iters : 3;
	R.t = calloc((size_t)maxn, sizeof(double));
	R.tmax = calloc((size_t)maxn, sizeof(double));
	R.stage = malloc(STAGE_BYTES);
	rc = (!R.t || !R.tmax || !R.stage)
		? tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory") : TPP_OK;
	if (!rc && R.buf_bytes &&
	    !(rc = tpp_backend_alloc(R.b, R.buf_bytes, &R.send, err)))
		rc = tpp_backend_alloc(R.b, R.buf_bytes, &R.recv, err);
	if (!rc)
		rc = meta_fill(&R, cal);
	if ((rc = agree(&R, rc)))
		goto out;

	R.show = R.rank == 0 && (o->progress > 0 || (o->progress < 0 && isatty(STDERR_FILENO)));
	for (i = 0; i < nshapes && !rc; i++)
		rc = coll_shape(&R, &shapes[i], cal);
	tpp_backend_release(R.b, R.send);
	tpp_backend_release(R.b, R.recv);
	R.send = R.recv = NULL;
	if (!rc && o->gemm) {
		if (!tpp_backend_has(R.b, TPP_BK_OP_GEMM)) {
			if (R.rank == 0)
				fprintf(stderr, "tpplan: calibrate: backend %s lacks gemm; skipped\n",
					R.b->ops->name);
		} else if (!tpp_backend_has(R.b, TPP_BK_OP_FLUSH) && R.rank == 0) {
			fprintf(stderr, "tpplan: calibrate: backend %s lacks a cache flush; GEMM times may be cache-warm\n",
				R.b->ops->name);
		}
		for (p = 0; p < TPP_PREC__COUNT && !rc; p++) {
			int asked = (o->prec_mask >> p) & 1;
			if (o->prec_mask && !asked)
				continue;
			if (!tpp_backend_gemm_elem_bytes(R.b, (enum tpp_prec)p)) {
				if (asked && R.rank == 0 && tpp_backend_has(R.b, TPP_BK_OP_GEMM))
					fprintf(stderr, "tpplan: calibrate: backend %s lacks gemm in %s; skipped\n",
						R.b->ops->name, tpp_prec_names[p]);
				continue;
			}
			rc = gemm_prec(&R, (enum tpp_prec)p, gshapes, ngshapes,
				       &cal->gemm[p]);
		}
	}
out:
	wd_disarm(&R);
	progress_done(&R);
	if (R.b) {
		tpp_backend_release(R.b, R.send);
		tpp_backend_release(R.b, R.recv);
	}
	tpp_backend_free(R.b);
	free(R.t);
	free(R.tmax);
	free(R.stage);
	return rc;
}
