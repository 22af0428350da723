/*
 * cost.h - the analytic cost model: per-layer and per-micro-batch time,
 * memory per GPU and a step-time breakdown for one layout of one model on
 * one cluster.
 *
 * Data flow: (model, cluster, options, layout) --tpp_cost_eval--> struct
 * tpp_eval.  Pure functions: no I/O, no allocation, no MPI/CUDA headers, so
 * the planner can call it millions of times.  Formulas follow
 * ../shared/reference/costmodel.md (section numbers cited where used) and
 * calibration.md for collectives and GEMM efficiency.
 */
#ifndef TPP_COST_H
#define TPP_COST_H

#include "cluster.h"
#include "model.h"

enum tpp_recompute {
	TPP_RECOMPUTE_NONE,
	TPP_RECOMPUTE_SELECTIVE, /* core attention only (Korthikanti et al. 2022) */
	TPP_RECOMPUTE_FULL,      /* whole layer; only the layer input is kept */
	TPP_RECOMPUTE__COUNT
};
extern const char *const tpp_recompute_names[TPP_RECOMPUTE__COUNT];

enum tpp_sched {
	TPP_SCHED_1F1B,        /* PipeDream-flush / Megatron non-interleaved */
	TPP_SCHED_INTERLEAVED, /* Megatron interleaved 1F1B, vp > 1 chunks */
	TPP_SCHED_ZB_H1,       /* zero-bubble ZB-H1 (Qi et al. 2024): backward
				  split into input (B) and weight (W) gradients,
				  W deferred into the drain; 1F1B memory */
	TPP_SCHED__COUNT
};
extern const char *const tpp_sched_names[TPP_SCHED__COUNT];

/* One point of the search space.  Plain and copyable. */
struct tpp_layout {
	int tp, pp, dp, cp;  /* parallel degrees; tp*pp*dp*cp = GPUs */
	int mbs;             /* micro-batch size, sequences */
	int vp;              /* virtual stages (model chunks) per pipeline rank */
	int sp;              /* Megatron sequence parallelism (needs tp > 1) */
	int tp_overlap;      /* TP collectives pipelined with the GEMMs
				(Megatron --tp-comm-overlap; needs sp and
				the TP group inside the innermost tier) */
	enum tpp_recompute recompute;
	int recompute_layers; /* with recompute full: layers of each model
				 chunk recomputed, the first ones (Megatron
				 --recompute-method block
				 --recompute-num-layers N); the others keep
				 their activations.  0 = every layer
				 (uniform) */
	int zb;              /* 1: zero-bubble ZB-H1 schedule (needs vp = 1, pp > 1) */
	int zero;            /* 0: replicated optimizer; 1: sharded optimizer
				states (Megatron distributed optimizer);
				2: + gradients; 3: + parameters (FSDP).
				2 and 3 with pp > 1: tpp_zero_pipelined */
	int gbs;             /* global batch, sequences */
};

/* Schedule implied by the layout. */
enum tpp_sched tpp_layout_sched(const struct tpp_layout *l);
/* Micro-batches per pipeline per step: gbs / (dp * mbs). */
int tpp_layout_microbatches(const struct tpp_layout *l);
/*
 * ZeRO-3 / FSDP that gathers parameters and reduce-scatters gradients for
 * every micro-batch, one collective per layer: zero = 3 without pipelining.
 */
int tpp_zero_per_microbatch(const struct tpp_layout *l);
/*
 * Sharded gradients or parameters (zero 2 / 3) under pipelining, as
 * PyTorch runs them (FSDP2 under torch.distributed.pipelining, TorchTitan):
 * the parameters are gathered at a stage's first micro-batch and kept,
 * the gradients accumulate unsharded and are reduce-scattered once, after
 * the stage's last backward.  Traffic and memory (2 + 4 + 12/d bytes per
 * parameter at the peak) as ZeRO-1's, the gradient reduction not
 * overlapped.  Needs dp * cp > 1 (else nothing is sharded).
 */
