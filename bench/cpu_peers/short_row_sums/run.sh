#!/usr/bin/env bash
# Builds the short-row sums of strict.c (strict mode: every loop's y must be
# `s_plain`'s bit for bit) and fast.c (fast mode: within 1e-12 of it) the
# way tcc's two backends build a kernel (the JIT: clang-16 -O3 -march=native
# -fno-unroll-loops, strict -ffp-contract=off, fast mode's flags; the system
# compiler: gcc -O3 -march=native, the same fp flags, fast mode's GCC
# attribute in fast.c), times them on Matrix Market files pinned to one core
# (taskset -c ${CORE:-1}) and prints each loop's 10th-percentile time in µs
# a call (ROUNDS interleaved rounds of CALLS calls).
#   bench/cpu_peers/short_row_sums/run.sh [DATA_DIR]   (COMPILERS="clang gcc", M="Pd bcspwr10 ...")
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data=${1:-$here/../../../../shared/data/matrices}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
for c in ${COMPILERS:-clang gcc}; do
  if [ $c = clang ]; then cc="clang-16 -fno-unroll-loops"; else cc=gcc; fi
  $cc -O3 -march=native -fPIC -ffp-contract=off -c "$here/strict.c" -o "$build/strict.o"
  $cc -O3 -march=native -fPIC -ffp-contract=fast -fno-trapping-math -fno-math-errno -mprefer-vector-width=512 \
    -c "$here/fast.c" -o "$build/fast.o"
  g++ -std=c++17 -O2 -I"$here" "$here/driver.cpp" "$build/strict.o" "$build/fast.o" -o "$build/$c"
  echo "## $c"
  for m in ${M:-bcsstk16 bayer10 bcsstk13 dnn_n1024_l1 cryg2500 watt_2 bcspwr10 Pd G51 dwt_992}; do
    taskset -c ${CORE:-1} "$build/$c" "$data/$m.mtx" "$m" ${ROUNDS:-40} ${CALLS:-20}
  done
done
