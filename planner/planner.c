/*
 * planner.c - exhaustive layout search (see planner.h).
 *
 * Order of checks follows ../shared/DESIGN.md: divisibility first (cheap,
 * counted by reason), then memory, then time.  Every layout the cost model
 * accepts is evaluated; the space for thousands of GPUs is a few hundred
 * thousand points, so no pruning is needed at this stage.
 */
#include "planner.h"

#include <string.h>

const char *const tpp_reject_names[TPP_REJ__COUNT] = {
	[TPP_INV_NONE] = "valid",
	[TPP_REJ_DEGREE] = "degrees, micro-batch and batch must be >= 1, zero 0..3",
	[TPP_REJ_TP] = "tp does not divide heads/kv-heads/ffn",
	[TPP_REJ_LAYERS] = "more model chunks (pp*vp) than layers",
	[TPP_REJ_SCHEDULE] = "interleaving needs pp >= 2 and micro-batches a multiple of pp",
	[TPP_REJ_SP] = "sequence parallelism needs tp >= 2",
	[TPP_REJ_SEQ] = "cp/sp do not divide the sequence",
	[TPP_REJ_BATCH] = "dp*mbs does not divide the global batch",
	[TPP_REJ_ZERO] = "zero=3 with pipelining",
	[TPP_REJ_PRECISION] = "no peak for the precision on this GPU",
	[TPP_REJ_MEMORY] = "does not fit in GPU memory",
};

void tpp_search_default(struct tpp_search *s, int gpus, int gbs)
{
	s->gpus = gpus;
	s->gbs = gbs;
	s->tp = s->pp = s->dp = s->cp = s->mbs = s->vp = TPP_FREE;
	s->sp = s->recompute = s->zero = TPP_FREE;
	s->top_k = 5;
	s->max_mbs = 16;
	s->max_cp = 16;
}

int tpp_degree_slot(int degree)
{
	int i;
	for (i = 0; i < TPP_DEGREE_SLOTS; i++)
		if (degree == 1 << i)
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

static void keep_best(int *have, struct tpp_eval *slot, const struct tpp_eval *e)
{
	if (!*have || e->step_s < slot->step_s) {
		*slot = *e;
		*have = 1;
	}
}

static int in(int fixed, int v)
{
	return fixed == TPP_FREE || fixed == v;
}

int tpp_plan_search(const struct tpp_model *m, const struct tpp_cluster *c,
		    const struct tpp_cost_opts *o, const struct tpp_search *s,
		    struct tpp_plan *plan, struct tpp_err *err)
{
	int tp, cp, pp, dp, mbs, vp, sp, rc, zero;
	struct tpp_layout l;
	struct tpp_eval e;

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

	memset(&l, 0, sizeof(l));
	l.gbs = s->gbs;
	for (tp = 1; tp <= s->gpus; tp++) {
		if (s->gpus % tp || !in(s->tp, tp))
			continue;
		for (cp = 1; cp <= s->gpus / tp; cp++) {
			int max_cp = s->cp == TPP_FREE ? s->max_cp : s->cp;
			if ((s->gpus / tp) % cp || !in(s->cp, cp) || cp > max_cp)
				continue;
			for (pp = 1; pp <= s->gpus / (tp * cp); pp++) {
				if ((s->gpus / (tp * cp)) % pp || !in(s->pp, pp))
					continue;
				dp = s->gpus / (tp * cp * pp);
				if (!in(s->dp, dp))
					continue;
				for (mbs = 1; mbs <= s->gbs; mbs++) {
					int max_mbs = s->mbs == TPP_FREE ? s->max_mbs : s->mbs;
					if (!in(s->mbs, mbs) || mbs > max_mbs)
						continue;
					for (vp = 1; vp <= m->layers; vp++) {
						if (!in(s->vp, vp))
							continue;
						/* interleaving needs pp >= 2 and at least one
						 * layer per model chunk; other vp are not
						 * layouts at all, so they are not counted */
						if (vp > 1 && (pp < 2 || (long long)pp * vp > m->layers) &&
						    s->vp == TPP_FREE)
							break;
						for (sp = 0; sp <= 1; sp++) {
							if (!in(s->sp, sp) || (sp && tp == 1 && s->sp == TPP_FREE))
								continue;
							for (rc = 0; rc < TPP_RECOMPUTE__COUNT; rc++) {
								if (!in(s->recompute, rc))
									continue;
								for (zero = 0; zero <= 3; zero++) {
									if (!in(s->zero, zero))
										continue;
									if (zero > 0 && dp * cp == 1 && s->zero == TPP_FREE)
										continue; /* nothing to shard */
									l.tp = tp; l.cp = cp; l.pp = pp; l.dp = dp;
									l.mbs = mbs; l.vp = vp; l.sp = sp;
									l.recompute = (enum tpp_recompute)rc;
									l.zero = zero;
									plan->considered++;
									{
										enum tpp_invalid why = tpp_layout_invalid(m, c, o, &l);
										if (why != TPP_INV_NONE) {
											plan->rejected[why]++;
											continue;
										}
									}
									/* valid: evaluation cannot fail */
									{
										int erc = tpp_cost_eval(m, c, o, &l, &e, NULL);
										TPP_ASSERT(erc == TPP_OK);
									}
									if (!e.fits) {
										plan->rejected[TPP_REJ_MEMORY]++;
										if (!plan->have_min_mem ||
										    e.mem.total_bytes < plan->min_mem.mem.total_bytes) {
											plan->min_mem = e;
											plan->have_min_mem = 1;
										}
										continue;
									}
									plan->feasible++;
									keep_top(plan, s->top_k, &e);
									{
										int st = tpp_degree_slot(tp), sq = tpp_degree_slot(pp);
										if (st >= 0)
											keep_best(&plan->have_best_tp[st], &plan->best_tp[st], &e);
										if (sq >= 0)
											keep_best(&plan->have_best_pp[sq], &plan->best_pp[sq], &e);
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if (!plan->n_top)
		return tpp_err_set(err, TPP_E_INFEASIBLE, NULL, 0, 0,
				   "no layout of %s on %d GPUs is valid and fits in memory",
				   m->name, s->gpus);
	return TPP_OK;
}
