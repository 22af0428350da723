/*
 * test_cluster.c - cluster descriptions: every preset under topologies/
 * loads with the right SI figures, group-to-tier mapping, resize, name
 * tables, preset resolution, and every tests/data/bad/cluster-*.yaml fails
 * with the status, location and message its first line promises
 * ("# expect: LINE:COL: substring").
 */
#define _XOPEN_SOURCE 700

#include <math.h>
#include "tpp_test.h"
#include "tpp_test_bad.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>

#include "cluster.h"

static int load(const char *name, struct tpp_cluster *c)
{
	struct tpp_err err;
	int rc = tpp_cluster_load(name, NULL, c, &err);
	if (rc)
		tpp_err_print(stderr, &err);
	return rc;
}

/* Every preset loads and is internally sane. */
static void test_presets_load(void)
{
	static const char *const presets[] = {
		"dgx-a100", "dgx-a100-40gb", "dgx", "dgx-h100", "dgx-h200", "dgx-b200",
		"dgx-b300", "gb200-nvl72", "mi300x", "l40s-ethernet",
	};
	size_t i;
	for (i = 0; i < TPP_ARRAY_LEN(presets); i++) {
		struct tpp_cluster c;
		int t, p;
		memset(&c, 0, sizeof(c));
		CHECK(load(presets[i], &c) == TPP_OK);
		CHECK(!strcmp(c.name, presets[i]));
		CHECK(c.ntiers >= 2);
		CHECK(c.source[0] != '\0');
		CHECK(strstr(c.path, presets[i]) != NULL);
		CHECK(c.gpu.peak_flops[TPP_PREC_BF16] > 0);
		CHECK(c.gpu.hbm_bytes > 0 && c.gpu.hbm_Bps > 0);
		for (p = 0; p < TPP_PREC__COUNT; p++) {
			CHECK(c.gpu.gemm_flops[p] <= c.gpu.peak_flops[p]);
			CHECK((c.gpu.gemm_flops[p] > 0) ==
			      (c.gpu.gemm_src[p] == TPP_SRC_PUBLISHED));
		}
		for (t = 0; t < c.ntiers; t++) {
			const struct tpp_tier *tr = &c.tiers[t];
			int k;
			CHECK(tr->bw_Bps > 0);
			CHECK(tr->latency_s > 0 && tr->latency_s < 1e-4);
			CHECK(t == c.ntiers - 1 || tr->span_gpus > 0);
			for (k = 0; k < TPP_COLL__COUNT; k++)
				CHECK((tr->busbw_Bps[k] > 0) ==
				      (tr->busbw_src[k] == TPP_SRC_PUBLISHED));
		}
		/* Scale-out is the outermost tier in every preset. */
		CHECK(c.tiers[c.ntiers - 1].span_gpus == 0);
		/* the presets whose NIC figures the reference leaves blank or
		 * tags [M] say so (the output labels them UNVERIFIED, not
		 * datasheet); every other tier is sourced */
		for (t = 0; t < c.ntiers; t++)
			CHECK(!c.tiers[t].unverified[0] ==
			      !(t == c.ntiers - 1 && (!strcmp(presets[i], "dgx-b200") ||
						      !strcmp(presets[i], "gb200-nvl72") ||
						      !strcmp(presets[i], "mi300x") ||
						      !strcmp(presets[i], "l40s-ethernet"))));
	}
}

