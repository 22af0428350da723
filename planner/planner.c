/*
 * planner.c - exhaustive layout search (see planner.h).
 *
 * Order of checks follows ../shared/DESIGN.md: divisibility first (cheap,
 * counted by reason), then memory, then time.  Every valid layout is
 * evaluated by the analytic model (about a million per second); the
 * feasible ones are then simulated in order of their lower bound until the
 * bound proves the rest cannot enter the top K (two-tier search).
 */
#include "planner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#include <time.h>

const char *tpp_reject_name(int reason)
{
	TPP_ASSERT(reason > TPP_INV_NONE && reason < TPP_REJ__COUNT);
	return reason == TPP_REJ_MEMORY ? "does not fit in GPU memory"
					 : tpp_invalid_names[reason];
}

const char *tpp_reject_code(int reason)
{
	static const char *const codes[TPP_REJ__COUNT] = {
		[TPP_REJ_DEGREE] = "degree",
		[TPP_REJ_TP] = "tp",
		[TPP_REJ_LAYERS] = "layers",
		[TPP_REJ_SCHEDULE] = "schedule",
		[TPP_REJ_SP] = "sp",
		[TPP_REJ_SEQ] = "seq",
		[TPP_REJ_BATCH] = "batch",
		[TPP_REJ_ZERO] = "zero_pipelined",
		[TPP_REJ_PRECISION] = "precision",
		[TPP_REJ_CP_ATTN] = "cp_attention",
		[TPP_REJ_RECOMPUTE] = "recompute",
		[TPP_REJ_INTERLEAVE_PP2] = "interleave_pp2",
		[TPP_REJ_MEMORY] = "memory",
	};
	_Static_assert(TPP_REJ__COUNT == 14, "a code for every rejection reason");
	TPP_ASSERT(reason > TPP_INV_NONE && reason < TPP_REJ__COUNT && codes[reason]);
	return codes[reason];
}

void tpp_search_default(struct tpp_search *s, int gpus, int gbs)
{
	s->gpus = gpus;
	s->gbs = gbs;
	s->tp = s->pp = s->dp = s->cp = s->mbs = s->vp = TPP_FREE;
	s->sp = s->recompute = s->zero = TPP_FREE;
	s->recompute_layers = TPP_FREE;
	s->top_k = 5;
	s->max_mbs = 16;
	s->max_cp = 16;
	s->time_limit_s = 60;
	s->sched = TPP_FREE;
	s->tp_overlap = TPP_FREE;
	s->zb = TPP_FREE;
	s->simulate = 1;
	s->exclude_optimistic = 0;
	s->degree_tables = 1;
	s->cutoff_s = 0;
}

void tpp_search_stated_recompute(struct tpp_search *s)
{
	if (s->recompute == TPP_RECOMPUTE_FULL && s->recompute_layers == TPP_FREE)
		s->recompute_layers = 0;
}

int tpp_eval_optimistic(const struct tpp_eval *e)
{
	return tpp_zero_per_microbatch(&e->layout) && e->dp_tier >= 1;
}

int tpp_plan_ties_best(const struct tpp_plan *p, int i)
{
	return i >= 1 && i < p->n_top &&
	       p->top[i].step_s <= p->top[0].step_s * (1 + TPP_MEASURED_SPREAD) &&
	       (!tpp_eval_optimistic(&p->top[i]) || tpp_eval_optimistic(&p->top[0]));
}

int tpp_degree_find(const struct tpp_degree_best *t, int n, int degree)
{
	int i;
	for (i = 0; i < n; i++)
		if (t[i].degree == degree)
			return i;
	return -1;
}

static void keep_top(struct tpp_plan *p, int k, const struct tpp_eval *e)
{
	int i = p->n_top;
	if (i == k && e->step_s >= p->top[k - 1].step_s)
		return;
	if (i < k)
		p->n_top++;
	else
		i = k - 1;
	while (i > 0 && p->top[i - 1].step_s > e->step_s) {
		p->top[i] = p->top[i - 1];
		i--;
	}
	p->top[i] = *e;
}

