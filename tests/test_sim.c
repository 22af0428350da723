/*
 * test_sim.c - the event-level pipeline simulator against closed forms and
 * hand-checked small cases.
 */
#include "tpp_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim.h"

static struct tpp_stages st;

/* p ranks, v chunks each, m micro-batches; every chunk F, B, W seconds. */
static void uniform(int p, int v, int m, double f, double b, double w)
{
	int k;
	memset(&st, 0, sizeof(st));
	st.pp = p;
	st.vp = v;
	st.nchunks = p * v;
	st.microbatches = m;
	for (k = 0; k < st.nchunks; k++) {
		st.layers[k] = 1;
		st.f_s[k] = f;
		st.b_s[k] = b;
		st.w_s[k] = w;
	}
}

static int share_passes; /* 0: the two-pass sharing; n: a fixed point */

static double run(int zb, double dp_grad, int overlap, int share,
		  struct tpp_sim_result *r)
{
	struct tpp_sim_input in;
	struct tpp_err err;
	struct tpp_sim_result tmp;
	memset(&in, 0, sizeof(in));
	in.st = &st;
	in.zb = zb;
	in.dp_grad_s = dp_grad;
	in.dp_overlap = overlap;
	in.share_nic = share;
	in.share_passes = share_passes;
	if (!r)
		r = &tmp;
	if (tpp_sim_stages(&in, r, NULL, 0, &err)) {
		fprintf(stderr, "sim failed: %s\n", err.msg);
		return -1;
	}
	return r->step_s;
}

static void test_closed_forms(void)
{
	static const int ps[] = {1, 2, 4, 8};
	static const int ms[] = {8, 16, 64};
	size_t i, j;
	for (i = 0; i < TPP_ARRAY_LEN(ps); i++)
		for (j = 0; j < TPP_ARRAY_LEN(ms); j++) {
			int p = ps[i], m = ms[j], v;
			/* 1F1B: (m + p - 1) (F + B + W) */
			uniform(p, 1, m, 1.0, 1.3, 0.7);
			CHECK_REL(run(0, 0, 1, 0, NULL), (m + p - 1) * 3.0, 1e-12);
			/* interleaved: (m + (p - 1) / v) (F + B + W) per rank */
			for (v = 2; v <= 4 && p > 1; v++) {
				uniform(p, v, m, 1.0 / v, 1.3 / v, 0.7 / v);
				CHECK_REL(run(0, 0, 1, 0, NULL),
					  (m + (double)(p - 1) / v) * 3.0, 1e-12);
			}
			/* ZB-H1: m (F + B + W) + (p - 1) (F + B - W) */
			if (p > 1) {
				uniform(p, 1, m, 1.0, 1.0, 1.0);
				CHECK_REL(run(1, 0, 1, 0, NULL), m * 3.0 + (p - 1) * 1.0, 1e-12);
			}
		}
	/* ZB-H1 with fewer micro-batches than stages: fewer W to defer, the
	 * bubble (p - 1)(F + B - W) + (p - m) W (m = 1: the chain
	 * p F + p B + W), as cost.c's analytic step has it */
	for (i = 1; i < TPP_ARRAY_LEN(ps); i++) {
		int p = ps[i], m;
		for (m = 1; m < p; m++) {
			uniform(p, 1, m, 1.0, 1.0, 1.0);
			CHECK_REL(run(1, 0, 1, 0, NULL), m * 3.0 + (p - 1) * 1.0 + (p - m) * 1.0, 1e-12);
		}
	}
}

/*
 * One slow rank (an extra layer: 1.5x the work, i.e. +D = 1.5 s per
 * micro-batch) sets the pace of the steady state.  Under 1F1B rank s adds
 * D for every micro-batch except the p - 1 - s whose extra time hides in
 * the fill of the ranks after it: + D (m - (p - 1 - s)).  The analytic
 * (m - 1) t_max + sum t is exact for the last rank and an upper estimate
 * otherwise.
 */
