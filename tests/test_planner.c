/*
 * test_planner.c - the layout search (planner/planner.c): ranking, the
 * bookkeeping of rejections, fixed constraints, top_k, infeasible and bad
 * problems, where the best layouts put their TP groups on a two-tier
 * cluster (GPT-3 175B on 1024 DGX A100 GPUs), and which runners-up tie
 * with the best.
 */
#include "tpp_test.h"
#include "tpp_test_presets.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "planner.h"
#include "sim.h"

static int search(const struct tpp_model *m, const struct tpp_cluster *c,
		  const struct tpp_search *s, struct tpp_plan *p,
		  struct tpp_err *err)
{
	struct tpp_cost_opts o;
	tpp_cost_opts_default(&o);
	memset(err, 0, sizeof(*err));
	return tpp_plan_search(m, c, &o, s, p, err);
}

static unsigned long long rejected_sum(const struct tpp_plan *p)
{
	unsigned long long n = 0;
	int i;
	for (i = 0; i < TPP_REJ__COUNT; i++)
		n += p->rejected[i];
	return n;
}

/* Sorted, feasible, consistent with the search constraints. */
static void check_top(const struct tpp_plan *p, const struct tpp_search *s)
{
	int i;
	CHECK(p->n_top >= 1 && p->n_top <= s->top_k);
	CHECK(p->considered == p->feasible + rejected_sum(p));
	CHECK((unsigned long long)p->n_top <= p->feasible);
	CHECK(p->n_top == s->top_k || (unsigned long long)p->n_top == p->feasible);
	for (i = 0; i < p->n_top; i++) {
		const struct tpp_eval *e = &p->top[i];
		const struct tpp_layout *l = &e->layout;
		CHECK(e->fits);
		CHECK(e->step_s > 0);
		CHECK((long long)l->tp * l->pp * l->dp * l->cp == s->gpus);
		CHECK(l->gbs == s->gbs);
		if (i)
			CHECK(p->top[i - 1].step_s <= e->step_s);
	}
}

/* One per-degree table (n entries) whose degree is the layout field at
 * byte offset `field`: strictly increasing degrees, each entry a feasible
 * layout of its degree, none better than the overall best, which is
 * among them. */
static void check_degree_table(const struct tpp_plan *p,
			       const struct tpp_degree_best *t, int n,
			       size_t field)
{
	int i, found = 0;
#define DEGREE(l) (*(const int *)((const char *)(l) + field))
	for (i = 0; i < n; i++) {
		const struct tpp_degree_best *d = &t[i];
		CHECK(i == 0 || t[i - 1].degree < d->degree);
		CHECK(DEGREE(&d->e.layout) == d->degree && d->e.fits);
		CHECK(d->e.step_s >= p->top[0].step_s);
		found |= d->e.step_s == p->top[0].step_s && d->degree == DEGREE(&p->top[0].layout);
	}
#undef DEGREE
	CHECK(found);
}

/* The per-degree tables of TP and PP (check_degree_table). */
static void check_degrees(const struct tpp_plan *p)
{
	check_degree_table(p, p->best_tp, p->n_best_tp, offsetof(struct tpp_layout, tp));
	check_degree_table(p, p->best_pp, p->n_best_pp, offsetof(struct tpp_layout, pp));
}

/* Search `model` on `gpus` dgx-a100 GPUs with micro-batches up to
 * max_mbs; check the ranking and the per-degree tables.  0 on success. */
static int search_checked(const char *model, int gpus, int gbs, int max_mbs,
			  struct tpp_plan *p)
{
	struct tpp_cluster c;
	struct tpp_search s;
	struct tpp_err err;
	int rc;

	load_cluster("dgx-a100", gpus, &c);
	tpp_search_default(&s, gpus, gbs);
	s.max_mbs = max_mbs;
	rc = search(preset(model), &c, &s, p, &err);
	CHECK(rc == TPP_OK);
	if (rc)
		return rc;
	check_top(p, &s);
	check_degrees(p);
	return 0;
}

