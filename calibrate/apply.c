/*
 * apply.c - check a calibration against the cluster it is used with, and
 * put its measured figures into the cluster description (see
 * calibration.h): they replace the datasheet and published figures field
 * by field and remember that they were measured.
 *
 * Data flow: tpp_cal_load --> tpp_cal_check (errors; warnings to the
 * caller's stream) --> tpp_cal_apply --> struct tpp_cluster --> cost model.
 * Bus-bandwidth conventions: calibration.md 1.6; the per-GPU network rate
 * a multi-node busbw implies: calibration.md 1.6, "Multi-node busbw is
 * not a NIC rate".
 */
#include "calibration.h"
#include "cost.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* A fit determines the bandwidth when its standard error is at most this
 * share of it (a sweep that stops at 4 KiB: 36 +- 47 GB/s; at 64 KiB:
 * 208 +- 92; at 1 MiB: 232 +- 9, tests/data/nccl-tests/all_reduce_perf.txt;
 * CPU sweeps to 256 KiB: 9-17 %). */
#define FIT_BW_REL_ERR 0.5
/* Else a table measures the bandwidth where its largest size's time is
 * mostly data: the latency (extrapolated from its smallest and largest
 * sizes) at most this share of it, so that size's busbw is within this
 * share of the asymptote. */
#define BW_BOUND_LATENCY_SHARE 0.1

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

/*
 * Whether table `tab` measured the bandwidth: its largest size's time is
 * mostly data, not latency (alpha of the line through its smallest and
 * largest usable points at most BW_BOUND_LATENCY_SHARE of that time).  A
 * sweep that stops in the latency-bound sizes (8 .. 128 B all at 12 us)
 * says nothing about the bandwidth.
 */
static int measures_bandwidth(const struct tpp_cal_coll *tab)
{
	const struct tpp_cal_point *lo = NULL, *hi = NULL;
	double slope, alpha;
	int i;
	for (i = 0; i < tab->npoints; i++) {
		const struct tpp_cal_point *pt = &tab->pts[i];
		if (!(pt->bytes > 0) || !(pt->median_s > 0))
			continue;
		if (!lo)
			lo = pt;
		hi = pt;
	}
	if (!lo || hi == lo || !(hi->bytes > lo->bytes) ||
	    !(hi->median_s > lo->median_s))
		return 0;
	slope = (hi->median_s - lo->median_s) / (hi->bytes - lo->bytes);
	alpha = lo->median_s - lo->bytes * slope;
	return alpha <= BW_BOUND_LATENCY_SHARE * hi->median_s;
}

/*
 * The factor that turns table tab's bus bandwidth on outer tier ti into
 * the per-GPU rate the tier's figures are (a cluster file's scale-out
 * busbw is per GPU, the rail: 192 GB/s per DGX A100 node / 8,
 * topologies/README.md).  A ring across nodes crosses each node boundary
 * once per channel, with the channels spread over the node's NICs, so a
 * multi-node busbw is the node's aggregate rate (calibration.md 3.3,
 * "Ring": 192 GB/s on 8 x HDR, ~380 on 8 x NDR), g times the rate of each
 * of the g GPUs of a node in the group: 1/g, which the cost model's flat
 * ring multiplies back (costmodel/cost.c tpp_coll_time).  g = 1 in a
 * concurrent "rail" table (one rank per node, calibration.md 3.4); else
 * the ranks per node the calibration ran (else the inner tier's domain),
 * at most the group.  1 inside the first tier.  A tree or NVLS-tree
 * all-reduce on 2 nodes moves less over the network and reads above that
 * (calibration.md 1.6: measure with NCCL_ALGO=RING); tpp_cal_check warns
 * when the rate this gives exceeds the tier's.
 */
