/*
 * report.h - `tpplan report`: a directory with index.html, report.md, the
 * gnuplot scripts (*.gp) and data (*.dat) behind every figure, and the
 * figures (*.png) gnuplot draws from them.
 *
 * Data flow: cmd_report.c loads the inputs and runs the searches (the
 * plan, the scaling curve, the bandwidth sensitivity) into struct
 * tpp_report --tpp_report_write--> the files.  gnuplot runs as a separate
 * program from DIR, one script per figure; without it the report holds
 * tables only and says so.
 */
#ifndef TPP_REPORT_H
#define TPP_REPORT_H

#include "calibration.h"
#include "cli.h"

#define TPP_REPORT_SCALE_MAX 8
#define TPP_REPORT_PHASE_MAX 32

/* One point of the scaling curve: the best layout for `gpus` GPUs. */
struct tpp_report_scale {
	int gpus;
	int ok;                /* a layout fits (else the rest is unset) */
	int stopped;           /* not ok: the search ran out of its time limit */
	int unmatched;         /* not ok: no layout of this count matches --layout */
	double step_s, tokens_per_s, mfu;
	char layout[200];      /* its layout_arg */
	int optimistic;        /* ZeRO-3 across nodes (tpp_eval_optimistic) */
};

/* One row of the bandwidth sensitivity table. */
struct tpp_report_sens {
	double factor;         /* scale of the inter-node tiers (0.5, 1, 2) */
	int ok;
	int stopped;           /* not ok: the search ran out of its time limit */
	double step_s, tokens_per_s;
	char layout[200];
	int optimistic;        /* ZeRO-3 across nodes (tpp_eval_optimistic) */
};

/* One phase of `tpplan exec --json` (schema tpplan.exec/v1). */
struct tpp_report_phase {
	char name[48];
	int count;
	double measured_s;
	double predicted_s;    /* < 0: no prediction */
};

struct tpp_report {
	const struct tpp_plan_ctx *x;   /* model, cluster (calibration applied), options, search */
	const struct tpp_plan *plan;    /* n_top 0: no layout is feasible */
	/* with no feasible layout: the smallest count of 2x .. 64x the
	 * GPUs at which one fits (tpp_cli_first_fit: 0 none, -1 not
	 * known), and its best layout */
	int first_fit_gpus;
	struct tpp_eval first_fit;
	/* fewer GPUs that plan a shorter step, or with no feasible layout
	 * fit at all (tpp_cli_fewer_gpus; gpus 0: none or not searched) */
	struct tpp_cli_fewer fewer;
	/* with a best layout of ZeRO-3 across nodes, the search for the
	 * best that is not (tpp_cli_best_without_zero3) */
	struct tpp_cli_alt no_zero3;
	const char *model_arg, *cluster_arg;
	const char *layout_arg;         /* --layout, NULL without */
	const char *cal_path;           /* NULL: datasheet / published figures */
	const struct tpp_calibration *cal; /* NULL without a calibration */
	const char *exec_path;          /* NULL without --exec */
	char exec_layout[200];
	char exec_model[64];            /* "" when the results do not say */
	char exec_cluster[128];
	char exec_shape[160];           /* "hidden 96, heads 12, ..." or "" */
	char exec_calibration[1024];    /* the calibration its predictions used, or "" */
	/* its numerics check against the unsharded reference: 1 passed, 0
	 * failed (JSON "check".pass false, or "status" "check_failed"), -1
	 * not run or not said; the largest relative error and the tolerance */
	int exec_check;
	double exec_check_err, exec_check_tol;
	int nexec_notes;                /* its notes (JSON "notes"), up to 8 */
	char exec_notes[8][512];
	int nphase;
	struct tpp_report_phase phase[TPP_REPORT_PHASE_MAX];
	int nscale;
	struct tpp_report_scale scale[TPP_REPORT_SCALE_MAX];
	int nsens;
	struct tpp_report_sens sens[3];
	int plots;                      /* 1: try to draw the figures */
};

/*
 * Read the per-phase measured / predicted times of a `tpplan exec --json`
 * file into r->phase (tolerant scanner: keys in any order, unknown keys
 * ignored).  Returns TPP_OK, or TPP_E_INPUT with a message on stderr when
 * the file cannot be read or holds no phases.
 */
int tpp_report_read_exec(const char *path, struct tpp_report *r);

/*
 * Megatron-LM launch arguments reproducing layout `e` of model `m` under
 * options `o` (precision, fp8 recipe, the gradient-reduction and pipeline
 * overlaps), into args; what Megatron-LM cannot express (ZB-H1,
 * ZeRO-2/3 with pipelining) and what needs saying (Megatron-FSDP for
 * ZeRO-2/3, an uneven layer split given as Megatron-Core's
 * --pipeline-model-parallel-layout) into note ("" when nothing).
 */
void tpp_report_megatron_args(const struct tpp_model *m,
			      const struct tpp_cost_opts *o,
			      const struct tpp_eval *e, char *args,
			      size_t args_size, char *note, size_t note_size);

/*
 * TPP_OK unless `dir`, or a directory above it, exists and is not a
 * directory; then prints that (naming it) and returns TPP_E_SYSTEM.
 * tpp_report_write checks the same; `tpplan report` checks first, before
 * it reads its inputs.
 */
int tpp_report_check_dir(const char *dir);
/* TPP_E_USAGE (said on stderr) when one of the n input files (NULL or ""
 * skipped) is a file a report into dir writes or removes; TPP_OK else. */
int tpp_report_check_inputs(const char *dir, const char *const *inputs, size_t n);

/* mkdir -p dir after tpp_report_check_dir: `tpplan report` makes it once
 * its inputs have been read and before its searches, so a directory that
 * cannot be made (a read-only file system, /sys) is said before minutes
 * of searching.  Prints the error; returns an exit status. */
int tpp_report_make_dir(const char *dir);

/*
 * Write the report into `dir` (created with its parents if missing).  With
 * no feasible layout (plan->n_top 0) the report explains why instead:
 * rejections, the layout closest to fitting and its memory, from how many
 * GPUs a layout fits, and the scaling table toward that count.
 * Every file is written to a temporary name and renamed.  Figures that
 * gnuplot cannot draw are left out with a warning on stderr; the report
 * says which.  Returns TPP_OK, or TPP_E_SYSTEM with a message on stderr
 * when a file cannot be written.
 */
int tpp_report_write(const char *dir, const struct tpp_report *r);

#endif
