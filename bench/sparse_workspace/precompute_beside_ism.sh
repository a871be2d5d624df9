#!/bin/sh
# Row-wise SpGEMM A = B*B through a sparse (ISM) workspace with and without a
# dense precompute of each row in front of it, against tcc's default kernel
# (a dense row workspace listing its coordinates, no ISM), one thread, each
# variant compiled in process (the default JIT backend) and timed by `tcc run --time`
# (median of --repeat runs), all in one run.
#   bench/sparse_workspace/precompute_beside_ism.sh build/release/tcc REPEAT MATRIX.mtx...
set -e
tcc=$1; repeat=$2; shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
program() {  # name, output format, schedule lines
  printf 'tensor A(I, J) : %s\ntensor B(I, K) : csr\ntensor C(K, J) : csr\nA(i, j) = B(i, k) * C(k, j)\n%s\n' "$2" "$3" > "$dir/$1.tc"
}
program default csr ""
program ism csr "$(printf 'schedule {\n  sparse_workspace(j, policy = bucket)\n}')"
program row_then_ism csr "$(printf 'schedule {\n  sparse_workspace(j, policy = bucket)\n  precompute(B(i, k) * C(k, j), j, jw)\n}')"
program csc_ism csc ""
program csc_row_then_ism csc "$(printf 'schedule {\n  precompute(B(i, k) * C(k, j), j, jw)\n}')"
variants="default ism row_then_ism csc_ism csc_row_then_ism"
printf "| matrix | nnz(A) |"; for v in $variants; do printf ' %s us |' "$v"; done
printf ' row_then_ism/default | row_then_ism/ism | csc_row_then_ism/csc_ism |\n'
for m in "$@"; do
  line="| $(basename "$m" .mtx) |"
  for v in $variants; do
    out=$("$tcc" run "$dir/$v.tc" --in B="$m" --in C="$m" --time --repeat "$repeat" 2>&1)
    us=$(echo "$out" | sed -n 's/.*run: \([0-9.]*\) us.*/\1/p; s/.*run: \([0-9.]*\) ms.*/\1e3/p' | awk '{printf "%.1f", $1}')
    eval "t_$v=$us"
    stored=$(echo "$out" | sed -n 's/.* \([0-9]*\) stored.*/\1/p' | head -1)
  done

  line="$line $stored |"
  for v in $variants; do eval "line=\"\$line \$t_$v |\""; done
  line="$line $(awk "BEGIN{printf \"%.2f | %.2f | %.2f |\", $t_row_then_ism/$t_default, $t_row_then_ism/$t_ism, $t_csc_row_then_ism/$t_csc_ism}")"
  echo "$line"
done