static void test_search_22b(struct tpp_plan *p)
{
	const struct tpp_model *m = preset("22b");
	struct tpp_cluster c;
	struct tpp_search s;
	struct tpp_err err;
	int rc, i;
	double best;

	load_cluster("dgx-a100", 8, &c);
	tpp_search_default(&s, 8, 64);
	rc = search(m, &c, &s, p, &err);
	if (rc)
		fprintf(stderr, "22b on 8 GPUs: %s\n", err.msg);
	CHECK(rc == TPP_OK);
	if (rc)
		return;
	CHECK(p->n_top == 5);
	check_top(p, &s);
	CHECK(p->rejected[TPP_REJ_MEMORY] > 0);
	CHECK(p->rejected[TPP_REJ_TP] == 0); /* 1..8 all divide 64 heads */
	best = p->top[0].step_s;
	/* the best per TP / PP degree is never better than the overall best,
	 * and the overall best is one of them */
	{
		int found = 0;
		check_degrees(p);
		CHECK(p->n_best_tp == 4 && p->n_best_pp >= 2);
		for (i = 0; i < p->n_best_tp; i++) {
			CHECK(p->best_tp[i].e.step_s >= best);
			found |= p->best_tp[i].e.step_s == best;
		}
		for (i = 0; i < p->n_best_pp; i++)
			CHECK(p->best_pp[i].e.step_s >= best);
		CHECK(found);
	}
	/* the same search again gives the same answer */
	{
		struct tpp_plan *q = malloc(sizeof(*q));
		TPP_ASSERT(q);
		CHECK(search(m, &c, &s, q, &err) == TPP_OK);
		CHECK(q->considered == p->considered && q->feasible == p->feasible);
		CHECK(q->top[0].step_s == best);
		free(q);
	}

	/* top_k respected */
	s.top_k = 3;
	CHECK(search(m, &c, &s, p, &err) == TPP_OK);
	CHECK(p->n_top == 3);
	CHECK(p->top[0].step_s == best);
	s.top_k = 1;
	CHECK(search(m, &c, &s, p, &err) == TPP_OK);
	CHECK(p->n_top == 1);
	CHECK(p->top[0].step_s == best);
	s.top_k = TPP_TOP_MAX;
	CHECK(search(m, &c, &s, p, &err) == TPP_OK);
	check_top(p, &s);
	CHECK(p->top[0].step_s == best);

	/* fixed fields restrict the results */
	tpp_search_default(&s, 8, 64);
	s.top_k = TPP_TOP_MAX;
	s.tp = 4;
	s.recompute = TPP_RECOMPUTE_SELECTIVE;
	s.sp = 1;
	rc = search(m, &c, &s, p, &err);
	CHECK(rc == TPP_OK);
	if (!rc) {
		check_top(p, &s);
		for (i = 0; i < p->n_top; i++) {
			CHECK(p->top[i].layout.tp == 4);
			CHECK(p->top[i].layout.recompute == TPP_RECOMPUTE_SELECTIVE);
			CHECK(p->top[i].layout.sp == 1);
		}
		CHECK(p->n_best_tp == 1 && p->best_tp[0].degree == 4);
		CHECK(p->top[0].step_s >= best);
	}
	tpp_search_default(&s, 8, 64);
	s.pp = 2;
	s.mbs = 2;
	s.zero = 0;
	s.vp = 2;
	rc = search(m, &c, &s, p, &err);
	CHECK(rc == TPP_OK);
	if (!rc) {
		check_top(p, &s);
		for (i = 0; i < p->n_top; i++) {
			const struct tpp_layout *l = &p->top[i].layout;
			CHECK(l->pp == 2 && l->mbs == 2 && l->zero == 0 && l->vp == 2);
			CHECK(tpp_layout_sched(l) == TPP_SCHED_INTERLEAVED);
		}
	}
	/* every field fixed: exactly that layout, the same as the simulator's
	 * evaluation of it (the search reports simulated step times) */
	tpp_search_default(&s, 8, 64);
	s.tp = 8; s.pp = 1; s.dp = 1; s.cp = 1; s.mbs = 1; s.vp = 1;
	s.sp = 1; s.recompute = TPP_RECOMPUTE_SELECTIVE; s.zero = 0;
	s.tp_overlap = 0;
	rc = search(m, &c, &s, p, &err);
	CHECK(rc == TPP_OK);
	if (!rc) {
		struct tpp_cost_opts o;
		struct tpp_eval e;
		CHECK(p->considered == 1 && p->n_top == 1);
		tpp_cost_opts_default(&o);
		CHECK(tpp_sim_eval(m, &c, &o, &p->top[0].layout, &e, NULL) == TPP_OK);
		CHECK(e.step_s == p->top[0].step_s);
		CHECK(p->top[0].simulated);
		/* a single stage: simulation and analytic model agree */
		CHECK(tpp_cost_eval(m, &c, &o, &p->top[0].layout, &e, NULL) == TPP_OK);
		CHECK_REL(e.step_s, p->top[0].step_s, 1e-9);
	}
}

static void test_infeasible_and_usage(struct tpp_plan *p)
{
	struct tpp_cluster c;
	struct tpp_search s;
	struct tpp_err err;
	const struct tpp_model *m = preset("175b");
	int rc;

	/* 175B cannot fit on one GPU */
	load_cluster("dgx-a100", 1, &c);
	tpp_search_default(&s, 1, m->global_batch);
	rc = search(m, &c, &s, p, &err);
	CHECK(rc == TPP_E_INFEASIBLE);
	CHECK(err.msg[0] != '\0');
	CHECK(p->n_top == 0);
	CHECK(p->feasible == 0);
	CHECK(p->have_min_mem);
	CHECK(p->rejected[TPP_REJ_MEMORY] > 0);
	CHECK(p->considered == rejected_sum(p));
	CHECK(p->min_mem.mem.total_bytes > c.gpu.hbm_bytes);
	CHECK(!p->min_mem.fits);

	/* layout constraints no layout meets: nothing considered */
	load_cluster("dgx-a100", 8, &c);
	tpp_search_default(&s, 8, 64);
	s.tp = 3;
	rc = search(m, &c, &s, p, &err);
	CHECK(rc == TPP_E_INFEASIBLE);
	CHECK(p->considered == 0);

	/* bad constraints */
	tpp_search_default(&s, 0, 64);
	rc = search(m, &c, &s, p, &err);
	CHECK(rc == TPP_E_USAGE);
	CHECK_STR_CONTAINS(err.msg, "GPU count");
	tpp_search_default(&s, 8, 0);
	CHECK(search(m, &c, &s, p, &err) == TPP_E_USAGE);
	tpp_search_default(&s, 8, 64);
	s.top_k = 0;
	rc = search(m, &c, &s, p, &err);
	CHECK(rc == TPP_E_USAGE);
	CHECK_STR_CONTAINS(err.msg, "--top");
	s.top_k = TPP_TOP_MAX + 1;
	CHECK(search(m, &c, &s, p, &err) == TPP_E_USAGE);
}

