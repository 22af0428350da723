# mpi_env.sh - sourced by the MPI test scripts (POSIX sh): the environment
# for running tpplan under mpiexec as root in a container, the pass/fail
# counters, a temporary directory $dir removed on exit, and $mpiflags.
#   OMPI_ALLOW_RUN_AS_ROOT*      CI runs as root
#   btl_vader_single_copy...     no CMA/ptrace in containers
#   rmaps_base_oversubscribe     more ranks than cores
#   btl self,vader, pml ob1      every rank is on this machine: shared
#                                memory only, no network transports
#                                probed at each start (half of a small
#                                run's launch here)
#   LSAN_OPTIONS suppressions    Open MPI's own allocations outlive
#                                MPI_Finalize: tests/mpi/lsan-openmpi.supp
#                                suppresses leaks allocated under its
#                                libraries (full stacks:
#                                fast_unwind_on_malloc=0); tpplan's own
#                                stay checked where the suite asks for
#                                leak detection (scripts/test.sh)
# Use: tpp_mpi_setup NAME (NAME names the temporary directory); $root is
# the repository root.
tpp_mpi_setup() {
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export OMPI_MCA_btl_vader_single_copy_mechanism=none
	export OMPI_MCA_rmaps_base_oversubscribe=1
	export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
	export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$root/tests/mpi/lsan-openmpi.supp:print_suppressions=0"
	pass=0
	fail=0
	dir=$(mktemp -d "${TMPDIR:-/tmp}/tpp-$1.XXXXXX") || exit 1
	trap 'rm -rf "$dir"' EXIT INT TERM
	if ! command -v mpiexec >/dev/null 2>&1; then
		echo "mpiexec not found"
		echo "0 passed, 1 failed"
		exit 1
	fi
	mpiflags=""
	if mpiexec --version 2>&1 | grep -q -e "Open MPI" -e OpenRTE; then
		mpiflags="--allow-run-as-root --oversubscribe"
	fi
}
ok() { pass=$((pass + 1)); echo "ok:   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
# usage_error SUBCOMMAND WHAT ARGS...: `tpplan SUBCOMMAND ARGS` exits 2 with
# a message (usage errors are caught before MPI starts); needs $tpplan.
usage_error() {
	sub=$1
	what=$2
	shift 2
	"$tpplan" "$sub" "$@" >/dev/null 2>"$dir/usage.txt"
	rc=$?
	if [ "$rc" -eq 2 ] && [ -s "$dir/usage.txt" ]; then
		ok "usage: $what: exit 2"
	else
		bad "usage: $what: exit $rc"
	fi
}
