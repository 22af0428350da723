/*
 * sim.c - event-level simulation of one training step (see sim.h).
 *
 * Each pipeline rank executes a fixed list of operations in the order its
 * schedule prescribes:
 *   1F1B         PipeDream-flush as in Megatron: p - r - 1 warm-up
 *                forwards, then one forward / one backward, then the drain
 *                (Narayanan et al. 2021, costmodel.md 4.1);
 *   interleaved  Megatron's interleaved 1F1B over v model chunks per rank:
 *                2 (p - r - 1) + (v - 1) p warm-up forwards, virtual
 *                micro-batch i -> chunk (i mod pv) / p, micro-batch
 *                (i / pv) p + i mod p (megatron/core/pipeline_parallel/
 *                schedules.py, costmodel.md 3.4);
 *   ZB-H1        1F1B with each backward split into its input-gradient
 *                part B (on the critical path) and weight-gradient part W
 *                (Qi et al. 2024), in the best of three orders fixed
 *                before the step (tpp_sim_stages): plain 1F1B (so never
 *                slower than 1F1B), 1F1B with each W right after its B,
 *                and the order of a greedy play with instant transfers
 *                (a free rank runs a B whose input has arrived, else the
 *                next F, at most p - r forwards ahead of the backwards,
 *                the 1F1B limit, and within ZB-H1's memory budget
 *                (tpp_zb_budget, each pending W at tpp_zb_w_share of a
 *                forward), else its oldest pending W, else waits;
 *                with equal F, B and W this gives ZB-H1's bubble
 *                (p-1)(F + B - W)).
 * An operation starts when its rank is free and its input is there: the
 * forward of chunk k needs chunk k-1's forward of the same micro-batch plus
 * one point-to-point transfer, the backward needs chunk k+1's backward (the
 * last chunk: its own forward).  A transfer either flies beside the
 * sender's next operation (overlapped p2p) or keeps the sender busy until
 * it has arrived (blocking, Megatron's default; tpp_p2p_blocking).  Data-parallel gradient buckets (one per
 * chunk) start on a separate stream when that chunk's last weight gradient
 * is done (overlap on) or when the rank's compute is done (overlap off).
 * Where the pipeline transfers and the gradient reduction leave the node
 * through the same NICs, a transfer gets half the bandwidth for the time it
 * overlaps a bucket in flight (full outside: the gaps between buckets are
 * free) and the bucket loses as much (fair sharing of one link,
 * calibration.md 4.4); this is resolved by a second pass that prices each
 * transfer at its first-pass departure against the first pass's buckets
 * (xfer), within 2.2 % of the self-consistent answer in an audit
 * (costmodel/README.md, Simulation).
 */
#include "sim.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const tpp_ev_names[TPP_EV__COUNT] = {
	[TPP_EV_F] = "F", [TPP_EV_B] = "B", [TPP_EV_W] = "W",
	[TPP_EV_BW] = "BW", [TPP_EV_DP] = "DP", [TPP_EV_OPT] = "OPT",
};

struct op {
	int kind; /* TPP_EV_F, _B, _W or _BW */
	int chunk, mb;
};

struct sim {
	const struct tpp_stages *st;
	int p, v, n, m;
	struct op *ops;    /* per rank: ops[r * per_rank + i] */
	int *nops;
	int per_rank;
	double *done[3];   /* F, B (or BW), W end times, [chunk * m + mb]; -1 pending */
	/* the compute end of F (0) and B or BW (1), where its output leaves,
	 * this pass and the first; the index in its rank's list of the op
	 * that fills each slot of done (the lists are the same every pass) */
	double *dep[2], *dep0[2];
	int *idx[3];
	double *free_at;   /* per rank */
	int *ptr;
	/* NIC sharing: per rank, the span of its DP buckets (dp_lo, dp_hi) and
	 * the intervals they are in flight (a chunk's back-to-back buckets merged):
	 * rank r's are iv_lo/iv_hi[iv_off[r] .. iv_off[r] + iv_n[r]), in
	 * time order, from the previous pass; iv_tag: the list index of the
	 * op that frees the interval's gradients (its chunk's last W, or the
	 * rank's last op without overlap) */
	double *dp_lo, *dp_hi;
	double *iv_lo, *iv_hi;
	int *iv_off, *iv_n, *iv_tag;
	int priced;        /* this pass prices transfers against the buckets */
	int fixed_point;   /* ... at their own departure (iterated), else at
			      their first-pass departure */
	int share;         /* transfers and DP buckets share the NICs */
	int instant;       /* transfers take no time (a ZB-H1 order) */
	int split;         /* the backwards are B and W apart (ZB-H1's own
			      orders): a chunk's gradients are ready over W */
	double zb_w;       /* tpp_sim_input.zb_w_share */
	double zb_budget;  /* tpp_zb_budget of it */
};

static void push(struct sim *s, int r, int kind, int chunk, int mb)
{
	struct op *o = &s->ops[(size_t)r * s->per_rank + s->nops[r]++];
	TPP_ASSERT(s->nops[r] <= s->per_rank);
	o->kind = kind;
	o->chunk = chunk;
	o->mb = mb;
}

/* Megatron's virtual micro-batch numbering for interleaving. */
static void vmb(int p, int v, int i, int forward, int *chunk_local, int *mb)
{
	int group = i % (p * v);
	*chunk_local = group / p;
	if (!forward)
		*chunk_local = v - 1 - *chunk_local;
	*mb = (i / (p * v)) * p + group % p;
}

/* Each rank's list in its schedule's order; split: 1F1B with each
 * backward as B then W at once (v = 1; a ZB-H1 candidate order). */
static void build_orders(struct sim *s, int split)
{
	int p = s->p, v = s->v, m = s->m, r, i;
	for (r = 0; r < p; r++) {
		s->nops[r] = 0;
		if (v == 1) {
			int w = p - r - 1 < m ? p - r - 1 : m;
			for (i = 0; i < w; i++)
				push(s, r, TPP_EV_F, r, i);
			for (i = 0; i < m; i++) {
				if (i + w < m)
					push(s, r, TPP_EV_F, r, i + w);
				if (split) {
					push(s, r, TPP_EV_B, r, i);
					push(s, r, TPP_EV_W, r, i);
				} else {
					push(s, r, TPP_EV_BW, r, i);
				}
			}
		} else {
			int total = m * v;
			int w = (p - r - 1) * 2 + (v - 1) * p;
			int cl, mb;
			if (w > total)
				w = total;
			for (i = 0; i < w; i++) {
				vmb(p, v, i, 1, &cl, &mb);
				push(s, r, TPP_EV_F, cl * p + r, mb);
			}
			for (i = 0; i < total; i++) {
				if (i + w < total) {
					vmb(p, v, i + w, 1, &cl, &mb);
					push(s, r, TPP_EV_F, cl * p + r, mb);
				}
				vmb(p, v, i, 0, &cl, &mb);
				push(s, r, TPP_EV_BW, cl * p + r, mb);
			}
		}
	}
}

