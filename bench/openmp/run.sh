#!/usr/bin/env bash
# OpenMP scaling of scheduled tcc kernels: the same DSL program with and
# without `split + parallelize`, at 1 and 2 threads, on a generated matrix
# large enough for threads to pay off. Prints a Markdown table.
#   bench/openmp/run.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/release}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# 400,000 x 400,000, 12 nonzeros per row (seeded), and dense operands.
python3 - "$work" <<'PY'
import random, sys
work = sys.argv[1]
random.seed(2026)
n, per_row, rank = 400000, 12, 16
with open(f"{work}/A.mtx", "w") as f:
    f.write("%%MatrixMarket matrix coordinate real general\n")
    f.write(f"{n} {n} {n * per_row}\n")
    for i in range(1, n + 1):
        for j in random.sample(range(1, n + 1), per_row):
            f.write(f"{i} {j} {random.uniform(0.5, 1.5):.6f}\n")
with open(f"{work}/x.tns", "w") as f:
    for j in range(1, n + 1):
        f.write(f"{j} {random.uniform(-1, 1):.6f}\n")
with open(f"{work}/B.tns", "w") as f:
    for j in range(1, n + 1):
        for k in range(1, rank + 1):
            f.write(f"{j} {k} {random.uniform(-1, 1):.6f}\n")
PY

spmv='tensor y(I) : dense
tensor A(I, J) : csr
tensor x(J) : dense
y(i) = A(i, j) * x(j)'
spmm='tensor C(I, K) : dense
tensor A(I, J) : csr
tensor B(J, K) : dense
C(i, k) = A(i, j) * B(j, k)'
parallel='schedule {
  split(i, i0, i1, 64)
  parallelize(i0, CPUThread, NoRaces)
}'

median_ms() {  # FILE INPUTS... -> median kernel time in ms
  "$build/tcc" run "$@" --time --repeat 21 | sed -n 's/.*run: \([0-9.]*\) \(us\|ms\).*/\1 \2/p' |
    awk '{ print ($2 == "us") ? $1 / 1000 : $1 }'
}

echo "| kernel | serial ms | parallel, 1 thread ms | parallel, 2 threads ms | speedup (2 threads vs serial) |"
echo "|---|---:|---:|---:|---:|"
for name in spmv spmm; do
  program="${!name}"
  printf '%s\n' "$program" > "$work/$name.tc"
  printf '%s\n%s\n' "$program" "$parallel" > "$work/${name}_parallel.tc"
  if [ "$name" = spmv ]; then inputs=(--in "A=$work/A.mtx" --in "x=$work/x.tns"); else inputs=(--in "A=$work/A.mtx" --in "B=$work/B.tns"); fi
  serial=$(OMP_NUM_THREADS=1 median_ms "$work/$name.tc" "${inputs[@]}")
  one=$(OMP_NUM_THREADS=1 median_ms "$work/${name}_parallel.tc" "${inputs[@]}")
  two=$(OMP_NUM_THREADS=2 median_ms "$work/${name}_parallel.tc" "${inputs[@]}")
  speedup=$(awk -v s="$serial" -v t="$two" 'BEGIN { printf "%.2f", s / t }')
  echo "| $name | $serial | $one | $two | $speedup |"
done
