#!/bin/sh
# p = perm(A) on the cuda target over MPI ranks, one per GPU (or several
# sharing one, or without one), against one process on one GPU: correctness
# and strong scaling on Erdos-Renyi matrices (the generator of run.sh: entries
# uniform in [-1, 1], diagonal set, seed n; density P). Prints a Markdown
# table: `tcc run --time`'s run time on rank 0 (the whole distributed
# permanent, with each rank's kernel generation and NVRTC compilation, which
# run concurrently; MPI start-up excluded), the value, and its relative
# difference from one process on one GPU. One round each (the runs are long
# enough); CPU-only rows use a smaller n (CASES_CPU).
#
#   bench/permanent_mpi/gpu_run.sh              (from the repository root, on a machine with GPUs)
#   TCC=path/to/tcc GPUS=2 CASES="40:0.1 44:0.1" SCALING_CASES="44:0.2" CASES_CPU="34:0.1" \
#       INTERRUPT=44:0.1:1.5 bench/permanent_mpi/gpu_run.sh
set -eu
tcc=${TCC:-build/release/tcc}
gpus=${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || echo 0)}
cases=${CASES-"40:0.1 40:0.2 44:0.1 44:0.2"}  # every row
scaling=${SCALING_CASES-}                      # 1 process and 1, 2, 4, 8 GPUs only
interrupt=${INTERRUPT-}  # N:P:SECONDS: mpirun -n 2 on the GPUs, Ctrl-C after SECONDS, then resumed
cases_cpu=${CASES_CPU-"34:0.1"}
limit=${LIMIT:-60}
flags=${MPIRUN_FLAGS:-"--oversubscribe --bind-to none"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

cat > "$work/perm.tc" <<'PROGRAM'
tensor A(N, N) : csc
tensor p : dense
p = perm(A)
PROGRAM

generate() {  # n density
  python3 - "$1" "$2" > "$work/a.mtx" <<'GENERATE'
import random, sys
n, density = int(sys.argv[1]), float(sys.argv[2])
rng = random.Random(n)
entries = [(i + 1, j + 1, rng.uniform(-1, 1)) for i in range(n) for j in range(n) if i == j or rng.random() < density]
print("%%MatrixMarket matrix coordinate real general")
print(n, n, len(entries))
for entry in entries:
    print("%d %d %.17g" % entry)
GENERATE
}

# row TARGET LABEL COMMAND...: runs `COMMAND run ... --target TARGET`, prints a
# table row against the first row of the case
row() {
  target=$1 label=$2
  shift 2
  # shellcheck disable=SC2086
  if ! timeout "$limit" "$@" run "$work/perm.tc" --target "$target" --in A="$work/a.mtx" --time --progress ${extra:-} \
      > "$work/out" 2> "$work/err"; then
    echo "| $n | $density | $nnz | $label | failed | | | | | |"
    tail -5 "$work/err" | sed 's/^/    /' >&2
    return 0
  fi
  milliseconds=$(sed -n 's/.*run: \([0-9.]*\) ms.*/\1/p' "$work/out")
  value=$(sed -n 's/^p: .* = //p' "$work/out")
  split=$(sed -n 's/^perm: chunks computed in this run by rank: \(.*\)/\1/p' "$work/err")
  rate=$(sed -n 's/.* \([0-9.e+]*\) it\/s, done in.*/\1/p' "$work/err" | tail -1)
  sum=$(python3 -c "import sys; r = float(sys.argv[2] or 0); print('%.3f' % (2 ** (int(sys.argv[1]) - 1) / r) if r else 0)" "$n" "$rate")
  [ -n "${reference:-}" ] || { reference=$value; base=$milliseconds; basesum=$sum; }
  python3 - "$n" "$density" "$nnz" "$label" "$milliseconds" "$sum" "$value" "$reference" "$base" "$basesum" "$split" <<'ROW'
import sys
n, density, nnz, label, ms, sum_s, value, reference, base, base_sum, split = sys.argv[1:]
ms, sum_s, value, reference, base, base_sum = map(float, (ms, sum_s, value, reference, base, base_sum))
speedup = "%.2f" % (base_sum / sum_s) if sum_s > 0 and base_sum > 0 else "-"
print("| %s | %s | %s | %s | %.3f | %.2f | %s | %s | %.17g | %.1e | %s |" % (n, density, nnz, label, ms / 1000,
      base / ms, "%.3f" % sum_s if sum_s > 0 else "-", speedup, value, abs(value - reference) / abs(reference),
      split.strip() or "-"))
ROW
}

echo "| n | p | nnz | run | run s | speedup | sum s | speedup | permanent | rel. diff. vs first row | chunks per rank |"
echo "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---|"
for each in $cases $scaling; do
  n=${each%%:*} density=${each#*:}
  full=0
  for one in $cases; do [ "$one" = "$each" ] && full=1; done
  generate "$n" "$density"
  nnz=$(sed -n 2p "$work/a.mtx" | cut -d' ' -f3)
  reference=
  row cuda "1 process, GPU 0" env TCC_CUDA_DEVICE=0 "$tcc"
  [ $full = 1 ] && row cuda "mpirun -n 1" mpirun $flags -n 1 "$tcc"
  for k in 2 4 8; do
    [ "$gpus" -ge $k ] && row cuda "mpirun -n $k, $k GPUs" mpirun $flags -n $k "$tcc"
  done
  [ $full = 1 ] && row cuda "mpirun -n 2, both on GPU 0" mpirun $flags -n 2 -x TCC_CUDA_DEVICE=0 "$tcc"
  [ $full = 1 ] && [ "$gpus" -ge 2 ] &&
    row cuda "mpirun -n 3, GPUs 0, 1 + a CPU rank" mpirun $flags -n 3 -x TCC_CUDA_DEVICE=0,1,none "$tcc"
done
for each in $cases_cpu; do
  n=${each%%:*} density=${each#*:}
  generate "$n" "$density"
  nnz=$(sed -n 2p "$work/a.mtx" | cut -d' ' -f3)
  reference=
  row cpu "1 process, all cores (cpu target)" "$tcc"
  row cpu "mpirun -n 2 (cpu target)" mpirun $flags -n 2 "$tcc"
  row cuda "mpirun -n 2, 2 CPU ranks (cuda target, TCC_CUDA_DEVICE=none)" mpirun $flags -n 2 -x TCC_CUDA_DEVICE=none "$tcc"
  [ "$gpus" -ge 1 ] && row cuda "1 process, GPU 0" "$tcc"
done
if [ -n "$interrupt" ] && [ "$gpus" -ge 2 ]; then
  n=${interrupt%%:*} rest=${interrupt#*:}
  density=${rest%%:*} seconds=${rest#*:}
  generate "$n" "$density"
  nnz=$(sed -n 2p "$work/a.mtx" | cut -d' ' -f3)
  reference=
  row cuda "mpirun -n 2, 2 GPUs, uninterrupted" mpirun $flags -n 2 "$tcc"
  # Ctrl-C reaches mpirun (started with SIGINT at its default, as from a terminal) after $seconds s
  code=0
  python3 - "$seconds" "$limit" mpirun $flags -n 2 "$tcc" run "$work/perm.tc" --target cuda --in A="$work/a.mtx" \
      --checkpoint "$work/checkpoint" --progress > "$work/out" 2> "$work/err" <<'INTERRUPT' || code=$?
import signal, subprocess, sys, time
seconds, limit, command = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
run = subprocess.Popen(command, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
time.sleep(seconds)
run.send_signal(signal.SIGINT)
try:
    sys.exit(run.wait(timeout=limit))
except subprocess.TimeoutExpired:
    run.kill()
    sys.exit(124)
INTERRUPT
  grep -E "^tcc: error|by rank" "$work/err" | sed 's/^/    interrupted run: /' >&2
  echo "| $n | $density | $nnz | Ctrl-C after $seconds s: exit $code | | | | | $(grep -o 'interrupted after [0-9]* of [0-9]* chunks ([0-9.]*%)' "$work/err" | head -1) | | |"
  extra="--checkpoint $work/checkpoint"
  row cuda "mpirun -n 2, 2 GPUs, resumed from its checkpoint" mpirun $flags -n 2 "$tcc"
  extra=
fi
