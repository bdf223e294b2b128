#!/usr/bin/env bash
# One device call: `coarsen:K,vector` (buffers read only at the item loaded as
# float4 before a thread's loop) against the same coarsening without vectors,
# `gi bench` (20 interleaved rounds) against the seed at the spec's block, on
# the library's plain intensity_minmax, sum_reduction and intensity_rescale
# (`gi plain`: paths withheld) and the user dot product; then `gi evolve` of
# the plain intensity_minmax with the transformation and structural families.
# Summary in $OUT/vector.txt.
#   bash bench/transform/vector_call.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
rm -rf runs/vector && mkdir -p runs/vector
for k in tools/intensity_minmax tools/sum_reduction tools/intensity_rescale; do "$GI" plain "$k" runs/vector/plain > /dev/null; done
bench() {  # seed, block, patch text
  echo "$3" > runs/vector/p.gi
  "$GI" bench "$1" --patch runs/vector/p.gi --block "$2" --rounds 20 --cache runs/vector/cache > runs/vector/b.log 2>&1
  echo "$(basename "$1") block $2 ($3): exit $?: $(grep -iE 'speed-up' runs/vector/b.log | tr -s ' ')"
}
{
  minmax=runs/vector/plain/tools/intensity_minmax
  for b in 128 256; do
    for k in 8 16; do
      bench $minmax $b "aggregate:all=block coarsen:$k"
      bench $minmax $b "aggregate:all=block coarsen:$k,vector"
    done
  done
  sum=runs/vector/plain/tools/sum_reduction
  line=$(grep -n "atomicAdd(sum" $sum/kernel.cu | tail -1 | cut -d: -f1)
  for b in 128 256; do
    bench $sum $b "aggregate:<_kernel.cu_$line>=block coarsen:16,strided"
    bench $sum $b "aggregate:<_kernel.cu_$line>=block coarsen:16"
    bench $sum $b "aggregate:<_kernel.cu_$line>=block coarsen:16,vector"
  done
  rescale=runs/vector/plain/tools/intensity_rescale
  for k in 2 4 8; do
    bench $rescale 256 "coarsen:$k"
    bench $rescale 256 "coarsen:$k,vector"
  done
  dot=tests/data/user/dot_product
  for k in 4 8; do
    bench $dot 256 "aggregate:<_kernel.cu_7>=block coarsen:$k"
    bench $dot 256 "aggregate:<_kernel.cu_7>=block coarsen:$k,vector"
  done
  start=$(date +%s)
  "$GI" evolve $minmax --families transform,structural --population 16 --generations 4 --jobs 16 \
    --run-dir runs/vector/evolve --evolved-dir runs/vector/evolved --cache runs/vector/cache > "$OUT/evolve.log" 2>&1
  echo "evolve intensity_minmax transform,structural 16x4: exit $? in $(( $(date +%s) - start )) s"
  grep -E "speed-up|patch:|of floor" "$OUT/evolve.log" | tail -5
} 2>&1 | tee "$OUT/vector.txt"
