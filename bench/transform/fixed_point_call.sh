#!/usr/bin/env bash
# One device call: privatise's fixed-point count (issue 28) on the library's
# joint histogram with its hand-written paths withheld (`gi plain`). `gi bench`
# (30 interleaved rounds against the plain seed at the spec's block) of the
# float copy and the fixed-point copy at each grid cap, and of the hand path
# (HIST_PATH=2, itself a fixed-point block histogram) on the library seed;
# then `gi evolve` of the plain seed with the transformation and structural
# families only (the ablation's transform_only cell), POPULATION x GENERATIONS.
#   bash bench/transform/fixed_point_call.sh [POPULATION GENERATIONS]
# Summary in $OUT/fixed_point.txt; logs in $OUT/*.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
population=${1:-20} generations=${2:-4}
rm -rf runs/fixed && mkdir -p runs/fixed
"$GI" plain similarity/nmi_joint_histogram runs/fixed/plain > /dev/null
seed=runs/fixed/plain/similarity/nmi_joint_histogram
line=$(grep -n "atomicAdd(&jointHistogram" "$seed/kernel.cu" | tail -1 | cut -d: -f1)
bench() {  # name, seed, patch text
  echo "$3" > "runs/fixed/$1.gi"
  "$GI" bench "$2" --patch "runs/fixed/$1.gi" --rounds 30 --cache runs/fixed/cache > "$OUT/bench-$1.log" 2>&1
  echo "$1 ($3): exit $?: $(grep -iE 'speed-up' "$OUT/bench-$1.log" | tr -s ' ')"
}
{
  for cap in 0 65536 262144 1048576; do
    bench "float-$cap" "$seed" "privatise:<_kernel.cu_$line>=$cap"
    bench "fixed-$cap" "$seed" "privatise:<_kernel.cu_$line>=$cap,fixed"
  done
  bench hand-path similarity/nmi_joint_histogram "define:HIST_PATH=2"
  start=$(date +%s.%N)
  "$GI" evolve "$seed" --families transform,structural --population "$population" --generations "$generations" --jobs 16 \
    --run-dir runs/fixed/evolve --evolved-dir runs/fixed/evolved --cache runs/fixed/cache > "$OUT/evolve.log" 2>&1
  echo "== gi evolve --families transform,structural $population x $generations: exit $? in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }") s"
  grep -E "speed-up|patch:|of floor|FAILED|error" "$OUT/evolve.log" | tail -6
} 2>&1 | tee "$OUT/fixed_point.txt"
