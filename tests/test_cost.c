/*
 * test_cost.c - the analytic cost model (costmodel/cost.c):
 *   - Korthikanti et al. 2022 memory targets (costmodel.md section 9), to
 *     the printed two decimals, and the Fig. 7 relative activation memory;
 *   - model / hardware FLOPs against the SC21 closed form and the
 *     recomputed forward counted by hand;
 *   - memory monotonicity in recompute, SP and ZeRO stage;
 *   - collective times (tpp_coll_time) on a hand-built two-tier cluster
 *     and on the dgx-a100 preset's measured curve;
 *   - every structural rejection of tpp_layout_check;
 *   - step-time bookkeeping (parts sum, throughput, MFU, DP scaling, the
 *     1F1B / interleaved bubble).
 */
#include "tpp_test.h"
#include "tpp_test_presets.h"

#include <stdlib.h>
#include <unistd.h>

#include "cost.h"
#include "sim.h"

/* Mirrors of the cost model's private constants (see TPP_DEFAULT_LINK_EFF,
 * TPP_DEFAULT_IB_EFF and TPP_COLL_BASE_LAT_S there); the collective
 * checks below are exact. */
#define LINK_EFF 0.80
#define NVLS_EFF 0.686
#define IB_EFF 0.92
#define BASE_LAT_S 14.0e-6

/* The unmeasured rate of tier t: its datasheet rate at LINK_EFF, or
 * IB_EFF on InfiniBand. */
static double eff_bw(const struct tpp_tier *t)
{
	return t->bw_Bps * (t->kind == TPP_TIER_INFINIBAND ? IB_EFF : LINK_EFF);
}

static struct tpp_layout layout(int tp, int pp, int dp, int mbs, int vp,
				int sp, enum tpp_recompute rc, int zero,
				int gbs)
{
	struct tpp_layout l;
	memset(&l, 0, sizeof(l));
	l.tp = tp;
	l.pp = pp;
	l.dp = dp;
	l.cp = 1;
	l.mbs = mbs;
	l.vp = vp;
	l.sp = sp;
	l.recompute = rc;
	l.zero = zero;
	l.gbs = gbs;
	return l;
}

/* Evaluate; a failure is a test failure and leaves *e zeroed. */
static int eval(const struct tpp_model *m, const struct tpp_cluster *c,
		const struct tpp_cost_opts *o, const struct tpp_layout *l,
		struct tpp_eval *e)
{
	struct tpp_err err;
	int rc;
	memset(e, 0, sizeof(*e));
	rc = tpp_cost_eval(m, c, o, l, e, &err);
	if (rc)
		fprintf(stderr, "tpp_cost_eval(%s): %s\n", m->name, err.msg);
	CHECK(rc == TPP_OK);
	return rc;
}

/* Options of the K22 / Calculon validation configs: fp16, unfused. */
static void k22_opts(struct tpp_cost_opts *o)
{
	tpp_cost_opts_default(o);
	o->prec = TPP_PREC_FP16;
	o->attn = TPP_ATTN_UNFUSED;
}

/*
 * What most tests set up: a model preset, a cluster preset resized to
 * `gpus`, the options `opts` sets (tpp_cost_opts_default or k22_opts) and
 * a layout, zero until the test sets it.  One instance, set afresh by
 * every call; the tests change its parts in place.
 */
struct fixture {
	const struct tpp_model *m;
	struct tpp_cluster c;
	struct tpp_cost_opts o;
	struct tpp_layout l;
};

static struct fixture *fixture(const char *model, const char *cluster,
			       int gpus, void (*opts)(struct tpp_cost_opts *))
{
	static struct fixture f;
	memset(&f, 0, sizeof(f));
	f.m = preset(model);
	load_cluster(cluster, gpus, &f.c);
	opts(&f.o);
	return &f;
}

/* eval() of the fixture's layout */
static int fixture_eval(const struct fixture *f, struct tpp_eval *e)
{
	return eval(f->m, &f->c, &f->o, &f->l, e);
}

/* ------------------------------------------------------------------------ */
/* Korthikanti et al. 2022, costmodel.md section 9                           */

struct k22_row {
	const char *model;
	int tp, pp, vp, gbs, mbs;
	double states_gib, act_none_gib, act_seqsel_gib; /* as printed */
};

static const struct k22_row k22_rows[] = {
	{"22b", 8, 1, 1, 4, 4, 45.56, 59.25, 9.56},
	{"175b", 8, 8, 3, 64, 1, 45.56, 66.84, 12.35},
	{"530b", 8, 35, 3, 280, 1, 31.64, 114.02, 23.08},
	{"1t", 8, 64, 1, 512, 1, 32.96, 131.25, 26.56},
};

/* A row's configuration on tp * pp DGX A100 GPUs, no SP, no recompute. */
static struct fixture *k22_fixture(const struct k22_row *r)
{
	struct fixture *f = fixture(r->model, "dgx-a100", r->tp * r->pp, k22_opts);
	f->l = layout(r->tp, r->pp, 1, r->mbs, r->vp, 0, TPP_RECOMPUTE_NONE, 0,
		      r->gbs);
	return f;
}

/* Equal to `printed` within 0.1 % and rounding to it at two decimals. */
static void check_printed(const char *what, const char *model, double gib,
			  double printed)
{
	double rounded = floor(gib * 100.0 + 0.5);
	CHECK_REL(gib, printed, 1e-3);
	tpp_test_checks++;
	if (rounded != floor(printed * 100.0 + 0.5)) {
		tpp_test_failures++;
		fprintf(stderr, "%s:%d: K22 %s %s = %.4f GiB does not round to %.2f\n",
			__FILE__, __LINE__, model, what, gib, printed);
	}
}

static void test_k22_memory(void)
{
	size_t i;
	for (i = 0; i < TPP_ARRAY_LEN(k22_rows); i++) {
		const struct k22_row *r = &k22_rows[i];
		struct fixture *f = k22_fixture(r);
		struct tpp_eval en, es;

		if (fixture_eval(f, &en))
			continue;
		/* seq+sel: sequence parallelism and selective recompute */
		f->l.sp = 1;
		f->l.recompute = TPP_RECOMPUTE_SELECTIVE;
		if (fixture_eval(f, &es))
			continue;
		printf("K22 %-5s params+opt %.4f  act none %.4f  seq+sel %.4f GiB\n",
		       r->model, en.mem.layer_states_bytes / TPP_GiB,
		       en.mem.layer_act_bytes / TPP_GiB,
		       es.mem.layer_act_bytes / TPP_GiB);
		/*
		 * K22 (and Calculon) count the 12h^2 weight matrices only:
		 * 18 B x 12h^2 x L/(t p) reproduces the printed figure exactly.
		 * tpplan also holds the biases and norms (7h split by TP, 6h
		 * whole), 0.01-0.08 % more; check both.
		 */
		{
			double h = f->m->hidden, lps = (double)f->m->layers / r->pp;
			double matrices = 18.0 * 12.0 * h * h * lps / r->tp;
			double extras = 18.0 * (7.0 * h / r->tp + 6.0 * h) * lps;
			check_printed("params+opt (12h^2 matrices)", r->model,
				      matrices / TPP_GiB, r->states_gib);
			CHECK_REL(en.mem.layer_states_bytes, matrices + extras, 1e-12);
			CHECK_REL(en.mem.layer_states_bytes / TPP_GiB, r->states_gib, 1e-3);
		}
		/* states do not depend on SP or recompute */
		CHECK_REL(es.mem.layer_states_bytes, en.mem.layer_states_bytes, 1e-12);
		check_printed("act none", r->model,
			      en.mem.layer_act_bytes / TPP_GiB, r->act_none_gib);
		check_printed("act seq+sel", r->model,
			      es.mem.layer_act_bytes / TPP_GiB, r->act_seqsel_gib);
	}
}

/*
 * K22 Fig. 7 (costmodel.md section 9): activation memory with SP only and
 * with selective recompute only, as a percentage of "none", to 0.1
 * percentage point.
 */
static void test_k22_fig7(void)
{
	static const struct {
		const char *model;
		double sp_only_pct, sel_only_pct;
	} rows[] = {
		{"22b", 66.84, 49.42},
		{"175b", 62.04, 56.53},
		/* costmodel.md prints 62.04 for selective-only here, the
		 * 175B SP-only figure repeated; Table 2's own formula gives
		 * (10 + 24/8) / (10 + 24/8 + 5as/(ht)) = 13/21 = 61.90 %
		 * for both (5as/(ht) = 8), which is what we check. */
		{"530b", 58.31, 61.90},
		{"1t", 58.31, 61.90},
	};
	size_t i;
	for (i = 0; i < TPP_ARRAY_LEN(rows); i++) {
		const struct k22_row *r = &k22_rows[i];
		struct fixture *f;
		struct tpp_eval none, sp, sel;
		double sp_pct, sel_pct;

		TPP_ASSERT(!strcmp(r->model, rows[i].model));
		f = k22_fixture(r);
		if (fixture_eval(f, &none))
			continue;
		f->l.sp = 1;
		if (fixture_eval(f, &sp))
			continue;
		f->l.sp = 0;
		f->l.recompute = TPP_RECOMPUTE_SELECTIVE;
		if (fixture_eval(f, &sel))
			continue;
		sp_pct = 100.0 * sp.mem.layer_act_bytes / none.mem.layer_act_bytes;
		sel_pct = 100.0 * sel.mem.layer_act_bytes / none.mem.layer_act_bytes;
		printf("K22 Fig. 7 %-5s SP only %.2f%% (paper %.2f)  selective only %.2f%% (paper %.2f)\n",
		       f->m->name, sp_pct, rows[i].sp_only_pct, sel_pct,
		       rows[i].sel_only_pct);
		CHECK(fabs(sp_pct - rows[i].sp_only_pct) <= 0.1);
		CHECK(fabs(sel_pct - rows[i].sel_only_pct) <= 0.1);
	}
}

/* ------------------------------------------------------------------------ */
/* FLOPs                                                                     */

static void test_flops(void)
{
	struct fixture *f = fixture("175b", "dgx-a100", 64, k22_opts);
	struct tpp_eval none, full, sel;
	double B = 64, s = f->m->seq, L = f->m->layers, h = f->m->hidden;
	double V = f->m->vocab; /* unpadded: tpp_cost_flops_doc, cost.c n_mm */
	double expect, recomputed_fwd, attn_core;

	CHECK(f->m->vocab == 50257);
	CHECK(strstr(tpp_cost_flops_doc, "6 * N_matmul") != NULL);

	f->l = layout(8, 8, 1, 1, 1, 1, TPP_RECOMPUTE_NONE, 0, (int)B);
	if (fixture_eval(f, &none))
		return;
	/* SC21 / K22: 72 B s L h^2 (1 + s/(6h) + V/(12 L h)) */
	expect = 72.0 * B * s * L * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * L * h));
	CHECK_REL(none.model_flops_per_step, expect, 0.005);
	/* and exactly, with the unpadded vocabulary (51200 would be off by
	 * 6.6e-5 of the total) */
	CHECK_REL(none.model_flops_per_step, expect, 1e-9);
	CHECK_REL(none.hw_flops_per_step, none.model_flops_per_step, 1e-12);
	CHECK(none.hfu == none.mfu);

	/* Full recompute executes each layer's forward again:
	 * 24 B s L h^2 + 4 B s^2 L h (costmodel.md 1.7), not the LM head. */
	f->l.recompute = TPP_RECOMPUTE_FULL;
	if (fixture_eval(f, &full))
		return;
	recomputed_fwd = 24.0 * B * s * L * h * h + 4.0 * B * s * s * L * h;
	CHECK_REL(full.model_flops_per_step, none.model_flops_per_step, 1e-12);
	CHECK_REL(full.hw_flops_per_step - full.model_flops_per_step,
		  recomputed_fwd, 1e-9);
	CHECK(full.hfu > full.mfu);

	/* Selective recompute re-runs only QK^T and softmax.V: 4 B s^2 L h. */
	f->l.recompute = TPP_RECOMPUTE_SELECTIVE;
	if (fixture_eval(f, &sel))
		return;
	attn_core = 4.0 * B * s * s * L * h;
	CHECK_REL(sel.model_flops_per_step, none.model_flops_per_step, 1e-12);
	CHECK_REL(sel.hw_flops_per_step - sel.model_flops_per_step, attn_core, 1e-9);
	CHECK(sel.hw_flops_per_step < full.hw_flops_per_step);

	/* Model FLOPs do not depend on the layout. */
	{
		struct tpp_eval other;
		f->l = layout(4, 4, 4, 2, 2, 1, TPP_RECOMPUTE_FULL, 1, (int)B);
		if (!fixture_eval(f, &other))
			CHECK_REL(other.model_flops_per_step, expect, 1e-9);
	}
}

/* ------------------------------------------------------------------------ */
/* Memory monotonicity                                                       */

static void test_memory_monotone(void)
{
	static const struct {
		const char *model;
		int gpus, tp, pp, dp, mbs, vp, gbs;
	} cases[] = {
		{"22b", 8, 8, 1, 1, 4, 1, 4},
		{"175b", 64, 8, 8, 1, 1, 3, 64},
		{"sc21-1.7b", 16, 2, 2, 4, 2, 2, 64},
		{"llama3-70b", 64, 4, 4, 4, 1, 5, 64},
	};
	static const enum tpp_attn attns[] = {TPP_ATTN_UNFUSED, TPP_ATTN_FLASH};
	size_t i, a;
	for (i = 0; i < TPP_ARRAY_LEN(cases); i++)
		for (a = 0; a < TPP_ARRAY_LEN(attns); a++) {
			struct fixture *f = fixture(cases[i].model, "dgx-a100",
						    cases[i].gpus, tpp_cost_opts_default);
			struct tpp_eval e[2][TPP_RECOMPUTE__COUNT];
			int sp, rc, ok = 1;
			f->o.attn = attns[a];
			f->l = layout(cases[i].tp, cases[i].pp, cases[i].dp,
				      cases[i].mbs, cases[i].vp, 0,
				      TPP_RECOMPUTE_NONE, 0, cases[i].gbs);
			for (sp = 0; sp <= 1; sp++)
				for (rc = 0; rc < TPP_RECOMPUTE__COUNT; rc++) {
					f->l.sp = sp;
					f->l.recompute = (enum tpp_recompute)rc;
					ok &= !fixture_eval(f, &e[sp][rc]);
				}
			if (!ok)
				continue;
			for (sp = 0; sp <= 1; sp++)
				for (rc = 1; rc < TPP_RECOMPUTE__COUNT; rc++) {
					/* more recompute never increases */
					CHECK(e[sp][rc].mem.layer_act_bytes <= e[sp][rc - 1].mem.layer_act_bytes);
					CHECK(e[sp][rc].mem.act_bytes <= e[sp][rc - 1].mem.act_bytes);
					CHECK(e[sp][rc].mem.total_bytes <= e[sp][rc - 1].mem.total_bytes);
				}
			/* full recompute strictly below none */
			CHECK(e[0][TPP_RECOMPUTE_FULL].mem.layer_act_bytes <
			      e[0][TPP_RECOMPUTE_NONE].mem.layer_act_bytes);
			/* and selective: it drops the attention core's saved
			 * tensors, the scores unfused, flash attention's output
			 * and softmax statistics (they were kept, so selective
			 * saved nothing with flash and only cost time) */
			for (sp = 0; sp <= 1; sp++)
				CHECK(e[sp][TPP_RECOMPUTE_SELECTIVE].mem.layer_act_bytes <
				      e[sp][TPP_RECOMPUTE_NONE].mem.layer_act_bytes);
			for (rc = 0; rc < TPP_RECOMPUTE__COUNT; rc++) {
				/* SP never increases, and strictly shrinks with tp > 1 */
				CHECK(e[1][rc].mem.layer_act_bytes < e[0][rc].mem.layer_act_bytes);
				CHECK(e[1][rc].mem.act_bytes <= e[0][rc].mem.act_bytes);
				CHECK(e[1][rc].mem.total_bytes <= e[0][rc].mem.total_bytes);
			}
		}
}

/*
 * The layer being recomputed (cost.c mem_eval; Chen et al. 2016): under
 * full recompute each layer keeps only its input, 2 s b h, but its backward
 * first re-runs its forward for one micro-batch, so the peak also holds
 * one layer's whole activations less that checkpoint.  Korthikanti et al.
 * Table 2 (TP without SP, unfused attention, dropout, 16-bit): a layer
 * keeps s b h (10 + 24/t + 5 a s / (h t)) without recomputation.
 * Selective recompute (unfused) re-materialises the scores, 5 a s^2 b / t.
 */
static void test_recompute_working_set(void)
{
	const int tp = 8, mbs = 4;
	struct fixture *f = fixture("22b", "dgx-a100", tp, k22_opts);
	struct tpp_eval none, sel, full;
	double s, b = mbs, h, a, t = tp, L, k;

	f->l = layout(tp, 1, 1, mbs, 1, 0, TPP_RECOMPUTE_NONE, 0, 4 * mbs);
	if (fixture_eval(f, &none))
		return;
	f->l.recompute = TPP_RECOMPUTE_SELECTIVE;
	if (fixture_eval(f, &sel))
		return;
	f->l.recompute = TPP_RECOMPUTE_FULL;
	if (fixture_eval(f, &full))
		return;
	s = f->m->seq, h = f->m->hidden, a = f->m->heads, L = f->m->layers;
	k = f->o.act_temp_factor - 1.0;
	/* pp = 1: one micro-batch in flight; what each layer keeps */
	CHECK_REL(none.mem.act_bytes / L, s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t)), 1e-12);
	CHECK_REL(full.mem.act_bytes / L, 2.0 * s * b * h, 1e-12);
	/* the working set sits in `other`, beside the temporaries' share */
	CHECK_REL(full.mem.other_bytes - k * full.mem.act_bytes -
			  (none.mem.other_bytes - k * none.mem.act_bytes),
		  s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t)) - 2.0 * s * b * h, 1e-12);
	CHECK_REL(sel.mem.other_bytes - k * sel.mem.act_bytes -
			  (none.mem.other_bytes - k * none.mem.act_bytes),
		  5.0 * a * s * s * b / t, 1e-12);
	CHECK_REL(full.mem.total_bytes,
		  full.mem.weights_bytes + full.mem.grads_bytes + full.mem.optim_bytes +
			  full.mem.act_bytes + full.mem.other_bytes + full.mem.reserve_bytes,
		  1e-12);
	/* block recompute: a chunk's backward starts at its last layers,
	 * kept whole and freed before the first recomputed one is re-run --
	 * no working set while one layer of the chunk is kept; recomputing
	 * all of them is full recompute's */
	{
		struct tpp_eval blk;
		f->l.recompute = TPP_RECOMPUTE_FULL;
		f->l.recompute_layers = f->m->layers - 1;
		if (fixture_eval(f, &blk))
			return;
		CHECK_REL(blk.mem.other_bytes - k * blk.mem.act_bytes,
			  none.mem.other_bytes - k * none.mem.act_bytes, 1e-12);
		CHECK(blk.mem.total_bytes < none.mem.total_bytes);
		f->l.recompute_layers = f->m->layers;
		if (fixture_eval(f, &blk))
			return;
		CHECK_REL(blk.mem.other_bytes, full.mem.other_bytes, 1e-12);
		CHECK_REL(blk.mem.total_bytes, full.mem.total_bytes, 1e-12);
		f->l.recompute_layers = 0;
	}
	/* flash attention keeps no scores, only its fp32 log-sum-exp
	 * statistics, 4 a s b / t, which selective recompute's re-run rebuilds */
	f->o.attn = TPP_ATTN_FLASH;
	f->l.recompute = TPP_RECOMPUTE_NONE;
	if (fixture_eval(f, &none))
		return;
	f->l.recompute = TPP_RECOMPUTE_SELECTIVE;
	if (fixture_eval(f, &sel))
		return;
	CHECK_REL(sel.mem.other_bytes - k * sel.mem.act_bytes -
			  (none.mem.other_bytes - k * none.mem.act_bytes),
		  4.0 * a * s * b / t, 1e-12);
}