static void test_uneven(void)
{
	int p = 4, m = 16, slow;
	for (slow = 0; slow < p; slow++) {
		double base, t_sum = 0, t_max = 0, got;
		int k;
		uniform(p, 1, m, 1.0, 1.2, 0.8);
		base = run(0, 0, 1, 0, NULL);
		CHECK_REL(base, (m + p - 1) * 3.0, 1e-12);
		st.layers[slow] = 2;
		st.f_s[slow] *= 1.5;
		st.b_s[slow] *= 1.5;
		st.w_s[slow] *= 1.5;
		for (k = 0; k < p; k++) {
			double t = st.f_s[k] + st.b_s[k] + st.w_s[k];
			t_sum += t;
			t_max = t > t_max ? t : t_max;
		}
		got = run(0, 0, 1, 0, NULL);
		CHECK_REL(got - base, 1.5 * (m - (p - 1 - slow)), 1e-12);
		CHECK(got <= (m - 1) * t_max + t_sum + 1e-9);
		if (slow == p - 1)
			CHECK_REL(got, (m - 1) * t_max + t_sum, 1e-12);
	}
}

/*
 * Gradient reduction: overlap off adds it whole after the pipeline;
 * overlap on hides it behind the last micro-batch's backward except what
 * is left after the last layer's gradients (hand-checked: 4 layers, BW 2 s,
 * so layer buckets are ready at 0.5 s intervals).
 */
static void test_dp_overlap(void)
{
	struct tpp_sim_result r;
	uniform(1, 1, 1, 1.0, 1.5, 0.5);
	st.layers[0] = 4;
	CHECK_REL(run(0, 0, 1, 0, &r), 3.0, 1e-12);
	/* 1 s of reduction, 0.25 s per layer bucket */
	CHECK_REL(run(0, 1.0, 0, 0, &r), 4.0, 1e-12);          /* off: + 1 s */
	CHECK_REL(r.dp_exposed_s, 1.0, 1e-12);
	CHECK_REL(run(0, 1.0, 1, 0, &r), 3.25, 1e-12);         /* on: one bucket */
	CHECK_REL(r.dp_exposed_s, 0.25, 1e-12);
	/* 4 s: buckets from 1.5 s, back to back -> ends at 5.5 s */
	CHECK_REL(run(0, 4.0, 1, 0, &r), 5.5, 1e-12);
	CHECK_REL(run(0, 4.0, 0, 0, &r), 7.0, 1e-12);
}

/*
 * NIC sharing: rank 1 (the last) finishes first and starts its buckets;
 * the gradient it then sends back to rank 0 leaves while a bucket is in
 * flight, takes twice as long, and that delay is on the critical path.
 */