/*
 * GPT-3 175B on 1024 DGX A100 GPUs, global batch 1536: TP groups of up to
 * 8 stay inside a node (tier 0, NVLink), tp = 16 spills onto InfiniBand
 * (tier 1), and the best layout keeps TP inside the node.  max_mbs 4
 * keeps the search short; the large micro-batches never win here.
 */
static void test_tp_tiers_175b(struct tpp_plan *p)
{
	int i;

	if (search_checked("175b", 1024, 1536, 4, p))
		return;
	/* tp = 1, 2, 4, 8, 16, ... in this order (96 heads: 3 does not
	 * divide 1024 GPUs) */
	CHECK(p->n_best_tp >= 5);
	if (p->n_best_tp < 5)
		return;
	for (i = 0; i < 5; i++)
		CHECK(p->best_tp[i].degree == 1 << i);
	CHECK(p->best_tp[0].e.tp_tier == -1); /* tp = 1 */
	for (i = 1; i <= 3; i++) /* tp = 2, 4, 8 */
		CHECK(p->best_tp[i].e.tp_tier == 0);
	CHECK(p->best_tp[4].e.tp_tier == 1); /* tp = 16 */
	CHECK(p->top[0].layout.tp <= 8);
	CHECK(p->top[0].tp_tier <= 0);
	/* spilling TP onto the network costs more than it saves */
	CHECK(p->best_tp[4].e.step_s > p->best_tp[3].e.step_s);
	printf("175b on 1024 GPUs: best %.3f s (tp=%d pp=%d dp=%d), best tp=16 %.3f s\n",
	       p->top[0].step_s, p->top[0].layout.tp, p->top[0].layout.pp,
	       p->top[0].layout.dp, p->best_tp[4].e.step_s);
}

/* Each entry of a per-degree table (degrees up to max) is no faster than
 * best[degree], the brute force's best of that degree, and at most
 * TPP_DEGREE_TOL above it. */
static void check_near_best(const struct tpp_degree_best *t, int n, const double *best,
			    int max)
{
	int i;
	for (i = 0; i < n; i++) {
		int d = t[i].degree;
		CHECK(d <= max && best[d] > 0);
		if (d <= max)
			CHECK(t[i].e.step_s >= best[d] * (1 - 1e-12) &&
			      t[i].e.step_s <= best[d] * (1 + TPP_DEGREE_TOL));
	}
}

/*
 * The two-tier search is exhaustive in effect: simulating every feasible
 * layout by brute force finds no faster one than the pruned search, and
 * the pruned search simulates only part of them.  22B on 2 nodes of
 * dgx-a100 (pipelines across the network, so transfers and NIC sharing
 * matter), global batch 32.  The brute force also plays every block size
 * of full recompute and ZeRO-2 under pipelining, which the search narrows
 * (planner.c consider, enumerate_inner): no faster layout hides there.
 */