/*
 * ZeRO-3's gathered parameters (cost.c zero3_unit_params): two units, the
 * one computing and the one prefetched, 16-bit.  FSDP's unit is a layer;
 * DeepSpeed gathers each submodule's own (o.zero3_module_gather), of which
 * a GeLU layer's largest are the MLP's two Linears, 4 h^2 / t each.  Under
 * pipelining (FSDP2) the unit stays the layer.  At the turn to the
 * backward one of the two is the LM head, where that is larger.
 */
static void test_zero3_gather_unit(void)
{
	const int tp = 2, dp = 8;
	struct fixture *f = fixture("sc21-1.7b", "dgx-a100", tp * dp, tpp_cost_opts_default);
	struct tpp_eval e0, lay, mod;
	double h;

	f->l = layout(tp, 1, dp, 1, 1, 0, TPP_RECOMPUTE_FULL, 0, 64);
	if (fixture_eval(f, &e0))
		return;
	f->l.zero = 3;
	if (fixture_eval(f, &lay))
		return;
	f->o.zero3_module_gather = 1;
	if (fixture_eval(f, &mod))
		return;
	h = f->m->hidden;
	CHECK(f->m->ffn == 4 * f->m->hidden && f->m->mlp == TPP_MLP_GELU);
	{
		/* where the activations peak one of the two units is the LM
		 * head, kept gathered into its backward, when that is more */
		double head = (double)tpp_vocab_padded(f->m, tp) * h / tp;
		double u_mod = 4.0 * h * h / tp;
		double u_lay = (tpp_model_params_per_layer(f->m) -
				tpp_model_params_per_layer_replicated(f->m)) / tp +
			       tpp_model_params_per_layer_replicated(f->m);
		CHECK_REL(mod.mem.weights_bytes,
			  e0.mem.weights_bytes / dp + fmax(2.0 * u_mod, u_mod + head) * 2.0, 1e-12);
		CHECK_REL(lay.mem.weights_bytes,
			  e0.mem.weights_bytes / dp + fmax(2.0 * u_lay, u_lay + head) * 2.0, 1e-12);
		CHECK(lay.mem.weights_bytes > mod.mem.weights_bytes);
	}
	/* only the parameters' memory: the step is priced alike */
	CHECK_REL(mod.step_s, lay.step_s, 1e-12);
	CHECK(mod.fits >= lay.fits);
}

/*
 * ZeRO stages (cost.c state_bytes, costmodel.md 3.1): bytes per parameter
 * 2 weights + 4 grads + 12 optimizer, sharded over d from stage 1
 * (optimizer), 2 (+ grads), 3 (+ weights; plus two gathered layers).
 */
static void test_zero_stages(void)
{
	const int tp = 2, dp = 8;
	struct fixture *f = fixture("sc21-1.7b", "dgx-a100", tp * dp,
				    tpp_cost_opts_default);
	struct tpp_eval e[4];
	double d = dp, layer_params;
	int z;

	f->l = layout(tp, 1, dp, 1, 1, 1, TPP_RECOMPUTE_SELECTIVE, 0, 64);
	for (z = 0; z <= 3; z++) {
		f->l.zero = z;
		if (fixture_eval(f, &e[z]))
			return;
	}
	/* TP splits the weight matrices and column-parallel biases; norms and
	 * row-parallel biases stay whole on every rank (costmodel.md 3.2) */
	layer_params = f->m->layers *
		       ((tpp_model_params_per_layer(f->m) -
			 tpp_model_params_per_layer_replicated(f->m)) / tp +
			tpp_model_params_per_layer_replicated(f->m));
	/* zero=0: 2 + 4 + 12 bytes per parameter */
	CHECK_REL(e[0].mem.grads_bytes, 2.0 * e[0].mem.weights_bytes, 1e-12);
	CHECK_REL(e[0].mem.optim_bytes, 6.0 * e[0].mem.weights_bytes, 1e-12);
	CHECK_REL(e[0].mem.layer_states_bytes, 18.0 * layer_params, 1e-12);
	/* zero=1: optimizer / d */
	CHECK_REL(e[1].mem.optim_bytes, e[0].mem.optim_bytes / d, 1e-12);
	CHECK_REL(e[1].mem.grads_bytes, e[0].mem.grads_bytes, 1e-12);
	CHECK_REL(e[1].mem.weights_bytes, e[0].mem.weights_bytes, 1e-12);
	CHECK_REL(e[1].mem.layer_states_bytes, (6.0 + 12.0 / d) * layer_params, 1e-12);
	/* zero=2: + grads / d */
	CHECK_REL(e[2].mem.optim_bytes, e[0].mem.optim_bytes / d, 1e-12);
	CHECK_REL(e[2].mem.grads_bytes, e[0].mem.grads_bytes / d, 1e-12);
	CHECK_REL(e[2].mem.weights_bytes, e[0].mem.weights_bytes, 1e-12);
	CHECK_REL(e[2].mem.layer_states_bytes, (2.0 + 16.0 / d) * layer_params, 1e-12);
	/* zero=3: + weights / d, plus two gathered 16-bit units (prefetch):
	 * two layers, or a layer and the LM head where that is more (as
	 * here: 51200 x h against 12 h^2 + ..., over tp) */
	CHECK_REL(e[3].mem.optim_bytes, e[0].mem.optim_bytes / d, 1e-12);
	CHECK_REL(e[3].mem.grads_bytes, e[0].mem.grads_bytes / d, 1e-12);
	{
		double unit = layer_params / f->m->layers;
		double head = (double)tpp_vocab_padded(f->m, tp) * f->m->hidden / tp;
		CHECK(head > unit);
		CHECK_REL(e[3].mem.weights_bytes,
			  e[0].mem.weights_bytes / d + fmax(2.0 * unit, unit + head) * 2.0, 1e-12);
	}
	CHECK_REL(e[3].mem.layer_states_bytes, 18.0 / d * layer_params, 1e-12);
	for (z = 1; z <= 3; z++) {
		CHECK(e[z].mem.total_bytes < e[z - 1].mem.total_bytes);
		CHECK(e[z].mem.layer_states_bytes < e[z - 1].mem.layer_states_bytes);
		CHECK_REL(e[z].mem.act_bytes, e[0].mem.act_bytes, 1e-12);
	}

	/*
	 * Communication: ZeRO-1 reduce-scatters the accumulated gradients
	 * once per step; ZeRO-2, holding only its shard, reduce-scatters
	 * every micro-batch's (here m = 64 / 8 = 8).  Without overlap each
	 * of the m - 1 earlier reductions is exposed whole; with it, what
	 * its backward does not hide, at least one layer's bucket.
	 */
	CHECK(e[1].microbatches == 8);
	CHECK(e[1].dp_accum_exposed_s == 0);
	CHECK_REL(e[2].dp_grad_s, e[1].dp_grad_s, 1e-12);
	CHECK(e[2].dp_accum_exposed_s >= 7 * e[2].dp_grad_s / f->m->layers * (1 - 1e-12));
	CHECK(e[2].dp_accum_exposed_s <= 7 * e[2].dp_grad_s * (1 + 1e-12));
	CHECK_REL(e[2].t.dp_comm_s, e[1].t.dp_comm_s + e[2].dp_accum_exposed_s, 1e-12);
	{
		struct tpp_eval n1, n2, s1, s2;
		f->o.dp_overlap = 0;
		f->l.zero = 1;
		if (fixture_eval(f, &n1))
			return;
		f->l.zero = 2;
		if (fixture_eval(f, &n2))
			return;
		CHECK_REL(n2.dp_accum_exposed_s, 7 * n2.dp_grad_s, 1e-12);
		CHECK_REL(n2.t.dp_comm_s, n1.t.dp_comm_s + 7 * n1.dp_grad_s, 1e-12);
		/* the simulator adds them too */
		f->l.zero = 1;
		CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s1, NULL) == TPP_OK);
		f->l.zero = 2;
		CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s2, NULL) == TPP_OK);
		/* (and ZeRO-2 zeroes only its shard of the gradient buffer
		 * at the optimizer step, ZeRO-1 all of it) */
		CHECK(n2.t.optimizer_s < n1.t.optimizer_s);
		CHECK_REL(s2.step_s - s1.step_s,
			  7 * n2.dp_grad_s + n2.t.optimizer_s - n1.t.optimizer_s, 1e-9);
		f->o.dp_overlap = 1;
	}

	/* dp = 1: nothing to shard, every stage holds the same states */
	load_cluster("dgx-a100", tp, &f->c);
	f->l = layout(tp, 1, 1, 1, 1, 1, TPP_RECOMPUTE_SELECTIVE, 0, 8);
	for (z = 0; z <= 3; z++) {
		struct tpp_eval one;
		f->l.zero = z;
		if (!fixture_eval(f, &one))
			CHECK_REL(one.mem.layer_states_bytes, 18.0 * layer_params, 1e-12);
	}
}

/*
 * ZeRO-2/3 under pipelining (tpp_zero_pipelined), as FSDP2 under
 * torch.distributed.pipelining runs them: ZeRO-1's traffic (one gradient
 * reduce-scatter and one parameter all-gather per step, not one per
 * micro-batch or layer), the reduce-scatter only after the stage's last
 * backward (exposed whole, where ZeRO-1 hides it under that backward),
 * and ZeRO-1's memory at the peak, 2 + 4 + 12/d bytes per parameter
 * (gathered 16-bit weights and unsharded fp32 gradients kept through the
 * step, plus the fp32 sharded master and Adam states).  With one
 * data-parallel rank nothing is sharded.
 */
static void test_zero_pipelined(void)
{
	const int tp = 2, pp = 2, dp = 4;
	struct fixture *f = fixture("sc21-1.7b", "dgx-a100", tp * pp * dp,
				    tpp_cost_opts_default);
	struct tpp_eval e1, e2, e3, s1, s3;
	double d = dp;

	f->l = layout(tp, pp, dp, 1, 1, 1, TPP_RECOMPUTE_SELECTIVE, 1, 64);
	CHECK(!tpp_zero_pipelined(&f->l) && !tpp_zero_per_microbatch(&f->l));
	if (fixture_eval(f, &e1))
		return;
	f->l.zero = 2;
	CHECK(tpp_zero_pipelined(&f->l) && !tpp_zero_per_microbatch(&f->l));
	CHECK(tpp_layout_check(f->m, &f->c, &f->l, NULL) == TPP_OK);
	if (fixture_eval(f, &e2))
		return;
	f->l.zero = 3;
	CHECK(tpp_zero_pipelined(&f->l) && !tpp_zero_per_microbatch(&f->l));
	if (fixture_eval(f, &e3))
		return;
	/* memory: ZeRO-1's, its optimizer sharded over d */
	CHECK_REL(e3.mem.weights_bytes, e1.mem.weights_bytes, 1e-12);
	CHECK_REL(e3.mem.optim_bytes, e1.mem.optim_bytes, 1e-12);
	CHECK_REL(e3.mem.grads_bytes, e1.mem.grads_bytes, 1e-12);
	CHECK_REL(e3.mem.act_bytes, e1.mem.act_bytes, 1e-12);
	CHECK_REL(e3.mem.total_bytes, e1.mem.total_bytes, 1e-12);
	CHECK_REL(e1.mem.optim_bytes, 6.0 * e1.mem.weights_bytes / d, 1e-12);
	/* the same traffic as ZeRO-1, no per-micro-batch reductions */
	CHECK_REL(e3.dp_grad_s, e1.dp_grad_s, 1e-12);
	CHECK_REL(e3.dp_param_s, e1.dp_param_s, 1e-12);
	CHECK_REL(e3.dp_param_exposed_s, e1.dp_param_exposed_s, 1e-12);
	CHECK(e3.dp_accum_exposed_s == 0);
	CHECK(e3.microbatches == 16);
	/* the gradient reduction exposed whole (overlap on) */
	CHECK(e3.dp_grad_s > 0);
	CHECK_REL(e3.t.dp_comm_s, e3.dp_grad_s + e3.dp_param_exposed_s, 1e-12);
	CHECK(e3.t.dp_comm_s > e1.t.dp_comm_s);
	CHECK_REL(e3.step_s - e1.step_s, e3.t.dp_comm_s - e1.t.dp_comm_s, 1e-9);
	/* ZeRO-2 and ZeRO-3 are the same thing under pipelining */
	CHECK_REL(e2.step_s, e3.step_s, 1e-12);
	CHECK_REL(e2.mem.total_bytes, e3.mem.total_bytes, 1e-12);
	/* per layer the compute is ZeRO-1's: no per-layer gathers beside it */
	CHECK_REL(e3.layer_fwd_s, e1.layer_fwd_s, 1e-12);
	CHECK_REL(e3.layer_bwd_s, e1.layer_bwd_s, 1e-12);
	/*
	 * The simulator starts the reduce-scatter at each rank's last
	 * operation: the first stage, last to finish, exposes all of it, so
	 * the step is ZeRO-1's pipeline plus at least that reduction (ZeRO-1
	 * exposes less, overlapping it with the last backward).
	 */
	f->l.zero = 1;
	CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s1, NULL) == TPP_OK);
	f->l.zero = 3;
	CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s3, NULL) == TPP_OK);
	CHECK(s3.t.dp_comm_s >= e3.dp_grad_s + e3.dp_param_exposed_s - 1e-12);
	CHECK(s1.t.dp_comm_s < s3.t.dp_comm_s);
	CHECK(s3.step_s > s1.step_s);
	CHECK(e3.bound_s <= s3.step_s * (1 + 1e-12));
	/* without overlap ZeRO-1 exposes it whole as well: the same step */
	f->o.dp_overlap = 0;
	f->l.zero = 1;
	CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s1, NULL) == TPP_OK);
	f->l.zero = 3;
	CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s3, NULL) == TPP_OK);
	CHECK_REL(s3.step_s, s1.step_s, 1e-12);
	f->o.dp_overlap = 1;
	/* one data-parallel rank: nothing sharded, the 18 bytes of ZeRO-0 */
	load_cluster("dgx-a100", tp * pp, &f->c);
	f->l = layout(tp, pp, 1, 1, 1, 1, TPP_RECOMPUTE_SELECTIVE, 3, 8);
	CHECK(!tpp_zero_pipelined(&f->l) && !tpp_zero_per_microbatch(&f->l));
	if (fixture_eval(f, &e3))
		return;
	f->l.zero = 0;
	if (fixture_eval(f, &e1))
		return;
	CHECK_REL(e3.mem.total_bytes, e1.mem.total_bytes, 1e-12);
	CHECK_REL(e3.step_s, e1.step_s, 1e-12);
}

/* ------------------------------------------------------------------------ */
/* Collectives                                                               */

/* Two tiers, datasheet figures only: 8-GPU NVLink-like nodes on an IB-like
 * fabric.  No measured busbw, so the model uses bw * LINK_EFF (IB_EFF on
 * the InfiniBand tier), eff_bw. */
static void two_tier(struct tpp_cluster *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "test-2tier");
	snprintf(c->gpu.name, sizeof(c->gpu.name), "test-gpu");
	c->gpu.peak_flops[TPP_PREC_BF16] = 400e12;
	c->gpu.hbm_bytes = 80 * TPP_GiB;
	c->gpu.hbm_Bps = 2e12;
	c->gpus_per_node = 8;
	c->nodes = 16;
	c->ntiers = 2;
	snprintf(c->tiers[0].name, sizeof(c->tiers[0].name), "nv");
	c->tiers[0].kind = TPP_TIER_NVLINK;
	c->tiers[0].span_gpus = 8;
	c->tiers[0].bw_Bps = 300e9;
	c->tiers[0].latency_s = 2e-6;
	snprintf(c->tiers[1].name, sizeof(c->tiers[1].name), "ib");
	c->tiers[1].kind = TPP_TIER_INFINIBAND;
	c->tiers[1].span_gpus = 0;
	c->tiers[1].bw_Bps = 25e9;
	c->tiers[1].latency_s = 5e-6;
	c->tiers[1].nics_per_node = 8;
	c->tiers[1].nic_bps = 200e9;
}

/* Ring time inside one domain of tier t, as documented in cost.c. */
static double ring(const struct tpp_tier *t, enum tpp_coll coll, double S, int n)
{
	double steps = coll == TPP_COLL_ALL_REDUCE ? 2.0 * (n - 1) : n - 1.0;
	double busf = coll == TPP_COLL_ALL_REDUCE ? 2.0 * (n - 1) / n : (n - 1.0) / n;
	return BASE_LAT_S + steps * t->latency_s + S * busf / eff_bw(t);
}

