/*
 * cluster.h - GPU cluster description: the GPU, the node, and the network
 * tiers from the innermost (NVLink/NVSwitch, xGMI, PCIe) outwards (multi-node
 * NVLink domains, InfiniBand, RoCE, Ethernet).
 *
 * Data flow: topologies/<name>.yaml --tpp_cluster_load--> struct tpp_cluster
 * --> cost model.  Every figure remembers where it came from (datasheet,
 * published measurement, or this cluster's calibration) so plans can say
 * which numbers were measured.  Schema: topologies/README.md.
 */
#ifndef TPP_CLUSTER_H
#define TPP_CLUSTER_H

#include "tpp_common.h"

enum tpp_prec {
	TPP_PREC_FP32,
	TPP_PREC_TF32,
	TPP_PREC_FP16,
	TPP_PREC_BF16,
	TPP_PREC_FP8,
	TPP_PREC__COUNT
};
extern const char *const tpp_prec_names[TPP_PREC__COUNT]; /* "fp32", ... */
/* Parse "bf16" etc.; returns -1 when unknown. */
int tpp_prec_parse(const char *s);

/* Where a number came from. */
enum tpp_src {
	TPP_SRC_NONE,        /* not given */
	TPP_SRC_DATASHEET,   /* vendor specification */
	TPP_SRC_PUBLISHED,   /* published measurement (source string says which) */
	TPP_SRC_CALIBRATION, /* measured on this cluster by `tpplan calibrate` */
	TPP_SRC__COUNT
};
extern const char *const tpp_src_names[TPP_SRC__COUNT];

enum tpp_tier_kind {
	TPP_TIER_NVLINK,     /* NVLink through NVSwitch inside a node */
	TPP_TIER_XGMI,       /* AMD Infinity Fabric full mesh inside a node */
	TPP_TIER_PCIE,       /* PCIe (GPUs without a scale-up fabric) */
	TPP_TIER_NVL_DOMAIN, /* multi-node NVLink domain (GB200 NVL72) */
	TPP_TIER_INFINIBAND,
	TPP_TIER_ROCE,
	TPP_TIER_ETHERNET,
	TPP_TIER__COUNT
};
extern const char *const tpp_tier_kind_names[TPP_TIER__COUNT];

/* Collectives the cost model prices. */
enum tpp_coll {
	TPP_COLL_ALL_REDUCE,
	TPP_COLL_ALL_GATHER,
	TPP_COLL_REDUCE_SCATTER,
	TPP_COLL_ALL_TO_ALL,
	TPP_COLL_SEND_RECV,
	TPP_COLL__COUNT
};
extern const char *const tpp_coll_names[TPP_COLL__COUNT]; /* "all_reduce", ... */

#define TPP_MAX_TIERS 6
#define TPP_NAME_LEN 64
#define TPP_SOURCE_LEN 256
#define TPP_CURVE_MAX 32
/* GPUs of a cluster file (nodes x gpus_per_node), as many as --gpus takes */
#define TPP_CLUSTER_MAX_GPUS (1 << 24)

/* NCCL uses NVLS (NVLink SHARP) for all-reduce from 5 GPUs up
 * (calibration.md 3.3, 4.3); below, and in a ring that leaves the domain,
 * the all-reduce is a ring (so no NVLS figure is measured under it). */
#define TPP_NVLS_MIN_GPUS 5