static void test_two_tier_exhaustive(struct tpp_plan *p)
{
	const struct tpp_model *m = preset("22b");
	struct tpp_cluster c;
	struct tpp_cost_opts o;
	struct tpp_search s;
	struct tpp_err err;
	struct tpp_layout l;
	double best = -1, best_tp[17], best_pp[17];
	unsigned long long feasible = 0, blocks = 0;
	int tp, pp, mbs, vp, zb, sp, ov, rc, zero, i, k;

	load_cluster("dgx-a100", 16, &c);
	tpp_cost_opts_default(&o);
	tpp_search_default(&s, 16, 32);
	s.max_cp = 1;
	s.max_mbs = 4;
	s.top_k = 1;
	CHECK(search(m, &c, &s, p, &err) == TPP_OK);
	memset(&l, 0, sizeof(l));
	l.gbs = 32;
	l.cp = 1;
	for (i = 0; i <= 16; i++)
		best_tp[i] = best_pp[i] = -1;
	for (tp = 1; tp <= 16; tp *= 2)
		for (pp = 1; tp * pp <= 16; pp *= 2)
			for (mbs = 1; mbs <= 4; mbs++)
				for (vp = 1; vp * pp <= m->layers; vp++)
					for (zb = 0; zb <= 1; zb++)
						for (sp = 0; sp <= 1; sp++)
						for (ov = 0; ov <= sp; ov++)
							for (rc = 0; rc < TPP_RECOMPUTE__COUNT; rc++)
								for (zero = 0; zero <= 3; zero++) {
									struct tpp_eval e;
									l.tp = tp; l.pp = pp; l.dp = 16 / (tp * pp);
									l.mbs = mbs; l.vp = vp; l.zb = zb; l.sp = sp;
									l.tp_overlap = ov;
									l.recompute = (enum tpp_recompute)rc;
									l.zero = zero;
									if (tpp_layout_invalid(m, &c, &o, &l) != TPP_INV_NONE)
										continue;
									/* the search does not repeat zero > 0
									 * where there is nothing to shard */
									if (zero > 0 && l.dp == 1)
										continue;
									/* nor ZeRO-3 under pipelining,
									 * priced as ZeRO-2 there
									 * (tpp_zero_pipelined) */
									if (zero == 3 && l.pp > 1)
										continue;
									/* full recompute: every layer (0),
									 * then each block size */
									for (k = 0; k == 0 || (rc == TPP_RECOMPUTE_FULL &&
											       k < tpp_max_chunk_layers(m, &l)); k++) {
									l.recompute_layers = k;
									if (tpp_cost_eval(m, &c, &o, &l, &e, NULL) || !e.fits)
										continue;
									if (k == 0)
										feasible++;
									else
										blocks++;
									/* the bound is a bound */
									CHECK(tpp_sim_eval(m, &c, &o, &l, &e, NULL) == TPP_OK);
									CHECK(e.bound_s <= e.step_s * (1 + 1e-12));
									if (best < 0 || e.step_s < best)
										best = e.step_s;
									if (best_tp[tp] < 0 || e.step_s < best_tp[tp])
										best_tp[tp] = e.step_s;
									if (best_pp[pp] < 0 || e.step_s < best_pp[pp])
										best_pp[pp] = e.step_s;
									}
									l.recompute_layers = 0;
								}
	printf("two-tier: %llu feasible + %llu block sizes (search %llu), %llu simulated, best %.6f s brute force %.6f s\n",
	       feasible, blocks, p->feasible, p->simulated, p->top[0].step_s, best);
	/* every layout once, plus the block sizes the search plays (ZB-H1's;
	 * the others' fewest that fits stands in for their every-layer one) */
	CHECK(p->feasible >= feasible && p->feasible <= feasible + blocks);
	CHECK_REL(p->top[0].step_s, best, 1e-12);
	/* each degree's best: at most TPP_DEGREE_TOL above the brute force's
	 * (the analytic model's pick of the degree, simulated, was up to 4 %
	 * above it on 175B: "best per degree" that was not) */
	check_near_best(p->best_tp, p->n_best_tp, best_tp, 16);
	check_near_best(p->best_pp, p->n_best_pp, best_pp, 16);
	CHECK(p->n_best_tp == 5 && p->n_best_pp == 5);
	CHECK(p->simulated < p->feasible);

	CHECK(p->pruned > 0);
}

/*
 * Degrees that are not powers of two are reported too: 24 heads and 24
 * layers on 24 GPUs allow tp and pp of 1, 2, 3, 4, 6, 8, 12, 24 (on 8-GPU
 * nodes tp 12 and 24 span two nodes); the per-degree tables list every
 * degree some feasible layout has.  (They once kept powers of two only,
 * so a 560-node cluster, where every layout has pp = 35 or 70, printed
 * an empty pipeline table.)
 */
static void test_degrees_not_powers_of_two(struct tpp_plan *p)
{
	int i, has3 = 0, has6 = 0;

	if (search_checked("sc21-1.7b", 24, 480, 2, p))
		return;
	for (i = 0; i < p->n_best_tp; i++)
		has3 |= p->best_tp[i].degree == 3;
	for (i = 0; i < p->n_best_pp; i++)
		has6 |= p->best_pp[i].degree == 6;
	CHECK(has3 && has6);
	CHECK(p->n_best_pp >= 6);
}

/*
 * "Best layout per TP / PP degree" is the best of that degree, within
 * TPP_DEGREE_TOL: the search with the degree fixed (whose best the
 * two-tier test shows exact) finds none faster by more.  Llama 3 70B on
 * 64 H100s, every degree (the analytic model's pick of pp 2 and 8,
 * simulated, was 0.4 % above the best of its degree), and GPT-3 175B on
 * 1024 A100s, pp 16 (the pick was 4 % above: 17.54 s against 16.74 s).
 */