static double per_gpu_scale(const struct tpp_calibration *cal,
			    const struct tpp_cluster *c, int ti,
			    const struct tpp_cal_coll *tab)
{
	int n = tab->group, per;
	/* send/recv: each rank sends to one peer, and the pairs that cross
	 * nodes each use their own NIC (nccl-tests sendrecv_perf's ring): the
	 * figure is already one GPU's rate, which the cost model's send/recv
	 * uses as it is */
	if (ti < 1 || ti >= c->ntiers || n < 2 || tab->op == TPP_COLL_SEND_RECV)
		return 1;
	if (tab->concurrent > 1)
		per = 1;
	else if (cal->ranks_per_node > 0)
		per = cal->ranks_per_node;
	else
		per = c->tiers[ti - 1].span_gpus > 0 ? c->tiers[ti - 1].span_gpus : n;
	return per < n ? 1.0 / per : 1; /* on one node: not across nodes */
}

/*
 * Put the table's curve (cb, cw: cn points, ascending) in place of tier t's
 * curve for `op`, keeping the tier's own (published) points below the
 * smallest size measured, and above the largest when the table did not
 * measure the bandwidth (`keep_above`): sizes the table does not reach keep
 * the size dependence the cluster file had (a sweep of 1-4 GiB priced a
 * 50 MB TP all-reduce at the 1 GiB rate; one of 8-128 B replaced the
 * published ramp by one flat figure).  *kept_lo / *kept_hi: points kept.
 * The table's points are thinned (first and last kept) if all do not fit.
 */
static void merge_curve(struct tpp_tier *t, int op, const double *cb,
			const double *cw, int cn, int keep_above, int *kept_lo,
			int *kept_hi)
{
	double ob[TPP_CURVE_MAX], ow[TPP_CURVE_MAX];
	int on = t->curve_n[op], nlo = 0, nhi = 0, i, k = 0, room;
	*kept_lo = *kept_hi = 0;
	if (cn < 2) {
		t->curve_n[op] = 0;
		return;
	}
	for (i = 0; i < on; i++) {
		ob[i] = t->curve_bytes[op][i];
		ow[i] = t->curve_busbw_Bps[op][i];
	}
	for (i = 0; i < on; i++) {
		if (ob[i] < cb[0])
			nlo++;
		else if (keep_above && ob[i] > cb[cn - 1])
			nhi++;
	}
	/* at most half the room each for the kept points, nearest first */
	if (nlo > (TPP_CURVE_MAX - 2) / 2)
		nlo = (TPP_CURVE_MAX - 2) / 2;
	if (nhi > (TPP_CURVE_MAX - 2) / 2)
		nhi = (TPP_CURVE_MAX - 2) / 2;
	room = TPP_CURVE_MAX - nlo - nhi;
	{
		int first_lo = 0;
		while (first_lo < on && ob[first_lo] < cb[0])
			first_lo++;
		/* the nlo points just below cb[0] */
		for (i = first_lo - nlo; i < first_lo; i++, k++) {
			t->curve_bytes[op][k] = ob[i];
			t->curve_busbw_Bps[op][k] = ow[i];
		}
	}
	for (i = 0; i < room && i < cn; i++, k++) {
		/* evenly over the table when it has more points than room */
		int j = cn <= room ? i : (int)((long long)i * (cn - 1) / (room - 1));
		t->curve_bytes[op][k] = cb[j];
		t->curve_busbw_Bps[op][k] = cw[j];
	}
	for (i = 0; i < on && nhi > *kept_hi; i++)
		if (ob[i] > cb[cn - 1]) {
			t->curve_bytes[op][k] = ob[i];
			t->curve_busbw_Bps[op][k] = ow[i];
			k++;
			(*kept_hi)++;
		}
	*kept_lo = nlo;
	t->curve_n[op] = k;
}

/*
 * The bus bandwidth tier t prices `op` with before the calibration (as
 * the cost model falls back, costmodel/cost.c tier_busbw): its own
 * figure, its own curve's largest size, the all-reduce figure (not on an
 * NVLS tier, whose all-reduce is another algorithm), else the datasheet
 * rate times tpp_tier_default_eff.  *src says which kind it is.
 */