static double *slot(struct sim *s, int which, int chunk, int mb)
{
	return &s->done[which][(size_t)chunk * s->m + mb];
}

/*
 * How much longer a transfer of d seconds leaving at t takes on rank r's
 * NIC, whose buckets are in flight in r's intervals: fair sharing of one
 * link (calibration.md 4.4), full rate outside them, half inside.  The
 * bucket it overlaps loses as much.  Intervals tagged `skip` or later
 * free their gradients only after an op that waits for this transfer (or,
 * for a blocking sender, after its sending op): they cannot overlap it.
 */
static double shared_extra(const struct sim *s, int r, double t, double d, int skip)
{
	const double *lo = s->iv_lo + s->iv_off[r], *hi = s->iv_hi + s->iv_off[r];
	const int *tag = s->iv_tag + s->iv_off[r];
	int n = s->iv_n[r], a = 0, b = n, i;
	double now = t, left = d;
	/* the first interval that ends after t */
	while (a < b) {
		int mid = (a + b) / 2;
		if (hi[mid] <= t)
			a = mid + 1;
		else
			b = mid;
	}
	for (i = a; i < n && left > 0; i++) {
		if (tag[i] >= skip)
			continue;
		if (lo[i] > now) {
			if (left <= lo[i] - now)
				return now + left - t - d;
			left -= lo[i] - now;
			now = lo[i];
		}
		if (2 * left <= hi[i] - now)
			return now + 2 * left - t - d;
		left -= (hi[i] - now) / 2;
		now = hi[i];
	}
	return now + left - t - d;
}

/*
 * Transfer time of the output of chunk kf's F (which 0, to chunk kf + 1)
 * or B (which 1, to chunk kf - 1) for micro-batch mb, leaving at t:
 * slower while either end's NIC carries a gradient bucket.  Two passes
 * (tpp_sim_stages): the first shares nothing and places the buckets; the
 * second prices each transfer at its first-pass departure against them.
 * A rank's buckets move with its own delay, so the first-pass departure
 * is where the sender's buckets stood relative to it; the receiver is
 * taken as delayed alike.
 */
static double xfer(const struct sim *s, int which, int kf, int mb, double t)
{
	int kt = which ? kf - 1 : kf + 1, ra = kf % s->p, rb = kt % s->p;
	size_t cf = (size_t)kf * s->m + mb, ct = (size_t)kt * s->m + mb;
	double d = s->st->p2p_s, tq, ea, eb;
	if (ra == rb || s->instant)
		return 0;
	if (!s->share || !s->priced)
		return d;
	tq = s->fixed_point ? t : s->dep0[which][cf];
	ea = shared_extra(s, ra, tq, d, s->st->p2p_blocking ? s->idx[which][cf] + 1 : INT_MAX);
	eb = shared_extra(s, rb, tq, d, s->idx[which][ct]);
	return d + (ea > eb ? ea : eb);
}

/* Flight time of a transfer that left at t: none when the sender already
 * paid for it (blocking transfers end with the sending operation). */
static double flight(struct sim *s, int which, int kf, int mb, double t)
{
	return s->st->p2p_blocking ? 0 : xfer(s, which, kf, mb, t);
}

/*
 * Time the sender spends on the output of `o` finishing its compute at t:
 * with blocking transfers (Megatron's batched isend/irecv followed by a
 * device synchronize) a forward's activation to the next chunk and an
 * input-gradient to the previous chunk keep the sender busy until they
 * have arrived.  The paired receive is posted in the same batch, so an
 * exchange costs one transfer time.
 */
static double send_cost(struct sim *s, const struct op *o, double t)
{
	int k = o->chunk;
	if (!s->st->p2p_blocking)
		return 0;
	if (o->kind == TPP_EV_F && k + 1 < s->n)
		return xfer(s, 0, k, o->mb, t);
	if ((o->kind == TPP_EV_B || o->kind == TPP_EV_BW) && k > 0)
		return xfer(s, 1, k, o->mb, t);
	return 0;
}

/* Time the op's input is available, or -1 if not yet known. */
static double ready(struct sim *s, const struct op *o)
{
	int k = o->chunk, n = s->n;
	double t;
	switch (o->kind) {
	case TPP_EV_F:
		if (k == 0)
			return 0;
		t = *slot(s, 0, k - 1, o->mb);
		return t < 0 ? -1 : t + flight(s, 0, k - 1, o->mb, t);
	case TPP_EV_B:
	case TPP_EV_BW:
		if (k == n - 1)
			return *slot(s, 0, k, o->mb);
		t = *slot(s, 1, k + 1, o->mb);
		return t < 0 ? -1 : t + flight(s, 1, k + 1, o->mb, t);
	case TPP_EV_W:
		return *slot(s, 1, k, o->mb);
	}
	TPP_ASSERT(0);
	return -1;
}

/* Where an op that ends its compute at `end`, at `pos` in its rank's list,
 * leaves its marks: departure of its output, list index per slot. */
static void mark(struct sim *s, const struct op *o, int pos, double end)
{
	size_t c = (size_t)o->chunk * s->m + o->mb;
	if (!s->share) {
		if (o->kind == TPP_EV_B || o->kind == TPP_EV_BW)
			s->dep[1][c] = end;
		return;
	}
	switch (o->kind) {
	case TPP_EV_F:
		s->dep[0][c] = end;
		s->idx[0][c] = pos;
		break;
	case TPP_EV_B:
		s->dep[1][c] = end;
		s->idx[1][c] = pos;
		break;
	case TPP_EV_W:
		s->idx[2][c] = pos;
		break;
	default:
		s->dep[1][c] = end;
		s->idx[1][c] = s->idx[2][c] = pos;
	}
}

static double duration(const struct sim *s, const struct op *o)
{
	const struct tpp_stages *st = s->st;
	switch (o->kind) {
	case TPP_EV_F: return st->f_s[o->chunk];
	case TPP_EV_B: return st->b_s[o->chunk];
	case TPP_EV_W: return st->w_s[o->chunk];
	default: return st->b_s[o->chunk] + st->w_s[o->chunk];
	}
}

