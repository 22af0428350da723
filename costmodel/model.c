/*
 * model.c - transformer model descriptions (see model.h): the built-in
 * preset table, the model YAML loader (schema in MODEL_YAML.md), shape
 * checks and parameter counts.
 *
 * Data flow: --model NAME|FILE --> tpp_model_load --> struct tpp_model -->
 * cost model (FLOPs, memory, communication).
 *
 * Preset shapes and parameter counts follow
 * ../shared/reference/costmodel.md section 8 (source tags such as
 * [GPT3-T2.1] and [MLM-SC21] are that document's); the per-layer weight
 * formulas follow its sections 1.1, 1.6 and 3.2.
 *
 * Parameter-counting convention (elements, not bytes).  The block family is
 * implied by the MLP kind, since every preset falls in one of two families:
 *
 *   GeLU models (GPT-3, Megatron SC21, MT-NLG): "GPT-style" blocks with
 *   biases on every linear layer, two LayerNorms (weight + bias) per layer,
 *   a final LayerNorm and learned absolute position embeddings (s x h).
 *   SwiGLU models (Llama 2/3/3.1): no biases, two RMSNorms (weight only)
 *   per layer, a final RMSNorm and rotary positions (no parameters).
 *
 *   q_dim = a*d_h, kv_dim = n_kv*d_h
 *   attention  = h*q_dim + 2*h*kv_dim + q_dim*h     (QKV + out-proj weights)
 *   mlp        = 2*h*f (GeLU) or 3*h*f (SwiGLU)
 *   biases     = (q_dim + 2*kv_dim) + h + f + h     (GeLU only)
 *   norms      = 4h (2 LayerNorms) or 2h (2 RMSNorms)
 *   per layer  = attention + mlp + biases + norms
 *   embedding  = V*h                                  (unpadded V)
 *   total      = L*per layer + V*h + [s*h learned positions, GeLU]
 *              + final norm (2h GeLU, h SwiGLU) + [V*h LM head if untied]
 *
 * With these, GPT-3 175B = 174.60B, Llama-2 7B = 6.738B, Llama-3 8B =
 * 8.030B, Llama-3.1 405B = 405.85B, SC21 1T = 1008.0B (section 8's "C"
 * column).
 */
#include "model.h"

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "tpp_yaml.h"

const char *const tpp_mlp_names[TPP_MLP__COUNT] = {
	[TPP_MLP_GELU] = "gelu",
	[TPP_MLP_SWIGLU] = "swiglu",
};

/* Sanity limits shared by the YAML table and tpp_model_check. */
#define TPP_MODEL_MAX_LAYERS 10000
#define TPP_MODEL_MAX_HIDDEN (1 << 20)
#define TPP_MODEL_MAX_HEAD_DIM (1 << 16)
#define TPP_MODEL_MAX_QDIM (1 << 22)   /* heads * head_dim */
#define TPP_MODEL_MAX_FFN (1 << 24)
#define TPP_MODEL_MAX_VOCAB (1 << 24)
#define TPP_MODEL_MAX_SEQ (1 << 22)
#define TPP_MODEL_MAX_BATCH (1 << 26)  /* sequences */
#define TPP_MODEL_DEFAULT_BATCH 512    /* [assumed], model files only */

#define TPP_MODEL_SCHEMA "tpplan.model/v1"

/* ------------------------------------------------------------------ */
/* Presets                                                             */
/* ------------------------------------------------------------------ */

/* GPT-3 family [GPT3-T2.1]: GeLU/LayerNorm, learned positions, tied,
 * dropout, V = 50257 (GPT-2 BPE), s = 2048, f = 4h.  Global batch is the
 * paper's batch-size column in tokens divided by 2048. */
#define GPT3(nm, L, h, a, B, d, src)                                         \
	{                                                                    \
		.name = nm, .desc = d, .source = src, .layers = L,           \
		.hidden = h, .heads = a, .kv_heads = a, .head_dim = (h) / (a), \
		.ffn = 4 * (h), .mlp = TPP_MLP_GELU, .vocab = 50257,         \
		.seq = 2048, .tied = 1, .dropout = 1, .global_batch = B      \
	}

