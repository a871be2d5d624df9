#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and the CUDA toolkit: build tcc (no LLVM
# JIT needed), run the tests labelled gpu, check the GPU examples with
# compute-sanitizer (memcheck, racecheck), run the cuSPARSE benchmark, and
# print a short table last. Logs stay in the log folder.
#
#   scripts/gpu.sh [--deps DIR] [--data DIR] [--logs DIR] [--build DIR]
#
# --deps DIR   Debian .deb files (Boost, CLI11, GoogleTest) to unpack into a
#              private prefix, for machines without them installed.
# --data DIR   the shared data folder (holding matrices/); default ../shared/data
# --logs DIR   where logs go; default build/gpu-logs
set -uo pipefail
cd "$(dirname "$0")/.."
deps="" data="../shared/data" logs="build/gpu-logs" build="build/gpu"
while [ $# -gt 0 ]; do
  case "$1" in
    --deps) deps="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --logs) logs="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    *) echo "gpu.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$logs" "$build"
logs="$(cd "$logs" && pwd)"
data="$(cd "$data" && pwd)"
export PATH="$PATH:/usr/local/cuda/bin"

prefix_args=()
if [ -n "$deps" ]; then
  prefix="$(cd "$build" && pwd)/deps"
  mkdir -p "$prefix"
  for deb in "$deps"/*.deb; do
    if command -v dpkg >/dev/null; then dpkg -x "$deb" "$prefix"; else
      (tmp=$(mktemp -d) && cd "$tmp" && ar x "$deb" && tar xf data.tar.* -C "$prefix"; rm -rf "$tmp"); fi
  done
  prefix_args=(-DCMAKE_PREFIX_PATH="$prefix/usr" -DCLI11_DIR="$prefix/usr/share/cmake/CLI11")
fi

status() { if [ "$1" -eq 0 ]; then echo ok; else echo "FAILED ($1)"; fi; }
jobs=$(nproc)
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTCC_ENABLE_JIT=OFF -DTCC_SHARED_DATA_DIR="$data" \
  "${prefix_args[@]}" >"$logs/configure.log" 2>&1
configured=$?
cmake --build "$build" -j "$jobs" --target tcc tcc_gpu_tests tcc_cuda_lowering_tests tcc_bench_cusparse tcc_differential \
  >"$logs/build.log" 2>&1
built=$?
echo "build: $(status $built) in $(( $(date +%s) - start )) s (configure $(status $configured))"
if [ $built -ne 0 ]; then tail -40 "$logs/build.log"; exit 1; fi

(cd "$build" && ctest -L gpu --output-on-failure -j 1) >"$logs/ctest-gpu.log" 2>&1
tested=$?
summary_tests=$(grep -E "tests passed|tests failed" "$logs/ctest-gpu.log" | tail -1)

# compute-sanitizer on every GPU example, with the inputs its `# run:` line names.
sanitized=()
for example in examples/gpu/*.tc; do
  name=$(basename "$example" .tc)
  inputs=$(sed -n 's/^# run: //p' "$example" | sed "s#=\.\./#=examples/#g")
  for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 3 "$build/tcc" run "$example" --target cuda $inputs \
      >"$logs/sanitizer-$tool-$name.log" 2>&1
    sanitized+=("$name $tool $(status $?)")
  done
done

CUSPARSE_LOG_LEVEL=1 "$build/bench/cuda/tcc_bench_cusparse" "$data/matrices" 20 >"$logs/bench.log" 2>&1
benched=$?

echo
echo "== compute-sanitizer =="
printf '  %s\n' "${sanitized[@]}"
echo "== tests labelled gpu: $(status $tested): $summary_tests (log: $logs/ctest-gpu.log)"
grep -E "^\s*[0-9]+ - " "$logs/ctest-gpu.log" | head -20
echo "== bench: $(status $benched) (log: $logs/bench.log) =="
cat "$logs/bench.log"
[ $tested -eq 0 ] && [ $benched -eq 0 ]