static void test_degree_bests(struct tpp_plan *p)
{
	struct tpp_plan *q = malloc(sizeof(*q));
	struct tpp_cluster c;
	struct tpp_search s;
	struct tpp_err err;
	struct tpp_degree_best tp[16], pp[16];
	int ntp, npp, i, k;

	TPP_ASSERT(q);
	load_cluster("dgx-h100", 64, &c);
	tpp_search_default(&s, 64, 1024);
	CHECK(search(preset("llama3-70b"), &c, &s, p, &err) == TPP_OK);
	ntp = p->n_best_tp < 16 ? p->n_best_tp : 16;
	npp = p->n_best_pp < 16 ? p->n_best_pp : 16;
	memcpy(tp, p->best_tp, sizeof(tp[0]) * (size_t)ntp);
	memcpy(pp, p->best_pp, sizeof(pp[0]) * (size_t)npp);
	CHECK(ntp >= 3 && npp >= 3);
	/* without the tables (a follow-up search): the same ranking, nothing
	 * simulated for them, none filled */
	{
		struct tpp_search f = s;
		f.degree_tables = 0;
		CHECK(p->simulated_picks > 0);
		CHECK(search(preset("llama3-70b"), &c, &f, q, &err) == TPP_OK);
		CHECK(q->n_top == p->n_top && q->simulated == p->simulated);
		for (i = 0; i < q->n_top && i < p->n_top; i++)
			CHECK(q->top[i].step_s == p->top[i].step_s &&
			      !memcmp(&q->top[i].layout, &p->top[i].layout, sizeof(q->top[i].layout)));
		CHECK(q->simulated_picks == 0 && q->n_best_tp == 0 && q->n_best_pp == 0);
	}
	for (k = 0; k < 2; k++)
		for (i = 0; i < (k ? npp : ntp); i++) {
			const struct tpp_degree_best *b = k ? &pp[i] : &tp[i];
			struct tpp_search f = s;
			f.top_k = 1;
			f.degree_tables = 0;
			if (k)
				f.pp = b->degree;
			else
				f.tp = b->degree;
			CHECK(search(preset("llama3-70b"), &c, &f, q, &err) == TPP_OK);
			CHECK(b->e.step_s >= q->top[0].step_s * (1 - 1e-12));
			CHECK(b->e.step_s <= q->top[0].step_s * (1 + TPP_DEGREE_TOL));
		}
	load_cluster("dgx-a100", 1024, &c);
	tpp_search_default(&s, 1024, 1536);
	CHECK(search(preset("175b"), &c, &s, p, &err) == TPP_OK);
	i = tpp_degree_find(p->best_pp, p->n_best_pp, 16);
	CHECK(i >= 0);
	s.pp = 16;
	s.top_k = 1;
	s.degree_tables = 0;
	CHECK(search(preset("175b"), &c, &s, q, &err) == TPP_OK);
	if (i >= 0)
		CHECK(p->best_pp[i].e.step_s <= q->top[0].step_s * (1 + TPP_DEGREE_TOL));
	free(q);
}

/* Runners-up within TPP_MEASURED_SPREAD (4 %) of the best tie with it;
 * the best itself and layouts past the spread or the ranking do not. */
static void test_ties(struct tpp_plan *p)
{
	static const double steps[] = {10.0, 10.2, 10.4, 10.41, 12.0};
	int i;
	memset(p, 0, sizeof(*p));
	p->n_top = (int)TPP_ARRAY_LEN(steps);
	for (i = 0; i < p->n_top; i++)
		p->top[i].step_s = steps[i];
	CHECK(!tpp_plan_ties_best(p, 0));
	CHECK(tpp_plan_ties_best(p, 1));
	CHECK(tpp_plan_ties_best(p, 2));  /* exactly +4 % */
	CHECK(!tpp_plan_ties_best(p, 3)); /* +4.1 % */
	CHECK(!tpp_plan_ties_best(p, 4));
	CHECK(!tpp_plan_ties_best(p, 5)); /* past n_top */
	/* ZeRO-3 across nodes (tpp_eval_optimistic) is no tie for a best
	 * that is not, and ties with one that is */
	for (i = 0; i < p->n_top; i++) {
		p->top[i].layout.tp = p->top[i].layout.pp = p->top[i].layout.cp = 1;
		p->top[i].layout.dp = 64;
		p->top[i].layout.zero = 1;
		p->top[i].dp_tier = 1;
	}
	p->top[1].layout.zero = 3;
	CHECK(tpp_eval_optimistic(&p->top[1]) && !tpp_eval_optimistic(&p->top[0]));
	CHECK(!tpp_plan_ties_best(p, 1));
	CHECK(tpp_plan_ties_best(p, 2));
	p->top[1].dp_tier = 0; /* inside a node: no caution, a tie */
	CHECK(!tpp_eval_optimistic(&p->top[1]) && tpp_plan_ties_best(p, 1));
	p->top[1].dp_tier = 1;
	p->top[0].layout.zero = 3;
	CHECK(tpp_plan_ties_best(p, 1));
	p->n_top = 1;
	CHECK(!tpp_plan_ties_best(p, 1));
}

/* exclude_optimistic leaves ZeRO-3 across nodes out of the search (for
 * the CLI's best layout without it): with zero pinned to 3 and pp 1 on
 * eight nodes, the best layouts are all of that kind; left out, what
 * remains is not (tp 64 and dp 1, say: nothing to shard), and no faster.
 * The same with zero free. */