static void test_dgx_a100(void)
{
	struct tpp_cluster c;
	const struct tpp_tier *nv, *ib;
	CHECK(load("dgx-a100", &c) == TPP_OK);
	CHECK(c.gpus_per_node == 8 && c.nodes == 560);
	CHECK(tpp_cluster_gpus(&c) == 4480);
	CHECK_REL(c.gpu.peak_flops[TPP_PREC_BF16], 312e12, 1e-12);
	CHECK_REL(c.gpu.peak_flops[TPP_PREC_FP16], 312e12, 1e-12);
	CHECK_REL(c.gpu.peak_flops[TPP_PREC_TF32], 156e12, 1e-12);
	CHECK(c.gpu.peak_flops[TPP_PREC_FP8] == 0);
	/* the sustained rate (MSMF) and the shape it was measured at */
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_BF16], 258e12, 1e-12);
	CHECK(c.gpu.gemm_shape[TPP_PREC_BF16][0] == 2304 && c.gpu.gemm_shape[TPP_PREC_BF16][1] == 1536 &&
	      c.gpu.gemm_shape[TPP_PREC_BF16][2] == 6144);
	CHECK(c.gpu.gemm_shape[TPP_PREC_FP16][2] == 6144 && c.gpu.gemm_shape[TPP_PREC_FP8][0] == 0);
	CHECK(c.gpu.gemm_src[TPP_PREC_BF16] == TPP_SRC_PUBLISHED);
	CHECK(c.gpu.gemm_src[TPP_PREC_FP8] == TPP_SRC_NONE);
	CHECK_STR_CONTAINS(c.gpu.gemm_source, "MSMF");
	CHECK_REL(c.gpu.hbm_bytes, 85.899e9, 1e-12); /* 80 GiB */
	CHECK_REL(c.gpu.hbm_Bps, 2.039e12, 1e-12);
	CHECK(c.gpu.sm_count == 108);
	CHECK(c.ntiers == 2);
	nv = &c.tiers[0];
	/* measured busbw curve: exact at its points, log busbw linear in
	 * log size between, clamped at its ends */
	CHECK(nv->curve_n[TPP_COLL_ALL_REDUCE] == 7);
	CHECK_REL(tpp_tier_busbw_at(nv, TPP_COLL_ALL_REDUCE, 67108864.0), 171.5e9, 1e-12);
	CHECK_REL(tpp_tier_busbw_at(nv, TPP_COLL_ALL_REDUCE, 67108864.0 * 2),
		  171.5e9 * pow(222.7 / 171.5, 1.0 / 3), 1e-12);
	/* the time S / busbw(S) never falls as S grows (1 MiB .. 8 MiB is
	 * where linear interpolation made 2 MiB cheaper than 1 MiB) */
	{
		double prev = 0, S;
		for (S = 16384; S < 4e10; S *= 1.19) {
			double tS = S / tpp_tier_busbw_at(nv, TPP_COLL_ALL_REDUCE, S);
			CHECK(tS >= prev);
			prev = tS;
		}
	}
	CHECK_REL(tpp_tier_busbw_at(nv, TPP_COLL_ALL_REDUCE, 1.0), 1.3e9, 1e-12);
	CHECK_REL(tpp_tier_busbw_at(nv, TPP_COLL_ALL_REDUCE, 1e12), 234.9e9, 1e-12);
	CHECK(tpp_tier_busbw_at(nv, TPP_COLL_ALL_GATHER, 1e9) == 0);
	ib = &c.tiers[1];
	CHECK(nv->kind == TPP_TIER_NVLINK && nv->span_gpus == 8);
	CHECK_REL(nv->bw_Bps, 300e9, 1e-12);
	CHECK_REL(nv->latency_s, 1.9e-6, 1e-12);
	CHECK_REL(nv->busbw_Bps[TPP_COLL_ALL_REDUCE], 234.9e9, 1e-12);
	CHECK(nv->busbw_src[TPP_COLL_ALL_REDUCE] == TPP_SRC_PUBLISHED);
	CHECK(nv->busbw_Bps[TPP_COLL_ALL_GATHER] == 0);
	CHECK(nv->busbw_src[TPP_COLL_ALL_GATHER] == TPP_SRC_NONE);
	CHECK(!nv->nvls && !nv->mesh && !nv->sharp);
	CHECK(ib->kind == TPP_TIER_INFINIBAND && ib->span_gpus == 0);
	CHECK(ib->nics_per_node == 8);
	CHECK_REL(ib->nic_bps, 200e9, 1e-12);
	/* 8 NICs * 200 Gb/s / 8 bit / 8 GPUs = 25 GB/s per GPU */
	CHECK_REL(ib->bw_Bps, 25e9, 1e-12);
	CHECK_REL(ib->latency_s, 4e-6, 1e-12);
	CHECK_REL(ib->busbw_Bps[TPP_COLL_ALL_REDUCE], 24e9, 1e-12);
	CHECK_STR_CONTAINS(ib->measured_source, "192");
	CHECK(c.calibration[0] == '\0');
}