int tpp_zero_pipelined(const struct tpp_layout *l);
/*
 * fp8 primary weights: under fp8 with Megatron's distributed optimizer or
 * Megatron-FSDP (zero >= 1, not tpp_zero_pipelined) the layers' weights
 * are kept in fp8 (--fp8-param-gather, set by NeMo's and Megatron-Bridge's
 * fp8 precision recipes: fp8_param_gather = True): 1 byte plus its 1-byte
 * transpose, the 2 bytes a 16-bit weight takes, and the parameter
 * all-gather moves 1 byte a layer parameter.  Without the distributed
 * optimizer Megatron cannot: the weights are 16-bit and Transformer
 * Engine caches their fp8 copy (2 bytes, tpp_cost_eval's memory).
 */
struct tpp_cost_opts;
int tpp_fp8_params(const struct tpp_cost_opts *o, const struct tpp_layout *l);
/* "tp=8,pp=8,dp=16,cp=1,mbs=1,vp=3,sp=1,recompute=selective,zero=1" */
void tpp_layout_format(const struct tpp_layout *l, char *buf, size_t size);

enum tpp_attn {
	TPP_ATTN_UNFUSED, /* Megatron fused-softmax path: s x s scores materialised */
	TPP_ATTN_FLASH,   /* FlashAttention: no s x s store, causal blocks skipped */
	TPP_ATTN__COUNT
};
extern const char *const tpp_attn_names[TPP_ATTN__COUNT];

/* How fp8 tensors get their per-tensor scale (Transformer Engine recipes). */
enum tpp_fp8_recipe {
	TPP_FP8_CURRENT, /* amax of the tensor itself: a read to find it, then
			    the cast (Float8CurrentScaling, Megatron-Bridge's
			    performance recipes "FP8-CS") */
	TPP_FP8_DELAYED, /* scale from the amax history: the cast alone
			    (DelayedScaling) */
	TPP_FP8__COUNT
};
extern const char *const tpp_fp8_recipe_names[TPP_FP8__COUNT];

struct tpp_cost_opts {
	enum tpp_prec prec;       /* compute precision (default bf16) */
	enum tpp_attn attn;
	enum tpp_fp8_recipe fp8_recipe; /* with prec fp8 (default current) */
	double mem_reserve_bytes; /* CUDA context, NCCL buffers, workspaces,
				     fragmentation: kept free on every GPU */
	double act_temp_factor;   /* activation temporaries factor (1.05, Megatron) */
	int dp_overlap;           /* overlap gradient reduction with the last
				     micro-batch's backward (Megatron
				     --overlap-grad-reduce) */
	double gpu_speed_sigma;   /* spread of per-GPU speed (fraction of the
				     median); the slowest GPU paces a step
				     (tpp_straggler_factor), 0 = ideal */
	int p2p_overlap;          /* pipeline transfers run beside compute
				     where the schedule allows it (Megatron
				     --overlap-p2p-communication, interleaved
				     schedule; zero-bubble); otherwise each
				     transfer blocks its sender (batched
				     isend/irecv + synchronize, Megatron's
				     default and its only 1F1B mode) */
	int p2p_scatter_gather;   /* without SP, each TP rank sends 1/tp of
				     a pipeline activation and the receiver
				     all-gathers it over the TP group
				     (Megatron-LM before Megatron-Core, SC21
				     sec. 4.1); 0: Megatron-Core, every TP
				     rank sends the whole tensor */
	int grads16;              /* gradients accumulated and reduced in the
				     16-bit training type, 2 bytes a
				     parameter (Megatron-Core DDP
				     grad_reduce_in_fp32 = False, as NeMo's
				     FP8 performance recipes set it); 0: fp32
				     main gradients, 4 bytes (Megatron-LM
				     forces them for bf16; Megatron-Bridge's
				     default) */
	double zero3_rate_Bps;    /* ZeRO-3 without pipelining: parameter
				     gathers and gradient reduce-scatters
				     move no faster than this per GPU (bytes
				     gathered or reduced / time), where an
				     implementation, not the network, bounds
				     them (TPP_DEEPSPEED_2021_ZERO3_BPS);
				     0: NCCL's rate (the default) */
	int zero3_module_gather;  /* ZeRO-3 without pipelining gathers each
				     submodule's parameters on its own (a
				     Linear's weight: DeepSpeed's ZeRO-3, whose
				     pre-forward hook on every submodule
				     fetches that submodule's own parameters),
				     not a transformer layer at a time (0:
				     PyTorch FSDP wrapping each layer, the
				     default): memory holds two such units,
				     the one computing and the one prefetched */
};
/*
 * DeepSpeed's ZeRO-3 of 2021 (0.3.x-0.5; SC21 Table 2's, published-runs
 * A11-A16) gathered parameters at about 21 GB/s per GPU whatever the
 * network: DeepSpeed issue #1174 (0.3.16, PyTorch 1.8, one 8 x A100 p4d
 * node, NVLink) measured a 5.1B BERT's forward at ~480 ms under ZeRO-3
 * against ~60 ms under ZeRO-2, the 10.2 GB of fp16 parameters gathered in
 * the 480 ms that the gathers bound (the compute runs beside them, the
 * prefetch ZeRO-3 does): 10.2e9 / 0.48 = 21.25e9 B/s, where NCCL's
 * all-gather over that NVLink moves ~230 GB/s.  The bound was the
 * implementation (one gather per parameter after a synchronize, a
 * list-form all_gather with a copy per rank: costmodel/README.md), so the
 * rate is taken as the same across nodes.  validate prices its legacy
 * stack's ZeRO-3 rows so (cmd_validate.c); plan takes it with
 * --zero3-rate-GBps.
 */
