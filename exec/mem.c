/*
 * mem.c - what `tpplan exec` will allocate, before it allocates it: the
 * peak host and backend (device) bytes of one rank, counted buffer by
 * buffer as run.c's setup() and check() and ref.c's reference allocate
 * them, and the shape at a --scale-down factor.  run.c compares the sum
 * over the ranks of a node with its physical memory (and each rank's
 * device bytes with its GPU's free memory) and refuses a run that does
 * not fit, naming the factor that would.  Pure: no MPI.
 */
#include <math.h>
#include <string.h>

#include "exec_impl.h"

void tpp_exec_shape_scale(const struct tpp_exec_shape *model, double f,
			  const struct tpp_exec_shape *over,
			  struct tpp_exec_shape *out)
{
	struct tpp_exec_shape s = *model;
	TPP_ASSERT(f >= 1 && model->heads > 0);
	if (f > 1) {
		double hd = floor(model->hidden / f / model->heads + 0.5);
		s.hidden = (hd < 1 ? 1 : (int)hd) * model->heads;
		s.ffn = (int)floor(model->ffn / f + 0.5);
		s.seq = (int)floor(model->seq / f + 0.5);
		if (s.ffn < 1)
			s.ffn = 1;
		if (s.seq < 1)
			s.seq = 1;
	}
	if (over->hidden) s.hidden = over->hidden;
	if (over->heads) s.heads = over->heads;
	if (over->ffn) s.ffn = over->ffn;
	if (over->seq) s.seq = over->seq;
	if (over->mbs) s.mbs = over->mbs;
	*out = s;
}

/* n buffers of `elems` elements of `elem` bytes from the backend: the
 * cpu backend rounds each up to 64 bytes and balloc() to one element */
static double bufs(double n, double elems, double elem)
{
	double b = (elems < 1 ? 1 : elems) * elem;
	return n * ceil(b / 64) * 64;
}

void tpp_exec_mem_rank(const struct tpp_exec_opts *o, int wrank,
		       struct tpp_exec_mem *m)
{
	const struct tpp_exec_shape *s = &o->shape;
	int tp = o->tp, dp = o->dp, ppr = wrank / (tp * dp), nl, nslots;
	double T = (double)s->mbs * s->seq, Tl = o->sp ? T / tp : T;
	double h = s->hidden, f = s->ffn, S = s->seq;
	double hl = h / tp, fl = f / tp, al = (double)s->heads / tp;
	double P = s->mbs * al * S * S, M = o->microbatches;
	double wn[TPP_W__COUNT], dev = 0, host = 0, ref = 0;
	int w;

	memset(m, 0, sizeof(*m));
	nl = tpp_chunk_layers(o->layers, o->pp, ppr);
	nslots = o->microbatches;
	if (o->sched == TPP_EXEC_SCHED_1F1B && o->pp - ppr < nslots)
		nslots = o->pp - ppr;
	wn[TPP_W_QKV] = h * 3 * hl;
	wn[TPP_W_PROJ] = hl * h;
	wn[TPP_W_FC1] = h * fl;
	wn[TPP_W_FC2] = fl * h;
	/* setup(): gradients (a second copy for the DP sum), the weights */
	dev += bufs(o->dp > 1 ? 2 : 1, nl * (wn[0] + wn[1] + wn[2] + wn[3]), 4);
	for (w = 0; w < TPP_W__COUNT; w++)
		dev += bufs(nl, wn[w], 4);
	/* stage input and layer outputs, input and output gradients */
	dev += bufs(M * (nl + 3), Tl * h, 4);
	/* what the backward keeps, per layer and micro-batch in flight */
	dev += (double)nl * nslots *
	       (bufs(2, T * h, 4) + bufs(4, Tl, 4) + bufs(1, T * 3 * hl, 4) +
		bufs(1, P, 4) + bufs(1, T * hl, 4) + bufs(1, Tl * h, 4) +
		bufs(2, T * fl, 4));
	/* temporaries */
	dev += bufs(3, T * h, 4) + bufs(3, Tl * h, 4) + bufs(1, T * 3 * hl, 4) +
	       bufs(1, T * hl, 4) + bufs(1, T * fl, 4) + bufs(1, S * S, 4);
	/* host staging of the uploads (chunked, TPP_EXEC_CHUNK) */
	{
		/* one at a time; a weight row (3 hl, h or fl) is staged whole */
		double row = 3 * hl > h ? 3 * hl : h;
		row = fl > row ? fl : row;
		host += 4 * (row > TPP_EXEC_CHUNK ? row : TPP_EXEC_CHUNK);
	}
	if (o->check) {
		/* check(): every rank's transfer buffer */
		double kh = 3 * T * (h > f ? h : f);
		kh = 3 * h * h > kh ? 3 * h * h : kh;
		kh = h * f > kh ? h * f : kh;
		host += 4 * kh;
		if (wrank == 0) {
			/* reference(): fp64 weights and gradients of every
			 * layer, the forward cache of every layer, outputs
			 * and input gradients of every global micro-batch,
			 * two [T,h] buffers and tpp_ref_bwd's temporaries */
			double wfull = 4 * h * h + 2 * h * f;
			double cache = 8 * T * h + 4 * T + (double)s->mbs * s->heads * S * S + 2 * T * f;
			double G = (double)o->dp * o->microbatches;
			ref = 8 * (o->layers * (2 * wfull + cache) + 2 * G * T * h + 2 * T * h +
				   T * f + 6 * T * h + S * S);
			host += ref;
		}
	}
	host += TPP_EXEC_PROC_BYTES;
	if (o->backend && !strcmp(o->backend, "cpu"))
		host += dev, dev = 0;
	m->host_bytes = host;
	m->dev_bytes = dev;
	m->ref_bytes = ref;
}
