#!/usr/bin/env bash
# The device call after bench/registration/gpu_run.sh, on the same warm
# machine: joins the elastix bundle's two parts (runs/elastix-parts/ from that
# call, .carry-elastix/ carried with this one: pack_device.sh --elastix), and
# registers the same Colin27 pair with elastix on every CPU core
# (run_elastix.sh STAGE=register). Results in $OUT/elastix.tar.gz; then here:
#   STAGE=score bench/registration/run_elastix.sh PAIR_DIR <unpacked>/runs/registration/elastix
# (transformix and gi accuracy on a pair made here with the same seed).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gi-out}
mkdir -p "$OUT"
R=runs/registration
for f in runs/elastix-parts/elastix.part-a .carry-elastix/elastix.part-b "$R/pair/reference.nii.gz" .carry/gi; do
  [ -e "$f" ] || { echo "gpu_elastix: $f is missing: run gpu_run.sh first on this (warm) machine" >&2; exit 3; }
done
rm -rf .carry-elastix/bundle && mkdir -p .carry-elastix/bundle
cat runs/elastix-parts/elastix.part-a .carry-elastix/elastix.part-b | tar xJf - -C .carry-elastix/bundle
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > "$R/elastix_machine.txt"
STAGE=register ELASTIX_DIR=$PWD/.carry-elastix/bundle/elastix GI=$PWD/.carry/gi \
  bash bench/registration/run_elastix.sh "$R/pair" "$R/elastix" "$(nproc)" > "$R/elastix.log" 2>&1
echo "elastix: exit $?"
tail -15 "$R/elastix.log"
tar czf "$OUT/elastix.tar.gz" --exclude='*.nii*' "$R/elastix" "$R/elastix.log" "$R/elastix_machine.txt"
