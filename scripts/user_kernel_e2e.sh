#!/usr/bin/env bash
# On the GPU machine: a user's kernel end to end, as the README's walkthrough
# does it: the seed checked once on the GPU (it is its own reference), then
# `gi evolve` through held-out validation and compute-sanitizer, for each
# seed folder given. Logs and the run and evolved folders go to $OUT.
#   bash scripts/user_kernel_e2e.sh POPULATION GENERATIONS SEED_DIR...
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gi-out}
mkdir -p "$OUT"
[ -f .carry/bin.tar.xz ] && tar xJf .carry/bin.tar.xz -C .carry
export PATH=/usr/local/cuda/bin:$PATH
GI=${GI:-$PWD/.carry/gi}
population=$1 generations=$2
shift 2
for seed in "$@"; do
  name=$(basename "$(dirname "$seed")")-$(basename "$seed")
  {
    echo "== gi check $seed"
    "$GI" check "$seed" --workload train --cache runs/user-cache
    echo "== gi evolve $seed"
    "$GI" evolve "$seed" --population "$population" --generations "$generations" --jobs 16 \
      --run-dir "runs/user/$name" --evolved-dir runs/user-evolved --cache runs/user-cache
    echo "exit $?"
  } > "$OUT/$name.log" 2>&1
  tail -25 "$OUT/$name.log"
done
tar czf "$OUT/user_runs.tar.gz" runs/user runs/user-evolved 2>/dev/null