static void test_collectives(void)
{
	struct tpp_cluster c;
	const struct tpp_tier *nv, *ib;
	static const double sizes[] = {4096, 1 << 20, 64.0 * (1 << 20), 1e9};
	static const enum tpp_coll colls[] = {TPP_COLL_ALL_REDUCE,
					      TPP_COLL_ALL_GATHER,
					      TPP_COLL_REDUCE_SCATTER};
	size_t i, k;
	int n;

	two_tier(&c);
	nv = &c.tiers[0];
	ib = &c.tiers[1];
	/* groups that do not tile the 8-GPU domains (TP = 3: GPUs 6, 7, 8)
	 * run at the outer tier's per-GPU rate, as a flat ring there */
	for (i = 0; i < TPP_ARRAY_LEN(sizes); i++) {
		double S = sizes[i];
		CHECK_REL(tpp_coll_time(&c, TPP_COLL_ALL_REDUCE, S, 3, 1),
			  ring(ib, TPP_COLL_ALL_REDUCE, S, 3), 1e-12);
		/* 6 GPUs: GPUs 6, 7 | 8-11 cross on two GPUs' links, slower
		 * than 8 in a node once bandwidth counts (its 5 ring steps
		 * have less latency than the 8-GPU ring's 7) */
		if (S >= 1 << 20)
			CHECK(tpp_coll_time(&c, TPP_COLL_ALL_GATHER, S, 6, 1) >
			      tpp_coll_time(&c, TPP_COLL_ALL_GATHER, S, 8, 1));
	}
	for (i = 0; i < TPP_ARRAY_LEN(sizes); i++) {
		double S = sizes[i];
		for (n = 2; n <= 8; n *= 2) {
			double ar = tpp_coll_time(&c, TPP_COLL_ALL_REDUCE, S, n, 1);
			double ag = tpp_coll_time(&c, TPP_COLL_ALL_GATHER, S, n, 1);
			double rs = tpp_coll_time(&c, TPP_COLL_REDUCE_SCATTER, S, n, 1);
			double alpha_ar = BASE_LAT_S + 2.0 * (n - 1) * nv->latency_s;
			double alpha_ag = BASE_LAT_S + (n - 1.0) * nv->latency_s;
			/* base latency + 2(n-1) hops + S 2(n-1)/n / (bw * 0.8) */
			CHECK_REL(ar, alpha_ar + S * 2.0 * (n - 1) / n / (nv->bw_Bps * LINK_EFF), 1e-12);
			CHECK_REL(ar, ring(nv, TPP_COLL_ALL_REDUCE, S, n), 1e-12);
			CHECK_REL(ag, ring(nv, TPP_COLL_ALL_GATHER, S, n), 1e-12);
			CHECK_REL(rs, ag, 1e-12);
			/* AG / RS: half the bandwidth term of all-reduce */
			CHECK_REL(ag - alpha_ag, 0.5 * (ar - alpha_ar), 1e-9);
		}
		/* one GPU: no communication */
		for (k = 0; k < TPP_ARRAY_LEN(colls); k++)
			CHECK(tpp_coll_time(&c, colls[k], S, 1, 1) == 0.0);
		/* point to point across the node boundary */
		CHECK_REL(tpp_coll_time(&c, TPP_COLL_SEND_RECV, S, 2, 8),
			  BASE_LAT_S + ib->latency_s + S / eff_bw(ib), 1e-12);
		CHECK_REL(tpp_coll_time(&c, TPP_COLL_SEND_RECV, S, 2, 1),
			  BASE_LAT_S + nv->latency_s + S / (nv->bw_Bps * LINK_EFF), 1e-12);
	}
	CHECK(tpp_coll_time(&c, TPP_COLL_ALL_REDUCE, 0, 8, 1) == 0.0);

	for (k = 0; k < TPP_ARRAY_LEN(colls); k++)
		for (i = 0; i < TPP_ARRAY_LEN(sizes); i++) {
			double S = sizes[i];
			/* a pair across two nodes is slower than inside one */
			CHECK(tpp_coll_time(&c, colls[k], S, 2, 8) >
			      tpp_coll_time(&c, colls[k], S, 2, 1));
			/* 16 GPUs span two nodes: slower than 8 in one node */
			CHECK(tpp_coll_time(&c, colls[k], S, 16, 1) >
			      tpp_coll_time(&c, colls[k], S, 8, 1));
			/* a group of 8 strided across 8 nodes is slower than 8
			 * GPUs of one node */
			CHECK(tpp_coll_time(&c, colls[k], S, 8, 8) >
			      tpp_coll_time(&c, colls[k], S, 8, 1));
		}

	/*
	 * Two-tier all-reduce of n = 16 (two nodes of 8), and n = 32 with
	 * stride 2 (four nodes, 4 per node).  The flat ring crosses nodes 2(k-1)
	 * times and is bounded by min(g * outer bw, inner bw); the
	 * hierarchical form is RS inside + AR across on S/g + AG inside; the
	 * model takes the faster, so never slower than the flat ring.
	 */
	{
		static const struct {
			int n, stride, g;
		} groups[] = {{16, 1, 8}, {32, 2, 4}, {64, 1, 8}};
		for (i = 0; i < TPP_ARRAY_LEN(groups); i++) {
			int gn = groups[i].n, g = groups[i].g, kk = gn / g;
			size_t j;
			for (j = 0; j < TPP_ARRAY_LEN(sizes); j++) {
				double S = sizes[j];
				double bw_o = eff_bw(ib) * g;
				double bw_i = nv->bw_Bps * LINK_EFF;
				double bw = bw_o < bw_i ? bw_o : bw_i;
				double steps = 2.0 * (gn - 1), hops_out = 2.0 * (kk - 1);
				double flat = BASE_LAT_S + (steps - hops_out) * nv->latency_s +
					      hops_out * ib->latency_s +
					      S * 2.0 * (gn - 1) / gn / bw;
				/* across nodes: one GPU per node, flat ring on ib */
				double across = BASE_LAT_S + 2.0 * (kk - 1) * ib->latency_s +
						(S / g) * 2.0 * (kk - 1) / kk / eff_bw(ib);
				double hier = ring(nv, TPP_COLL_REDUCE_SCATTER, S, g) + across +
					      ring(nv, TPP_COLL_ALL_GATHER, S, g);
				double t = tpp_coll_time(&c, TPP_COLL_ALL_REDUCE, S, gn,
							 groups[i].stride);
				CHECK(t <= flat * (1 + 1e-12));
				CHECK_REL(t, hier < flat ? hier : flat, 1e-12);
				/* and slower than the same group inside one node */
				CHECK(t > tpp_coll_time(&c, TPP_COLL_ALL_REDUCE, S, g, 1));
			}
		}
	}

	/* Time grows with size, for every collective and group shape. */
	for (k = 0; k < TPP_ARRAY_LEN(colls); k++) {
		static const int shapes[][2] = {{2, 1}, {8, 1}, {16, 1}, {8, 8}, {128, 1}, {32, 4}};
		size_t sh;
		for (sh = 0; sh < TPP_ARRAY_LEN(shapes); sh++) {
			double prev = 0, S;
			for (S = 256; S <= 4e9; S *= 2) {
				double t = tpp_coll_time(&c, colls[k], S, shapes[sh][0], shapes[sh][1]);
				CHECK(t > prev);
				prev = t;
			}
		}
	}

	/* dgx-a100: 8-GPU all-reduce of 64 MiB sits on the measured curve
	 * point (67108864 B, 171.5 GB/s busbw). */
	{
		struct tpp_cluster a;
		double S = 67108864.0, expect;
		load_cluster("dgx-a100", 64, &a);
		CHECK_REL(tpp_tier_busbw_at(&a.tiers[0], TPP_COLL_ALL_REDUCE, S), 171.5e9, 1e-12);
		/* a measured curve is end to end: no latency added on top */
		expect = S * 2.0 * 7 / 8 / 171.5e9;
		CHECK_REL(tpp_coll_time(&a, TPP_COLL_ALL_REDUCE, S, 8, 1), expect, 1e-9);
		/* the curve point, not the 16 GiB saturation figure */
		CHECK(tpp_coll_time(&a, TPP_COLL_ALL_REDUCE, S, 8, 1) >
		      S * 2.0 * 7 / 8 / 234.9e9);
		/* below the curve: linear in S from the hop-model latency
		 * (14 us + 14 steps x 1.9 us) to the smallest size's time */
		{
			double t0 = 32768.0 * 2.0 * 7 / 8 / 1.3e9, a0 = BASE_LAT_S + 14 * 1.9e-6;
			CHECK_REL(tpp_coll_time(&a, TPP_COLL_ALL_REDUCE, 1024.0, 8, 1),
				  a0 + (t0 - a0) * 1024.0 / 32768.0, 1e-9);
			CHECK(tpp_coll_time(&a, TPP_COLL_ALL_REDUCE, 1.0, 8, 1) >= a0);
		}
		/* an H100 reduce-scatter curve that starts at 128 MiB: 16 MiB
		 * costs far less than 128 MiB (not a floor at the first point),
		 * and all-gather borrows the reduce-scatter curve (same ring) */
		{
			struct tpp_cluster h;
			double t16, t128;
			load_cluster("dgx-h100", 8, &h);
			t16 = tpp_coll_time(&h, TPP_COLL_REDUCE_SCATTER, 16777216.0, 8, 1);
			t128 = tpp_coll_time(&h, TPP_COLL_REDUCE_SCATTER, 134217728.0, 8, 1);
			CHECK_REL(t128, 134217728.0 * 7 / 8 / 311e9, 1e-9);
			CHECK(t16 < t128 / 4 && t16 > 16777216.0 * 7 / 8 / 311e9);
			CHECK_REL(tpp_coll_time(&h, TPP_COLL_ALL_GATHER, 134217728.0, 8, 1), t128, 1e-12);
		}
		/* above it: the largest size's time plus the rest at its rate */
		CHECK_REL(tpp_coll_time(&a, TPP_COLL_ALL_REDUCE, 2 * 17179869184.0, 8, 1),
			  2 * 17179869184.0 * 2.0 * 7 / 8 / 234.9e9, 1e-9);
		/* all-gather on a tier without NVLS uses the all-reduce curve */
		CHECK_REL(tpp_coll_time(&a, TPP_COLL_ALL_GATHER, S, 8, 1),
			  S * 7.0 / 8 / 171.5e9, 1e-9);
	}
}

/* ------------------------------------------------------------------------ */
/* tpp_layout_check                                                          */

static void test_layout_check(void)
{
	/* 22b: 48 layers, 64 heads, ffn 24576 */
	struct fixture *f = fixture("22b", "dgx-a100", 64, tpp_cost_opts_default);
	static const struct {
		const char *what;
		struct tpp_layout l;
		const char *msg; /* substring of the message */
	} bad[] = {
		{"tp does not divide heads",
		 {.tp = 3, .pp = 1, .dp = 1, .cp = 1, .mbs = 1, .vp = 1, .gbs = 8}, "heads"},
		{"more model chunks than layers (pp)",
		 {.tp = 1, .pp = 49, .dp = 1, .cp = 1, .mbs = 1, .vp = 1, .gbs = 49}, "layers"},
		{"more model chunks than layers (vp)",
		 {.tp = 1, .pp = 2, .dp = 1, .cp = 1, .mbs = 1, .vp = 25, .gbs = 10}, "layers"},
		{"batch divisibility (dp)",
		 {.tp = 1, .pp = 1, .dp = 4, .cp = 1, .mbs = 1, .vp = 1, .gbs = 10}, "global batch"},
		{"batch divisibility (mbs)",
		 {.tp = 1, .pp = 1, .dp = 1, .cp = 1, .mbs = 3, .vp = 1, .gbs = 10}, "global batch"},
		{"sp with tp=1",
		 {.tp = 1, .pp = 1, .dp = 1, .cp = 1, .mbs = 1, .vp = 1, .sp = 1, .gbs = 8}, "sequence parallel"},
		{"vp>1 with pp=1",
		 {.tp = 1, .pp = 1, .dp = 1, .cp = 1, .mbs = 1, .vp = 2, .gbs = 8}, "pp >= 2"},
		{"interleaving micro-batches not a multiple of pp",
		 {.tp = 1, .pp = 4, .dp = 1, .cp = 1, .mbs = 1, .vp = 2, .gbs = 6}, "multiple of pp"},
		{"degree < 1",
		 {.tp = 0, .pp = 1, .dp = 1, .cp = 1, .mbs = 1, .vp = 1, .gbs = 8}, ">= 1"},
		{"zero stage out of range",
		 {.tp = 1, .pp = 1, .dp = 2, .cp = 1, .mbs = 1, .vp = 1, .zero = 4, .gbs = 8}, "zero"},
	};
	size_t i;
	for (i = 0; i < TPP_ARRAY_LEN(bad); i++) {
		struct tpp_err err;
		struct tpp_eval e;
		int rc;
		memset(&err, 0, sizeof(err));
		rc = tpp_layout_check(f->m, &f->c, &bad[i].l, &err);
		if (rc != TPP_E_INFEASIBLE)
			fprintf(stderr, "layout_check: %s: rc %d\n", bad[i].what, rc);
		CHECK(rc == TPP_E_INFEASIBLE);
		CHECK(err.msg[0] != '\0');
		CHECK_STR_CONTAINS(err.msg, bad[i].msg);
		/* tpp_cost_eval refuses the same layouts */
		CHECK(tpp_cost_eval(f->m, &f->c, &f->o, &bad[i].l, &e, NULL) == TPP_E_INFEASIBLE);
	}
	{
		static const struct tpp_layout good[] = {
			{.tp = 8, .pp = 1, .dp = 1, .cp = 1, .mbs = 4, .vp = 1, .sp = 1,
			 .recompute = TPP_RECOMPUTE_SELECTIVE, .gbs = 4},
			{.tp = 2, .pp = 4, .dp = 2, .cp = 1, .mbs = 1, .vp = 2, .sp = 1,
			 .recompute = TPP_RECOMPUTE_NONE, .zero = 1, .gbs = 16},
			{.tp = 1, .pp = 1, .dp = 8, .cp = 1, .mbs = 2, .vp = 1,
			 .recompute = TPP_RECOMPUTE_FULL, .zero = 3, .gbs = 64},
			{.tp = 4, .pp = 2, .dp = 2, .cp = 2, .mbs = 1, .vp = 1, .sp = 1,
			 .recompute = TPP_RECOMPUTE_SELECTIVE, .zero = 1, .gbs = 8},
		};
		for (i = 0; i < TPP_ARRAY_LEN(good); i++) {
			struct tpp_err err;
			memset(&err, 0, sizeof(err));
			CHECK(tpp_layout_check(f->m, &f->c, &good[i], &err) == TPP_OK);
		}
		/* ring attention needs flash attention's blockwise softmax */
		{
			struct tpp_eval e;
			f->o.attn = TPP_ATTN_UNFUSED;
			CHECK(tpp_layout_invalid(f->m, &f->c, &f->o, &good[3]) == TPP_INV_CP_ATTN);
			CHECK(tpp_cost_eval(f->m, &f->c, &f->o, &good[3], &e, NULL) == TPP_E_INFEASIBLE);
			CHECK(tpp_layout_invalid(f->m, &f->c, &f->o, &good[2]) == TPP_INV_NONE);
			f->o.attn = TPP_ATTN_FLASH;
			CHECK(tpp_layout_invalid(f->m, &f->c, &f->o, &good[3]) == TPP_INV_NONE);
		}
		/* Megatron's validate_args: interleaving on pp = 2 needs
		 * --overlap-p2p-communication; pp 4 needs nothing */
		{
			struct tpp_layout l = good[1];
			l.pp = 2;
			l.dp = 4;
			CHECK(tpp_layout_invalid(f->m, &f->c, &f->o, &l) == TPP_INV_NONE);
			f->o.p2p_overlap = 0;
			CHECK(tpp_layout_invalid(f->m, &f->c, &f->o, &l) == TPP_INV_INTERLEAVE_PP2);
			CHECK(tpp_layout_invalid(f->m, &f->c, &f->o, &good[1]) == TPP_INV_NONE);
			l.vp = 1;
			CHECK(tpp_layout_invalid(f->m, &f->c, &f->o, &l) == TPP_INV_NONE);
			f->o.p2p_overlap = 1;
		}
	}
}

/* ------------------------------------------------------------------------ */
/* Step-time bookkeeping                                                     */

static void check_sane(const struct tpp_model *m, const struct tpp_cost_opts *o,
		       const struct tpp_eval *e)
{
	double sum = 0;
	int i;
	for (i = 0; i < TPP_TIME_PARTS; i++) {
		CHECK(tpp_time_part(&e->t, i) >= 0);
		sum += tpp_time_part(&e->t, i);
	}
	CHECK(e->step_s > 0);
	CHECK_REL(sum, e->step_s, 1e-12);
	CHECK_REL(e->tokens_per_s, (double)e->layout.gbs * m->seq / e->step_s, 1e-12);
	CHECK(e->mfu > 0 && e->mfu < 1);
	CHECK(e->hfu >= e->mfu && e->hfu < 1);
	CHECK(e->microbatches == e->layout.gbs / (e->layout.dp * e->layout.mbs));
	CHECK_REL(e->mem.total_bytes,
		  e->mem.weights_bytes + e->mem.grads_bytes + e->mem.optim_bytes +
		  e->mem.act_bytes + e->mem.other_bytes + e->mem.reserve_bytes, 1e-12);
	/* the slowest stage runs every micro-batch: the per-micro-batch parts
	 * add up to m * stage time (cost.c), its transfers only when they
	 * block the sender; overlapped, the 2 (p v - 1) on the fill and
	 * drain path are exposed, at most all of them */
	if (tpp_p2p_blocking(o, &e->layout)) {
		CHECK_REL(e->t.compute_s + e->t.recompute_s + e->t.tp_comm_s +
			  e->t.cp_comm_s + e->t.pp_p2p_s,
			  e->microbatches * e->stage_mb_s, 1e-9);
	} else {
		CHECK_REL(e->t.compute_s + e->t.recompute_s + e->t.tp_comm_s + e->t.cp_comm_s,
			  e->microbatches * e->stage_mb_s, 1e-9);
		CHECK(e->layout.pp > 1 || e->t.pp_p2p_s == 0);
	}
}

static void test_step_sanity(void)
{
	static const struct {
		const char *model;
		int gpus, tp, pp, dp, mbs, vp, sp, rc, zero, gbs;
	} cases[] = {
		{"175b", 1024, 8, 8, 16, 1, 3, 1, TPP_RECOMPUTE_SELECTIVE, 1, 1536},
		{"22b", 64, 8, 1, 8, 2, 1, 1, TPP_RECOMPUTE_NONE, 0, 256},
		{"llama3-70b", 256, 8, 4, 8, 1, 5, 1, TPP_RECOMPUTE_FULL, 1, 512},
		{"sc21-1.7b", 32, 1, 1, 32, 4, 1, 0, TPP_RECOMPUTE_SELECTIVE, 3, 512},
	};
	size_t i;
	for (i = 0; i < TPP_ARRAY_LEN(cases); i++) {
		struct fixture *f = fixture(cases[i].model, "dgx-a100",
					    cases[i].gpus, tpp_cost_opts_default);
		struct tpp_eval e1, e2;
		f->l = layout(cases[i].tp, cases[i].pp, cases[i].dp, cases[i].mbs,
			      cases[i].vp, cases[i].sp,
			      (enum tpp_recompute)cases[i].rc, cases[i].zero,
			      cases[i].gbs);
		if (fixture_eval(f, &e1))
			continue;
		check_sane(f->m, &f->o, &e1);
		/* twice the data-parallel GPUs, same global batch: half the
		 * micro-batches per pipeline, so about half the compute */
		load_cluster("dgx-a100", 2 * cases[i].gpus, &f->c);
		f->l.dp *= 2;
		if (fixture_eval(f, &e2))
			continue;
		check_sane(f->m, &f->o, &e2);
		CHECK_REL(e2.t.compute_s, 0.5 * e1.t.compute_s, 0.01);
		CHECK(e2.step_s < e1.step_s);
	}
}

/*
 * Bubble (cost.c, costmodel.md 4.1): fill = (t_sum - t_max) / v, where
 * t_sum adds the per-micro-batch time of every stage and t_max is the
 * slowest.  With uniform stages t_sum = p * t_max, so
 * bubble = (p - 1) / v * stage time.  A model with a tiny vocabulary keeps
 * the embedding and LM-head stages within a fraction of a per cent of the
 * others; in general (t_sum <= p * t_max) the closed form bounds it.
 */
static void test_bubble(void)
{
	struct tpp_model m;
	struct tpp_cluster c;
	struct tpp_cost_opts o;
	struct tpp_err err;
	struct tpp_eval e[3];
	int vp, i;

	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "uniform");
	m.layers = 64;
	m.hidden = 4096;
	m.heads = 32;
	m.kv_heads = 32;
	m.head_dim = 128;
	m.ffn = 16384;
	m.mlp = TPP_MLP_GELU;
	m.vocab = 128;
	m.seq = 2048;
	m.tied = 1;
	m.dropout = 1;
	m.global_batch = 32;
	if (tpp_model_check(&m, NULL, &err)) {
		fprintf(stderr, "bubble model: %s\n", err.msg);
		CHECK(0);
		return;
	}
	tpp_cost_opts_default(&o);
	load_cluster("dgx-a100", 8, &c);
	for (vp = 1; vp <= 4; vp *= 2) {
		int k = vp == 1 ? 0 : vp == 2 ? 1 : 2;
		struct tpp_layout l = layout(2, 4, 1, 1, vp, 1, TPP_RECOMPUTE_SELECTIVE, 0, 32);
		double closed;
		if (eval(&m, &c, &o, &l, &e[k]))
			return;
		check_sane(&m, &o, &e[k]);
		closed = (l.pp - 1.0) / vp * e[k].stage_mb_s;
		printf("bubble pp=4 vp=%d: %.6g s, (p-1)/v * stage %.6g s\n", vp,
		       e[k].t.bubble_s, closed);
		CHECK(e[k].t.bubble_s <= closed * (1 + 1e-12));
		CHECK_REL(e[k].t.bubble_s, closed, 0.01);
		/* step time minus DP and optimizer = (m + (p-1)/v) * stage */
		CHECK_REL(e[k].step_s - e[k].t.dp_comm_s - e[k].t.optimizer_s,
			  (e[k].microbatches + (l.pp - 1.0) / vp) * e[k].stage_mb_s, 0.01);
	}
	/* interleaving shrinks the bubble about v times */
	CHECK_REL(e[1].t.bubble_s, e[0].t.bubble_s / 2, 0.02);
	CHECK_REL(e[2].t.bubble_s, e[0].t.bubble_s / 4, 0.03);
	CHECK(e[2].t.bubble_s < e[1].t.bubble_s && e[1].t.bubble_s < e[0].t.bubble_s);

	/* pp = 1: no bubble; real presets: the closed form bounds it */
	{
		struct tpp_layout l = layout(8, 1, 1, 1, 1, 1, TPP_RECOMPUTE_SELECTIVE, 0, 32);
		if (!eval(&m, &c, &o, &l, &e[0]))
			CHECK(e[0].t.bubble_s == 0.0);
	}
	for (i = 0; i < 2; i++) {
		struct fixture *f = fixture(i ? "175b" : "llama3-70b", "dgx-a100",
					    64, tpp_cost_opts_default);
		int v = i ? 3 : 5;
		f->l = layout(8, 4, 2, 1, v, 1, TPP_RECOMPUTE_SELECTIVE, 1, 64);
		if (fixture_eval(f, &e[0]))
			continue;
		CHECK(e[0].t.bubble_s > 0);
		CHECK(e[0].t.bubble_s <= 3.0 / v * e[0].stage_mb_s * (1 + 1e-12));
	}
}

