/*
 * fit.c - latency-bandwidth (Hockney) fits of measured collective tables,
 * with GSL.
 *
 * Data flow: struct tpp_calibration (raw points from bench.c or import.c)
 * --tpp_cal_fit_all--> per-table fits (alpha, busbw) and joint fits per
 * (op, tier) across group sizes --> calfile.c writes them, apply.c hands
 * them to the cost model.
 *
 * Model (calibration.md 5.1 "Fitting with GSL"): t = alpha + x / busbw with
 * x = bytes * factor(n), factor the nccl-tests bus-bandwidth factor
 * (calibration.md 1.6).  It is linear in (alpha, 1/busbw), so it is fitted
 * with weighted linear least squares (gsl_multifit_wlinear), weights 1/t^2
 * so that the fit minimises the RELATIVE error and every decade of message
 * sizes counts alike.  The joint fit adds a per-step latency:
 * t = alpha0 + alpha_step * steps(n) + x / busbw.
 *
 * Fit range: every point with bytes > 0 and t > 0.  With relative weights
 * the latency-bound sizes pin alpha and the bandwidth-bound sizes pin busbw
 * without either swamping the other; restricting the range to the
 * bandwidth-dominated sizes would leave alpha poorly determined, and the
 * shape in between (NCCL protocol switches) is kept as the measured curve
 * by apply.c anyway.  lo_bytes / hi_bytes record the range used.
 *
 * Quality: every other point (odd indices within each table) is held out,
 * the model is fitted on the rest and mape_heldout is the mean |relative
 * error| on the held-out points (calibration.md 5.1 step 8).  The
 * parameters returned are then refitted on ALL points: the held-out fit
 * only estimates how well the model generalises between sizes, and using
 * all points halves the variance of the parameters we keep.
 *
 * Standard errors: GSL's covariance (X^T W X)^-1 assumes the weights are
 * exact inverse variances; ours are only relative, so it is scaled by the
 * residual variance chisq / (N - p).  busbw = 1/c1, so its error is
 * c1_err / c1^2 (first-order propagation).
 */
#include "calibration.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_vector.h>

#define MIN_POINTS 4 /* two parameters, half the points held out */

double tpp_cal_bus_factor(enum tpp_coll op, int n)
{
	TPP_ASSERT(n >= 1);
	switch (op) {
	case TPP_COLL_ALL_REDUCE:
		return 2.0 * (n - 1) / n;
	case TPP_COLL_ALL_GATHER:
	case TPP_COLL_REDUCE_SCATTER:
	case TPP_COLL_ALL_TO_ALL:
		return (double)(n - 1) / n;
	case TPP_COLL_SEND_RECV:
		return 1.0;
	default:
		TPP_ASSERT(0);
	}
	return 0;
}

double tpp_cal_steps(enum tpp_coll op, int n)
{
	TPP_ASSERT(n >= 1);
	switch (op) {
	case TPP_COLL_ALL_REDUCE:
		return 2.0 * (n - 1);
	case TPP_COLL_SEND_RECV:
		return 1.0;
	case TPP_COLL_ALL_GATHER:
	case TPP_COLL_REDUCE_SCATTER:
	case TPP_COLL_ALL_TO_ALL:
		return (double)(n - 1);
	default:
		TPP_ASSERT(0);
	}
	return 0;
}

/* A point enters the fit when its size and time are positive and finite. */
static int usable(const struct tpp_cal_point *p)
{
	return p->bytes > 0 && isfinite(p->bytes) && p->median_s > 0 &&
	       isfinite(p->median_s);
}

/*
 * One regression problem: rows of np predictors (design columns) with the
 * response y; `held` marks rows held out of the first fit.
 */
struct problem {
	int nrows, np;
	double *X;  /* nrows x np, row-major */
	double *y;
	int *held;
};

struct solution {
	double c[3];
	double cov[3][3]; /* scaled by the residual variance */
	double mape_heldout;
	int dof;
};

/*
 * Weighted least squares on the rows with use(row) (all rows when
 * `only_kept` is 0, the non-held rows when 1); weights 1/y^2.  Columns are
 * scaled by their largest magnitude before the fit (bytes reach 1e10 while
 * the intercept column is 1), and the coefficients scaled back.
 */
static int solve(const struct problem *pb, int only_kept, struct solution *s,
		 struct tpp_err *err)
{
	gsl_matrix *X = NULL, *cov = NULL;
	gsl_vector *w = NULL, *y = NULL, *c = NULL;
	gsl_multifit_linear_workspace *ws = NULL;
	double scale[3] = {0, 0, 0}, chisq;
	int n = 0, i, j, k, rc = TPP_OK, g;

	TPP_ASSERT(pb->np <= 3);
	for (i = 0; i < pb->nrows; i++)
		if (!only_kept || !pb->held[i])
			n++;
	TPP_ASSERT(n >= pb->np);
	for (i = 0; i < pb->nrows; i++)
		for (j = 0; j < pb->np; j++)
			scale[j] = fmax(scale[j], fabs(pb->X[i * pb->np + j]));
	for (j = 0; j < pb->np; j++)
		if (scale[j] == 0)
			scale[j] = 1;

