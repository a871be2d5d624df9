#!/usr/bin/env bash
# .gpu/round.sh: build on the device machine and run what the round asks.
#   TARGETS="..." CTEST_REGEX="..." [CTEST_LABEL=gpu] bash .gpu/round.sh ROUND [extra script ...]
set -uo pipefail
round="$1"; shift
export PATH="$PATH:/usr/local/cuda/bin"
B=build/gpu; prefix="$PWD/$B/deps"; mkdir -p "$prefix" "$OUT"
for d in .gpu/debs/*.deb; do dpkg -x "$d" "$prefix"; done
start=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2; } > "$OUT/device.txt"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DTCC_ENABLE_JIT=OFF -DTCC_SHARED_DATA_DIR="$PWD/.gpu/data" \
  -DCMAKE_PREFIX_PATH="$prefix/usr" -DCLI11_DIR="$prefix/usr/share/cmake/CLI11" > "$OUT/configure.log" 2>&1 \
  || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build $B -j 16 --target ${TARGETS:-tcc tcc_gpu_tests} > "$OUT/build.log" 2>&1 || { grep -m5 -A5 "error" "$OUT/build.log"; tail -20 "$OUT/build.log"; exit 1; }
echo "round $round: built in $(( $(date +%s) - start )) s"
if [ -n "${CTEST_REGEX:-}${CTEST_LABEL:-}" ]; then
  args=(); [ -n "${CTEST_LABEL:-}" ] && args+=(-L "$CTEST_LABEL"); [ -n "${CTEST_REGEX:-}" ] && args+=(-R "$CTEST_REGEX")
  (cd $B && ctest "${args[@]}" -j ${CTEST_JOBS:-4} --output-on-failure --timeout 300) > "$OUT/ctest_$round.txt" 2>&1
  grep -E "tests passed|tests failed" "$OUT/ctest_$round.txt"; grep -E "\(Failed\)|\(Timeout\)|\*\*\*" "$OUT/ctest_$round.txt" | head -20
fi
for extra in "$@"; do bash "$extra"; done
cat "$OUT/device.txt"
