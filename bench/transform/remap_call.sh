#!/usr/bin/env bash
# One device call: the `remap` family (issue 28) on the two 2-D kernels whose
# x thread index walks a matrix's rows: the user kernel scale_rows and
# Rodinia's Fan2 (gaussian.cu, drafted by `gi init` as a user would; the
# corpus copies in .corpus/, carried with .carry). For each: `gi bench` of
# `remap:xy` against the seed at the spec's block (interleaved, 30 rounds),
# then `gi evolve` with every family (POPULATION x GENERATIONS, the seed its
# own reference) to see whether the search finds it.
#   bash bench/transform/remap_call.sh [POPULATION GENERATIONS]
# Summary in $OUT/remap.txt; logs in $OUT/*.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
population=${1:-20} generations=${2:-4}
rm -rf runs/remap && mkdir -p runs/remap
"$GI" init .corpus/rodinia-9c10d3ea/cuda/gaussian/gaussian.cu --entry Fan2 --out runs/remap/Fan2 --force \
  --size Size=2048 --size j1=1 --size t=5 > "$OUT/init-Fan2.log" 2>&1
echo "remap:xy" > runs/remap/remap.gi
{
  for seed in tests/data/user/scale_rows runs/remap/Fan2; do
    name=$(basename "$seed")
    echo "== $name: gi bench remap:xy (block = the spec's default)"
    "$GI" bench "$seed" --patch runs/remap/remap.gi --rounds 30 --cache runs/remap/cache > "$OUT/bench-$name.log" 2>&1
    echo "  exit $?: $(grep -iE 'speed-up|floor' "$OUT/bench-$name.log" | tr -s ' ' | tr '\n' ';')"
    start=$(date +%s.%N)
    "$GI" evolve "$seed" --population "$population" --generations "$generations" --jobs 16 \
      --run-dir "runs/remap/evolve-$name" --evolved-dir runs/remap/evolved --cache runs/remap/cache \
      > "$OUT/evolve-$name.log" 2>&1
    echo "== $name: gi evolve $population x $generations, exit $? in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }") s"
    grep -E "speed-up|patch:|of floor|FAILED|error" "$OUT/evolve-$name.log" | tail -6
  done
} 2>&1 | tee "$OUT/remap.txt"
tar czf "$OUT/remap_runs.tar.gz" runs/remap/evolved