/* Megatron-LM SC21 Table 1 sizes [MLM-SC21 run_table_1.sh, README]:
 * GeLU/LayerNorm, f = 4h, V = 51200 (GPT-2 vocab as padded by those
 * scripts), s = 2048, tied (Megatron default), dropout 0.1 (default). */
#define SC21(nm, L, h, a, B, d)                                              \
	{                                                                    \
		.name = nm, .desc = d,                                       \
		.source = "costmodel.md s8 [MLM-SC21] run_table_1.sh, "      \
			  "CONFIG.sh, README (SC21 Table 1); V = 51200 padded; " \
			  "global batch from SC21 Table 1",                  \
		.layers = L, .hidden = h, .heads = a, .kv_heads = a,         \
		.head_dim = (h) / (a), .ffn = 4 * (h), .mlp = TPP_MLP_GELU,  \
		.vocab = 51200, .seq = 2048, .tied = 1, .dropout = 1,        \
		.global_batch = B                                            \
	}

/* Llama family: SwiGLU/RMSNorm, RoPE (base rb, Llama 3.1 scaling factor
 * rs or 0), untied, no dropout, d_h = 128. */
#define LLAMA(nm, L, h, a, kv, f, V, s, B, rb, rs, d, src)                   \
	{                                                                    \
		.name = nm, .desc = d, .source = src, .layers = L,           \
		.hidden = h, .heads = a, .kv_heads = kv,                     \
		.head_dim = (h) / (a), .ffn = f, .mlp = TPP_MLP_SWIGLU,      \
		.vocab = V, .seq = s, .tied = 0, .dropout = 0,               \
		.global_batch = B, .rope_base = rb, .rope_scaling = rs       \
	}

#define SRC_GPT3 "costmodel.md s8 [GPT3-T2.1]; V, f = 4h recalled (M); "     \
		 "global batch = paper batch-size column / 2048 tokens"
#define SRC_L2 "costmodel.md s8 [HF cfg copy], [llama2 MODEL_CARD]; "       \
	       "global batch 4M tokens / 4096 (Llama 2 paper); rope_theta "     \
	       "10000 (HF config)"
#define SRC_L3 "costmodel.md s8 [llama-models sku_list.py], "               \
	       "[MLM llama3_8b example], [HF cfg copy]; rope_theta 500000, "    \
	       "Llama 3.1 rope_scaling factor 8 (HF config)"