static void test_exclude_optimistic(struct tpp_plan *p)
{
	struct tpp_cluster c;
	struct tpp_search s;
	struct tpp_err err;
	double best = 0;
	static const int zeros[] = {3, TPP_FREE};
	int i, k, rc, zero;

	load_cluster("dgx-a100", 64, &c);
	for (k = 0; k < (int)TPP_ARRAY_LEN(zeros); k++) {
		zero = zeros[k];
		tpp_search_default(&s, 64, 256);
		s.zero = zero;
		s.pp = zero == 3 ? 1 : TPP_FREE;
		rc = search(preset("22b"), &c, &s, p, &err);
		CHECK(rc == TPP_OK && p->n_top > 0);
		if (rc)
			return;
		if (zero == 3)
			for (i = 0; i < p->n_top; i++)
				CHECK(tpp_eval_optimistic(&p->top[i]));
		best = p->top[0].step_s;
		s.exclude_optimistic = 1;
		rc = search(preset("22b"), &c, &s, p, &err);
		CHECK(rc == TPP_OK && p->n_top > 0);
		if (rc)
			return;
		for (i = 0; i < p->n_top; i++)
			CHECK(!tpp_eval_optimistic(&p->top[i]));
		CHECK(p->top[0].step_s >= best);
	}
}

/*
 * ZeRO-2 under pipelining (searched with zero free since the narrowing
 * audit) is listed only where it beats the same layout with ZeRO-1.
 * 1.3B on 1024 B200 GPUs, global batch 32: it wins (pipeline transfers
 * and DP buckets share the NICs; 13.36 ms against 13.94 ms); 405B on 1024
 * H100: its step ties ZeRO-1's and it is not listed as a near-copy.
 */
static void test_zero2_pipelined(struct tpp_plan *p)
{
	static const struct {
		const char *model, *cluster;
		int gpus, gbs, wins;
	} t[] = {{"1.3b", "dgx-b200", 1024, 32, 1}, {"llama3.1-405b", "dgx-h100", 1024, 0, 0}};
	size_t j;
	for (j = 0; j < TPP_ARRAY_LEN(t); j++) {
		const struct tpp_model *m = preset(t[j].model);
		struct tpp_cluster c;
		struct tpp_cost_opts o;
		struct tpp_search s;
		struct tpp_err err;
		int i, listed = 0;
		load_cluster(t[j].cluster, t[j].gpus, &c);
		tpp_cost_opts_default(&o);
		tpp_search_default(&s, t[j].gpus, t[j].gbs ? t[j].gbs : m->global_batch);
		s.top_k = 3;
		CHECK(tpp_plan_search(m, &c, &o, &s, p, &err) == TPP_OK);
		for (i = 0; i < p->n_top; i++) {
			struct tpp_layout l = p->top[i].layout;
			struct tpp_eval tw;
			if (!tpp_zero_pipelined(&l))
				continue;
			listed++;
			l.zero = 1;
			CHECK(tpp_sim_eval(m, &c, &o, &l, &tw, NULL) == TPP_OK);
			CHECK(tw.step_s > p->top[i].step_s);
		}
		CHECK(t[j].wins ? tpp_zero_pipelined(&p->top[0].layout) && p->top[0].layout.zero == 2
				: listed == 0);
	}
}

/*
 * The pruning is sound beyond the small problem above: on layouts sampled
 * over several clusters, models, precisions and cost options (a fixed
 * seed), the analytic lower bound never exceeds the simulated step, which
 * is finite and positive with no negative part.  A layout the planner
 * discards because its bound exceeds the k-th best could otherwise have
 * won (issue: search exhaustive in effect).  A broader run of the same
 * audit -- 673,434 feasible layouts over 220 problems -- found none
 * either (this project's notes, 2026-12-07), nor one of 21,437 layouts
 * drawn mostly ZeRO-3 without pipelining under a rate cap
 * (zero3_rate_Bps 0.1-1000 GB/s, the same day).
 */
static uint64_t bound_rng = 0x9e3779b97f4a7c15ULL;
static int bound_rand(int n) /* 0 .. n-1 */
{
	uint64_t z = tpp_test_rand64(&bound_rng);
	return n > 1 ? (int)(z % (uint64_t)n) : 0;
}

/* A random power of two dividing n, at most lim. */
static int bound_pow2(int n, int lim)
{
	int d[16], k = 0, v;
	for (v = 1; v <= lim && n % v == 0; v *= 2)
		d[k++] = v;
	return d[bound_rand(k)];
}

