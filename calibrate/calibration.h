/*
 * calibration.h - measured collective and GEMM figures of one cluster: the
 * raw tables, their fits and the environment they were taken in.
 *
 * Data flow:  micro-benchmarks (bench.c over a backend) --> struct
 * tpp_calibration (raw points) --tpp_cal_fit_all--> fits --tpp_cal_write-->
 * calibration YAML (schema tpplan.calibration/v1, written atomically)
 * --tpp_cal_load--> struct --tpp_cal_check (against the cluster),
 * tpp_cal_apply--> the cluster description the cost model reads
 * (measured figures override datasheet ones, marked TPP_SRC_CALIBRATION).
 * nccl-tests output can be imported into the same struct (tpp_cal_import).
 * No MPI, CUDA or NCCL types here.
 */
#ifndef TPP_CALIBRATION_H
#define TPP_CALIBRATION_H

#include "cluster.h"

#define TPP_CAL_MAX_POINTS 64   /* message sizes per collective table */
#define TPP_CAL_MAX_COLL 96     /* collective tables */
#define TPP_CAL_MAX_GEMM 256    /* GEMM shapes per precision */
#define TPP_CAL_STR 256
#define TPP_CAL_SCHEMA "tpplan.calibration/v1" /* the file's schema line */
/* Bounds every measured point must meet (import.c, calfile.c): a time in
 * (0, TPP_CAL_MAX_TIME_S], and bytes / time at most TPP_CAL_MAX_ALGBW_Bps
 * (100 TB/s, beyond any interconnect: a faster point is a misread or
 * mistyped time, and would price collectives at an infinite bandwidth). */
#define TPP_CAL_MAX_TIME_S 1e6
#define TPP_CAL_MAX_ALGBW_Bps 1e14
/* Floor of a GEMM rate in a calibration (best_tflops and every point):
 * 1e-9 TFLOP/s, a thousand FLOP/s, slower than any timed GEMM.  Below it
 * is a unit slip or a misread; it kept the step time finite (1e-307
 * TFLOP/s priced a step past the largest double).  Fitted bus bandwidths
 * have their floor, 1e-9 GB/s, in calfile.c's field tables. */
#define TPP_CAL_MIN_TFLOPS 1e-9

/* One message size of a collective sweep (times in seconds). */
struct tpp_cal_point {
	double bytes;     /* nccl-tests size convention (see cost.h tpp_coll_time) */
	double median_s;  /* median over iterations of the max over ranks */
	double p10_s, p90_s;
};

/* Latency-bandwidth (Hockney) fit t = alpha + bytes * factor(n) / busbw. */
struct tpp_cal_fit {
	int valid;
	double alpha_s, busbw_Bps;          /* fitted */
	double alpha_err_s, busbw_err_Bps;  /* one standard error each */
	double mape_heldout;                /* |relative error| on held-out sizes, fraction */
	double lo_bytes, hi_bytes;          /* sizes the fit used */
};

struct tpp_cal_coll {
	enum tpp_coll op;
	int tier;        /* index of the cluster tier the group spans (0 = innermost) */
	int group;       /* ranks per group */
	int concurrent;  /* groups running at once (1 = alone) */
	int npoints;
	struct tpp_cal_point pts[TPP_CAL_MAX_POINTS];
	struct tpp_cal_fit fit;
	int line, col;   /* where tpp_cal_load read the table (1-based); 0 otherwise */
	int fit_given;   /* tpp_cal_load: the table had its fit: key (null or not) */
};

/* meta.tables' counts (struct tpp_calibration.tables_n) */
enum tpp_cal_count {
	TPP_CAL_N_COLL, TPP_CAL_N_COLL_POINTS, TPP_CAL_N_JOINT, TPP_CAL_N_GEMM,
	TPP_CAL_N_GEMM_POINTS, TPP_CAL_N__COUNT
};

/* Joint fit across group sizes of one (op, tier):
 * t = alpha0 + alpha_step * steps(n) + bytes * factor(n) / busbw. */
struct tpp_cal_joint {
	int valid;
	enum tpp_coll op;
	int tier;
	double alpha0_s, alpha_step_s, busbw_Bps;
	double mape_heldout;
};

struct tpp_cal_gemm_point {
	int m, n, k;
	double median_s;
	double flops_per_s; /* 2mnk / median */
};