/* Keep e as the best of its degree in table t (n entries) if it is. */
static void keep_best(struct tpp_degree_best *t, int *n, int degree,
		      const struct tpp_eval *e)
{
	int i = tpp_degree_find(t, *n, degree);
	if (i < 0) {
		TPP_ASSERT(*n < TPP_DEGREE_SLOTS);
		i = (*n)++;
		t[i].degree = degree;
		t[i].e = *e;
	} else if (e->step_s < t[i].e.step_s) {
		t[i].e = *e;
	}
}

static int by_degree(const void *a, const void *b)
{
	int x = ((const struct tpp_degree_best *)a)->degree;
	int y = ((const struct tpp_degree_best *)b)->degree;
	return (x > y) - (x < y);
}

static int in(int fixed, int v)
{
	return fixed == TPP_FREE || fixed == v;
}

/* A feasible layout waiting for the simulator. */
struct cand {
	struct tpp_layout l;
	double bound_s, analytic_s;
};

/* The analytically best layout met with one TP or PP degree. */
struct degree_pick {
	int degree;
	struct tpp_layout l;
	double step_s;
};

struct ctx {
	const struct tpp_model *m;
	const struct tpp_cluster *c;
	const struct tpp_cost_opts *o;
	const struct tpp_search *s;
	struct tpp_plan *plan;
	struct cand *cands;
	size_t n, cap;
	/* the per-degree refinement's simulations (simulate_degrees), so
	 * the PP pass reuses the TP pass's: cand index -> entry of sim_e */
	int *sim_at;
	struct tpp_eval *sim_e;
	size_t n_sim_e, cap_sim_e;
	struct tpp_cost_cache *cache;
	struct tpp_sim_cache *simcache; /* ZB-H1 orders (sim.h) */
	struct tpp_err *err;
	int oom;
	int timed_out;     /* the search ran past s->time_limit_s */
	unsigned long long next_tick; /* plan->considered at the next clock check */
	/* the simulated ZeRO-1 finalists under pipelining, for their ZeRO-2
	 * twins (tpp_plan_search) */
	struct fin1 {
		struct tpp_layout l;
		double step_s;
	} *fin1;
	size_t n_fin1, cap_fin1;
	double t0;         /* monotonic start time */
	/* analytic best per TP / PP degree, simulated at the end */
	int n_tp, n_pp;
	struct degree_pick pick_tp[TPP_DEGREE_SLOTS], pick_pp[TPP_DEGREE_SLOTS];
};

static void note_degree(struct degree_pick *t, int *n, int degree,
			const struct tpp_eval *e)
{
	int i;
	for (i = 0; i < *n; i++)
		if (t[i].degree == degree)
			break;
	if (i == *n) {
		TPP_ASSERT(*n < TPP_DEGREE_SLOTS);
		(*n)++;
		t[i].degree = degree;
	} else if (e->step_s >= t[i].step_s) {
		return;
	}
	t[i].l = e->layout;
	t[i].step_s = e->step_s;
}

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Whether the search has run past its time limit (sets x->timed_out). */
static int past_limit(struct ctx *x)
{
	if (!x->timed_out && x->s->time_limit_s > 0 &&
	    mono_now() - x->t0 > x->s->time_limit_s)
		x->timed_out = 1;
	return x->timed_out;
}

static void consider_fitted(struct ctx *x, const struct tpp_layout *l);

/* Every 2^20 layouts counted, whether the search is past its time
 * limit (a clock read per layout would cost more than pricing it). */
static int tick(struct ctx *x)
{
	if (x->plan->considered < x->next_tick)
		return x->timed_out;
	x->next_tick = x->plan->considered + 0x100000;
	return past_limit(x);
}

