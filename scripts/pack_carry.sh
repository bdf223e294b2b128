#!/usr/bin/env bash
# Builds here and packs stripped binaries (and the latest runs from the GPU
# machine, if given) into .carry/ for scripts/gpu_session.sh. The binaries
# travel xz-compressed (about a quarter of their size): the device call's
# limit of 64 MiB covers the tracked tree and everything carried with it.
set -euo pipefail
cd "$(dirname "$0")/.."
# Re-configure so the recorded gi commit (git describe --dirty) is current.
cmake -S . -B build > /dev/null
cmake --build build -j2 --target gi gi_tests gi_test_worker
rm -rf .carry && mkdir -p .carry/bin
for b in build/gi/gi build/tests/gi_tests build/tests/gi_test_worker; do
  strip -o ".carry/bin/$(basename "$b")" "$b"
done
tar cJf .carry/bin.tar.xz -C .carry/bin gi gi_tests gi_test_worker
rm -r .carry/bin
if [ $# -gt 0 ] && [ -f "$1" ]; then cp "$1" .carry/runs.tar.gz; fi
du -sh .carry
