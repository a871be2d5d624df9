# cuda campaigns on the GPU: updates in place and float16 inputs (4 processes, 100 cases each).
B=build/gpu
start=$(date +%s)
for s in 7370000 7370100 7370200 7370300; do
  flags="--in-place --float16-inputs"; [ $s = 7370200 ] && flags="--in-place"; [ $s = 7370300 ] && flags="--float16-inputs --chained"
  $B/test/differential/tcc_differential --target cuda $flags --seed $s --count 100 --fork --timeout 60 --strict --require-gpu > "$OUT/camp_$s.txt" 2>&1 &
done
wait
echo "cuda campaigns on the GPU in $(( $(date +%s) - start )) s"
for s in 7370000 7370100 7370200 7370300; do echo "$s: $(grep -E 'cases from seed' "$OUT/camp_$s.txt")"; grep -E "^seed [0-9]+: (MISMATCH|INTERNAL|CRASH)" "$OUT/camp_$s.txt" | head -3; done