static double tier_figure(const struct tpp_tier *t, int op, enum tpp_src *src)
{
	*src = t->busbw_src[op];
	if (t->busbw_Bps[op] > 0)
		return t->busbw_Bps[op];
	if (t->curve_n[op] >= 2)
		return t->curve_busbw_Bps[op][t->curve_n[op] - 1];
	if (op != TPP_COLL_ALL_REDUCE && !t->nvls &&
	    t->busbw_Bps[TPP_COLL_ALL_REDUCE] > 0) {
		*src = t->busbw_src[TPP_COLL_ALL_REDUCE];
		return t->busbw_Bps[TPP_COLL_ALL_REDUCE];
	}
	*src = TPP_SRC_DATASHEET;
	return t->bw_Bps * tpp_tier_default_eff(t);
}

void tpp_cal_apply(const struct tpp_calibration *cal, const char *path,
		   struct tpp_cluster *c)
{
	char src[2048]; /* cut to TPP_SOURCE_LEN where stored */
	char nr[16] = "?";
	int ti, op, p;

	if (cal->ranks > 0) /* 0: the file does not say */
		snprintf(nr, sizeof(nr), "%d", cal->ranks);
	snprintf(src, sizeof(src), "calibration %s (%s, %s backend, %s ranks on %.200s)",
		 path, cal->created_utc, cal->backend, nr,
		 cal->hosts[0] ? cal->hosts : "?");
	for (ti = 0; ti < c->ntiers; ti++) {
		struct tpp_tier *t = &c->tiers[ti];
		/* the tier as the cluster file gave it: the fall-back figures
		 * come from it, not from a collective this loop replaced
		 * already (all-reduce comes first, and stood in for the
		 * others' figure with its calibrated one) */
		const struct tpp_tier orig = *t;
		char tsrc[sizeof(src) + 512 + TPP_SOURCE_LEN];
		int any = 0;
		tpp_strlcpy(tsrc, src, sizeof(tsrc));
		for (op = 0; op < TPP_COLL__COUNT; op++) {
			const struct tpp_cal_coll *tab = pick(cal, ti, (enum tpp_coll)op);
			double f, beyond_Bps, per_gpu, nv = 1, table_top = 0, table_last_bw = 0;
			enum tpp_src beyond_src;
			int n, i, stride, fit_ok, bw_measured, kept_lo = 0, kept_hi = 0;
			if (!tab)
				continue;
			f = tpp_cal_bus_factor((enum tpp_coll)op, tab->group);
			/* an outer tier's figures are per GPU */
			per_gpu = per_gpu_scale(cal, c, ti, tab);
			/*
			 * An NVLS all-reduce over another GPU count than the one
			 * the tier's figures are stated at (measured.nvls_gpus):
			 * expressed at that count (tpp_nvls_scale), so the
			 * curve's calibrated and kept published points and its
			 * figure share one group size.  Under 5 GPUs NCCL ran a
			 * ring: nothing to convert.
			 */
			if (op == TPP_COLL_ALL_REDUCE && orig.nvls && orig.nvls_gpus > 0)
				nv = tpp_nvls_scale(orig.nvls_gpus, tab->group);
			/* keep at most TPP_CURVE_MAX points, evenly spread, always
			 * with the largest size; into a scratch curve first so a
			 * table without 2 usable points changes nothing */
			n = tab->npoints;
			stride = (n + TPP_CURVE_MAX - 2) / (TPP_CURVE_MAX - 1);
			if (stride < 1)
				stride = 1;
			/* the figure beyond a measured curve without a fit that
			 * did not reach the bandwidth-bound sizes: the tier's own
			 * from the cluster file */
			beyond_Bps = tier_figure(&orig, op, &beyond_src);
			{
				double cb[TPP_CURVE_MAX], cw[TPP_CURVE_MAX];
				int cn = 0;
				for (i = 0; cn < TPP_CURVE_MAX; ) {
					const struct tpp_cal_point *pt = &tab->pts[i];
					if (pt->median_s > 0 && pt->bytes > 0 &&
					    (!cn || pt->bytes > cb[cn - 1])) {
						cb[cn] = pt->bytes;
						/* NVLS conversion only where NCCL ran NVLS */
						cw[cn] = pt->bytes * f / pt->median_s * per_gpu *
							 (pt->bytes >= TPP_NVLS_MIN_BYTES ? nv : 1.0);
						cn++;
					}
					if (i == n - 1)
						break;
					i = i + stride < n - 1 ? i + stride : n - 1;
				}
				if (cn < 2 && !tab->fit.valid)
					continue; /* nothing measured replaces the tier's figures */
				fit_ok = tab->fit.valid &&
					 tab->fit.busbw_err_Bps <= FIT_BW_REL_ERR * tab->fit.busbw_Bps;
				bw_measured = fit_ok || (cn >= 2 && measures_bandwidth(tab));
				if (cn >= 2) {
					table_top = cb[cn - 1];
					table_last_bw = cw[cn - 1];
				}
				merge_curve(t, op, cb, cw, cn, !bw_measured, &kept_lo, &kept_hi);
			}
			/*
			 * The bandwidth the cost model prices sizes beyond the
			 * curve with (and where it has no curve): the fit's where
			 * it determines it; else the largest size's if that
			 * measured the bandwidth; else the tier's figure from the
			 * cluster file (published or datasheet), not the few MB/s
			 * of a sweep that stopped in the latency-bound sizes,
			 * which priced a 1 GB all-reduce at minutes.  The source
			 * says which.
			 */
			t->busbw_alpha_s[op] = tab->fit.valid ? tab->fit.alpha_s : 0;
			/* a tier that did not state its NVLS group takes the
			 * table's, when the table replaced its all-reduce
			 * figures whole (none of the published ones kept) */
			if (op == TPP_COLL_ALL_REDUCE && t->nvls && !orig.nvls_gpus &&
			    tab->group >= TPP_NVLS_MIN_GPUS && bw_measured && !kept_lo && !kept_hi)
				t->nvls_gpus = tab->group;
			if (fit_ok) {
				t->busbw_Bps[op] = tab->fit.busbw_Bps * per_gpu * nv;
			} else if (bw_measured) {
				t->busbw_Bps[op] = table_last_bw;
			} else {
				t->busbw_Bps[op] = beyond_Bps;
				tpp_appendf(tsrc, sizeof(tsrc),
					    "; %s: bandwidth not measured (%s, sizes to %.0f B), "
					    "above them the %s %.1f GB/s%s",
					    tpp_coll_names[op], tab->fit.valid ? "fit undetermined" : "no fit",
					    table_top, tpp_src_names[beyond_src], beyond_Bps / TPP_GB,
					    kept_hi ? " and its size curve" : "");
			}
			if (kept_lo)
				tpp_appendf(tsrc, sizeof(tsrc),
					    "; %s: below the smallest size measured, the %s size curve",
					    tpp_coll_names[op], tpp_src_names[beyond_src]);
			if (per_gpu != 1)
				tpp_appendf(tsrc, sizeof(tsrc),
					    "; %s: per GPU, busbw / %.0f (the GPUs of a node in a ring across nodes)",
					    tpp_coll_names[op], 1.0 / per_gpu);
			if (nv != 1)
				tpp_appendf(tsrc, sizeof(tsrc),
					    "; %s: NVLS over %d GPUs, stated at the tier's %d (busbw x %.3f)",
					    tpp_coll_names[op], tab->group, orig.nvls_gpus, nv);
			t->busbw_src[op] = TPP_SRC_CALIBRATION;
			any = 1;
		}
		if (any) {
			/* collectives the calibration did not measure keep
			 * their published figures: keep their citation too */
			int k, others = 0;
			for (k = 0; k < TPP_COLL__COUNT; k++)
				others |= t->busbw_src[k] != TPP_SRC_CALIBRATION &&
					  (t->busbw_Bps[k] > 0 || t->curve_n[k] > 1);
			if (others && t->measured_source[0])
				tpp_appendf(tsrc, sizeof(tsrc),
					    "; the other collectives as before: %s", t->measured_source);
			tpp_strlcpy(t->measured_source, tsrc, sizeof(t->measured_source));
		}
	}
	for (p = 0; p < TPP_PREC__COUNT; p++) {
		const struct tpp_cal_gemm *g = &cal->gemm[p];
		/* fp16 and bf16 run on the same tensor-core path: a
		 * calibration of one stands for the other where the cluster
		 * gives both the same peak and the calibration lacks it (the
		 * published figure would otherwise price fp16 planning beside
		 * a calibrated bf16) */
		if (!g->valid && (p == TPP_PREC_FP16 || p == TPP_PREC_BF16)) {
			int q = p == TPP_PREC_FP16 ? TPP_PREC_BF16 : TPP_PREC_FP16;
			if (cal->gemm[q].valid && c->gpu.peak_flops[p] > 0 &&
			    c->gpu.peak_flops[p] == c->gpu.peak_flops[q])
				g = &cal->gemm[q];
		}
		if (!g->valid || !(g->best_flops_per_s > 0))
			continue;
		/* gemm_source keeps citing the other precisions' figures; a
		 * calibrated one is cited through c->calibration */
		/* the ceiling is a rate held at the power limit: no more than
		 * the settled one, where the run settled; and no shape of the
		 * table above it either (the sweep times each GEMM alone, so
		 * between small ones the clock may rise: a rate above what a
		 * GEMM that fills the device holds is a burst) */
		double cap = g->settled_flops_per_s > 0 ? g->settled_flops_per_s : 0;
		c->gpu.gemm_flops[p] = cap > 0 && cap < g->best_flops_per_s ? cap : g->best_flops_per_s;
		c->gpu.gemm_src[p] = TPP_SRC_CALIBRATION;
		c->gpu.gemm_burst_flops[p] = 0; /* the calibration's rate is used as it is */
		/* the published figure's shape does not go with this one; the
		 * measured table below prices shapes instead */
		memset(c->gpu.gemm_shape[p], 0, sizeof(c->gpu.gemm_shape[p]));
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
				t->flops_per_s[t->n] = (float)(cap > 0 && pt->flops_per_s > cap
								? cap : pt->flops_per_s);
				t->n++;
			}
		}
	}
	tpp_strlcpy(c->calibration, path, sizeof(c->calibration));
}

