/*
 * bench.h - the measurement harness of `tpplan calibrate`: collective and
 * GEMM sweeps over a backend (backend.h), results in struct
 * tpp_calibration (raw points; fitting is tpp_cal_fit_all's job).
 *
 * Data flow: cli/cmd_calibrate.c --tpp_bench_init (MPI_Init)-->
 * tpp_bench_run (every rank; sweeps; results complete on rank 0) -->
 * rank 0: tpp_cal_fit_all, tpp_cal_write --> tpp_bench_finalize.
 * Method: nccl-tests (shared/reference/calibration.md 1.4, 5.1) with
 * per-iteration times, each the max over the ranks, summarised by the
 * median / p10 / p90; GEMMs as mamf-finder (5.2), cache flushed between
 * iterations, after settling the device at its sustained clock
 * (gemm_settle).  No MPI types here.
 */
#ifndef TPP_BENCH_H
#define TPP_BENCH_H

#include "backend.h"
#include "calibration.h"

struct tpp_bench_shape {
	int m, n, k;
};

/* Settling before each precision's GEMM sweep (bench.c gemm_settle): at
 * most this many seconds of GEMMs (mamf-finder's 20), in windows of this
 * many, steady when the windows of the last TPP_BENCH_SETTLE_HOLD_S agree
 * within 1 %, at the earliest after TPP_BENCH_SETTLE_MIN_S; on a shape
 * grown until one GEMM takes TPP_BENCH_SETTLE_GEMM_S or M and N reach
 * 8192 (mamf-finder settles with 8192^3) and K 65536. */
#define TPP_BENCH_SETTLE_S 20.0
#define TPP_BENCH_SETTLE_WINDOW_S 0.5
#define TPP_BENCH_SETTLE_HOLD_S 2.0
#define TPP_BENCH_SETTLE_MIN_S 5.0
#define TPP_BENCH_SETTLE_GEMM_S 0.005
#define TPP_BENCH_SETTLE_MAX_DIM 8192
#define TPP_BENCH_SETTLE_MAX_K 65536

struct tpp_bench_opts {
	const char *backend;      /* "cpu" (default) or "cuda" */
	double min_bytes, max_bytes; /* collective sweep, x2 steps */
	int iters, warmup;        /* timed and untimed iterations per size */
	unsigned coll_mask;       /* bit (1u << enum tpp_coll) per collective */
	int gemm;                 /* run the GEMM sweep */
	unsigned prec_mask;       /* bit (1u << enum tpp_prec); 0 = all the backend has */
	const struct tpp_bench_shape *shapes; /* NULL: the default grid */
	int nshapes;
	int quick;                /* small default grid (tests) */
	double settle_s;          /* most seconds of back-to-back GEMMs before each precision's sweep */
	int timeout_s;            /* abort when one step takes longer; 0 = never */
	int progress;             /* 1 on, 0 off, -1 when stderr is a terminal */
};

/* Defaults: cpu, 8 B .. 64 MiB, 20 iterations after 5 warm-up, every
 * collective, GEMM on (settling up to 20 s first), timeout 300 s,
 * progress auto. */
void tpp_bench_opts_default(struct tpp_bench_opts *o);
/* The --quick defaults: 1 KiB .. 256 KiB, 5 iterations after 2 warm-up,
 * GEMM grid {64, 128}^3, no settling. */
void tpp_bench_opts_quick(struct tpp_bench_opts *o);

/* The default GEMM grid (m, n, k in {128, ..., 2048}; quick: {64, 128}). */
int tpp_bench_default_shapes(int quick, const struct tpp_bench_shape **out);

/*
 * MPI_Init (once per process) and this process's rank and the job's size.
 * TPP_E_SYSTEM when MPI cannot start.
 */
int tpp_bench_init(int *rank, int *size, struct tpp_err *err);
/* MPI_Finalize; safe to call when tpp_bench_init failed. */
void tpp_bench_finalize(void);
/* Make every rank return rank 0's status (collective). */
int tpp_bench_agree(int status);

/*
 * Run the sweeps on every rank of the job (collective over
 * MPI_COMM_WORLD).  Fills *cal (zeroed first): meta (created_utc, version,
 * backend, hosts, device, software, ranks, ranks_per_node) and the raw
 * tables; complete on rank 0 (other ranks may hold partial data).
 * Every rank returns the same status: TPP_E_USAGE (bad options, unknown or
 * incapable backend), TPP_E_INFEASIBLE (a correctness check failed),
 * TPP_E_SYSTEM (backend / MPI failure); the message is in err on rank 0
 * (a rank that failed prints its own error to stderr).
 */
int tpp_bench_run(const struct tpp_bench_opts *o, struct tpp_calibration *cal,
		  struct tpp_err *err);

/*
 * Abort the whole MPI job (MPI_Abort, after writing `msg` to stderr) unless
 * disarmed or re-armed within `timeout_s` seconds; 0 or less: off.  Uses
 * SIGALRM; one watchdog per process.
 */
void tpp_bench_watchdog_arm(int timeout_s, const char *msg);
void tpp_bench_watchdog_disarm(void);

#endif