/* One operation into the event list when it has room; *nev counts every
 * one, so that a caller can tell the list was too short. */
static void record(struct tpp_sim_event *ev, size_t cap, size_t *nev, int rank,
		   int chunk, int mb, enum tpp_ev_kind kind, double start, double end)
{
	if (ev && *nev < cap)
		ev[*nev] = (struct tpp_sim_event){.rank = rank, .chunk = chunk, .mb = mb,
						  .kind = kind, .start_s = start, .end_s = end};
	(*nev)++;
}

/*
 * Play every rank's list; returns 0, -1 on a schedule deadlock (a bug) or
 * -2 out of memory.  A worklist holds the ranks that may be able to move:
 * a rank runs until its next operation waits for input, and each finished
 * operation wakes the rank that consumes its output, so the work is linear
 * in the number of operations.
 */
static int play(struct sim *s, struct tpp_sim_event *ev, size_t cap,
		size_t *nev)
{
	int r, left = 0, i, nq = 0, p = s->p;
	size_t cells = (size_t)s->n * s->m;
	int *queue = malloc(sizeof(int) * (size_t)p);
	char *inq = calloc((size_t)p, 1);

	if (!queue || !inq) {
		free(queue);
		free(inq);
		return -2;
	}
	for (i = 0; i < 3; i++)
		for (size_t c = 0; c < cells; c++)
			s->done[i][c] = -1;
	for (r = 0; r < p; r++) {
		s->ptr[r] = 0;
		s->free_at[r] = 0;
		left += s->nops[r];
		queue[nq++] = p - 1 - r; /* pop order 0, 1, ... */
		inq[r] = 1;
	}
	*nev = 0;
	while (nq) {
		r = queue[--nq];
		inq[r] = 0;
		while (s->ptr[r] < s->nops[r]) {
			const struct op *o = &s->ops[(size_t)r * s->per_rank + s->ptr[r]];
			double t = ready(s, o), start, end;
			int wake = -1;
			if (t < 0)
				break;
			start = t > s->free_at[r] ? t : s->free_at[r];
			end = start + duration(s, o);
			mark(s, o, s->ptr[r], end);
			end += send_cost(s, o, end);
			s->free_at[r] = end;
			*slot(s, o->kind == TPP_EV_W ? 2 : (o->kind == TPP_EV_F ? 0 : 1),
			      o->chunk, o->mb) = end;
			if (o->kind == TPP_EV_BW)
				*slot(s, 2, o->chunk, o->mb) = end;
			record(ev, cap, nev, r, o->chunk, o->mb, (enum tpp_ev_kind)o->kind, start, end);
			s->ptr[r]++;
			left--;
			/* the consumer of this output may now move */
			if (o->kind == TPP_EV_F && o->chunk + 1 < s->n)
				wake = (o->chunk + 1) % p;
			else if ((o->kind == TPP_EV_B || o->kind == TPP_EV_BW) && o->chunk > 0)
				wake = (o->chunk - 1) % p;
			if (wake >= 0 && wake != r && !inq[wake]) {
				queue[nq++] = wake;
				inq[wake] = 1;
			}
		}
	}
	free(queue);
	free(inq);
	return left ? -1 : 0;
}

/*
 * Zero-bubble play (v = 1, chunk k on rank k): a discrete-event loop that
 * always advances the rank whose next operation starts first, so every
 * decision sees all earlier completions; the order it plays becomes the
 * ranks' lists (s->ops), for play() to replay.
 */
/* Rank r's next zero-bubble operation and its start time: a B whose input
 * has arrived, else an F whose input has arrived (at most p - r ahead of
 * the backwards), else its oldest pending W, else the earliest known input
 * arrival; ck[r] = -1 when it must wait for another rank. */
static void zb_next(struct sim *s, int r, const int *nf, const int *nb,
		    const int *nw, int *ck, int *cm, double *ct)
{
	int p = s->p, m = s->m;
	double t0 = s->free_at[r], tb = -1, tf = -1;
	struct op o;
	ck[r] = -1;
	if (nb[r] < nf[r]) {
		o.kind = TPP_EV_B; o.chunk = r; o.mb = nb[r];
		tb = ready(s, &o);
	}
	/* a forward within the 1F1B limit, and within ZB-H1's memory budget
	 * (tpp_zb_budget), counting each deferred W at its share
	 * (tpp_zb_w_share) and each forward in flight at the larger of 1 and
	 * that share (its B turns it into a deferred W, and B is never held
	 * back): so what the rank holds stays within the budget at every
	 * moment.  With no W pending this is the 1F1B limit alone, so a rank
	 * is never stuck. */
	if (nf[r] < m && nf[r] - nb[r] < p - r &&
	    (s->zb_w <= 0 ||
	     (nf[r] - nb[r] + 1) * (s->zb_w > 1 ? s->zb_w : 1.0) + s->zb_w * (nb[r] - nw[r]) <=
		     s->zb_budget + 1e-9)) {
		o.kind = TPP_EV_F; o.chunk = r; o.mb = nf[r];
		tf = ready(s, &o);
	}
	if (tb >= 0 && tb <= t0) {
		ck[r] = TPP_EV_B; cm[r] = nb[r]; ct[r] = t0;
	} else if (tf >= 0 && tf <= t0) {
		ck[r] = TPP_EV_F; cm[r] = nf[r]; ct[r] = t0;
	} else if (nw[r] < nb[r]) {
		ck[r] = TPP_EV_W; cm[r] = nw[r]; ct[r] = t0;
	} else if (tb >= 0 && (tf < 0 || tb <= tf)) {
		ck[r] = TPP_EV_B; cm[r] = nb[r]; ct[r] = tb;
	} else if (tf >= 0) {
		ck[r] = TPP_EV_F; cm[r] = nf[r]; ct[r] = tf;
	}
}

/* Indexed min-heap of ranks by their next operation's start (ties: lower
 * rank first; a rank with nothing it can start is keyed +inf). */
struct rheap {
	int n, *h, *pos;
	double *key;
};

static int rh_less(const struct rheap *q, int a, int b)
{
	double ka = q->key[a], kb = q->key[b];
	return ka < kb || (ka == kb && a < b);
}