static void test_nic_sharing(void)
{
	struct tpp_sim_result a, b;
	uniform(2, 1, 4, 1.0, 1.5, 0.5);
	st.p2p_s = 0.1;
	run(0, 1.0, 1, 0, &a);
	run(0, 1.0, 1, 1, &b);
	/* exactly one transfer (the last backward's) overlaps a bucket */
	CHECK_REL(b.pipeline_s - a.pipeline_s, 0.1, 1e-9);
	CHECK(b.step_s > a.step_s);
	/* without a reduction there is nothing to share */
	CHECK_REL(run(0, 0, 1, 1, NULL), run(0, 0, 1, 0, NULL), 1e-12);

	/*
	 * Shared for the time it overlaps a bucket in flight, not for the
	 * span of the buckets: 4 layers a rank, 0.4 s of reduction, so
	 * 0.1 s buckets at 0.5 s intervals over the last BW (2 s), the last
	 * from its end, when the gradient leaves.  The 0.1 s transfer runs
	 * at half rate for that bucket's 0.1 s (0.05 s done), then at full
	 * rate (0.05 s more): +0.05 s, not +0.1 s.
	 */
	uniform(2, 1, 4, 1.0, 1.5, 0.5);
	st.layers[0] = st.layers[1] = 4;
	st.p2p_s = 0.1;
	run(0, 0.4, 1, 0, &a);
	run(0, 0.4, 1, 1, &b);
	CHECK_REL(b.pipeline_s - a.pipeline_s, 0.05, 1e-9);
	/* the bucket loses what the transfer took of the link */
	CHECK(b.step_s > a.step_s);

	/*
	 * A blocking send shares the link with its own op's bucket: the
	 * bucket is launched as the layer's gradient is done, before the
	 * output is sent.  p = 2, m = 1, F = 1, B + W = 2, transfer 0.5, one
	 * layer a rank, 1 s of reduction:
	 *   r0 F [0,1.5] (send); r1 F [1.5,2.5], BW [2.5,4.5], its bucket from
	 *   4.5; alone the send would end at 5 and r0's BW run [5,7], its
	 *   bucket [7,8]: step 8.  Shared, the 0.5 s send runs at half rate
	 *   inside r1's bucket [4.5,5.5]: ends 5.5, r0 BW [5.5,7.5], bucket
	 *   [7.5,8.5]; r1's bucket loses 0.5 s (ends 6): step 8.5.
	 */
	uniform(2, 1, 1, 1.0, 1.5, 0.5);
	st.p2p_s = 0.5;
	st.p2p_blocking = 1;
	run(0, 1.0, 1, 0, &a);
	run(0, 1.0, 1, 1, &b);
	CHECK_REL(a.step_s, 8.0, 1e-12);
	CHECK_REL(b.step_s, 8.5, 1e-12);
	CHECK_REL(b.pipeline_s, 7.5, 1e-12);
	/* overlap off: r1's bucket waits for the send, nothing shares */
	CHECK_REL(run(0, 1.0, 0, 1, NULL), run(0, 1.0, 0, 0, NULL), 1e-12);
	st.p2p_blocking = 0;

	/*
	 * A bucket loses to the transfers its rank sends and to those it
	 * receives.  Interleaved p = 2, v = 2, m = 2, F = B + W = 1 + 1
	 * (BW 2), transfers 0.5 in flight, one layer a chunk, 8 s of
	 * reduction a rank (4 s a bucket).  Without sharing: r1's buckets
	 * [10.5,14.5] (chunk 3) and [15.5,19.5], r0's [13,17] and [18,22].
	 * Shared (second pass, at first-pass departures against those):
	 * c3 mb1's gradient (r1 -> r0 at 10.5) and c2 mb1's (r0 -> r1 at
	 * 13) and c1 mb1's (r1 -> r0 at 15.5) leave inside the sender's
	 * bucket and take 1 s; c1 mb0's (at 12.5) also 1 s, r1's bucket
	 * [10.5,14.5] then.  So r0's BW c2 mb1 [11.5,13.5], c0 mb0
	 * [13.5,15.5], c0 mb1 [17.5,19.5]; r1's c1 mb1 [14.5,16.5].
	 * Buckets: r1 [10.5,14.5], [16.5,20.5]; r0 [13.5,17.5], [19.5,23.5].
	 * r1 loses 0.5 to each of its sends at 10.5, 12.5, 16.5 and to the
	 * gradient it receives at 13.5: 2 s, to 22.5; r0 to its send at
	 * 13.5 and to the gradient it receives at 16.5: 1 s, to 24.5.
	 */
	{
		struct tpp_sim_input in;
		struct tpp_sim_event ev[64];
		struct tpp_err err;
		size_t i;
		int seen = 0;
		uniform(2, 2, 2, 1.0, 1.0, 1.0);
		st.p2p_s = 0.5;
		memset(&in, 0, sizeof(in));
		in.st = &st;
		in.dp_grad_s = 8.0;
		in.dp_overlap = 1;
		in.share_nic = 1;
		CHECK(tpp_sim_stages(&in, &b, ev, TPP_ARRAY_LEN(ev), &err) == TPP_OK);
		CHECK_REL(b.pipeline_s, 19.5, 1e-12);
		CHECK_REL(b.step_s, 24.5, 1e-12);
		for (i = 0; i < b.nevents && i < TPP_ARRAY_LEN(ev); i++) {
			if (ev[i].kind != TPP_EV_DP || ev[i].rank < 0)
				continue;
			seen++;
			CHECK_REL(ev[i].start_s, ev[i].rank ? 10.5 : 13.5, 1e-12);
			CHECK_REL(ev[i].end_s, ev[i].rank ? 22.5 : 24.5, 1e-12);
		}
		CHECK(seen == 2);
		/* alone: r0's buckets end at 22, the step */
		in.share_nic = 0;
		CHECK(tpp_sim_stages(&in, &a, NULL, 0, &err) == TPP_OK);
		CHECK_REL(a.step_s, 22.0, 1e-12);
	}
}

