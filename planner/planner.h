/*
 * planner.h - the layout search: enumerate every valid layout for a GPU
 * count, reject what is invalid (divisibility) or does not fit in memory,
 * rank the rest by predicted step time, and keep enough of the losers to
 * say why they lost.
 *
 * Data flow: (model, cluster, cost options, search constraints)
 *   --tpp_plan_search--> struct tpp_plan (top layouts, rejection counts,
 *   best layout per TP and PP degree).
 */
#ifndef TPP_PLANNER_H
#define TPP_PLANNER_H

#include "cost.h"

/* Why a layout was not ranked: a structural reason of the cost model
 * (enum tpp_invalid, same values) or memory.  Index 0 is never counted. */
enum tpp_reject {
	TPP_REJ_DEGREE = TPP_INV_DEGREE,
	TPP_REJ_TP = TPP_INV_TP,
	TPP_REJ_LAYERS = TPP_INV_LAYERS,
	TPP_REJ_SCHEDULE = TPP_INV_SCHEDULE,
	TPP_REJ_SP = TPP_INV_SP,
	TPP_REJ_SEQ = TPP_INV_SEQ,
	TPP_REJ_BATCH = TPP_INV_BATCH,
	TPP_REJ_ZERO = TPP_INV_ZERO,
	TPP_REJ_PRECISION = TPP_INV_PRECISION,
	TPP_REJ_CP_ATTN = TPP_INV_CP_ATTN,
	TPP_REJ_RECOMPUTE = TPP_INV_RECOMPUTE,
	TPP_REJ_INTERLEAVE_PP2 = TPP_INV_INTERLEAVE_PP2,
	TPP_REJ_MEMORY = TPP_INV__COUNT, /* does not fit in GPU memory */
	TPP_REJ__COUNT
};
/* Text of a rejection reason (1 .. TPP_REJ__COUNT-1). */
const char *tpp_reject_name(int reason);
/* A short code for it that never changes (JSON `rejected_by_code`: the
 * text above may gain detail, the code does not): degree, tp, layers,
 * schedule, sp, seq, batch, zero_pipelined, precision, cp_attention,
 * recompute, interleave_pp2, memory. */
const char *tpp_reject_code(int reason);

#define TPP_FREE (-1) /* a constraint left for the search */
#define TPP_TOP_MAX 64
/*
 * Distinct TP or PP degrees a search can meet: each is a degree of a valid
 * layout, pp <= 1024 (model chunks) and tp a divisor of the heads (<= 2^20,
 * at most 240 divisors), so a table of this size never fills.
 */
#define TPP_DEGREE_SLOTS 1024
/* The best layout of each TP / PP degree (tpp_plan.best_tp, best_pp) is
 * simulated, and no layout of that degree is faster by more than this
 * fraction (their lower bounds prove it): 1 %, a quarter of what one
 * configuration's measurements vary by (TPP_MEASURED_SPREAD); exact, it
 * doubled the bench's wall time. */
#define TPP_DEGREE_TOL 0.01

/* Divisors of a GPU count the search loops over: no int up to INT_MAX has
 * more than 1600 (2 095 133 040, a highly composite number, has 1600). */
#define TPP_MAX_DIVISORS 1600

/* Fields set to TPP_FREE are searched; others are fixed. */
struct tpp_search {
	int gpus;
	int gbs;
	int tp, pp, dp, cp, mbs, vp, sp, recompute, zero;
	int recompute_layers; /* with recompute full: a fixed block size (0 =
				 every layer), or TPP_FREE: the fewest layers
				 per chunk that fit (tpp_recompute_layers_min);
				 simulated ZB-H1 layouts: every count that fits
				 (planner.c consider) */
	int sched;          /* enum tpp_sched, or TPP_FREE */
	int tp_overlap;     /* 0, 1 or TPP_FREE */
	int zb;             /* zero-bubble schedule allowed: 0, 1 or TPP_FREE */
	int top_k;          /* 1..TPP_TOP_MAX */
	int max_mbs;        /* largest micro-batch tried (default 16) */
	int max_cp;         /* largest CP degree tried (default 16) */
	int simulate;       /* rank finalists with the simulator (default 1) */
	double time_limit_s; /* give up (TPP_E_INFEASIBLE, saying so) when the
				search runs longer; <= 0: no limit (default 60) */
	int exclude_optimistic; /* leave out the layouts tpp_eval_optimistic
				   names (ZeRO-3 across nodes), uncounted as
				   feasible: for the best layout without them
				   (default 0) */
	int degree_tables;  /* also find the best layout of each TP and PP
			       degree (plan->best_tp, best_pp), simulated
			       when simulating (default 1); 0: the top_k
			       alone, their tables left empty -- for a
			       follow-up search that reads only its best */
	double cutoff_s;    /* > 0: only a layout whose step is at most this
			       matters (a follow-up search asking whether
			       fewer GPUs beat or tie another plan's best):
			       a feasible layout whose lower bound is above it
			       is discarded at once (counted in pruned, not
			       simulated, not in the degree tables); when every
			       one is, TPP_E_INFEASIBLE with feasible > 0
			       (default 0: none) */
};
/* All layout fields free, top_k 5, max_mbs 16, max_cp 16, simulate on,
 * time limit 60 s, degree tables on, no cutoff. */