	X = gsl_matrix_alloc((size_t)n, (size_t)pb->np);
	cov = gsl_matrix_alloc((size_t)pb->np, (size_t)pb->np);
	w = gsl_vector_alloc((size_t)n);
	y = gsl_vector_alloc((size_t)n);
	c = gsl_vector_alloc((size_t)pb->np);
	ws = gsl_multifit_linear_alloc((size_t)n, (size_t)pb->np);
	if (!X || !cov || !w || !y || !c || !ws) {
		rc = tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
				 "calibration fit: out of memory");
		goto out;
	}
	for (i = 0, k = 0; i < pb->nrows; i++) {
		if (only_kept && pb->held[i])
			continue;
		for (j = 0; j < pb->np; j++)
			gsl_matrix_set(X, (size_t)k, (size_t)j,
				       pb->X[i * pb->np + j] / scale[j]);
		gsl_vector_set(y, (size_t)k, pb->y[i]);
		gsl_vector_set(w, (size_t)k, 1.0 / (pb->y[i] * pb->y[i]));
		k++;
	}
	g = gsl_multifit_wlinear(X, w, y, c, cov, &chisq, ws);
	if (g) {
		rc = tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
				 "calibration fit: gsl_multifit_wlinear: %s",
				 gsl_strerror(g));
		goto out;
	}
	s->dof = n - pb->np;
	for (j = 0; j < pb->np; j++) {
		s->c[j] = gsl_vector_get(c, (size_t)j) / scale[j];
		for (k = 0; k < pb->np; k++)
			s->cov[j][k] = gsl_matrix_get(cov, (size_t)j, (size_t)k) *
				       (s->dof > 0 ? chisq / s->dof : 0.0) /
				       (scale[j] * scale[k]);
	}
	/* Mean |relative error| on the held-out rows. */
	s->mape_heldout = 0;
	if (only_kept) {
		int nh = 0;
		for (i = 0; i < pb->nrows; i++) {
			double pred = 0;
			if (!pb->held[i])
				continue;
			for (j = 0; j < pb->np; j++)
				pred += s->c[j] * pb->X[i * pb->np + j];
			s->mape_heldout += fabs(pred - pb->y[i]) / pb->y[i];
			nh++;
		}
		if (nh)
			s->mape_heldout /= nh;
	}
out:
	gsl_multifit_linear_free(ws);
	gsl_vector_free(c);
	gsl_vector_free(y);
	gsl_vector_free(w);
	gsl_matrix_free(cov);
	gsl_matrix_free(X);
	return rc;
}

/* Held-out fit for the error estimate, then the fit on all rows. */
static int solve_both(const struct problem *pb, struct solution *all,
		      struct tpp_err *err)
{
	struct solution held;
	int rc;
	memset(&held, 0, sizeof(held));
	memset(all, 0, sizeof(*all));
	if ((rc = solve(pb, 1, &held, err)))
		return rc;
	if ((rc = solve(pb, 0, all, err)))
		return rc;
	all->mape_heldout = held.mape_heldout;
	return TPP_OK;
}

/* GSL's default handler aborts; ours report through return codes. */
static void gsl_init(void)
{
	gsl_set_error_handler_off();
}

int tpp_cal_fit_table(const struct tpp_cal_coll *t, struct tpp_cal_fit *out,
		      struct tpp_err *err)
{
	struct problem pb;
	struct solution s;
	double X[TPP_CAL_MAX_POINTS * 2], y[TPP_CAL_MAX_POINTS];
	int held[TPP_CAL_MAX_POINTS];
	struct tpp_cal_fit f;
	double factor;
	int i, n = 0, rc;

	TPP_ASSERT(t && out);
	TPP_ASSERT(t->npoints >= 0 && t->npoints <= TPP_CAL_MAX_POINTS);
	TPP_ASSERT(t->group >= 1);
	gsl_init();
	memset(&f, 0, sizeof(f));
	factor = tpp_cal_bus_factor(t->op, t->group);
	for (i = 0; i < t->npoints; i++) {
		const struct tpp_cal_point *p = &t->pts[i];
		if (!usable(p))
			continue;
		if (!n || p->bytes < f.lo_bytes)
			f.lo_bytes = p->bytes;
		if (!n || p->bytes > f.hi_bytes)
			f.hi_bytes = p->bytes;
		X[2 * n] = 1.0;
		X[2 * n + 1] = p->bytes * factor;
		y[n] = p->median_s;
		held[n] = n % 2;
		n++;
	}
	/* factor 0 (a group of one) carries no bandwidth information. */
	if (n < MIN_POINTS || factor <= 0) {
		*out = f; /* valid = 0: too few points is not an error */
		return TPP_OK;
	}
	pb.nrows = n;
	pb.np = 2;
	pb.X = X;
	pb.y = y;
	pb.held = held;
	if ((rc = solve_both(&pb, &s, err)))
		return rc;
	if (!(s.c[1] > 0) || !isfinite(s.c[0])) {
		*out = f; /* non-positive bandwidth: the model does not fit */
		return TPP_OK;
	}
	f.alpha_s = s.c[0];
	f.busbw_Bps = 1.0 / s.c[1];
	f.alpha_err_s = sqrt(fmax(s.cov[0][0], 0));
	f.busbw_err_Bps = sqrt(fmax(s.cov[1][1], 0)) / (s.c[1] * s.c[1]);
	f.mape_heldout = s.mape_heldout;
	f.valid = isfinite(f.busbw_Bps) && isfinite(f.alpha_err_s) &&
		  isfinite(f.busbw_err_Bps) && isfinite(f.mape_heldout);
	*out = f;
	return TPP_OK;
}