#define TPP_DEEPSPEED_2021_ZERO3_BPS 21.25e9
/* Defaults (what the planner recommends): bf16, flash attention, fp8
 * current scaling, 3 GiB
 * reserve, 1.05, dp_overlap and p2p_overlap on.  Megatron's own defaults
 * have both overlaps off (tpp_cost_opts_megatron). */
void tpp_cost_opts_default(struct tpp_cost_opts *o);
/* The default GPU speed spread, sigma as a fraction of the median GPU
 * (Sinha et al. SC22: ~8 % between identical GPUs at scale). */
#define TPP_GPU_SPEED_SIGMA_DEFAULT 0.02
/* Megatron-LM's defaults for what a run description leaves unsaid:
 * overlap_grad_reduce, overlap_p2p_comm and tp_comm_overlap all False
 * (megatron/core/distributed/distributed_data_parallel_config.py,
 * megatron/core/model_parallel_config.py). */
void tpp_cost_opts_megatron(struct tpp_cost_opts *o);
/* Compute-time factor of a synchronous job on `gpus` GPUs: 1 + sigma
 * E[max of gpus standard normals] (Blom's approximation), the expected
 * shortfall of the slowest GPU. */
double tpp_straggler_factor(const struct tpp_cost_opts *o, double gpus);
/* Whether pipeline transfers block their sender under options o. */
int tpp_p2p_blocking(const struct tpp_cost_opts *o, const struct tpp_layout *l);

/* Time of one step, split by cause; the fields add up to step_s. */
struct tpp_time_breakdown {
	double compute_s;   /* forward + backward GEMMs and element-wise work */
	double recompute_s; /* activation recomputation */
	double tp_comm_s;   /* exposed tensor-parallel collectives */
	double cp_comm_s;   /* exposed context-parallel ring exchange */
	double pp_p2p_s;    /* pipeline point-to-point transfers */
	double bubble_s;    /* pipeline fill and drain */
	double dp_comm_s;   /* exposed data-parallel / ZeRO collectives */
	double optimizer_s; /* optimizer step */
};
#define TPP_TIME_PARTS 8
extern const char *const tpp_time_part_names[TPP_TIME_PARTS];
/* Access the breakdown as an array (order of tpp_time_part_names). */
double tpp_time_part(const struct tpp_time_breakdown *t, int i);

/* Bytes on the most-loaded GPU. */
struct tpp_mem_breakdown {
	double weights_bytes;   /* parameters (incl. ZeRO-3 gathered buffers) */
	double grads_bytes;     /* gradient buffers */
	double optim_bytes;     /* optimizer states + fp32 master weights */
	double act_bytes;       /* activations of the in-flight micro-batches */
	double other_bytes;     /* logits, embedding activations, temporaries,
				   the layer being recomputed */
	double reserve_bytes;   /* stated reserve */
	double total_bytes;
	/* 1: the peak is the optimizer step (16-bit gradients cast to an
	 * fp32 copy while the activations are freed: optim_bytes holds the
	 * copy, act_bytes and other_bytes are 0); 0: during the pipeline */
	int at_optimizer_step;
	/* Components for tests against Korthikanti et al. (transformer layers
	 * of the first stage only, before temporaries): */
	double layer_states_bytes; /* weights+grads+optimizer of the layers */
	double layer_act_bytes;    /* activations of the layers, in flight */
};

