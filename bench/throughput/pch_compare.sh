#!/usr/bin/env bash
# Compile throughput with and without NVRTC's automatic precompiled headers
# in the compile servers (fitness/compile/automatic_pch.hpp): `gi mutants`
# (random single edits, each compiled with NVRTC, two-stage, no cache) on
# kernels that include the toolkit's headers and on a library seed that
# includes nothing, GI_AUTOMATIC_PCH=0 against the default, ROUNDS times
# each, interleaved. CPU only. Prints one line per run and the medians.
#   bash bench/throughput/pch_compare.sh [COUNT] [ROUNDS] [JOBS]
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${1:-60}
rounds=${2:-3}
jobs=${3:-2}
gi=${GI:-build/gi/gi}
seeds=(bench/throughput/kernels/cg_block_sum.cu bench/throughput/kernels/cub_block_max.cu tools/sum_reduction)
for seed in "${seeds[@]}"; do
  for r in $(seq "$rounds"); do
    for pch in 0 1; do
      wall=$(GI_AUTOMATIC_PCH=$pch "$gi" mutants "$seed" --count "$count" --processes --jobs "$jobs" --seed "$r" |
             python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["wall_seconds"], d["compiled"], d["total"], d["unique_sources"])')
      echo "$seed pch=$pch round=$r wall_s compiled total unique: $wall"
    done
  done
done | tee /dev/stderr | python3 -c '
import sys, statistics, collections
w = collections.defaultdict(list)
for line in sys.stdin:
    seed, pch = line.split()[0], line.split()[1]
    w[(seed, pch)].append(float(line.split(":")[1].split()[0]))
for (seed, pch), v in sorted(w.items()):
    print(f"{seed:45} {pch}: median {statistics.median(v):.2f} s (min {min(v):.2f}, max {max(v):.2f}, {len(v)} runs)")
'
