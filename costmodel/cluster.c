/*
 * cluster.c - cluster descriptions: name tables, preset resolution, the
 * topologies/<name>.yaml loader with its consistency checks, and the
 * group-to-tier mapping (see cluster.h).
 *
 * Data flow: YAML --tpp_ydoc_load--> libyaml document --field tables
 * (tpp_ymap_parse)--> struct tpp_cluster in SI units (B/s, s, bytes,
 * FLOP/s) --> cost model.  The schema is documented in topologies/README.md;
 * the tier model (a group maps to the innermost tier whose domain holds it)
 * follows ../shared/reference/calibration.md section 4.
 */
#define _XOPEN_SOURCE 700

#include "cluster.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cost.h"
#include "tpp_yaml.h"

#ifndef TPP_TOPODIR
#define TPP_TOPODIR "./topologies"
#endif

#define TPP_CLUSTER_SCHEMA "tpplan.cluster/v1"

const char *const tpp_prec_names[TPP_PREC__COUNT] = {
	[TPP_PREC_FP32] = "fp32",
	[TPP_PREC_TF32] = "tf32",
	[TPP_PREC_FP16] = "fp16",
	[TPP_PREC_BF16] = "bf16",
	[TPP_PREC_FP8] = "fp8",
};

const char *const tpp_src_names[TPP_SRC__COUNT] = {
	[TPP_SRC_NONE] = "none",
	[TPP_SRC_DATASHEET] = "datasheet",
	[TPP_SRC_PUBLISHED] = "published",
	[TPP_SRC_CALIBRATION] = "calibration",
};

const char *const tpp_tier_kind_names[TPP_TIER__COUNT] = {
	[TPP_TIER_NVLINK] = "nvlink",
	[TPP_TIER_XGMI] = "xgmi",
	[TPP_TIER_PCIE] = "pcie",
	[TPP_TIER_NVL_DOMAIN] = "nvl-domain",
	[TPP_TIER_INFINIBAND] = "infiniband",
	[TPP_TIER_ROCE] = "roce",
	[TPP_TIER_ETHERNET] = "ethernet",
};

const char *const tpp_coll_names[TPP_COLL__COUNT] = {
	[TPP_COLL_ALL_REDUCE] = "all_reduce",
	[TPP_COLL_ALL_GATHER] = "all_gather",
	[TPP_COLL_REDUCE_SCATTER] = "reduce_scatter",
	[TPP_COLL_ALL_TO_ALL] = "all_to_all",
	[TPP_COLL_SEND_RECV] = "send_recv",
};

int tpp_prec_parse(const char *s)
{
	int i;
	if (!s)
		return -1;
	for (i = 0; i < TPP_PREC__COUNT; i++)
		if (!strcasecmp(s, tpp_prec_names[i]))
			return i;
	return -1;
}

/* ---- preset resolution ---------------------------------------------------- */

static int is_regular_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* Append `item` to the comma-separated list in buf (bounded). */
static void list_append(char *buf, size_t size, const char *item)
{
	size_t used = strlen(buf);
	if (used + 1 >= size)
		return;
	snprintf(buf + used, size - used, "%s%s", used ? ", " : "", item);
}

/*
 * Try one candidate: on a hit copy it to path (TPP_OK), too long for the
 * caller's buffer (TPP_E_INPUT), or a miss (-1, candidate added to tried).
 */
static int try_candidate(const char *cand, char *path, size_t size,
			 char *tried, size_t tried_size, struct tpp_err *err)
{
	if (!is_regular_file(cand)) {
		list_append(tried, tried_size, cand);
		return -1;
	}
	if (strlen(cand) >= size)
		return tpp_err_set(err, TPP_E_INPUT, NULL, 0, 0,
				   "cluster file path too long: %s", cand);
	tpp_strlcpy(path, cand, size);
	return TPP_OK;
}

/* The length of `file` without a .yaml / .yml suffix (any case); 0 when
 * it has neither. */
static size_t yaml_stem_len(const char *file)
{
	size_t n = strlen(file);
	if (n > 5 && !strcasecmp(file + n - 5, ".yaml"))
		return n - 5;
	if (n > 4 && !strcasecmp(file + n - 4, ".yml"))
		return n - 4;
	return 0;
}

/* Among the YAML files of `dir`, the one whose name (without the suffix)
 * is nearest `stem` (tpp_name_near, fewer edits than *best), other than
 * `given` itself: into out as `prefix` + its stem (preset names) or
 * `prefix` + its file name (paths, with_suffix). */
static void nearest_in_dir(const char *dir, const char *stem, const char *given,
			   const char *prefix, int with_suffix, int *best,
			   char *out, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char cand[256], sugg[1024];
		size_t k = yaml_stem_len(e->d_name);
		int dist;
		if (!k || k >= sizeof(cand))
			continue;
		memcpy(cand, e->d_name, k);
		cand[k] = '\0';
		dist = tpp_name_near(stem, cand);
		snprintf(sugg, sizeof(sugg), "%s%s", prefix, with_suffix ? e->d_name : cand);
		if (dist >= 0 && dist < *best && strcmp(sugg, given)) {
			*best = dist;
			tpp_strlcpy(out, sugg, size);
		}
	}
	closedir(d);
}

/* A near miss to suggest for a cluster not found: for a bare name the
 * nearest preset of `dirs`; for a path the nearest YAML file in its own
 * directory, as a path.  "" if none is near. */
static void nearest_cluster(const char *name, const char *const *dirs, int ndirs,
			    char *out, size_t size)
{
	const char *slash = strrchr(name, '/');
	char stem[256];
	int i, best = 3;
	size_t k;

	out[0] = '\0';
	tpp_strlcpy(stem, slash ? slash + 1 : name, sizeof(stem));
	k = yaml_stem_len(stem);
	if (k)
		stem[k] = '\0';
	if (slash) {
		char dir[1024];
		size_t n = (size_t)(slash - name);
		if (n + 2 > sizeof(dir))
			return;
		memcpy(dir, name, n ? n : 1); /* "/x.yaml": the root */
		dir[n ? n : 1] = '\0';
		{
			char prefix[1040];
			snprintf(prefix, sizeof(prefix), "%.*s/", (int)n, name);
			nearest_in_dir(dir, stem, name, prefix, 1, &best, out, size);
		}
		return;
	}
	for (i = 0; i < ndirs; i++)
		nearest_in_dir(dirs[i], stem, name, "", 0, &best, out, size);
}