struct tpp_eval {
	struct tpp_layout layout;
	int microbatches;
	double step_s;
	double tokens_per_s;
	double model_flops_per_step;    /* convention: tpp_cost_flops_doc */
	double hw_flops_per_step;       /* executed, incl. recompute */
	double model_tflops_per_gpu;    /* TFLOP/s (1e12) */
	double hw_tflops_per_gpu;
	double mfu, hfu;                /* fraction of datasheet peak */
	struct tpp_time_breakdown t;
	struct tpp_mem_breakdown mem;
	int fits;                       /* total <= HBM */
	/* per micro-batch, slowest stage (diagnostics) */
	double stage_mb_s;
	double layer_fwd_s, layer_bwd_s;
	int tp_tier, dp_tier, pp_tier;  /* tier index each group maps to (-1: none) */
	int cp_tier;                    /* the CP group's (its K/V ring), -1: none */
	/* A lower bound on the simulated step: pipeline fill and drain of
	 * the first / last micro-batch around each rank's work, plus what
	 * the simulator adds unchanged (optimizer, ZeRO traffic). */
	double bound_s;
	/* Whole-step gradient reduction and parameter gather of one rank
	 * (not overlapped), or ZeRO-3 traffic per micro-batch, s. */
	double dp_grad_s, dp_param_s;
	/* Exposed part of the ZeRO-1/2 parameter all-gather (s), included
	 * in t.dp_comm_s. */
	double dp_param_exposed_s;
	/* ZeRO-2: exposed gradient reduce-scatters of the micro-batches
	 * before the last (s), included in t.dp_comm_s. */
	double dp_accum_exposed_s;
	int simulated;                  /* step_s comes from the simulator */
};

/* FLOP-counting conventions, for printing. */
extern const char tpp_cost_flops_doc[];

/*
 * Evaluate one layout.  Returns TPP_OK and fills *out, or TPP_E_INFEASIBLE
 * with err saying why the layout is not valid for this model (divisibility);
 * memory overflow is not an error: out->fits says it.
 */
int tpp_cost_eval(const struct tpp_model *m, const struct tpp_cluster *c,
		  const struct tpp_cost_opts *o, const struct tpp_layout *l,
		  struct tpp_eval *out, struct tpp_err *err);

/* Why a layout is structurally invalid (first reason found). */
enum tpp_invalid {
	TPP_INV_NONE,
	TPP_INV_DEGREE,    /* a degree, micro-batch or batch below 1, zero not 0..3 */
	TPP_INV_TP,        /* tp does not divide heads / kv heads / ffn */
	TPP_INV_LAYERS,    /* more model chunks (pp*vp) than layers */
	TPP_INV_SCHEDULE,  /* interleaving: pp >= 2 and micro-batches % pp */
	TPP_INV_SP,        /* sequence parallelism needs tp >= 2 */
	TPP_INV_SEQ,       /* cp / sp do not divide the sequence */
	TPP_INV_BATCH,     /* dp*mbs does not divide the global batch */
	TPP_INV_ZERO,      /* no longer produced: zero 2/3 with pipelining
			      is priced (tpp_zero_pipelined); kept so that
			      the plan JSON's `rejected` keys stay those of
			      tpplan.plan/v1 */
	TPP_INV_PRECISION, /* the GPU has no peak for the precision */
	TPP_INV_CP_ATTN,   /* context parallelism with unfused attention */
	TPP_INV_RECOMPUTE, /* recompute_layers without recompute full, or
			      more than a model chunk's layers */
	TPP_INV_INTERLEAVE_PP2, /* interleaving on pp = 2 with blocking
				   transfers (Megatron refuses it) */
	TPP_INV__COUNT
};
extern const char *const tpp_invalid_names[TPP_INV__COUNT];

