/*
 * model.h - transformer model descriptions: built-in presets (GPT-3 family,
 * Megatron SC21 sizes, Llama 2/3/3.1) and model YAML files.
 *
 * Data flow: --model NAME|FILE --> struct tpp_model --> cost model.
 * Preset shapes follow ../shared/reference/costmodel.md section 8; each
 * preset cites its source.
 */
#ifndef TPP_MODEL_H
#define TPP_MODEL_H

#include "tpp_common.h"

enum tpp_mlp {
	TPP_MLP_GELU,   /* two matrices h->f->h (plain MLP) */
	TPP_MLP_SWIGLU, /* three matrices: gate and up h->f, down f->h */
	TPP_MLP__COUNT
};
extern const char *const tpp_mlp_names[TPP_MLP__COUNT]; /* "gelu", "swiglu" */

struct tpp_model {
	char name[64];
	char desc[128];
	char source[256];
	int layers;
	int hidden;
	int heads;
	int kv_heads;     /* = heads for MHA */
	int head_dim;     /* = hidden/heads unless given */
	int ffn;          /* MLP intermediate size */
	enum tpp_mlp mlp;
	int vocab;        /* unpadded; the cost model pads per TP degree */
	int seq;          /* training sequence length */
	int tied;         /* input embedding shared with LM head */
	int dropout;      /* model trains with dropout (GPT-style); Llama: 0 */
	/* Rotary positions (SwiGLU / Llama-family models only): the RoPE
	 * base theta (0 = not given: Megatron's default, 10000) and the
	 * Llama 3.1 frequency scaling factor (0 = none).  They change no
	 * cost; the report's Megatron-LM arguments carry them. */
	double rope_base;
	double rope_scaling;
	int global_batch; /* default global batch, sequences */
};

/* Number of presets and access by index (for `tpplan models`). */
int tpp_model_preset_count(void);
const struct tpp_model *tpp_model_preset_at(int i);
/* Find a preset by short name ("175b", "llama3-70b", ...); NULL if none. */
const struct tpp_model *tpp_model_preset(const char *name);

/*
 * Load `name_or_path`: a preset name, else a model YAML file.  Validates
 * the shape (heads divide hidden unless head_dim given, kv_heads divide
 * heads, positive sizes, ...).  On failure *out is untouched.
 */
int tpp_model_load(const char *name_or_path, struct tpp_model *out,
		   struct tpp_err *err);

/* The first inconsistency of m: non-zero, with *key the YAML key to blame
 * (NULL when none) and msg ("kv_heads = 25 exceeds heads = 24"); 0 when
 * there is none. */
int tpp_model_problem(const struct tpp_model *m, const char **key, char *msg,
		      size_t size);
/* Check a model for consistency; err names the field. */
int tpp_model_check(const struct tpp_model *m, const char *file,
		    struct tpp_err *err);

/* Parameter counts (elements). */
double tpp_model_params_per_layer(const struct tpp_model *m);
/* Per-layer parameters Megatron keeps whole on every TP rank: the norms and
 * the biases of the row-parallel layers (attention output, MLP down). */
double tpp_model_params_per_layer_replicated(const struct tpp_model *m);
double tpp_model_params_embedding(const struct tpp_model *m); /* V*h */
double tpp_model_params_total(const struct tpp_model *m);     /* incl. LM head if untied */

#endif