struct tpp_cal_gemm {
	int valid;
	enum tpp_prec prec;
	int npoints;
	struct tpp_cal_gemm_point pts[TPP_CAL_MAX_GEMM];
	double best_flops_per_s; /* best over the measured shapes */
	/* Seconds of back-to-back GEMMs run before the sweep to bring the
	 * device to its sustained, power-limited clock (0: not settled, the
	 * rates may be boost-clock bursts), and the last settling window's
	 * rate (slowest rank). */
	double settled_s, settled_flops_per_s;
	int settled_m, settled_n, settled_k; /* the shape it settled at; 0 = unknown */
	int line, col;   /* where tpp_cal_load read the table (1-based); 0 otherwise */
};

struct tpp_calibration {
	/* environment */
	char created_utc[32];       /* "2026-11-30T03:30:00Z" */
	char tpplan_version[32];
	char backend[16];           /* "cpu", "cuda", "import" */
	char hosts[TPP_CAL_STR];    /* comma-separated */
	char device[TPP_CAL_STR];   /* GPU or CPU model */
	int device_line, device_col; /* where tpp_cal_load read it (1-based); 0 otherwise */
	char mpi[TPP_CAL_STR], blas[TPP_CAL_STR], cuda[64], nccl[64], driver[64];
	char source[TPP_CAL_STR];   /* e.g. imported file name */
	int ranks, ranks_per_node;
	/* measurements */
	int ncoll;
	struct tpp_cal_coll coll[TPP_CAL_MAX_COLL];
	int njoint;
	struct tpp_cal_joint joint[TPP_COLL__COUNT * TPP_MAX_TIERS];
	struct tpp_cal_gemm gemm[TPP_PREC__COUNT];
	/* meta.tables as tpp_cal_load read it: what the writer wrote, in
	 * the order of enum tpp_cal_count, checked against what the file
	 * holds (a file cut short at a line boundary loads otherwise);
	 * tables_given 0: a file written before the key or by hand */
	int tables_given;
	int tables_n[TPP_CAL_N__COUNT];
};

/* The environment strings of a calibration (device, hosts, versions,
 * source, ...) with control characters other than newline and tab shown
 * as '?': they come from other tools' output and are printed (a terminal
 * escape sequence would act). */
void tpp_cal_printable(struct tpp_calibration *c);

/* nccl-tests bus-bandwidth factor of `op` over n ranks (calibration.md 1.6). */
double tpp_cal_bus_factor(enum tpp_coll op, int n);
/* Ring steps used by the joint fit: 2(n-1) for all-reduce, n-1 otherwise. */
double tpp_cal_steps(enum tpp_coll op, int n);

/* ---- fit.c (GSL) ---------------------------------------------------------- */

/*
 * Fit every table of `cal` (weighted least squares on relative error,
 * gsl_multifit_wlinear; every other size held out to measure the error)
 * and the joint fits per (op, tier).  Tables with fewer than 4 usable
 * points get fit.valid = 0.  Returns TPP_OK or TPP_E_SYSTEM (GSL failure,
 * message in err).
 */
int tpp_cal_fit_all(struct tpp_calibration *cal, struct tpp_err *err);

/* Fit one table; exposed for tests. */
int tpp_cal_fit_table(const struct tpp_cal_coll *t, struct tpp_cal_fit *out,
		      struct tpp_err *err);

/* ---- calfile.c (YAML) ----------------------------------------------------- */

/* Write `cal` as YAML to `path` atomically (temp file in the same directory,
 * fsync, rename): a crash or kill leaves any previous file intact. */
int tpp_cal_write(const struct tpp_calibration *cal, const char *path,
		  struct tpp_err *err);
/* The same, never losing a calibration already at `path`: the old file is
 * kept as PATH.<its mtime, YYYYmmddTHHMMSSZ>.bak (hard link, made before
 * the rename; "-N" added if taken), whose name goes to `kept` ("" when
 * nothing was there); the new file keeps the old one's permissions; a
 * symbolic link is followed, so that it points at the new file
 * (common/tpp_afile.h does all of it: tpp_afile_open_keep). */
int tpp_cal_write_keep(const struct tpp_calibration *cal, const char *path,
		       char *kept, size_t kept_size, struct tpp_err *err);
