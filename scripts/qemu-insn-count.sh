#!/usr/bin/env bash
# Counts the guest instructions one matmul executes under qemu-aarch64 (wall time under emulation
# is no proxy for hardware: qemu runs some instructions, sdot by element among them, as slow
# helper calls). Runs bench_matmul_reps with 1 and with 3 repetitions, logs every executed
# translation block (-d in_asm,exec,nochain), and prints the difference per matmul and per
# 16 rows x 256 values x token:
#   scripts/qemu-insn-count.sh BUILD_DIR TYPE PACKED TOKENS [ROWS=128] [ISA]
# BUILD_DIR: a scripts/build-aarch64.sh directory with bench_matmul_reps built:
#   EXTRA_CMAKE_ARGS=-DEMBER_BUILD_BENCHMARKS=ON scripts/build-aarch64.sh build-aarch64 bench_matmul_reps
# or a native x86-64 build directory (no `run` wrapper there): then qemu-x86_64 runs it on its
# `max` CPU (AVX2 and FMA; Debian 12's qemu has no AVX-512 or AVX-VNNI), ISA scalar or avx2.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: scripts/qemu-insn-count.sh BUILD_DIR TYPE PACKED TOKENS [ROWS] [ISA]" >&2; exit 2; }
dir=$1 type=$2 packed=$3 tokens=$4 rows=${5:-128} isa=${6:-}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
count() {  # instructions of each translation block (in_asm) times its executions (exec)
  python3 - "$log" <<'PY'
import collections, re, sys
size, runs, block, first, n = {}, collections.Counter(), False, None, 0
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("IN:"):
        block, first, n = True, None, 0
    elif block and (m := re.match(r"0x([0-9a-f]+):\s", line)):
        first = first if first is not None else int(m.group(1), 16)
        n += 1
        size[first] = n  # a block translated again (cache flush) is counted once
    elif line.startswith("Trace") and (m := re.search(r"/([0-9a-f]{8,16})/", line)):
        runs[int(m.group(1), 16)] += 1
    elif not line.strip():
        block = False
print(sum(size.get(pc, 0) * n for pc, n in runs.items()))
PY
}
declare -A total
for reps in 1 3; do
  if [ -x "$dir/run" ]; then
    EMBER_QEMU_CPU=${EMBER_QEMU_CPU:-max} "$dir/run" -d in_asm,exec,nochain -D "$log" \
      "$dir/bin/bench_matmul_reps" "$type" "$packed" "$tokens" "$reps" "$rows" $isa > /dev/null
  else
    qemu-x86_64 -cpu max -d in_asm,exec,nochain -D "$log" \
      "$dir/bin/bench_matmul_reps" "$type" "$packed" "$tokens" "$reps" "$rows" $isa > /dev/null
  fi
  total[$reps]=$(count)
done
per=$(((total[3] - total[1]) / 2))
echo "$type packed=$packed tokens=$tokens rows=$rows: $per instructions a matmul," \
     "$((per * 16 / rows / 8 / tokens)) per 16 rows x 256 values x token"