void tpp_search_default(struct tpp_search *s, int gpus, int gbs);
/* A stated recompute=full is Megatron's full recompute of every layer
 * (recompute_layers 0) unless recompute_layers gives a block size; the
 * fewest layers that fit are searched only when recompute itself is. */
void tpp_search_stated_recompute(struct tpp_search *s);

/*
 * How far apart measurements of one configuration lie: the same layout,
 * re-published months apart, moved by up to about 4 %
 * (shared/validation/README.md, "Known noise").  Layouts predicted within
 * this of the best cannot be told apart by a prediction, nor by one
 * measurement of each.
 */
#define TPP_MEASURED_SPREAD 0.04

/* The best layout found with one TP or PP degree. */
struct tpp_degree_best {
	int degree;
	struct tpp_eval e;
};

struct tpp_plan {
	int n_top;
	struct tpp_eval top[TPP_TOP_MAX];    /* fastest first */
	unsigned long long considered;       /* layouts enumerated */
	unsigned long long feasible;         /* fitted in memory */
	unsigned long long simulated;        /* finalists played by the simulator */
	unsigned long long too_long;         /* finalists too long to play out,
						priced by the analytic model */
	unsigned long long pruned;           /* feasible, discarded by their bound
						(the top K's or s->cutoff_s):
						feasible = simulated + too_long + pruned
						when simulating (all 0 with !simulate,
						but for s->cutoff_s's) */
	unsigned long long simulated_picks;  /* further layouts simulated as the
						best of their TP / PP degree */
	unsigned long long rejected[TPP_REJ__COUNT];
	double elapsed_s;                    /* wall time of the search, s */
	int degrees_cut;                     /* the time limit came while the
						best per degree was refined: an
						entry may be more than
						TPP_DEGREE_TOL above its degree's
						best, and a degree not reached is
						left out */
	int timed_out;                       /* stopped by its time limit: no
						layouts are reported */
	/* closest-to-fitting layout rejected for memory (smallest total) */
	int have_min_mem;
	struct tpp_eval min_mem;
	/* best feasible layout for each TP / PP degree met, by increasing
	 * degree (every divisor, not only powers of two) */
	int n_best_tp, n_best_pp;
	struct tpp_degree_best best_tp[TPP_DEGREE_SLOTS], best_pp[TPP_DEGREE_SLOTS];
};
/*
 * Whether e is of a kind the validation shows the model optimistic for:
 * ZeRO-3 without pipelining (tpp_zero_per_microbatch) with its
 * data-parallel group beyond the first tier, which gathers every
 * parameter over the network for each micro-batch.  The published runs
 * of it: SC21 Table 2's DeepSpeed ZeRO-3 rows (A11-A16 of
 * shared/validation/published-runs.tsv: 175B and 530B on 384-2240 A100s)
 * took 1.3-2.8 times the step this model predicts, more so the more
 * nodes; PyTorch FSDP on 64 A100 over 8 nodes (MosaicML's MPT-70B,
 * TorchTitan's three rows, tests/data/runs/) 1.09-1.25 times, Megatron FSDP
 * on 128 GB200 over two NVL72 racks (NVIDIA's Llama 3.1 405B,
 * tests/data/runs/nemo-perf.tsv) 1.07-1.10 (costmodel/README.md "Accuracy").  The DeepSpeed rows are priced by
 * validate at that implementation's measured rate
 * (TPP_DEEPSPEED_2021_ZERO3_BPS, plan's --zero3-rate-GBps); plan prices
 * ZeRO-3 at NCCL's rates unless told, so the user is told.
 */
int tpp_eval_optimistic(const struct tpp_eval *e);
/* Whether p->top[i] (i >= 1) is predicted within TPP_MEASURED_SPREAD of
 * the best, top[0]: a tie as far as anyone can tell.  A runner-up the
 * model is optimistic for (tpp_eval_optimistic) is no tie for a best it
 * is not optimistic for: its real step is likely longer. */
int tpp_plan_ties_best(const struct tpp_plan *p, int i);

/*
 * Search: every layout is checked (divisibility), evaluated by the
 * analytic model (memory, time, and a lower bound on the simulated step);
 * the feasible ones are then taken in order of their bound and simulated
 * until the bound of the next one proves it cannot enter the top K.  The
 * reported step times are simulated (unless s->simulate is 0).
 * Returns TPP_OK with plan->n_top >= 1, or TPP_E_INFEASIBLE when
 * no layout is valid and fits (plan still carries the counts and the
 * closest miss), or TPP_E_USAGE for bad constraints (err says which).
 * `plan` is large; allocate it on the heap.
 */
int tpp_plan_search(const struct tpp_model *m, const struct tpp_cluster *c,
		    const struct tpp_cost_opts *o, const struct tpp_search *s,
		    struct tpp_plan *plan, struct tpp_err *err);

/* Index of `degree` among the n entries of `t`, or -1. */
int tpp_degree_find(const struct tpp_degree_best *t, int n, int degree);

#endif