/* ---- checks against the cluster ------------------------------------------ */

/*
 * The GPU model token of a device name: the first word (split on
 * anything but letters and digits) of 1-3 letters, 2-4 digits and at most
 * 2 letters: "A100" of "NVIDIA A100-SXM4-80GB", "H100" of "NVIDIA H100
 * 80GB HBM3", "MI300X", "GB200", "L40S"; not "SXM4", "80GB" or "HBM3".
 * Upper-cased into tok (size >= 16); 0 when the name has none (a CPU:
 * "AMD EPYC, 2 cores").
 */
static int model_token(const char *name, char *tok, size_t size)
{
	const char *p = name;
	TPP_ASSERT(size >= 16);
	while (*p) {
		const char *w = p;
		size_t len, i = 0, a, d, b;
		while (*p && isalnum((unsigned char)*p))
			p++;
		len = (size_t)(p - w);
		for (a = 0; i < len && isalpha((unsigned char)w[i]); i++)
			a++;
		for (d = 0; i < len && isdigit((unsigned char)w[i]); i++)
			d++;
		for (b = 0; i < len && isalpha((unsigned char)w[i]); i++)
			b++;
		if (i == len && a >= 1 && a <= 3 && d >= 2 && d <= 4 && b <= 2) {
			for (i = 0; i < len; i++)
				tok[i] = (char)toupper((unsigned char)w[i]);
			tok[len] = '\0';
			return 1;
		}
		while (*p && !isalnum((unsigned char)*p))
			p++;
	}
	tok[0] = '\0';
	return 0;
}