/* Check, evaluate and file one layout. */
static void consider(struct ctx *x, const struct tpp_layout *lin)
{
	struct tpp_plan *plan = x->plan;
	enum tpp_invalid why;
	struct tpp_layout lb;
	const struct tpp_layout *l = lin;

	if (x->timed_out)
		return;
	if (x->s->sched != TPP_FREE && (int)tpp_layout_sched(l) != x->s->sched)
		return; /* another schedule than the one asked for */
	plan->considered++;
	if (tick(x))
		return;
	why = tpp_layout_invalid(x->m, x->c, x->o, l);
	if (why != TPP_INV_NONE) {
		plan->rejected[why]++;
		return;
	}
	/*
	 * Full recompute with the block size left to the search: recompute
	 * the fewest layers per chunk that fit, since step time only grows
	 * with each layer recomputed (Megatron --recompute-method block).
	 * So it does analytically, and in every simulated schedule but
	 * ZB-H1: its order is the best of three, one a greedy list schedule
	 * (costmodel/sim.c), and a longer backward can give the greedy pass
	 * a better order, so a few more layers recomputed -- or some where
	 * the layout fits without -- can simulate up to ~5 % faster.  A
	 * simulated ZB-H1 layout therefore has every block size that fits
	 * considered (their lower bounds rise with each layer, so the
	 * two-tier search simulates only those that can win).
	 */
	if (l->recompute == TPP_RECOMPUTE_FULL && x->s->recompute_layers == TPP_FREE) {
		/* when the layout fits without recompute, that one (also
		 * enumerated) beats every block size: no need to look */
		struct tpp_mem_breakdown mem;
		int fits_none = 0, n, k, whole;
		lb = *l;
		lb.recompute = TPP_RECOMPUTE_NONE;
		if (tpp_layout_invalid(x->m, x->c, x->o, &lb) == TPP_INV_NONE)
			(void)tpp_cost_memory(x->m, x->c, x->o, &lb, x->cache, &mem,
					      &fits_none);
		if (x->s->simulate && l->zb) {
			n = fits_none ? 1 : tpp_recompute_layers_min(x->m, x->c, x->o, l, x->cache);
			whole = tpp_max_chunk_layers(x->m, l);
			lb = *l;
			/* n < 0: not even every layer fits (rejected below,
			 * as every layer); n = 0: only every layer fits */
			for (k = n; k > 0 && k < whole && !x->timed_out; k++) {
				lb.recompute_layers = k;
				if (k > n)
					plan->considered++;
				consider_fitted(x, &lb);
				tick(x);
			}
			/* every layer (recompute_layers 0), as enumerated */
			if (n > 0 && n < whole)
				plan->considered++;
			consider_fitted(x, l);
			return;
		}
		if (!fits_none &&
		    (n = tpp_recompute_layers_min(x->m, x->c, x->o, l, x->cache)) > 0) {
			lb = *l;
			lb.recompute_layers = n;
			l = &lb;
		}
	}
	consider_fitted(x, l);
}

/* Memory-check, evaluate and file a valid layout. */
static void consider_fitted(struct ctx *x, const struct tpp_layout *l)
{
	struct tpp_plan *plan = x->plan;
	struct tpp_eval e;
	int rc;

	{
		/* memory first: most invalid-by-size layouts stop here */
		struct tpp_mem_breakdown mem;
		int fits;
		rc = tpp_cost_memory(x->m, x->c, x->o, l, x->cache, &mem, &fits);
		TPP_ASSERT(rc == TPP_OK);
		if (!fits) {
			plan->rejected[TPP_REJ_MEMORY]++;
			if (!plan->have_min_mem ||
			    mem.total_bytes < plan->min_mem.mem.total_bytes) {
				rc = tpp_cost_eval_cached(x->m, x->c, x->o, l, x->cache,
							  &plan->min_mem, NULL);
				TPP_ASSERT(rc == TPP_OK);
				plan->have_min_mem = 1;
			}
			return;
		}
	}
	rc = tpp_cost_eval_cached(x->m, x->c, x->o, l, x->cache, &e, NULL);
	TPP_ASSERT(rc == TPP_OK && e.fits); /* valid layouts always evaluate */
	if (x->s->exclude_optimistic && tpp_eval_optimistic(&e))
		return;
	plan->feasible++;
	/* its step, at least the bound, would be above the cutoff (the
	 * simulate loop's margin: the bound and the step add the same times
	 * in different orders) */
	if (x->s->cutoff_s > 0 && e.bound_s * (1 - 1e-12) > x->s->cutoff_s) {
		plan->pruned++;
		return;
	}
	if (x->s->degree_tables) {
		note_degree(x->pick_tp, &x->n_tp, l->tp, &e);
		note_degree(x->pick_pp, &x->n_pp, l->pp, &e);
	}
	if (!x->s->simulate) {
		keep_top(plan, x->s->top_k, &e);
		return;
	}
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 4096;
		struct cand *nc = realloc(x->cands, cap * sizeof(*nc));
		if (!nc) {
			x->oom = 1;
			return;
		}
		x->cands = nc;
		x->cap = cap;
	}
	x->cands[x->n].l = *l;
	x->cands[x->n].bound_s = e.bound_s;
	x->cands[x->n].analytic_s = e.step_s;
	x->n++;
}