static void test_other_presets(void)
{
	struct tpp_cluster c;

	CHECK(load("dgx", &c) == TPP_OK);
	CHECK(c.nodes == 128 && tpp_cluster_gpus(&c) == 1024);
	CHECK_REL(c.tiers[0].bw_Bps, 300e9, 1e-12);
	CHECK_REL(c.tiers[1].bw_Bps, 25e9, 1e-12);

	CHECK(load("dgx-h100", &c) == TPP_OK);
	CHECK_REL(c.gpu.peak_flops[TPP_PREC_FP8], 1979e12, 1e-12);
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_BF16], 755e12, 1e-12);
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_FP8], 1354e12, 1e-12);
	CHECK_REL(c.tiers[0].bw_Bps, 450e9, 1e-12);
	CHECK(c.tiers[0].nvls);
	CHECK_REL(c.tiers[0].busbw_Bps[TPP_COLL_ALL_REDUCE], 480e9, 1e-12);
	CHECK_REL(c.tiers[1].bw_Bps, 50e9, 1e-12); /* 8 * 400 / 8 / 8 */

	CHECK(load("dgx-h200", &c) == TPP_OK);
	CHECK_REL(c.gpu.hbm_bytes, 150.755e9, 1e-12); /* 143771 MiB */
	CHECK_REL(c.gpu.hbm_Bps, 4.8e12, 1e-12);
	CHECK_REL(c.tiers[0].busbw_Bps[TPP_COLL_ALL_REDUCE], 482.3e9, 1e-12);

	CHECK(load("dgx-b200", &c) == TPP_OK);
	CHECK_REL(c.gpu.peak_flops[TPP_PREC_BF16], 2250e12, 1e-12);
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_BF16], 1439e12, 1e-12);
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_FP8], 2788e12, 1e-12);
	CHECK(c.gpu.gemm_shape[TPP_PREC_FP8][2] == 6144);
	CHECK_REL(c.tiers[0].bw_Bps, 900e9, 1e-12);

	/* dgx-b300 (calibration.md s6; ml-engineering @0359db89): sustained
	 * (MSMF) GEMM figures, no shape; 8 x B200's NVLink5 busbw (the same
	 * fabric), none on the network; 8 x XDR 800 Gb/s per node = 100 GB/s
	 * per GPU */
	CHECK(load("dgx-b300", &c) == TPP_OK);
	CHECK_REL(c.gpu.peak_flops[TPP_PREC_FP8], 4500e12, 1e-12);
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_BF16], 1519e12, 1e-12);
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_FP8], 2969e12, 1e-12);
	CHECK(c.gpu.gemm_burst_flops[TPP_PREC_BF16] == 0);
	CHECK(c.gpu.gemm_shape[TPP_PREC_BF16][0] == 0);
	CHECK_REL(c.gpu.hbm_bytes, 288e9, 1e-12);
	CHECK(c.tiers[0].nvls && c.tiers[0].nvls_gpus == 8);
	CHECK_REL(c.tiers[0].busbw_Bps[TPP_COLL_ALL_REDUCE], 838.0e9, 1e-12);
	CHECK_REL(c.tiers[0].busbw_Bps[TPP_COLL_REDUCE_SCATTER], 682.2e9, 1e-12);
	CHECK(c.tiers[1].busbw_Bps[TPP_COLL_ALL_REDUCE] <= 0);
	CHECK_REL(c.tiers[1].bw_Bps, 100e9, 1e-12);
	CHECK(c.tiers[1].kind == TPP_TIER_INFINIBAND && !c.tiers[1].unverified[0]);

	/* dgx-a100-40gb: the DGX A100 node with the 40GB part, which
	 * differs only in its memory (calibration.md s6) */
	{
		struct tpp_cluster a80;
		int t, k;
		CHECK(load("dgx-a100", &a80) == TPP_OK);
		CHECK(load("dgx-a100-40gb", &c) == TPP_OK);
		CHECK_REL(c.gpu.hbm_bytes, 42.950e9, 1e-12); /* 40 GiB */
		CHECK_REL(c.gpu.hbm_Bps, 1.555e12, 1e-12);
		CHECK(c.nodes == 128 && c.gpus_per_node == a80.gpus_per_node);
		CHECK(c.gpu.sm_count == a80.gpu.sm_count);
		for (k = 0; k < TPP_PREC__COUNT; k++) {
			CHECK(c.gpu.peak_flops[k] == a80.gpu.peak_flops[k]);
			CHECK(c.gpu.gemm_flops[k] == a80.gpu.gemm_flops[k]);
		}
		CHECK(c.ntiers == a80.ntiers);
		for (t = 0; t < c.ntiers && t < a80.ntiers; t++) {
			CHECK(c.tiers[t].kind == a80.tiers[t].kind);
			CHECK(c.tiers[t].span_gpus == a80.tiers[t].span_gpus);
			CHECK(c.tiers[t].bw_Bps == a80.tiers[t].bw_Bps);
			CHECK(c.tiers[t].latency_s == a80.tiers[t].latency_s);
			for (k = 0; k < TPP_COLL__COUNT; k++)
				CHECK(c.tiers[t].busbw_Bps[k] == a80.tiers[t].busbw_Bps[k]);
		}
	}

	CHECK(load("gb200-nvl72", &c) == TPP_OK);
	CHECK(c.gpus_per_node == 4);
	CHECK(c.tiers[0].kind == TPP_TIER_NVL_DOMAIN);
	CHECK(c.tiers[0].span_gpus == 72);
	CHECK_REL(c.tiers[1].bw_Bps, 50e9, 1e-12); /* 4 * 400 / 8 / 4 */

	CHECK(load("gb200-nvl72", &c) == TPP_OK);
	CHECK_REL(c.gpu.hbm_bytes, 198.677e9, 1e-12); /* 189471 MiB */
	/* gemm_rate: burst: the MAMF figures as published, priced at
	 * TPP_SUSTAINED_OF_BURST of them (1563 / 3102 TFLOPS) */
	CHECK_REL(c.gpu.gemm_burst_flops[TPP_PREC_BF16], 1822.0e12, 1e-12);
	CHECK_REL(c.gpu.gemm_burst_flops[TPP_PREC_FP8], 3615.6e12, 1e-12);
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_BF16], 0.858 * 1822.0e12, 1e-12);
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_FP8], 0.858 * 3615.6e12, 1e-12);
	/* the other presets state sustained rates: used as they are */
	CHECK(load("dgx-b200", &c) == TPP_OK);
	CHECK(c.gpu.gemm_burst_flops[TPP_PREC_BF16] == 0 &&
	      c.gpu.gemm_burst_flops[TPP_PREC_FP8] == 0);
	CHECK(load("mi300x", &c) == TPP_OK);
	CHECK_REL(c.gpu.hbm_bytes, 205.823e9, 1e-12); /* 192 GiB */
	CHECK(c.tiers[0].kind == TPP_TIER_XGMI && c.tiers[0].mesh);
	CHECK_REL(c.tiers[0].bw_Bps, 448e9, 1e-12);
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_BF16], 659e12, 1e-12);
	CHECK_REL(c.tiers[0].busbw_Bps[TPP_COLL_ALL_REDUCE], 312.9e9, 1e-12);

	CHECK(load("l40s-ethernet", &c) == TPP_OK);
	CHECK(c.tiers[0].kind == TPP_TIER_PCIE);
	CHECK_REL(c.tiers[0].latency_s, 2.5e-6, 1e-12);
	CHECK(c.tiers[1].kind == TPP_TIER_ROCE);
	CHECK_REL(c.tiers[1].bw_Bps, 12.5e9, 1e-12); /* 4 * 200 / 8 / 8 */
	CHECK(c.gpu.gemm_flops[TPP_PREC_BF16] == 0);
	CHECK_REL(c.gpu.hbm_bytes, 47.577e9, 1e-12); /* device query, ECC on */
	CHECK(c.gpu.sm_count == 142);
}

