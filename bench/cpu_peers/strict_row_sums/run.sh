#!/usr/bin/env bash
# Builds the strict row-sum loops of loops.c the way tcc's two backends
# build a kernel (the JIT: clang-16 -O3 -march=native -ffp-contract=off
# -fno-unroll-loops; the system compiler: g++ -O3 -march=native
# -ffp-contract=off) and times them on the real matrices of the peers bench,
# then prints each loop's geometric-mean speedup over `plain`.
#   bench/cpu_peers/strict_row_sums/run.sh [DATA_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=${1:-$here/../../../../shared/data/matrices}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
clang-16 -O3 -march=native -fPIC -ffp-contract=off -fno-unroll-loops -c "$here/loops.c" -o "$build/clang.o"
gcc -O3 -march=native -fPIC -ffp-contract=off -c "$here/loops.c" -o "$build/gcc.o"
for compiler in clang gcc; do
  g++ -O2 "$here/driver.cpp" "$build/$compiler.o" -o "$build/$compiler"
  echo "## $compiler (us a call)"
  for m in bcsstk16 bayer10 bcsstk13 dnn_n1024_l1 cryg2500 watt_2 bcspwr10 Pd G51 dwt_992; do
    "$build/$compiler" "$data/$m.mtx" "$m"
  done | tee "$build/$compiler.txt"
  awk '{ for (k = 2; k <= NF; k += 2) { s[$k] += log($3 / $(k + 1)); n[$k]++; if (!($k in lo) || $3 / $(k + 1) < lo[$k]) lo[$k] = $3 / $(k + 1); if (NR == 1) order[k / 2] = $k } }
       END { printf "geomean plain / loop:"; for (k = 1; k in order; k++) printf " %s %.2f (min %.2f)", order[k], exp(s[order[k]] / n[order[k]]), lo[order[k]]; print "" }' "$build/$compiler.txt"
done
