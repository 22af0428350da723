#!/bin/sh
# gpu-calibrate.sh - build tpplan with CUDA, cuBLAS and NCCL and calibrate
# one GPU with `tpplan calibrate --backend cuda` in under 5 minutes.
#
# Usage, from any directory, on a machine with an NVIDIA GPU, the CUDA
# toolkit (cuBLAS), NCCL, MPI and OpenBLAS (sh scripts/deps.sh installs all
# but CUDA / NCCL):
#
#     sh scripts/gpu-calibrate.sh [OUT.yaml]
#
#   OUT.yaml            where to write the calibration (default
#                       $BUILD_DIR/calibration-gpu.yaml)
#   BUILD_DIR           build tree (default build-cuda in the repository)
#   CUDA_VISIBLE_DEVICES  which GPU (the first visible one is used)
#   NCCL_HOME           where NCCL is, when not under the CUDA toolkit
#
# What it measures on the one GPU:
#   - GEMM in bf16, fp16 and tf32 (cublasGemmEx, fp32 accumulation) over
#     model-like shapes: the QKV, attention-out, fused MLP up/gate and MLP
#     down GEMMs of Llama-3-8B-like (h 4096, ffn 14336) and
#     Llama-3-70B-like (h 8192, ffn 28672) layers at 4096 and 8192 tokens,
#     plus square 2048 .. 16384 (the "maximum achievable matmul" probes);
#   - no collectives: one rank has no group to time them on (run
#     `mpiexec -np 8 tpplan calibrate --backend cuda` on an 8-GPU node for
#     NVLink tables, across nodes for the network).
# Then prints tpplan's summary and the GEMM table.  Exit status: tpplan's.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-cuda}
out=${1:-$build/calibration-gpu.yaml}

# shellcheck source=scripts/gpu-common.sh
. "$root/scripts/gpu-common.sh"
gpu_setup gpu-calibrate

# M x N x K, M = tokens: QKV (GQA, 8 KV heads), attention out, MLP up+gate
# fused, MLP down; then square probes.
shapes="4096x6144x4096,4096x4096x4096,4096x28672x4096,4096x4096x14336"
shapes="$shapes,8192x6144x4096,8192x28672x4096,8192x4096x14336"
shapes="$shapes,4096x10240x8192,4096x8192x8192,4096x57344x8192,4096x8192x28672"
shapes="$shapes,2048x2048x2048,4096x4096x4096,8192x8192x8192,16384x16384x16384"

set +e
# shellcheck disable=SC2086
timeout 280 mpiexec $mpiflags -np 1 "$tpplan" calibrate --backend cuda \
	--out "$out" --collectives none --iters 20 --warmup 5 \
	--gemm-precisions bf16,fp16,tf32 --gemm-shapes "$shapes" --timeout 120 \
	--gemm-settle 10
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
	echo "gpu-calibrate: tpplan calibrate failed (exit $rc)" >&2
	exit "$rc"
fi

# ---- the GEMM table from the file --------------------------------------------------------
echo
printf '%-6s %7s %7s %7s %10s %9s\n' prec m n k time_us TFLOP/s
awk '
	/^[a-z]/ { sect = $1 }
	sect == "gemm:" && /precision:/ { p = $NF; gsub(/"/, "", p) }
	sect == "gemm:" && /^ *- *\[/ {
		s = $0; sub(/^ *- *\[/, "", s); sub(/\].*/, "", s)
		gsub(/,/, " ", s); split(s, v, " ")
		if (v[4] > 0)
			printf "%-6s %7d %7d %7d %10.1f %9.1f\n", p, v[1], v[2], v[3], v[4] * 1e6, 2 * v[1] * v[2] * v[3] / v[4] / 1e12
	}
' "$out"
echo "calibration: $out"