static void test_tier_for(void)
{
	struct tpp_cluster c;

	CHECK(load("dgx-a100", &c) == TPP_OK);
	CHECK(tpp_cluster_tier_for(&c, 1, 1) == 0);
	CHECK(tpp_cluster_tier_for(&c, 0, 8) == 0);
	CHECK(tpp_cluster_tier_for(&c, 8, 1) == 0);  /* TP8 */
	CHECK(tpp_cluster_tier_for(&c, 4, 2) == 0);  /* 0,2,4,6 */
	CHECK(tpp_cluster_tier_for(&c, 9, 1) == 1);
	CHECK(tpp_cluster_tier_for(&c, 2, 8) == 1);  /* DP across 2 nodes */
	CHECK(tpp_cluster_tier_for(&c, 16, 8) == 1); /* DP16 with TP8 */
	CHECK(tpp_cluster_tier_for(&c, 4480, 1) == 1);
	/* groups that do not tile the 8-GPU node: some instance straddles
	 * two nodes (TP=3: GPUs 6, 7, 8; DP=2 at stride 3: GPUs 6, 9) */
	CHECK(tpp_cluster_tier_for(&c, 3, 1) == 1);
	CHECK(tpp_cluster_tier_for(&c, 2, 3) == 1);
	CHECK(tpp_cluster_tier_for(&c, 6, 1) == 1);
	CHECK(tpp_cluster_tier_for(&c, 2, 2) == 0);  /* blocks of 4 */
	/* pipeline chain of 4 stages 4 GPUs apart: stage 1 -> 2 leaves the node */
	CHECK(tpp_cluster_tier_for(&c, 4, 4) == 1);
	CHECK(tpp_cluster_tier_for(&c, 2, 4) == 0);
	/* a cluster inside one node holds every group there */
	tpp_cluster_resize(&c, 6);
	CHECK(tpp_cluster_tier_for(&c, 3, 1) == 0);

	CHECK(load("gb200-nvl72", &c) == TPP_OK);
	CHECK(tpp_cluster_tier_for(&c, 4, 1) == 0);
	/* 64-GPU groups: the second one (GPUs 64..127) straddles two racks */
	CHECK(tpp_cluster_tier_for(&c, 64, 1) == 1);
	CHECK(tpp_cluster_tier_for(&c, 36, 1) == 0);  /* two per rack */
	CHECK(tpp_cluster_tier_for(&c, 72, 1) == 0);
	CHECK(tpp_cluster_tier_for(&c, 73, 1) == 1);
	CHECK(tpp_cluster_tier_for(&c, 18, 4) == 0);  /* 0..68 */
	CHECK(tpp_cluster_tier_for(&c, 19, 4) == 1);  /* reaches 72 */
	CHECK(tpp_cluster_tier_for(&c, 2, 72) == 1);  /* across racks */

	/* Three tiers: spans 8, 64, whole cluster. */
	c.ntiers = 3;
	c.tiers[2] = c.tiers[1];
	c.tiers[0].span_gpus = 8;
	c.tiers[1].span_gpus = 64;
	c.tiers[2].span_gpus = 0;
	CHECK(tpp_cluster_tier_for(&c, 8, 1) == 0);
	CHECK(tpp_cluster_tier_for(&c, 8, 8) == 1);   /* last member 56 */
	CHECK(tpp_cluster_tier_for(&c, 9, 8) == 2);   /* last member 64 */
	CHECK(tpp_cluster_tier_for(&c, 64, 1) == 1);
	CHECK(tpp_cluster_tier_for(&c, 65, 1) == 2);
	/* An explicit outermost span smaller than the group: still outermost. */
	c.tiers[2].span_gpus = 512;
	CHECK(tpp_cluster_tier_for(&c, 1000, 1) == 2);
}