/*
 * The two-pass sharing against the self-consistent one (passes repeated
 * until the step stops changing): the second pass prices each transfer at
 * its first-pass departure against the first pass's buckets, since a
 * rank's buckets move with its own delay.  Large transfers (a third of a
 * forward), uneven first and last chunks, every schedule, overlap and
 * blocking on and off.  Pricing at
 * the second pass's own departure (as before 2026-12-06, evening) was up to 10 %
 * short of the fixed point on interleaved layouts.
 */
static void test_nic_fixed_point(void)
{
	static const int ps[] = {2, 4, 8};
	size_t i;
	int v, zb, ov, blk, m, k;
	double worst = 0;
	for (i = 0; i < TPP_ARRAY_LEN(ps); i++)
		for (v = 1; v <= 3; v++)
			for (m = ps[i]; m <= 4 * ps[i]; m *= 2)
				for (zb = 0; zb <= (v == 1); zb++)
					for (ov = 0; ov <= 1; ov++)
						for (blk = 0; blk <= 1; blk++) {
							double two, fix, plain;
							uniform(ps[i], v, m, 1.0 / v, 1.3 / v, 0.7 / v);
							for (k = 0; k < st.nchunks; k++)
								st.layers[k] = 4;
							/* the embedding and the LM head */
							st.f_s[0] += 0.1;
							st.f_s[st.nchunks - 1] += 0.3;
							st.b_s[st.nchunks - 1] += 0.5;
							st.p2p_s = 0.3 / v;
							st.p2p_blocking = blk;
							plain = run(zb, 1.5, ov, 0, NULL);
							share_passes = 0;
							two = run(zb, 1.5, ov, 1, NULL);
							share_passes = 300;
							fix = run(zb, 1.5, ov, 1, NULL);
							share_passes = 0;
							/* sharing never speeds a step up */
							CHECK(two >= plain * (1 - 1e-12));
							CHECK(fix >= plain * (1 - 1e-12));
							if (fabs(two - fix) / fix > worst)
								worst = fabs(two - fix) / fix;
						}
	st.p2p_blocking = 0;
	printf("two-pass NIC sharing vs fixed point: worst %.2f %%\n", 100 * worst);
	CHECK(worst < 0.01);
}

/*
 * Blocking transfers (Megatron's batched isend/irecv + synchronize): the
 * sender is busy until its activation / gradient has arrived.  p = 2,
 * m = 2, F = 1, B + W = 2, transfer 0.5, by hand:
 *   overlapped: r0 F0 [0,1] F1 [1,2]; r1 F0 [1.5,2.5] B0 [2.5,4.5]
 *               F1 [4.5,5.5] B1 [5.5,7.5]; r0 B0 [5,7] B1 [8,10]  -> 10
 *   blocking:   r0 F0 [0,1.5] F1 [1.5,3]; r1 F0 [1.5,2.5] B0 [2.5,5]
 *               F1 [5,6] B1 [6,8.5]; r0 B0 [5,7] B1 [8.5,10.5]    -> 10.5
 */
static void test_blocking_p2p(void)
{
	static const int ps[] = {2, 4, 8};
	size_t i;
	int v;
	uniform(2, 1, 2, 1.0, 1.5, 0.5);
	st.p2p_s = 0.5;
	CHECK_REL(run(0, 0, 1, 0, NULL), 10.0, 1e-12);
	st.p2p_blocking = 1;
	CHECK_REL(run(0, 0, 1, 0, NULL), 10.5, 1e-12);
	/* never faster, and slower once transfers cost anything */
	for (i = 0; i < TPP_ARRAY_LEN(ps); i++)
		for (v = 1; v <= 3; v++) {
			double a, b;
			uniform(ps[i], v, 2 * ps[i] * 2, 1.0, 1.3, 0.7);
			st.p2p_s = 0.05;
			a = run(0, 0, 1, 0, NULL);
			st.p2p_blocking = 1;
			b = run(0, 0, 1, 0, NULL);
			CHECK(b > a);
			/* ZB-H1 is never slower than 1F1B (it can run 1F1B's
			 * order with each W right after its B), blocking or
			 * not; it plays the better of two fixed orders, each a
			 * longest path that grows with what a transfer costs,
			 * so transfers in flight cost more than none and
			 * blocking ones at least as much (the sender's next
			 * operation may have been waiting anyway) */
			if (v == 1) {
				double none;
				int blk;
				for (blk = 0; blk <= 1; blk++) {
					st.p2p_blocking = blk;
					CHECK(run(1, 0, 1, 0, NULL) <= run(0, 0, 1, 0, NULL) * (1 + 1e-12));
				}
				st.p2p_blocking = 0;
				st.p2p_s = 0;
				none = run(1, 0, 1, 0, NULL);
				st.p2p_s = 0.05;
				a = run(1, 0, 1, 0, NULL);
				st.p2p_blocking = 1;
				CHECK(a > none);
				CHECK(run(1, 0, 1, 0, NULL) >= a);
			}
		}
}

