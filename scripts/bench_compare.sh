#!/usr/bin/env bash
# A/B speed table of two ember builds (and optionally llama.cpp) on the same models: ppN and tgN
# runs interleaved round by round (the order alternates every round, so drift on a shared machine
# hits both sides alike), one repetition per run, medians over the rounds printed as markdown.
#   scripts/bench_compare.sh OLD_BUILD NEW_BUILD [options] MODEL.gguf...
#     -r N      rounds (default 5)          -t N   threads (default 2)
#     -p N[,N...]  prompt tokens, one length or several (default 512; e.g. 2,4,8,...,512)
#     -n N      generated tokens (default 128)
#     -d N      depth: tokens already in the context before each test (default 0)
#     --llama DIR   also run DIR/llama-bench in each round (e.g. /work/llama.cpp/build/bin)
# OLD_BUILD and NEW_BUILD are build folders holding bin/ember-bench, e.g. a build of an old
# commit (git archive COMMIT | tar -x -C build-old/src; cmake -S build-old/src -B build-old ...).
set -euo pipefail

usage() { sed -n '2,11p' "$0" >&2; exit 2; }
[ $# -ge 3 ] || usage
old=$1 new=$2
shift 2
rounds=5 threads=2 n_prompt=512 n_gen=128 depth=0 llama="" models=()
while [ $# -gt 0 ]; do
  case $1 in
    -r) rounds=$2; shift 2 ;;
    -t) threads=$2; shift 2 ;;
    -p) n_prompt=$2; shift 2 ;;
    -n) n_gen=$2; shift 2 ;;
    -d) depth=$2; shift 2 ;;
    --llama) llama=$2; shift 2 ;;
    -h|--help) usage ;;
    *) models+=("$1"); shift ;;
  esac
done
[ ${#models[@]} -gt 0 ] || usage
[[ $n_prompt =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "bench_compare: -p takes lengths separated by commas" >&2; exit 2; }
[[ $depth =~ ^[0-9]+$ ]] || { echo "bench_compare: -d takes a number of tokens" >&2; exit 2; }
for b in "$old" "$new"; do
  [ -x "$b/bin/ember-bench" ] || { echo "bench_compare: no $b/bin/ember-bench" >&2; exit 2; }
done
[ -z "$llama" ] || [ -x "$llama/llama-bench" ] || { echo "bench_compare: no $llama/llama-bench" >&2; exit 2; }

samples=$(mktemp)
trap 'rm -f "$samples"' EXIT

# One run: appends "model<TAB>test<TAB>side<TAB>tokens/s" lines for the pp and tg tests, named as
# ember-bench names them ("pp512", "tg128 @ d4096"). ember-bench takes one prompt length a
# process: the first also runs the tg test.
run_ember() {  # side build model
  local p n=$n_gen
  for p in ${n_prompt//,/ }; do
    "$2/bin/ember-bench" -m "$3" -p "$p" -n "$n" -d "$depth" -t "$threads" -r 1 -o csv --no-limits 2>/dev/null |
      awk -F, -v side="$1" -v m="$(basename "$3")" 'NR > 1 && $6 ~ /^(pp|tg)/ { print m "\t" $6 "\t" side "\t" $8 }' >>"$samples"
    n=0
  done
}
# llama-bench's CSV columns moved between versions: they are found by their header names, and
# quoted fields may hold commas (cpu_info).
run_llama() {  # model
  local d=()
  [ "$depth" = 0 ] || d=(-d "$depth")
  "$llama/llama-bench" -m "$1" -p "$n_prompt" -n "$n_gen" "${d[@]}" -t "$threads" -r 1 -o csv 2>/dev/null |
    awk -v m="$(basename "$1")" '
      function split_csv(line, f,   n, i, c, q, cur) {
        n = 0; q = 0; cur = ""
        for (i = 1; i <= length(line); ++i) {
          c = substr(line, i, 1)
          if (c == "\"") q = !q
          else if (c == "," && !q) { f[++n] = cur; cur = "" }
          else cur = cur c
        }
        f[++n] = cur
        return n
      }
      NR == 1 { n = split_csv($0, h); for (i = 1; i <= n; ++i) col[h[i]] = i; next }
      {
        if (!("n_prompt" in col) || !("n_gen" in col) || !("avg_ts" in col)) {
          print "bench_compare: llama-bench CSV without n_prompt, n_gen or avg_ts" > "/dev/stderr"; exit 1
        }
        split_csv($0, f)
        p = f[col["n_prompt"]]; g = f[col["n_gen"]]
        d = ("n_depth" in col) ? f[col["n_depth"]] : 0
        test = (p > 0) ? "pp" p : "tg" g
        if (d > 0) test = test " @ d" d
        print m "\t" test "\tllama.cpp\t" f[col["avg_ts"]]
      }' >>"$samples"
}

for ((round = 1; round <= rounds; ++round)); do
  echo "bench_compare: round $round/$rounds" >&2
  for model in "${models[@]}"; do
    if ((round % 2)); then sides=(old new); else sides=(new old); fi
    for side in "${sides[@]}"; do
      if [ "$side" = old ]; then run_ember old "$old" "$model"; else run_ember new "$new" "$model"; fi
    done
    [ -z "$llama" ] || run_llama "$model"
  done
done

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds, $threads threads, medians (t/s)"
sort -t$'\t' -k1,1 -k2,2V -k3,3 -k4,4g "$samples" | awk -F'\t' -v llama="$llama" '
  function flush() {
    if (key == "") return
    split(key, k, SUBSEP)
    med[k[3]] = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  function row(   o, w, l) {
    if (cur == "") return
    o = med["old"]; w = med["new"]; l = med["llama.cpp"]
    printf "| %s | %s | %.2f | %.2f | %.2fx |", cm, ct, o, w, (o > 0 ? w / o : 0)
    if (llama != "") printf " %.2f | %.2fx |", l, (l > 0 ? w / l : 0)
    printf "\n"
    delete med
  }
  BEGIN {
    printf "| model | test | old | new | new/old |"
    if (llama != "") printf " llama.cpp | new/llama |"
    printf "\n|---|---|---|---|---|"
    if (llama != "") printf "---|---|"
    printf "\n"
  }
  {
    if ($1 SUBSEP $2 SUBSEP $3 != key) { flush(); key = $1 SUBSEP $2 SUBSEP $3; n = 0 }
    if ($1 SUBSEP $2 != cur) { row(); cur = $1 SUBSEP $2; cm = $1; ct = $2 }
    v[++n] = $4
  }
  END { flush(); row() }'
