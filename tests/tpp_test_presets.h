/*
 * tpp_test_presets.h - fixtures for the cost-model and planner tests: a
 * model preset and a cluster preset resized to a GPU count; a missing
 * preset ends the test run (it is a broken checkout, not a failed check).
 */
#ifndef TPP_TEST_PRESETS_H
#define TPP_TEST_PRESETS_H

#include <stdio.h>
#include <stdlib.h>

#include "cluster.h"
#include "model.h"

static const struct tpp_model *preset(const char *name)
{
	const struct tpp_model *m = tpp_model_preset(name);
	if (!m) {
		fprintf(stderr, "model preset '%s' missing\n", name);
		exit(1);
	}
	return m;
}

static void load_cluster(const char *name, int gpus, struct tpp_cluster *c)
{
	struct tpp_err err;
	if (tpp_cluster_load(name, NULL, c, &err)) {
		tpp_err_print(stderr, &err);
		exit(1);
	}
	tpp_cluster_resize(c, gpus);
}

#endif