/*
 * `test_cost k22` runs only the reproduction of Korthikanti et al.'s
 * printed numbers, `test_cost model` everything else, no argument both:
 * CTest registers the two halves separately so that a reference mismatch
 * does not hide the rest.
 */
/*
 * The planner's cache of per-micro-batch work gives exactly what the
 * uncached evaluation gives, whatever order layouts come in (a cache key
 * missing a field would show here).
 */
static void test_cache_consistency(void)
{
	const struct tpp_model *m = preset("22b");
	struct tpp_cluster c;
	struct tpp_cost_opts opts[2];
	/* one cache per option set: unfused and flash attention (CP needs
	 * the latter) */
	struct tpp_cost_cache *caches[2] = {tpp_cost_cache_new(), tpp_cost_cache_new()};
	unsigned seed = 12345;
	int i, same = 0, cp2 = 0;
	load_cluster("dgx-a100", 64, &c);
	k22_opts(&opts[0]);
	k22_opts(&opts[1]);
	opts[1].attn = TPP_ATTN_FLASH;
	CHECK(caches[0] != NULL && caches[1] != NULL);
	for (i = 0; i < 5000 && caches[0] && caches[1]; i++) {
		struct tpp_layout l;
		struct tpp_eval a, b;
		struct tpp_cost_cache *cache;
		const struct tpp_cost_opts *op;
		int ra, rb, k;
		memset(&l, 0, sizeof(l));
		seed = seed * 1103515245u + 12345u;
		l.tp = 1 << (seed >> 8) % 4;
		l.pp = 1 << (seed >> 12) % 3;
		l.cp = 1 << (seed >> 14) % 2;
		l.dp = 64 / (l.tp * l.pp * l.cp);
		l.mbs = 1 + (seed >> 16) % 4;
		l.vp = l.pp > 1 ? 1 + (seed >> 18) % 3 : 1;
		l.sp = l.tp > 1 && (seed >> 20) % 2;
		l.tp_overlap = l.sp && (seed >> 21) % 2;
		l.recompute = (enum tpp_recompute)((seed >> 22) % 3);
		l.zero = (seed >> 24) % 4;
		l.zb = l.pp > 1 && l.vp == 1 && (seed >> 26) % 2;
		l.gbs = 64 * 4 * l.pp;
		k = l.cp > 1 ? 1 : (int)((seed >> 27) % 2);
		cache = caches[k];
		op = &opts[k];
		ra = tpp_cost_eval_cached(m, &c, op, &l, cache, &a, NULL);
		rb = tpp_cost_eval(m, &c, op, &l, &b, NULL);
		CHECK(ra == rb);
		if (!ra && !rb) {
			CHECK(a.step_s == b.step_s && a.bound_s == b.bound_s &&
			      a.mem.total_bytes == b.mem.total_bytes);
			same++;
			cp2 += l.cp > 1;
		}
	}
	CHECK(same > 1000 && cp2 > 300);
	tpp_cost_cache_free(caches[0]);
	tpp_cost_cache_free(caches[1]);
}

/*
 * The slowest of N GPUs paces a synchronous step: compute (not
 * communication) scales by 1 + sigma E[max of N standard normals]
 * (Blom: Phi^-1((N - 0.375) / (N + 0.25)); 1.4342 for N = 8, within 0.011
 * of the exact 1.4236).
 */
static void test_straggler(void)
{
	struct fixture *f = fixture("22b", "dgx-a100", 64, k22_opts);
	struct tpp_eval ideal, real;
	double k;
	f->l = layout(8, 2, 4, 1, 1, 1, TPP_RECOMPUTE_FULL, 1, 64);
	CHECK(tpp_straggler_factor(&f->o, 1) == 1.0);
	CHECK_REL(tpp_straggler_factor(&f->o, 8), 1 + 0.02 * 1.4342001596863794, 1e-9);
	CHECK(tpp_straggler_factor(&f->o, 16384) > tpp_straggler_factor(&f->o, 64));
	k = tpp_straggler_factor(&f->o, 64);
	CHECK(fixture_eval(f, &real) == 0);
	f->o.gpu_speed_sigma = 0;
	CHECK(tpp_straggler_factor(&f->o, 64) == 1.0);
	CHECK(fixture_eval(f, &ideal) == 0);
	CHECK_REL(real.t.compute_s, k * ideal.t.compute_s, 1e-12);
	CHECK_REL(real.t.recompute_s, k * ideal.t.recompute_s, 1e-12);
	CHECK_REL(real.t.tp_comm_s, ideal.t.tp_comm_s, 1e-12);
	CHECK(real.step_s > ideal.step_s);
}

/*
 * TP communication overlap: the exposed TP time falls by what the linear
 * GEMMs can hide, and compute grows by 15 % of what was hidden; the step
 * gets shorter.  Needs SP.
 */
/* NVLS all-reduce from 5 GPUs up only (calibration.md 3.3): 2-4 GPUs of
 * an NVLS node run a ring, priced at the ring's (reduce-scatter) curve,
 * not at the measured NVLS curve (they were 19 % fast on H100); 8 keep
 * NVLS.  The stretch of a flat ring inside a node is a ring too. */
static void test_nvls_small_groups(void)
{
	struct fixture *f = fixture("125m", "dgx-h100", 16, tpp_cost_opts_default);
	const struct tpp_tier *t = &f->c.tiers[0];
	const double S = 1073741824.0;
	double ring = tpp_tier_busbw_at(t, TPP_COLL_REDUCE_SCATTER, S);
	double nvls = tpp_tier_busbw_at(t, TPP_COLL_ALL_REDUCE, S);
	CHECK(t->nvls && ring > 0 && nvls > 1.2 * ring);
	CHECK_REL(tpp_coll_time(&f->c, TPP_COLL_ALL_REDUCE, S, 4, 1), S * 1.5 / ring, 1e-12);
	CHECK_REL(tpp_coll_time(&f->c, TPP_COLL_ALL_REDUCE, S, 2, 1), S * 1.0 / ring, 1e-12);
	CHECK_REL(tpp_coll_time(&f->c, TPP_COLL_ALL_REDUCE, S, 8, 1), S * 1.75 / nvls, 1e-12);
	/* 16 GPUs on two nodes: no faster than a ring bounded by the ring
	 * inside the node, or the hierarchical form */
	{
		double flat_ring = S * 2 * 15.0 / 16 / ring;
		double t16 = tpp_coll_time(&f->c, TPP_COLL_ALL_REDUCE, S, 16, 1);
		CHECK(t16 > 0 && (t16 >= flat_ring * (1 - 1e-9) ||
				  t16 >= tpp_coll_time(&f->c, TPP_COLL_REDUCE_SCATTER, S, 8, 1)));
	}
}

/*
 * An InfiniBand tier without a measured figure is taken at 92 % of its
 * datasheet rate (NCCL's 46 of an NDR NIC's 50 GB/s, nccl-tests#290),
 * not NVLink's 80 %: dgx-h200 and dgx-b200 sit behind the same 8 x NDR
 * NICs as dgx-h100, whose measured 47.5 GB/s per GPU they now come
 * within 3 % of instead of 16 %.  RoCE keeps 80 % (l40s-ethernet:
 * 4 x 200 GbE for 8 GPUs, 12.5 GB/s per GPU).
 */
static void test_ib_default_eff(void)
{
	struct tpp_cluster h, b, l;
	const double S = 1e9;
	load_cluster("dgx-h200", 16, &h);
	load_cluster("dgx-b200", 16, &b);
	load_cluster("l40s-ethernet", 16, &l);
	CHECK(h.tiers[1].busbw_Bps[TPP_COLL_ALL_REDUCE] <= 0 && h.tiers[1].bw_Bps == 50e9);
	/* a rail all-reduce, one GPU per node */
	CHECK_REL(tpp_coll_time(&h, TPP_COLL_ALL_REDUCE, S, 2, 8),
		  BASE_LAT_S + 2 * h.tiers[1].latency_s + S / (0.92 * 50e9), 1e-12);
	CHECK_REL(tpp_coll_time(&b, TPP_COLL_REDUCE_SCATTER, S, 2, 8),
		  BASE_LAT_S + b.tiers[1].latency_s + S / 2 / (0.92 * 50e9), 1e-12);
	CHECK(l.tiers[1].kind == TPP_TIER_ROCE);
	CHECK_REL(tpp_coll_time(&l, TPP_COLL_ALL_REDUCE, S, 2, 8),
		  BASE_LAT_S + 2 * l.tiers[1].latency_s + S / (0.80 * 12.5e9), 1e-12);
}

/*
 * An NVLS all-reduce priced from a measured figure without a size curve
 * (dgx-b200: 838 GB/s on 8 GPUs; gb200-nvl72: 850 GB/s) keeps NVLS's
 * constant latency, the 2 steps of the unmeasured NVLS formula (NCCL's
 * NVLS latency does not grow with the GPU count, calibration.md 2.3),
 * not a ring's 2 (n - 1) hops: 72 GPUs of an NVL72 would pay
 * 14 + 142 x 1.9 = 284 us per all-reduce.
 */
static void test_nvls_latency(void)
{
	struct tpp_cluster b, g;
	const double S = 64.0 * (1 << 20);
	load_cluster("dgx-b200", 8, &b);
	load_cluster("gb200-nvl72", 72, &g);
	CHECK(b.tiers[0].nvls && b.tiers[0].curve_n[TPP_COLL_ALL_REDUCE] == 0);
	CHECK_REL(tpp_coll_time(&b, TPP_COLL_ALL_REDUCE, S, 8, 1),
		  BASE_LAT_S + 2 * b.tiers[0].latency_s + S * 2.0 * 7 / 8 / 838.0e9, 1e-12);
	CHECK_REL(tpp_coll_time(&g, TPP_COLL_ALL_REDUCE, S, 72, 1),
		  BASE_LAT_S + 2 * g.tiers[0].latency_s + S * 2.0 * 71 / 72 / 850.0e9, 1e-12);
	/* the ring below 5 GPUs keeps its hops */
	CHECK_REL(tpp_coll_time(&b, TPP_COLL_ALL_REDUCE, S, 4, 1),
		  BASE_LAT_S + 6 * b.tiers[0].latency_s + S * 2.0 * 3 / 4 / 682.2e9, 1e-12);
}

/*
 * A send or an all-to-all on a tier with only an all-reduce figure and its
 * size curve (dgx-a100's NVLink: 234.9 GB/s at 16 GiB, 60 GB/s read off
 * the curve at 4 MiB, 18 at 1 MiB) takes the figure: the curve's mid
 * sizes are the all-reduce's 14 hops of latency, which a send does not
 * take, and its own hop is added on top.  Reading the curve there priced a
 * 4 MiB pipeline send inside a node at 85.7 us against 33.8 (review,
 * 2026-12-07).  Below the hop model's latency nothing goes faster than
 * the figure, and an all-gather still reads the curve end to end.
 */
static void test_fallback_figure(void)
{
	static const double sizes[] = {4096, 1 << 20, 4.0 * (1 << 20), 64.0 * (1 << 20), 1e9};
	struct tpp_cluster a;
	const struct tpp_tier *nv;
	size_t i;

	load_cluster("dgx-a100", 8, &a);
	nv = &a.tiers[0];
	CHECK(nv->curve_n[TPP_COLL_ALL_REDUCE] >= 2 && nv->curve_n[TPP_COLL_SEND_RECV] == 0 &&
	      nv->busbw_Bps[TPP_COLL_SEND_RECV] <= 0 && !nv->nvls);
	CHECK_REL(nv->busbw_Bps[TPP_COLL_ALL_REDUCE], 234.9e9, 1e-12);
	for (i = 0; i < TPP_ARRAY_LEN(sizes); i++) {
		double S = sizes[i];
		CHECK_REL(tpp_coll_time(&a, TPP_COLL_SEND_RECV, S, 2, 1),
			  BASE_LAT_S + nv->latency_s + S / 234.9e9, 1e-12);
		CHECK_REL(tpp_coll_time(&a, TPP_COLL_ALL_TO_ALL, S, 8, 1),
			  BASE_LAT_S + 7 * nv->latency_s + S * 7 / 8 / 234.9e9, 1e-12);
		/* the ring collectives keep the curve, end to end (inside
		 * it: below, each rises from its own hops' latency) */
		if (S >= nv->curve_bytes[TPP_COLL_ALL_REDUCE][0])
			CHECK_REL(tpp_coll_time(&a, TPP_COLL_ALL_GATHER, S, 8, 1) * 2,
				  tpp_coll_time(&a, TPP_COLL_ALL_REDUCE, S, 8, 1), 1e-12);
	}
	/* 4 MiB: 33.8 us, not the 85.7 of the curve plus a hop */
	CHECK(tpp_coll_time(&a, TPP_COLL_SEND_RECV, 4.0 * (1 << 20), 2, 1) < 35e-6);
}

/*
 * An NVLS tier without a measured all-reduce figure (dgx-b200's with its
 * figures taken away): each GPU sends S once and receives it once over
 * the wire at the datasheet rate times NVLS_EFF (0.686, the median of
 * the measured 8-GPU parts), in two steps; below 5 GPUs a ring.  At 0.8
 * (a ring's) 8 B200s came out 1120 GB/s busbw against the 838 measured.
 */
static void test_nvls_unmeasured(void)
{
	struct tpp_cluster b;
	struct tpp_tier *nv;
	const double S = 1e9;
	double t8, bus8;

	load_cluster("dgx-b200", 8, &b);
	nv = &b.tiers[0];
	nv->busbw_Bps[TPP_COLL_ALL_REDUCE] = 0;
	CHECK(nv->nvls && nv->curve_n[TPP_COLL_ALL_REDUCE] == 0);
	t8 = tpp_coll_time(&b, TPP_COLL_ALL_REDUCE, S, 8, 1);
	CHECK_REL(t8, BASE_LAT_S + 2 * nv->latency_s + S * 9.0 / 8 / (900e9 * NVLS_EFF), 1e-12);
	CHECK_REL(tpp_coll_time(&b, TPP_COLL_ALL_REDUCE, S, 6, 1),
		  BASE_LAT_S + 2 * nv->latency_s + S * 7.0 / 6 / (900e9 * NVLS_EFF), 1e-12);
	/* within 15 % of the measured 838 (B200 gets 0.60 of its wire) */
	bus8 = S * 2.0 * 7 / 8 / (t8 - BASE_LAT_S - 2 * nv->latency_s);
	CHECK(bus8 > 838e9 && bus8 < 1.15 * 838e9);
	/* 4 GPUs: a ring at the reduce-scatter figure */
	CHECK_REL(tpp_coll_time(&b, TPP_COLL_ALL_REDUCE, S, 4, 1),
		  BASE_LAT_S + 6 * nv->latency_s + S * 2.0 * 3 / 4 / 682.2e9, 1e-12);
}

/*
 * An NVLS all-reduce of another GPU count than its figure was measured
 * over (measured.nvls_gpus): algbw = B_wire m/(m+1) barely moves with m,
 * so busbw = algbw 2(m-1)/m does (calibration.md 3.3).  From 8 x H200's
 * 473.1 GB/s at 8 GPUs the model gives 405 / 434 / 456 GB/s at 5 / 6 / 7,
 * within 2.5 % of the 414.2 / 435.6 / 460.0 measured (calibration.md 7.1,
 * NVLS ramp by GPU count); taking 473.1 at every count was up to 14 %
 * fast (from 2 MiB, where NCCL switches the all-reduce to NVLS; below,
 * a Ring/LL, not scaled).  On dgx-b200 (838 GB/s on 8 GPUs, no size curve) 6 GPUs are
 * priced at 838 x (5/7) / (7/9) and 8 at 838; gb200-nvl72's 850 does not
 * say over how many GPUs (a slide): 8 GPUs get it as it is; rings (4
 * GPUs) keep theirs.
 */
static void test_nvls_group_size(void)
{
	static const double ramp[][2] = {{5, 414.2}, {6, 435.6}, {7, 460.0}};
	struct tpp_cluster b, g, h;
	const double S = 1e9, S8 = 8.0 * (1 << 30);
	double t6, t8, bus8;
	size_t i;
	/* dgx-h200 prices an NVLS all-reduce from its measured size curve
	 * (the curve path of the model): the busbw it gives 5-7 GPUs, as a
	 * share of 8 GPUs', against the measured ramp's share of 473.1 */
	load_cluster("dgx-h200", 8, &h);
	CHECK(h.tiers[0].nvls && h.tiers[0].curve_n[TPP_COLL_ALL_REDUCE] >= 2);
	bus8 = S8 * 2.0 * 7 / 8 / tpp_coll_time(&h, TPP_COLL_ALL_REDUCE, S8, 8, 1);
	for (i = 0; i < TPP_ARRAY_LEN(ramp); i++) {
		int m = (int)ramp[i][0];
		double bus = S8 * 2.0 * (m - 1) / m / tpp_coll_time(&h, TPP_COLL_ALL_REDUCE, S8, m, 1);
		CHECK_REL(bus / bus8, ((m - 1.0) / (m + 1)) / (7.0 / 9), 1e-12);
		CHECK(fabs((bus / bus8) / (ramp[i][1] / 473.1) - 1) < 0.025);
	}
	/* below 2 MiB NCCL's all-reduce is Ring/LL (calibration.md 5.1): the
	 * curve's bus bandwidth is not scaled there, from 2 MiB it is */
	{
		const double s1 = 1.5 * (1 << 20), s2 = 4.0 * (1 << 20);
		double r1 = (s1 * 2.0 * 4 / 5 / tpp_coll_time(&h, TPP_COLL_ALL_REDUCE, s1, 5, 1)) /
			    (s1 * 2.0 * 7 / 8 / tpp_coll_time(&h, TPP_COLL_ALL_REDUCE, s1, 8, 1));
		double r2 = (s2 * 2.0 * 4 / 5 / tpp_coll_time(&h, TPP_COLL_ALL_REDUCE, s2, 5, 1)) /
			    (s2 * 2.0 * 7 / 8 / tpp_coll_time(&h, TPP_COLL_ALL_REDUCE, s2, 8, 1));
		CHECK_REL(r1, 1.0, 1e-12);
		CHECK_REL(r2, (4.0 / 6) / (7.0 / 9), 1e-12);
	}
	load_cluster("dgx-b200", 8, &b);
	load_cluster("gb200-nvl72", 72, &g);
	CHECK(b.tiers[0].span_gpus == 8 && b.tiers[0].curve_n[TPP_COLL_ALL_REDUCE] == 0);
	t6 = tpp_coll_time(&b, TPP_COLL_ALL_REDUCE, S, 6, 1);
	t8 = tpp_coll_time(&b, TPP_COLL_ALL_REDUCE, S, 8, 1);
	CHECK_REL(t6, BASE_LAT_S + 2 * b.tiers[0].latency_s +
			      S * 2.0 * 5 / 6 / (838.0e9 * (5.0 / 7) / (7.0 / 9)), 1e-12);
	CHECK_REL(t8, BASE_LAT_S + 2 * b.tiers[0].latency_s + S * 2.0 * 7 / 8 / 838.0e9, 1e-12);
	/* algbw nearly constant: 6 GPUs take S (7/6) / B, 8 take S (9/8) / B */
	CHECK_REL((t6 - BASE_LAT_S - 2 * b.tiers[0].latency_s) /
			  (t8 - BASE_LAT_S - 2 * b.tiers[0].latency_s),
		  (7.0 / 6) / (9.0 / 8), 1e-12);
	CHECK(b.tiers[0].nvls_gpus == 8 && g.tiers[0].nvls_gpus == 0);
	CHECK_REL(tpp_coll_time(&g, TPP_COLL_ALL_REDUCE, S, 8, 1),
		  BASE_LAT_S + 2 * g.tiers[0].latency_s + S * 2.0 * 7 / 8 / 850.0e9, 1e-12);
	/* a ring below 5 GPUs is not scaled */
	CHECK_REL(tpp_coll_time(&b, TPP_COLL_ALL_REDUCE, S, 4, 1),
		  BASE_LAT_S + 6 * b.tiers[0].latency_s + S * 2.0 * 3 / 4 / 682.2e9, 1e-12);
}

