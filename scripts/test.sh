#!/bin/sh
# Build tpplan twice -- a normal build and one with AddressSanitizer +
# UndefinedBehaviorSanitizer -- and run the whole ctest suite on both.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs"
# optimized (-O2 -g): the sanitizers check what the optimized code still
# does, at about twice the speed of -O0 for the suite's searches
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTPP_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	ctest --test-dir build-asan --output-on-failure -j "$jobs"
