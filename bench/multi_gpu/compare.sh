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
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
rows = {}
for name in ("one-gpu", "two-gpus"):
    run = os.path.join(out, name)
    stats = json.load(open(os.path.join(run, "evaluator_stats.json")))
    gens = [json.loads(l) for l in open(os.path.join(run, "generations.jsonl"))]
    measured = 0
    with open(os.path.join(run, "evaluations.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            measured += bool(e.get("compiled")) and not e.get("cached") and not e.get("same_binary")
    seconds = gens[-1]["search_seconds"]
    rows[name] = {"search_seconds": seconds, "evaluations": gens[-1]["evaluations"], "measured": measured,
                  "measured_per_second": measured / seconds, "compile_wait_seconds": stats["compile_wait_seconds"],
                  "gpu_seconds": stats["gpu_seconds"], "total_seconds": stats["total_seconds"]}
ratio = rows["two-gpus"]["measured_per_second"] / rows["one-gpu"]["measured_per_second"]
summary = {"runs": rows, "measured_per_second_ratio": ratio}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=2)
for name, r in rows.items():
    print(f"{name:9s} {r['measured']:5d} measured in {r['search_seconds']:6.1f} s = {r['measured_per_second']:6.1f}/s; "
          f"waiting for NVRTC {r['compile_wait_seconds']:6.1f} s, worker time {r['gpu_seconds']:6.1f} s (summed over GPUs)")
print(f"two GPUs / one GPU: {ratio:.2f}x distinct variants measured per second")
PY
