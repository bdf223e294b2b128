#!/usr/bin/env bash
# One device call: `stage:p` (a buffer each thread writes as a record of K
# consecutive elements goes through shared memory and out in consecutive
# elements) on the library's three record writers, none of which has a
# hand-written path, and on the plain user kernels planes_to_deformation
# (records written; first `gi check`, its spec as gi init drafted it) and
# deformation_to_planes (records read): `gi bench` (20 interleaved rounds) against the seed at
# the spec's block, the variant at blocks 128 and 256; then `gi evolve` of
# each with every family on (16 x 4), against the tuned seed.
# Summary in $OUT/stage.txt.
#   bash bench/transform/stage_call.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
rm -rf runs/stage-call && mkdir -p runs/stage-call
bench() {  # seed, block, patch text
  echo "$3" > runs/stage-call/p.gi
  "$GI" bench "$1" --patch runs/stage-call/p.gi --block "$2" --rounds 20 --cache runs/stage-call/cache > runs/stage-call/b.log 2>&1
  echo "$1 block $2 ($3): exit $?: $(grep -iE 'speed-up' runs/stage-call/b.log | tr -s ' ')"
  grep -E "^  (seed|evolved) " runs/stage-call/b.log | tr -s ' '
}
{
  cat "$OUT/machine.txt"
  "$GI" check tests/data/user/planes_to_deformation --cache runs/stage-call/cache > runs/stage-call/check.log 2>&1
  echo "gi check planes_to_deformation: exit $?"; tail -3 runs/stage-call/check.log
  for b in 128 256; do
    bench tests/data/user/planes_to_deformation $b "stage:deformation"
    bench tests/data/user/deformation_to_planes $b "stage:deformation"
    bench deformation/jacobian_field $b "stage:jacobianMatrices"
    bench bspline/jacobian_nodes $b "stage:jacobianMatrices"
    bench bspline/second_derivatives $b "stage:secondDerivatives"
  done
  for k in tests/data/user/planes_to_deformation tests/data/user/deformation_to_planes deformation/jacobian_field bspline/jacobian_nodes bspline/second_derivatives; do
    start=$(date +%s)
    log="runs/stage-call/evolve-$(basename $k).log"
    "$GI" evolve $k --population 16 --generations 4 --jobs 16 \
      --run-dir runs/stage-call/evolve-$(basename $k) --evolved-dir runs/stage-call/evolved --cache runs/stage-call/cache > "$log" 2>&1
    echo "evolve $k every family 16x4: exit $? in $(( $(date +%s) - start )) s"
    grep -E "speed-up|patch:|of floor" "$log" | tail -5
  done
} 2>&1 | tee "$OUT/stage.txt"
