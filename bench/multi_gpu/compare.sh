#!/usr/bin/env bash
# On a host with two or more GPUs: does a search measure more distinct
# variants per second on two GPUs than on one? The B-spline deformation-field
# search with a budget fixed in evaluations (POPULATION x GENERATIONS, the
# same cores and --jobs) runs once with CUDA_VISIBLE_DEVICES=0 and once with
# `gi evolve --gpus 0,1`; each run stops after its search generations (no
# validation), and bench/throughput/summarise.py tabulates evaluations/s and
# distinct binaries measured/s from the runs' own logs. Where the two-GPU run
# gains less than 1.8x, its evaluator_stats.json says why: compile_wait_seconds
# (the GPUs waiting for NVRTC) against gpu_seconds (worker time, summed over
# the GPUs).
#
#   bash bench/multi_gpu/compare.sh [OUT_DIR] [POPULATION] [GENERATIONS]
#
# GI (default .carry/gi) is the binary; results go to OUT_DIR (default
# runs/multi_gpu) as table.md and summary.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
GI=${GI:-.carry/gi}
out=${1:-runs/multi_gpu}
population=${2:-100}
generations=${3:-10}
seed_dir=seeds/bspline/deformation_field
mkdir -p "$out"
run() {  # name, then the GPU arguments
  local name=$1; shift
  rm -rf "$out/$name"
  # One generation more than is run: the call stops after the search's
  # generations, before retuning and validation (not part of the question).
  "$@" --run-dir "$out/$name" --population "$population" \
    --generations $((generations + 1)) --max-generations-this-call "$generations" --jobs 16 --quiet \
    > "$out/$name.log" 2>&1
}
run one-gpu env CUDA_VISIBLE_DEVICES=0 "$GI" evolve "$seed_dir"
run two-gpus "$GI" evolve "$seed_dir" --gpus 0,1
python3 bench/throughput/summarise.py "$out" --out "$out/table.md"
python3 bench/multi_gpu/summarise_compare.py "$out"
