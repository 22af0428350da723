#!/bin/sh
# Pack what the GPU check (scripts/device-check.sh) needs into .devrun/
# (ignored by git; name it in the device tool's `carry`): tpplan and its
# CUDA backend module from build/ (configured with the CUDA toolkit and
# NCCL, e.g. CUDA 13 as the lent H200 machines have), and, as one
# gzip archive, the shared libraries they load that such a machine lacks
# (libyaml, GSL, OpenBLAS, Open MPI with its plugins and help files, and
# glibc with its loader for an older system) -- not CUDA's, cuBLAS's or
# NCCL's, which the device check finds there.
# Usage, from the repository root after a CUDA build:
#   sh scripts/device-pack.sh
set -eu
cd "$(dirname "$0")/.."
[ -f build/cli/tpp_backend_cuda.so ] || { echo "device-pack: no build/cli/tpp_backend_cuda.so: build with the CUDA toolkit first" >&2; exit 1; }
mkdir -p .devrun/bin
# git's info/exclude: in a linked worktree .git is a file and the exclude
# file is the main repository's, which `git rev-parse --git-path` names
exclude=$(git rev-parse --git-path info/exclude 2>/dev/null) || exclude=.git/info/exclude
mkdir -p "$(dirname "$exclude")"
grep -qx "/.devrun/" "$exclude" 2>/dev/null || echo "/.devrun/" >>"$exclude"
cp build/cli/tpplan build/cli/tpp_backend_cuda.so scripts/device-check.sh .devrun/bin/
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
lib=$root/usr/lib/x86_64-linux-gnu
mkdir -p "$lib" "$root/usr/share" "$root/usr/bin"
# every shared library the binaries, Open MPI's plugins and its daemons
# load, but the C runtime's and CUDA's, followed through their own needs
skip='linux-vdso|/libc\.so|/libm\.so|ld-linux|libgcc_s|libstdc\+\+|libpthread|libdl\.so|librt\.so|libcudart|libcublas|libnccl|libcuda\.so|libz\.so|libnvidia'
todo="build/cli/tpplan build/cli/tpp_backend_cuda.so /usr/bin/orted /usr/bin/orterun $(ls /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so /usr/lib/x86_64-linux-gnu/openmpi/lib/*.so 2>/dev/null)"
seen=""
while [ -n "$todo" ]; do
	next=""
	for f in $todo; do
		for p in $(ldd "$f" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p' | grep -Ev "$skip"); do
			case " $seen " in *" $p "*) continue ;; esac
			seen="$seen $p"
			next="$next $p"
			cp -L "$p" "$lib/"
		done
	done
	todo=$next
done
cp -a /usr/lib/x86_64-linux-gnu/openmpi "$lib/"
[ -d /usr/lib/x86_64-linux-gnu/pmix2 ] && cp -a /usr/lib/x86_64-linux-gnu/pmix2 "$lib/"
cp -a /usr/share/openmpi "$root/usr/share/"
[ -d /usr/share/pmix ] && cp -a /usr/share/pmix "$root/usr/share/"
cp -L /usr/bin/orted /usr/bin/orterun "$root/usr/bin/"
ln -sf orterun "$root/usr/bin/mpiexec"
# this machine's C runtime and its dynamic loader, for a device machine
# whose glibc is older than the one these binaries were linked against
# (Debian 12: 2.36; Ubuntu 22.04 has 2.35, RHEL 9 2.34): device-check.sh
# then starts tpplan through this loader (singleton MPI: no orted)
mkdir -p "$root/glibc"
for p in $(ldd build/cli/tpplan build/cli/tpp_backend_cuda.so /usr/lib/x86_64-linux-gnu/openmpi/lib/*.so 2>/dev/null |
	sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*ld-linux[^ ]*\) .*/\1/p' |
	grep -E '/libc\.so|/libm\.so|ld-linux|libgcc_s|libstdc\+\+|libpthread|libdl\.so|librt\.so|libz\.so' | sort -u); do
	cp -L "$p" "$root/glibc/"
done
[ -e "$root/glibc/ld-linux-x86-64.so.2" ] || { echo "device-pack: no ld-linux-x86-64.so.2 found" >&2; exit 1; }
# gzip, not xz: every machine has gzip
tar -C "$root" -czf .devrun/root.tar.gz usr glibc
rm -f .devrun/root.tar.xz
du -sh .devrun
