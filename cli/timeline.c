/*
 * timeline.c - `--timeline FILE`: the simulated schedule of one layout as a
 * table a plot can draw (one row per operation, per rank).  Written
 * atomically (tpp_afile); cmd_plan.c checks the destination before the
 * search (tpp_afile_check), so a bad path costs no search.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sim.h"
#include "tpp_afile.h"

int tpp_write_timeline(const char *path, const struct tpp_plan_ctx *x,
		       const struct tpp_eval *e)
{
	const struct tpp_layout *l = &e->layout;
	size_t cap, i;
	struct tpp_sim_event *ev = tpp_sim_events_new(l, e->microbatches, &cap);
	struct tpp_sim_result r;
	struct tpp_afile a;
	struct tpp_err err;
	int rc;

	if (!ev && cap) {
		fprintf(stderr, "tpplan: --timeline: out of memory\n");
		return TPP_E_SYSTEM;
	}
	rc = tpp_sim_run(x->model, x->cluster, x->opts, l, e, &r, ev, cap, &err);
	if (rc) {
		free(ev);
		fprintf(stderr, "tpplan: --timeline: %s\n", err.msg);
		/* too large to play out: not "no feasible layout" (exit 1) */
		return rc == TPP_E_INFEASIBLE ? TPP_E_USAGE : rc;
	}
	TPP_ASSERT(ev && r.nevents <= cap);
	if ((rc = tpp_afile_open(&a, path, &err))) {
		free(ev);
		fprintf(stderr, "tpplan: --timeline %s\n", err.msg);
		return rc;
	}
	fprintf(a.f, "# tpplan %s timeline of %s on %s; step %.6f s\n", tpp_version,
		x->model->name, x->cluster->name, r.step_s);
	fprintf(a.f, "rank\tchunk\tmicrobatch\tkind\tstart_s\tend_s\n");
	for (i = 0; i < r.nevents; i++)
		fprintf(a.f, "%d\t%d\t%d\t%s\t%.9f\t%.9f\n", ev[i].rank, ev[i].chunk,
			ev[i].mb, tpp_ev_names[ev[i].kind], ev[i].start_s, ev[i].end_s);
	free(ev);
	if ((rc = tpp_afile_commit(&a, &err)))
		fprintf(stderr, "tpplan: --timeline %s\n", err.msg);
	return rc;
}
