#!/bin/bash
# The GPU check of the CUDA path, run on a lent device machine from the
# repository root with .devrun/ carried (scripts/device-pack.sh makes it):
# exec's cuBLAS layers against the fp64 reference in bf16 and fp32,
# calibrate's cuBLAS GEMMs (one rank: no collectives), exec's predictions
# with that calibration, and a plan with it.  Each step's output goes to
# $OUT/NAME.out / .err; about 3-5 minutes.  Device tool call:
#   run(command="bash .devrun/bin/device-check.sh", carry=[".devrun"], timeout_s=480)
R=/tmp/r; mkdir -p $R; tar -xzf .devrun/root.tar.gz -C $R || exit 9
head -n 2 /etc/os-release 2>/dev/null; echo "host $(getconf GNU_LIBC_VERSION 2>/dev/null)"
lib() { find / -xdev -name "$1" 2>/dev/null | grep -v "^$R" | head -1; }
NC=$(lib 'libnccl.so.2'); CB=$(lib 'libcublas.so.13'); CR=$(lib 'libcudart.so.13'); CL=$(lib 'libcublasLt.so.13')
echo "nccl=$NC cublas=$CB cudart=$CR cublasLt=$CL"
export LD_LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu:$R/usr/lib/x86_64-linux-gnu/openmpi/lib:$(dirname "$NC"):$(dirname "$CB"):$(dirname "$CR"):$(dirname "$CL"):${LD_LIBRARY_PATH:-}
export OPAL_PREFIX=$R/usr PATH=$R/usr/bin:$PATH OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=.devrun/bin/tpplan; chmod +x $B .devrun/bin/*.so
# a glibc older than the packing machine's (Debian 12: 2.36), or
# DEVCHECK_LOADER=1: tpplan through the packed loader and C runtime
# (/proc/self/exe is then the loader: the cuda module is found through
# the library path, which names .devrun/bin)
hv=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ "${DEVCHECK_LOADER:-0}" = 1 ] || [ -z "$hv" ] || [ "$(printf '%s\n' 2.36 "$hv" | sort -V | head -n 1)" != 2.36 ]; then
  W=$R/tpplan.sh; printf '#!/bin/sh\nexec %s/glibc/ld-linux-x86-64.so.2 --library-path "%s/glibc:$LD_LIBRARY_PATH:%s" "%s" "$@"\n' "$R" "$R" "$PWD/.devrun/bin" "$PWD/$B" >$W
  chmod +x $W; echo "host glibc ${hv:-unknown} (packed: 2.36), DEVCHECK_LOADER=${DEVCHECK_LOADER:-0}: tpplan through the packed loader"; B=$W
fi
nvidia-smi -L
echo "== ldd"; ldd .devrun/bin/tpplan | grep -i "not found"; ldd .devrun/bin/tpp_backend_cuda.so | grep -i "not found"
run() { name=$1; shift; echo "== $name: $*"; s=$(date +%s); timeout 150 "$@" >$OUT/$name.out 2>$OUT/$name.err; rc=$?; echo "rc=$rc $(( $(date +%s) - s )) s"; tail -n 25 $OUT/$name.out; tail -n 8 $OUT/$name.err; }
run exec-bf16 $B exec --backend cuda --model 125m --seq 512 --layers 2 --iters 5 --json
if grep -q -i "orte\|pmix\|mpi_init\|MPI_Init" $OUT/exec-bf16.err; then
  echo "== singleton failed: with mpiexec"; MPX="mpiexec --allow-run-as-root -np 1"
  run exec-bf16-mpx $MPX $B exec --backend cuda --model 125m --seq 512 --layers 2 --iters 5 --json
else MPX=""; fi
run exec-fp32 $MPX $B exec --backend cuda --precision fp32 --model 125m --seq 512 --layers 2 --iters 5
run cal $MPX $B calibrate --backend cuda --no-progress --gemm-precisions bf16,fp32 --model llama3-8b --max-tp 1 --gemm-settle 10 --iters 10 --warmup 3 --out $OUT/cal-h200.yaml
run exec-cal $MPX $B exec --backend cuda --model 125m --seq 512 --layers 2 --iters 5 --cluster dgx-h200 --calibration $OUT/cal-h200.yaml
run plan-cal $B --model llama3-8b --cluster dgx-h200 --gpus 8 --top 3 --calibration $OUT/cal-h200.yaml
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv
