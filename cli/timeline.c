/*
 * timeline.c - `--timeline FILE`: the simulated schedule of one layout as a
 * table a plot can draw (one row per operation, per rank).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "sim.h"

int tpp_write_timeline(const char *path, const struct tpp_plan_ctx *x,
		       const struct tpp_eval *e)
{
	const struct tpp_layout *l = &e->layout;
	size_t cap = (size_t)3 * e->microbatches * l->vp * l->pp + l->pp + 8, i;
	struct tpp_sim_event *ev = malloc(cap * sizeof(*ev));
	struct tpp_sim_result r;
	struct tpp_err err;
	char tmp[4096];
	FILE *f;
	int rc, w, direct;

	if (!ev) {
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
	TPP_ASSERT(r.nevents <= cap);
	{
		/* an existing non-regular target (/dev/stdout, a FIFO) is
		 * written in place: a rename would replace it */
		struct stat st;
		direct = !stat(path, &st) && !S_ISREG(st.st_mode);
		if (direct && S_ISDIR(st.st_mode)) {
			free(ev);
			fprintf(stderr, "tpplan: --timeline %s: is a directory\n", path);
			return TPP_E_USAGE;
		}
	}
	w = snprintf(tmp, sizeof(tmp), "%s", direct ? path : "");
	if (!direct)
		w = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (w < 0 || (size_t)w >= sizeof(tmp)) {
		free(ev);
		fprintf(stderr, "tpplan: --timeline: path too long\n");
		return TPP_E_USAGE;
	}
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "tpplan: --timeline %s: %s\n", path, strerror(errno));
		free(ev);
		return TPP_E_SYSTEM;
	}
	fprintf(f, "# tpplan %s timeline of %s on %s; step %.6f s\n", tpp_version,
		x->model->name, x->cluster->name, r.step_s);
	fprintf(f, "rank\tchunk\tmicrobatch\tkind\tstart_s\tend_s\n");
	for (i = 0; i < r.nevents; i++)
		fprintf(f, "%d\t%d\t%d\t%s\t%.9f\t%.9f\n", ev[i].rank, ev[i].chunk,
			ev[i].mb, tpp_ev_names[ev[i].kind], ev[i].start_s, ev[i].end_s);
	free(ev);
	{
		int bad = fflush(f) || ferror(f);
		int er = errno;
		if (fclose(f) && !bad)
			bad = 1, er = errno;
		if (bad) {
			fprintf(stderr, "tpplan: --timeline %s: write failed: %s\n", path,
				strerror(er));
			if (!direct)
				remove(tmp);
			return TPP_E_SYSTEM;
		}
	}
	if (!direct && rename(tmp, path)) {
		fprintf(stderr, "tpplan: --timeline %s: %s\n", path, strerror(errno));
		remove(tmp);
		return TPP_E_SYSTEM;
	}
	return TPP_OK;
}
