#!/usr/bin/env bash
# One device call: `gi evolve` with every family (the search's defaults but a
# population of 20 over GENERATIONS generations) on each library seed that
# keeps a local array in local memory, where `registers` has sites; beside
# each, the speed-up published in evolved/ (the evolve-all of 2026-11-25,
# before the family existed). Summary in $OUT/registers_library.txt.
#   bash bench/transform/registers_library_call.sh [GENERATIONS]
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
generations=${1:-4}
rm -rf runs/registers-library && mkdir -p runs/registers-library
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/-$//')
{
  for k in bspline/bending_energy bspline/bending_energy_gradient bspline/folding_correction bspline/jacobian_voxels \
           bspline/second_derivatives bspline/log_jacobian_gradient_exact tools/voxel_to_node_gradient; do
    folder=${k/\//-}
    start=$(date +%s)
    "$GI" evolve "$k" --population 20 --generations "$generations" --jobs 16 --run-dir "runs/registers-library/$folder" \
      --evolved-dir runs/registers-library/evolved --cache runs/registers-library/cache > "runs/registers-library/$folder.log" 2>&1
    echo "$k: exit $? in $(( $(date +%s) - start )) s"
    grep -E "speed-up|patch:" "runs/registers-library/$folder.log" | tail -2
    python3 -c "import json; r = json.load(open('evolved/$gpu/$folder/result.json')); print('  published (2026-11-25): %.3fx' % r['speedup'])"
  done
} 2>&1 | tee "$OUT/registers_library.txt"
tar czf "$OUT/logs.tar.gz" runs/registers-library/*.log