static int resolve(const char *name_or_path, const char *topodir, int as_path,
		   char *path, size_t size, struct tpp_err *err)
{
	const char *dirs[2];
	char tried[800] = "";
	char cand[1024];
	int ndirs, npresets, i, rc = -1;

	TPP_ASSERT(path && size > 0);
	if (!name_or_path || !*name_or_path)
		return tpp_err_set(err, TPP_E_INPUT, NULL, 0, 0,
				   "no cluster given (a preset name such as "
				   "dgx-a100, or a path to a cluster YAML file)");
	if (as_path) {
		rc = try_candidate(name_or_path, path, size, tried, sizeof(tried), err);
		if (rc >= 0)
			return rc;
	}
	if (topodir) {
		dirs[0] = topodir;
		ndirs = 1;
	} else {
		dirs[0] = TPP_TOPODIR;
		dirs[1] = "./topologies";
		ndirs = strcmp(dirs[0], dirs[1]) ? 2 : 1;
	}
	npresets = ndirs;
	/* An absolute path names one file; do not look for it in preset dirs. */
	if (name_or_path[0] == '/')
		ndirs = 0;
	for (i = 0; i < ndirs; i++) {
		snprintf(cand, sizeof(cand), "%s/%s", dirs[i], name_or_path);
		rc = try_candidate(cand, path, size, tried, sizeof(tried), err);
		if (rc >= 0)
			return rc;
		if (ends_with(name_or_path, ".yaml") ||
		    ends_with(name_or_path, ".yml"))
			continue;
		snprintf(cand, sizeof(cand), "%s/%s.yaml", dirs[i],
			 name_or_path);
		rc = try_candidate(cand, path, size, tried, sizeof(tried), err);
		if (rc >= 0)
			return rc;
	}
	{
		/* there, but no file (and no preset of that name): say so,
		 * not "not found" */
		struct stat st;
		if (as_path && !stat(name_or_path, &st))
			return tpp_err_set(err, TPP_E_INPUT, NULL, 0, 0,
					   "cluster '%s' is %s, not a cluster YAML file",
					   name_or_path, S_ISDIR(st.st_mode) ? "a directory"
									 : "not a regular file (a FIFO or device)");
	}
	{
		char near[512];
		nearest_cluster(name_or_path, dirs, npresets, near, sizeof(near));
		return tpp_err_set(err, TPP_E_INPUT, NULL, 0, 0,
				   "cluster '%s' not found%s%s%s; tried: %s (give a preset "
				   "name from the topologies directory or a path to a "
				   "cluster YAML file)",
				   name_or_path, near[0] ? " (did you mean '" : "",
				   near, near[0] ? "'?)" : "", tried);
	}
}

int tpp_cluster_resolve(const char *name_or_path, const char *topodir,
			char *path, size_t size, struct tpp_err *err)
{
	return resolve(name_or_path, topodir, 1, path, size, err);
}

int tpp_cluster_resolve_preset(const char *name, const char *topodir,
			       char *path, size_t size, struct tpp_err *err)
{
	return resolve(name, topodir, 0, path, size, err);
}

/* ---- YAML helpers ---------------------------------------------------------- */


/* Field table over a double[TPP_PREC__COUNT]: TFLOPS in (0, 1e5]. */
#define PREC_FIELD(p, name)                                                  \
	[p] = {.key = name, .type = TPP_YF_DOUBLE, .offset = p * sizeof(double), \
	       .scale = TPP_TFLOPS, .min = 1e-3 * TPP_TFLOPS,                \
	       .max = 1e5 * TPP_TFLOPS}
static const struct tpp_yfield prec_fields[TPP_PREC__COUNT] = {
	PREC_FIELD(TPP_PREC_FP32, "fp32"),
	PREC_FIELD(TPP_PREC_TF32, "tf32"),
	PREC_FIELD(TPP_PREC_FP16, "fp16"),
	PREC_FIELD(TPP_PREC_BF16, "bf16"),
	PREC_FIELD(TPP_PREC_FP8, "fp8"),
};
#undef PREC_FIELD

/* Field table over a double[TPP_COLL__COUNT]: busbw GB/s in [0.001, 1e5]. */
#define COLL_FIELD(c, name)                                                  \
	[c] = {.key = name, .type = TPP_YF_DOUBLE, .offset = c * sizeof(double), \
	       .scale = TPP_GB, .min = 1e-3 * TPP_GB, .max = 1e5 * TPP_GB}
static const struct tpp_yfield coll_fields[TPP_COLL__COUNT] = {
	COLL_FIELD(TPP_COLL_ALL_REDUCE, "all_reduce"),
	COLL_FIELD(TPP_COLL_ALL_GATHER, "all_gather"),
	COLL_FIELD(TPP_COLL_REDUCE_SCATTER, "reduce_scatter"),
	COLL_FIELD(TPP_COLL_ALL_TO_ALL, "all_to_all"),
	COLL_FIELD(TPP_COLL_SEND_RECV, "send_recv"),
};
#undef COLL_FIELD

/* ---- gpu ------------------------------------------------------------------- */

struct gpu_measured {
	yaml_node_t *gemm, *shape;
	int rate; /* enum gemm_rate */
	char source[TPP_SOURCE_LEN];
};

/* gpu.measured.gemm_rate: what the gemm_tflops figures are. */
enum gemm_rate { GEMM_RATE_SUSTAINED, GEMM_RATE_BURST, GEMM_RATE__COUNT };
static const char *const gemm_rate_names[GEMM_RATE__COUNT] = {"sustained", "burst"};

static const struct tpp_yfield gpu_measured_fields[] = {
	{.key = "gemm_tflops", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct gpu_measured, gemm), .handler = tpp_y_keep_node,
	 .required = 1},
	{.key = "gemm_shape", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct gpu_measured, shape), .handler = tpp_y_keep_node},
	{.key = "gemm_rate", .type = TPP_YF_ENUM,
	 .offset = offsetof(struct gpu_measured, rate),
	 .names = gemm_rate_names, .nnames = GEMM_RATE__COUNT},
	{.key = "source", .type = TPP_YF_STR,
	 .offset = offsetof(struct gpu_measured, source),
	 .size = TPP_SOURCE_LEN, .required = 1},
};

/* A name that tables, reports and plans print (cluster, GPU, tier): not
 * empty, and on one line. */
static int check_name(struct tpp_ydoc *d, yaml_node_t *node, const char *what,
		      const char *name, struct tpp_err *err)
{
	if (!name[0])
		return tpp_y_err(d, node, err, "%s: must not be empty", what);
	if (tpp_has_control_char(name))
		return tpp_y_err(d, node, err,
				 "%s: must not contain control characters (newline, tab, line separators, bidi controls)",
				 what);
	return TPP_OK;
}