static void rh_swap(struct rheap *q, int i, int j)
{
	int t = q->h[i];
	q->h[i] = q->h[j];
	q->h[j] = t;
	q->pos[q->h[i]] = i;
	q->pos[q->h[j]] = j;
}

static void rh_fix(struct rheap *q, int r)
{
	int i = q->pos[r];
	while (i > 0 && rh_less(q, q->h[i], q->h[(i - 1) / 2])) {
		rh_swap(q, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	for (;;) {
		int l = 2 * i + 1, c = i;
		if (l < q->n && rh_less(q, q->h[l], q->h[c]))
			c = l;
		if (l + 1 < q->n && rh_less(q, q->h[l + 1], q->h[c]))
			c = l + 1;
		if (c == i)
			break;
		rh_swap(q, i, c);
		i = c;
	}
}

/* Recompute rank r's next zero-bubble operation (zb_next) and its place
 * in the heap. */
static void zb_requeue(struct sim *s, struct rheap *q, int r, const int *nf,
		       const int *nb, const int *nw, int *ck, int *cm, double *ct)
{
	zb_next(s, r, nf, nb, nw, ck, cm, ct);
	q->key[r] = ck[r] >= 0 ? ct[r] : HUGE_VAL;
	rh_fix(q, r);
}

static int play_zb(struct sim *s, struct tpp_sim_event *ev, size_t cap,
		   size_t *nev)
{
	int p = s->p, m = s->m, r, i, left = 3 * p * m;
	int *nf = calloc((size_t)p, sizeof(int)), *nb = calloc((size_t)p, sizeof(int));
	int *nw = calloc((size_t)p, sizeof(int));
	/* each rank's next operation, recomputed only when the rank or a
	 * neighbour (whose output it consumes) has moved */
	int *ck = malloc(sizeof(int) * (size_t)p), *cm = malloc(sizeof(int) * (size_t)p);
	double *ct = malloc(sizeof(double) * (size_t)p);
	int *h = malloc(sizeof(int) * (size_t)p), *pos = malloc(sizeof(int) * (size_t)p);
	double *key = malloc(sizeof(double) * (size_t)p);
	struct rheap q;
	int rc = 0;
	size_t cells = (size_t)s->n * s->m;

	if (!nf || !nb || !nw || !ck || !cm || !ct || !h || !pos || !key) {
		rc = -2;
		goto out;
	}
	for (i = 0; i < 3; i++)
		for (size_t c = 0; c < cells; c++)
			s->done[i][c] = -1;
	q.n = p;
	q.h = h;
	q.pos = pos;
	q.key = key;
	for (r = 0; r < p; r++) {
		s->free_at[r] = 0;
		s->nops[r] = 0; /* the order played is kept in the lists */
		ck[r] = -1;
		key[r] = HUGE_VAL;
		h[r] = r;
		pos[r] = r;
	}
	*nev = 0;
	for (r = 0; r < p; r++)
		zb_requeue(s, &q, r, nf, nb, nw, ck, cm, ct);
	while (left) {
		int best_r = h[0], d, done_kind = ck[best_r];
		if (ck[best_r] < 0) {
			rc = -1;
			goto out;
		}
		{
			struct op o = {ck[best_r], best_r, cm[best_r]};
			double start = ct[best_r], end = start + duration(s, &o);
			mark(s, &o, s->nops[best_r], end);
			end += send_cost(s, &o, end);
			s->free_at[best_r] = end;
			*slot(s, o.kind == TPP_EV_F ? 0 : (o.kind == TPP_EV_B ? 1 : 2),
			      best_r, o.mb) = end;
			if (o.kind == TPP_EV_F)
				nf[best_r]++;
			else if (o.kind == TPP_EV_B)
				nb[best_r]++;
			else
				nw[best_r]++;
			record(ev, cap, nev, best_r, best_r, o.mb, (enum tpp_ev_kind)o.kind, start, end);
			push(s, best_r, o.kind, best_r, o.mb);
			left--;
		}
		/* the rank, and the neighbour that consumes its output (a
		 * forward's the next rank, an input gradient's the previous;
		 * a weight gradient has none): no other rank's next operation
		 * or start can have changed */
		zb_requeue(s, &q, best_r, nf, nb, nw, ck, cm, ct);
		d = done_kind == TPP_EV_F ? best_r + 1 : done_kind == TPP_EV_B ? best_r - 1 : -1;
		if (d >= 0 && d < p)
			zb_requeue(s, &q, d, nf, nb, nw, ck, cm, ct);
	}
out:
	free(nf);
	free(nb);
	free(nw);
	free(ck);
	free(cm);
	free(ct);
	free(h);
	free(pos);
	free(key);
	return rc;
}

/*
 * The greedy ZB-H1 orders of earlier runs (struct tpp_sim_cache, sim.h).
 * An order is keyed by everything play_zb reads: p, m, the W share (the
 * budget follows from the three) and each chunk's F, B and W times,
 * compared exactly; it is stored as each rank's 3m operations, micro-batch
 * * 4 + kind (the chunk is the rank's own).
 */
struct zb_order {
	int p, m;
	double zb_w;
	double *fbw;                 /* f, b, w of chunk k at 3k .. 3k + 2 */
	int *ops;                    /* rank r's at 3 m r .. */
	size_t bytes;
	unsigned long long used;     /* last use, for eviction */
};

struct tpp_sim_cache {
	struct zb_order o[TPP_SIM_CACHE_ORDERS];
	int n;
	size_t bytes;
	unsigned long long clock, hits, misses;
};

struct tpp_sim_cache *tpp_sim_cache_new(void)
{
	return calloc(1, sizeof(struct tpp_sim_cache));
}

static void zb_order_drop(struct tpp_sim_cache *q, int i)
{
	q->bytes -= q->o[i].bytes;
	free(q->o[i].fbw);
	free(q->o[i].ops);
	q->o[i] = q->o[--q->n];
}

void tpp_sim_cache_free(struct tpp_sim_cache *q)
{
	if (!q)
		return;
	while (q->n)
		zb_order_drop(q, 0);
	free(q);
}

void tpp_sim_cache_stats(const struct tpp_sim_cache *q, unsigned long long *hits,
			 unsigned long long *misses)
{
	*hits = q ? q->hits : 0;
	*misses = q ? q->misses : 0;
}

static int zb_order_matches(const struct zb_order *z, const struct sim *s)
{
	int k;
	if (z->p != s->p || z->m != s->m || z->zb_w != s->zb_w)
		return 0;
	for (k = 0; k < s->n; k++)
		if (z->fbw[3 * k] != s->st->f_s[k] || z->fbw[3 * k + 1] != s->st->b_s[k] ||
		    z->fbw[3 * k + 2] != s->st->w_s[k])
			return 0;
	return 1;
}

/* s's ranks' lists from a stored order: 1, or 0 when none matches. */
static int zb_order_get(struct tpp_sim_cache *q, struct sim *s)
{
	int i, r, j, per = 3 * s->m;
	for (i = 0; i < q->n; i++) {
		const struct zb_order *z = &q->o[i];
		if (!zb_order_matches(z, s))
			continue;
		for (r = 0; r < s->p; r++) {
			const int *src = z->ops + (size_t)per * r;
			struct op *dst = s->ops + (size_t)r * s->per_rank;
			for (j = 0; j < per; j++)
				dst[j] = (struct op){src[j] & 3, r, src[j] >> 2};
			s->nops[r] = per;
		}
		q->o[i].used = ++q->clock;
		q->hits++;
		return 1;
	}
	q->misses++;
	return 0;
}

/* Store the order play_zb left in s's lists (every rank's 3m operations),
 * evicting the least recently used to stay within TPP_SIM_CACHE_ORDERS
 * and TPP_SIM_CACHE_BYTES; an order larger than the whole budget, or one
 * that finds no memory, is not kept (the cache only saves time). */
static void zb_order_put(struct tpp_sim_cache *q, const struct sim *s)
{
	size_t per = 3 * (size_t)s->m, bytes = sizeof(int) * per * s->p +
						 sizeof(double) * 3 * (size_t)s->n;
	struct zb_order z;
	int r, k;
	size_t j;
	if (bytes > TPP_SIM_CACHE_BYTES)
		return;
	for (r = 0; r < s->p; r++)
		if ((size_t)s->nops[r] != per)
			return; /* not a whole play: nothing to keep */
	while (q->n && (q->n == TPP_SIM_CACHE_ORDERS || q->bytes + bytes > TPP_SIM_CACHE_BYTES)) {
		int old = 0, i;
		for (i = 1; i < q->n; i++)
			if (q->o[i].used < q->o[old].used)
				old = i;
		zb_order_drop(q, old);
	}
	z.p = s->p;
	z.m = s->m;
	z.zb_w = s->zb_w;
	z.bytes = bytes;
	z.used = ++q->clock;
	z.fbw = malloc(sizeof(double) * 3 * (size_t)s->n);
	z.ops = malloc(sizeof(int) * per * s->p);
	if (!z.fbw || !z.ops) {
		free(z.fbw);
		free(z.ops);
		return;
	}
	for (k = 0; k < s->n; k++) {
		z.fbw[3 * k] = s->st->f_s[k];
		z.fbw[3 * k + 1] = s->st->b_s[k];
		z.fbw[3 * k + 2] = s->st->w_s[k];
	}
	for (r = 0; r < s->p; r++)
		for (j = 0; j < per; j++) {
			const struct op *o = &s->ops[(size_t)r * s->per_rank + j];
			z.ops[per * r + j] = o->mb * 4 + o->kind;
		}
	q->o[q->n++] = z;
	q->bytes += bytes;
}

/*
 * Place rank r's gradient buckets after a pass: one bucket per layer
 * (Megatron's buckets are about a layer at the default 40M parameters), in
 * the order the last micro-batch's backward frees them: a chunk's layers
 * finish evenly over the compute of its last weight-gradient pass, and the
 * rank's later chunks finish first.  Overlap off: all buckets wait for the
 * rank's last operation.  Back-to-back buckets of a chunk make one
 * interval.  Returns the end of the rank's reduction (0 without one).
 */
static double place_buckets(struct sim *s, const struct tpp_sim_input *in, int r,
			    double rank_end)
{
	const struct tpp_stages *st = s->st;
	double t_dp = 0, layers_r = 0, first_start = -1;
	double *ilo = s->iv_lo + s->iv_off[r], *ihi = s->iv_hi + s->iv_off[r];
	int *itag = s->iv_tag + s->iv_off[r];
	int niv = 0, k, i;
	for (k = r; k < s->n; k += s->p)
		layers_r += st->layers[k];
	for (i = 0; i < s->v && in->dp_grad_s > 0; i++) {
		int kk = (s->v - 1 - i) * s->p + r, j, nl = st->layers[kk], tag;
		size_t c = (size_t)kk * s->m + s->m - 1;
		/* a BW's end may include its blocking send; its compute ended
		 * when its output left */
		double we = s->split ? *slot(s, 2, kk, s->m - 1) : s->dep[1][c];
		double ws = we - (s->split ? st->w_s[kk] : st->b_s[kk] + st->w_s[kk]);
		double per = layers_r > 0 ? in->dp_grad_s / layers_r : in->dp_grad_s;
		if (nl < 1) {
			nl = 1;
			per = in->dp_grad_s / s->v;
		}
		tag = !s->share ? 0 : in->dp_overlap ? s->idx[2][c] : s->nops[r] - 1;
		for (j = 0; j < nl; j++) {
			double rdy = in->dp_overlap ? ws + (we - ws) * (j + 1) / nl : rank_end;
			double start = rdy > t_dp ? rdy : t_dp;
			if (first_start < 0)
				first_start = start;
			t_dp = start + per;
			if (niv && start <= ihi[niv - 1] && itag[niv - 1] == tag) {
				ihi[niv - 1] = t_dp;
			} else {
				ilo[niv] = start;
				ihi[niv] = t_dp;
				itag[niv++] = tag;
			}
		}
	}
	s->iv_n[r] = niv;
	s->dp_lo[r] = first_start < 0 ? 0 : first_start;
	s->dp_hi[r] = first_start < 0 ? 0 : t_dp;
	return t_dp;
}

/*
 * What rank r's buckets lose to the transfers it sends and receives
 * while they are in flight: the transfer's share of the link (fair
 * sharing, calibration.md 4.4), from each transfer's departure this pass
 * against this pass's intervals.
 */
static double bucket_loss(const struct sim *s, int r)
{
	double d = s->st->p2p_s, lost = 0;
	int k, j, p = s->p, n = s->n, m = s->m;
	for (k = r; k < n; k += p)
		for (j = 0; j < m; j++) {
			size_t c = (size_t)k * m + j;
			int blk = s->st->p2p_blocking;
			if (k + 1 < n && (k + 1) % p != r) {
				/* F out to k + 1, B in from k + 1 */
				lost += shared_extra(s, r, s->dep[0][c], d,
						     blk ? s->idx[0][c] + 1 : INT_MAX);
				lost += shared_extra(s, r, s->dep[1][c + m], d, s->idx[1][c]);
			}
			if (k > 0 && (k - 1) % p != r) {
				/* B out to k - 1, F in from k - 1 */
				lost += shared_extra(s, r, s->dep[1][c], d,
						     blk ? s->idx[1][c] + 1 : INT_MAX);
				lost += shared_extra(s, r, s->dep[0][c - m], d, s->idx[0][c]);
			}
		}
	return lost;
}

/*
 * Play the ranks' lists (greedy: play_zb instead, its order kept in the
 * lists) and the gradient buckets after them: one pass, or where
 * transfers and buckets share the NICs (unless one_pass) two -- the
 * second prices the transfers against the first's buckets (xfer) -- or,
 * with in->share_passes, passes until the step stops changing.  Fills
 * each rank's end, its buckets' end, the pipeline's and the step's end
 * (before the tail); events of the last pass when `events`.
 */
static int run_passes(struct sim *s, const struct tpp_sim_input *in, int greedy,
		      int one_pass, struct tpp_sim_event *events, size_t cap, size_t *nev,
		      double *rank_end, double *dp_end, double *pipe_end, double *step_end,
		      struct tpp_err *err)
{
	int r, pass, npass;
	size_t cells = (size_t)s->n * s->m;
	double *prev = NULL; /* fixed point: each rank's ends the pass before */
	int settled = 0;

	s->fixed_point = s->share && !one_pass && in->share_passes > 1;
	npass = !s->share || one_pass ? 1 : s->fixed_point ? in->share_passes : 2;
	if (s->fixed_point && !(prev = malloc(sizeof(double) * 2 * (size_t)s->p)))
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	/* the first pass shares nothing: no bucket is placed yet */
	for (r = 0; r < s->p; r++)
		s->iv_n[r] = 0;
	for (pass = 0; pass < npass; pass++) {
		int last = pass == npass - 1, prc;
		/* events of every pass that may stand */
		struct tpp_sim_event *ev = last || s->fixed_point ? events : NULL;
		s->priced = pass > 0;
		if (greedy && pass == 0) {
			/* the greedy decides the order once, as the runtime
			 * fixes its schedule before the step; the sharing
			 * pass plays that order with its slower transfers */
			prc = play_zb(s, ev, cap, nev);
		} else {
			prc = play(s, ev, cap, nev);
		}
		if (prc) {
			free(prev);
			return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, prc == -2 ? "out of memory"
					   : "internal error: schedule deadlock");
		}
		if (pass == 0 && npass > 1) {
			memcpy(s->dep0[0], s->dep[0], sizeof(double) * cells);
			memcpy(s->dep0[1], s->dep[1], sizeof(double) * cells);
		}
		*pipe_end = 0;
		for (r = 0; r < s->p; r++) {
			rank_end[r] = s->free_at[r];
			if (rank_end[r] > *pipe_end)
				*pipe_end = rank_end[r];
		}
		*step_end = 0;
		for (r = 0; r < s->p; r++) {
			double end;
			dp_end[r] = place_buckets(s, in, r, rank_end[r]);
			/* the transfers that shared the link took the buckets'
			 * share (the first pass priced none) */
			if (pass > 0 && (last || s->fixed_point) && dp_end[r] > 0)
				dp_end[r] += bucket_loss(s, r);
			end = rank_end[r] > dp_end[r] ? rank_end[r] : dp_end[r];
			if (end > *step_end)
				*step_end = end;
		}
		if (s->fixed_point) {
			/* settled when no rank's compute or reduction end
			 * moved by more than 1e-9 of the step (the step
			 * alone can stay put for a pass or two while another
			 * rank's still moves; rounding can flip ends by
			 * 1e-12 from pass to pass) */
			settled = pass > 0;
			for (r = 0; r < s->p; r++) {
				if (fabs(rank_end[r] - prev[2 * r]) > 1e-9 * *step_end ||
				    fabs(dp_end[r] - prev[2 * r + 1]) > 1e-9 * *step_end)
					settled = 0;
				prev[2 * r] = rank_end[r];
				prev[2 * r + 1] = dp_end[r];
			}
			if (settled)
				break;
		}
	}
	free(prev);
	if (s->fixed_point && !settled)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0,
				   "simulator: the NIC sharing did not settle in %d passes",
				   in->share_passes);
	return TPP_OK;
}