/*
 * The most bus bandwidth tier ti of c can carry for table tab, B/s: the
 * datasheet per-GPU rate (a full mesh: the links a group of that size
 * uses), twice that for an all-reduce where the tier reduces in the
 * switch (NVLS, SHARP: each GPU sends its data once, calibration.md 1.6).
 * A group across nodes is bounded per GPU: *scale gets the factor that
 * turns its busbw into the per-GPU rate (per_gpu_scale, the same the
 * figures are applied with).  0: no bound (the group is on one node, or
 * the tier has no rate).
 */
static double tier_cap(const struct tpp_calibration *cal,
		       const struct tpp_cluster *c, int ti,
		       const struct tpp_cal_coll *tab, double *scale)
{
	const struct tpp_tier *t = &c->tiers[ti];
	double cap = t->bw_Bps;
	int n = tab->group;
	*scale = 1;
	if (!(cap > 0))
		return 0;
	if (t->mesh && t->span_gpus > 1 && n > 1 && n < t->span_gpus)
		cap *= (double)(n - 1) / (t->span_gpus - 1);
	if (tab->op == TPP_COLL_ALL_REDUCE && (t->nvls || t->sharp))
		cap *= 2;
	if (ti > 0) {
		*scale = per_gpu_scale(cal, c, ti, tab);
		if (n < 2 || (*scale == 1 && tab->concurrent <= 1))
			return 0; /* on one node */
	}
	return cap;
}