/* Candidates by lower bound, then analytic step; exact ties of both in
 * one fixed order of the layout's fields (smaller tp first, then pp, cp,
 * dp, mbs, vp, ...), so that the simulation order -- and with it the
 * order of layouts whose simulated steps tie exactly (keep_top keeps the
 * first) -- does not depend on the C library's qsort. */
static int by_fields(const struct tpp_layout *p, const struct tpp_layout *q)
{
	const int u[] = {p->tp, p->pp, p->cp, p->dp, p->mbs, p->vp, p->sp, (int)p->recompute,
			 p->recompute_layers, p->zb, p->zero, p->tp_overlap};
	const int v[] = {q->tp, q->pp, q->cp, q->dp, q->mbs, q->vp, q->sp, (int)q->recompute,
			 q->recompute_layers, q->zb, q->zero, q->tp_overlap};
	size_t i;
	for (i = 0; i < TPP_ARRAY_LEN(u); i++)
		if (u[i] != v[i])
			return u[i] < v[i] ? -1 : 1;
	return 0;
}

/* By bound, then analytic step, then fields (the bounds decide nearly
 * every comparison of the sort: the fields are read only on a tie). */
static int by_bound(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->bound_s != y->bound_s)
		return x->bound_s < y->bound_s ? -1 : 1;
	if (x->analytic_s != y->analytic_s)
		return x->analytic_s < y->analytic_s ? -1 : 1;
	return by_fields(&x->l, &y->l);
}

