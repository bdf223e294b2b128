#!/usr/bin/env bash
# Builds here and copies stripped binaries (and the latest runs from the GPU
# machine, if given) into .carry/ for scripts/gpu_session.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# Re-configure so the recorded gi commit (git describe --dirty) is current.
cmake -S . -B build > /dev/null
cmake --build build -j2 --target gi gi_tests gi_test_worker
mkdir -p .carry
for b in build/gi/gi build/tests/gi_tests build/tests/gi_test_worker; do
  strip -o ".carry/$(basename "$b")" "$b"
done
if [ $# -gt 0 ] && [ -f "$1" ]; then cp "$1" .carry/runs.tar.gz; fi
du -sh .carry
