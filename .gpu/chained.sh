# The chained cuda cases the generator compiles (test/differential/cuda_chained_seeds.txt), run on the GPU
# against the dense reference, 8 processes at a time.
B=build/gpu
grep -v '^#' test/differential/cuda_chained_seeds.txt | grep -E '^[0-9]+' -o | sed -n "${CHAINED_FROM:-1},${CHAINED_TO:-353}p" > /tmp/seeds.txt
start=$(date +%s)
xargs -P 8 -I{} sh -c "$B/test/differential/tcc_differential --chained --target cuda --seed {} --count 1 --fork --timeout 60 --strict --require-gpu --no-minimize 2>&1 | tail -3 | sed 's/^/{}: /'" < /tmp/seeds.txt > "$OUT/chained_gpu.txt" 2>&1
echo "chained cuda cases on the GPU: $(wc -l < /tmp/seeds.txt) seeds in $(( $(date +%s) - start )) s"
grep -ciE "mismatch|internal|crash" "$OUT/chained_gpu.txt"; grep -iE "mismatch|internal|crash" "$OUT/chained_gpu.txt" | head -5
echo "matched: $(grep -c 'cases from seed.*: 1 matched' "$OUT/chained_gpu.txt")"