/* The inner dimensions: micro-batch, chunks, schedule, SP, recompute, ZeRO. */
static void enumerate_inner(struct ctx *x, struct tpp_layout *l)
{
	const struct tpp_search *s = x->s;
	int max_mbs = s->mbs == TPP_FREE ? s->max_mbs : s->mbs;
	int mbs, vp, zb, sp, rc, zero;
	/*
	 * A TP degree that does not divide the heads (or KV heads, or FFN)
	 * rejects every layout below for that reason, whatever the inner
	 * fields (tpp_layout_invalid checks it right after the degrees):
	 * count them without pricing each (a wide model on many GPUs has
	 * hundreds of millions of them).
	 */
	int bulk_tp = !tpp_tp_divides(x->m, l->tp);
	enum tpp_invalid outer;

	for (mbs = 1; mbs <= max_mbs && mbs <= s->gbs && !x->timed_out; mbs++) {
		if (!in(s->mbs, mbs))
			continue;
		for (vp = 1; vp <= x->m->layers; vp++) {
			if (!in(s->vp, vp))
				continue;
			/* interleaving needs pp >= 2 and a layer per chunk; other
			 * vp are not layouts at all, so they are not counted */
			if (vp > 1 && (l->pp < 2 || (long long)l->pp * vp > x->m->layers ||
				       (long long)l->pp * vp > TPP_MAX_CHUNKS) &&
			    s->vp == TPP_FREE)
				break;
			for (zb = 0; zb <= 1; zb++) {
				/* ZB-H1 is a choice only for plain pipelines */
				if (!in(s->zb, zb) || (zb && (vp > 1 || l->pp < 2)))
					continue;
				for (sp = 0; sp <= 2; sp++) {
					/* sp 2: SP with TP communication overlap */
					int spf = sp ? 1 : 0, ov = sp == 2;
					if (!in(s->sp, spf) || !in(s->tp_overlap, ov) ||
					    (spf && l->tp == 1 && s->sp == TPP_FREE))
						continue;
					/* what rejects a layout whatever its recompute
					 * and ZeRO fields (tpp_layout_invalid_outer) is
					 * checked once for all of them; consider()
					 * leaves these fields as they are */
					l->mbs = mbs;
					l->vp = vp;
					l->zb = zb;
					l->sp = spf;
					l->tp_overlap = ov;
					l->zero = 0;
					outer = bulk_tp ? TPP_INV_TP
							: tpp_layout_invalid_outer(x->m, x->c, l);
					for (rc = 0; rc < TPP_RECOMPUTE__COUNT; rc++) {
						if (!in(s->recompute, rc))
							continue;
						/* a block size (0: every layer)
						 * implies full recompute */
						if (s->recompute_layers != TPP_FREE && rc != TPP_RECOMPUTE_FULL &&
						    s->recompute == TPP_FREE)
							continue;
						for (zero = 0; zero <= 3; zero++) {
							if (!in(s->zero, zero))
								continue;
							l->zero = zero;
							/* nothing to shard with one data-parallel
							 * rank -- but where the distributed
							 * optimizer (ZeRO-1) keeps fp8 primary
							 * weights (tpp_fp8_params), half the
							 * weight memory of ZeRO-0's 16-bit ones,
							 * it can fit a faster layout (13B on 8
							 * L40S: pp 8 with one layer recomputed,
							 * 2.8 % faster than the best without) */
							if (zero > 0 && l->dp * l->cp == 1 && s->zero == TPP_FREE &&
							    (zero > 1 || !tpp_fp8_params(x->o, l)))
								continue;
							/* ZeRO-2/3 under pipelining
							 * (tpp_zero_pipelined, FSDP2 that
							 * keeps parameters gathered between
							 * micro-batches): ZeRO-1's traffic and
							 * memory with the gradient reduction
							 * after the last backward, not beside
							 * it -- slower analytically, but where
							 * DP buckets and pipeline transfers
							 * share a NIC the simulated step can be
							 * faster (no contention), so stage 2 is
							 * searched when simulating; stage 3 is
							 * priced exactly as 2 there, a tie,
							 * searched only when asked */
							if (zero >= 2 && l->pp > 1 && s->zero == TPP_FREE &&
							    (zero == 3 || !s->simulate))
								continue;
							l->recompute = (enum tpp_recompute)rc;
							/* a block size with another mode is
							 * kept, to be rejected as invalid */
							l->recompute_layers = s->recompute_layers != TPP_FREE
									      ? s->recompute_layers : 0;
							if (outer == TPP_INV_NONE) {
								consider(x, l);
							} else if (!x->timed_out &&
								   (s->sched == TPP_FREE ||
								    (int)tpp_layout_sched(l) == s->sched)) {
								x->plan->considered++;
								x->plan->rejected[outer]++;
								tick(x);
							}
						}
					}
				}
			}
		}
	}
}

/* Simulate `l`; returns 0 and fills *e (the analytic result when the
 * pipeline is too large to play out), or -1 with x->err set.  A finalist
 * is counted in plan->simulated or plan->too_long, a per-degree pick
 * (pick != 0) in plan->simulated_picks. */
static int simulate(struct ctx *x, const struct tpp_layout *l, int pick,
		    struct tpp_eval *e)
{
	int rc = tpp_sim_eval_cached(x->m, x->c, x->o, l, x->simcache, e, x->err);
	if (rc == TPP_E_INFEASIBLE) {
		rc = tpp_cost_eval_cached(x->m, x->c, x->o, l, x->cache, e, x->err);
		TPP_ASSERT(rc == TPP_OK);
		if (!pick)
			x->plan->too_long++;
		return 0;
	}
	if (rc)
		return -1;
	if (pick)
		x->plan->simulated_picks++;
	else
		x->plan->simulated++;
	return 0;
}

