#!/usr/bin/env bash
# One device call: `factor:<loop>` (a loop's sums take out the factors the
# loop does not change and apply them once after it) on every library seed
# with a site (or those BENCH names): `gi bench` (20 interleaved rounds) of the factored seed
# against the seed, both at the spec's block; then `gi evolve` at the
# library's evolve-all settings (population 100, 20 generations, 4-minute
# budget, every family on) of the kernels named (default: none).
# Summary in $OUT/factor.txt.
#   [BENCH="family/kernel ..."] bash bench/transform/factor_call.sh [family/kernel ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
rm -rf runs/factor && mkdir -p runs/factor
{
  cat "$OUT/machine.txt"
  for k in ${BENCH:-bspline/bending_energy bspline/deformation_field bspline/folding_correction bspline/jacobian_nodes \
           bspline/jacobian_voxels bspline/log_jacobian_penalty bspline/refine_grid bspline/second_derivatives \
           deformation/compose resampling/cubic_bspline resampling/trilinear resampling/warped_gradient}; do
    "$GI" families "$k" | grep -o "factor:<for_kernel[^>]*>" > runs/factor/p.gi
    "$GI" bench "$k" --patch runs/factor/p.gi --rounds 20 --cache runs/factor/cache > runs/factor/b.log 2>&1
    echo "$k $(cat runs/factor/p.gi): exit $?: $(grep -iE 'speed-up' runs/factor/b.log | tr -s ' ')"
    grep -E "^  (seed|evolved) " runs/factor/b.log | tr -s ' '
  done
  for k in "$@"; do
    name=$(basename "$k")
    start=$(date +%s)
    "$GI" evolve "$k" --population 100 --generations 20 --budget-minutes 4 --jobs 16 --quiet \
      --run-dir "runs/factor/run-$name" --evolved-dir runs/factor/evolved --cache runs/factor/cache \
      > "runs/factor/evolve-$name.log" 2>&1
    echo "evolve $k 100x20, 4 min: exit $? in $(( $(date +%s) - start )) s"
    find runs/factor/evolved -path "*$name*" -name result.json -exec python3 -c "
import json,sys; r=json.load(open(sys.argv[1])); print({k: r[k] for k in r if k in ('patch','speedup','speedup_ci_low','validation')})" {} \;
  done
} 2>&1 | tee "$OUT/factor.txt"
