/*
 * sim.h - event-level simulation of one training step of one layout.
 *
 * Data flow: (model, cluster, options, layout) --tpp_cost_stages--> the
 * forward / input-gradient / weight-gradient time of every model chunk for
 * one micro-batch --tpp_sim_run--> each pipeline rank plays its schedule
 * (1F1B, Megatron interleaved 1F1B, or zero-bubble ZB-H1) op by op, an op
 * starting when its rank is free and its input has arrived from the
 * neighbouring chunk (point-to-point transfer); gradient buckets go to a
 * data-parallel stream as the last micro-batch's weight gradients finish;
 * the step ends when every rank's compute and reduction are done, plus the
 * optimizer.  Costlier than tpp_cost_eval; the planner runs it on the
 * finalists.  Allocates; no I/O.
 */
#ifndef TPP_SIM_H
#define TPP_SIM_H

#include "cost.h"

enum tpp_ev_kind {
	TPP_EV_F,    /* forward of one micro-batch through one chunk */
	TPP_EV_B,    /* backward, input gradient (and recompute) */
	TPP_EV_W,    /* backward, weight gradient (inside B unless zero-bubble) */
	TPP_EV_BW,   /* backward, input and weight gradient together */
	TPP_EV_DP,   /* data-parallel gradient reduction of one chunk's bucket */
	TPP_EV_OPT,  /* optimizer step */
	TPP_EV__COUNT
};
extern const char *const tpp_ev_names[TPP_EV__COUNT]; /* "F", "B", ... */

struct tpp_sim_event {
	int rank, chunk, mb; /* mb -1 for DP and optimizer events */
	enum tpp_ev_kind kind;
	double start_s, end_s;
};

struct tpp_sim_result {
	double step_s;        /* whole step */
	double pipeline_s;    /* end of the last compute op */
	double dp_exposed_s;  /* DP reduction that ran past the compute */
	double idle_s;        /* idle time of the busiest rank inside the pipeline */
	size_t nevents;       /* events produced (may exceed the buffer) */
};

/*
 * What a search's simulations share: ZB-H1's greedy order (tpp_sim_stages),
 * which depends only on the stages' F, B and W times, their number, the
 * micro-batches and the memory budget's share (its transfers take no
 * time), so layouts that differ in nothing else -- the ZeRO stage, the
 * gradient reduction, the transfers -- play the same order.  At most
 * TPP_SIM_CACHE_ORDERS orders within TPP_SIM_CACHE_BYTES, the least
 * recently used evicted first.
 */
struct tpp_sim_cache;
#define TPP_SIM_CACHE_ORDERS 8
#define TPP_SIM_CACHE_BYTES (32u << 20)
struct tpp_sim_cache *tpp_sim_cache_new(void);
void tpp_sim_cache_free(struct tpp_sim_cache *cache);
/* Orders found in the cache and orders played (tests). */
void tpp_sim_cache_stats(const struct tpp_sim_cache *cache, unsigned long long *hits,
			 unsigned long long *misses);

/* The simulator's input, for a pipeline described directly. */
struct tpp_sim_input {
	const struct tpp_stages *st; /* chunk times, micro-batches */
	struct tpp_sim_cache *cache; /* NULL: none */
	int zb;                      /* ZB-H1 (vp must be 1) */
	int dp_overlap;              /* buckets start as gradients finish */
	int share_nic;               /* transfers and buckets share the NICs */
	int share_passes;            /* 0: the two-pass sharing (below); n > 1:
					iterate to a fixed point, at most n
					passes (a reference for tests) */
	double dp_grad_s;            /* a rank's whole gradient reduction, s */
	double dp_tail_s;            /* exposed time added after the reduction */
	double optimizer_s;
	double zb_w_share;           /* ZB-H1's greedy order: what a pending
					weight-gradient pass holds, as a share
					of a forward in flight
					(tpp_zb_w_share); each rank keeps what
					it holds within tpp_zb_budget; 0: no
					bound (schedule tests) */
};
int tpp_sim_stages(const struct tpp_sim_input *in, struct tpp_sim_result *out,
		   struct tpp_sim_event *events, size_t cap, struct tpp_err *err);

/* Largest pipeline (chunks x micro-batches) played out: 1M cells, about
 * 70 MB of state (100 MB where transfers share the NICs with the gradient
 * reduction) and a fraction of a second; beyond it the steady state
 * dominates and the caller keeps the analytic result.  A caller that
 * stores the events sizes its buffer only below it (3 events per cell). */
#define TPP_SIM_MAX_CELLS (1 << 20)

/* A buffer for the events of layout `l` played with `microbatches`
 * micro-batches, *cap of them (3 per chunk and micro-batch, and the
 * rank -1 rows).  NULL with *cap = 0 when the pipeline exceeds
 * TPP_SIM_MAX_CELLS: tpp_sim_run then refuses it with its own message, and
 * no buffer is sized for it; NULL with *cap > 0 when out of memory. */
struct tpp_sim_event *tpp_sim_events_new(const struct tpp_layout *l, int microbatches,
					 size_t *cap);

/*
 * Simulate layout `l`.  `e` is its tpp_cost_eval result (for the DP and
 * optimizer figures).  When `events` is non-NULL up to `cap` events are
 * stored there in start order per rank; out->nevents counts them all.
 * Returns TPP_OK, TPP_E_INFEASIBLE for an invalid layout or one whose
 * pipeline (chunks x micro-batches) is too large to play out, TPP_E_SYSTEM
 * when out of memory.
 */
int tpp_sim_run(const struct tpp_model *m, const struct tpp_cluster *c,
		const struct tpp_cost_opts *o, const struct tpp_layout *l,
		const struct tpp_eval *e, struct tpp_sim_result *out,
		struct tpp_sim_event *events, size_t cap, struct tpp_err *err);
/* ... sharing what it can with earlier runs through `cache` (NULL: none);
 * the result is the same either way. */
int tpp_sim_run_cached(const struct tpp_model *m, const struct tpp_cluster *c,
		       const struct tpp_cost_opts *o, const struct tpp_layout *l,
		       const struct tpp_eval *e, struct tpp_sim_cache *cache,
		       struct tpp_sim_result *out, struct tpp_sim_event *events, size_t cap,
		       struct tpp_err *err);

/*
 * Evaluate with the simulator: tpp_cost_eval, then tpp_sim_run, then the
 * step time and the bubble / transfer / DP parts of the breakdown replaced
 * by the simulated ones (the parts still add up to step_s).
 */
int tpp_sim_eval(const struct tpp_model *m, const struct tpp_cluster *c,
		 const struct tpp_cost_opts *o, const struct tpp_layout *l,
		 struct tpp_eval *out, struct tpp_err *err);
/* ... through `cache` (tpp_sim_run_cached) */
int tpp_sim_eval_cached(const struct tpp_model *m, const struct tpp_cluster *c,
			const struct tpp_cost_opts *o, const struct tpp_layout *l,
			struct tpp_sim_cache *cache, struct tpp_eval *out, struct tpp_err *err);

#endif