/*
 * Groups that do not tile the domains, on gb200-nvl72 (72-GPU NVLink
 * racks, IB at 4 x 400 Gb/s per 4-GPU tray: 50 GB/s per GPU, 92 % of it
 * without a measurement).  A group of 32 on 128 GPUs: GPUs 64-95 have 8
 * in rack 0 and 24 in rack 1, so its ring crosses racks through those 8
 * GPUs' NICs, 8 x 46 GB/s (calibration.md 3.3: the aggregate NIC
 * bandwidth of the members on a side bounds a ring across nodes), not
 * through one GPU's 46 GB/s.  A group whose thinnest side is one GPU
 * (64 of stride 8 on 576: GPU 504 alone in rack 7) runs at one GPU's.
 */
static void test_straddle_domains(void)
{
	struct tpp_cluster c;
	const struct tpp_tier *nv, *ib;
	const double S = 1e9;
	double bw, expect;

	load_cluster("gb200-nvl72", 128, &c);
	nv = &c.tiers[0];
	ib = &c.tiers[1];
	CHECK(nv->span_gpus == 72 && ib->busbw_Bps[TPP_COLL_ALL_REDUCE] <= 0);
	CHECK(tpp_cluster_tier_for(&c, 32, 1) == 1);
	/* flat ring over 2 racks, 62 steps, 2 of them across (NCCL's
	 * 2 (k - 1) for all-reduce, k - 1 for the others) */
	bw = fmin(8 * eff_bw(ib), nv->busbw_Bps[TPP_COLL_REDUCE_SCATTER]);
	expect = BASE_LAT_S + 60 * nv->latency_s + 2 * ib->latency_s + S * 2.0 * 31 / 32 / bw;
	CHECK_REL(tpp_coll_time(&c, TPP_COLL_ALL_REDUCE, S, 32, 1), expect, 1e-12);
	/* all 128: 72 | 56 GPUs, bounded by the ring inside a rack */
	bw = nv->busbw_Bps[TPP_COLL_REDUCE_SCATTER];
	expect = BASE_LAT_S + 126 * nv->latency_s + 1 * ib->latency_s + S * 127.0 / 128 / bw;
	CHECK_REL(tpp_coll_time(&c, TPP_COLL_ALL_GATHER, S, 128, 1), expect, 1e-12);
	/* 16 of stride 8 on 144 GPUs: GPUs 7, 15, ..., 127 have 9 | 7 */
	load_cluster("gb200-nvl72", 144, &c);
	bw = fmin(7 * eff_bw(ib), nv->busbw_Bps[TPP_COLL_REDUCE_SCATTER]);
	expect = BASE_LAT_S + 14 * nv->latency_s + 1 * ib->latency_s + S * 15.0 / 16 / bw;
	CHECK_REL(tpp_coll_time(&c, TPP_COLL_REDUCE_SCATTER, S, 16, 8), expect, 1e-12);
	/* 9 of stride 16 on 144 tile the two racks but split 5 | 4 (GPUs
	 * 0-64 | 80-128, or 8-56 | 72-136): 4 members' NICs, two crossings;
	 * priced as 3 | 3 | 3 over three racks before (review, 2026-12-07) */
	bw = fmin(4 * eff_bw(ib), nv->busbw_Bps[TPP_COLL_REDUCE_SCATTER]);
	expect = BASE_LAT_S + 14 * nv->latency_s + 2 * ib->latency_s + S * 2.0 * 8 / 9 / bw;
	CHECK_REL(tpp_coll_time(&c, TPP_COLL_ALL_REDUCE, S, 9, 16), expect, 1e-12);
	/* 64 of stride 8 on 576: one member alone in rack 7, one GPU's NIC */
	load_cluster("gb200-nvl72", 576, &c);
	expect = BASE_LAT_S + 126 * ib->latency_s + S * 2.0 * 63 / 64 / eff_bw(ib);
	CHECK_REL(tpp_coll_time(&c, TPP_COLL_ALL_REDUCE, S, 64, 8), expect, 1e-12);
	/* the 32 on 128: about 8 times faster than a ring through one
	 * GPU's NIC (the pricing before) */
	load_cluster("gb200-nvl72", 128, &c);
	CHECK(7 * tpp_coll_time(&c, TPP_COLL_ALL_REDUCE, S, 32, 1) <
	      BASE_LAT_S + 62 * ib->latency_s + S * 2.0 * 31 / 32 / eff_bw(ib));
}

/*
 * cost.c remembers straddle_min's answers per thread, keyed by the group
 * and the cluster's size: the same collectives priced in another order,
 * across clusters of four sizes (each other's entries in the table), give
 * the same times to the last bit.
 */
static void test_straddle_memo(void)
{
	static const int sizes[4] = {128, 144, 576, 4096};
	static const int strides[5] = {1, 2, 4, 8, 12};
	static struct tpp_cluster cl[4];
	static double first[4][5][100];
	int ci, si, n, pass;
	for (ci = 0; ci < 4; ci++)
		load_cluster("gb200-nvl72", sizes[ci], &cl[ci]);
	for (pass = 0; pass < 2; pass++)
		for (n = 2; n < 100; n++)
			for (si = 0; si < 5; si++)
				for (ci = 0; ci < 4; ci++) {
					/* the second pass walks clusters and
					 * groups backwards */
					int c2 = pass ? 3 - ci : ci, s2 = pass ? 4 - si : si;
					int n2 = pass ? 101 - n : n;
					double t;
					if ((long long)n2 * strides[s2] > sizes[c2])
						continue;
					t = tpp_coll_time(&cl[c2], TPP_COLL_ALL_REDUCE, 1e9, n2,
							  strides[s2]);
					if (!pass)
						first[c2][s2][n2] = t;
					else
						CHECK(t == first[c2][s2][n2]);
				}
}

static void test_tp_overlap(void)
{
	struct fixture *f = fixture("22b", "dgx-a100", 8, k22_opts);
	struct tpp_eval off, on;
	struct tpp_err err;
	/* 22B, tp 8, mbs 4 x 2048 tokens, fp16: N, K of QKV, proj, fc1, fc2 */
	const double T = 4 * 2048.0, t = 8, h = 6144;
	const double dims[4][2] = {{3 * h / t, h}, {h, h / t}, {4 * h / t, h}, {h, 4 * h / t}};
	const enum tpp_prec p = TPP_PREC_FP16;
	double msg = T * h * 2, ag, rs, rs4, step, xf = 0, xb = 0, dc = 0;
	int i;
	f->l = layout(8, 1, 1, 4, 1, 1, TPP_RECOMPUTE_SELECTIVE, 0, 4);
	f->o.gpu_speed_sigma = 0; /* the closed form below is per GPU */
	CHECK(fixture_eval(f, &off) == 0);
	f->l.tp_overlap = 1;
	CHECK(fixture_eval(f, &on) == 0);
	/* Transformer Engine's default methods, by hand (cost.c layer_cost):
	 * ring exchange = tp GEMM chunks of T/tp rows against tp - 1
	 * transfers; pipeline = 4 chunks on all SMs but 16, the last
	 * reduce-scatter exposed; bulk = GEMM on all SMs but 16 beside the
	 * whole collective. */
	ag = tpp_coll_time(&f->c, TPP_COLL_ALL_GATHER, msg, 8, 1);
	rs = tpp_coll_time(&f->c, TPP_COLL_REDUCE_SCATTER, msg, 8, 1);
	rs4 = tpp_coll_time(&f->c, TPP_COLL_REDUCE_SCATTER, msg / 4, 8, 1);
	step = ag / (t - 1);
	for (i = 0; i < 4; i++) {
		double N = dims[i][0], K = dims[i][1], gc, gd, gw;
		if (i == 0 || i == 2) {
			gc = tpp_gemm_time(&f->c.gpu, p, T / t, N, K);
			xf += (t - 1) * fmax(gc, step) - (t - 1) * gc;
			dc += t * gc - tpp_gemm_time(&f->c.gpu, p, T, N, K);
			gd = tpp_gemm_time_sms(&f->c.gpu, p, T, K, N, 16);
			gw = tpp_gemm_time_sms(&f->c.gpu, p, K, N, T, 16);
			xb += fmax(0, ag - gd) + fmax(0, rs - gw);
			dc += gd - tpp_gemm_time(&f->c.gpu, p, T, K, N);
			dc += gw - tpp_gemm_time(&f->c.gpu, p, K, N, T);
		} else {
			gc = tpp_gemm_time_sms(&f->c.gpu, p, T / 4, N, K, 16);
			xf += 3 * fmax(gc, rs4) + rs4 - 3 * gc;
			dc += 4 * gc - tpp_gemm_time(&f->c.gpu, p, T, N, K);
			gd = tpp_gemm_time(&f->c.gpu, p, T / t, K, N);
			xb += (t - 1) * fmax(gd, step) - (t - 1) * gd;
			dc += t * gd - tpp_gemm_time(&f->c.gpu, p, T, K, N);
		}
	}
	/* one micro-batch of 48 layers; without overlap each layer waits for
	 * 2 AG + 2 RS forward and 4 AG + 2 RS backward (SP re-gather); the
	 * embedding's and head's collectives are the same in both runs */
	CHECK_REL(on.t.tp_comm_s - off.t.tp_comm_s, 48 * (xf + xb - (6 * ag + 4 * rs)), 1e-9);
	CHECK_REL(on.t.compute_s - off.t.compute_s, 48 * dc, 1e-9);
	CHECK(on.t.tp_comm_s < off.t.tp_comm_s);
	CHECK(on.t.compute_s > off.t.compute_s);
	/* With a straggler factor k the slowest GPU's GEMMs take k times as
	 * long, and hide k times as much of the transfers beside them: the
	 * exposure is weighed against k gc (it was against gc, the GEMMs
	 * then slowed, charging both). */
	{
		struct tpp_eval on_k, off_k;
		double k, xf_k = 0, xb_k = 0;
		f->o.gpu_speed_sigma = 0.02;
		k = tpp_straggler_factor(&f->o, 8);
		CHECK(k > 1.01);
		CHECK(fixture_eval(f, &on_k) == 0);
		f->l.tp_overlap = 0;
		CHECK(fixture_eval(f, &off_k) == 0);
		f->l.tp_overlap = 1;
		for (i = 0; i < 4; i++) {
			double N = dims[i][0], K = dims[i][1], gc, gd, gw;
			if (i == 0 || i == 2) {
				gc = k * tpp_gemm_time(&f->c.gpu, p, T / t, N, K);
				xf_k += (t - 1) * fmax(gc, step) - (t - 1) * gc;
				gd = k * tpp_gemm_time_sms(&f->c.gpu, p, T, K, N, 16);
				gw = k * tpp_gemm_time_sms(&f->c.gpu, p, K, N, T, 16);
				xb_k += fmax(0, ag - gd) + fmax(0, rs - gw);
			} else {
				gc = k * tpp_gemm_time_sms(&f->c.gpu, p, T / 4, N, K, 16);
				xf_k += 3 * fmax(gc, rs4) + rs4 - 3 * gc;
				gd = k * tpp_gemm_time(&f->c.gpu, p, T / t, K, N);
				xb_k += (t - 1) * fmax(gd, step) - (t - 1) * gd;
			}
		}
		CHECK_REL(on_k.t.tp_comm_s - off_k.t.tp_comm_s, 48 * (xf_k + xb_k - (6 * ag + 4 * rs)), 1e-9);
		CHECK(on_k.t.tp_comm_s < on.t.tp_comm_s);
		f->o.gpu_speed_sigma = 0;
	}
	/* without SP it is not a layout */
	f->l.sp = 0;
	CHECK(tpp_cost_eval(f->m, &f->c, &f->o, &f->l, &on, &err) == TPP_E_INFEASIBLE);
	CHECK_STR_CONTAINS(err.msg, "TP overlap needs sequence parallelism");
}

/* A measured GEMM table replaces the shape model: exact at measured
 * shapes, between the neighbours elsewhere, memory roofline still a floor. */
/* More model chunks than the simulator plays are not a layout (a valid
 * layout must always simulate); the analytic step is never below its
 * bound. */
static void test_chunk_limit(void)
{
	struct fixture *f = fixture("1.3b", "dgx-h100", 8, k22_opts);
	struct tpp_model deep = *f->m;
	struct tpp_eval e;
	struct tpp_err err;
	deep.layers = 2048;
	f->l = layout(1, 2, 4, 1, 600, 0, TPP_RECOMPUTE_FULL, 0, 4800);
	CHECK(tpp_layout_invalid(&deep, &f->c, &f->o, &f->l) == TPP_INV_LAYERS);
	CHECK(tpp_cost_eval(&deep, &f->c, &f->o, &f->l, &e, &err) == TPP_E_INFEASIBLE);
	f->l.vp = 512;
	f->l.gbs = 4 * 512;
	CHECK(tpp_layout_invalid(&deep, &f->c, &f->o, &f->l) == TPP_INV_NONE);
	CHECK(tpp_cost_eval(&deep, &f->c, &f->o, &f->l, &e, &err) == TPP_OK);
	CHECK(e.step_s >= e.bound_s * (1 - 1e-12));
}

/*
 * The GEMM ceiling and the shape it was measured at (cost.c
 * gemm_peak_ceiling): the model prices the measured shape at exactly the
 * measured rate (sustained MSMF on H200 and B200, compute-bound shapes);
 * without the shape, its own wave / K-loop losses come on top (K / (K +
 * 128) here, the shapes filling whole waves); other shapes scale with
 * the ceiling; a ceiling past the datasheet peak is held at the peak.
 */
static void test_gemm_shape(void)
{
	static const struct {
		const char *cluster;
		enum tpp_prec p;
		double rate, m, n, k;
	} ms[] = {
		{"dgx-h200", TPP_PREC_BF16, 755e12, 1536, 2816, 6144},
		{"dgx-h200", TPP_PREC_FP8, 1354e12, 1536, 2816, 10240},
		{"dgx-b200", TPP_PREC_BF16, 1439e12, 3072, 18944, 4608},
		{"dgx-b200", TPP_PREC_FP8, 2788e12, 3072, 18944, 6144},
		{"dgx-a100", TPP_PREC_BF16, 258e12, 2304, 1536, 6144},
		{"dgx-a100", TPP_PREC_FP16, 258e12, 2304, 1536, 6144}, /* bf16's figure */
	};
	size_t i;
	for (i = 0; i < TPP_ARRAY_LEN(ms); i++) {
		struct tpp_cluster c;
		double fl = 2 * ms[i].m * ms[i].n * ms[i].k, t, t2;
		load_cluster(ms[i].cluster, 8, &c);
		t = tpp_gemm_time(&c.gpu, ms[i].p, ms[i].m, ms[i].n, ms[i].k);
		CHECK_REL(fl / t, ms[i].rate, 1e-12);
		/* a shape twice as deep loses less to the K loop: faster */
		t2 = tpp_gemm_time(&c.gpu, ms[i].p, ms[i].m, ms[i].n, 2 * ms[i].k);
		CHECK(2 * fl / t2 > ms[i].rate);
		memset(c.gpu.gemm_shape, 0, sizeof(c.gpu.gemm_shape));
		t2 = tpp_gemm_time(&c.gpu, ms[i].p, ms[i].m, ms[i].n, ms[i].k);
		CHECK_REL(t2 / t, (ms[i].k + 128) / ms[i].k, 1e-12);
	}
	{
		struct tpp_cluster c;
		double t;
		load_cluster("dgx-h200", 8, &c);
		/* 950 of 989 measured on a shape of 1.1 waves: 1.7x that
		 * ceiling is past the peak, held at it */
		c.gpu.gemm_flops[TPP_PREC_BF16] = 950e12;
		c.gpu.gemm_shape[TPP_PREC_BF16][0] = 128 * 12;
		c.gpu.gemm_shape[TPP_PREC_BF16][1] = 256 * 12; /* 144 tiles on 132 SMs */
		c.gpu.gemm_shape[TPP_PREC_BF16][2] = 1 << 20;
		t = tpp_gemm_time(&c.gpu, TPP_PREC_BF16, 1536, 2816, 1 << 20);
		CHECK_REL(2.0 * 1536 * 2816 * (1 << 20) / t, 989e12 * (1 << 20) / ((1 << 20) + 128.0), 1e-12);
	}
	/*
	 * fp8 with no measurement of its own: the GPU's measured 16-bit
	 * fraction of peak x TPP_FP8_OF_16BIT_CEILING, on fp8's peak, at
	 * the 16-bit figure's shape (MI300X: 659 / 1307.4 x 0.93 of 2614.9
	 * = 1225.7 TFLOP/s at 12288x9728x8192); with its own, that; with
	 * no measurement at all, TPP_GEMM_CEILING_DEFAULT.
	 */
	{
		struct tpp_cluster c;
		int q16;
		double fl = 2.0 * 12288 * 9728 * 8192, want = 659e12 / 1307.4e12 * 0.93 * 2614.9e12;
		load_cluster("mi300x", 8, &c);
		CHECK(c.gpu.gemm_flops[TPP_PREC_FP8] == 0);
		CHECK_REL(tpp_gemm_ceiling(&c.gpu, TPP_PREC_FP8, &q16), want / 2614.9e12, 1e-9);
		CHECK(q16 == TPP_PREC_BF16);
		CHECK_REL(fl / tpp_gemm_time(&c.gpu, TPP_PREC_FP8, 12288, 9728, 8192), want, 1e-9);
		/* bf16 itself: its own figure, nothing derived */
		CHECK_REL(tpp_gemm_ceiling(&c.gpu, TPP_PREC_BF16, &q16), 659 / 1307.4, 1e-9);
		CHECK(q16 == -1);
		/* a measured fp8 figure wins */
		load_cluster("dgx-h200", 8, &c);
		CHECK_REL(tpp_gemm_ceiling(&c.gpu, TPP_PREC_FP8, &q16), 1354 / 1979.0, 1e-9);
		CHECK(q16 == -1);
		/* nothing measured: the default */
		memset(c.gpu.gemm_flops, 0, sizeof(c.gpu.gemm_flops));
		CHECK_REL(tpp_gemm_ceiling(&c.gpu, TPP_PREC_FP8, &q16), TPP_GEMM_CEILING_DEFAULT, 1e-12);
		CHECK(q16 == -1);
	}
}