static void test_resize(void)
{
	struct tpp_cluster c;
	CHECK(load("dgx", &c) == TPP_OK);
	tpp_cluster_resize(&c, 64);
	CHECK(c.nodes == 8 && tpp_cluster_gpus(&c) == 64);
	tpp_cluster_resize(&c, 65);
	CHECK(c.nodes == 9);
	tpp_cluster_resize(&c, 1);
	CHECK(c.nodes == 1);
	tpp_cluster_resize(&c, 3000);
	CHECK(c.nodes == 375 && tpp_cluster_gpus(&c) == 3000);
	CHECK(load("gb200-nvl72", &c) == TPP_OK);
	tpp_cluster_resize(&c, 72);
	CHECK(c.nodes == 18);
	tpp_cluster_resize(&c, 74);
	CHECK(c.nodes == 19);
}

static void test_names(void)
{
	int i;
	CHECK(tpp_prec_parse("fp32") == TPP_PREC_FP32);
	CHECK(tpp_prec_parse("tf32") == TPP_PREC_TF32);
	CHECK(tpp_prec_parse("fp16") == TPP_PREC_FP16);
	CHECK(tpp_prec_parse("bf16") == TPP_PREC_BF16);
	CHECK(tpp_prec_parse("BF16") == TPP_PREC_BF16);
	CHECK(tpp_prec_parse("fp8") == TPP_PREC_FP8);
	CHECK(tpp_prec_parse("fp64") == -1);
	CHECK(tpp_prec_parse("") == -1);
	CHECK(tpp_prec_parse(NULL) == -1);
	for (i = 0; i < TPP_PREC__COUNT; i++)
		CHECK(tpp_prec_parse(tpp_prec_names[i]) == i);
	CHECK(!strcmp(tpp_src_names[TPP_SRC_NONE], "none"));
	CHECK(!strcmp(tpp_src_names[TPP_SRC_DATASHEET], "datasheet"));
	CHECK(!strcmp(tpp_src_names[TPP_SRC_PUBLISHED], "published"));
	CHECK(!strcmp(tpp_src_names[TPP_SRC_CALIBRATION], "calibration"));
	CHECK(!strcmp(tpp_tier_kind_names[TPP_TIER_NVLINK], "nvlink"));
	CHECK(!strcmp(tpp_tier_kind_names[TPP_TIER_XGMI], "xgmi"));
	CHECK(!strcmp(tpp_tier_kind_names[TPP_TIER_PCIE], "pcie"));
	CHECK(!strcmp(tpp_tier_kind_names[TPP_TIER_NVL_DOMAIN], "nvl-domain"));
	CHECK(!strcmp(tpp_tier_kind_names[TPP_TIER_INFINIBAND], "infiniband"));
	CHECK(!strcmp(tpp_tier_kind_names[TPP_TIER_ROCE], "roce"));
	CHECK(!strcmp(tpp_tier_kind_names[TPP_TIER_ETHERNET], "ethernet"));
	CHECK(!strcmp(tpp_coll_names[TPP_COLL_ALL_REDUCE], "all_reduce"));
	CHECK(!strcmp(tpp_coll_names[TPP_COLL_ALL_GATHER], "all_gather"));
	CHECK(!strcmp(tpp_coll_names[TPP_COLL_REDUCE_SCATTER], "reduce_scatter"));
	CHECK(!strcmp(tpp_coll_names[TPP_COLL_ALL_TO_ALL], "all_to_all"));
	CHECK(!strcmp(tpp_coll_names[TPP_COLL_SEND_RECV], "send_recv"));
}

