#!/usr/bin/env bash
# One device call: `registers` (small local arrays read through selects, so
# they stay in registers) on every library kernel whose seed keeps an array
# in local memory, `gi bench` (20 interleaved rounds) of all its registers
# edits against the seed at the spec's block; on the plain voxel_to_node
# (`gi plain`: paths withheld) also with each warp_per_item loop at 8 lanes,
# and with fast math; then `gi evolve` of the plain voxel_to_node with the
# transformation and structural families. Summary in $OUT/registers.txt.
#   bash bench/transform/registers_call.sh [GENERATIONS]
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
generations=${1:-4}
rm -rf runs/registers && mkdir -p runs/registers
for k in tools/voxel_to_node_gradient bspline/log_jacobian_gradient_exact; do "$GI" plain "$k" runs/registers/plain > /dev/null; done
edits() {  # seed, family, [filter]: that family's legal edits, one line
  "$GI" families "$1" --json | python3 -c "
import json, sys
for row in json.load(sys.stdin):
    if row['family'] == '$2':
        print(' '.join(e for e in row.get('edits', []) if '${3:-}' in e))"
}
bench() {  # seed, patch text, [variant options...]
  local seed=$1 patch=$2
  shift 2
  echo "$patch" > runs/registers/p.gi
  "$GI" bench "$seed" --patch runs/registers/p.gi --rounds 20 --cache runs/registers/cache "$@" > runs/registers/b.log 2>&1
  echo "$(basename "$seed") ($patch${*:+ $*}): exit $?: $(grep -iE 'speed-up' runs/registers/b.log | tr -s ' ')"
}
{
  v2n=runs/registers/plain/tools/voxel_to_node_gradient
  for seed in $v2n runs/registers/plain/bspline/log_jacobian_gradient_exact bspline/bending_energy \
              bspline/bending_energy_gradient bspline/folding_correction bspline/jacobian_voxels bspline/second_derivatives; do
    bench "$seed" "$(edits "$seed" registers)"
  done
  regs=$(edits $v2n registers)
  for loop in $(edits $v2n warp_per_item "=8"); do
    bench $v2n "$loop"
    bench $v2n "$loop $regs"
    bench $v2n "$loop $regs" --option=--use_fast_math
  done
  bench $v2n "$regs" --option=--use_fast_math
  start=$(date +%s)
  "$GI" evolve $v2n --families transform,structural --population 20 --generations "$generations" --jobs 16 \
    --run-dir runs/registers/evolve --evolved-dir runs/registers/evolved --cache runs/registers/cache > "$OUT/evolve.log" 2>&1
  echo "evolve voxel_to_node transform,structural 20x$generations: exit $? in $(( $(date +%s) - start )) s"
  grep -E "speed-up|patch:|of floor" "$OUT/evolve.log" | tail -5
} 2>&1 | tee "$OUT/registers.txt"