struct tpp_tier {
	char name[TPP_NAME_LEN];
	enum tpp_tier_kind kind;
	/*
	 * GPUs in one domain of this tier: 8 for NVLink in a DGX node, 72 for
	 * an NVL72 rack.  0 for the outermost tier (the whole cluster).  A
	 * communicator group maps to the innermost tier whose domain holds it.
	 */
	int span_gpus;
	/* Datasheet per-GPU unidirectional bandwidth through this tier, B/s.
	 * For a scale-out tier: nics_per_node * nic rate / gpus_per_node. */
	double bw_Bps;
	double latency_s;    /* per-message (alpha) latency, s */
	int nics_per_node;   /* scale-out tiers; 0 otherwise */
	double nic_bps;      /* one NIC's line rate, bit/s; 0 if none */
	/* non-empty: the file says its bandwidth figures (bw_GBps, or
	 * nics_per_node and nic_gbps) are an unverified assumption, and
	 * why (YAML `unverified`); output labels them so, not datasheet */
	char unverified[TPP_SOURCE_LEN];
	int nvls;            /* NVLink SHARP (in-switch all-reduce) */
	int sharp;           /* in-network reduction (IB SHARP / CollNet) */
	int mesh;            /* full mesh without switch (xGMI): a group of m
				GPUs gets (m-1)/(span-1) of bw_Bps */
	/*
	 * Measured achievable bus bandwidth per collective (nccl-tests busbw
	 * convention, B/s), 0 when unknown; busbw_src says where it came
	 * from and `measured_source` cites it.
	 */
	double busbw_Bps[TPP_COLL__COUNT];
	enum tpp_src busbw_src[TPP_COLL__COUNT];
	double busbw_alpha_s[TPP_COLL__COUNT]; /* fitted latency, 0 if none */
	/* GPUs the NVLS all-reduce figure and curve were measured over
	 * (YAML measured.nvls_gpus, or a calibration table's group); 0 when
	 * not stated: other group sizes are then priced at the figure as it
	 * is (the cost model's nvls_group_scale) */
	int nvls_gpus;
	/*
	 * Optional measured bus-bandwidth curve per collective: busbw (B/s)
	 * at message sizes (bytes, nccl-tests size column), sizes strictly
	 * increasing.  The cost model interpolates it in log(size) and uses
	 * it in place of busbw_Bps, so the ramp to saturation (protocol and
	 * channel switches in NCCL) is measured, not guessed.
	 */
	int curve_n[TPP_COLL__COUNT];
	double curve_bytes[TPP_COLL__COUNT][TPP_CURVE_MAX];
	double curve_busbw_Bps[TPP_COLL__COUNT][TPP_CURVE_MAX];
	char measured_source[TPP_SOURCE_LEN * 3]; /* room for a calibration's and the published citation */
};

/* Measured GEMM rates over shapes (from a calibration), per precision. */
#define TPP_GEMM_TABLE_MAX 256
struct tpp_gemm_table {
	int n;
	float m[TPP_GEMM_TABLE_MAX], nn[TPP_GEMM_TABLE_MAX], k[TPP_GEMM_TABLE_MAX];
	float flops_per_s[TPP_GEMM_TABLE_MAX];
};

/*
 * Sustained over burst GEMM rate, for a GPU whose only published figure is
 * a burst (gemm_rate: burst): a training step's back-to-back GEMMs hold the
 * board at its power limit, below the boost clock a short benchmark
 * catches.  0.858 is the median over the NVIDIA parts ml-engineering
 * measured both ways (compute/accelerator/README.md @0359db89, bf16 MSMF /
 * MAMF): A100 PCIe 258 / 285 = 0.905, H200 755 / 850 = 0.888, B200
 * 1439 / 1737 = 0.828, B300 1519 / 1892 = 0.803 (the middle two's mean).
 * MI300X (659 / 676) is left out: the source calls its MAMF "a noisy
 * reading of the same throttled state", not a burst.  The ratio depends on
 * the board's power limit, so for another part it is an estimate within
 * that range (0.80-0.91).
 */
#define TPP_SUSTAINED_OF_BURST 0.858

struct tpp_gpu {
	char name[TPP_NAME_LEN];
	/* Dense (no sparsity) datasheet peak per precision, FLOP/s; 0 = unsupported. */
	double peak_flops[TPP_PREC__COUNT];
	/* Measured GEMM FLOP/s per precision, the rate sustained at the
	 * power limit (MSMF) where published; 0 = unknown. */
	double gemm_flops[TPP_PREC__COUNT];
	/* The M, N, K that rate was measured at (0 = not given): the cost
	 * model divides its own wave / tile and K-loop losses at that
	 * shape out of the ceiling, so it prices that shape at the rate. */
	double gemm_shape[TPP_PREC__COUNT][3];
	/* The file's figure where it is a short-burst rate (YAML
	 * gpu.measured.gemm_rate: burst, a MAMF with no sustained MSMF
	 * published); gemm_flops then holds it times
	 * TPP_SUSTAINED_OF_BURST.  0 where gemm_flops is the figure as
	 * given (sustained, or a calibration's). */
	double gemm_burst_flops[TPP_PREC__COUNT];
	enum tpp_src gemm_src[TPP_PREC__COUNT];
	char gemm_source[TPP_SOURCE_LEN];
	double hbm_bytes;    /* usable device memory, bytes */
	double hbm_Bps;      /* memory bandwidth, B/s */
	int sm_count;        /* streaming multiprocessors / compute units (0 = unknown) */
	/* Measured GEMM rate by shape; when a precision has points the cost
	 * model interpolates them instead of its shape model. */
	struct tpp_gemm_table gemm_table[TPP_PREC__COUNT];
};

