#!/usr/bin/env bash
# Installs the Debian 12 packages tcc builds with; silent when all are present.
# Usage: scripts/setup.sh            (run as root, or with sudo available)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  llvm-16-dev libclang-cpp16-dev libclang-16-dev clang-16 libclang-rt-16-dev
  libomp-16-dev  # the OpenMP runtime kernels run on, and Archer for the tsan preset
  libmlir-16-dev mlir-16-tools
  libeigen3-dev zlib1g-dev libzstd-dev libedit-dev libxml2-dev libcurl4-openssl-dev
  libopenmpi-dev openmpi-bin
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
echo "tcc setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
