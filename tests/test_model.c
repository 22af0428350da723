/*
 * test_model.c - model presets, parameter counts and the model YAML loader
 * (costmodel/model.c).  Error paths: every tests/data/bad/model-*.yaml
 * starts with "# expect: LINE:COL: substring" and must fail with exactly
 * that location and message.
 */
#include "tpp_test.h"
#include "tpp_test_bad.h"

#include <dirent.h>
#include <stdlib.h>

#include "model.h"

static const char *const required[] = {
	"125m", "350m", "760m", "1.3b", "2.7b", "6.7b", "13b", "175b",
	"sc21-1.7b", "sc21-3.6b", "sc21-7.5b", "sc21-18b", "sc21-39b",
	"sc21-76b", "sc21-145b", "sc21-310b", "sc21-530b", "1t",
	"22b", "530b",
	"llama2-7b", "llama2-13b", "llama2-70b",
	"llama3-8b", "llama3-70b",
	"llama3.1-8b", "llama3.1-70b", "llama3.1-405b",
};

static const struct tpp_model *get(const char *name)
{
	const struct tpp_model *m = tpp_model_preset(name);
	if (!m) {
		fprintf(stderr, "missing preset %s\n", name);
		exit(1);
	}
	return m;
}

static void test_presets(void)
{
	int i, j, n = tpp_model_preset_count();
	size_t k;
	const struct tpp_model *m;

	for (k = 0; k < TPP_ARRAY_LEN(required); k++) {
		m = tpp_model_preset(required[k]);
		CHECK(m != NULL);
		if (m)
			CHECK(!strcmp(m->name, required[k]));
	}
	CHECK(n >= (int)TPP_ARRAY_LEN(required));
	CHECK(tpp_model_preset_at(-1) == NULL);
	CHECK(tpp_model_preset_at(n) == NULL);
	CHECK(tpp_model_preset("no-such-model") == NULL);
	CHECK(tpp_model_preset(NULL) == NULL);
	for (i = 0; i < n; i++) {
		struct tpp_err err;
		m = tpp_model_preset_at(i);
		CHECK(m != NULL);
		CHECK(tpp_model_check(m, NULL, &err) == TPP_OK);
		CHECK(m->desc[0] && m->source[0]);
		CHECK(m->heads * m->head_dim == m->hidden);
		CHECK(tpp_model_preset(m->name) == m);
		for (j = 0; j < i; j++)
			CHECK(strcmp(m->name, tpp_model_preset_at(j)->name));
	}

	/* Exact shapes of a few. */
	m = get("175b");
	CHECK(m->layers == 96 && m->hidden == 12288 && m->heads == 96);
	CHECK(m->kv_heads == 96 && m->head_dim == 128 && m->ffn == 49152);
	CHECK(m->vocab == 50257 && m->seq == 2048 && m->mlp == TPP_MLP_GELU);
	CHECK(m->tied == 1 && m->dropout == 1 && m->global_batch == 1536);
	m = get("1t");
	CHECK(m->layers == 128 && m->hidden == 25600 && m->heads == 160);
	CHECK(m->vocab == 51200 && m->seq == 2048 && m->global_batch == 3072);
	m = get("13b");
	CHECK(m->hidden == 5120 && m->heads == 40 && m->head_dim == 128);
	m = get("22b");
	CHECK(m->layers == 48 && m->hidden == 6144 && m->heads == 64);
	CHECK(m->ffn == 24576 && m->head_dim == 96);
	m = get("530b");
	CHECK(m->layers == 105 && m->hidden == 20480 && m->heads == 128);
	CHECK(m->head_dim == 160 && m->ffn == 81920);
	m = get("llama2-70b");
	CHECK(m->layers == 80 && m->hidden == 8192 && m->heads == 64);
	CHECK(m->kv_heads == 8 && m->ffn == 28672 && m->vocab == 32000);
	CHECK(m->seq == 4096 && m->mlp == TPP_MLP_SWIGLU && !m->tied);
	CHECK(!m->dropout && m->global_batch == 1024);
	m = get("llama2-7b");
	CHECK(m->kv_heads == 32 && m->ffn == 11008);
	m = get("llama2-13b");
	CHECK(m->kv_heads == 40 && m->ffn == 13824);
	m = get("llama3-8b");
	CHECK(m->kv_heads == 8 && m->ffn == 14336 && m->vocab == 128256);
	CHECK(m->seq == 8192);
	m = get("llama3.1-405b");
	CHECK(m->layers == 126 && m->hidden == 16384 && m->heads == 128);
	CHECK(m->kv_heads == 8 && m->ffn == 53248 && m->seq == 8192);
	CHECK(m->global_batch == 2048);
	CHECK_STR_CONTAINS(m->source, "pretraining");
	m = get("sc21-310b");
	CHECK(m->layers == 96 && m->hidden == 16384 && m->heads == 128);
	CHECK(m->global_batch == 2160);
	m = get("6.7b");
	CHECK(m->global_batch == 1024 && m->head_dim == 128);

	/* Aliases. */
	CHECK(tpp_model_preset("gpt3-175b") == get("175b"));
	CHECK(tpp_model_preset("mt-nlg-530b") == get("530b"));

	CHECK(!strcmp(tpp_mlp_names[TPP_MLP_GELU], "gelu"));
	CHECK(!strcmp(tpp_mlp_names[TPP_MLP_SWIGLU], "swiglu"));
}

