#!/usr/bin/env bash
# OpenMP scaling of scheduled tcc kernels: each DSL program without a
# schedule (serial) and with a parallel schedule, the latter at 1 and N
# threads, on generated matrices large enough for threads to pay off.
# Prints a Markdown table; every kernel's result is checked against the
# serial one before it is timed.
#   bench/openmp/run.sh [BUILD_DIR] [THREADS]    (THREADS defaults to 2)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/release}"
threads="${2:-2}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A: 400,000 x 400,000 with 12 nonzeros per row; S: 100,000 x 100,000 with
# 8 per row (SpGEMM, sparse add); dense operands (seeded).
python3 - "$work" <<'PY'
import random, sys
work = sys.argv[1]
random.seed(2026)
def matrix(name, n, per_row):
    with open(f"{work}/{name}.mtx", "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{n} {n} {n * per_row}\n")
        for i in range(1, n + 1):
            for j in random.sample(range(1, n + 1), per_row):
                f.write(f"{i} {j} {random.uniform(0.5, 1.5):.6f}\n")
def dense(name, rows, columns):
    with open(f"{work}/{name}.tns", "w") as f:
        for r in range(1, rows + 1):
            for c in range(1, columns + 1):
                f.write(f"{r} {c} {random.uniform(-1, 1):.6f}\n" if columns > 1 else f"{r} {random.uniform(-1, 1):.6f}\n")
n, rank = 400000, 16
matrix("A", n, 12)
matrix("S", 100000, 8)
matrix("T", 100000, 8)
dense("x", n, 1)
dense("B", n, rank)
dense("Bt", rank, n)
PY

# The programs: bench/openmp/programs/NAME_serial.tc (no schedule) and
# NAME_parallel.tc (the same program with a parallel schedule).
programs="$root/bench/openmp/programs"
declare -A inputs
inputs[spmv]="--in A=$work/A.mtx --in x=$work/x.tns"
inputs[spmm]="--in A=$work/A.mtx --in B=$work/B.tns"
inputs[spmm_rows]="${inputs[spmm]}"
inputs[sddmm]="--in B=$work/A.mtx --in C=$work/B.tns --in D=$work/Bt.tns"
inputs[spgemm]="--in B=$work/S.mtx --in C=$work/T.mtx"
inputs[add]="--in B=$work/S.mtx --in C=$work/T.mtx"

median_ms() {  # FILE INPUTS... -> median kernel time in ms
  "$build/tcc" run "$@" --time --repeat 11 | sed -n 's/.*run: \([0-9.]*\) \(us\|ms\|s\) .*/\1 \2/p' |
    awk '{ print ($2 == "us") ? $1 / 1000 : ($2 == "s") ? $1 * 1000 : $1 }'
}

echo "| kernel | schedule | serial ms | parallel, 1 thread ms | parallel, $threads threads ms | speedup ($threads threads vs serial) |"
echo "|---|---|---:|---:|---:|---:|"
for name in spmv spmm spmm_rows sddmm spgemm add; do
  serial_program="$programs/${name}_serial.tc"
  parallel_program="$programs/${name}_parallel.tc"
  read -r -a args <<< "${inputs[$name]}"
  output=$(sed -n 's/^\([A-Za-z]*\)(.*) = .*/\1/p' "$serial_program")
  OMP_NUM_THREADS=1 "$build/tcc" run "$serial_program" "${args[@]}" --out "$output=$work/serial.tns" > /dev/null
  OMP_NUM_THREADS="$threads" "$build/tcc" run "$parallel_program" "${args[@]}" --out "$output=$work/parallel.tns" > /dev/null
  python3 - "$work/serial.tns" "$work/parallel.tns" <<'PY'
import sys
def entries(path):
    with open(path) as f:
        return [list(map(float, l.split())) for l in f if l.strip() and not l.startswith("#")]
a, b = entries(sys.argv[1]), entries(sys.argv[2])
assert len(a) == len(b), "parallel result differs in entry count"
for x, y in zip(a, b):
    assert x[:-1] == y[:-1] and abs(x[-1] - y[-1]) <= 1e-9 * max(1.0, abs(x[-1])), f"{x} != {y}"
PY
  serial=$(OMP_NUM_THREADS=1 median_ms "$serial_program" "${args[@]}")
  one=$(OMP_NUM_THREADS=1 median_ms "$parallel_program" "${args[@]}")
  many=$(OMP_NUM_THREADS="$threads" median_ms "$parallel_program" "${args[@]}")
  speedup=$(awk -v s="$serial" -v t="$many" 'BEGIN { printf "%.2f", s / t }')
  schedule=$(awk '/^}/ { inside = 0 } inside { sub(/^[ \t]+/, ""); text = text (text ? "; " : "") $0 }
                  /^schedule \{/ { inside = 1 } END { print text }' "$parallel_program")
  echo "| $name | \`$schedule\` | $serial | $one | $many | $speedup |"
done