static const struct tpp_model presets[] = {
	GPT3("125m", 12, 768, 12, 256, "GPT-3 Small 125M",
	     SRC_GPT3 " (0.5M)"),
	GPT3("350m", 24, 1024, 16, 256, "GPT-3 Medium 350M",
	     SRC_GPT3 " (0.5M)"),
	GPT3("760m", 24, 1536, 16, 256, "GPT-3 Large 760M",
	     SRC_GPT3 " (0.5M)"),
	/* Paper: a = 24, d_head = 128, inconsistent with h = 2048 (24 does
	 * not divide 2048).  Keep h and d_head = 128, so a = 16. */
	GPT3("1.3b", 24, 2048, 16, 512,
	     "GPT-3 XL 1.3B (a = 16: paper's a = 24 does not divide h)",
	     SRC_GPT3 " (1M); paper a=24,d_head=128 inconsistent: kept "
		      "d_head=128, a=h/128=16"),
	GPT3("2.7b", 32, 2560, 32, 512, "GPT-3 2.7B", SRC_GPT3 " (1M)"),
	GPT3("6.7b", 32, 4096, 32, 1024, "GPT-3 6.7B", SRC_GPT3 " (2M)"),
	/* Paper: h = 5140; 40 heads * 128 = 5120, which we use. */
	GPT3("13b", 40, 5120, 40, 1024, "GPT-3 13B (h = 5120, paper 5140)",
	     SRC_GPT3 " (2M); paper h=5140, used 40*128=5120"),
	GPT3("175b", 96, 12288, 96, 1536, "GPT-3 175B",
	     "costmodel.md s8 [GPT3-T2.1], [MLM examples/gpt3], [Calculon]; "
	     "global batch 3.2M tokens / 2048"),

	SC21("sc21-1.7b", 24, 2304, 24, 512, "Megatron SC21 1.7B"),
	SC21("sc21-3.6b", 30, 3072, 32, 512, "Megatron SC21 3.6B"),
	SC21("sc21-7.5b", 36, 4096, 32, 512, "Megatron SC21 7.5B"),
	SC21("sc21-18b", 40, 6144, 48, 1024, "Megatron SC21 18B"),
	SC21("sc21-39b", 48, 8192, 64, 1536, "Megatron SC21 39B"),
	SC21("sc21-76b", 60, 10240, 80, 1792, "Megatron SC21 76B"),
	SC21("sc21-145b", 80, 12288, 96, 2304, "Megatron SC21 145B"),
	SC21("sc21-310b", 96, 16384, 128, 2160, "Megatron SC21 310B"),
	SC21("sc21-530b", 105, 20480, 128, 2520, "Megatron SC21 530B"),
	SC21("1t", 128, 25600, 160, 3072, "Megatron SC21 1T"),

	{.name = "22b", .desc = "Korthikanti et al. 2022 22B",
	 .source = "costmodel.md s8 [Calculon models/megatron-22B.json]; "
		   "V 51200 recalled (M); global batch 1024 [assumed]",
	 .layers = 48, .hidden = 6144, .heads = 64, .kv_heads = 64,
	 .head_dim = 96, .ffn = 24576, .mlp = TPP_MLP_GELU, .vocab = 51200,
	 .seq = 2048, .tied = 1, .dropout = 1, .global_batch = 1024},
	{.name = "530b", .desc = "MT-NLG / Turing 530B",
	 .source = "costmodel.md s8 [Calculon], [MLM-SC21]; V 50257 (M, "
		   "Megatron pads to 51200); global batch 1920 (MT-NLG paper, "
		   "recalled, not in costmodel.md) [assumed]",
	 .layers = 105, .hidden = 20480, .heads = 128, .kv_heads = 128,
	 .head_dim = 160, .ffn = 81920, .mlp = TPP_MLP_GELU, .vocab = 50257,
	 .seq = 2048, .tied = 1, .dropout = 1, .global_batch = 1920},

	LLAMA("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096, 1024, 10000, 0,
	      "Llama 2 7B", SRC_L2),
	LLAMA("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096, 1024, 10000, 0,
	      "Llama 2 13B", SRC_L2),
	LLAMA("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096, 1024, 10000, 0,
	      "Llama 2 70B (GQA 8)", SRC_L2 "; GQA per model card"),

	LLAMA("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, 512, 500000, 0,
	      "Llama 3 8B", SRC_L3 "; global batch 512 x 8192 = 4M tokens "
				   "[assumed]"),
	LLAMA("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192, 512, 500000, 0,
	      "Llama 3 70B", SRC_L3 "; global batch 512 x 8192 = 4M tokens "
				    "[assumed]"),
	LLAMA("llama3.1-8b", 32, 4096, 32, 8, 14336, 128256, 8192, 512, 500000, 8,
	      "Llama 3.1 8B (s = 8192 pretraining; context extended to 128k)",
	      SRC_L3 "; seq = 8192 pretraining length (131072 only in the "
		     "long-context stage); global batch 4M tokens [assumed]"),
	LLAMA("llama3.1-70b", 80, 8192, 64, 8, 28672, 128256, 8192, 512, 500000, 8,
	      "Llama 3.1 70B (s = 8192 pretraining; context extended to 128k)",
	      SRC_L3 "; seq = 8192 pretraining length (131072 only in the "
		     "long-context stage); global batch 4M tokens [assumed]"),
	LLAMA("llama3.1-405b", 126, 16384, 128, 8, 53248, 128256, 8192, 2048, 500000, 8,
	      "Llama 3.1 405B (s = 8192 pretraining; context extended to 128k)",
	      SRC_L3 ", [Llama 3 paper Table 3]; seq = 8192 pretraining "
		     "length; global batch 16M tokens / 8192 (final stage)"),
};

/* Unambiguous alternative spellings of preset names. */
static const struct {
	const char *alias, *name;
} aliases[] = {
	{"gpt3-125m", "125m"},   {"gpt3-350m", "350m"},
	{"gpt3-760m", "760m"},   {"gpt3-1.3b", "1.3b"},
	{"gpt3-2.7b", "2.7b"},   {"gpt3-6.7b", "6.7b"},
	{"gpt3-13b", "13b"},     {"gpt3-175b", "175b"},
	{"sc21-1t", "1t"},       {"megatron-1t", "1t"},
	{"mt-nlg-530b", "530b"}, {"megatron-22b", "22b"},
	{"llama-2-7b", "llama2-7b"},   {"llama-2-13b", "llama2-13b"},
	{"llama-2-70b", "llama2-70b"}, {"llama-3-8b", "llama3-8b"},
	{"llama-3-70b", "llama3-70b"}, {"llama-3.1-8b", "llama3.1-8b"},
	{"llama-3.1-70b", "llama3.1-70b"},
	{"llama-3.1-405b", "llama3.1-405b"},
};

