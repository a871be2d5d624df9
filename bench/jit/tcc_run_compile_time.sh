#!/usr/bin/env bash
# Compile time of `tcc run --time` on the examples, for one or more tcc
# binaries measured in the same invocation, runs interleaved binary by binary.
# The disk cache is off (TCC_NO_DISK_CACHE=1), so every run compiles.
#   bench/jit/tcc_run_compile_time.sh [--runs N] LABEL=TCC_BINARY...
# Prints a table: per example and binary, the median and minimum compile ms
# of N runs, and each binary's median over the first one's.
set -euo pipefail
runs=5
if [[ "${1:-}" == "--runs" ]]; then runs=$2; shift 2; fi
(($# > 0)) || { echo "usage: $0 [--runs N] LABEL=TCC_BINARY..." >&2; exit 2; }
labels=() binaries=()
for argument in "$@"; do
  labels+=("${argument%%=*}")
  binaries+=("$(realpath "${argument#*=}")")
done
cd "$(dirname "$0")/../../examples"

examples=(spmv.tc spgemm*.tc)
header="| example |" rule="| --- |"
for label in "${labels[@]}"; do header+=" $label median ms | $label min ms |"; rule+=" ---: | ---: |"; done
for label in "${labels[@]:1}"; do header+=" $label / ${labels[0]} |"; rule+=" ---: |"; done
echo "$header"
echo "$rule"
for example in "${examples[@]}"; do
  read -r -a arguments <<<"$(sed -n 's/^# run: //p' "$example" | head -n 1)"
  declare -A times=()
  for ((run = 0; run < runs; ++run)); do
    for binary in "${binaries[@]}"; do
      line=$(TCC_NO_DISK_CACHE=1 "$binary" run --time "$example" "${arguments[@]}" 2>&1 | grep '^compile: ')
      times[$binary]+="$(sed 's/^compile: \([0-9.]*\) ms.*/\1/' <<<"$line") "
    done
  done
  row="| $example |" medians=()
  for binary in "${binaries[@]}"; do
    read -r median minimum < <(tr ' ' '\n' <<<"${times[$binary]}" | grep . | sort -g |
      awk '{v[NR] = $1} END {printf "%.1f %.1f\n", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1]}')
    row+=" $median | $minimum |"
    medians+=("$median")
  done
  for median in "${medians[@]:1}"; do row+=$(awk -v a="$median" -v b="${medians[0]}" 'BEGIN {printf " %.2f |", a / b}'); done
  echo "$row"
  unset times
done