/* Layouts equal but for their ZeRO stage. */
static int same_but_zero(const struct tpp_layout *a, const struct tpp_layout *b)
{
	return a->tp == b->tp && a->pp == b->pp && a->dp == b->dp && a->cp == b->cp &&
	       a->mbs == b->mbs && a->vp == b->vp && a->sp == b->sp && a->gbs == b->gbs &&
	       a->recompute == b->recompute && a->recompute_layers == b->recompute_layers &&
	       a->zb == b->zb && a->tp_overlap == b->tp_overlap;
}

/* Remember a simulated ZeRO-1 finalist under pipelining; 1 when out of
 * memory. */
static int note_fin1(struct ctx *x, const struct tpp_eval *e)
{
	if (x->n_fin1 == x->cap_fin1) {
		size_t cap = x->cap_fin1 ? 2 * x->cap_fin1 : 64;
		struct fin1 *nf = realloc(x->fin1, cap * sizeof(*nf));
		if (!nf)
			return 1;
		x->fin1 = nf;
		x->cap_fin1 = cap;
	}
	x->fin1[x->n_fin1].l = e->layout;
	x->fin1[x->n_fin1++].step_s = e->step_s;
	return 0;
}

/* The simulated step of l's ZeRO-1 twin among the finalists, or -1. */
static double twin_step(const struct ctx *x, const struct tpp_layout *l)
{
	size_t i;
	for (i = x->n_fin1; i-- > 0;)
		if (same_but_zero(&x->fin1[i].l, l))
			return x->fin1[i].step_s;
	return -1;
}

/*
 * The best simulated layout of each degree into table t (tp: which = 0,
 * pp: 1), by the pruning of the top K with a tolerance: the candidates
 * from `from` on (the earlier ones were simulated as finalists and are in
 * t already) in order of their lower bound, each degree's until the next
 * bound is within TPP_DEGREE_TOL of the best step of that degree found so
 * far, so no layout of the degree is faster than its entry by more.
 * 0; 1 past the time limit; -1 on a simulator error (x->err).
 */
