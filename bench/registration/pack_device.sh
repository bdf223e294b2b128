#!/usr/bin/env bash
# Here, before a device call of bench/registration/gpu_run.sh: builds and packs
# the binaries (scripts/pack_carry.sh) and adds the Colin27 images of Debian's
# mricron-data, which the GPU machine lacks (the test pair is made there from
# them, deterministically, rather than carried: its noisy images would not fit
# the carry limit). With --elastix, also elastix and its libraries
# (bench/registration/pack_elastix.sh), for bench/registration/run_elastix.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/pack_carry.sh
for f in ch2.nii.gz ch2bet.nii.gz; do
  src=/usr/share/mricron/templates/$f
  [ -f "$src" ] || { echo "pack_device: $src missing: install mricron-data (scripts/setup.sh)" >&2; exit 1; }
  cp "$src" .carry/
done
# --elastix: elastix alone (REGISTER_ONLY, about 19 MB) split in two, as the
# tracked tree (46 MB) leaves too little of the 64 MiB carry for it in one
# call: the first part rides with gpu_run.sh's call (which parks it in runs/),
# the second, .carry-elastix/, with the next call, bench/registration/gpu_elastix.sh,
# on the same warm machine.
rm -rf .carry-elastix
if [ "${1:-}" = "--elastix" ]; then
  REGISTER_ONLY=1 bash bench/registration/pack_elastix.sh "$PWD/.carry-elastix.tar.xz"
  mkdir -p .carry-elastix
  head -c 5000000 .carry-elastix.tar.xz > .carry/elastix.part-a
  tail -c +5000001 .carry-elastix.tar.xz > .carry-elastix/elastix.part-b
  rm .carry-elastix.tar.xz
  du -sh .carry-elastix
fi
du -sh .carry