int tpp_sim_stages(const struct tpp_sim_input *in, struct tpp_sim_result *out,
		   struct tpp_sim_event *events, size_t cap, struct tpp_err *err)
{
	const struct tpp_stages *st = in->st;
	struct sim s;
	int rc = TPP_OK, r, k, i;
	size_t nev = 0, cells;
	double pipe_end = 0, step_end = 0, busy_max = 0;
	double *dp_end = NULL, *rank_end = NULL;

	memset(&s, 0, sizeof(s));
	memset(out, 0, sizeof(*out));
	if (st->pp < 1 || st->vp < 1 || st->microbatches < 1 ||
	    st->nchunks != st->pp * st->vp || st->nchunks > TPP_MAX_CHUNKS ||
	    (st->vp > 1 && st->microbatches % st->pp) || (in->zb && st->vp > 1))
		return tpp_err_set(err, TPP_E_INFEASIBLE, NULL, 0, 0,
				   "simulator: invalid pipeline (pp=%d vp=%d m=%d%s)",
				   st->pp, st->vp, st->microbatches,
				   in->zb ? ", zb-h1" : "");
	s.st = st;
	s.p = st->pp;
	s.v = st->vp;
	s.n = st->nchunks;
	s.m = st->microbatches;
	s.zb_w = in->zb_w_share;
	s.zb_budget = tpp_zb_budget(s.p, s.m, s.zb_w);
	/* every (chunk, micro-batch) has three end times and each rank three
	 * operations per micro-batch and chunk; refuse what would not fit
	 * comfortably in memory (the caller keeps the analytic result) */
	cells = (size_t)s.n * (size_t)s.m;
	if (cells > TPP_SIM_MAX_CELLS) {
		rc = tpp_err_set(err, TPP_E_INFEASIBLE, NULL, 0, 0,
				 "simulator: %zu chunk x micro-batch cells exceed %d",
				 cells, TPP_SIM_MAX_CELLS);
		goto out;
	}
	s.per_rank = s.m * s.v * 3;
	s.ops = malloc(sizeof(*s.ops) * (size_t)s.per_rank * s.p);
	s.nops = calloc((size_t)s.p, sizeof(int));
	s.ptr = calloc((size_t)s.p, sizeof(int));
	s.free_at = calloc((size_t)s.p, sizeof(double));
	s.dp_lo = calloc((size_t)s.p, sizeof(double));
	s.dp_hi = calloc((size_t)s.p, sizeof(double));
	{
		/* one interval per bucket at most: a chunk's layers, or one */
		size_t nb = 0;
		for (k = 0; k < s.n; k++)
			nb += st->layers[k] > 0 ? (size_t)st->layers[k] : 1;
		s.iv_lo = malloc(sizeof(double) * nb);
		s.iv_tag = malloc(sizeof(int) * nb);
		s.iv_hi = malloc(sizeof(double) * nb);
		s.iv_off = calloc((size_t)s.p, sizeof(int));
		s.iv_n = calloc((size_t)s.p, sizeof(int));
		for (r = 0, i = 0; s.iv_off && r < s.p; r++) {
			s.iv_off[r] = i;
			for (k = r; k < s.n; k += s.p)
				i += st->layers[k] > 0 ? st->layers[k] : 1;
		}
	}
	dp_end = calloc((size_t)s.p, sizeof(double));
	rank_end = calloc((size_t)s.p, sizeof(double));
	for (i = 0; i < 3; i++)
		s.done[i] = malloc(sizeof(double) * cells);
	s.share = in->share_nic && in->dp_grad_s > 0;
	/* the departures and list places serve the NIC sharing; a BW's
	 * compute end places the buckets */
	s.dep[1] = malloc(sizeof(double) * cells);
	if (s.share) {
		for (i = 0; i < 3; i++)
			s.idx[i] = malloc(sizeof(int) * cells);
		s.dep[0] = malloc(sizeof(double) * cells);
		s.dep0[0] = malloc(sizeof(double) * cells);
		s.dep0[1] = malloc(sizeof(double) * cells);
	}
	if (!s.ops || !s.nops || !s.ptr || !s.free_at || !s.dp_lo || !s.dp_hi ||
	    !s.iv_lo || !s.iv_hi || !s.iv_off || !s.iv_n || !s.iv_tag ||
	    !s.dep[1] || (s.share && (!s.idx[0] || !s.idx[1] || !s.idx[2] ||
				      !s.dep[0] || !s.dep0[0] || !s.dep0[1])) ||
	    !dp_end || !rank_end || !s.done[0] || !s.done[1] || !s.done[2]) {
		rc = tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
		goto out;
	}
	if (!in->zb) {
		build_orders(&s, 0);
		rc = run_passes(&s, in, 0, 0, events, cap, &nev, rank_end, dp_end, &pipe_end,
				&step_end, err);
	} else {
		/*
		 * ZB-H1 (Qi et al. 2024): the zero-bubble runtime runs a
		 * schedule fixed before the step, chosen with the profiled F,
		 * B, W and transfer times; the simulator plays the best of
		 * three orders: (0) plain 1F1B, the backward not split, which
		 * the runtime can always fall back to (so ZB-H1 is never
		 * slower than 1F1B, except where pipeline transfers share
		 * the NICs with the gradient reduction: the order is chosen
		 * without that sharing, below, and played with it, so it can
		 * come out slower; the search ranks the 1F1B layout on its
		 * own, so it wins there); (1) 1F1B with each W right after its B
		 * (the B's output leaves before W, but the layers' gradients
		 * are ready only over W, so their reduction starts later);
		 * (2) a greedy play with instant transfers -- a free rank
		 * runs a ready B, else a ready F within the 1F1B limit and
		 * the memory budget (zb_next), else its oldest pending W, the
		 * W's that fill the bubbles -- its order then played with the
		 * transfers.  Each wins somewhere: (2) on 175B over 4480 A100s
		 * at pp 35 (before the memory budget 4.95 s against 5.64 s for
		 * 1F1B; with it, tp 4 cp 2: 5.30 s against 5.79 s), (1) on
		 * 405B at pp 32 with 1024 micro-batches
		 * (540.2 s against 542.3 s), (0) at pp 2 with 2 micro-batches
		 * and the gradient reduction exposed.  The same greedy played
		 * with the transfers in flight came out at most 0.3 % better
		 * where the transfers block, and worse elsewhere (a W started
		 * while a B's input was a transfer away delays the critical
		 * path); it would add half again to the search's time.
		 */
		double end[3], pe = 0;
		int c, best = 0;
		for (c = 0; c < 3 && !rc; c++) {
			s.split = c > 0;
			if (c < 2) {
				build_orders(&s, c);
			} else if (!in->cache || !zb_order_get(in->cache, &s)) {
				s.instant = 1; /* the greedy keeps its order */
				rc = run_passes(&s, in, 1, 1, NULL, 0, &nev, rank_end, dp_end, &pe,
						&end[c], err);
				s.instant = 0;
				if (!rc && in->cache)
					zb_order_put(in->cache, &s);
			}
			if (!rc)
				rc = run_passes(&s, in, 0, 1, NULL, 0, &nev, rank_end, dp_end, &pe,
						&end[c], err);
			if (!rc && end[c] < end[best])
				best = c;
		}
		/* the order chosen (without the NIC sharing, which the
		 * schedule cannot foresee), then played in full; the last
		 * played stands where nothing is left to add */
		s.split = best > 0;
		if (!rc && best < 2)
			build_orders(&s, best);
		if (!rc && best == 2 && !s.share && !events) {
			pipe_end = pe;
			step_end = end[2];
		} else if (!rc) {
			rc = run_passes(&s, in, 0, 0, events, cap, &nev, rank_end, dp_end, &pipe_end,
					&step_end, err);
		}
	}
	if (rc)
		goto out;
	for (r = 0; r < s.p; r++) {
		double busy = 0;
		for (k = r; k < s.n; k += s.p)
			busy += s.m * (st->f_s[k] + st->b_s[k] + st->w_s[k]);
		if (busy > busy_max)
			busy_max = busy;
	}
	out->pipeline_s = pipe_end;
	out->idle_s = pipe_end - busy_max;
	step_end += in->dp_tail_s;
	out->dp_exposed_s = step_end - pipe_end;
	for (r = 0; r < s.p; r++)
		if (dp_end[r] > 0)
			record(events, cap, &nev, r, -1, -1, TPP_EV_DP, s.dp_lo[r], dp_end[r]);
	/* what the step adds after the pipeline and its buckets (the ZeRO
	 * traffic priced analytically, the exposed parameter gather): one
	 * data-parallel span over all ranks, so the timeline has no gap */
	if (in->dp_tail_s > 0)
		record(events, cap, &nev, -1, -1, -1, TPP_EV_DP, step_end - in->dp_tail_s, step_end);
	record(events, cap, &nev, -1, -1, -1, TPP_EV_OPT, step_end, step_end + in->optimizer_s);
	out->step_s = step_end + in->optimizer_s;
	out->nevents = nev;
out:
	for (i = 0; i < 3; i++)
		free(s.done[i]);
	free(s.ops);
	free(s.nops);
	free(s.ptr);
	free(s.free_at);
	free(s.dp_lo);
	free(s.dp_hi);
	free(s.iv_lo);
	free(s.iv_hi);
	free(s.iv_off);
	free(s.iv_n);
	free(s.iv_tag);
	for (i = 0; i < 3; i++)
		free(s.idx[i]);
	for (i = 0; i < 2; i++) {
		free(s.dep[i]);
		free(s.dep0[i]);
	}
	free(dp_end);
	free(rank_end);
	return rc;
}