static void test_params(void)
{
	const struct tpp_model *m;

	/* costmodel.md section 8 "params (C)" column. */
	CHECK_REL(tpp_model_params_total(get("175b")), 174.6e9, 0.003);
	CHECK_REL(tpp_model_params_total(get("llama2-7b")), 6.74e9, 0.005);
	CHECK_REL(tpp_model_params_total(get("llama2-13b")), 13.0e9, 0.005);
	CHECK_REL(tpp_model_params_total(get("llama2-70b")), 69.0e9, 0.005);
	CHECK_REL(tpp_model_params_total(get("llama3-8b")), 8.03e9, 0.005);
	CHECK_REL(tpp_model_params_total(get("llama3-70b")), 70.6e9, 0.005);
	CHECK_REL(tpp_model_params_total(get("llama3.1-405b")), 405.9e9, 0.005);
	CHECK_REL(tpp_model_params_total(get("1t")), 1008e9, 0.003);
	CHECK_REL(tpp_model_params_total(get("sc21-530b")), 529.6e9, 0.003);
	CHECK_REL(tpp_model_params_total(get("530b")), 529.6e9, 0.003);
	CHECK_REL(tpp_model_params_total(get("125m")), 0.125e9, 0.03);
	CHECK_REL(tpp_model_params_total(get("1.3b")), 1.31e9, 0.01);
	CHECK_REL(tpp_model_params_total(get("6.7b")), 6.66e9, 0.005);
	CHECK_REL(tpp_model_params_total(get("13b")), 12.85e9, 0.005);

	/* Exact element counts for the documented convention. */
	m = get("175b");
	/* 12h^2 weights + 13h (biases 9h + f... with f = 4h) */
	CHECK(tpp_model_params_per_layer(m) ==
	      12.0 * 12288 * 12288 + 13.0 * 12288);
	CHECK(tpp_model_params_embedding(m) == 50257.0 * 12288);
	CHECK(tpp_model_params_total(m) == 174604259328.0);
	m = get("llama2-7b");
	CHECK(tpp_model_params_per_layer(m) ==
	      4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2 * 4096);
	CHECK(tpp_model_params_total(m) == 6738415616.0);
	m = get("llama3-8b");
	CHECK(tpp_model_params_total(m) == 8030261248.0);
	m = get("llama3.1-405b");
	CHECK(tpp_model_params_total(m) == 405853388800.0);
}

