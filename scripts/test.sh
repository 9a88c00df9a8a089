#!/usr/bin/env bash
# Runs every ember test: sets up and builds (scripts/setup.sh), runs ctest on the Release build,
# then builds the tests with ASan+UBSan and runs them again.
#   scripts/test.sh             everything
#   SKIP_SANITIZERS=1 scripts/test.sh   only the Release build
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"

if [ "${SKIP_SANITIZERS:-0}" != 1 ]; then
  BUILD_DIR=build-asan BUILD_TYPE=RelWithDebInfo \
    EXTRA_CMAKE_ARGS="-DEMBER_SANITIZE=ON -DEMBER_BUILD_BENCHMARKS=OFF" scripts/setup.sh
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -LE no-sanitizer
fi
