#!/usr/bin/env bash
# One device call: `gi evolve` of library kernels (default: the jacobian
# field) at the settings of the library's evolve-all (population 100, 20
# generations, a 4-minute search budget), every family on, to set beside
# their entries in evolved/<gpu>/ (made before `stage`). Summary in
# $OUT/stage_library.txt.
#   bash bench/transform/stage_library_call.sh [family/kernel ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
rm -rf runs/stage-library && mkdir -p runs/stage-library
{
  cat "$OUT/machine.txt"
  for k in "${@:-deformation/jacobian_field}"; do
    name=$(basename "$k")
    start=$(date +%s)
    "$GI" evolve "$k" --population 100 --generations 20 --budget-minutes 4 --jobs 16 --quiet \
      --run-dir "runs/stage-library/run-$name" --evolved-dir runs/stage-library/evolved --cache runs/stage-library/cache \
      > "runs/stage-library/evolve-$name.log" 2>&1
    echo "evolve $k 100x20, 4 min: exit $? in $(( $(date +%s) - start )) s"
    find runs/stage-library/evolved -path "*$name*" -name result.json -exec python3 -c "
import json,sys; r=json.load(open(sys.argv[1])); print({k: r[k] for k in r if k in ('patch','speedup','speedup_ci_low','validation')})" {} \;
  done
} 2>&1 | tee "$OUT/stage_library.txt"