/* A source citation as printed on one line of the figures list and the
 * report: newlines, tabs and carriage returns (a YAML block scalar keeps
 * them) become spaces, trailing ones are dropped, and any other control
 * character is shown as '?' (tpp_printable: an escape sequence from a
 * file must not act on the terminal). */
static void one_line(char *s)
{
	size_t n;
	char *p;
	for (p = s; *p; p++)
		if (*p == '\n' || *p == '\t' || *p == '\r')
			*p = ' ';
	n = strlen(s);
	while (n > 0 && s[n - 1] == ' ')
		s[--n] = '\0';
	tpp_printable(s, 0);
}

/* The index of the mapping key k among names[0..n), or n when it is
 * none of them (or not a scalar). */
static int key_index(const yaml_node_t *k, const char *const *names, int n)
{
	int i;
	for (i = 0; i < n; i++)
		if (k->type == YAML_SCALAR_NODE &&
		    !strcmp((const char *)k->data.scalar.value, names[i]))
			break;
	return i;
}

/*
 * gpu.measured.gemm_shape: {PREC: [M, N, K], ...}, the shape each
 * gemm_tflops figure was measured at (whole numbers, 1 .. 2^24), for a
 * precision that has a figure, on which the cost model's own efficiency
 * is at least TPP_GEMM_SHAPE_EFF_MIN (the presets' shapes: 0.97-0.98)
 * and which does not put the normalised rate past the peak.
 */
#define TPP_GEMM_SHAPE_EFF_MIN 0.8
static int parse_gemm_shape(struct tpp_ydoc *d, yaml_node_t *map,
			    struct tpp_gpu *g, struct tpp_err *err)
{
	static const char *const what = "gpu.measured.gemm_shape";
	yaml_node_pair_t *pr;
	if (map->type != YAML_MAPPING_NODE)
		return tpp_y_err(d, map, err,
				 "%s: expected a mapping of precision to [M, N, K]", what);
	for (pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top; pr++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, pr->key);
		yaml_node_t *v = yaml_document_get_node(&d->doc, pr->value);
		int p = key_index(k, tpp_prec_names, TPP_PREC__COUNT), n, i, rc;
		if (p == TPP_PREC__COUNT)
			return tpp_y_err(d, k, err,
					 "%s: unknown precision (expected fp32, tf32, fp16, bf16 or fp8)",
					 what);
		if (g->gemm_shape[p][0] > 0)
			return tpp_y_err(d, k, err, "%s: duplicate key '%s'", what,
					 tpp_prec_names[p]);
		if (!(g->gemm_flops[p] > 0))
			return tpp_y_err(d, k, err,
					 "%s.%s: gpu.measured.gemm_tflops has no %s figure to go with it",
					 what, tpp_prec_names[p], tpp_prec_names[p]);
		if ((rc = tpp_y_seq(d, v, what, &n, err)))
			return rc;
		if (n != 3)
			return tpp_y_err(d, v, err, "%s.%s: expected [M, N, K], got %d numbers",
					 what, tpp_prec_names[p], n);
		for (i = 0; i < 3; i++) {
			yaml_node_t *x = tpp_y_seq_item(d, v, i);
			long long e;
			if ((rc = tpp_y_int(d, x, &e, err)))
				return rc;
			if (e < 1 || e > (1LL << 24))
				return tpp_y_err(d, x, err,
						 "%s.%s: each of M, N, K must be in [1, 16777216]",
						 what, tpp_prec_names[p]);
			g->gemm_shape[p][i] = (double)e;
		}
		/* the shape must be one that fills the GPU: the model takes
		 * the rate there, with its own losses at that shape divided
		 * out, as the rate of a large GEMM */
		{
			const double *sh = g->gemm_shape[p];
			double eff = tpp_gemm_shape_eff(g->sm_count, sh[0], sh[1], sh[2]);
			double frac = g->gemm_flops[p] / g->peak_flops[p] / eff;
			if (eff < TPP_GEMM_SHAPE_EFF_MIN)
				return tpp_y_err(d, v, err,
						 "%s.%s: at %gx%gx%g the cost model's wave and K-loop efficiency%s is %.2f: too small a shape to stand for the GPU's GEMM rate (below %.2f; give the rate of a GEMM that fills the GPU, as ml-engineering's mamf-finder measures)",
						 what, tpp_prec_names[p], sh[0], sh[1], sh[2],
						 g->sm_count > 0 ? " on the GPU's SMs" : "", eff,
						 TPP_GEMM_SHAPE_EFF_MIN);
			if (frac > 1.0)
				return tpp_y_err(d, v, err,
						 "%s.%s: %g TFLOPS at %gx%gx%g, where the cost model's efficiency is %.3f, means %.3g times the peak (gpu.peak_tflops.%s): a wrong rate, peak or shape",
						 what, tpp_prec_names[p], g->gemm_flops[p] / TPP_TFLOPS,
						 sh[0], sh[1], sh[2], eff, frac, tpp_prec_names[p]);
		}
	}
	return TPP_OK;
}

struct gpu_in {
	struct tpp_gpu g;
	yaml_node_t *peak, *measured;
};

static const struct tpp_yfield gpu_fields[] = {
	{.key = "name", .type = TPP_YF_STR, .offset = offsetof(struct gpu_in, g.name),
	 .size = TPP_NAME_LEN, .required = 1},
	{.key = "peak_tflops", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct gpu_in, peak), .handler = tpp_y_keep_node,
	 .required = 1},
	{.key = "hbm_gb", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct gpu_in, g.hbm_bytes), .scale = TPP_GB,
	 .min = 1e-3 * TPP_GB, .max = 1e4 * TPP_GB, .required = 1},
	{.key = "hbm_tbps", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct gpu_in, g.hbm_Bps), .scale = 1e12,
	 .min = 1e-3 * 1e12, .max = 1e3 * 1e12, .required = 1},
	{.key = "sm_count", .type = TPP_YF_INT,
	 .offset = offsetof(struct gpu_in, g.sm_count), .min = 1, .max = 100000},
	{.key = "measured", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct gpu_in, measured), .handler = tpp_y_keep_node},
};

static int parse_gpu(struct tpp_ydoc *d, yaml_node_t *node,
		     struct tpp_gpu *out, struct tpp_err *err)
{
	struct gpu_in in;
	struct gpu_measured m;
	int rc, p;

