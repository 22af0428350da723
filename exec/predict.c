/*
 * predict.c - the cost model's figures for the phases `tpplan exec`
 * measures: GEMMs with tpp_gemm_time, collectives and transfers with
 * tpp_coll_time (fp32 on the wire, as exec sends them), whole layer and
 * step from tpp_cost_eval of the executed model (its shape, layers and
 * layout; optimizer excluded since exec runs none).  Pure: no MPI.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_impl.h"

void tpp_exec_predict(const struct tpp_exec_opts *o, const struct tpp_cluster *c,
		      const struct tpp_exec_result *r,
		      double pred[TPP_PH__COUNT], char *note, size_t note_size)
{
	const struct tpp_exec_shape *s = &o->shape;
	struct tpp_cluster *cc = malloc(sizeof(*cc));
	const struct tpp_gpu *g;
	enum tpp_prec p = o->prec;
	double T = (double)s->mbs * s->seq, h = s->hidden, f = s->ffn;
	double hl = h / o->tp, fl = f / o->tp, S = s->seq, d = h / s->heads;
	double al = (double)s->heads / o->tp, Tl = o->sp ? T / o->tp : T;
	double act_bytes = T * h * 4, w_bytes;
	int i, nl_max = 0, have;
	double fw[4][3];
	for (i = 0; i < TPP_PH__COUNT; i++)
		pred[i] = -1;
	if (note_size)
		note[0] = '\0';
	if (!cc)
		return;
	memcpy(cc, c, sizeof(*cc));
	tpp_cluster_resize(cc, o->tp * o->pp * o->dp);
	/* a cpu calibration measures fp32 GEMMs that a GPU datasheet has no
	 * peak for: the measured rate stands in for it (no MFU is reported) */
	if (cc->gpu.peak_flops[p] <= 0)
		cc->gpu.peak_flops[p] = cc->gpu.gemm_flops[p];
	g = &cc->gpu;
	c = cc;
	have = g->peak_flops[p] > 0;
	for (i = 0; i < o->pp; i++) {
		int n = tpp_chunk_layers(o->layers, o->pp, i);
		nl_max = n > nl_max ? n : nl_max;
	}
	w_bytes = 4.0 * nl_max * (h * 3 * hl + hl * h + h * fl + fl * h);
	fw[0][0] = T; fw[0][1] = 3 * hl; fw[0][2] = h;
	fw[1][0] = T; fw[1][1] = h; fw[1][2] = hl;
	fw[2][0] = T; fw[2][1] = fl; fw[2][2] = h;
	fw[3][0] = T; fw[3][1] = h; fw[3][2] = fl;

	if (have) {
		double bwd = 0;
		for (i = 0; i < 4; i++) {
			pred[TPP_PH_GEMM_QKV + i] = r->count[TPP_PH_GEMM_QKV + i] *
				tpp_gemm_time(g, p, fw[i][0], fw[i][1], fw[i][2]);
			bwd += tpp_gemm_time(g, p, fw[i][0], fw[i][2], fw[i][1]) +
			       tpp_gemm_time(g, p, fw[i][2], fw[i][1], fw[i][0]);
		}
		pred[TPP_PH_GEMM_BWD] = r->count[TPP_PH_LAYER_BWD] * bwd;
		/* per head: the two GEMMs (four backward) and the softmax
		 * exec runs between them on the s x s fp32 scores in place,
		 * memory-bound: read and write them forward, read the scores and
		 * their gradient and write it backward (exec/run.c) */
		pred[TPP_PH_ATTN_FWD] = r->count[TPP_PH_LAYER_FWD] * s->mbs * al *
			(tpp_gemm_time(g, p, S, S, d) + tpp_gemm_time(g, p, S, d, S) +
			 tpp_hbm_time(g, 2.0 * S * S * sizeof(float)));
		pred[TPP_PH_ATTN_BWD] = r->count[TPP_PH_LAYER_BWD] * s->mbs * al *
			(tpp_gemm_time(g, p, S, S, d) + 3 * tpp_gemm_time(g, p, S, d, S) +
			 tpp_hbm_time(g, 3.0 * S * S * sizeof(float)));
		/* shapes the calibration's GEMM table does not span are
		 * extrapolated from its nearest shapes: say which */
		{
			int out_lin = 0, out_attn;
			for (i = 0; i < 4; i++)
				out_lin |= !tpp_gemm_table_spans(g, p, fw[i][0], fw[i][1], fw[i][2]) ||
					   !tpp_gemm_table_spans(g, p, fw[i][0], fw[i][2], fw[i][1]) ||
					   !tpp_gemm_table_spans(g, p, fw[i][2], fw[i][1], fw[i][0]);
			out_attn = !tpp_gemm_table_spans(g, p, S, S, d) ||
				   !tpp_gemm_table_spans(g, p, S, d, S);
			if (out_lin || out_attn) {
				char attn[128] = "";
				if (out_attn)
					snprintf(attn, sizeof(attn),
						 "the attention core's GEMMs (%g x %g x %g and %g x %g x %g)",
						 S, S, d, S, d, S);
				/* how far past the largest measured shape: a
				 * small shape's rate (launch-bound) priced on a
				 * large one is no prediction */
				double wmax = tpp_gemm_table_max_work(g, p), wx = S * S * d, far;
				for (i = 0; i < 4; i++)
					wx = fmax(wx, fw[i][0] * fw[i][1] * fw[i][2]);
				far = wmax > 0 ? wx / wmax : 0;
				snprintf(note, note_size,
					 "%s%s%s lie outside the calibration's GEMM shapes, so their predictions are extrapolated from the nearest measured shapes",
					 out_lin ? "the linear layers' GEMMs" : "",
					 out_lin && out_attn ? " and " : "", attn);
				if (far > 64)
					tpp_appendf(note, note_size,
						    "; the largest is %.3g times the work (M*N*K) of the largest measured, priced at that shape's rate: not a prediction to trust (calibrate --gemm-shapes with shapes this size)",
						    far);
			}
		}
	} else if (c->calibration[0]) {
		/* a calibration is in use: it was measured without this
		 * precision's GEMMs (calibrate --no-gemm, or another
		 * --gemm-precisions) */
		snprintf(note, note_size,
			 "the calibration %s has no %s GEMM table (run tpplan calibrate with the GEMM sweep in %s); compute phases are not predicted",
			 c->calibration, tpp_prec_names[p], tpp_prec_names[p]);
	} else {
		snprintf(note, note_size,
			 "%s has no %s GEMM figure (give a calibration of this machine, --calibration FILE); compute phases are not predicted",
			 c->name, tpp_prec_names[p]);
	}
	/* the collectives, and with a calibration those it did not measure
	 * on the tier their group runs on: priced from the cluster file's
	 * figures, another machine's, which the note says as the note
	 * without one does */
	{
		const struct {
			enum tpp_exec_phase ph;
			enum tpp_coll op;
			double bytes;
			int n, stride;
		} cl[] = {
			{TPP_PH_TP_AR, TPP_COLL_ALL_REDUCE, act_bytes, o->tp, 1},
			{TPP_PH_TP_AG, TPP_COLL_ALL_GATHER, act_bytes, o->tp, 1},
			{TPP_PH_TP_RS, TPP_COLL_REDUCE_SCATTER, act_bytes, o->tp, 1},
			{TPP_PH_PP_P2P, TPP_COLL_SEND_RECV, Tl * h * 4, o->pp, o->tp * o->dp},
			{TPP_PH_DP_AR, TPP_COLL_ALL_REDUCE, w_bytes, o->dp, o->tp},
		};
		char which[256] = "";
		for (i = 0; i < (int)(sizeof(cl) / sizeof(cl[0])); i++) {
			const struct tpp_tier *t;
			if (cl[i].n <= 1)
				continue;
			pred[cl[i].ph] = r->count[cl[i].ph] *
				tpp_coll_time(c, cl[i].op, cl[i].bytes, cl[i].n, cl[i].stride);
			if (!c->calibration[0] || !r->count[cl[i].ph])
				continue;
			t = &c->tiers[tpp_cluster_tier_for(c, cl[i].n, cl[i].stride)];
			if (t->busbw_src[cl[i].op] != TPP_SRC_CALIBRATION)
				tpp_appendf(which, sizeof(which), "%s%s on %s", which[0] ? ", " : "",
					    tpp_exec_phase_names[cl[i].ph], t->name);
		}
		if (which[0] && note_size)
			tpp_appendf(note, note_size,
				    "%sthe calibration measured no %s: predicted from %s's figures, not this machine's",
				    note[0] ? "; " : "", which, c->name);
	}
	if (have) {
		struct tpp_model m;
		struct tpp_layout l;
		struct tpp_cost_opts co;
		struct tpp_eval e;
		struct tpp_err err;
		memset(&m, 0, sizeof(m));
		tpp_strlcpy(m.name, "exec", sizeof(m.name));
		m.layers = o->layers;
		m.hidden = s->hidden;
		m.heads = m.kv_heads = s->heads;
		m.head_dim = s->hidden / s->heads;
		m.ffn = s->ffn;
		m.mlp = TPP_MLP_GELU;
		m.vocab = 128;
		m.seq = s->seq;
		m.tied = 1;
		m.global_batch = o->dp * s->mbs * o->microbatches;
		memset(&l, 0, sizeof(l));
		l.tp = o->tp; l.pp = o->pp; l.dp = o->dp; l.cp = 1;
		l.mbs = s->mbs; l.vp = 1; l.sp = o->sp;
		l.recompute = TPP_RECOMPUTE_NONE;
		l.gbs = m.global_batch;
		/* exec runs none of the overlaps (Megatron's defaults) */
		tpp_cost_opts_megatron(&co);
		co.prec = p;
		/* exec materialises the s x s scores (exec/run.c) */
		co.attn = TPP_ATTN_UNFUSED;
		/* the calibration measured these very devices: no cluster-wide
		 * spread of GPU speeds on top (tpp_straggler_factor) */
		co.gpu_speed_sigma = 0;
		if (tpp_cost_eval(&m, cc, &co, &l, &e, &err) == TPP_OK) {
			pred[TPP_PH_LAYER_FWD] = r->count[TPP_PH_LAYER_FWD] * e.layer_fwd_s;
			pred[TPP_PH_LAYER_BWD] = r->count[TPP_PH_LAYER_BWD] * e.layer_bwd_s;
			pred[TPP_PH_STEP] = e.step_s - e.t.optimizer_s;
		} else if (note_size) {
			tpp_appendf(note, note_size, "%sthe cost model rejects the executed layout: %s",
				    note[0] ? "; " : "", err.msg);
		}
	}
	free(cc);
}
