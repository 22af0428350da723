/*
 * exec.h - `tpplan exec`: run a layout's transformer layers sharded as the
 * layout says (Megatron tensor parallelism, optional sequence parallelism,
 * pipeline stages, data-parallel replicas) on the ranks of an MPI job over
 * a backend (calibrate/backend.h: cpu or cuda), check the numbers against
 * an unsharded fp64 reference on rank 0 and time each phase.
 *
 * Data flow: cli/cmd_exec.c --tpp_exec_run (every rank)--> measured phases
 * and numerics on rank 0 --tpp_exec_predict--> the cost model's figures for
 * the same phases --> table / JSON.  No MPI types here.
 *
 * The layer (GPT block, no biases, LayerNorm without affine parameters):
 *   a = x + RowPar(Attn(ColPar(LN(x))))   out = a + RowPar(GeLU(ColPar(LN(a))))
 * Weights and inputs are drawn from a seed by position (every rank builds
 * its shard, rank 0 the whole), the backward starts from a random output
 * gradient, gradients are summed over micro-batches and DP replicas.
 * Pipeline schedule: 1F1B (PipeDream-flush, as Megatron-LM's
 * non-interleaved schedule): pipeline rank r runs min(pp - r - 1, m)
 * warm-up forwards, then one forward and one backward in turn, then the
 * remaining backwards; or GPipe (all forwards, then all backwards).
 */
#ifndef TPP_EXEC_H
#define TPP_EXEC_H

#include "cost.h"

/* Pipeline schedule of `tpplan exec`. */
enum tpp_exec_sched {
	TPP_EXEC_SCHED_1F1B,   /* PipeDream-flush, Megatron non-interleaved (default) */
	TPP_EXEC_SCHED_GPIPE,  /* all forwards, then all backwards */
	TPP_EXEC_SCHED__COUNT
};
/* "1f1b", "gpipe" (the --schedule values) */
extern const char *const tpp_exec_sched_names[TPP_EXEC_SCHED__COUNT];

/* Shape of the layers that are run. */
struct tpp_exec_shape {
	int hidden, heads, ffn, seq, mbs;
};

struct tpp_exec_opts {
	const char *backend;     /* "cpu" or "cuda" */
	enum tpp_prec prec;      /* GEMM arithmetic: fp32 (cpu), bf16/fp16/tf32 (cuda) */
	struct tpp_exec_shape shape;
	int tp, pp, dp, sp;      /* world size must be tp*pp*dp */
	int layers;              /* transformer layers in all (>= pp) */
	int microbatches;        /* per DP replica per step */
	enum tpp_exec_sched sched; /* pipeline schedule */
	int iters, warmup;       /* timed and untimed steps */
	int timeout_s;           /* abort the job when a step stalls; 0 never */
	int check;               /* compare with the fp64 reference */
	int wrong_shard;         /* test hook: shard fc1 wrongly (must fail) */
	int wrong_copy;          /* test hook: the last TP rank's copy of the
				    output and input gradient is off (must fail) */
	int barrier;             /* barrier the TP group before each TP
				    collective, timed apart (TPP_PH_TP_WAIT) */
	unsigned long long seed;
	/* For the memory check's advice: the model's shape before
	 * --scale-down (heads 0: no model, no factor is suggested), the
	 * fields given outright (0: not given) and the factor applied, so
	 * that shape = tpp_exec_shape_scale(&model, scale, &over). */
	struct tpp_exec_shape model, over;
	double scale;
};
/* Defaults: cpu, fp32, tp=pp=dp=1, 2 layers, 2 micro-batches, 1F1B, 5
 * timed steps after 2 warm-up, timeout 120 s, check on, seed 1; the
 * shape hidden 64, heads 4, ffn 256, seq 32, mbs 1, no model, scale 1. */
void tpp_exec_opts_default(struct tpp_exec_opts *o);

/*
 * The shape run at --scale-down f (>= 1) of `model` (heads > 0): hidden,
 * ffn and seq divided by f and rounded (hidden to a multiple of the heads,
 * at least one per head; ffn and seq at least 1), heads and mbs kept;
 * then the nonzero fields of `over` replace theirs.
 */
void tpp_exec_shape_scale(const struct tpp_exec_shape *model, double f,
			  const struct tpp_exec_shape *over,
			  struct tpp_exec_shape *out);