	memset(&in, 0, sizeof(in));
	if ((rc = tpp_ymap_parse(d, node, gpu_fields, TPP_ARRAY_LEN(gpu_fields),
				 &in, "gpu", err)))
		return rc;
	if ((rc = check_name(d, tpp_y_map_get(d, node, "name"), "gpu.name",
			     in.g.name, err)))
		return rc;
	if ((rc = tpp_ymap_parse(d, in.peak, prec_fields, TPP_PREC__COUNT,
				 in.g.peak_flops, "gpu.peak_tflops", err)))
		return rc;
	if (in.g.peak_flops[TPP_PREC_BF16] <= 0 &&
	    in.g.peak_flops[TPP_PREC_FP16] <= 0)
		return tpp_y_err(d, in.peak, err,
				 "gpu.peak_tflops: needs bf16 or fp16 (the "
				 "precisions the planner trains in)");
	if (in.measured) {
		memset(&m, 0, sizeof(m));
		if ((rc = tpp_ymap_parse(d, in.measured, gpu_measured_fields,
					 TPP_ARRAY_LEN(gpu_measured_fields), &m,
					 "gpu.measured", err)))
			return rc;
		if ((rc = tpp_ymap_parse(d, m.gemm, prec_fields, TPP_PREC__COUNT,
					 in.g.gemm_flops,
					 "gpu.measured.gemm_tflops", err)))
			return rc;
		for (p = 0; p < TPP_PREC__COUNT; p++) {
			yaml_node_t *v;
			double meas = in.g.gemm_flops[p];
			double peak = in.g.peak_flops[p];
			if (meas <= 0)
				continue;
			v = tpp_y_map_get(d, m.gemm, tpp_prec_names[p]);
			if (peak <= 0)
				return tpp_y_err(d, v, err,
						 "gpu.measured.gemm_tflops.%s is given "
						 "but gpu.peak_tflops has no %s",
						 tpp_prec_names[p], tpp_prec_names[p]);
			if (meas > peak)
				return tpp_y_err(d, v, err,
						 "gpu.measured.gemm_tflops.%s: measured "
						 "%g TFLOPS exceeds peak %g TFLOPS "
						 "(gpu.peak_tflops.%s)",
						 tpp_prec_names[p], meas / TPP_TFLOPS,
						 peak / TPP_TFLOPS, tpp_prec_names[p]);
			in.g.gemm_src[p] = TPP_SRC_PUBLISHED;
		}
		if (m.shape && (rc = parse_gemm_shape(d, m.shape, &in.g, err)))
			return rc;
		/* a burst figure stands for the sustained rate it implies
		 * (TPP_SUSTAINED_OF_BURST); the peak and shape checks above
		 * are on the figure as published */
		if (m.rate == GEMM_RATE_BURST)
			for (p = 0; p < TPP_PREC__COUNT; p++)
				if (in.g.gemm_flops[p] > 0) {
					in.g.gemm_burst_flops[p] = in.g.gemm_flops[p];
					in.g.gemm_flops[p] *= TPP_SUSTAINED_OF_BURST;
				}
		tpp_strlcpy(in.g.gemm_source, m.source, sizeof(in.g.gemm_source));
		one_line(in.g.gemm_source);
	}
	*out = in.g;
	return TPP_OK;
}

/* ---- tiers ----------------------------------------------------------------- */

struct tier_measured {
	yaml_node_t *busbw, *curve;
	int nvls_gpus;
	char source[TPP_SOURCE_LEN];
};

static const struct tpp_yfield tier_measured_fields[] = {
	{.key = "busbw_GBps", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct tier_measured, busbw), .handler = tpp_y_keep_node,
	 .required = 1},
	{.key = "busbw_curve_GBps", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct tier_measured, curve), .handler = tpp_y_keep_node},
	{.key = "nvls_gpus", .type = TPP_YF_INT,
	 .offset = offsetof(struct tier_measured, nvls_gpus), .min = TPP_NVLS_MIN_GPUS,
	 .max = 1 << 24},
	{.key = "source", .type = TPP_YF_STR,
	 .offset = offsetof(struct tier_measured, source),
	 .size = TPP_SOURCE_LEN, .required = 1},
};

struct tier_in {
	struct tpp_tier t;
	yaml_node_t *features, *measured;
};

static const struct tpp_yfield tier_fields[] = {
	{.key = "name", .type = TPP_YF_STR, .offset = offsetof(struct tier_in, t.name),
	 .size = TPP_NAME_LEN, .required = 1},
	{.key = "kind", .type = TPP_YF_ENUM, .offset = offsetof(struct tier_in, t.kind),
	 .names = tpp_tier_kind_names, .nnames = TPP_TIER__COUNT, .required = 1},
	{.key = "span_gpus", .type = TPP_YF_INT,
	 .offset = offsetof(struct tier_in, t.span_gpus), .min = 1,
	 .max = 1 << 24},
	{.key = "bw_GBps", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct tier_in, t.bw_Bps), .scale = TPP_GB,
	 .min = 1e-3 * TPP_GB, .max = 1e5 * TPP_GB},
	{.key = "latency_us", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct tier_in, t.latency_s), .scale = 1e-6,
	 .min = 0, .max = 1.0, .required = 1},
	{.key = "nics_per_node", .type = TPP_YF_INT,
	 .offset = offsetof(struct tier_in, t.nics_per_node), .min = 1,
	 .max = 1024},
	{.key = "nic_gbps", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct tier_in, t.nic_bps), .scale = 1e9,
	 .min = 1e-3 * 1e9, .max = 1e5 * 1e9},
	{.key = "unverified", .type = TPP_YF_STR,
	 .offset = offsetof(struct tier_in, t.unverified), .size = TPP_SOURCE_LEN},
	{.key = "features", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct tier_in, features), .handler = tpp_y_keep_node},
	{.key = "measured", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct tier_in, measured), .handler = tpp_y_keep_node},
};

static int is_scale_out(enum tpp_tier_kind k)
{
	return k == TPP_TIER_INFINIBAND || k == TPP_TIER_ROCE ||
	       k == TPP_TIER_ETHERNET;
}

static int is_nvlink(enum tpp_tier_kind k)
{
	return k == TPP_TIER_NVLINK || k == TPP_TIER_NVL_DOMAIN;
}

static int parse_features(struct tpp_ydoc *d, yaml_node_t *seq, int i,
			  struct tpp_tier *t, struct tpp_err *err)
{
	static const char *const names[] = {"nvls", "sharp", "mesh"};
	const char *kind = tpp_tier_kind_names[t->kind];
	char what[64];
	int n, j, f, rc;

