#!/usr/bin/env bash
# Installs gi's system packages (Debian) and builds it into build/.
# The CUDA 13 toolkit (nvcc, NVRTC, cudart) is expected at /usr/local/cuda.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make patch libboost-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev libgtest-dev python3-matplotlib python3-scipy openmpi-bin
          # gi register: nifticlib (linked statically), the Colin27 brains (mricron-data), elastix to compare with
          libnifti2-dev libniftiio-dev libznz-dev zlib1g-dev mricron-data elastix)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  echo "setup: the CUDA toolkit (13.x) is needed at /usr/local/cuda" >&2
  exit 1
fi
export PATH=/usr/local/cuda/bin:$PATH
# GI_WERROR=ON (CI sets it) makes warnings errors.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGI_WERROR="${GI_WERROR:-OFF}"
cmake --build build -j"$(nproc)"
