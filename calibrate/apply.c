/*
 * apply.c - put a calibration's measured figures into a cluster
 * description (see calibration.h): they replace the datasheet and
 * published figures field by field and remember that they were measured.
 */
#include "calibration.h"

#include <stdio.h>
#include <string.h>

/* Whether table t serves (tier, op) better than b: on tiers that groups
 * span across nodes, a table of concurrent groups (all rails at once, as
 * data-parallel groups run) over a group alone; then the larger group;
 * then the more groups at once (closer to how training runs them).  The
 * loader refuses two tables equal in all of these, so the choice does not
 * depend on the file's order. */
static int better(const struct tpp_cal_coll *t, const struct tpp_cal_coll *b,
		  int tier)
{
	if (tier > 0 && (t->concurrent > 1) != (b->concurrent > 1))
		return t->concurrent > 1;
	if (t->group != b->group)
		return t->group > b->group;
	return t->concurrent > b->concurrent;
}

/* The table the cost model should see for (tier, op). */
static const struct tpp_cal_coll *pick(const struct tpp_calibration *cal,
				       int tier, enum tpp_coll op)
{
	const struct tpp_cal_coll *best = NULL;
	int i;
	for (i = 0; i < cal->ncoll; i++) {
		const struct tpp_cal_coll *t = &cal->coll[i];
		if (t->tier != tier || t->op != op || t->npoints < 2)
			continue;
		if (!best || better(t, best, tier))
			best = t;
	}
	return best;
}

void tpp_cal_apply(const struct tpp_calibration *cal, const char *path,
		   struct tpp_cluster *c)
{
	char src[2048]; /* cut to TPP_SOURCE_LEN where stored */
	int ti, op, p;

	snprintf(src, sizeof(src), "calibration %s (%s, %s backend, %d ranks on %.200s)",
		 path, cal->created_utc, cal->backend, cal->ranks,
		 cal->hosts[0] ? cal->hosts : "?");
	for (ti = 0; ti < c->ntiers; ti++) {
		struct tpp_tier *t = &c->tiers[ti];
		int any = 0;
		for (op = 0; op < TPP_COLL__COUNT; op++) {
			const struct tpp_cal_coll *tab = pick(cal, ti, (enum tpp_coll)op);
			double f;
			int n, i, stride;
			if (!tab)
				continue;
			f = tpp_cal_bus_factor((enum tpp_coll)op, tab->group);
			/* keep at most TPP_CURVE_MAX points, evenly spread, always
			 * with the largest size; into a scratch curve first so a
			 * table without 2 usable points changes nothing */
			n = tab->npoints;
			stride = (n + TPP_CURVE_MAX - 2) / (TPP_CURVE_MAX - 1);
			if (stride < 1)
				stride = 1;
			{
				double cb[TPP_CURVE_MAX], cw[TPP_CURVE_MAX];
				int cn = 0;
				for (i = 0; cn < TPP_CURVE_MAX; ) {
					const struct tpp_cal_point *pt = &tab->pts[i];
					if (pt->median_s > 0 && pt->bytes > 0 &&
					    (!cn || pt->bytes > cb[cn - 1])) {
						cb[cn] = pt->bytes;
						cw[cn] = pt->bytes * f / pt->median_s;
						cn++;
					}
					if (i == n - 1)
						break;
					i = i + stride < n - 1 ? i + stride : n - 1;
				}
				if (cn < 2 && !tab->fit.valid)
					continue; /* nothing measured replaces the tier's figures */
				t->curve_n[op] = cn >= 2 ? cn : 0;
				for (i = 0; i < cn && cn >= 2; i++) {
					t->curve_bytes[op][i] = cb[i];
					t->curve_busbw_Bps[op][i] = cw[i];
				}
			}
			if (tab->fit.valid) {
				t->busbw_Bps[op] = tab->fit.busbw_Bps;
				t->busbw_alpha_s[op] = tab->fit.alpha_s;
			} else {
				t->busbw_Bps[op] = t->curve_busbw_Bps[op][t->curve_n[op] - 1];
				t->busbw_alpha_s[op] = 0;
			}
			t->busbw_src[op] = TPP_SRC_CALIBRATION;
			any = 1;
		}
		if (any)
			tpp_strlcpy(t->measured_source, src, sizeof(t->measured_source));
	}
	for (p = 0; p < TPP_PREC__COUNT; p++) {
		const struct tpp_cal_gemm *g = &cal->gemm[p];
		if (!g->valid || !(g->best_flops_per_s > 0))
			continue;
		/* gemm_source keeps citing the other precisions' figures; a
		 * calibrated one is cited through c->calibration */
		c->gpu.gemm_flops[p] = g->best_flops_per_s;
		c->gpu.gemm_src[p] = TPP_SRC_CALIBRATION;
		{
			struct tpp_gemm_table *t = &c->gpu.gemm_table[p];
			int i;
			t->n = 0;
			for (i = 0; i < g->npoints && t->n < TPP_GEMM_TABLE_MAX; i++) {
				const struct tpp_cal_gemm_point *pt = &g->pts[i];
				if (pt->m < 1 || pt->n < 1 || pt->k < 1 || !(pt->flops_per_s > 0))
					continue;
				t->m[t->n] = (float)pt->m;
				t->nn[t->n] = (float)pt->n;
				t->k[t->n] = (float)pt->k;
				t->flops_per_s[t->n] = (float)pt->flops_per_s;
				t->n++;
			}
		}
	}
	tpp_strlcpy(c->calibration, path, sizeof(c->calibration));
}
