#!/usr/bin/env bash
# Runs every ember test: sets up and builds (scripts/setup.sh), runs ctest on the Release build,
# then builds the tests, examples and tools with ASan+UBSan and runs them again (the tools read
# untrusted files too: quantize, perplexity, generate-model and template run under the sanitizers).
#   scripts/test.sh             everything
#   SKIP_SANITIZERS=1 scripts/test.sh   only the Release build
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"

if [ "${SKIP_SANITIZERS:-0}" != 1 ]; then
  BUILD_DIR=build-asan BUILD_TYPE=RelWithDebInfo \
    EXTRA_CMAKE_ARGS="-DEMBER_SANITIZE=ON -DEMBER_BUILD_BENCHMARKS=OFF -DEMBER_BUILD_TOOLS=ON" \
    scripts/setup.sh
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -LE no-sanitizer
fi

# ---- ThreadSanitizer: sessions on several threads sharing one Model (session helper) ---------
# Builds only test_session with -fsanitize=thread and runs only the multi-session case, with
# one worker thread per session (EMBER_TSAN_THREADS=1) so that libgomp, which is not
# TSan-instrumented, never starts a parallel region.
if [ "${SKIP_SANITIZERS:-0}" != 1 ]; then
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMBER_TSAN=ON \
    -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_BUILD_TOOLS=OFF -DEMBER_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build build-tsan -j "$(nproc)" --target test_session
  EMBER_TSAN_THREADS=1 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    build-tsan/bin/test_session "multi-session: 4 threads x 4 sessions on one Model equal sequential runs"
fi