/* Whether TP degree tp (>= 1) splits the heads, KV heads and FFN evenly. */
int tpp_tp_divides(const struct tpp_model *m, int tp);
/* First structural problem of a layout, TPP_INV_NONE if valid (cheap). */
enum tpp_invalid tpp_layout_invalid(const struct tpp_model *m,
				    const struct tpp_cluster *c,
				    const struct tpp_cost_opts *o,
				    const struct tpp_layout *l);
/*
 * The checks of tpp_layout_invalid, in its order, that do not look at the
 * recompute mode (or block size) or the ZeRO stage (as long as it is in
 * 0..3), nor at the options: degrees, TP divisibility, chunks, schedule,
 * SP / TP overlap, sequence and batch divisibility.  A layout it rejects
 * is rejected by tpp_layout_invalid for the same reason whatever its
 * recompute and ZeRO fields (the planner counts those in bulk).
 */
enum tpp_invalid tpp_layout_invalid_outer(const struct tpp_model *m,
					  const struct tpp_cluster *c,
					  const struct tpp_layout *l);

/*
 * The same with a cache of per-micro-batch work, which depends only on
 * (tp, cp, mbs, sp, tp_overlap, recompute): for callers evaluating many layouts of one
 * (model, cluster, options), such as the planner.  The cache remembers the
 * model, cluster and options by address and starts over when they change;
 * their contents must not change in between.  NULL: no cache.
 */
struct tpp_cost_cache;
struct tpp_cost_cache *tpp_cost_cache_new(void); /* NULL when out of memory */
void tpp_cost_cache_free(struct tpp_cost_cache *cache); /* NULL: no-op */
int tpp_cost_eval_cached(const struct tpp_model *m, const struct tpp_cluster *c,
			 const struct tpp_cost_opts *o, const struct tpp_layout *l,
			 struct tpp_cost_cache *cache, struct tpp_eval *out,
			 struct tpp_err *err);

/* Set e->step_s and the rates that follow from it (tokens/s, TFLOP/s per
 * GPU, MFU, HFU) for e->layout; the FLOP counts must be set. */
void tpp_eval_set_step(struct tpp_eval *e, const struct tpp_model *m,
		       const struct tpp_cluster *c, const struct tpp_cost_opts *o,
		       double step_s);

/*
 * Memory of the most-loaded GPU only (much cheaper than tpp_cost_eval;
 * identical figures).  TPP_E_INFEASIBLE for an invalid layout.  cache as
 * for tpp_cost_eval_cached (NULL: none).
 */
int tpp_cost_memory(const struct tpp_model *m, const struct tpp_cluster *c,
		    const struct tpp_cost_opts *o, const struct tpp_layout *l,
		    struct tpp_cost_cache *cache, struct tpp_mem_breakdown *mem,
		    int *fits);

/* Structural validity only (cheap): divisibility of heads, layers, batch... */
int tpp_layout_check(const struct tpp_model *m, const struct tpp_cluster *c,
		     const struct tpp_layout *l, struct tpp_err *err);

/*
 * Pipeline work of one micro-batch per model chunk, for the simulator.
 * The model is cut into pp*vp chunks (chunk k runs on pipeline rank
 * k mod pp, as Megatron's interleaving does); layers are spread as evenly
 * as possible, remainders to the middle chunks (tpp_chunk_layers).
 */
#define TPP_MAX_CHUNKS 1024
struct tpp_stages {
	int pp, vp, nchunks, microbatches;
	int layers[TPP_MAX_CHUNKS];
	double f_s[TPP_MAX_CHUNKS]; /* forward incl. TP collectives, embedding on chunk 0 */
	double b_s[TPP_MAX_CHUNKS]; /* backward input gradient incl. recompute, TP
				       collectives, LM head + loss on the last chunk */
	double w_s[TPP_MAX_CHUNKS]; /* weight-gradient GEMMs */
	double p2p_s;               /* one activation / gradient transfer between chunks */
	int p2p_blocking;           /* the sender is busy for each transfer */
};
int tpp_cost_stages(const struct tpp_model *m, const struct tpp_cluster *c,
		    const struct tpp_cost_opts *o, const struct tpp_layout *l,
		    struct tpp_stages *st, struct tpp_err *err);
