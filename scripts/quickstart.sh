#!/usr/bin/env bash
# Installs what is missing (Debian 12), builds tcc (Release), and runs a real
# example: SpMV on the SuiteSparse matrix 494_bus, printing the result
# summary, the compile time and the median kernel time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tcc
./build/release/tcc run examples/spmv.tc \
  --in A=examples/data/494_bus.mtx --in x=examples/data/x494.tns --time --repeat 50
