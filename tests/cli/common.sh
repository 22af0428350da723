# shellcheck shell=sh disable=SC2034
# common.sh - sourced by test_cli.sh and test_report.sh (POSIX sh).
# cli_setup NAME "$@": the script's arguments must be TPPLAN REPO_ROOT;
# sets $BIN and $ROOT to them as absolute paths, and checks that $BIN is
# executable and jq is installed.  NAME prefixes the messages; exits 2 on
# bad arguments, 1 without jq.
cli_setup() {
	name=$1
	shift
	if [ $# -ne 2 ]; then
		echo "usage: $0 TPPLAN REPO_ROOT" >&2
		exit 2
	fi
	BIN=$1
	ROOT=$2
	case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
	case $ROOT in /*) ;; *) ROOT=$(pwd)/$ROOT ;; esac
	[ -x "$BIN" ] || { echo "$name: $BIN is not executable" >&2; exit 2; }
	command -v jq >/dev/null 2>&1 ||
		{ echo "$name: jq not found (sh scripts/deps.sh installs it)" >&2; exit 1; }
}
