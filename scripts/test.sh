#!/usr/bin/env bash
# Builds tcc (Release) and runs the default test suite: everything but the
# tests labelled slow or gpu. Ends with ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset default
