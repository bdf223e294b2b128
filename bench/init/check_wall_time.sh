#!/usr/bin/env bash
# One device call: the wall time of `gi init --check` a user sees, and of its
# two ways to run the checks, timed in turn (A B A B ...) on the same seed
# folder with a fresh cache each time:
#   A: one `gi check --workload W` child per workload, then `gi coverage`
#      (gi init --check before 2026-11-29 evening);
#   B: one `gi check --workload all`, then `gi coverage` (gi init --check now).
# Kernels: the user kernel row_sum (4096 x 1024) and NiftyReg's
# ComputeJacGradient3d (a 32^3 control grid; its headers' device code cut out
# by gi init). Summary with medians in $OUT/check_wall_time.txt.
#   bash bench/init/check_wall_time.sh [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
rounds=${1:-3}
summary=$OUT/check_wall_time.txt
: > "$summary"
n=.corpus/niftyreg-d518b8ac/reg-lib
reorientation=""
for i in 0 1 2 3 4 5 6 7 8; do reorientation="$reorientation --size reorientation_m_$i=0.5"; done
declare -A init_args=(
  [row_sum]="tests/data/user/row_sum/kernel.cu --size rows=4096 --size cols=1024"
  [ComputeJacGradient3d]="$n/cuda/CudaLocalTransformationKernels.cu --entry ComputeJacGradient3d
    --size controlPointImageDims=32,32,32 --size controlPointNumber=32768 --size controlPointVoxelSpacing=4,4,4
    --size referenceImageDims=128,128,128 --size weight=1,1,1 $reorientation
    --include-dir $n --include-dir $n/cpu --include-dir $n/../reg-io --include-dir $n/../reg-io/png"
)
seconds() {
  local s rc
  s=$(date +%s.%N)
  "$@" > /dev/null 2>&1
  rc=$?
  awk -v s="$s" -v e="$(date +%s.%N)" -v rc="$rc" 'BEGIN { printf "%.2f %d\n", e - s, rc }'
}
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for kernel in row_sum ComputeJacGradient3d; do
  dir=runs/check-wall/$kernel
  cache=runs/check-wall/cache
  # shellcheck disable=SC2086
  "$GI" init ${init_args[$kernel]} --out "$dir" --force > "$OUT/wall-init-$kernel.log" 2>&1 || {
    echo "$kernel: gi init failed (wall-init-$kernel.log)" | tee -a "$summary"; continue; }
  workloads=$(python3 -c "
import json; s = json.load(open('$dir/spec.json'))['workloads']
print(' '.join(['train'] + ['train:%d' % (i + 1) for i in range(len(s['train_checks']))] +
               ['validate:%d' % i for i in range(len(s['validate']))]))")
  per_workload() {
    for w in $workloads; do "$GI" check "$dir" --workload "$w" --cache "$cache" || return 1; done
    "$GI" coverage "$dir" --cache "$cache"
  }
  all_at_once() { "$GI" check "$dir" --workload all --cache "$cache" && "$GI" coverage "$dir" --cache "$cache"; }
  : > /tmp/wall_a; : > /tmp/wall_b
  for r in $(seq "$rounds"); do
    rm -rf "$cache"; read -r t rc < <(seconds per_workload); echo "$t" >> /tmp/wall_a
    echo "$kernel round $r A (a child per workload): $t s, exit $rc" >> "$summary"
    rm -rf "$cache"; read -r t rc < <(seconds all_at_once); echo "$t" >> /tmp/wall_b
    echo "$kernel round $r B (--workload all): $t s, exit $rc" >> "$summary"
  done
  echo "$kernel: $(echo "$workloads" | wc -w) workloads; checks and coverage, median of $rounds:" \
       "A $(median < /tmp/wall_a) s [$(sort -n /tmp/wall_a | head -1)-$(sort -n /tmp/wall_a | tail -1)]," \
       "B $(median < /tmp/wall_b) s [$(sort -n /tmp/wall_b | head -1)-$(sort -n /tmp/wall_b | tail -1)]" | tee -a "$summary"
  # The whole command a user runs.
  for r in 1 2; do
    # shellcheck disable=SC2086
    read -r t rc < <(seconds "$GI" init ${init_args[$kernel]} --out "$dir" --force --check)
    echo "$kernel: gi init --check $t s, exit $rc" | tee -a "$summary"
  done
done