int tpp_sim_run(const struct tpp_model *m, const struct tpp_cluster *c,
		const struct tpp_cost_opts *o, const struct tpp_layout *l,
		const struct tpp_eval *e, struct tpp_sim_result *out,
		struct tpp_sim_event *events, size_t cap, struct tpp_err *err)
{
	return tpp_sim_run_cached(m, c, o, l, e, NULL, out, events, cap, err);
}

int tpp_sim_run_cached(const struct tpp_model *m, const struct tpp_cluster *c,
		       const struct tpp_cost_opts *o, const struct tpp_layout *l,
		       const struct tpp_eval *e, struct tpp_sim_cache *cache,
		       struct tpp_sim_result *out, struct tpp_sim_event *events, size_t cap,
		       struct tpp_err *err)
{
	struct tpp_stages *st = malloc(sizeof(*st));
	struct tpp_sim_input in;
	int rc;

	if (!st)
		return tpp_err_set(err, TPP_E_SYSTEM, NULL, 0, 0, "out of memory");
	if ((rc = tpp_cost_stages(m, c, o, l, st, err))) {
		free(st);
		return rc;
	}
	memset(&in, 0, sizeof(in));
	in.st = st;
	in.cache = cache;
	in.zb = l->zb;
	/* FSDP2 under pipelining reduce-scatters after a rank's last
	 * backward (tpp_zero_pipelined), as without overlap */
	in.dp_overlap = o->dp_overlap && !tpp_zero_pipelined(l);
	/* Pipeline transfers and DP buckets share a rank's NICs when both
	 * groups leave the innermost domain. */
	in.share_nic = e->pp_tier > 0 && e->dp_tier > 0;
	/* ZeRO-3 (pp = 1) keeps the analytic per-micro-batch traffic; ZeRO-1/2
	 * and ZeRO-2/3 under pipelining add the exposed parameter gather
	 * after the reduction, and ZeRO-2 (pp = 1) the exposed reductions of
	 * the micro-batches before the last (which, with one stage, delay
	 * the step wherever they fall). */
	if (tpp_zero_per_microbatch(l)) {
		in.dp_grad_s = 0;
		in.dp_tail_s = e->t.dp_comm_s;
	} else {
		in.dp_grad_s = e->dp_grad_s;
		in.dp_tail_s = e->dp_param_exposed_s + e->dp_accum_exposed_s;
	}
	in.optimizer_s = e->t.optimizer_s;
	if (l->zb)
		in.zb_w_share = tpp_zb_w_share(m, o, l);
	rc = tpp_sim_stages(&in, out, events, cap, err);
	free(st);
	return rc;
}