	snprintf(what, sizeof(what), "tiers[%d].features", i);
	if ((rc = tpp_y_seq(d, seq, what, &n, err)))
		return rc;
	for (j = 0; j < n; j++) {
		yaml_node_t *item = tpp_y_seq_item(d, seq, j);
		int *flag[] = {&t->nvls, &t->sharp, &t->mesh};
		const char *s;
		if (!item || item->type != YAML_SCALAR_NODE)
			return tpp_y_err(d, item, err,
					 "%s: expected a list of words "
					 "(nvls, sharp, mesh)", what);
		s = tpp_y_text(item);
		for (f = 0; f < (int)TPP_ARRAY_LEN(names); f++)
			if (!strcmp(s, names[f]))
				break;
		if (f == (int)TPP_ARRAY_LEN(names))
			return tpp_y_err(d, item, err,
					 "%s: unknown feature '%s' (expected "
					 "one of: nvls, sharp, mesh)", what, s);
		if (*flag[f])
			return tpp_y_err(d, item, err,
					 "%s: duplicate feature '%s'", what, s);
		if (f == 0 && !is_nvlink(t->kind))
			return tpp_y_err(d, item, err,
					 "%s: nvls (NVLink SHARP) needs an nvlink "
					 "or nvl-domain tier, not %s", what, kind);
		if (f == 1 && !is_scale_out(t->kind))
			return tpp_y_err(d, item, err,
					 "%s: sharp (in-network reduction) needs "
					 "an infiniband, roce or ethernet tier, "
					 "not %s (NVLink SHARP is 'nvls')",
					 what, kind);
		if (f == 2 && is_scale_out(t->kind))
			return tpp_y_err(d, item, err,
					 "%s: mesh describes a switchless "
					 "scale-up fabric, not a %s tier",
					 what, kind);
		*flag[f] = 1;
	}
	return TPP_OK;
}

/*
 * busbw_curve_GBps: {all_reduce: [[bytes, GBps], ...], ...}: at least two
 * points, sizes strictly increasing, bandwidths positive.
 */
static int parse_curves(struct tpp_ydoc *d, yaml_node_t *map, const char *what,
			struct tpp_tier *t, struct tpp_err *err)
{
	yaml_node_pair_t *pair;
	if (map->type != YAML_MAPPING_NODE)
		return tpp_y_err(d, map, err,
				 "%s.busbw_curve_GBps: expected a mapping of collective: [[bytes, GB/s], ...]",
				 what);
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, pair->key);
		yaml_node_t *v = yaml_document_get_node(&d->doc, pair->value);
		int c = key_index(k, tpp_coll_names, TPP_COLL__COUNT), n, i, rc;
		if (c == TPP_COLL__COUNT)
			return tpp_y_err(d, k, err,
					 "%s.busbw_curve_GBps: unknown collective (expected all_reduce, all_gather, reduce_scatter, all_to_all or send_recv)",
					 what);
		if (t->curve_n[c])
			return tpp_y_err(d, k, err, "%s.busbw_curve_GBps: duplicate key '%s'",
					 what, tpp_coll_names[c]);
		if ((rc = tpp_y_seq(d, v, "busbw_curve_GBps", &n, err)))
			return rc;
		if (n < 2 || n > TPP_CURVE_MAX)
			return tpp_y_err(d, v, err,
					 "%s.busbw_curve_GBps.%s: needs 2 to %d points, got %d",
					 what, tpp_coll_names[c], TPP_CURVE_MAX, n);
		for (i = 0; i < n; i++) {
			yaml_node_t *pt = tpp_y_seq_item(d, v, i);
			double x, y;
			int m2;
			if ((rc = tpp_y_seq(d, pt, "curve point", &m2, err)))
				return rc;
			if (m2 != 2)
				return tpp_y_err(d, pt, err,
						 "%s.busbw_curve_GBps.%s[%d]: expected [bytes, GB/s]",
						 what, tpp_coll_names[c], i);
			if ((rc = tpp_y_double(d, tpp_y_seq_item(d, pt, 0), &x, err)) ||
			    (rc = tpp_y_double(d, tpp_y_seq_item(d, pt, 1), &y, err)))
				return rc;
			if (!(x >= 1 && x <= 1e15) || x != floor(x) || !(y >= 1e-3 && y <= 1e5))
				return tpp_y_err(d, pt, err,
						 "%s.busbw_curve_GBps.%s[%d]: size must be a whole number of bytes in [1, 1e15] and bandwidth in [0.001, 1e5] GB/s (as busbw_GBps)",
						 what, tpp_coll_names[c], i);
			if (i && x <= t->curve_bytes[c][i - 1])
				return tpp_y_err(d, pt, err,
						 "%s.busbw_curve_GBps.%s[%d]: sizes must increase",
						 what, tpp_coll_names[c], i);
			t->curve_bytes[c][i] = x;
			t->curve_busbw_Bps[c][i] = y * TPP_GB;
		}
		t->curve_n[c] = n;
	}
	return TPP_OK;
}

/* Ratio of achievable to datasheet bandwidth when nothing was measured:
 * NCCL ring busbw over link rate, A100 235/300 = 0.78, H100 370/450 = 0.82
 * (calibration.md 2.4 table, 7.1). */
#define TPP_DEFAULT_LINK_EFF 0.80
/* The same for an InfiniBand tier: NCCL gets 46-48 GB/s through an NDR
 * 400 Gb/s NIC (AddyLaddy, nccl-tests#290; calibration.md 3.3, 7.1), the
 * low end 46 / 50 = 0.92, as the presets' measured send_recv figures
 * take it (DGX A100 192 GB/s per node over 8 x HDR: 0.96; DGX H100 ~380
 * over 8 x NDR: 0.95).  NVLink's 0.80 would price a B200 or H200 behind
 * the same NDR NICs 15 % below the H100's measured 47.5 GB/s.  RoCE and
 * Ethernet keep 0.80 (8 x 400G RoCE H100 nodes: 320 GB/s all-reduce on
 * 4 nodes, nccl#1221, calibration.md 7.1). */
#define TPP_DEFAULT_IB_EFF 0.92

double tpp_tier_default_eff(const struct tpp_tier *t)
{
	return t->kind == TPP_TIER_INFINIBAND ? TPP_DEFAULT_IB_EFF : TPP_DEFAULT_LINK_EFF;
}