static int simulate_degrees(struct ctx *x, const struct degree_pick *pick, int n,
			    size_t from, int which, struct tpp_degree_best *t, int *nt)
{
	int i;
	for (i = 0; i < n; i++) {
		int d = pick[i].degree, j = tpp_degree_find(t, *nt, d);
		double cur = j < 0 ? HUGE_VAL : t[j].e.step_s;
		size_t k;
		for (k = from; k < x->n; k++) {
			const struct cand *c = &x->cands[k];
			struct tpp_eval e;
			if ((which ? c->l.pp : c->l.tp) != d)
				continue;
			if (c->bound_s * (1 + TPP_DEGREE_TOL) >= cur)
				break;
			if (x->sim_at[k] >= 0) {
				e = x->sim_e[x->sim_at[k]];
			} else {
				if (past_limit(x))
					return 1;
				if (x->n_sim_e == x->cap_sim_e) {
					size_t cap = x->cap_sim_e ? 2 * x->cap_sim_e : 64;
					struct tpp_eval *ne = realloc(x->sim_e, cap * sizeof(*ne));
					if (!ne) {
						tpp_err_set(x->err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
						return -1;
					}
					x->sim_e = ne;
					x->cap_sim_e = cap;
				}
				/* a candidate from `from` on was no finalist:
				 * played here first */
				if (simulate(x, &c->l, 1, &e))
					return -1;
				x->sim_e[x->n_sim_e] = e;
				x->sim_at[k] = (int)x->n_sim_e++;
			}
			keep_best(t, nt, d, &e);
			if (e.step_s < cur)
				cur = e.step_s;
		}
	}
	return 0;
}

/* What a search holds, freed on every way out of it. */
static void ctx_free(struct ctx *x)
{
	free(x->cands);
	free(x->sim_at);
	free(x->sim_e);
	free(x->fin1);
	tpp_cost_cache_free(x->cache);
	tpp_sim_cache_free(x->simcache);
}

/*
 * Price the analytic best of each degree into table t by the analytic
 * model (the search ranks by it: --analytic).
 */
static void price_picks(struct ctx *x, const struct degree_pick *pick, int n,
			struct tpp_degree_best *t, int *nt)
{
	int i;
	for (i = 0; i < n; i++) {
		struct tpp_eval e;
		if (tpp_cost_eval(x->m, x->c, x->o, &pick[i].l, &e, NULL))
			continue;
		keep_best(t, nt, pick[i].degree, &e);
	}
}

int tpp_plan_search(const struct tpp_model *m, const struct tpp_cluster *c,
		    const struct tpp_cost_opts *o, const struct tpp_search *s,
		    struct tpp_plan *plan, struct tpp_err *err)
{
	struct ctx x;
	struct tpp_layout l;
	int tp, cp, pp, i, pr, rc = TPP_OK;
	int div[TPP_MAX_DIVISORS], ndiv = 0, a, b, d;
	size_t k, k2;

	memset(plan, 0, sizeof(*plan));
	if (s->gpus < 1)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "the GPU count must be >= 1 (got %d)", s->gpus);
	if (s->gbs < 1)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "the global batch must be >= 1 (got %d)", s->gbs);
	if (s->top_k < 1 || s->top_k > TPP_TOP_MAX)
		return tpp_err_set(err, TPP_E_USAGE, NULL, 0, 0,
				   "--top must be in 1..%d", TPP_TOP_MAX);

	memset(&x, 0, sizeof(x));
	x.m = m;
	x.c = c;
	x.o = o;
	x.s = s;
	x.plan = plan;
	x.err = err;
	x.cache = tpp_cost_cache_new();
	x.simcache = tpp_sim_cache_new();
	if (!x.cache || !x.simcache)
		goto oom;
	x.t0 = mono_now();
	memset(&l, 0, sizeof(l));
	l.gbs = s->gbs;
	/* tp, cp and pp run over the divisors of the GPU count (increasing),
	 * not over every number up to it: 2^24 GPUs have 25 */
	for (d = 1; (long long)d * d <= s->gpus; d++)
		if (s->gpus % d == 0)
			div[ndiv++] = d;
	for (i = ndiv - 1; i >= 0; i--)
		if ((long long)div[i] * div[i] != s->gpus)
			div[ndiv++] = s->gpus / div[i];
	for (a = 0; a < ndiv && !past_limit(&x); a++) {
		tp = div[a];
		if (!in(s->tp, tp))
			continue;
		for (b = 0; b < ndiv && div[b] <= s->gpus / tp && !x.timed_out; b++) {
			int max_cp = s->cp == TPP_FREE ? s->max_cp : s->cp;
			cp = div[b];
			if ((s->gpus / tp) % cp || !in(s->cp, cp) || cp > max_cp)
				continue;
			for (d = 0; d < ndiv && div[d] <= s->gpus / (tp * cp) && !x.timed_out; d++) {
				pp = div[d];
				if ((s->gpus / (tp * cp)) % pp || !in(s->pp, pp))
					continue;
				l.tp = tp;
				l.cp = cp;
				l.pp = pp;
				l.dp = s->gpus / (tp * cp * pp);
				if (!in(s->dp, l.dp))
					continue;
				enumerate_inner(&x, &l);
			}
		}
	}
	if (x.oom)
		goto oom;
	if (x.timed_out)
		goto timeout;

	if (s->simulate) {
		/*
		 * Two tiers: take the feasible layouts in order of their lower
		 * bound and simulate them; once the next bound is no better than
		 * the K-th simulated step, nothing later can enter the top K.
		 */
		if (x.n)
			qsort(x.cands, x.n, sizeof(*x.cands), by_bound);
		for (k = 0; k < x.n; k++) {
			struct tpp_eval e;
			/* (1 - 1e-12): the bound and the simulation add the same
			 * times in different orders; keep exact ties */
			if (plan->n_top == s->top_k &&
			    x.cands[k].bound_s * (1 - 1e-12) >= plan->top[s->top_k - 1].step_s) {
				plan->pruned += x.n - k;
				break;
			}
			if (past_limit(&x))
				goto timeout;
			if (simulate(&x, &x.cands[k].l, 0, &e))
				goto fail;
			/*
			 * ZeRO-2 under pipelining, which the search adds where
			 * zero is free: listed only where it beats the same
			 * layout with ZeRO-1 -- the same memory, a lower bound
			 * lower by the whole reduction (so that twin was played
			 * first, and is listed if it qualifies) -- not as a
			 * near-copy a row below it, of another software stack
			 * (FSDP2).  A twin not met (none is) leaves it listed.
			 */
			if (s->zero == TPP_FREE && tpp_zero_pipelined(&e.layout)) {
				double tw = twin_step(&x, &e.layout);
				if (tw >= 0 && tw <= e.step_s)
					continue;
			} else if (s->zero == TPP_FREE && e.layout.zero == 1 && e.layout.pp > 1 &&
				   (long long)e.layout.dp * e.layout.cp > 1 && note_fin1(&x, &e)) {
				goto oom;
			}
			keep_top(plan, s->top_k, &e);
			/* every finalist counts for its degrees' best */
			if (s->degree_tables) {
				keep_best(plan->best_tp, &plan->n_best_tp, e.layout.tp, &e);
				keep_best(plan->best_pp, &plan->n_best_pp, e.layout.pp, &e);
			}
		}
		/* the best per TP and PP degree, simulated: the rest of each
		 * degree's candidates, pruned by its best so far */
		x.sim_at = malloc(sizeof(int) * (x.n ? x.n : 1));
		if (!x.sim_at)
			goto oom;
		for (k2 = 0; k2 < x.n; k2++)
			x.sim_at[k2] = -1;
		if ((pr = simulate_degrees(&x, x.pick_tp, x.n_tp, k, 0, plan->best_tp,
					   &plan->n_best_tp)) ||
		    (pr = simulate_degrees(&x, x.pick_pp, x.n_pp, k, 1, plan->best_pp,
					   &plan->n_best_pp))) {
			if (pr < 0)
				goto fail;
			/* out of time with the ranking done: it stands, and
			 * the tables keep what was simulated (a degree not
			 * reached is left out) */
			plan->degrees_cut = 1;
		}
		/* every layout the refinement played counts for both its
		 * degrees (the TP pass's for the PP table, and back) */
		for (k2 = 0; k2 < x.n_sim_e; k2++) {
			keep_best(plan->best_tp, &plan->n_best_tp, x.sim_e[k2].layout.tp, &x.sim_e[k2]);
			keep_best(plan->best_pp, &plan->n_best_pp, x.sim_e[k2].layout.pp, &x.sim_e[k2]);
		}
	} else {
		price_picks(&x, x.pick_tp, x.n_tp, plan->best_tp, &plan->n_best_tp);
		price_picks(&x, x.pick_pp, x.n_pp, plan->best_pp, &plan->n_best_pp);
	}
	qsort(plan->best_tp, plan->n_best_tp, sizeof(*plan->best_tp), by_degree);
	qsort(plan->best_pp, plan->n_best_pp, sizeof(*plan->best_pp), by_degree);
	ctx_free(&x);
	plan->elapsed_s = mono_now() - x.t0;
	if (!plan->n_top)
		return tpp_err_set(err, TPP_E_INFEASIBLE, NULL, 0, 0,
				   "no layout of %s on %d GPUs is valid and fits in memory",
				   m->name, s->gpus);
	return rc;
oom:
	ctx_free(&x);
	return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
timeout:
	ctx_free(&x);
	/* an unfinished search ranks nothing: what it had found so far is
	 * not the best */
	plan->timed_out = 1;
	plan->n_top = 0;
	plan->simulated = plan->too_long = plan->pruned = 0; /* none ranked */
	plan->elapsed_s = mono_now() - x.t0;
	return tpp_err_set(err, TPP_E_INFEASIBLE, NULL, 0, 0,
			   "the search of %s on %d GPUs stopped after its %g s time limit "
			   "(%llu layouts considered, %llu feasible): fix some fields with "
			   "--layout, lower --max-mbs / --max-cp, or raise --time-limit",
			   m->name, s->gpus, s->time_limit_s, plan->considered, plan->feasible);
fail:
	ctx_free(&x);
	return TPP_E_SYSTEM; /* err set by the simulator */
}