static void test_bound_sampled(void)
{
	static const struct {
		const char *model, *cluster;
		int gpus;
	} probs[] = {
		{"22b", "dgx-h100", 64},        {"llama3-8b", "gb200-nvl72", 128},
		{"llama3-70b", "dgx-b200", 256}, {"175b", "dgx-a100", 512},
		{"llama3.1-405b", "dgx-h100", 1024}, {"22b", "mi300x", 64},
		{"llama3-8b", "l40s-ethernet", 32},
	};
	/* an implementation's ZeRO-3 rate (0: NCCL's), drawn from a stream
	 * of its own so the layouts drawn stay those of the seed */
	static const double rates[] = {0, 1e9, 21.25e9, 1e12};
	static uint64_t rate_rng = 0x2545f4914f6cdd1dULL;
	static struct tpp_cluster c;
	unsigned long long checked = 0, zero3 = 0, piped = 0, capped = 0;
	size_t i;
	for (i = 0; i < TPP_ARRAY_LEN(probs); i++) {
		const struct tpp_model *m = preset(probs[i].model);
		int g = probs[i].gpus, tries;
		load_cluster(probs[i].cluster, g, &c);
		for (tries = 0; tries < 600; tries++) {
			struct tpp_cost_opts o;
			struct tpp_layout l;
			struct tpp_eval e, s;
			int rest, micro, k, maxl;
			tpp_cost_opts_default(&o);
			o.dp_overlap = bound_rand(2);
			o.p2p_overlap = bound_rand(2);
			o.p2p_scatter_gather = bound_rand(2);
			o.grads16 = bound_rand(2);
			o.attn = bound_rand(2) ? TPP_ATTN_FLASH : TPP_ATTN_UNFUSED;
			o.gpu_speed_sigma = bound_rand(2) ? 0.02 : 0;
			o.zero3_rate_Bps = rates[tpp_test_rand64(&rate_rng) % TPP_ARRAY_LEN(rates)];
			if (c.gpu.peak_flops[TPP_PREC_FP8] > 0 && bound_rand(2)) {
				o.prec = TPP_PREC_FP8;
				o.fp8_recipe = bound_rand(2) ? TPP_FP8_CURRENT : TPP_FP8_DELAYED;
			}
			memset(&l, 0, sizeof(l));
			l.tp = bound_pow2(g, 16);
			rest = g / l.tp;
			l.cp = bound_pow2(rest, o.attn == TPP_ATTN_FLASH ? 4 : 1);
			rest /= l.cp;
			l.pp = bound_pow2(rest, 32);
			l.dp = rest / l.pp;
			l.mbs = 1 << bound_rand(3);
			micro = l.pp * (1 + bound_rand(4));
			l.gbs = l.dp * l.mbs * micro;
			l.vp = 1 + bound_rand(4);
			l.zb = l.vp == 1 && bound_rand(2);
			l.sp = l.tp > 1 && bound_rand(2);
			l.tp_overlap = l.sp && bound_rand(2);
			l.recompute = (enum tpp_recompute)bound_rand(TPP_RECOMPUTE__COUNT);
			l.zero = bound_rand(4);
			if (tpp_layout_invalid(m, &c, &o, &l) != TPP_INV_NONE)
				continue;
			maxl = tpp_max_chunk_layers(m, &l);
			if (l.recompute == TPP_RECOMPUTE_FULL && bound_rand(2))
				l.recompute_layers = 1 + bound_rand(maxl);
			if (tpp_cost_eval(m, &c, &o, &l, &e, NULL) || !e.fits)
				continue;
			if (tpp_sim_eval(m, &c, &o, &l, &s, NULL) != TPP_OK)
				continue; /* too long to simulate: the planner prices it analytically */
			checked++;
			zero3 += l.zero == 3;
			capped += tpp_zero_per_microbatch(&l) && l.dp * l.cp > 1 && o.zero3_rate_Bps > 0;
			piped += l.pp > 1;
			CHECK(isfinite(s.step_s) && s.step_s > 0);
			CHECK(s.bound_s == e.bound_s);
			if (!(s.bound_s <= s.step_s * (1 + 1e-9)))
				printf("bound %.12g > step %.12g: %s on %d %s\n", s.bound_s, s.step_s,
				       probs[i].model, g, probs[i].cluster);
			CHECK(s.bound_s <= s.step_s * (1 + 1e-9));
			for (k = 0; k < TPP_TIME_PARTS; k++)
				CHECK(tpp_time_part(&s.t, k) >= -1e-12 * s.step_s);
		}
	}
	printf("bound sampled: %llu feasible layouts simulated (%llu pipelined, %llu ZeRO-3, %llu of them sharded over dp with a rate cap)\n",
	       checked, piped, zero3, capped);
	/* not vacuous: enough layouts of each kind were drawn */
	CHECK(checked >= 400 && piped >= 100 && zero3 >= 20 && capped >= 5);
}

/*
 * A cutoff (the fewer-GPUs follow-up: does any layout beat or tie a step?)
 * changes no answer under it and simulates less: at or above the best
 * step the same best, with every other count the same; just below it none
 * faster; below every bound none is left (TPP_E_INFEASIBLE, yet feasible
 * as before); and the layouts it discards count as pruned.
 */
/*
 * Under fp8, ZeRO-1 with one data-parallel rank is a layout of its own:
 * the distributed optimizer keeps fp8 primary weights (tpp_fp8_params),
 * half ZeRO-0's 16-bit weight memory.  13B on 8 L40S, global batch 256:
 * pp 8, dp 1, ZeRO-1 fits with one layer recomputed and plans 22.72 s;
 * the search skipped it ("nothing to shard") and gave pp 4, dp 2 at
 * 23.37 s (audit of 1080 problems, 2026-12-07).  With ZeRO-0 fixed the
 * same pp 8, dp 1 needs more recompute or does not fit.
 */