double tpp_tier_busbw_at(const struct tpp_tier *t, enum tpp_coll coll,
			 double bytes)
{
	int n = t->curve_n[coll], i;
	const double *x = t->curve_bytes[coll], *y = t->curve_busbw_Bps[coll];
	double f;
	if (n < 2)
		return t->busbw_Bps[coll];
	if (bytes <= x[0])
		return y[0];
	if (bytes >= x[n - 1]) {
		/* above a calibrated curve: its largest size's time, the rest
		 * at the calibration's figure (a sweep that stopped at 128 B
		 * ends at a few MB/s); cost.c flat_time prices every size of a
		 * curve through here */
		double b = t->busbw_src[coll] == TPP_SRC_CALIBRATION &&
			   t->busbw_Bps[coll] > 0 ? t->busbw_Bps[coll] : y[n - 1];
		if (b == y[n - 1])
			return y[n - 1];
		return bytes / (x[n - 1] / y[n - 1] + (bytes - x[n - 1]) / b);
	}
	for (i = 1; i < n && x[i] < bytes; i++)
		;
	/*
	 * log busbw linear in log size (a power law between the points): the
	 * time S f / busbw(S) is then a power of S between the points, so it
	 * rises with S wherever the measured times do (calibration.md 5.1
	 * step 6: interpolate log t against log S).  Linear busbw in log S is
	 * not: 8 x A100 (1 MiB 18.0, 8 MiB 109.9 GB/s) gave a 2 MiB
	 * all-reduce 26 % faster than a 1 MiB one.
	 */
	f = (log2(bytes) - log2(x[i - 1])) / (log2(x[i]) - log2(x[i - 1]));
	return y[i - 1] * pow(y[i] / y[i - 1], f);
}

static int parse_tier_measured(struct tpp_ydoc *d, yaml_node_t *node, int i,
			       struct tpp_tier *t, struct tpp_err *err)
{
	struct tier_measured m;
	char what[64], bwhat[80];
	int c, rc;

	memset(&m, 0, sizeof(m));
	snprintf(what, sizeof(what), "tiers[%d].measured", i);
	snprintf(bwhat, sizeof(bwhat), "%s.busbw_GBps", what);
	if ((rc = tpp_ymap_parse(d, node, tier_measured_fields,
				 TPP_ARRAY_LEN(tier_measured_fields), &m, what,
				 err)))
		return rc;
	if ((rc = tpp_ymap_parse(d, m.busbw, coll_fields, TPP_COLL__COUNT,
				 t->busbw_Bps, bwhat, err)))
		return rc;
	if (m.curve && (rc = parse_curves(d, m.curve, what, t, err)))
		return rc;
	/* the GPUs its NVLS all-reduce figures were measured over: an NVLS
	 * tier's, inside one of its domains, with an all-reduce figure */
	if (m.nvls_gpus) {
		yaml_node_t *at = tpp_y_map_get(d, node, "nvls_gpus");
		if (!t->nvls)
			return tpp_y_err(d, at, err, "%s.nvls_gpus: the tier has no NVLS (features: [nvls])", what);
		if (t->span_gpus > 0 && m.nvls_gpus > t->span_gpus)
			return tpp_y_err(d, at, err, "%s.nvls_gpus %d: more GPUs than one domain of the tier (span_gpus %d)",
					 what, m.nvls_gpus, t->span_gpus);
		if (t->busbw_Bps[TPP_COLL_ALL_REDUCE] <= 0 && t->curve_n[TPP_COLL_ALL_REDUCE] <= 0)
			return tpp_y_err(d, at, err, "%s.nvls_gpus: no all_reduce figure or curve to go with it", what);
		t->nvls_gpus = m.nvls_gpus;
	}
	for (c = 0; c < TPP_COLL__COUNT; c++)
		if (t->busbw_Bps[c] > 0 || t->curve_n[c] > 0)
			t->busbw_src[c] = TPP_SRC_PUBLISHED;
	tpp_strlcpy(t->measured_source, m.source, sizeof(t->measured_source));
	one_line(t->measured_source);
	return TPP_OK;
}

/*
 * Parse tiers[i] (mapping `node`) for a cluster with `gpus_per_node` GPUs
 * per node.  Checks that need the neighbouring tiers come later.
 */
static int parse_tier(struct tpp_ydoc *d, yaml_node_t *node, int i,
		      int gpus_per_node, struct tpp_tier *out,
		      struct tpp_err *err)
{
	struct tier_in in;
	struct tpp_tier *t = &in.t;
	yaml_node_t *nics, *nic, *bw;
	const char *kind;
	char what[32];
	int rc;

	memset(&in, 0, sizeof(in));
	snprintf(what, sizeof(what), "tiers[%d]", i);
	if ((rc = tpp_ymap_parse(d, node, tier_fields, TPP_ARRAY_LEN(tier_fields),
				 &in, what, err)))
		return rc;
	{
		char nwhat[48];
		snprintf(nwhat, sizeof(nwhat), "%s.name", what);
		if ((rc = check_name(d, tpp_y_map_get(d, node, "name"), nwhat,
				     t->name, err)))
			return rc;
	}
	{
		/* a blank reason would read as "not unverified"; printed in
		 * a line of the figures list, on one line as names are */
		yaml_node_t *u = tpp_y_map_get(d, node, "unverified");
		const char *q = t->unverified;
		int null = tpp_y_is_null(u);
		while (*q == ' ')
			q++;
		if (u && (!*q || null))
			return tpp_y_err(d, u, err, "%s.unverified: expected why the "
					 "bandwidth figures are unverified, got %s", what,
					 null ? "null" : "a blank string");
		if (u && tpp_has_control_char(t->unverified))
			return tpp_y_err(d, u, err,
					 "%s.unverified: must not contain control characters (newline, tab, line separators, bidi controls)",
					 what);
	}
	kind = tpp_tier_kind_names[t->kind];
	nics = tpp_y_map_get(d, node, "nics_per_node");
	nic = tpp_y_map_get(d, node, "nic_gbps");
	bw = tpp_y_map_get(d, node, "bw_GBps");
	if (!is_scale_out(t->kind)) {
		if (nics || nic)
			return tpp_y_err(d, nics ? nics : nic, err,
					 "%s.%s applies only to infiniband, roce "
					 "and ethernet tiers, not %s", what,
					 nics ? "nics_per_node" : "nic_gbps", kind);
		if (!bw)
			return tpp_y_err(d, node, err,
					 "%s: missing required key 'bw_GBps' "
					 "(per-GPU bandwidth of the %s tier, GB/s)",
					 what, kind);
	} else {
		if (!nics != !nic)
			return tpp_y_err(d, nics ? nics : nic, err,
					 "%s.%s is given without %s", what,
					 nics ? "nics_per_node" : "nic_gbps",
					 nics ? "nic_gbps" : "nics_per_node");
		if (!bw && !nics)
			return tpp_y_err(d, node, err,
					 "%s (%s): give nics_per_node and nic_gbps "
					 "(bw_GBps is then derived), or bw_GBps",
					 what, kind);
		if (!bw)
			t->bw_Bps = t->nics_per_node * t->nic_bps / 8.0 /
				    gpus_per_node;
	}
	if (t->kind == TPP_TIER_NVL_DOMAIN && !t->span_gpus)
		return tpp_y_err(d, node, err,
				 "%s: an nvl-domain tier needs span_gpus (GPUs "
				 "in one NVLink domain, e.g. 72)", what);
	if (in.features && (rc = parse_features(d, in.features, i, t, err)))
		return rc;
	if (t->mesh && t->span_gpus < 2)
		return tpp_y_err(d, in.features, err,
				 "%s: a mesh tier needs span_gpus >= 2 (the "
				 "GPUs one full mesh connects)", what);
	if (in.measured &&
	    (rc = parse_tier_measured(d, in.measured, i, t, err)))
		return rc;
	*out = *t;
	return TPP_OK;
}

