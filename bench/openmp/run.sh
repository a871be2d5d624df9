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

declare -A program schedule inputs
program[spmv]='tensor y(I) : dense
tensor A(I, J) : csr
tensor x(J) : dense
y(i) = A(i, j) * x(j)'
schedule[spmv]='split(i, i0, i1, 32)
parallelize(i0, CPUThread, NoRaces)'
inputs[spmv]="--in A=$work/A.mtx --in x=$work/x.tns"

program[spmm]='tensor C(I, K) : dense
tensor A(I, J) : csr
tensor B(J, K) : dense
C(i, k) = A(i, j) * B(j, k)'
schedule[spmm]='split(i, i0, i1, 32)
pos(j, jpos, A(i, j))
split(jpos, jpos0, jpos1, 4)
reorder(i0, i1, jpos0, k, jpos1)
parallelize(i0, CPUThread, NoRaces)
parallelize(k, CPUVector, IgnoreRaces)'
inputs[spmm]="--in A=$work/A.mtx --in B=$work/B.tns"

program[sddmm]='tensor A(I, J) : csr
tensor B(I, J) : csr
tensor C(I, K) : dense
tensor D(K, J) : dense
A(i, j) = B(i, j) * C(i, k) * D(k, j)'
schedule[sddmm]='split(i, i0, i1, 32)
parallelize(i0, CPUThread, NoRaces)'
inputs[sddmm]="--in B=$work/A.mtx --in C=$work/B.tns --in D=$work/Bt.tns"

program[spgemm]='tensor A(I, J) : csr
tensor B(I, K) : csr
tensor C(K, J) : csr
A(i, j) = B(i, k) * C(k, j)'
schedule[spgemm]='precompute(B(i, k) * C(k, j), j, j)
split(i, i0, i1, 16)
parallelize(i0, CPUThread, NoRaces)'
inputs[spgemm]="--in B=$work/S.mtx --in C=$work/T.mtx"

program[add]='tensor A(I, J) : csr
tensor B(I, J) : csr
tensor C(I, J) : csr
A(i, j) = B(i, j) + C(i, j)'
schedule[add]='parallelize(i, CPUThread, NoRaces)'
inputs[add]="--in B=$work/S.mtx --in C=$work/T.mtx"

median_ms() {  # FILE INPUTS... -> median kernel time in ms
  "$build/tcc" run "$@" --time --repeat 11 | sed -n 's/.*run: \([0-9.]*\) \(us\|ms\|s\) .*/\1 \2/p' |
    awk '{ print ($2 == "us") ? $1 / 1000 : ($2 == "s") ? $1 * 1000 : $1 }'
}

echo "| kernel | schedule | serial ms | parallel, 1 thread ms | parallel, $threads threads ms | speedup ($threads threads vs serial) |"
echo "|---|---|---:|---:|---:|---:|"
for name in spmv spmm sddmm spgemm add; do
  printf '%s\n' "${program[$name]}" > "$work/$name.tc"
  printf '%s\nschedule {\n%s\n}\n' "${program[$name]}" "${schedule[$name]}" > "$work/${name}_parallel.tc"
  read -r -a args <<< "${inputs[$name]}"
  output=$(sed -n 's/^\([A-Za-z]*\)(.*) = .*/\1/p' "$work/$name.tc")
  OMP_NUM_THREADS=1 "$build/tcc" run "$work/$name.tc" "${args[@]}" --out "$output=$work/serial.tns" > /dev/null
  OMP_NUM_THREADS="$threads" "$build/tcc" run "$work/${name}_parallel.tc" "${args[@]}" --out "$output=$work/parallel.tns" > /dev/null
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
  serial=$(OMP_NUM_THREADS=1 median_ms "$work/$name.tc" "${args[@]}")
  one=$(OMP_NUM_THREADS=1 median_ms "$work/${name}_parallel.tc" "${args[@]}")
  many=$(OMP_NUM_THREADS="$threads" median_ms "$work/${name}_parallel.tc" "${args[@]}")
  speedup=$(awk -v s="$serial" -v t="$many" 'BEGIN { printf "%.2f", s / t }')
  echo "| $name | \`$(printf '%s' "${schedule[$name]}" | tr '\n' ' ' | sed 's/ $//')\` | $serial | $one | $many | $speedup |"
done
