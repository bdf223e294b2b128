#!/usr/bin/env bash
# One device call: is a separable-sum rewrite worth a family? Hand-written
# variants of two library seeds whose thread sums a 3-D tensor product of
# per-axis weights times control points (bench/transform/hand/):
#  - jv_factor_row.cu: bspline/jacobian_voxels with the x sums of each row of
#    four control points taken first, then weighted by the y and z factors;
#  - jv_factor_full.cu: the same, fully separable (x sums per row, y sums per
#    plane, z last);
#  - ljp_factor_full.cu: bspline/log_jacobian_penalty (constant weights)
#    fully separable.
# `gi bench --kernel` (20 interleaved rounds) against the seed at its spec's
# block, the variant at blocks 128 and 256. Summary in $OUT/separable.txt.
#   bash bench/transform/separable_hand_call.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
rm -rf runs/separable && mkdir -p runs/separable
bench() {  # seed, hand kernel, block
  "$GI" bench "$1" --kernel "bench/transform/hand/$2" --block "$3" --rounds 20 --cache runs/separable/cache > runs/separable/b.log 2>&1
  echo "$1 $2 block $3: exit $?: $(grep -iE 'speed-up' runs/separable/b.log | tr -s ' ')"
  grep -E "^  (seed|evolved|variant) |status|wrong|fail" runs/separable/b.log | tr -s ' ' | head -4
}
{
  cat "$OUT/machine.txt"
  for b in 128 256; do
    bench bspline/jacobian_voxels jv_factor_row.cu $b
    bench bspline/jacobian_voxels jv_factor_full.cu $b
    bench bspline/log_jacobian_penalty ljp_factor_full.cu $b
  done
  cat runs/separable/b.log | tail -20
} 2>&1 | tee "$OUT/separable.txt"