static void test_load_good(void)
{
	struct tpp_model m;
	struct tpp_err err;
	int rc;

	rc = tpp_model_load(TPP_TEST_DATA "/models/small-dense.yaml", &m, &err);
	if (rc)
		tpp_err_print(stderr, &err);
	CHECK(rc == TPP_OK);
	CHECK(!strcmp(m.name, "small-dense-1b"));
	CHECK_STR_CONTAINS(m.desc, "1.2B");
	CHECK_STR_CONTAINS(m.source, "made up");
	CHECK(m.layers == 16 && m.hidden == 2048 && m.heads == 16);
	CHECK(m.kv_heads == 4 && m.head_dim == 160 && m.ffn == 8192);
	CHECK(m.mlp == TPP_MLP_SWIGLU && m.vocab == 65536 && m.seq == 4096);
	CHECK(m.tied == 1 && m.dropout == 0 && m.global_batch == 256);
	CHECK(m.rope_base == 1e6 && m.rope_scaling == 0);
	/* q_dim 2560, kv_dim 640: attn 13107200, mlp 50331648, norms 4096;
	 * tied embedding 134217728, final norm 2048. */
	CHECK(tpp_model_params_per_layer(&m) == 63442944.0);
	CHECK(tpp_model_params_total(&m) == 1149306880.0);

	rc = tpp_model_load(TPP_TEST_DATA "/models/minimal.yaml", &m, &err);
	if (rc)
		tpp_err_print(stderr, &err);
	CHECK(rc == TPP_OK);
	CHECK(!strcmp(m.name, "minimal") && m.desc[0] == '\0');
	CHECK(m.kv_heads == 8 && m.head_dim == 64 && m.ffn == 2048);
	CHECK(m.mlp == TPP_MLP_GELU && !m.tied && !m.dropout);
	CHECK(m.global_batch == 512);
	CHECK(tpp_model_check(&m, NULL, &err) == TPP_OK);

	CHECK(m.rope_base == 0 && m.rope_scaling == 0);

	/* Presets and aliases through the loader; RoPE base and Llama 3.1
	 * scaling from the HF configs (rope_theta, rope_scaling.factor) */
	CHECK(tpp_model_load("llama3-70b", &m, &err) == TPP_OK);
	CHECK(m.layers == 80 && m.kv_heads == 8);
	CHECK(m.rope_base == 500000 && m.rope_scaling == 0);
	CHECK(tpp_model_load("llama3.1-405b", &m, &err) == TPP_OK);
	CHECK(m.rope_base == 500000 && m.rope_scaling == 8);
	CHECK(tpp_model_load("llama2-7b", &m, &err) == TPP_OK);
	CHECK(m.rope_base == 10000 && m.rope_scaling == 0);
	CHECK(tpp_model_load("175b", &m, &err) == TPP_OK);
	CHECK(m.rope_base == 0 && m.rope_scaling == 0);
	CHECK(tpp_model_load("gpt3-175b", &m, &err) == TPP_OK);
	CHECK(!strcmp(m.name, "175b"));
}

static void test_check(void)
{
	struct tpp_model m = *get("llama3-8b");
	struct tpp_err err;

	m.kv_heads = 5;
	CHECK(tpp_model_check(&m, "x.yaml", &err) == TPP_E_INPUT);
	CHECK(err.status == TPP_E_INPUT && err.line == 0);
	CHECK_STR_CONTAINS(err.msg, "kv_heads = 5 does not divide heads = 32");
	m = *get("llama3-8b");
	m.layers = 0;
	CHECK(tpp_model_check(&m, NULL, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "layers = 0 is out of range");
	m = *get("llama3-8b");
	m.seq = (1 << 22) + 1;
	CHECK(tpp_model_check(&m, NULL, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "seq");
	m = *get("llama3-8b");
	m.name[0] = '\0';
	CHECK(tpp_model_check(&m, NULL, &err) == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "name");
}

static void test_unknown(void)
{
	struct tpp_model m, before;
	struct tpp_err err;

	memset(&m, 0x5a, sizeof(m));
	before = m;
	CHECK(tpp_model_load("llama9-1t", &m, &err) == TPP_E_INPUT);
	CHECK(err.status == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "unknown model 'llama9-1t': not a preset "
				    "(see `tpplan models`) and no such file");
	CHECK(!memcmp(&m, &before, sizeof(m)));
	CHECK(tpp_model_load(TPP_TEST_DATA "/models", &m, &err) ==
	      TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "not a regular file");
	CHECK(!memcmp(&m, &before, sizeof(m)));
}

static int load_model_file(const char *path, struct tpp_err *err,
			   int *untouched)
{
	struct tpp_model m, before;
	int rc;
	memset(&m, 0x33, sizeof(m));
	before = m;
	rc = tpp_model_load(path, &m, err);
	*untouched = !memcmp(&m, &before, sizeof(m));
	return rc;
}

/* Each bad/model-*.yaml: "# expect: LINE:COL: substring" on line 1. */
static void test_bad_files(void)
{
	CHECK(tpp_test_bad_files("model-", load_model_file) >= 8);
}

int main(void)
{
	test_presets();
	test_params();
	test_load_good();
	test_check();
	test_unknown();
	test_bad_files();
	return tpp_test_done("test_model");
}