struct tpp_cluster {
	char name[TPP_NAME_LEN];
	char path[512];      /* file it was loaded from ("" for built-in) */
	char source[TPP_SOURCE_LEN * 2]; /* where the figures come from */
	struct tpp_gpu gpu;
	int gpus_per_node;
	int nodes;
	int ntiers;
	struct tpp_tier tiers[TPP_MAX_TIERS]; /* innermost first */
	char calibration[512]; /* optional calibration file (absolute path) */
	int calibration_line, calibration_col; /* where `path` names it (1-based;
						  0 when not from a file) */
};

/*
 * Load a cluster YAML.  `name_or_path` is a path, or a preset name resolved
 * as <topodir>/<name>.yaml (topodir NULL: the compiled-in topologies
 * directory, then ./topologies).  On failure *out is untouched and err says
 * file:line:col.  Validates consistency (tiers ordered innermost first,
 * spans dividing each other, a first tier covering the node, ...).
 */
int tpp_cluster_load(const char *name_or_path, const char *topodir,
		     struct tpp_cluster *out, struct tpp_err *err);

/* Resolve a preset name or path to a readable file path; TPP_E_INPUT if none. */
int tpp_cluster_resolve(const char *name_or_path, const char *topodir,
			char *path, size_t size, struct tpp_err *err);
/* The same for a preset name alone: the preset directories only, never a
 * file of that name in the working directory (the runs format's cluster
 * column names a preset). */
int tpp_cluster_resolve_preset(const char *name, const char *topodir,
			       char *path, size_t size, struct tpp_err *err);

/* Total GPUs = gpus_per_node * nodes. */
int tpp_cluster_gpus(const struct tpp_cluster *c);
/* Whether the outermost tier spans every GPU of the cluster (its size as
 * loaded or resized); groups beyond it would have no network. */
int tpp_cluster_covers(const struct tpp_cluster *c);

/*
 * Index of the innermost tier whose domains hold every instance of a group
 * of `group_gpus` GPUs with `stride` GPUs between members (stride 1:
 * neighbours; e.g. a DP group with TP=8 inside has stride 8).  Instances
 * tile the ranks in blocks of group_gpus * stride GPUs, so all of them fit
 * a domain of span S iff that block divides S (or the whole cluster fits
 * in one domain); a group that straddles a boundary anywhere is priced on
 * the outer tier.
 */
int tpp_cluster_tier_for(const struct tpp_cluster *c, int group_gpus,
			 int stride);

/*
 * Achievable bus bandwidth (B/s) of `coll` on tier `t` at message size
 * `bytes`: the measured curve interpolated linearly in log2(size) (clamped
 * at its ends; above a calibrated curve, its largest size's time plus the
 * rest at busbw_Bps[coll]) when there is one, else busbw_Bps[coll]; 0 when
 * neither.
 */
double tpp_tier_busbw_at(const struct tpp_tier *t, enum tpp_coll coll,
			 double bytes);

/* Ratio of achievable to datasheet bandwidth of tier `t` where nothing
 * was measured: the figure the cost model prices it at (tier_busbw in
 * cost.c), calibrate reports beside a measurement and the plan prints. */
double tpp_tier_default_eff(const struct tpp_tier *t);

/* Copy with the node count changed so the cluster has `gpus` GPUs
 * (rounded up to whole nodes). */
void tpp_cluster_resize(struct tpp_cluster *c, int gpus);

#endif