static void test_gemm_table(void)
{
	struct tpp_cluster c;
	struct tpp_gemm_table *t;
	double r1 = 150e12, r2 = 250e12, got;
	load_cluster("dgx-a100", 8, &c);
	t = &c.gpu.gemm_table[TPP_PREC_BF16];
	memset(t, 0, sizeof(*t));
	t->n = 2;
	t->m[0] = 1024; t->nn[0] = 1024; t->k[0] = 1024; t->flops_per_s[0] = (float)r1;
	t->m[1] = 4096; t->nn[1] = 4096; t->k[1] = 4096; t->flops_per_s[1] = (float)r2;
	CHECK_REL(tpp_gemm_time(&c.gpu, TPP_PREC_BF16, 4096, 4096, 4096),
		  2.0 * 4096.0 * 4096 * 4096 / r2, 1e-6);
	CHECK_REL(tpp_gemm_time(&c.gpu, TPP_PREC_BF16, 1024, 1024, 1024),
		  fmax(2.0 * 1024.0 * 1024 * 1024 / r1,
		       3.0 * 1024 * 1024 * 2 / (c.gpu.hbm_Bps * 0.75)), 1e-6);
	/* halfway in log space: the mean of the two rates */
	got = 2.0 * 2048.0 * 2048 * 2048 / tpp_gemm_time(&c.gpu, TPP_PREC_BF16, 2048, 2048, 2048);
	CHECK_REL(got, 0.5 * (r1 + r2), 1e-6);
	/* other precisions keep the shape model */
	CHECK(tpp_gemm_time(&c.gpu, TPP_PREC_FP16, 2048, 2048, 2048) > 0);

	/* fp8 with no table of its own reads the bf16 table, as its
	 * ceiling reads the bf16 figure: rate x TPP_FP8_OF_16BIT_CEILING x
	 * the fp8 / bf16 peak ratio, shape by shape (MI300X) */
	load_cluster("mi300x", 8, &c);
	t = &c.gpu.gemm_table[TPP_PREC_BF16];
	memset(t, 0, sizeof(*t));
	memset(&c.gpu.gemm_table[TPP_PREC_FP8], 0, sizeof(c.gpu.gemm_table[TPP_PREC_FP8]));
	t->n = 2;
	t->m[0] = 1024; t->nn[0] = 1024; t->k[0] = 1024; t->flops_per_s[0] = (float)r1;
	t->m[1] = 8192; t->nn[1] = 8192; t->k[1] = 8192; t->flops_per_s[1] = (float)(2.5 * r2);
	{
		static const double sz[] = {1024, 4096, 8192};
		size_t i;
		double ratio = TPP_FP8_OF_16BIT_CEILING * 2614.9 / 1307.4;
		for (i = 0; i < TPP_ARRAY_LEN(sz); i++) {
			double fl = 2.0 * sz[i] * sz[i] * sz[i];
			double rb = fl / tpp_gemm_time(&c.gpu, TPP_PREC_BF16, sz[i], sz[i], sz[i]);
			double r8 = fl / tpp_gemm_time(&c.gpu, TPP_PREC_FP8, sz[i], sz[i], sz[i]);
			/* the 1024^3 point is memory-bound neither way at these rates */
			CHECK_REL(r8 / rb, ratio, 1e-6);
		}
		CHECK(tpp_gemm_table_spans(&c.gpu, TPP_PREC_FP8, 4096, 4096, 4096));
		CHECK(!tpp_gemm_table_spans(&c.gpu, TPP_PREC_FP8, 512, 4096, 4096));
	}
}

/*
 * Core attention (cost.c tpp_attn_core_time).  Flash on the dgx-h100
 * preset reproduces the cuDNN measurements it is built from (FA3 paper,
 * H100 BF16 hd 128: causal forward 529, backward 518 TFLOP/s at 8k; 484 /
 * 465 at 2k; between two sizes the log-linear mean), taken as fractions
 * of the GEMM rate they were measured beside (the burst MAMF, 794.5) and
 * applied to the preset's sustained one (MSMF, 755): scaled by
 * 755 / 794.5.  The backward counts 2.5x the forward's FLOPs (it
 * recomputes QK^T), the masked half is skipped; unfused computes the
 * whole score matrix, backward 2x.
 */
static void test_attention_core(void)
{
	struct tpp_cluster c;
	const double dh = 128, heads = 16;
	double ff, fb, uf, ub, flops_f, s, sus;
	load_cluster("dgx-h100", 8, &c);
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_BF16], 755e12, 1e-12);
	sus = 755.0 / 794.5;

	s = 8192;
	tpp_attn_core_time(&c.gpu, TPP_PREC_BF16, TPP_ATTN_FLASH, heads, heads, s, s, dh, &ff, &fb);
	flops_f = 4.0 * s * s * dh * heads / 2;
	CHECK_REL(flops_f / ff, sus * 529e12, 1e-9);
	CHECK_REL(2.5 * flops_f / fb, sus * 518e12, 1e-9);
	s = 2048;
	tpp_attn_core_time(&c.gpu, TPP_PREC_BF16, TPP_ATTN_FLASH, heads, heads, s, s, dh, &ff, &fb);
	flops_f = 4.0 * s * s * dh * heads / 2;
	CHECK_REL(flops_f / ff, sus * 484e12, 1e-9);
	CHECK_REL(2.5 * flops_f / fb, sus * 465e12, 1e-9);
	s = 2048 * 1.4142135623730951; /* halfway to 4096 in log2 */
	tpp_attn_core_time(&c.gpu, TPP_PREC_BF16, TPP_ATTN_FLASH, heads, heads, s, s, dh, &ff, &fb);
	flops_f = 4.0 * s * s * dh * heads / 2;
	CHECK_REL(flops_f / ff, sus * (0.5 * (484e12 + 518e12)), 1e-9);
	/* beyond the table: its last rate */
	s = 65536;
	tpp_attn_core_time(&c.gpu, TPP_PREC_BF16, TPP_ATTN_FLASH, heads, heads, s, s, dh, &ff, &fb);
	CHECK_REL(4.0 * s * s * dh * heads / 2 / ff, sus * 539e12, 1e-9);

	/* unfused: the full score matrix as two batched GEMMs, backward 2x */
	s = 2048;
	tpp_attn_core_time(&c.gpu, TPP_PREC_BF16, TPP_ATTN_UNFUSED, heads, heads, s, s, dh, &uf, &ub);
	CHECK_REL(ub, 2.0 * uf, 1e-12);
	CHECK(uf >= 4.0 * s * s * dh * heads / (c.gpu.peak_flops[TPP_PREC_BF16] *
						 (c.gpu.gemm_flops[TPP_PREC_BF16] /
						  c.gpu.peak_flops[TPP_PREC_BF16])));
	/* GQA (4 K/V heads for 16 query heads) reads a quarter of K and V:
	 * where the traffic bounds the kernel (short sequences) it is
	 * faster, where the FLOPs do (2k) the same */
	{
		double gf, gb;
		s = 128;
		tpp_attn_core_time(&c.gpu, TPP_PREC_BF16, TPP_ATTN_FLASH, heads, heads, s, s, dh, &ff, &fb);
		tpp_attn_core_time(&c.gpu, TPP_PREC_BF16, TPP_ATTN_FLASH, heads, heads / 4, s, s, dh, &gf, &gb);
		CHECK(gf < ff && gb < fb);
		s = 2048;
		tpp_attn_core_time(&c.gpu, TPP_PREC_BF16, TPP_ATTN_FLASH, heads, heads, s, s, dh, &ff, &fb);
		tpp_attn_core_time(&c.gpu, TPP_PREC_BF16, TPP_ATTN_FLASH, heads, heads / 4, s, s, dh, &gf, &gb);
		CHECK_REL(gf, ff, 1e-12);
		CHECK_REL(gb, fb, 1e-12);
	}
	/* fp8 recipes keep attention in bf16 */
	{
		double f8, b8;
		tpp_attn_core_time(&c.gpu, TPP_PREC_FP8, TPP_ATTN_FLASH, heads, heads, s, s, dh, &f8, &b8);
		tpp_attn_core_time(&c.gpu, TPP_PREC_BF16, TPP_ATTN_FLASH, heads, heads, s, s, dh, &ff, &fb);
		CHECK_REL(f8, ff, 1e-12);
		CHECK_REL(b8, fb, 1e-12);
	}
}

/* FP8 current scaling reads every quantized tensor once more than delayed
 * scaling (TE docs); nothing changes outside fp8. */
static void test_fp8_recipe(void)
{
	struct fixture *f = fixture("llama3-8b", "dgx-h100", 8, tpp_cost_opts_default);
	struct tpp_eval cur, del;
	f->l = layout(1, 1, 8, 1, 1, 0, TPP_RECOMPUTE_NONE, 1, 64);
	CHECK(f->o.fp8_recipe == TPP_FP8_CURRENT);
	f->o.prec = TPP_PREC_FP8;
	CHECK(!fixture_eval(f, &cur));
	f->o.fp8_recipe = TPP_FP8_DELAYED;
	CHECK(!fixture_eval(f, &del));
	CHECK(cur.layer_fwd_s > del.layer_fwd_s);
	CHECK(cur.layer_bwd_s > del.layer_bwd_s);
	/* the extra read is HBM traffic: a few percent of a layer, not more */
	CHECK(cur.layer_fwd_s < 1.10 * del.layer_fwd_s);
	f->o.prec = TPP_PREC_BF16;
	CHECK(!fixture_eval(f, &del));
	f->o.fp8_recipe = TPP_FP8_CURRENT;
	CHECK(!fixture_eval(f, &cur));
	CHECK(cur.layer_fwd_s == del.layer_fwd_s);
}

/*
 * FP8 activations (cost.c act_per_layer): Transformer Engine keeps the
 * QKV, FC1 and FC2 inputs for the weight gradient in 1 byte, and the
 * out-projection's input gains a 1-byte copy beside the 16-bit attention
 * output flash attention keeps (unfused: 1 byte instead of 2).  Llama 3
 * 70B, tp 4 with SP, one layer: 2 s b h / t + s b f / t - s b q_dim / t
 * less with flash, 2 s b h / t + s b f / t + s b q_dim / t unfused.
 */
/* The fixture's layout in bf16 and in fp8; nonzero (a test failure) if
 * either evaluation fails. */
static int eval_bf16_fp8(struct fixture *f, struct tpp_eval *bf, struct tpp_eval *f8)
{
	f->o.prec = TPP_PREC_BF16;
	if (fixture_eval(f, bf))
		return -1;
	f->o.prec = TPP_PREC_FP8;
	return fixture_eval(f, f8);
}

static void test_fp8_activations(void)
{
	const int tp = 4;
	struct fixture *f = fixture("llama3-70b", "dgx-h100", 8, tpp_cost_opts_default);
	struct tpp_eval bf, f8;
	double s = f->m->seq, h = f->m->hidden, fw = f->m->ffn;
	double qd = (double)f->m->heads * f->m->head_dim, L = f->m->layers;
	int un;

	f->l = layout(tp, 1, 2, 1, 1, 1, TPP_RECOMPUTE_NONE, 1, 16);
	for (un = 0; un <= 1; un++) {
		f->o.attn = un ? TPP_ATTN_UNFUSED : TPP_ATTN_FLASH;
		if (eval_bf16_fp8(f, &bf, &f8))
			return;
		CHECK_REL(bf.mem.layer_act_bytes - f8.mem.layer_act_bytes,
			  L * s * (2 * h + fw + (un ? qd : -qd)) / tp, 1e-9);
		CHECK(f8.mem.act_bytes < bf.mem.act_bytes);
	}
	/* full recompute keeps the 16-bit layer input either way */
	f->o.attn = TPP_ATTN_FLASH;
	f->l.recompute = TPP_RECOMPUTE_FULL;
	if (eval_bf16_fp8(f, &bf, &f8))
		return;
	CHECK_REL(bf.mem.layer_act_bytes, f8.mem.layer_act_bytes, 1e-12);
}

/*
 * fp8 weights (tpp_fp8_params).  With the distributed optimizer the
 * layers' weights are fp8 (--fp8-param-gather): the 2 bytes of the fp8
 * weight and its transpose, as a 16-bit weight, and the parameter
 * all-gather moves 1 byte per layer parameter, 2 per embedding / LM-head
 * one.  Without it (zero 0) the weights stay 16-bit and Transformer
 * Engine caches their fp8 copy: 2 bytes more per layer parameter.
 * Llama 3 8B, dp 8, one GPU a rank's whole model.
 */
static void test_fp8_params(void)
{
	struct fixture *f = fixture("llama3-8b", "dgx-h100", 8, tpp_cost_opts_default);
	struct tpp_eval bf[2], f8[2];
	double Lp = f->m->layers * tpp_model_params_per_layer(f->m), P;
	int z;
	for (z = 0; z <= 1; z++) {
		f->l = layout(1, 1, 8, 1, 1, 0, TPP_RECOMPUTE_FULL, z, 64);
		if (eval_bf16_fp8(f, &bf[z], &f8[z]))
			return;
		CHECK(tpp_fp8_params(&f->o, &f->l) == z);
	}
	/* the rank's parameters: the model's but its final RMSNorm's h,
	 * which the memory leaves out (tpp_model_params_total counts it) */
	P = bf[0].mem.weights_bytes / 2.0;
	CHECK_REL(P, tpp_model_params_total(f->m), 1e-5);
	CHECK_REL(f8[0].mem.weights_bytes, 2.0 * P + 2.0 * Lp, 1e-12);
	CHECK_REL(f8[1].mem.weights_bytes, bf[1].mem.weights_bytes, 1e-12);
	CHECK_REL(bf[1].dp_param_s, tpp_coll_time(&f->c, TPP_COLL_ALL_GATHER, 2.0 * P, 8, 1), 1e-12);
	CHECK_REL(f8[1].dp_param_s, tpp_coll_time(&f->c, TPP_COLL_ALL_GATHER, 2.0 * P - Lp, 8, 1), 1e-12);
	/* not under ZeRO-2/3 with pipelining (FSDP2, TorchTitan) */
	f->l = layout(1, 2, 4, 1, 1, 0, TPP_RECOMPUTE_FULL, 3, 64);
	f->o.prec = TPP_PREC_FP8;
	CHECK(!tpp_fp8_params(&f->o, &f->l));
}

/*
 * Block recompute (Megatron --recompute-method block): the first N layers
 * of each model chunk are recomputed.  Llama 3.1 405B on pp 16 x vp 4 = 64
 * chunks of 126 layers: 62 chunks of 2 and 2 of 1, so N = 1 re-runs 64 of
 * 126 layers.  Recompute time takes that share; activation memory is
 * counted per rank from its own chunks; the planner's block size is the
 * fewest layers that fit.
 */
static void test_block_recompute(void)
{
	struct fixture *f = fixture("llama3.1-405b", "gb200-nvl72", 256,
				    tpp_cost_opts_default);
	struct tpp_eval full, blk, none;
	struct tpp_mem_breakdown mem;
	double phi = 64.0 / 126.0;
	int n, fits;
	char lb[256];

	f->l = layout(4, 16, 4, 1, 4, 1, TPP_RECOMPUTE_FULL, 1, 1536);
	f->o.prec = TPP_PREC_FP8;
	CHECK(tpp_max_chunk_layers(f->m, &f->l) == 2);
	CHECK_REL(tpp_recompute_share(f->m, &f->l), 1.0, 1e-12);
	CHECK(!fixture_eval(f, &full));
	f->l.recompute_layers = 1;
	CHECK_REL(tpp_recompute_share(f->m, &f->l), phi, 1e-12);
	CHECK(tpp_layout_invalid(f->m, &f->c, &f->o, &f->l) == TPP_INV_NONE);
	CHECK(!fixture_eval(f, &blk));
	f->l.recompute = TPP_RECOMPUTE_NONE;
	f->l.recompute_layers = 0;
	CHECK(tpp_cost_memory(f->m, &f->c, &f->o, &f->l, NULL, &none.mem, &fits) == TPP_OK);
	/* activations, counted per chunk: the first rank holds chunks 0, 16,
	 * 32 and 48 of 1, 2, 2 and 2 layers; recomputing the first layer of
	 * each, a chunk keeps one layer's input and the rest whole, and the
	 * peak is the interleaved order played out with those sizes */
	{
		double lk[4], xb[4], pk;
		int j;
		for (j = 0; j < 4; j++)
			lk[j] = tpp_chunk_layers(126, 64, j * 16);
		CHECK(lk[0] == 1 && lk[1] == 2 && lk[2] == 2 && lk[3] == 2);
		pk = tpp_interleaved_peak(lk, 16, 4, 384, 0);
		for (j = 0; j < 4; j++)
			xb[j] = full.mem.layer_act_bytes / pk +
				none.mem.layer_act_bytes / pk * (lk[j] - 1);
		CHECK_REL(blk.mem.layer_act_bytes, tpp_interleaved_peak(xb, 16, 4, 384, 0), 1e-9);
	}
	CHECK_REL(blk.t.recompute_s, phi * full.t.recompute_s, 1e-9);
	CHECK(blk.step_s < full.step_s);
	/* the planner's choice: 1 layer per chunk fits on GB200, 0 (all)
	 * does not exist below it */
	f->l.recompute = TPP_RECOMPUTE_FULL;
	n = tpp_recompute_layers_min(f->m, &f->c, &f->o, &f->l, NULL);
	CHECK(n == 1);
	f->l.recompute_layers = n;
	CHECK(tpp_cost_memory(f->m, &f->c, &f->o, &f->l, NULL, &mem, &fits) == TPP_OK && fits);
	tpp_layout_format(&f->l, lb, sizeof(lb));
	CHECK_STR_CONTAINS(lb, ",recompute_layers=1");
	/* a block size is a full-recompute setting, at most a chunk */
	f->l.recompute_layers = 3;
	CHECK(tpp_layout_invalid(f->m, &f->c, &f->o, &f->l) == TPP_INV_RECOMPUTE);
	f->l.recompute_layers = 1;
	f->l.recompute = TPP_RECOMPUTE_SELECTIVE;
	CHECK(tpp_layout_invalid(f->m, &f->c, &f->o, &f->l) == TPP_INV_RECOMPUTE);
	/* on H100 (80 GB) nothing short of every layer fits: 0 */
	load_cluster("dgx-h100", 256, &f->c);
	f->l.recompute = TPP_RECOMPUTE_FULL;
	f->l.recompute_layers = 0;
	f->l.zero = 1;
	n = tpp_recompute_layers_min(f->m, &f->c, &f->o, &f->l, NULL);
	CHECK(n == 0 || n == -1);
}

/* ZeRO-3 with overlap: each layer's gather runs beside its forward and
 * takes Calculon's 15 % of the compute it hides behind (NVLink tier). */
static void test_zero3_overlap_share(void)
{
	struct fixture *f = fixture("llama3-8b", "dgx-h100", 8, tpp_cost_opts_default);
	struct tpp_eval on, off;
	double pl = tpp_model_params_per_layer(f->m), ag;
	f->l = layout(1, 1, 8, 1, 1, 0, TPP_RECOMPUTE_NONE, 3, 64);
	f->o.gpu_speed_sigma = 0;
	f->o.dp_overlap = 0;
	CHECK(!fixture_eval(f, &off));
	f->o.dp_overlap = 1;
	CHECK(!fixture_eval(f, &on));
	ag = tpp_coll_time(&f->c, TPP_COLL_ALL_GATHER, pl * 2.0, 8, 1);
	CHECK(ag < off.layer_fwd_s);
	CHECK_REL(on.layer_fwd_s - off.layer_fwd_s, 0.15 * ag, 1e-9);
	/* no sharded parameters, no per-layer collectives beside compute */
	f->l.zero = 1;
	CHECK(!fixture_eval(f, &on));
	f->o.dp_overlap = 0;
	CHECK(!fixture_eval(f, &off));
	CHECK(on.layer_fwd_s == off.layer_fwd_s);
}

/*
 * ZeRO-3 bounded by its implementation (o.zero3_rate_Bps: DeepSpeed of
 * 2021, TPP_DEEPSPEED_2021_ZERO3_BPS): a rate above NCCL's changes
 * nothing; where the traffic outlasts the compute it hides behind, the
 * step is that traffic: per micro-batch the forward gather, the full
 * recompute's and the backward's, and the gradient reduce-scatter (2
 * bytes a parameter with grads16, as DeepSpeed's fp16), each S / R for
 * the S = 2P bytes of the model's P parameters, and the first layer's gather and the
 * last layer's reduce-scatter nothing hides: 4 S / R (1 + 1/L).  So
 * halving the rate adds 4 S / (2R) (1 + 1/L), by hand: 175B on 1536
 * A100s, one sequence each, 21.25 against 42.5 GB/s.  The simulator
 * takes that traffic as its tail, the same difference.
 */