int tpp_model_preset_count(void)
{
	return (int)TPP_ARRAY_LEN(presets);
}

const struct tpp_model *tpp_model_preset_at(int i)
{
	if (i < 0 || i >= tpp_model_preset_count())
		return NULL;
	return &presets[i];
}

const struct tpp_model *tpp_model_preset(const char *name)
{
	size_t i;
	if (!name)
		return NULL;
	for (i = 0; i < TPP_ARRAY_LEN(aliases); i++)
		if (!strcmp(name, aliases[i].alias)) {
			name = aliases[i].name;
			break;
		}
	for (i = 0; i < TPP_ARRAY_LEN(presets); i++)
		if (!strcmp(name, presets[i].name))
			return &presets[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Checks                                                              */
/* ------------------------------------------------------------------ */

/*
 * Find the first problem with m.  Returns 0 if none; else 1, with *key set
 * to the YAML key to blame and msg filled ("heads = 30 does not ...").
 */
static int model_problem(const struct tpp_model *m, const char **key,
			 char *msg, size_t size)
{
	static const struct {
		const char *key;
		size_t off;
		int max;
	} ranges[] = {
		{"layers", offsetof(struct tpp_model, layers), TPP_MODEL_MAX_LAYERS},
		{"hidden", offsetof(struct tpp_model, hidden), TPP_MODEL_MAX_HIDDEN},
		{"heads", offsetof(struct tpp_model, heads), TPP_MODEL_MAX_HIDDEN},
		{"kv_heads", offsetof(struct tpp_model, kv_heads), TPP_MODEL_MAX_HIDDEN},
		{"head_dim", offsetof(struct tpp_model, head_dim), TPP_MODEL_MAX_HEAD_DIM},
		{"ffn", offsetof(struct tpp_model, ffn), TPP_MODEL_MAX_FFN},
		{"vocab", offsetof(struct tpp_model, vocab), TPP_MODEL_MAX_VOCAB},
		{"seq", offsetof(struct tpp_model, seq), TPP_MODEL_MAX_SEQ},
		{"global_batch", offsetof(struct tpp_model, global_batch), TPP_MODEL_MAX_BATCH},
	};
	size_t i;

	if (!m->name[0]) {
		*key = "name";
		snprintf(msg, size, "name must not be empty");
		return 1;
	}
	if (tpp_has_control_char(m->name)) {
		*key = "name";
		snprintf(msg, size, "name must not contain control characters (newline, tab, line separators, bidi controls)");
		return 1;
	}
	/* printed in the plan's first line, which a newline would split */
	if (tpp_has_control_char(m->desc)) {
		*key = "description";
		snprintf(msg, size, "description must not contain control characters (newline, tab, line separators, bidi controls)");
		return 1;
	}
	for (i = 0; i < TPP_ARRAY_LEN(ranges); i++) {
		int v = *(const int *)((const char *)m + ranges[i].off);
		if (v < 1 || v > ranges[i].max) {
			*key = ranges[i].key;
			snprintf(msg, size, "%s = %d is out of range [1, %d]",
				 ranges[i].key, v, ranges[i].max);
			return 1;
		}
	}
	if ((int)m->mlp < 0 || m->mlp >= TPP_MLP__COUNT) {
		*key = "mlp";
		snprintf(msg, size, "mlp = %d is not a known MLP kind",
			 (int)m->mlp);
		return 1;
	}
	if (m->heads > m->hidden) {
		*key = "heads";
		snprintf(msg, size, "heads = %d exceeds hidden = %d", m->heads,
			 m->hidden);
		return 1;
	}
	if (m->kv_heads > m->heads) {
		*key = "kv_heads";
		snprintf(msg, size, "kv_heads = %d exceeds heads = %d",
			 m->kv_heads, m->heads);
		return 1;
	}
	if (m->heads % m->kv_heads) {
		*key = "kv_heads";
		snprintf(msg, size,
			 "kv_heads = %d does not divide heads = %d (each KV "
			 "head serves a whole group of query heads)",
			 m->kv_heads, m->heads);
		return 1;
	}
	if ((long long)m->heads * m->head_dim > TPP_MODEL_MAX_QDIM) {
		*key = "head_dim";
		snprintf(msg, size,
			 "heads * head_dim = %d * %d exceeds %d", m->heads,
			 m->head_dim, TPP_MODEL_MAX_QDIM);
		return 1;
	}
	if (m->tied != 0 && m->tied != 1) {
		*key = "tied_embeddings";
		snprintf(msg, size, "tied_embeddings must be 0 or 1");
		return 1;
	}
	if (m->dropout != 0 && m->dropout != 1) {
		*key = "dropout";
		snprintf(msg, size, "dropout must be 0 or 1");
		return 1;
	}
	if ((m->rope_base != 0 || m->rope_scaling != 0) && m->mlp != TPP_MLP_SWIGLU) {
		*key = m->rope_base != 0 ? "rope_base" : "rope_scaling_factor";
		snprintf(msg, size,
			 "%s: only SwiGLU (Llama-family) models have rotary "
			 "positions here; a gelu model has a learned position "
			 "table (set mlp: swiglu for a Llama-family model)",
			 *key);
		return 1;
	}
	/* Megatron's --rotary-base is an integer */
	if (m->rope_base != floor(m->rope_base)) {
		*key = "rope_base";
		snprintf(msg, size, "rope_base = %g must be a whole number "
			 "(Megatron-LM's --rotary-base is an integer)", m->rope_base);
		return 1;
	}
	if (m->rope_base < 0 || m->rope_scaling < 0 ||
	    (m->rope_scaling != 0 && m->rope_scaling < 1)) {
		*key = m->rope_base < 0 ? "rope_base" : "rope_scaling_factor";
		snprintf(msg, size, "%s must be positive (rope_scaling_factor >= 1)",
			 *key);
		return 1;
	}
	return 0;
}

int tpp_model_problem(const struct tpp_model *m, const char **key, char *msg,
		      size_t size)
{
	TPP_ASSERT(m && key && msg && size);
	*key = NULL;
	msg[0] = '\0';
	return model_problem(m, key, msg, size);
}

int tpp_model_check(const struct tpp_model *m, const char *file,
		    struct tpp_err *err)
{
	const char *key = NULL;
	char msg[512];

	TPP_ASSERT(m);
	if (!model_problem(m, &key, msg, sizeof(msg)))
		return TPP_OK;
	return tpp_err_set(err, TPP_E_INPUT, file, 0, 0, "model '%s': %s",
			   m->name, msg);
}

/* ------------------------------------------------------------------ */
/* YAML loader                                                         */
/* ------------------------------------------------------------------ */

/* Check `schema:` while parsing, so a wrong value is located. */
static int schema_field(struct tpp_ydoc *d, yaml_node_t *node, void *field,
			struct tpp_err *err)
{
	char buf[64];
	int rc;
	(void)field;
	if ((rc = tpp_y_str(d, node, buf, sizeof(buf), err)))
		return tpp_y_err(d, node, err,
				 "model.schema: expected '%s'", TPP_MODEL_SCHEMA);
	if (strcmp(buf, TPP_MODEL_SCHEMA))
		return tpp_y_err(d, node, err,
				 "model.schema: unsupported schema '%s' (expected '%s')",
				 buf, TPP_MODEL_SCHEMA);
	return TPP_OK;
}

#define M_INT(k, f, mx, req)                                                 \
	{.key = k, .type = TPP_YF_INT, .offset = offsetof(struct tpp_model, f), \
	 .min = 1, .max = mx, .required = req}

static const struct tpp_yfield model_fields[] = {
	{.key = "schema", .type = TPP_YF_CUSTOM, .handler = schema_field},
	{.key = "name", .type = TPP_YF_STR,
	 .offset = offsetof(struct tpp_model, name),
	 .size = sizeof(((struct tpp_model *)0)->name), .required = 1},
	{.key = "description", .type = TPP_YF_STR,
	 .offset = offsetof(struct tpp_model, desc),
	 .size = sizeof(((struct tpp_model *)0)->desc)},
	{.key = "source", .type = TPP_YF_STR,
	 .offset = offsetof(struct tpp_model, source),
	 .size = sizeof(((struct tpp_model *)0)->source)},
	M_INT("layers", layers, TPP_MODEL_MAX_LAYERS, 1),
	M_INT("hidden", hidden, TPP_MODEL_MAX_HIDDEN, 1),
	M_INT("heads", heads, TPP_MODEL_MAX_HIDDEN, 1),
	M_INT("kv_heads", kv_heads, TPP_MODEL_MAX_HIDDEN, 0),
	M_INT("head_dim", head_dim, TPP_MODEL_MAX_HEAD_DIM, 0),
	M_INT("ffn", ffn, TPP_MODEL_MAX_FFN, 0),
	{.key = "mlp", .type = TPP_YF_ENUM,
	 .offset = offsetof(struct tpp_model, mlp), .names = tpp_mlp_names,
	 .nnames = TPP_MLP__COUNT},
	M_INT("vocab", vocab, TPP_MODEL_MAX_VOCAB, 1),
	M_INT("seq", seq, TPP_MODEL_MAX_SEQ, 1),
	{.key = "tied_embeddings", .type = TPP_YF_BOOL,
	 .offset = offsetof(struct tpp_model, tied)},
	{.key = "dropout", .type = TPP_YF_BOOL,
	 .offset = offsetof(struct tpp_model, dropout)},
	M_INT("global_batch", global_batch, TPP_MODEL_MAX_BATCH, 0),
	{.key = "rope_base", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct tpp_model, rope_base), .min = 1, .max = 1e12},
	{.key = "rope_scaling_factor", .type = TPP_YF_DOUBLE,
	 .offset = offsetof(struct tpp_model, rope_scaling), .min = 1, .max = 1e6},
};

/* Value node of `key` in mapping `map`, or NULL. */
static yaml_node_t *map_value(struct tpp_ydoc *d, yaml_node_t *map,
			      const char *key)
{
	yaml_node_pair_t *pair;
	for (pair = map->data.mapping.pairs.start;
	     pair < map->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(&d->doc, pair->key);
		if (k && k->type == YAML_SCALAR_NODE &&
		    !strcmp((const char *)k->data.scalar.value, key))
			return yaml_document_get_node(&d->doc, pair->value);
	}
	return NULL;
}

/* Report a shape problem at the value of `key` (or at the mapping). */
static int located(struct tpp_ydoc *d, yaml_node_t *map, const char *key,
		   const char *msg, struct tpp_err *err)
{
	yaml_node_t *v = map_value(d, map, key);
	return tpp_y_err(d, v ? v : map, err, "%s", msg);
}

static int load_file(const char *path, struct tpp_model *out,
		     struct tpp_err *err)
{
	struct tpp_ydoc d;
	struct tpp_model m;
	yaml_node_t *root;
	const char *key;
	char msg[512];
	int rc;

	if ((rc = tpp_ydoc_load(&d, path, err)))
		return rc;
	root = tpp_ydoc_root(&d);
	if (!root) {
		rc = tpp_err_set(err, TPP_E_INPUT, path, 0, 0,
				 "empty model file");
		goto out;
	}

	/* Defaults; 0 in kv_heads, head_dim and ffn means "derive". */
	memset(&m, 0, sizeof(m));
	m.mlp = TPP_MLP_GELU;
	m.global_batch = TPP_MODEL_DEFAULT_BATCH;
	if ((rc = tpp_ymap_parse(&d, root, model_fields,
				 TPP_ARRAY_LEN(model_fields), &m, "model",
				 err)))
		goto out;
	if (!m.kv_heads)
		m.kv_heads = m.heads;
	if (!m.ffn)
		m.ffn = 4 * m.hidden; /* hidden <= 2^20: no overflow */
	if (!m.head_dim) {
		/* derived: a problem with it is hidden's and heads' */
		if (m.hidden / m.heads > TPP_MODEL_MAX_HEAD_DIM) {
			snprintf(msg, sizeof(msg),
				 "hidden / heads = %d / %d = %d, the head dimension, exceeds %d",
				 m.hidden, m.heads, m.hidden / m.heads, TPP_MODEL_MAX_HEAD_DIM);
			rc = located(&d, root, "heads", msg, err);
			goto out;
		}
		if (m.hidden % m.heads) {
			snprintf(msg, sizeof(msg),
				 "heads = %d does not divide hidden = %d (give "
				 "head_dim to decouple them)",
				 m.heads, m.hidden);
			rc = located(&d, root, "heads", msg, err);
			goto out;
		}
		m.head_dim = m.hidden / m.heads;
	}
	if (model_problem(&m, &key, msg, sizeof(msg))) {
		rc = located(&d, root, key, msg, err);
		goto out;
	}
	*out = m;
	rc = TPP_OK;
out:
	tpp_ydoc_free(&d);
	return rc;
}

int tpp_model_load(const char *name_or_path, struct tpp_model *out,
		   struct tpp_err *err)
{
	const struct tpp_model *p;
	struct stat st;

	TPP_ASSERT(name_or_path && out);
	p = tpp_model_preset(name_or_path);
	if (p) {
		*out = *p;
		return TPP_OK;
	}
	if (stat(name_or_path, &st) != 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			/* the nearest preset names, if any is near (all
			 * of them at the least distance, up to three) */
			char near[160] = "";
			int i, best = 3, nn = 0;
			for (i = 0; i < tpp_model_preset_count(); i++) {
				const char *n = tpp_model_preset_at(i)->name;
				int d = tpp_name_near(name_or_path, n);
				if (d >= 0 && d < best)
					best = d;
			}
			for (i = 0; best < 3 && i < tpp_model_preset_count() && nn < 3; i++) {
				const char *n = tpp_model_preset_at(i)->name;
				if (tpp_name_near(name_or_path, n) != best)
					continue;
				tpp_appendf(near, sizeof(near), "%s'%.40s'", nn ? " or " : "", n);
				nn++;
			}
			return tpp_err_set(err, TPP_E_INPUT, NULL, 0, 0,
					   "unknown model '%s': not a preset "
					   "(see `tpplan models`) and no such file%s%s%s",
					   name_or_path, near[0] ? "; did you mean " : "",
					   near, near[0] ? "?" : "");
		}
		return tpp_err_set(err, TPP_E_INPUT, name_or_path, 0, 0,
				   "cannot read model file: %s",
				   strerror(errno));
	}
	if (!S_ISREG(st.st_mode))
		return tpp_err_set(err, TPP_E_INPUT, name_or_path, 0, 0,
				   "model file is not a regular file");
	return load_file(name_or_path, out, err);
}