/* Checks across tiers: order, spans, names. */
static int check_tiers(struct tpp_ydoc *d, yaml_node_t *seq,
		       const struct tpp_cluster *c, struct tpp_err *err)
{
	int i, j;
	for (i = 0; i < c->ntiers; i++) {
		const struct tpp_tier *t = &c->tiers[i];
		yaml_node_t *node = tpp_y_seq_item(d, seq, i);
		yaml_node_t *span = tpp_y_map_get(d, node, "span_gpus");
		for (j = 0; j < i; j++)
			if (!strcmp(c->tiers[j].name, t->name))
				return tpp_y_err(d, tpp_y_map_get(d, node, "name"), err,
						 "tiers[%d].name '%s' is already "
						 "used by tiers[%d]", i, t->name, j);
		if (!t->span_gpus) {
			if (i != c->ntiers - 1)
				return tpp_y_err(d, node, err,
						 "tiers[%d]: span_gpus is required "
						 "(only the outermost, last tier "
						 "may omit it)", i);
			continue;
		}
		if (i == 0 && t->span_gpus % c->gpus_per_node)
			return tpp_y_err(d, span, err,
					 "tiers[0].span_gpus = %d does not cover "
					 "whole nodes: it must be a multiple of "
					 "gpus_per_node = %d", t->span_gpus,
					 c->gpus_per_node);
		if (i == 0)
			continue;
		if (t->span_gpus <= c->tiers[i - 1].span_gpus)
			return tpp_y_err(d, span, err,
					 "tiers[%d].span_gpus = %d must be larger "
					 "than tiers[%d].span_gpus = %d (tiers "
					 "are listed innermost first)", i,
					 t->span_gpus, i - 1,
					 c->tiers[i - 1].span_gpus);
		if (t->span_gpus % c->tiers[i - 1].span_gpus)
			return tpp_y_err(d, span, err,
					 "tiers[%d].span_gpus = %d is not a "
					 "multiple of tiers[%d].span_gpus = %d",
					 i, t->span_gpus, i - 1,
					 c->tiers[i - 1].span_gpus);
	}
	/* groups beyond the outermost tier would have no network to price */
	if (!tpp_cluster_covers(c)) {
		i = c->ntiers - 1;
		return tpp_y_err(d, tpp_y_map_get(d, tpp_y_seq_item(d, seq, i), "span_gpus"), err,
				 "tiers[%d].span_gpus = %d covers fewer GPUs than the "
				 "cluster's %d (nodes x gpus_per_node): omit span_gpus "
				 "on the outermost tier or add a tier that spans the "
				 "cluster", i, c->tiers[i].span_gpus, tpp_cluster_gpus(c));
	}
	return TPP_OK;
}

int tpp_cluster_covers(const struct tpp_cluster *c)
{
	const struct tpp_tier *t = &c->tiers[c->ntiers - 1];
	return t->span_gpus == 0 || t->span_gpus >= tpp_cluster_gpus(c);
}

static int parse_tiers(struct tpp_ydoc *d, yaml_node_t *seq,
		       struct tpp_cluster *c, struct tpp_err *err)
{
	int n, i, rc;
	if ((rc = tpp_y_seq(d, seq, "tiers", &n, err)))
		return rc;
	if (n == 0)
		return tpp_y_err(d, seq, err,
				 "tiers: at least one tier is needed (the "
				 "innermost, e.g. nvlink, first)");
	if (n > TPP_MAX_TIERS)
		return tpp_y_err(d, tpp_y_seq_item(d, seq, TPP_MAX_TIERS), err,
				 "tiers: at most %d tiers are supported",
				 TPP_MAX_TIERS);
	for (i = 0; i < n; i++)
		if ((rc = parse_tier(d, tpp_y_seq_item(d, seq, i), i,
				     c->gpus_per_node, &c->tiers[i], err)))
			return rc;
	c->ntiers = n;
	return check_tiers(d, seq, c, err);
}

/* ---- top level ------------------------------------------------------------- */

struct cluster_in {
	struct tpp_cluster c;
	char schema[64];
	char description[TPP_SOURCE_LEN];
	char calibration[512];
	yaml_node_t *sources, *gpu, *tiers;
};

static const struct tpp_yfield cluster_fields[] = {
	{.key = "schema", .type = TPP_YF_STR,
	 .offset = offsetof(struct cluster_in, schema), .size = 64,
	 .required = 1},
	{.key = "name", .type = TPP_YF_STR,
	 .offset = offsetof(struct cluster_in, c.name), .size = TPP_NAME_LEN,
	 .required = 1},
	{.key = "description", .type = TPP_YF_STR,
	 .offset = offsetof(struct cluster_in, description),
	 .size = TPP_SOURCE_LEN},
	{.key = "sources", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct cluster_in, sources), .handler = tpp_y_keep_node},
	{.key = "gpu", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct cluster_in, gpu), .handler = tpp_y_keep_node,
	 .required = 1},
	{.key = "gpus_per_node", .type = TPP_YF_INT,
	 .offset = offsetof(struct cluster_in, c.gpus_per_node), .min = 1,
	 .max = 1024, .required = 1},
	{.key = "nodes", .type = TPP_YF_INT,
	 .offset = offsetof(struct cluster_in, c.nodes), .min = 1,
	 .max = 1000000, .required = 1},
	{.key = "calibration", .type = TPP_YF_STR,
	 .offset = offsetof(struct cluster_in, calibration), .size = 512},
	{.key = "tiers", .type = TPP_YF_CUSTOM,
	 .offset = offsetof(struct cluster_in, tiers), .handler = tpp_y_keep_node,
	 .required = 1},
};

/* Join the `sources` list into c->source ("; " between items; a source
 * that does not fit is cut and ends in "..."). */
static int parse_sources(struct tpp_ydoc *d, yaml_node_t *seq,
			 struct tpp_cluster *c, struct tpp_err *err)
{
	size_t size = sizeof(c->source), used = 0;
	int n, i, rc;