static void test_zero3_rate(void)
{
	struct fixture *f = fixture("175b", "dgx-a100", 1536, tpp_cost_opts_megatron);
	struct tpp_eval e0, big, r1, r2;
	struct tpp_eval s1, s2;
	/* P: the layers, the word embedding over the vocabulary padded to
	 * a multiple of 128 (50257 -> 50304, Megatron) and the positions */
	double L = f->m->layers, R = 21.25e9;
	double S = 2.0 * (L * tpp_model_params_per_layer(f->m) +
			  (50304.0 + f->m->seq) * f->m->hidden);
	f->l = layout(1, 1, 1536, 1, 1, 0, TPP_RECOMPUTE_FULL, 3, 1536);
	f->o.gpu_speed_sigma = 0;
	f->o.dp_overlap = 1;
	f->o.grads16 = 1;
	CHECK(!fixture_eval(f, &e0));
	f->o.zero3_rate_Bps = 1e15;
	CHECK(!fixture_eval(f, &big));
	CHECK(big.step_s == e0.step_s && big.t.dp_comm_s == e0.t.dp_comm_s);
	f->o.zero3_rate_Bps = R;
	CHECK(!fixture_eval(f, &r1));
	CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s1, NULL) == TPP_OK);
	f->o.zero3_rate_Bps = 2 * R;
	CHECK(!fixture_eval(f, &r2));
	CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s2, NULL) == TPP_OK);
	/* comm-bound at both rates: the traffic alone outlasts the compute */
	CHECK(4 * S / (2 * R) > r2.t.compute_s + r2.t.recompute_s);
	CHECK_REL(r1.step_s - r2.step_s, 4 * S / (2 * R) * (1 + 1 / L), 1e-9);
	CHECK_REL(s1.step_s - s2.step_s, 4 * S / (2 * R) * (1 + 1 / L), 1e-9);
	/* and the step is at least the traffic (one ~S / R per pass) */
	CHECK(r1.step_s >= 4 * S / R && r1.step_s > 2 * e0.step_s);
	/* the memory is not the rate's business */
	CHECK(r1.mem.total_bytes == e0.mem.total_bytes);
}

/* Faster GEMMs never make a ZeRO-3 layout with context parallelism
 * slower: the prefetched gathers hide under the layers' whole time, the
 * exposed CP ring included (it was left out, so less compute exposed the
 * gathers by the whole drop while the ring's exposure grew: slower). */
static void test_zero3_cp_faster_gemm(void)
{
	struct fixture *f = fixture("1.3b", "dgx-h100", 8, tpp_cost_opts_default);
	struct tpp_eval base, fast;
	int p;
	f->l = layout(1, 1, 4, 1, 1, 0, TPP_RECOMPUTE_NONE, 3, 128);
	f->l.cp = 2;
	f->o.gpu_speed_sigma = 0;
	CHECK(!fixture_eval(f, &base));
	CHECK(base.t.cp_comm_s > 0 && base.t.dp_comm_s > 0);
	for (p = 0; p < TPP_PREC__COUNT; p++) {
		f->c.gpu.peak_flops[p] *= 2;
		f->c.gpu.gemm_flops[p] *= 2;
	}
	CHECK(!fixture_eval(f, &fast));
	CHECK(fast.t.compute_s < base.t.compute_s);
	CHECK(fast.step_s <= base.step_s);
}

/* Full and selective recompute re-run the attention core and, under CP,
 * its K/V ring: the exposed forward part of the ring comes once more
 * (llama3-8b, tp 2 x cp 8 on A100s, the ring across InfiniBand: it was
 * left out, 5.6 % of that step); block recompute its share of it. */
static void test_cp_recompute(void)
{
	struct fixture *f = fixture("llama3-8b", "dgx-a100", 64, tpp_cost_opts_default);
	struct tpp_eval none, full, sel, block;
	f->l = layout(2, 1, 4, 1, 1, 1, TPP_RECOMPUTE_NONE, 1, 128);
	f->l.cp = 8;
	f->o.gpu_speed_sigma = 0;
	CHECK(!fixture_eval(f, &none));
	f->l.recompute = TPP_RECOMPUTE_FULL;
	CHECK(!fixture_eval(f, &full));
	f->l.recompute = TPP_RECOMPUTE_SELECTIVE;
	CHECK(!fixture_eval(f, &sel));
	f->l.recompute = TPP_RECOMPUTE_FULL;
	f->l.recompute_layers = f->m->layers / 2;
	CHECK(!fixture_eval(f, &block));
	CHECK(none.t.cp_comm_s > 0);
	/* none = mb L (ef + eb), full = mb L (2 ef + eb): the difference is
	 * the forward part, the same for selective, half with half the
	 * layers recomputed */
	CHECK(full.t.cp_comm_s > none.t.cp_comm_s * 1.05);
	CHECK_REL(sel.t.cp_comm_s - none.t.cp_comm_s, full.t.cp_comm_s - none.t.cp_comm_s, 1e-9);
	CHECK_REL(block.t.cp_comm_s - none.t.cp_comm_s, 0.5 * (full.t.cp_comm_s - none.t.cp_comm_s), 1e-9);
}

/* Overlapped pipeline transfers (interleaved, Megatron's overlap) do not
 * pace a rank: the analytic step exposes only the 2 (p v - 1) on the fill
 * and drain path, as the simulator's breakdown (it charged every one,
 * 0.21 s against 0.02 s simulated for 175B on 1024 A100s). */
static void test_p2p_overlap_analytic(void)
{
	struct fixture *f = fixture("175b", "dgx-a100", 1024, tpp_cost_opts_default);
	static struct tpp_stages st;
	struct tpp_eval a, sim, blk;
	struct tpp_err err;
	f->l = layout(8, 8, 16, 1, 2, 1, TPP_RECOMPUTE_SELECTIVE, 1, 1536);
	CHECK(!tpp_p2p_blocking(&f->o, &f->l));
	CHECK(!fixture_eval(f, &a));
	CHECK(tpp_cost_stages(f->m, &f->c, &f->o, &f->l, &st, &err) == TPP_OK);
	CHECK(st.p2p_s > 0);
	CHECK_REL(a.t.pp_p2p_s, 2.0 * (8 * 2 - 1) * st.p2p_s, 1e-9);
	CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &sim, NULL) == TPP_OK);
	CHECK(fabs(a.step_s - sim.step_s) < 0.02 * sim.step_s);
	/* the simulated breakdown takes that share as it is (it took the
	 * fill/drain fraction of it once more) */
	CHECK_REL(sim.t.pp_p2p_s, a.t.pp_p2p_s, 1e-12);
	/* blocking, each one paces its rank */
	f->o.p2p_overlap = 0;
	CHECK(!fixture_eval(f, &blk));
	CHECK_REL(blk.t.pp_p2p_s, a.microbatches * 2.0 * 2 * st.p2p_s, 1e-9);
	CHECK(blk.step_s > a.step_s);
}

/* ZB-H1 with fewer micro-batches than stages: the analytic step follows
 * the simulated one ((p - m) W more bubble; the closed form for m >= p
 * was up to 28 % short of it). */
static void test_zb_few_microbatches(void)
{
	struct fixture *f = fixture("sc21-1.7b", "dgx-a100", 8, tpp_cost_opts_default);
	int m;
	for (m = 1; m <= 8; m++) {
		struct tpp_eval a, sim;
		f->l = layout(1, 8, 1, 1, 1, 0, TPP_RECOMPUTE_NONE, 0, m);
		f->l.zb = 1;
		if (fixture_eval(f, &a)) {
			CHECK(0);
			continue;
		}
		CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &sim, NULL) == TPP_OK);
		/* within what m >= p leaves (the embedding and LM head make
		 * the stages uneven: up to 7 % here) */
		CHECK(fabs(a.step_s - sim.step_s) < 0.08 * sim.step_s);
	}
}

/* ZB-H1 on a link so slow that one pipeline transfer outlasts a stage's
 * compute several times: its transfers fly beside the compute, but the
 * 1F1B window (p - r micro-batches in flight) puts their round trip on the
 * critical path.  The analytic step follows the simulated one (it was
 * 4.6 times short, taking them as hidden); the bound stays below it. */
static void test_zb_slow_link(void)
{
	static const char yaml[] =
		"schema: tpplan.cluster/v1\nname: gbe\n"
		"gpu: {name: G, peak_tflops: {bf16: 100}, hbm_gb: 24, hbm_tbps: 1}\n"
		"gpus_per_node: 2\nnodes: 4\ntiers:\n"
		"  - {name: x, kind: pcie, span_gpus: 2, bw_GBps: 16, latency_us: 2.5}\n"
		"  - {name: e, kind: ethernet, nics_per_node: 1, nic_gbps: 1, latency_us: 50}\n";
	char path[] = "/tmp/tpp-test-gbe-XXXXXX";
	struct fixture *f = fixture("125m", "dgx-a100", 8, tpp_cost_opts_default);
	struct tpp_err err;
	int fd = mkstemp(path), mbs, i;
	FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
	CHECK(out && fputs(yaml, out) >= 0 && fclose(out) == 0);
	CHECK(tpp_cluster_load(path, NULL, &f->c, &err) == TPP_OK);
	unlink(path);
	/* the preset's 256 sequences at mbs 1 and 4 (m = 128, 32), then
	 * fewer micro-batches (m = 16, 8, 4: the window counts from the
	 * second; at m = 2 the fill dominates, 10 % short) */
	for (i = 0; i < 6; i++) {
		static const int mbs_of[6] = {1, 4, 1, 1, 1, 1}, gbs_of[6] = {0, 0, 32, 16, 8, 4};
		struct tpp_eval a, sim;
		struct tpp_stages st;
		int gbs = gbs_of[i] ? gbs_of[i] : f->m->global_batch;
		mbs = mbs_of[i];
		f->l = layout(1, 4, 2, mbs, 1, 0, TPP_RECOMPUTE_NONE, 1, gbs);
		f->l.zb = 1;
		if (fixture_eval(f, &a) ||
		    tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &sim, NULL) != TPP_OK ||
		    tpp_cost_stages(f->m, &f->c, &f->o, &f->l, &st, &err) != TPP_OK) {
			CHECK(0);
			continue;
		}
		/* the case: a transfer is more than 3 stages' F + B */
		CHECK(st.p2p_s > 3 * (a.layer_fwd_s + a.layer_bwd_s) * f->m->layers / 4);
		CHECK(fabs(a.step_s - sim.step_s) < (gbs == 4 ? 0.12 : 0.05) * sim.step_s);
		CHECK(a.bound_s <= sim.step_s);
		/* the waits are the transfers' */
		CHECK(a.t.pp_p2p_s > 0.5 * a.step_s);
	}
}



/*
 * The gradient reduction in the lower bound (tpp_cost_eval): 175B on 4096
 * B200s at dp 128 has 4 micro-batches of 3 and a reduction (~0.84 s)
 * longer than half the step.  The bound holds all of it after the chain
 * that leads to rank 0's first bucket, so it is at least the reduction
 * plus the optimizer, stays below the simulated step, and comes within
 * 15 % of it (without the reduction it was 0.81 s against 1.44 s, and the
 * search simulated every such layout).  Without overlap the reduction
 * follows the pipeline whole.  And one micro-batch's chain through every
 * chunk with its transfers; and the buckets of each rank's first chunk,
 * reduced last, after its last operation.
 */
static void test_dp_bound(void)
{
	struct fixture *f = fixture("175b", "dgx-b200", 4096, tpp_cost_opts_default);
	struct tpp_eval e, s, e0, s0;
	f->l = layout(8, 4, 128, 3, 24, 1, TPP_RECOMPUTE_NONE, 0, 1536);
	f->l.tp_overlap = 1;
	CHECK(fixture_eval(f, &e) == TPP_OK);
	CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s, NULL) == TPP_OK);
	CHECK(e.microbatches == 4 && e.dp_grad_s > 0.5 * s.step_s);
	CHECK(e.bound_s >= e.dp_grad_s + e.t.optimizer_s);
	CHECK(e.bound_s <= s.step_s && e.bound_s >= 0.85 * s.step_s);
	CHECK(e.bound_s <= e.step_s);
	f->o.dp_overlap = 0;
	CHECK(fixture_eval(f, &e0) == TPP_OK);
	CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s0, NULL) == TPP_OK);
	CHECK(e0.bound_s >= e0.dp_grad_s + e0.t.optimizer_s + 4 * e0.stage_mb_s * 0.9);
	CHECK(e0.bound_s <= s0.step_s && s0.step_s > s.step_s);
	/* one micro-batch's chain with its transfers: tp 8, pp 8, vp 12
	 * without SP has 96 chunks and 3 ms transfers, 2 x 95 of them on the
	 * chain (1.31 s; the per-rank bound was 0.94 s against 2.27 s simulated) */
	f->o.dp_overlap = 1;
	f->l = layout(8, 8, 64, 3, 12, 0, TPP_RECOMPUTE_NONE, 0, 1536);
	CHECK(fixture_eval(f, &e) == TPP_OK);
	CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s, NULL) == TPP_OK);
	CHECK(e.bound_s <= s.step_s && e.bound_s >= 0.55 * s.step_s && e.bound_s <= e.step_s);
	/* one chunk per rank (1F1B, ZB-H1): its buckets become ready only
	 * over the rank's last backward, so nearly all of the reduction
	 * follows the rank's work (the bounds were 1.40 s against 1.83 s and
	 * 1.09 s against 1.61 s) */
	{
		int zb;
		for (zb = 0; zb <= 1; zb++) {
			f->l = zb ? layout(8, 8, 64, 1, 1, 1, TPP_RECOMPUTE_NONE, 0, 1536)
				  : layout(8, 4, 128, 1, 1, 1, TPP_RECOMPUTE_NONE, 1, 1536);
			f->l.tp_overlap = 1;
			f->l.zb = zb;
			CHECK(fixture_eval(f, &e) == TPP_OK);
			CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &s, NULL) == TPP_OK);
			CHECK(e.bound_s <= s.step_s && e.bound_s >= 0.9 * s.step_s &&
			      e.bound_s <= e.step_s);
		}
	}
}

/*
 * The search's simulation cache (tpp_sim_cache, sim.h): ZB-H1 layouts that
 * differ only in their ZeRO stage share the greedy order, and every result
 * through the cache is the uncached one, bit for bit, also after orders
 * were evicted (more distinct pipelines than TPP_SIM_CACHE_ORDERS).
 */
static void test_sim_cache(void)
{
	struct fixture *f = fixture("llama2-7b", "dgx-h100", 32, tpp_cost_opts_default);
	struct tpp_sim_cache *q = tpp_sim_cache_new();
	unsigned long long hits, misses;
	int round, i, zero, played = 0;
	TPP_ASSERT(q);
	/* two rounds over 10 pipelines (the global batch sets m), the ZeRO
	 * stages of each in a row: the second and third stage hit; the
	 * second round finds its first pipelines evicted */
	for (round = 0; round < 2; round++)
		for (i = 0; i < 10; i++)
			for (zero = 0; zero <= 2; zero++) {
				struct tpp_eval a, b;
				struct tpp_err err;
				f->l = layout(2, 4, 4, 1, 1, 1, TPP_RECOMPUTE_NONE, zero, 16 * (i + 1));
				f->l.zb = 1;
				CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &a, &err) == TPP_OK);
				CHECK(tpp_sim_eval_cached(f->m, &f->c, &f->o, &f->l, q, &b, &err) ==
				      TPP_OK);
				CHECK(a.simulated && b.simulated);
				CHECK(a.step_s == b.step_s && !memcmp(&a.t, &b.t, sizeof(a.t)));
				played++;
			}
	tpp_sim_cache_stats(q, &hits, &misses);
	CHECK(hits + misses == (unsigned long long)played);
	CHECK(misses == 20 && hits == 40);
	/* a layout without ZB-H1 neither uses nor fills it */
	f->l = layout(2, 4, 4, 1, 1, 1, TPP_RECOMPUTE_NONE, 1, 64);
	{
		struct tpp_eval a, b;
		CHECK(tpp_sim_eval(f->m, &f->c, &f->o, &f->l, &a, NULL) == TPP_OK);
		CHECK(tpp_sim_eval_cached(f->m, &f->c, &f->o, &f->l, q, &b, NULL) == TPP_OK);
		CHECK(a.step_s == b.step_s);
	}
	tpp_sim_cache_stats(q, &hits, &misses);
	CHECK(hits + misses == (unsigned long long)played);
	tpp_sim_cache_free(q);
	tpp_sim_cache_free(NULL);
}

/*
 * ZB-H1's deferred weight gradients within the memory the model prices.
 * The share a pending W holds against a forward, by hand: each linear
 * layer's input (14 s b h) and output gradient (18 s b h) against what a
 * forward keeps (34 s b h + 5 a s^2 b: no TP, 16-bit, GeLU, unfused with
 * dropout, K22), and against the 2 s b h checkpoint under full recompute.
 * The greedy order keeps (F - B) + share (B - W) within the budget
 * (tpp_zb_budget) on every rank after every operation (a BW counts as
 * both), and still defers W's past forwards (the bound is not vacuous) and
 * beats 1F1B.  Memory: every rank priced at the budget, so a middle rank
 * with 7 of 32 layers on pp 5 is the peak, 7/6 of the first rank's 6.
 */
static void test_zb_memory_budget(void)
{
	struct fixture *f = fixture("175b", "dgx-a100", 8, k22_opts);
	double sbh, want;
	f->l = layout(1, 8, 1, 1, 1, 0, TPP_RECOMPUTE_NONE, 0, 16);
	f->l.zb = 1;
	sbh = (double)f->m->seq * f->m->hidden;
	CHECK(f->m->dropout && f->m->ffn == 4 * f->m->hidden &&
	      f->m->heads * f->m->head_dim == f->m->hidden && f->m->kv_heads == f->m->heads);
	want = 32.0 * sbh / (34.0 * sbh + 5.0 * f->m->heads * (double)f->m->seq * f->m->seq);
	CHECK_REL(tpp_zb_w_share(f->m, &f->o, &f->l), want, 1e-12);
	f->l.recompute = TPP_RECOMPUTE_FULL;
	CHECK_REL(tpp_zb_w_share(f->m, &f->o, &f->l), 16.0, 1e-12);

	/* the greedy order on uneven stages (embedding, LM head) */
	{
		struct fixture *g = fixture("llama2-7b", "dgx-h100", 32, tpp_cost_opts_default);
		struct tpp_eval e, sim, one;
		struct tpp_sim_result res;
		struct tpp_sim_event *ev;
		struct tpp_err err;
		size_t cap = 0, i;
		double share, budget;
		int nf[4] = {0}, nb[4] = {0}, nw[4] = {0}, deferred = 0, p = 4, m = 8;
		g->o.gpu_speed_sigma = 0;
		g->l = layout(2, 4, 4, 1, 1, 1, TPP_RECOMPUTE_NONE, 1, 32);
		g->l.zb = 1;
		share = tpp_zb_w_share(g->m, &g->o, &g->l);
		CHECK(share > 0.5 && share < 2);
		budget = tpp_zb_budget(p, m, share);
		/* 4 micro-batches held, forwards or deferred W's, each at the
		 * larger of the two */
		CHECK_REL(budget, 4.0 * (share > 1 ? share : 1.0), 1e-12);
		CHECK(fixture_eval(g, &e) == TPP_OK);
		ev = tpp_sim_events_new(&g->l, tpp_layout_microbatches(&g->l), &cap);
		CHECK(ev != NULL);
		CHECK(tpp_layout_microbatches(&g->l) == m);
		if (ev && tpp_sim_run(g->m, &g->c, &g->o, &g->l, &e, &res, ev, cap, &err) == TPP_OK) {
			for (i = 0; i < res.nevents && i < cap; i++) {
				int r = ev[i].rank;
				if (r < 0 || r >= p)
					continue;
				switch (ev[i].kind) {
				case TPP_EV_F:
					deferred += nb[r] > nw[r];
					nf[r]++;
					break;
				case TPP_EV_B: nb[r]++; break;
				case TPP_EV_W: nw[r]++; break;
				case TPP_EV_BW: nb[r]++; nw[r]++; break;
				default: break;
				}
				/* after every operation: a B turns a forward into
				 * a deferred W (share > 1 here: it holds more) */
				CHECK(nf[r] - nb[r] + share * (nb[r] - nw[r]) <= budget + 1e-9);
			}
			CHECK(deferred > 0);
			for (i = 0; i < (size_t)p; i++)
				CHECK(nf[i] == m && nb[i] == m && nw[i] == m);
		} else {
			CHECK(0);
		}
		free(ev);
		CHECK(tpp_sim_eval(g->m, &g->c, &g->o, &g->l, &sim, NULL) == TPP_OK);
		g->l.zb = 0;
		CHECK(tpp_sim_eval(g->m, &g->c, &g->o, &g->l, &one, NULL) == TPP_OK);
		CHECK(sim.step_s < 0.95 * one.step_s);
	}

	/* the last rank's deferred W's, each with the LM head's logits
	 * gradient: unfused attention makes a W small against a forward,
	 * so the greedy lets far more than min(p, m) wait there; the
	 * memory model prices what it allows */
	{
		struct fixture *g = fixture("sc21-1.7b", "dgx-a100", 8, k22_opts);
		struct tpp_eval e;
		struct tpp_sim_result res;
		struct tpp_sim_event *ev;
		struct tpp_err err;
		size_t cap = 0, i;
		int p = 8, m, nb = 0, nw = 0, most = 0, allowed;
		double share;
		g->l = layout(1, 8, 1, 4, 1, 0, TPP_RECOMPUTE_NONE, 0, 128);
		g->l.zb = 1;
		m = tpp_layout_microbatches(&g->l);
		share = tpp_zb_w_share(g->m, &g->o, &g->l);
		allowed = tpp_zb_last_deferred(p, m, share);
		CHECK(m == 32 && share < 1 && allowed > p);
		CHECK(fixture_eval(g, &e) == TPP_OK);
		ev = tpp_sim_events_new(&g->l, m, &cap);
		CHECK(ev != NULL);
		if (ev && tpp_sim_run(g->m, &g->c, &g->o, &g->l, &e, &res, ev, cap, &err) == TPP_OK) {
			for (i = 0; i < res.nevents && i < cap; i++) {
				if (ev[i].rank != p - 1)
					continue;
				nb += ev[i].kind == TPP_EV_B || ev[i].kind == TPP_EV_BW;
				nw += ev[i].kind == TPP_EV_W || ev[i].kind == TPP_EV_BW;
				if (nb - nw > most)
					most = nb - nw;
			}
			CHECK(most > p && most <= allowed);
		} else {
			CHECK(0);
		}
		free(ev);
	}

	/* memory: 32 layers on pp 5 are 6, 7, 7, 6, 6 */
	{
		struct fixture *g = fixture("llama2-7b", "dgx-h100", 40, tpp_cost_opts_default);
		struct tpp_eval zb, one;
		g->l = layout(8, 5, 1, 1, 1, 0, TPP_RECOMPUTE_NONE, 0, 8);
		CHECK(tpp_chunk_layers(32, 5, 0) == 6 && tpp_chunk_layers(32, 5, 1) == 7);
		CHECK(fixture_eval(g, &one) == TPP_OK);
		g->l.zb = 1;
		CHECK(fixture_eval(g, &zb) == TPP_OK);
		CHECK_REL(zb.mem.act_bytes, zb.mem.layer_act_bytes * 7.0 / 6.0, 1e-12);
		CHECK(zb.mem.total_bytes > one.mem.total_bytes);
	}
}

