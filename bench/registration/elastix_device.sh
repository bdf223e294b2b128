#!/usr/bin/env bash
# One device call: elastix on a gi test pair, on the GPU machine's CPUs, with
# 16 threads and with 2, the affine then B-spline parameter maps
# (elastix_affine.txt, elastix_bspline.txt), for issue 30's comparison with
# gi register (bench/registration/wall_time.sh gives gi's side on the same
# kind of machine). Needs .carry/ from pack_device.sh and
# .carry/elastix.tar.xz (REGISTER_ONLY=1 bench/registration/pack_elastix.sh
# .carry/elastix.tar.xz: elastix alone, transformix stays here).
#   device run: bash bench/registration/elastix_device.sh [--affine] [THREADS...]
# The transforms land in $OUT/elastix.tar.gz; score them here with
#   gi make-pair --out PAIR --seed 1 [--affine]
#   STAGE=score bash bench/registration/run_elastix.sh PAIR <unpacked>/runs/elastix-<kind>/threads-N
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gi-out}
mkdir -p "$OUT"
kind=plain
pair_options=()
if [ "${1:-}" = --affine ]; then kind=affine; pair_options=(--affine); shift; fi
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(16 2)
[ -f .carry/bin.tar.xz ] && tar xJf .carry/bin.tar.xz -C .carry
mkdir -p .carry/elastix-bundle && tar xJf .carry/elastix.tar.xz -C .carry/elastix-bundle
bundle=$(dirname "$(find .carry/elastix-bundle -name elastix -type f | head -1)")
R=runs/elastix-$kind
mkdir -p "$R"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; grep -m1 'model name' /proc/cpuinfo; } > "$R/machine.txt"
cat "$R/machine.txt"
.carry/gi make-pair --out "$R/pair" --image .carry/ch2.nii.gz --brain .carry/ch2bet.nii.gz --seed 1 "${pair_options[@]}" \
  > "$R/make_pair.log" 2>&1
tail -2 "$R/make_pair.log"
for t in "${threads[@]}"; do
  STAGE=register ELASTIX_DIR=$PWD/$bundle GI=$PWD/.carry/gi PARAMS="elastix_affine.txt elastix_bspline.txt" \
    bash bench/registration/run_elastix.sh "$R/pair" "$R/threads-$t" "$t" > "$R/threads-$t.log" 2>&1
  echo "threads $t: exit $? $(grep -o '"elastix_seconds": [0-9.]*' "$R/threads-$t/elastix_time.json" 2>/dev/null)"
done
tar czf "$OUT/elastix.tar.gz" --exclude='*.nii*' "$R"