	if ((rc = tpp_y_seq(d, seq, "sources", &n, err)))
		return rc;
	c->source[0] = '\0';
	for (i = 0; i < n; i++) {
		yaml_node_t *item = tpp_y_seq_item(d, seq, i);
		const char *s;
		int w;
		if (!item || item->type != YAML_SCALAR_NODE)
			return tpp_y_err(d, item, err,
					 "sources: expected a list of strings");
		s = tpp_y_text(item);
		if (used + 1 >= size)
			continue;
		w = snprintf(c->source + used, size - used, "%s%s",
			     used ? "; " : "", s);
		if (w < 0 || (size_t)w >= size - used) {
			memcpy(c->source + size - 4, "...", 4);
			used = size - 1;
		} else {
			used += (size_t)w;
		}
	}
	one_line(c->source);
	return TPP_OK;
}

/* Make the calibration path absolute, relative to the YAML file's dir. */
static int set_calibration(struct tpp_ydoc *d, yaml_node_t *node,
			   const char *rel, struct tpp_cluster *c,
			   struct tpp_err *err)
{
	char dir[PATH_MAX];
	char *slash;
	int w;

	if (!rel[0])
		return tpp_y_err(d, node, err,
				 "calibration: empty path (omit the key for no calibration)");
	c->calibration_line = (int)node->start_mark.line + 1;
	c->calibration_col = (int)node->start_mark.column + 1;
	if (rel[0] == '/') {
		tpp_strlcpy(c->calibration, rel, sizeof(c->calibration));
		return TPP_OK;
	}
	if (!realpath(d->path, dir))
		return tpp_y_err(d, node, err,
				 "calibration: cannot find the directory of %s",
				 d->path);
	slash = strrchr(dir, '/');
	TPP_ASSERT(slash);
	*slash = '\0';
	w = snprintf(c->calibration, sizeof(c->calibration), "%s/%s", dir,
		     rel);
	if (w < 0 || (size_t)w >= sizeof(c->calibration))
		return tpp_y_err(d, node, err, "calibration: path too long");
	return TPP_OK;
}

static int parse_cluster(struct tpp_ydoc *d, struct tpp_cluster *out,
			 struct tpp_err *err)
{
	struct cluster_in *in;
	yaml_node_t *root = tpp_ydoc_root(d);
	int rc;

	/* The schema first: a model file given as a cluster should say so,
	 * not list unknown keys. */
	if ((rc = tpp_y_check_schema(d, TPP_CLUSTER_SCHEMA, "cluster", err)))
		return rc;

	in = calloc(1, sizeof(*in));
	if (!in)
		return tpp_err_set(err, TPP_E_SYSTEM, d->path, 0, 0,
				   "out of memory");
	if ((rc = tpp_ymap_parse(d, root, cluster_fields,
				 TPP_ARRAY_LEN(cluster_fields), in, "cluster",
				 err)))
		goto out;
	/* no more GPUs than --gpus takes: the search loops over every
	 * degree up to the GPU count, and would not end on 10^9 of them */
	if ((long long)in->c.nodes * in->c.gpus_per_node > TPP_CLUSTER_MAX_GPUS) {
		rc = tpp_y_err(d, tpp_y_map_get(d, root, "nodes"), err,
			       "cluster: nodes x gpus_per_node = %d x %d = %lld GPUs is more than %d",
			       in->c.nodes, in->c.gpus_per_node,
			       (long long)in->c.nodes * in->c.gpus_per_node,
			       TPP_CLUSTER_MAX_GPUS);
		goto out;
	}
	if ((rc = check_name(d, tpp_y_map_get(d, root, "name"), "cluster.name",
			     in->c.name, err)))
		goto out;
	if (in->sources && (rc = parse_sources(d, in->sources, &in->c, err)))
		goto out;
	if ((rc = parse_gpu(d, in->gpu, &in->c.gpu, err)))
		goto out;
	if ((rc = parse_tiers(d, in->tiers, &in->c, err)))
		goto out;
	/* calibration: ~ is none, as the key left out */
	if (tpp_y_map_get(d, root, "calibration") &&
	    !tpp_y_is_null(tpp_y_map_get(d, root, "calibration")) &&
	    (rc = set_calibration(d, tpp_y_map_get(d, root, "calibration"),
				  in->calibration, &in->c, err)))
		goto out;
	tpp_strlcpy(in->c.path, d->path, sizeof(in->c.path));
	*out = in->c;
	rc = TPP_OK;
out:
	free(in);
	return rc;
}

int tpp_cluster_load(const char *name_or_path, const char *topodir,
		     struct tpp_cluster *out, struct tpp_err *err)
{
	struct tpp_ydoc d;
	char path[512];
	int rc;

	TPP_ASSERT(out);
	if ((rc = tpp_cluster_resolve(name_or_path, topodir, path, sizeof(path),
				      err)))
		return rc;
	if ((rc = tpp_ydoc_load(&d, path, err)))
		return rc;
	rc = parse_cluster(&d, out, err);
	tpp_ydoc_free(&d);
	return rc;
}

/* ---- queries --------------------------------------------------------------- */

int tpp_cluster_gpus(const struct tpp_cluster *c)
{
	TPP_ASSERT(c);
	return c->gpus_per_node * c->nodes;
}

int tpp_cluster_tier_for(const struct tpp_cluster *c, int group_gpus,
			 int stride)
{
	long long block, total;
	int i;

	TPP_ASSERT(c && c->ntiers > 0);
	if (group_gpus <= 1)
		return 0;
	TPP_ASSERT(stride >= 1);
	/*
	 * Instances of the group tile the ranks in blocks of
	 * group_gpus * stride consecutive GPUs (stride interleaved groups per
	 * block, Megatron's rank order).  Every instance lies inside one
	 * domain of span S iff the block divides S: otherwise a block
	 * straddles a domain boundary, and some instance in it has members
	 * on both sides (e.g. TP=3 on 8-GPU nodes: GPUs 6, 7, 8).  Collectives
	 * of all instances run in lockstep, so the worst one prices them.
	 * A cluster that fits in one domain holds every group there.
	 */
	block = (long long)group_gpus * stride;
	total = (long long)tpp_cluster_gpus(c);
	for (i = 0; i < c->ntiers; i++) {
		long long span = c->tiers[i].span_gpus;
		if (span == 0 || (block <= span && span % block == 0) ||
		    (total > 0 && total <= span))
			return i;
	}
	return c->ntiers - 1;
}

void tpp_cluster_resize(struct tpp_cluster *c, int gpus)
{
	TPP_ASSERT(c && c->gpus_per_node > 0 && gpus > 0);
	c->nodes = (gpus + c->gpus_per_node - 1) / c->gpus_per_node;
}