/*
 * Joint fit of (op, tier) over the tables that ran alone (concurrent == 1:
 * concurrent groups share NICs and see a different bandwidth).  Needs at
 * least two distinct step counts (else steps is collinear with the
 * intercept: send_recv never qualifies) and 2 * 3 usable points.
 */
static int fit_joint(const struct tpp_calibration *cal, enum tpp_coll op,
		     int tier, struct tpp_cal_joint *out, int *found,
		     struct tpp_err *err)
{
	const size_t maxrows = (size_t)TPP_CAL_MAX_COLL * TPP_CAL_MAX_POINTS;
	double *X = NULL, *y = NULL;
	int *held = NULL;
	struct problem pb;
	struct solution s;
	double steps0 = -1;
	int distinct = 0, n = 0, i, j, rc = TPP_OK;

	*found = 0;
	X = malloc(maxrows * 3 * sizeof(*X));
	y = malloc(maxrows * sizeof(*y));
	held = malloc(maxrows * sizeof(*held));
	if (!X || !y || !held) {
		rc = tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
				 "calibration fit: out of memory");
		goto out;
	}
	for (i = 0; i < cal->ncoll; i++) {
		const struct tpp_cal_coll *t = &cal->coll[i];
		double steps, factor;
		int k = 0;
		if (t->op != op || t->tier != tier || t->concurrent != 1 ||
		    t->group < 2)
			continue;
		steps = tpp_cal_steps(op, t->group);
		factor = tpp_cal_bus_factor(op, t->group);
		if (steps0 < 0)
			steps0 = steps;
		else if (steps != steps0)
			distinct = 1;
		for (j = 0; j < t->npoints; j++) {
			const struct tpp_cal_point *p = &t->pts[j];
			if (!usable(p))
				continue;
			X[3 * n] = 1.0;
			X[3 * n + 1] = steps;
			X[3 * n + 2] = p->bytes * factor;
			y[n] = p->median_s;
			held[n] = k++ % 2; /* alternate within each table */
			n++;
		}
	}
	if (!distinct || n < 2 * 3)
		goto out;
	*found = 1;
	memset(out, 0, sizeof(*out));
	out->op = op;
	out->tier = tier;
	pb.nrows = n;
	pb.np = 3;
	pb.X = X;
	pb.y = y;
	pb.held = held;
	if ((rc = solve_both(&pb, &s, err)))
		goto out;
	if (s.c[2] > 0 && isfinite(s.c[0]) && isfinite(s.c[1]) &&
	    isfinite(s.mape_heldout)) {
		out->valid = 1;
		out->alpha0_s = s.c[0];
		out->alpha_step_s = s.c[1];
		out->busbw_Bps = 1.0 / s.c[2];
		out->mape_heldout = s.mape_heldout;
	}
out:
	free(held);
	free(y);
	free(X);
	return rc;
}

int tpp_cal_fit_all(struct tpp_calibration *cal, struct tpp_err *err)
{
	int i, op, tier, rc;

	TPP_ASSERT(cal);
	TPP_ASSERT(cal->ncoll >= 0 && cal->ncoll <= TPP_CAL_MAX_COLL);
	gsl_init();
	for (i = 0; i < cal->ncoll; i++)
		if ((rc = tpp_cal_fit_table(&cal->coll[i], &cal->coll[i].fit,
					    err)))
			return rc;
	cal->njoint = 0;
	for (op = 0; op < TPP_COLL__COUNT; op++)
		for (tier = 0; tier < TPP_MAX_TIERS; tier++) {
			struct tpp_cal_joint j;
			int found;
			if ((rc = fit_joint(cal, (enum tpp_coll)op, tier, &j,
					    &found, err)))
				return rc;
			/* Only valid joint fits are kept (the file has no
			 * null form for them). */
			if (found && j.valid) {
				TPP_ASSERT(cal->njoint <
					   (int)TPP_ARRAY_LEN(cal->joint));
				cal->joint[cal->njoint++] = j;
			}
		}
	return TPP_OK;
}
