#!/bin/sh
# gpu-exec.sh - build tpplan with CUDA, cuBLAS and NCCL and run `tpplan
# exec --backend cuda` on one GPU in under 5 minutes (about 1-2 on an
# A100 / H100; most of it is the build).
#
# Usage, from any directory, on a machine with an NVIDIA GPU, the CUDA
# toolkit (cuBLAS), NCCL, MPI and OpenBLAS (sh scripts/deps.sh installs all
# but CUDA / NCCL):
#
#     sh scripts/gpu-exec.sh [MODEL]
#
#   MODEL               model preset whose layer is run (default 6.7b:
#                       hidden 4096, 32 heads, ffn 16384, seq 2048)
#   BUILD_DIR           build tree (default build-cuda in the repository)
#   PRECISION           bf16 (default), fp16 or tf32
#   CUDA_VISIBLE_DEVICES  which GPU (the first visible one is used)
#
# What it runs, one after another, each bounded by `timeout`:
#   1. TP 1, real-size layer: 1 layer x 1 micro-batch of one sequence,
#      forward and backward, checked against the fp64 reference on the
#      host (CBLAS dgemm, some 10-30 s; bf16 tolerance 6e-2), times per
#      phase beside the datasheet prediction of the cluster preset
#      (dgx-h100);
#   2. the per-shard GEMMs of TP 1, 2, 4 and 8 of that model (QKV,
#      attention out, MLP up and down in forward, input-gradient and
#      weight-gradient orientation) timed one after another on the one GPU
#      by `tpplan calibrate --model` (the shapes a TP-t rank runs, so the
#      TP 2/4/8 compute is measured without 8 GPUs), written to a
#      calibration file;
#   3. TP 1 again, 2 layers x 2 micro-batches, unchecked, with that
#      calibration: measured vs the calibrated per-phase predictions.
# Exit status: the first failing step's (tpplan exit codes: 1 check failed,
# 4 backend / system error).  Not run in this repository's CI (no GPU).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-cuda}
model=${1:-6.7b}
prec=${PRECISION:-bf16}

# shellcheck source=scripts/gpu-common.sh
. "$root/scripts/gpu-common.sh"
gpu_setup gpu-exec
cal=$build/exec-gemm-calibration.yaml
run="--backend cuda --precision $prec --model $model --cluster dgx-h100"
run="$run --iters 5 --warmup 2 --timeout 90"

step() {
	what=$1
	shift
	echo
	echo "== $what"
	set +e
	# shellcheck disable=SC2086
	timeout 120 mpiexec $mpiflags -np 1 "$tpplan" "$@"
	rc=$?
	set -e
	if [ "$rc" -ne 0 ]; then
		echo "gpu-exec: $what failed (exit $rc)" >&2
		exit "$rc"
	fi
}

# shellcheck disable=SC2086
step "TP 1, $model layer, $prec, checked, vs datasheet" exec $run --layout tp=1 \
	--layers 1 --microbatches 1
step "per-shard GEMMs of TP 1/2/4/8 ($model), one after another" \
	calibrate --backend cuda --model "$model" --max-tp 8 \
	--gemm-precisions "$prec" --gemm-shapes 4096x4096x4096 \
	--collectives all_reduce,send_recv --max-bytes 64M --iters 10 --warmup 3 \
	--timeout 90 --out "$cal"
# shellcheck disable=SC2086
step "TP 1, $model layer, $prec, vs this GPU's calibration" \
	exec $run --layout tp=1 --layers 2 --microbatches 2 --no-check --calibration "$cal"