static void test_resolve(void)
{
	char path[512];
	struct tpp_err err;
	struct tpp_cluster c;

	CHECK(tpp_cluster_resolve("dgx-a100", NULL, path, sizeof(path), &err) ==
	      TPP_OK);
	CHECK_STR_CONTAINS(path, "dgx-a100.yaml");
	CHECK(tpp_cluster_resolve("dgx-a100.yaml", TPP_TOPODIR, path,
				  sizeof(path), &err) == TPP_OK);
	CHECK_STR_CONTAINS(path, "/dgx-a100.yaml");
	/* A path as given wins. */
	CHECK(tpp_cluster_resolve(TPP_TOPODIR "/mi300x.yaml", "/nonexistent",
				  path, sizeof(path), &err) == TPP_OK);
	CHECK(!strcmp(path, TPP_TOPODIR "/mi300x.yaml"));
	/* A preset looked up in an explicit directory only. */
	CHECK(tpp_cluster_resolve("dgx-h100", "/nonexistent", path,
				  sizeof(path), &err) == TPP_E_INPUT);
	CHECK(tpp_cluster_resolve("dgx-h100", TPP_TOPODIR, path, sizeof(path),
				  &err) == TPP_OK);
	/* Too small a buffer is an error, not a truncated path. */
	CHECK(tpp_cluster_resolve("dgx-h100", TPP_TOPODIR, path, 8, &err) ==
	      TPP_E_INPUT);

	memset(&c, 0x5a, sizeof(c));
	CHECK(tpp_cluster_load("no-such-cluster", NULL, &c, &err) ==
	      TPP_E_INPUT);
	CHECK(err.status == TPP_E_INPUT);
	CHECK_STR_CONTAINS(err.msg, "cluster 'no-such-cluster' not found");
	CHECK_STR_CONTAINS(err.msg, "tried: no-such-cluster, ");
	CHECK_STR_CONTAINS(err.msg, TPP_TOPODIR "/no-such-cluster.yaml");
	CHECK_STR_CONTAINS(err.msg, "./topologies/no-such-cluster.yaml");
	CHECK(((unsigned char *)&c)[0] == 0x5a); /* *out untouched */

	CHECK(tpp_cluster_resolve("", NULL, path, sizeof(path), &err) ==
	      TPP_E_INPUT);
	CHECK(tpp_cluster_resolve(NULL, NULL, path, sizeof(path), &err) ==
	      TPP_E_INPUT);
	/* A directory is not a cluster file. */
	CHECK(tpp_cluster_resolve(TPP_TOPODIR, NULL, path, sizeof(path),
				  &err) == TPP_E_INPUT);
}