/* When the write to the user's path failed, so that a measurement is
 * never lost: save `cal` to a fresh $TMPDIR/tpplan-calibration-XXXXXX.yaml
 * (or /tmp/...; its name to `saved`), or, failing that, write it to a
 * stream (standard output).  TPP_E_INPUT for a non-finite number (the
 * same refusal as tpp_cal_write), TPP_E_SYSTEM for I/O errors. */
int tpp_cal_write_rescue(const struct tpp_calibration *cal, char *saved,
			 size_t saved_size, struct tpp_err *err);
int tpp_cal_write_stream(const struct tpp_calibration *cal, FILE *f,
			 struct tpp_err *err);
/* Load a calibration YAML; located errors (file:line:col) on bad input. */
int tpp_cal_load(const char *path, struct tpp_calibration *out,
		 struct tpp_err *err);

/* ---- import.c ------------------------------------------------------------- */

/*
 * Import nccl-tests output (its text table, or its -J JSON) for collective
 * `op` run over `group` ranks on cluster tier `tier`; appends one table to
 * `cal` (the out-of-place column of the text output).  The collective is
 * taken from the file where it says (JSON), else from the `op` argument
 * (TPP_COLL__COUNT: guess from the file name, e.g. all_reduce_perf.txt).
 * Where the file lists its ranks ("#  Rank N Group G ... on HOST" lines,
 * JSON "devices"), the group is the ranks of the first one's
 * NCCL_TESTS_SPLIT group: `group` 0 takes it, another `group` than it is
 * an error.  `tier` -1 means "not given": tier 0, unless the group's
 * ranks are on several hosts (an error naming --tier: a group across
 * nodes is no tier-0 measurement, except where the caller says so, as
 * for a GB200 NVL72 rack).  Errors (TPP_E_INPUT, TPP_E_USAGE for a tier
 * out of range) name the file, its line:col where known, and the flag.
 */
int tpp_cal_import(const char *path, enum tpp_coll op, int group, int tier,
		   struct tpp_calibration *cal, struct tpp_err *err);
/* The same, with warnings on `warn` (NULL: none): a text run without
 * nccl-tests' closing summary line, cut short. */
int tpp_cal_import_warn(const char *path, enum tpp_coll op, int group, int tier,
			struct tpp_calibration *cal, FILE *warn, struct tpp_err *err);

/* ---- shapes.c ------------------------------------------------------------- */

struct tpp_model;
struct tpp_cal_shape {
	int m, n, k;
};
/*
 * The GEMM shapes of one transformer layer and the logits of model `m`
 * at `tokens` tokens per micro-batch, for every TP degree 1, 2, 4, ...
 * <= max_tp that divides it, in forward, input-gradient and
 * weight-gradient orientation, without duplicates.  Writes at most `cap`
 * shapes and returns how many there are (may exceed cap).
 */
int tpp_cal_model_shapes(const struct tpp_model *m, int tokens, int max_tp,
			 struct tpp_cal_shape *out, int cap);

/* ---- apply.c --------------------------------------------------------------- */

/*
 * Override the cluster's figures with the calibration's: for each (tier,
 * op) the table of the largest group (its measured curve and fitted
 * bandwidth), and the best measured GEMM rate per precision; each marked
 * TPP_SRC_CALIBRATION with `path` as the source.  Tiers the calibration
 * has nothing for keep their datasheet / published figures.
 */
void tpp_cal_apply(const struct tpp_calibration *cal, const char *path,
		   struct tpp_cluster *c);

/*
 * Check `cal` (read from `path`) against cluster `c` before applying it.
 * Errors (TPP_E_INPUT, at the table's path:line:col): a table on an inner
 * tier whose group is larger than that tier's domain (span_gpus), or, on
 * a tier inside a node, larger than the ranks per node the calibration
 * ran: it cannot have been measured inside the tier.  Tables for tiers
 * the cluster does not have are left to the caller.  Warnings, one line
 * each to `warn` (NULL: none), the figures being used all the same: the
 * calibration's device does not look like the cluster's GPU (model
 * tokens such as A100, H100, MI300X differ, or the device has none, as a
 * CPU; nothing when either name is empty), or a table's bus bandwidth is
 * more than its tier carries (tier_cap in apply.c).
 */
int tpp_cal_check(const struct tpp_calibration *cal, const char *path,
		  const struct tpp_cluster *c, FILE *warn, struct tpp_err *err);

#endif
