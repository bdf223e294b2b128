#!/usr/bin/env bash
# One device call: `gi evolve` of the library's jacobian field at the
# settings of the library's evolve-all (population 100, 20 generations, a
# 4-minute search budget), every family on, to set beside its entry in
# evolved/<gpu>/ (made before `stage`). Summary in $OUT/stage_library.txt.
#   bash bench/transform/stage_library_call.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
rm -rf runs/stage-library && mkdir -p runs/stage-library
{
  cat "$OUT/machine.txt"
  start=$(date +%s)
  "$GI" evolve deformation/jacobian_field --population 100 --generations 20 --budget-minutes 4 --jobs 16 --quiet \
    --run-dir runs/stage-library/run --evolved-dir runs/stage-library/evolved --cache runs/stage-library/cache \
    > runs/stage-library/evolve.log 2>&1
  echo "evolve deformation/jacobian_field 100x20, 4 min: exit $? in $(( $(date +%s) - start )) s"
  grep -E "speed-up|patch:|of floor|generation|evaluations" runs/stage-library/evolve.log | tail -8
  find runs/stage-library/evolved -name result.json -exec python3 -c "
import json,sys; r=json.load(open(sys.argv[1])); print({k: r[k] for k in r if k in ('patch','speedup','speedup_ci_low','validation','generations','evaluations')})" {} \;
} 2>&1 | tee "$OUT/stage_library.txt"
