#!/usr/bin/env bash
# One device call: NiftyReg's four joint-histogram marginalisation kernels
# (.corpus/, texture references that gi init ports to texture objects), whose
# loops are compensated (Kahan) sums over a flattened 2-D block index: gi init
# each with 64 bins per axis, `gi bench` (20 interleaved rounds) of each
# warp_per_item edit against the seed at the spec's block, then `gi evolve`
# (every family, POP x GENS) as a user would run it. Summary in
# $OUT/kahan.txt. Carry .carry and .corpus.
#   bash bench/transform/kahan_marginalise_call.sh [POP GENS]
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
pop=${1:-16} gens=${2:-3}
file=.corpus/niftyreg-aa79bf22/reg-lib/cuda/_reg_nmi_kernels.cu
rm -rf runs/kahan && mkdir -p runs/kahan
edits() {  # seed, family: that family's legal edits, one per line
  "$GI" families "$1" --json | python3 -c "
import json, sys
for row in json.load(sys.stdin):
    if row['family'] == '$2':
        print('\n'.join(row.get('edits', [])))"
}
{
  for k in reg_marginaliseTargetX_kernel reg_marginaliseTargetXY_kernel reg_marginaliseResultX_kernel \
           reg_marginaliseResultXY_kernel; do
    seed=runs/kahan/user/$k
    # The bins it reads, as the survey learns them: a draft without sizes first.
    "$GI" init "$file" --entry "$k" --out "$seed" --force > /dev/null 2>&1
    sizes=$(python3 -c "
import json
spec = json.load(open('$seed/spec.json'))
print(' '.join('--size %s=64' % c['name'] for c in spec.get('constants', [])))")
    # shellcheck disable=SC2086
    "$GI" init "$file" --entry "$k" --out "$seed" --force $sizes > runs/kahan/init-$k.log 2>&1
    echo "$k: init exit $?"
    for edit in $(edits "$seed" warp_per_item); do
      echo "$edit" > runs/kahan/p.gi
      "$GI" bench "$seed" --patch runs/kahan/p.gi --rounds 20 --cache runs/kahan/cache > runs/kahan/b.log 2>&1
      echo "  $edit: exit $?: $(grep -iE 'speed-up|seed +block|variant +block' runs/kahan/b.log | tr -s ' ' | tr '\n' ';')"
    done
    timeout 150 "$GI" evolve "$seed" --population "$pop" --generations "$gens" --jobs 16 --run-dir runs/kahan/evolve-$k \
      --evolved-dir runs/kahan/evolved --cache runs/kahan/cache > runs/kahan/evolve-$k.log 2>&1
    echo "  evolve exit $?: $(grep -E 'speed-up|patch:|kept' runs/kahan/evolve-$k.log | tail -3 | tr -s ' ' | tr '\n' ';')"
  done
} 2>&1 | tee "$OUT/kahan.txt"