/* ------------------------------------------------------------------ */
/* Parameter counts (convention in the header comment of this file)   */
/* ------------------------------------------------------------------ */

double tpp_model_params_per_layer(const struct tpp_model *m)
{
	double h = m->hidden, f = m->ffn;
	double q_dim = (double)m->heads * m->head_dim;
	double kv_dim = (double)m->kv_heads * m->head_dim;
	double attn = h * q_dim + 2.0 * h * kv_dim + q_dim * h;

	if (m->mlp == TPP_MLP_SWIGLU)
		return attn + 3.0 * h * f + 2.0 * h;
	/* GPT-style: QKV, out, fc1, fc2 biases and two LayerNorms. */
	return attn + 2.0 * h * f + (q_dim + 2.0 * kv_dim) + h + f + h +
	       4.0 * h;
}

double tpp_model_params_per_layer_replicated(const struct tpp_model *m)
{
	double h = m->hidden;
	if (m->mlp == TPP_MLP_SWIGLU)
		return 2.0 * h;           /* two RMSNorm weights */
	return 4.0 * h + h + h;           /* two LayerNorms, out and fc2 biases */
}

double tpp_model_params_embedding(const struct tpp_model *m)
{
	return (double)m->vocab * m->hidden;
}

double tpp_model_params_total(const struct tpp_model *m)
{
	double h = m->hidden;
	double total = m->layers * tpp_model_params_per_layer(m) +
		       tpp_model_params_embedding(m);

	if (m->mlp == TPP_MLP_SWIGLU)
		total += h; /* final RMSNorm; RoPE has no parameters */
	else
		total += (double)m->seq * h + 2.0 * h; /* positions, final LN */
	if (!m->tied)
		total += tpp_model_params_embedding(m); /* LM head */
	return total;
}