/* Peak memory of one rank of a run, bytes. */
struct tpp_exec_mem {
	double host_bytes; /* malloc'd: upload staging, the check's buffers,
			      on rank 0 the fp64 reference, a fixed allowance
			      for the process (MPI, BLAS); with the cpu
			      backend also its buffers */
	double dev_bytes;  /* the backend's buffers on a device (cuda):
			      weights, gradients, activations, temporaries */
	double ref_bytes;  /* the fp64 reference's part of host_bytes (rank 0
			      with o->check; else 0) */
};
/*
 * What world rank `wrank` of a run with options o allocates at its peak,
 * counted buffer by buffer as the run allocates them (exec/mem.c).  Pure;
 * o must be options tpp_exec_run accepts (world size tp*pp*dp).
 */
void tpp_exec_mem_rank(const struct tpp_exec_opts *o, int wrank,
		       struct tpp_exec_mem *m);

enum tpp_exec_phase {
	TPP_PH_GEMM_QKV,   /* forward GEMMs, per layer and micro-batch */
	TPP_PH_GEMM_PROJ,
	TPP_PH_GEMM_FC1,
	TPP_PH_GEMM_FC2,
	TPP_PH_GEMM_BWD,   /* the backward GEMMs of the four (input + weight grads) */
	TPP_PH_ATTN_FWD,   /* score and context GEMMs + causal softmax, all local heads */
	TPP_PH_ATTN_BWD,
	TPP_PH_ELEMWISE,   /* LayerNorm, GeLU, residuals, fwd + bwd */
	TPP_PH_TP_AR,      /* TP all-reduces (2 forward + 2 backward per layer) */
	TPP_PH_TP_AG,      /* sequence parallel: TP all-gathers */
	TPP_PH_TP_RS,      /* sequence parallel: TP reduce-scatters */
	TPP_PH_TP_WAIT,    /* --barrier: the TP group's barriers before them */
	TPP_PH_PP_P2P,     /* stage-to-stage sends and receives */
	TPP_PH_DP_AR,      /* DP gradient all-reduce */
	TPP_PH_LAYER_FWD,  /* whole layer forward */
	TPP_PH_LAYER_BWD,  /* whole layer backward */
	TPP_PH_STEP,       /* whole step */
	TPP_PH__COUNT
};
extern const char *const tpp_exec_phase_names[TPP_PH__COUNT];

struct tpp_exec_result {
	/* per step, on the busiest rank (max over ranks of the median over
	 * the timed steps), seconds; count = occurrences per step there */
	double measured_s[TPP_PH__COUNT];
	int count[TPP_PH__COUNT];
	/* numerics (rank 0): max |got - ref| / max |ref| over the tensors */
	int checked;
	double err_out, err_dx, err_dw, tol;
	char worst[128];         /* the tensor with the largest error */
	int ranks;
};

/*
 * Run on every rank of MPI_COMM_WORLD (MPI already initialised).  Returns
 * the same status on every rank: TPP_OK, TPP_E_INFEASIBLE (the numerics
 * check failed; result filled), TPP_E_USAGE (bad options or a layout that
 * does not divide the shape), TPP_E_INPUT (the run does not fit in memory:
 * refused before its buffers are allocated, see below), TPP_E_SYSTEM
 * (backend / MPI).  The result is complete on rank 0 only.
 *
 * Memory check: the ranks of each node together may allocate (host bytes
 * of tpp_exec_mem_rank) at most 90% of the node's physical memory
 * (sysconf), each rank on a device (dev bytes) at most 90% of its free
 * device memory (tpp_backend_mem_info); the rest is left to the system,
 * NCCL and cuBLAS.  Otherwise the message gives the figures and, with a
 * model, the smallest power-of-two --scale-down that fits.
 *
 * Test hooks: TPP_EXEC_TEST_DIE=R makes world rank R _exit(9) in the
 * middle of the first timed step; TPP_EXEC_TEST_MEM_BYTES=N makes the
 * memory check take N bytes as every node's physical memory and every
 * device's free memory.
 */
int tpp_exec_run(const struct tpp_exec_opts *o, struct tpp_exec_result *res,
		 struct tpp_err *err);

/* Relative tolerance of the check for GEMM arithmetic `prec`. */
double tpp_exec_tolerance(enum tpp_prec prec);
/* With the numerics check on, the smallest hidden size run (and seq >= 2):
 * below it the check cannot judge the result (exec/run.c check_opts). */
#define TPP_EXEC_CHECK_MIN_HIDDEN 8

/*
 * The cost model's time for each phase per step on the busiest rank, for
 * the same shape, layout and counts (predicted[i] < 0: the model has no
 * figure).  `elem_bytes`: bytes per activation element on the wire.
 * step_s comes from tpp_cost_eval of the executed model (optimizer
 * excluded); *note gets a line when a figure is missing.
 */
void tpp_exec_predict(const struct tpp_exec_opts *o, const struct tpp_cluster *c,
		      const struct tpp_exec_result *r,
		      double predicted_s[TPP_PH__COUNT], char *note,
		      size_t note_size);

#endif
