# The default SpMM under fp strict (the split in one order, '+'), fast (the atomic split, '*'), strict's old
# tiles (spmm_tiles64:strict) and float16 A, against cuSPARSE, N = 32 and 128; SpMV float32 and float16 A.
B=build/gpu
cd "$B" && cmake --build . --target tcc_bench_cusparse > "$OUT/build_bench.log" 2>&1 || { tail -20 "$OUT/build_bench.log"; exit 1; }
cd - > /dev/null
timeout 280 $B/bench/cuda/tcc_bench_cusparse .gpu/data/matrices 20 \
  '--only==adder_dcop_05/=mbeacxc/=bcsstk16/=bcsstk13/=Pd/=watt_2/one long row/rmat/kron(bcsstk13,cage5)' \
  --spmv=spmv_default,spmv_float16 --spmm=spmm_default:strict,spmm_default:fast,spmm_tiles64:strict,spmm_float16 \
  --columns=32,128 > "$OUT/bench_strict.txt" 2>&1
echo "bench rc=$?"; tail -25 "$OUT/bench_strict.txt"
