# shellcheck shell=sh disable=SC2154,SC2034
# gpu-common.sh - sourced by gpu-calibrate.sh and gpu-exec.sh (POSIX sh).
# gpu_setup NAME: report the GPU, check for mpiexec, configure and build
# tpplan in $build (Release; CUDA, NCCL and MPI required, not AUTO), and
# set $tpplan and $mpiflags.  NAME prefixes the messages.  Needs $root and
# $build; exits 4 when the tools or the build are missing.
gpu_setup() {
	name=$1
	if command -v nvidia-smi >/dev/null 2>&1; then
		nvidia-smi --query-gpu=index,name,memory.total,driver_version \
			--format=csv,noheader | head -n 1 | sed 's/^/gpu: /'
	else
		echo "$name: nvidia-smi not found; is there a GPU?" >&2
	fi
	command -v mpiexec >/dev/null 2>&1 || {
		echo "$name: mpiexec not found (sh scripts/deps.sh installs Open MPI)" >&2
		exit 4
	}

	mkdir -p "$build"
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
		-DTPP_WITH_MPI=ON -DTPP_WITH_CUDA=ON -DTPP_WITH_NCCL=ON >"$build/configure.log" 2>&1 || {
		cat "$build/configure.log" >&2
		echo "$name: configure failed (log above)" >&2
		exit 4
	}
	cmake --build "$build" -j "$(nproc 2>/dev/null || echo 4)" --target tpplan >/dev/null
	tpplan=$build/cli/tpplan

	mpiflags=""
	if mpiexec --version 2>&1 | grep -q -e "Open MPI" -e OpenRTE; then
		# root in containers; no CMA (ptrace) in most containers
		export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
		export OMPI_MCA_btl_vader_single_copy_mechanism=none
		mpiflags="--allow-run-as-root"
	fi
}