/* Transformer layers of chunk k of n for a model of `layers`. */
int tpp_chunk_layers(int layers, int nchunks, int k);
/* Activation peak of pipeline rank r of p under interleaved 1F1B with v
 * chunks per rank and m micro-batches, chunk j keeping x[j] per
 * micro-batch (Megatron's schedule order played out; cost.c). */
double tpp_interleaved_peak(const double *x, int p, int v, long long m, int r);
/* Layers of the largest model chunk: ceil(layers / (pp * vp)). */
int tpp_max_chunk_layers(const struct tpp_model *m, const struct tpp_layout *l);
/* Share of the layers a full-recompute layout re-runs in backward: 1, or
 * with recompute_layers > 0 the first that many of each model chunk over
 * all layers (0 for none, 1 for selective, which re-runs a part of each). */
double tpp_recompute_share(const struct tpp_model *m, const struct tpp_layout *l);
/* ZB-H1: what a micro-batch whose weight-gradient pass W is still to run
 * holds after its input-gradient pass B (each linear layer's input and
 * output gradient), as a share of what its forward keeps (cost.c). */
double tpp_zb_w_share(const struct tpp_model *m, const struct tpp_cost_opts *o,
		      const struct tpp_layout *l);
/*
 * ZB-H1's activation budget per pipeline rank, in forwards' worth: n =
 * min(p, m) micro-batches held, each a forward in flight or a deferred W
 * (its share, tpp_zb_w_share), counted at the larger of the two: n
 * max(1, share).  Where a W holds no more than a forward that is the
 * first stage's 1F1B peak, ZB-H1's (Qi et al. 2024, M_W <= M_B); it covers
 * their last stage's one forward and n - 1 deferred W's.  Every rank is
 * priced at it and the simulator's greedy order keeps within it.
 */
double tpp_zb_budget(int p, int m, double share);
/* The most weight-gradient passes the greedy ZB-H1 order lets wait on the
 * last rank within that budget (each keeps the LM head's logits
 * gradient, which the per-layer share does not count): at most m. */
int tpp_zb_last_deferred(int p, int m, double share);
/* Smallest recompute_layers (1 .. the largest chunk's layers) with which a
 * full-recompute layout fits in GPU memory; 0 when only every layer fits
 * (or no block size is smaller than a chunk), -1 when nothing fits. */
int tpp_recompute_layers_min(const struct tpp_model *m, const struct tpp_cluster *c,
			     const struct tpp_cost_opts *o, const struct tpp_layout *l,
			     struct tpp_cost_cache *cache);
/* Transformer layers on pipeline rank r (its vp chunks), O(1). */
int tpp_rank_layers(int layers, int pp, int vp, int r);

/* Collective time (s) for `bytes` (nccl-tests size convention: full buffer
 * for all-reduce, gathered size for all-gather / reduce-scatter) over a
 * group of n GPUs whose members are `stride` GPUs apart.  For send/recv,
 * one transfer between neighbours of a chain of n such members (pipeline
 * stages, a CP ring), priced on the tier of the chain's slowest hop. */
double tpp_coll_time(const struct tpp_cluster *c, enum tpp_coll coll,
		     double bytes, int n, int stride);

/* NVLS all-reduce busbw measured over g GPUs, as a factor for m GPUs:
 * [(m-1)/(m+1)] / [(g-1)/(g+1)] (calibration.md 3.3); 1 when either is
 * under 5 (a ring) or m == g.  It applies from TPP_NVLS_MIN_BYTES: below,
 * NCCL's all-reduce is Ring/LL (8 x H200: Ring/LL up to 1 MiB, NVLS from
 * 2 MiB, calibration.md 5.1 item 6), whose busbw does not fall with m. */
double tpp_nvls_scale(int m, int g);
#define TPP_NVLS_MIN_BYTES (2.0 * 1024 * 1024)

/* Forward and backward time (s) of core attention (QK^T, softmax, AV) for
 * bh (sequence, query head) pairs of sq queries, sk keys, head dimension
 * dh, whose K and V have bkv (sequence, K/V head) pairs (bh without GQA),
 * with attention kernel `attn` (cost.c documents the model and its
 * check). */
void tpp_attn_core_time(const struct tpp_gpu *g, enum tpp_prec p,
			enum tpp_attn attn, double bh, double bkv, double sq,
			double sk, double dh, double *fwd_s, double *bwd_s);

/*
 * GEMM ceiling, as a fraction of the datasheet peak, where the cluster
 * gives no measured rate: 0.72, the median of the rates NVIDIA parts
 * sustain at their power limit in ml-engineering's table (@0359db89: A100
 * PCIe 82.7 %, H200 76.3 %, B300 67.5 %, B200 64.0 % of peak), a
 * sustained figure like the measured ones it stands in for.
 */
#define TPP_GEMM_CEILING_DEFAULT 0.72
/*
 * fp8 GEMM ceiling of a GPU with a measured 16-bit rate and no fp8 one:
 * the 16-bit rate's fraction of its peak times 0.93, applied to the fp8
 * peak.  0.93 is the median, over the five parts with both precisions
 * measured the same way in ml-engineering's tables (@0359db89, as in
 * calibration.md 7.2), of the fp8 fraction over the bf16 fraction: H100
 * MAMF 70.9 / 80.3 % = 0.88, H200 MSMF 68.4 / 76.3 % = 0.90, GH200 MAMF
 * 77.6 / 83.8 % = 0.93, B200 MSMF 62.0 / 64.0 % = 0.97, GB200 MAMF
 * 72.3 / 72.9 % = 0.99.  The GPU's own 16-bit measurement says more about
 * its fp8 path (power limit, software) than other vendors' fraction does:
 * MI300X sustains 50 % of its bf16 peak, where TPP_GEMM_CEILING_DEFAULT
 * would give its fp8 72 %.
 */
#define TPP_FP8_OF_16BIT_CEILING 0.93
/* The GEMM ceiling of precision p as a fraction of its datasheet peak, at
 * the measured shape (see tpp_gemm_measured); *from16 (may be NULL): the
 * 16-bit precision whose measurement it is derived from for fp8 without
 * its own (times TPP_FP8_OF_16BIT_CEILING), else -1. */
double tpp_gemm_ceiling(const struct tpp_gpu *g, enum tpp_prec p, int *from16);
/* The measured GEMM rate (FLOP/s) standing for precision p: p's own, or
 * for fp16 / bf16 the other 16-bit one (the same tensor-core path), and
 * in *from (may be NULL) the precision it was measured in; 0 and -1 when
 * there is none. */
double tpp_gemm_measured(const struct tpp_gpu *g, enum tpp_prec p, int *from);
/* The cost model's wave / tile-quantization and K-loop efficiency of an
 * M x N x K GEMM on `sms` SMs (0: unknown, the K loop only), in (0, 1]:
 * what it divides out of a rate measured at that shape (gemm_shape). */
double tpp_gemm_shape_eff(int sms, double M, double N, double K);

/* Predicted time (s) of one GEMM C[M,N] = A[M,K] B[K,N] in precision p:
 * the measured table of the GPU when it has one (interpolated), else the
 * roofline with wave quantization over the GEMM ceiling. */
double tpp_gemm_time(const struct tpp_gpu *g, enum tpp_prec p, double M,
		     double N, double K);
/* The same on all SMs but `reserve` (kept by communication kernels running
 * beside it); without an SM count the rate drops by the Calculon share. */
double tpp_gemm_time_sms(const struct tpp_gpu *g, enum tpp_prec p, double M,
			 double N, double K, int reserve);
/* Whether the GEMM table of g (a calibration's) spans the shape: M, N and
 * K each within the smallest and largest measured along it.  1 without a
 * table (the figure then is the ceiling, not a measurement of shapes). */
int tpp_gemm_table_spans(const struct tpp_gpu *g, enum tpp_prec p, double M,
			 double N, double K);
/* The largest M*N*K the GEMM table of g measured (0 without a table). */
double tpp_gemm_table_max_work(const struct tpp_gpu *g, enum tpp_prec p);

/* Time (s) of a memory-bound pass moving `bytes` through HBM: Calculon's
 * efficiency steps (calibration.md 5.3), never less time for more bytes. */
double tpp_hbm_time(const struct tpp_gpu *g, double bytes);

/* Vocabulary padded as Megatron does: multiple of 128 * tp. */
int tpp_vocab_padded(const struct tpp_model *m, int tp);

#endif