static void test_fp8_one_rank_zero1(struct tpp_plan *p)
{
	struct tpp_cluster c;
	struct tpp_search s;
	struct tpp_cost_opts o;
	struct tpp_err err;
	const struct tpp_model *m = preset("13b");
	double best;

	load_cluster("l40s-ethernet", 8, &c);
	tpp_cost_opts_default(&o);
	o.prec = TPP_PREC_FP8;
	tpp_search_default(&s, 8, 256);
	s.top_k = 1;
	s.degree_tables = 0;
	CHECK(tpp_plan_search(m, &c, &o, &s, p, &err) == TPP_OK);
	CHECK(p->n_top == 1);
	if (p->n_top < 1)
		return;
	best = p->top[0].step_s;
	CHECK(p->top[0].layout.dp == 1 && p->top[0].layout.pp == 8 && p->top[0].layout.zero == 1);
	CHECK(best < 22.8);
	/* not in bf16: there ZeRO-1 on one rank is ZeRO-0 */
	o.prec = TPP_PREC_BF16;
	CHECK(tpp_plan_search(m, &c, &o, &s, p, &err) == TPP_OK);
	CHECK(p->n_top == 1 && (p->top[0].layout.zero == 0 ||
				(long long)p->top[0].layout.dp * p->top[0].layout.cp > 1));
	/* ZeRO-0 fixed under fp8: slower */
	o.prec = TPP_PREC_FP8;
	s.zero = 0;
	CHECK(tpp_plan_search(m, &c, &o, &s, p, &err) == TPP_OK);
	CHECK(p->n_top == 1 && p->top[0].step_s > best);
}

static void test_cutoff(struct tpp_plan *p)
{
	struct tpp_plan *q = malloc(sizeof(*q));
	struct tpp_cluster c;
	struct tpp_search s, f;
	struct tpp_err err;
	const struct tpp_model *m = preset("175b");
	int k;

	TPP_ASSERT(q);
	load_cluster("dgx-a100", 1024, &c);
	tpp_search_default(&s, 1024, 1536);
	s.top_k = 1;
	s.degree_tables = 0;
	CHECK(search(m, &c, &s, p, &err) == TPP_OK);
	for (k = 0; k < 2; k++) {
		f = s;
		/* exactly the best step, and the fewer-GPUs tie margin above it */
		f.cutoff_s = p->top[0].step_s * (k ? 1 + TPP_MEASURED_SPREAD : 1);
		CHECK(search(m, &c, &f, q, &err) == TPP_OK);
		CHECK(q->n_top == 1 && q->top[0].step_s == p->top[0].step_s &&
		      !memcmp(&q->top[0].layout, &p->top[0].layout, sizeof(q->top[0].layout)));
		CHECK(q->feasible == p->feasible && q->considered == p->considered);
		CHECK(q->simulated + q->too_long <= p->simulated + p->too_long);
		CHECK(q->feasible == q->simulated + q->too_long + q->pruned);
	}
	/* just under the best step: none is under it, so what is listed
	 * (a layout whose bound is) is no faster than the best */
	f = s;
	f.cutoff_s = p->top[0].step_s * (1 - 1e-6);
	k = search(m, &c, &f, q, &err);
	CHECK(k == TPP_E_INFEASIBLE || (k == TPP_OK && q->top[0].step_s >= p->top[0].step_s));
	CHECK(q->feasible == p->feasible && q->feasible == q->simulated + q->too_long + q->pruned);
	/* under every bound: none left, though as many fit */
	f.cutoff_s = 1e-3;
	CHECK(search(m, &c, &f, q, &err) == TPP_E_INFEASIBLE);
	CHECK(q->n_top == 0 && !q->timed_out && q->simulated == 0);
	CHECK(q->feasible == p->feasible && q->pruned == q->feasible);
	/* analytic ranking: the same */
	s.simulate = 0;
	CHECK(search(m, &c, &s, p, &err) == TPP_OK);
	f = s;
	f.cutoff_s = p->top[0].step_s;
	CHECK(search(m, &c, &f, q, &err) == TPP_OK);
	CHECK(q->n_top == 1 && q->top[0].step_s == p->top[0].step_s);
	free(q);
}

int main(void)
{
	struct tpp_plan *p = malloc(sizeof(*p)); /* large: heap */
	TPP_ASSERT(p);
	test_search_22b(p);
	test_infeasible_and_usage(p);
	test_tp_tiers_175b(p);
	test_two_tier_exhaustive(p);
	test_bound_sampled();
	test_zero2_pipelined(p);
	test_ties(p);
	test_exclude_optimistic(p);
	test_degrees_not_powers_of_two(p);
	test_degree_bests(p);
	test_cutoff(p);
	test_fp8_one_rank_zero1(p);
	free(p);
	return tpp_test_done("test_planner");
}
