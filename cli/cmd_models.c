/*
 * cmd_models.c - `tpplan models`: the built-in model presets.
 */
#include <string.h>

#include "cli.h"

int tpp_cmd_models(int argc, char **argv)
{
	int i;
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: tpplan models\n\nLists the built-in model presets; any of their names works with --model.\n");
		return TPP_OK;
	}
	if (argc > 1) {
		fprintf(stderr, "tpplan models: unexpected argument '%s'\n", argv[1]);
		return TPP_E_USAGE;
	}
	printf("%-15s %6s %6s %6s %4s %6s %-6s %7s %6s %5s %9s  %s\n", "name", "layers",
	       "hidden", "heads", "kv", "ffn", "mlp", "vocab", "seq", "gbs",
	       "params", "description");
	for (i = 0; i < tpp_model_preset_count(); i++) {
		const struct tpp_model *m = tpp_model_preset_at(i);
		printf("%-15s %6d %6d %6d %4d %6d %-6s %7d %6d %5d %8.2fB  %s\n", m->name,
		       m->layers, m->hidden, m->heads, m->kv_heads, m->ffn,
		       tpp_mlp_names[m->mlp], m->vocab, m->seq, m->global_batch,
		       tpp_model_params_total(m) / 1e9, m->desc);
	}
	return TPP_OK;
}