/*
 * ZB-H1 is never slower than 1F1B with the gradient reduction either: with
 * W right after B a chunk's layer gradients are ready only over W, so
 * their buckets start later than over 1F1B's whole backward, and with the
 * reduction exposed (2 micro-batches, 4 layers a chunk) that order alone
 * lost to 1F1B; plain 1F1B is among ZB-H1's orders.
 */
static void test_zb_with_reduction(void)
{
	int p, m, ov;
	for (p = 2; p <= 4; p++)
		for (m = 1; m <= 4; m++)
			for (ov = 0; ov <= 1; ov++) {
				int k;
				uniform(p, 1, m, 1.0, 1.5, 0.5);
				for (k = 0; k < p; k++)
					st.layers[k] = 4;
				st.p2p_s = 0.05;
				CHECK(run(1, 3.0, ov, 0, NULL) <= run(0, 3.0, ov, 0, NULL) * (1 + 1e-12));
			}
}

/* tpp_rank_layers is the sum of tpp_chunk_layers over a rank's chunks,
 * every layer is placed once, and chunks differ by at most one layer.
 * Among the middle ranks 1 .. p-2 each chunk of rank r holds at least as
 * many layers as the same chunk of rank r + 1: the cost model's per-rank
 * maxima (memory, parameters) visit only ranks 0, 1 and p-1 on it. */
static void test_layer_split(void)
{
	int L, p, v, r, k;
	for (L = 1; L <= 130; L += 7)
		for (p = 1; p <= 12; p++)
			for (v = 1; p * v <= L && v <= 6; v++) {
				int total = 0, lo = L, hi = 0;
				for (r = 0; r < p; r++) {
					int sum = 0;
					for (k = r; k < p * v; k += p)
						sum += tpp_chunk_layers(L, p * v, k);
					CHECK(tpp_rank_layers(L, p, v, r) == sum);
					total += sum;
					if (r >= 1 && r + 1 <= p - 2)
						for (k = 0; k < v; k++)
							CHECK(tpp_chunk_layers(L, p * v, k * p + r) >=
							      tpp_chunk_layers(L, p * v, k * p + r + 1));
				}
				for (k = 0; k < p * v; k++) {
					int nl = tpp_chunk_layers(L, p * v, k);
					lo = nl < lo ? nl : lo;
					hi = nl > hi ? nl : hi;
				}
				CHECK(total == L);
				CHECK(hi - lo <= 1 && lo >= 1);
			}
}

/* Event buffers: 3 per chunk and micro-batch plus the rank -1 rows; none
 * for a pipeline over TPP_SIM_MAX_CELLS (a 36 GiB request once). */
static void test_events_new(void)
{
	struct tpp_layout l;
	struct tpp_sim_event *ev;
	size_t cap = 1;
	memset(&l, 0, sizeof(l));
	l.pp = 4;
	l.vp = 3;
	ev = tpp_sim_events_new(&l, 16, &cap);
	CHECK(ev != NULL && cap == 3 * 16 * 12 + 4 + 8);
	free(ev);
	ev = tpp_sim_events_new(&l, TPP_SIM_MAX_CELLS / 12 + 1, &cap);
	CHECK(ev == NULL && cap == 0);
	ev = tpp_sim_events_new(&l, TPP_SIM_MAX_CELLS / 12, &cap);
	CHECK(ev != NULL && cap == 3 * (size_t)(TPP_SIM_MAX_CELLS / 12) * 12 + 12);
	free(ev);
}

int main(void)
{
	test_events_new();
	test_layer_split();
	test_closed_forms();
	test_uneven();
	test_dp_overlap();
	test_nic_sharing();
	test_nic_fixed_point();
	test_blocking_p2p();
	test_zb_with_reduction();
	return tpp_test_done("test_sim");
}