/* The largest bus bandwidth table tab reports: its fit's and its points'. */
static double table_busbw_max(const struct tpp_cal_coll *tab, double *at_bytes)
{
	double f = tpp_cal_bus_factor(tab->op, tab->group), best = 0;
	int i;
	*at_bytes = 0;
	for (i = 0; i < tab->npoints; i++) {
		const struct tpp_cal_point *pt = &tab->pts[i];
		double bw;
		if (!(pt->median_s > 0) || !(pt->bytes > 0))
			continue;
		bw = pt->bytes * f / pt->median_s;
		if (bw > best) {
			best = bw;
			*at_bytes = pt->bytes;
		}
	}
	if (tab->fit.valid && tab->fit.busbw_Bps > best) {
		best = tab->fit.busbw_Bps;
		*at_bytes = 0; /* the fit's */
	}
	return best;
}

int tpp_cal_check(const struct tpp_calibration *cal, const char *path,
		  const struct tpp_cluster *c, FILE *warn, struct tpp_err *err)
{
	char ctok[16], dtok[16];
	int i;

	TPP_ASSERT(cal && path && c);
	/*
	 * Errors first: a group that cannot have been measured in its tier.
	 * For an imported table the user chose the tier (--tier), so it is
	 * wrong; `tpplan calibrate` chose it from the machine it ran on (tier
	 * 0 inside a node), so there it says that machine's nodes are not the
	 * cluster's (a 16-core CPU box against 8-GPU nodes, as exec does with
	 * its own calibration): a warning, the table used as measured.
	 */
	for (i = 0; i < cal->ncoll; i++) {
		const struct tpp_cal_coll *tab = &cal->coll[i];
		const struct tpp_tier *t;
		int over_span;
		if (tab->tier >= c->ntiers || tab->tier == c->ntiers - 1)
			continue; /* no such tier (the caller's check), or the outermost */
		t = &c->tiers[tab->tier];
		over_span = t->span_gpus > 0 && tab->group > t->span_gpus;
		if (strcmp(cal->backend, "import")) {
			if (warn && over_span)
				fprintf(warn, "%s:%d:%d: warning: collectives[%d]: %s over a group "
					"of %d on tier %d of the machine it was measured on, but a "
					"domain of tier %s of cluster %s holds %d GPUs: that "
					"machine's nodes are not the cluster's; used as measured\n",
					path, tab->line, tab->col, i, tpp_coll_names[tab->op],
					tab->group, tab->tier, t->name, c->name, t->span_gpus);
			continue;
		}
		if (over_span)
			return tpp_err_set(err, TPP_E_INPUT, path, tab->line, tab->col,
					   "collectives[%d]: %s over a group of %d on tier %d, "
					   "but a domain of tier %s of cluster %s holds %d GPUs: "
					   "such a group cannot have been measured inside it "
					   "(import it with --tier %d)",
					   i, tpp_coll_names[tab->op], tab->group, tab->tier,
					   t->name, c->name, t->span_gpus, tab->tier + 1);
		/* a tier inside a node, and the group larger than the ranks
		 * the calibration had on a node: it crossed nodes */
		if (t->span_gpus > 0 && t->span_gpus <= c->gpus_per_node &&
		    cal->ranks_per_node > 0 && tab->group > cal->ranks_per_node)
			return tpp_err_set(err, TPP_E_INPUT, path, tab->line, tab->col,
					   "collectives[%d]: %s over a group of %d on tier %d "
					   "(%s, inside a node), but the calibration ran %d "
					   "ranks per node: the group crossed nodes "
					   "(import it with --tier %d)",
					   i, tpp_coll_names[tab->op], tab->group, tab->tier,
					   t->name, cal->ranks_per_node, tab->tier + 1);
	}
	if (!warn)
		return TPP_OK;
	/* another device: its figures are used all the same */
	if (cal->device[0] && c->gpu.name[0] &&
	    model_token(c->gpu.name, ctok, sizeof(ctok)) &&
	    (!model_token(cal->device, dtok, sizeof(dtok)) || strcmp(ctok, dtok))) {
		char at[32] = "";
		if (cal->device_line > 0)
			snprintf(at, sizeof(at), ":%d:%d", cal->device_line, cal->device_col);
		fprintf(warn, "%s%s: warning: measured on \"%s\", which does not look like "
			"the %s of cluster %s: its figures replace the cluster's all the same\n",
			path, at, cal->device, c->gpu.name, c->name);
	}
	/* a GEMM ceiling below 1% of the datasheet peak: no GPU or CPU that
	 * planning is for runs its GEMMs that slowly (A100 reaches 87% and
	 * MI300X 51%, calibration.md s7.2); a unit slip, a failed run or
	 * another machine, and every step time scales with it */
	{
		int p;
		for (p = 0; p < TPP_PREC__COUNT; p++) {
			const struct tpp_cal_gemm *g = &cal->gemm[p];
			double peak = c->gpu.peak_flops[p];
			char at[32] = "";
			if (g->line > 0)
				snprintf(at, sizeof(at), ":%d:%d", g->line, g->col);
			if (g->valid && peak > 0 && g->best_flops_per_s < 0.01 * peak)
				fprintf(warn, "%s%s: warning: gemm %s: measured %.3g TFLOP/s, %.2g%% of the %s's "
					"%s peak %.1f TFLOP/s: a calibration of another machine, or a failed "
					"run? used as measured\n",
					path, at, tpp_prec_names[p], g->best_flops_per_s / TPP_TFLOPS,
					100 * g->best_flops_per_s / peak, c->gpu.name,
					tpp_prec_names[p], peak / TPP_TFLOPS);
		}
	}
	/* more than the tier carries: measured elsewhere, or a wrong group */
	for (i = 0; i < cal->ncoll; i++) {
		const struct tpp_cal_coll *tab = &cal->coll[i];
		double scale, cap, bw, at;
		char where[64] = "";
		if (tab->tier >= c->ntiers)
			continue;
		cap = tier_cap(cal, c, tab->tier, tab, &scale);
		bw = table_busbw_max(tab, &at);
		if (!(cap > 0) || !(bw * scale > cap))
			continue;
		if (tab->line > 0)
			snprintf(where, sizeof(where), ":%d:%d", tab->line, tab->col);
		if (at > 0)
			fprintf(warn, "%s%s: warning: collectives[%d]: %s bus bandwidth %.1f GB/s at %.0f B",
				path, where, i, tpp_coll_names[tab->op], bw / TPP_GB, at);
		else
			fprintf(warn, "%s%s: warning: collectives[%d]: %s fitted bus bandwidth %.1f GB/s",
				path, where, i, tpp_coll_names[tab->op], bw / TPP_GB);
		if (scale != 1)
			fprintf(warn, " (%.1f GB/s per GPU: a ring across nodes runs at a node's NICs, busbw / %.0f GPUs per node of the %d ranks)",
				bw * scale / TPP_GB, 1 / scale, tab->group);
		fprintf(warn, " is more than tier %s of cluster %s carries (%.1f GB/s per GPU%s): "
			"used as measured\n", c->tiers[tab->tier].name, c->name, cap / TPP_GB,
			tab->op == TPP_COLL_ALL_REDUCE && (c->tiers[tab->tier].nvls ||
							   c->tiers[tab->tier].sharp)
			? ", twice the datasheet rate with in-switch reduction" : ", datasheet");
	}
	return TPP_OK;
}
