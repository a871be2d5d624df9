#!/bin/sh
# Strong scaling of p = perm(A) over MPI ranks (the CPU engine) against one
# process, on Erdos-Renyi matrices (p = 0.2, diagonal set). Prints a
# Markdown table: the kernel's wall time (`tcc run --time`: compile
# excluded), the fastest of REPEAT rounds that interleave the runs, for one
# process with 1 and 2 OpenMP threads and for mpirun -n K (mpirun binds each
# of up to 2 ranks to a core, so such a rank runs one thread).
#
#   bench/permanent_mpi/run.sh [N ...]      (from the repository root; default N = 30 32)
#   TCC=path/to/tcc RANKS="1 2 4" REPEAT=5 MPIRUN_FLAGS="--oversubscribe" bench/permanent_mpi/run.sh 33
set -eu
tcc=${TCC:-build/release/tcc}
ranks=${RANKS:-"1 2"}
repeat=${REPEAT:-3}
flags=${MPIRUN_FLAGS:-}
sizes=${*:-30 32}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cat > "$work/perm.tc" <<'PROGRAM'
tensor A(N, N) : csc
tensor p : dense
p = perm(A)
PROGRAM

# measure KEY COMMAND...: appends "KEY seconds value" to $work/times
measure() {
  key=$1
  shift
  "$@" run "$work/perm.tc" --in A="$work/a.mtx" --time > "$work/out" 2> "$work/err" || {
    cat "$work/err" >&2
    exit 1
  }
  milliseconds=$(sed -n 's/.*run: \([0-9.]*\) ms.*/\1/p' "$work/out")
  value=$(sed -n 's/^p: .* = //p' "$work/out")
  echo "$key $milliseconds $value" >> "$work/times"
}

echo "| n | nnz | run | kernel s (best of $repeat) | all rounds s | speedup vs 1 process, 1 thread | rel. diff. vs it |"
echo "|---:|---:|---|---:|---|---:|---:|"
for n in $sizes; do
  python3 - "$n" > "$work/a.mtx" <<'GENERATE'
import random, sys
n = int(sys.argv[1])
rng = random.Random(n)
entries = [(i + 1, j + 1, rng.uniform(-1, 1)) for i in range(n) for j in range(n) if i == j or rng.random() < 0.2]
print("%%MatrixMarket matrix coordinate real general")
print(n, n, len(entries))
for entry in entries:
    print("%d %d %.17g" % entry)
GENERATE
  nnz=$(sed -n 2p "$work/a.mtx" | cut -d' ' -f3)
  : > "$work/times"
  round=0
  while [ "$round" -lt "$repeat" ]; do
    measure "1 process, 1 thread" env OMP_NUM_THREADS=1 "$tcc"
    measure "1 process, 2 threads" env OMP_NUM_THREADS=2 "$tcc"
    for k in $ranks; do
      # shellcheck disable=SC2086
      measure "mpirun -n $k" mpirun $flags -n "$k" "$tcc"
    done
    round=$((round + 1))
  done
  python3 - "$work/times" "$n" "$nnz" <<'TABLE'
import sys
rows = {}
for line in open(sys.argv[1]):
    words = line.split()
    key, milliseconds, value = " ".join(words[:-2]), float(words[-2]), float(words[-1])
    rows.setdefault(key, []).append((milliseconds / 1000, value))
base_key = "1 process, 1 thread"
base = min(t for t, _ in rows[base_key])
reference = rows[base_key][0][1]
for key, runs in rows.items():
    best = min(t for t, _ in runs)
    difference = max(abs(v - reference) / abs(reference) for _, v in runs)
    print("| %s | %s | %s | %.3f | %s | %.2f | %.1e |" % (sys.argv[2], sys.argv[3], key, best,
          " ".join("%.2f" % t for t, _ in runs), base / best, difference))
TABLE
done
