#!/bin/sh
# Install what tpplan needs from Debian's packages, skipping what is there.
# Run as root on Debian 12 (bookworm) or later.  Optional: CUDA toolkit and
# NCCL are used when present (e.g. /usr/local/cuda) and are never installed
# here.
set -eu
pkgs="build-essential cmake pkg-config libyaml-dev libgsl-dev libopenmpi-dev openmpi-bin libopenblas-dev gnuplot-nox jq"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "deps.sh: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