/* Pipeline transfer per boundary (costmodel.md 2.3): with SP each TP rank
 * sends its 1/tp sequence shard; without SP, Megatron-Core sends the whole
 * [s, b, h] from every TP rank, and the legacy scatter/gather sends 1/tp
 * and all-gathers it over the TP group on arrival. */
static void test_p2p_scatter_gather(void)
{
	struct fixture *f = fixture("175b", "dgx-a100", 32, k22_opts);
	static struct tpp_stages st;
	struct tpp_err err;
	double whole = 2.0 * f->m->seq * f->m->hidden * 2.0; /* mbs 2, 16-bit */
	double sr_whole, sr_part, ag;
	f->l = layout(8, 4, 1, 2, 1, 0, TPP_RECOMPUTE_FULL, 0, 64);
	sr_whole = tpp_coll_time(&f->c, TPP_COLL_SEND_RECV, whole, 4, 8);
	sr_part = tpp_coll_time(&f->c, TPP_COLL_SEND_RECV, whole / 8, 4, 8);
	ag = tpp_coll_time(&f->c, TPP_COLL_ALL_GATHER, whole, 8, 1);
	CHECK(sr_part < sr_whole && ag > 0);
	/* Megatron-Core, no SP: the whole tensor */
	f->o.p2p_scatter_gather = 0;
	CHECK(tpp_cost_stages(f->m, &f->c, &f->o, &f->l, &st, &err) == TPP_OK);
	CHECK_REL(st.p2p_s, sr_whole, 1e-12);
	/* legacy scatter/gather: 1/tp over the network, all-gather on NVLink */
	f->o.p2p_scatter_gather = 1;
	CHECK(tpp_cost_stages(f->m, &f->c, &f->o, &f->l, &st, &err) == TPP_OK);
	CHECK_REL(st.p2p_s, sr_part + ag, 1e-12);
	/* SP: the sequence shard either way, nothing to gather */
	f->l.sp = 1;
	CHECK(tpp_cost_stages(f->m, &f->c, &f->o, &f->l, &st, &err) == TPP_OK);
	CHECK_REL(st.p2p_s, sr_part, 1e-12);
	f->o.p2p_scatter_gather = 0;
	CHECK(tpp_cost_stages(f->m, &f->c, &f->o, &f->l, &st, &err) == TPP_OK);
	CHECK_REL(st.p2p_s, sr_part, 1e-12);
	/* no TP: one whole tensor, nothing to gather */
	f->l = layout(1, 4, 1, 2, 1, 0, TPP_RECOMPUTE_FULL, 0, 64);
	f->o.p2p_scatter_gather = 1;
	CHECK(tpp_cost_stages(f->m, &f->c, &f->o, &f->l, &st, &err) == TPP_OK);
	CHECK_REL(st.p2p_s, tpp_coll_time(&f->c, TPP_COLL_SEND_RECV, whole, 4, 1), 1e-12);
}

/* f's layout with fp32 gradients into *e32 and with --grads-16bit into
 * *e16, the option left off; nonzero (a test failure) when either fails */
static int eval_grads32_16(struct fixture *f, struct tpp_eval *e32, struct tpp_eval *e16)
{
	int rc;
	f->o.grads16 = 0;
	if ((rc = fixture_eval(f, e32)))
		return rc;
	f->o.grads16 = 1;
	rc = fixture_eval(f, e16);
	f->o.grads16 = 0;
	return rc;
}

/* --grads-16bit (Megatron-Core grad_reduce_in_fp32 = False): 2 gradient
 * bytes a parameter instead of 4, the DP reduction of half the bytes,
 * the optimizer's pass 62 bytes a parameter instead of 58 (the copy into
 * an fp32 main gradient); weights and optimizer states unchanged.  Also
 * for ZeRO-2 (sharded gradients) and ZeRO-3 without pipelining. */
static void test_grads16(void)
{
	struct fixture *f = fixture("sc21-1.7b", "dgx-a100", 16, tpp_cost_opts_default);
	int z;
	for (z = 0; z <= 3; z++) {
		struct tpp_eval e32, e16;
		f->l = layout(2, 1, 8, 1, 1, 1, TPP_RECOMPUTE_SELECTIVE, 0, 64);
		f->l.zero = z;
		if (eval_grads32_16(f, &e32, &e16))
			return;
		CHECK_REL(e16.mem.grads_bytes, 0.5 * e32.mem.grads_bytes, 1e-12);
		CHECK_REL(e16.mem.weights_bytes, e32.mem.weights_bytes, 1e-12);
		/* (the fp32 copy at the optimizer step, when that is the
		 * peak: test_grads16_optimizer_peak) */
		if (e16.mem.at_optimizer_step) {
			double P = e32.mem.weights_bytes / (z == 3 ? 2.0 / 8 : 2.0);
			CHECK_REL(e16.mem.optim_bytes,
				  e32.mem.optim_bytes + 4.0 * (z >= 1 ? P / 8 : P), 1e-12);
		} else {
			CHECK_REL(e16.mem.optim_bytes, e32.mem.optim_bytes, 1e-12);
		}
		/* per shard parameter 58 -> 62 bytes, of which the buffer
		 * zeroing (4 -> 2) is over the gradient buffer held: every
		 * parameter under ZeRO-0/1, the 1/8 shard under ZeRO-2/3 */
		{
			double sh = z >= 1 ? 1.0 / 8 : 1.0, buf = z >= 2 ? sh : 1.0;
			CHECK_REL(e16.t.optimizer_s,
				  e32.t.optimizer_s * (60.0 * sh + 2.0 * buf) / (54.0 * sh + 4.0 * buf), 1e-9);
		}
		if (z < 3) {
			CHECK(e16.dp_grad_s > 0 && e16.dp_grad_s < e32.dp_grad_s);
			/* half the bytes: at most half the bandwidth time plus
			 * the same latency */
			CHECK(e16.dp_grad_s > 0.5 * e32.dp_grad_s * (1 - 1e-9));
		} else {
			CHECK(e16.t.dp_comm_s <= e32.t.dp_comm_s);
		}
	}
}

/* --grads-16bit: the optimizer step casts its shard of the 16-bit
 * gradients to fp32 (Megatron's _copy_model_grads_to_main_grads) once the
 * activations are freed: 4 bytes a shard parameter beside the 16 of the
 * states.  Llama 2 70B, tp 8 pp 2 dp 4, ZeRO-0, no recompute, H100: the
 * pipeline's peak is below states + 4 P, so the step's is the rank's peak
 * (89.47 GB, which the model put at 84.03 and called fitting); with the
 * distributed optimizer the copy is a quarter of that and the pipeline
 * peak stays the peak. */
static void test_grads16_optimizer_peak(void)
{
	struct fixture *f = fixture("llama2-70b", "dgx-h100", 64, tpp_cost_opts_default);
	struct tpp_eval e32, e16;
	double P;
	int z;
	for (z = 0; z <= 1; z++) {
		f->l = layout(8, 2, 4, 1, 1, 1, TPP_RECOMPUTE_NONE, z, 256);
		if (eval_grads32_16(f, &e32, &e16))
			return;
		P = e32.mem.weights_bytes / 2.0; /* 2-byte weights */
		CHECK(!e32.mem.at_optimizer_step);
		if (z == 0) {
			double states = P * (2 + 2 + 12), at_step = states + 4.0 * P;
			CHECK(e16.mem.at_optimizer_step);
			CHECK(e16.mem.act_bytes == 0 && e16.mem.other_bytes == 0);
			CHECK_REL(e16.mem.optim_bytes, 12.0 * P + 4.0 * P, 1e-12);
			CHECK_REL(e16.mem.total_bytes, at_step + f->o.mem_reserve_bytes, 1e-12);
			/* above the pipeline's peak with 16-bit gradients */
			CHECK(at_step > e32.mem.total_bytes - e32.mem.reserve_bytes - 2.0 * P);
			CHECK(!e16.fits && e16.mem.total_bytes > 89.4e9 && e16.mem.total_bytes < 89.5e9);
		} else {
			CHECK(!e16.mem.at_optimizer_step);
			CHECK_REL(e16.mem.total_bytes, e32.mem.total_bytes - 2.0 * P, 1e-12);
			CHECK(e16.mem.total_bytes - e16.mem.reserve_bytes >
			      P * (2 + 2 + 12.0 / 4) + 4.0 * P / 4);
		}
	}
}

/* Interleaved 1F1B in-flight activations per rank (costmodel.md 3.4):
 * rank r holds 2 (p - r - 1) + (v - 1) p + 1 model chunks at its peak.
 * With a large vocabulary the last rank (logits) is the most loaded: its
 * activations are (v - 1) p + 1 chunks, against rank 0's p v + p - 1. */
static void test_interleaved_inflight(void)
{
	struct fixture *f = fixture("llama3-8b", "dgx-h100", 4, tpp_cost_opts_default);
	struct tpp_eval e, e4;
	double p = 4, v = 2;
	f->l = layout(1, 4, 1, 1, 2, 0, TPP_RECOMPUTE_FULL, 0, 64);
	CHECK(!fixture_eval(f, &e));
	/* 32 layers, 8 per rank: the same per-layer activation on every rank */
	CHECK_REL(e.mem.act_bytes,
		  e.mem.layer_act_bytes * ((v - 1) * p + 1) / (p * v + p - 1), 1e-12);
	/* m = p = 4 micro-batches: rank 0's warm-up (11 chunks) is cut to
	 * all m v = 8 chunks there are */
	f->l.gbs = 4;
	CHECK(!fixture_eval(f, &e4));
	CHECK_REL(e4.mem.layer_act_bytes, e.mem.layer_act_bytes * 8.0 / (p * v + p - 1), 1e-12);
}

/*
 * Interleaving with chunks of unequal layer counts (layers not divisible
 * by pp vp): the activation peak is Megatron's schedule order played out
 * (values from a step-by-step replay of forward_backward_pipelining_with_
 * interleaving's order), which can exceed the warm-up's (W + 1) chunks
 * later on; equal chunks keep the closed form.
 */
static void test_interleaved_uneven(void)
{
	/* 100 layers on 64 chunks of 1 or 2 (tpp_chunk_layers) */
	static const int want100[16] = {126, 154, 150, 146, 142, 133, 131, 129,
					126, 122, 118, 114, 110, 106, 102, 98};
	struct fixture *f = fixture("llama3-8b", "dgx-h100", 16, tpp_cost_opts_default);
	struct tpp_model m = *f->m;
	struct tpp_eval e, e1;
	double x[8], two[2] = {2, 2}, apl_none, apl_full, want;
	int r, j;
	for (r = 0; r < 16; r++) {
		for (j = 0; j < 4; j++)
			x[j] = tpp_chunk_layers(100, 64, j * 16 + r);
		CHECK_REL(tpp_interleaved_peak(x, 16, 4, 32, r), want100[r], 1e-12);
	}
	for (j = 0; j < 5; j++)
		x[j] = tpp_chunk_layers(96, 40, j * 8);
	CHECK_REL(tpp_interleaved_peak(x, 8, 5, 16, 0), 125, 1e-12);
	/* equal chunks: (W + 1) chunks, W = 2 (p - r - 1) + (v - 1) p; all
	 * m v of them when the warm-up covers every micro-batch */
	CHECK_REL(tpp_interleaved_peak(two, 4, 2, 8, 0), 2 * 11, 1e-12);
	CHECK_REL(tpp_interleaved_peak(two, 4, 2, 8, 3), 2 * 5, 1e-12);
	CHECK_REL(tpp_interleaved_peak(two, 4, 2, 4, 0), 2 * 8, 1e-12);

	/* the cost model's rank 0 of a 100-layer model: 126 layers' worth */
	m.layers = 100;
	f->m = &m;
	f->l = layout(1, 1, 1, 1, 1, 0, TPP_RECOMPUTE_NONE, 0, 32);
	CHECK(!fixture_eval(f, &e1));
	apl_none = e1.mem.layer_act_bytes / 100;
	f->l = layout(1, 16, 1, 1, 4, 0, TPP_RECOMPUTE_NONE, 0, 32);
	CHECK(!fixture_eval(f, &e));
	CHECK_REL(e.mem.layer_act_bytes, apl_none * 126, 1e-12);
	/* block recompute of 1 layer per chunk: a chunk of 2 keeps one
	 * layer's input and one layer whole */
	f->l = layout(1, 1, 1, 1, 1, 0, TPP_RECOMPUTE_FULL, 0, 32);
	CHECK(!fixture_eval(f, &e1));
	apl_full = e1.mem.layer_act_bytes / 100;
	f->l = layout(1, 16, 1, 1, 4, 0, TPP_RECOMPUTE_FULL, 0, 32);
	f->l.recompute_layers = 1;
	CHECK(!fixture_eval(f, &e));
	for (j = 0; j < 4; j++) {
		int lk = tpp_chunk_layers(100, 64, j * 16);
		x[j] = apl_full + apl_none * (lk - 1);
	}
	want = tpp_interleaved_peak(x, 16, 4, 32, 0);
	CHECK_REL(e.mem.layer_act_bytes, want, 1e-12);
}

/* Memory-bound passes (calibration.md 5.3): Calculon's efficiencies away
 * from its steps, and never less time for more bytes across them. */
static void test_hbm_time(void)
{
	struct tpp_cluster c;
	double B, prev = 0, x;
	load_cluster("dgx-a100", 8, &c);
	B = c.gpu.hbm_Bps;
	CHECK_REL(tpp_hbm_time(&c.gpu, 0.5e6), 0.5e6 / (B * 0.30), 1e-12);
	CHECK_REL(tpp_hbm_time(&c.gpu, 5e6), 5e6 / (B * 0.60), 1e-12);
	CHECK_REL(tpp_hbm_time(&c.gpu, 50e6), 50e6 / (B * 0.75), 1e-12);
	CHECK_REL(tpp_hbm_time(&c.gpu, 1e9), 1e9 / (B * 0.90), 1e-12);
	/* just past a step: the time of the step from below */
	CHECK_REL(tpp_hbm_time(&c.gpu, 10e6), 10e6 / (B * 0.60), 1e-9);
	CHECK_REL(tpp_hbm_time(&c.gpu, 11e6), 10e6 / (B * 0.60), 1e-9);
	for (x = 1e4; x < 1e10; x *= 1.01) {
		double t = tpp_hbm_time(&c.gpu, x);
		CHECK(t >= prev);
		prev = t;
	}
	CHECK(tpp_hbm_time(&c.gpu, 0) == 0);
}

/* TP collectives per micro-batch under SP (costmodel.md 2.2): per layer 2
 * all-gathers + 2 reduce-scatters forward, the same plus 2 re-gathers
 * backward; the embedding reduce-scatters forward and all-gathers
 * backward, the LM head all-gathers forward and reduce-scatters backward. */
static void test_sp_collectives(void)
{
	struct fixture *f = fixture("22b", "dgx-a100", 8, k22_opts);
	struct tpp_eval e;
	double msg = 1.0 * f->m->seq * f->m->hidden * 2.0, ag, rs, want;
	f->l = layout(8, 1, 1, 1, 1, 1, TPP_RECOMPUTE_NONE, 0, 4);
	CHECK(!fixture_eval(f, &e));
	ag = tpp_coll_time(&f->c, TPP_COLL_ALL_GATHER, msg, 8, 1);
	rs = tpp_coll_time(&f->c, TPP_COLL_REDUCE_SCATTER, msg, 8, 1);
	want = 4.0 * (f->m->layers * (6 * ag + 4 * rs) + 2 * ag + 2 * rs);
	CHECK_REL(e.t.tp_comm_s, want, 1e-9);
}

int main(int argc, char **argv)
{
	int k22 = argc < 2 || !strcmp(argv[1], "k22");
	int model = argc < 2 || !strcmp(argv[1], "model");
	if (!k22 && !model) {
		fprintf(stderr, "usage: test_cost [k22|model]\n");
		return 2;
	}
	if (k22) {
		test_k22_memory();
		test_k22_fig7();
	}
	if (!model)
		return tpp_test_done("test_cost k22");
	test_flops();
	test_memory_monotone();
	test_zero_stages();
	test_recompute_working_set();
	test_zero3_gather_unit();
	test_zero_pipelined();
	test_collectives();
	test_layout_check();
	test_step_sanity();
	test_bubble();
	test_cache_consistency();
	test_tp_overlap();
	test_nvls_small_groups();
	test_straddle_domains();
	test_straddle_memo();
	test_fallback_figure();
	test_nvls_latency();
	test_nvls_group_size();
	test_nvls_unmeasured();
	test_ib_default_eff();
	test_cp_recompute();
	test_p2p_overlap_analytic();
	test_zb_few_microbatches();
	test_zb_slow_link();
	test_zb_memory_budget();
	test_sim_cache();
	test_dp_bound();
	test_straggler();
	test_gemm_table();
	test_gemm_shape();
	test_attention_core();
	test_fp8_recipe();
	test_fp8_activations();
	test_fp8_params();
	test_block_recompute();
	test_zero3_overlap_share();
	test_zero3_rate();
	test_zero3_cp_faster_gemm();
	test_p2p_scatter_gather();
	test_grads16();
	test_grads16_optimizer_peak();
	test_interleaved_inflight();
	test_interleaved_uneven();
	test_hbm_time();
	test_sp_collectives();
	test_chunk_limit();
	return tpp_test_done("test_cost");
}
