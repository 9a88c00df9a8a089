#!/usr/bin/env bash
# Runs every ember test: sets up and builds (scripts/setup.sh), runs ctest on the Release build,
# then builds the tests, examples and tools with ASan+UBSan and runs them again (the tools read
# untrusted files too: quantize, perplexity, generate-model and template run under the sanitizers).
# Under the sanitizers (10-20x slower) tests that repeat one check over many equivalent cases run
# an evenly spread subset of them (tests/support/sanitized.hpp); the Release run takes them all.
#   scripts/test.sh             everything
#   SKIP_SANITIZERS=1 scripts/test.sh   no sanitizer builds
#   SKIP_AARCH64=1 scripts/test.sh      no ARM64 cross build
set -euo pipefail
cd "$(dirname "$0")/.."

# The ARM64 and sanitizer builds merge sources into unity files (CMAKE_UNITY_BUILD): about half
# the compile time on CI's 2 cores. The Release build keeps the library, tools and examples file
# by file, as users build them, so every such file is still checked to compile on its own; its
# test executables are merged in every build (tests/CMakeLists.txt, ember_test_flags).
unity=-DCMAKE_UNITY_BUILD=ON

# Each phase reports its wall time on stderr (CI's budget is 25 minutes on 2 cores).
phase_start=$(date +%s)
phase_done() {
  echo "test.sh: $1 took $(( $(date +%s) - phase_start )) s" >&2
  phase_start=$(date +%s)
}

# Packages only the tests use: nginx, for ember-server behind a load balancer (server_nginx).
export EXTRA_PACKAGES="nginx"
# In CI (CI=true) the benchmarks are not built: they run no test, and CI time is tight (2 cores).
if [ "${CI:-}" = true ]; then
  EXTRA_CMAKE_ARGS="-DEMBER_BUILD_BENCHMARKS=OFF" scripts/setup.sh
else
  scripts/setup.sh
fi
phase_done "setup and Release build"
ctest --test-dir build --output-on-failure -j "$(nproc)"
phase_done "Release ctest"

# ---- ARM64: cross build (scripts/build-aarch64.sh), kernel and end-to-end tests under qemu ------
# Once on a CPU with dotprod and i8mm (qemu's "max") and once on one without (Cortex-A53), so both
# the NEON and the dotprod paths run; cpu detection must pick the best path each CPU has.
if [ "${SKIP_AARCH64:-0}" != 1 ]; then
  EXTRA_CMAKE_ARGS=$unity scripts/build-aarch64.sh build-aarch64 test_kernels test_kquants test_model ember-perplexity
  # Every kernel test; end to end: the greedy reference ids ([e2e]; the rest of test_model is
  # kernel-independent and runs natively), a K-quant model's log-probabilities against the scalar
  # kernels' (perplexity_isa_agreement) and perplexity (F32, Q8_0, Q4_0 within 1% of llama.cpp,
  # once, on the CPU with every extension). qemu is 10-50x slower than native: keep this short.
  for cpu in max:neon_i8mm cortex-a53:neon; do
    tests='^(test_kernels|test_kquants|perplexity_isa_agreement)$'
    [ "${cpu%%:*}" = max ] && tests='^(test_kernels|test_kquants|perplexity_isa_agreement|perplexity_stories260K.*)$'
    EMBER_QEMU_CPU=${cpu%%:*} EMBER_EXPECT_ISA=${cpu##*:} \
      ctest --test-dir build-aarch64 --output-on-failure -j "$(nproc)" -R "$tests"
    EMBER_QEMU_CPU=${cpu%%:*} build-aarch64/run build-aarch64/bin/test_model "[e2e]"
  done
  phase_done "aarch64 build and qemu tests"
fi

if [ "${SKIP_SANITIZERS:-0}" != 1 ]; then
  BUILD_DIR=build-asan BUILD_TYPE=RelWithDebInfo \
    EXTRA_CMAKE_ARGS="-DEMBER_SANITIZE=ON -DEMBER_BUILD_BENCHMARKS=OFF -DEMBER_BUILD_TOOLS=ON $unity" \
    scripts/setup.sh
  phase_done "ASan/UBSan build"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -LE no-sanitizer
  phase_done "ASan/UBSan ctest"
fi

# ---- ThreadSanitizer: the thread pool, sessions on several threads sharing one Model, the engine -
# Builds only test_runtime, test_session and test_engine with -fsanitize=thread; runs the pool's
# tests, the multi-session case and the engine's thread cases (ember's pool is plain C++ atomics
# and futex waits, all visible to TSan; there is no OpenMP in the library).
if [ "${SKIP_SANITIZERS:-0}" != 1 ]; then
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMBER_TSAN=ON \
    -DEMBER_BUILD_EXAMPLES=OFF -DEMBER_BUILD_TOOLS=OFF -DEMBER_BUILD_BENCHMARKS=OFF $unity >/dev/null
  cmake --build build-tsan -j "$(nproc)" --target test_runtime test_session test_engine
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  build-tsan/bin/test_runtime
  build-tsan/bin/test_session "multi-session: 4 threads x 4 sessions on one Model equal sequential runs"
  # The batching engine: client threads submitting, cancelling and waiting while its worker runs.
  build-tsan/bin/test_engine "[threads]"
  phase_done "TSan build and tests"
fi