/* A file written on the fly: calibration path resolution and a
 * three-tier cluster with every optional key. */
static void test_full_schema(void)
{
	char dir[] = "/tmp/tpp_test_cluster_XXXXXX";
	char file[256], want[PATH_MAX + 32], real[PATH_MAX];
	struct tpp_cluster c;
	struct tpp_err err;
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(file, sizeof(file), "%s/three.yaml", dir);
	f = fopen(file, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs("schema: tpplan.cluster/v1\n"
	      "name: three\n"
	      "description: \"test\"\n"
	      "sources: [\"a\", \"b\"]\n"
	      "gpu:\n"
	      "  name: G\n"
	      "  peak_tflops: {fp32: 20, tf32: 150, fp16: 300, bf16: 310, fp8: 600}\n"
	      "  hbm_gb: 96\n"
	      "  hbm_tbps: 3.5\n"
	      "  sm_count: 100\n"
	      "  measured: {gemm_tflops: {fp8: 500}, source: \"bench\\e[1m\\n\"}\n"
	      "gpus_per_node: 4\n"
	      "nodes: 36\n"
	      "calibration: cal/x.yaml\n"
	      "tiers:\n"
	      "  - {name: nv, kind: nvlink, span_gpus: 4, bw_GBps: 100, latency_us: 1,\n"
	      "     features: [nvls]}\n"
	      "  - {name: dom, kind: nvl-domain, span_gpus: 72, bw_GBps: 90, latency_us: 2}\n"
	      "  - name: eth\n"
	      "    kind: ethernet\n"
	      "    bw_GBps: 10\n"
	      "    nics_per_node: 2\n"
	      "    nic_gbps: 100\n"
	      "    latency_us: 0\n"
	      "    unverified: \"two NICs assumed\"\n"
	      "    features: [sharp]\n"
	      "    measured:\n"
	      "      busbw_GBps: {all_to_all: 5, send_recv: 9.5}\n"
	      "      source: |\n"
	      "        here\tthere\n"
	      "        and on\n",
	      f);
	fclose(f);
	CHECK(tpp_cluster_load(file, NULL, &c, &err) == TPP_OK);
	CHECK(!strcmp(c.source, "a; b"));
	/* citations printed on one line: line breaks and tabs as spaces,
	 * trailing ones dropped, an escape sequence shown, not acting */
	CHECK(!strcmp(c.gpu.gemm_source, "bench?[1m"));
	CHECK(!strcmp(c.tiers[2].measured_source, "here there and on"));
	CHECK(!strcmp(c.tiers[2].unverified, "two NICs assumed"));
	CHECK(!c.tiers[0].unverified[0]);
	/* relative to the YAML file's directory, made absolute */
	CHECK(realpath(dir, real) != NULL);
	snprintf(want, sizeof(want), "%s/cal/x.yaml", real);
	CHECK(!strcmp(c.calibration, want));
	CHECK_REL(c.gpu.peak_flops[TPP_PREC_FP32], 20e12, 1e-12);
	CHECK_REL(c.gpu.gemm_flops[TPP_PREC_FP8], 500e12, 1e-12);
	CHECK(c.gpu.gemm_flops[TPP_PREC_BF16] == 0);
	CHECK(c.ntiers == 3 && c.tiers[0].nvls && c.tiers[2].sharp);
	CHECK_REL(c.tiers[2].bw_Bps, 10e9, 1e-12); /* given bw wins */
	CHECK(c.tiers[2].latency_s == 0);
	CHECK_REL(c.tiers[2].busbw_Bps[TPP_COLL_SEND_RECV], 9.5e9, 1e-12);
	CHECK(c.tiers[2].busbw_src[TPP_COLL_ALL_TO_ALL] == TPP_SRC_PUBLISHED);
	CHECK(c.tiers[2].busbw_src[TPP_COLL_ALL_REDUCE] == TPP_SRC_NONE);
	CHECK(tpp_cluster_tier_for(&c, 4, 1) == 0);
	CHECK(tpp_cluster_tier_for(&c, 18, 4) == 1);
	CHECK(tpp_cluster_tier_for(&c, 2, 72) == 2);
	remove(file);
	remove(dir);
}


static int load_cluster_file(const char *path, struct tpp_err *err,
			     int *untouched)
{
	static struct tpp_cluster c, before;
	int rc;
	memset(&c, 0x5a, sizeof(c));
	before = c;
	rc = tpp_cluster_load(path, NULL, &c, err);
	*untouched = !memcmp(&c, &before, sizeof(c));
	return rc;
}

static void test_bad_files(void)
{
	CHECK(tpp_test_bad_files("cluster-", load_cluster_file) >= 12);
}

int main(void)
{
	test_presets_load();
	test_dgx_a100();
	test_other_presets();
	test_tier_for();
	test_resize();
	test_names();
	test_resolve();
	test_full_schema();
	test_bad_files();
	return tpp_test_done("test_cluster");
}