int tpp_sim_eval(const struct tpp_model *m, const struct tpp_cluster *c,
		 const struct tpp_cost_opts *o, const struct tpp_layout *l,
		 struct tpp_eval *out, struct tpp_err *err)
{
	return tpp_sim_eval_cached(m, c, o, l, NULL, out, err);
}

int tpp_sim_eval_cached(const struct tpp_model *m, const struct tpp_cluster *c,
			const struct tpp_cost_opts *o, const struct tpp_layout *l,
			struct tpp_sim_cache *cache, struct tpp_eval *out, struct tpp_err *err)
{
	struct tpp_eval e;
	struct tpp_sim_result r;
	double idle, p2p;
	int rc;

	if ((rc = tpp_cost_eval(m, c, o, l, &e, err)))
		return rc;
	if ((rc = tpp_sim_run_cached(m, c, o, l, &e, cache, &r, NULL, 0, err)))
		return rc;
	/* compute / recompute / TP / CP parts stay those of the busiest rank;
	 * its idle time inside the pipeline is split into transfers (up to
	 * their analytic share, tpp_cost_eval's pp_p2p: every transfer when
	 * they block the sender, else the 2 (p v - 1) in flight on the fill
	 * and drain path) and bubble; the rest is DP and optimizer. */
	idle = r.idle_s > 0 ? r.idle_s : 0;
	p2p = e.t.pp_p2p_s < idle ? e.t.pp_p2p_s : idle;
	e.t.pp_p2p_s = p2p;
	e.t.bubble_s = idle - p2p;
	e.t.dp_comm_s = r.dp_exposed_s;
	e.step_s = 0;
	for (int i = 0; i < TPP_TIME_PARTS; i++)
		e.step_s += tpp_time_part(&e.t, i);
	/* the parts add up to the simulated step up to rounding */
	TPP_ASSERT(e.step_s <= r.step_s * (1 + 1e-9) + 1e-12 &&
		   e.step_s >= r.step_s * (1 - 1e-9) - 1e-12);
	e.simulated = 1;
	tpp_eval_set_step(&e, m, c, o, r.step_s);
	*out = e;
	return TPP_OK;
}

struct tpp_sim_event *tpp_sim_events_new(const struct tpp_layout *l, int microbatches,
					 size_t *cap)
{
	size_t cells = (size_t)(microbatches > 0 ? microbatches : 0) * (size_t)l->vp * (size_t)l->pp;
	*cap = 0;
	if (cells > TPP_SIM_MAX_CELLS)
		return NULL;
	*cap = 3 * cells + (size_t)l->pp + 8;
	return malloc(*cap * sizeof(struct tpp_sim_event));
}
