#!/usr/bin/env bash
# Nsight Compute profiles of the seed and the evolved kernel of published
# results (docs/design.md: a speed-up above 10x is explained with a profile of
# both). For each evolved/<gpu>/<folder>/ given, runs `gi check` on the
# training workload under ncu, once with the seed's tuning and once with the
# evolved patch and tuning from its result.json, and writes ncu_seed.txt and
# ncu_evolved.txt beside the result. Run on the GPU machine from the
# repository root, with the binaries carried in .carry/:
#   bash scripts/ncu_profile.sh evolved/nvidia-h100-80gb-hbm3/tools-sum_reduction ...
set -uo pipefail
cd "$(dirname "$0")/.."
GI=${GI:-.carry/gi}
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
for folder in "$@"; do
  result="$folder/result.json"
  [ -f "$result" ] || { echo "ncu_profile: $result not found" >&2; continue; }
  # Profiles already taken of this very result are kept (a session resumes).
  if [ -s "$folder/ncu_evolved.txt" ] && [ "$folder/ncu_evolved.txt" -nt "$result" ] && grep -q Duration "$folder/ncu_evolved.txt"; then
    echo "== $folder: profiled already"; continue
  fi
  # kernel, entry, then the gi check options of the seed and of the evolved kernel.
  mapfile -t args < <(python3 - "$result" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
kernel = r["kernel"]
entry = json.load(open("seeds/%s/spec.json" % kernel))["entry"]
def opts(t):
    return " ".join(["--block %d" % t["block_size"]] + ["--option=%s" % o for o in t["options"]])
print(kernel)
print(entry)
print(opts(r["tuning"]["seed"]))
print(opts(r["tuning"]["evolved"]))
PY
)
  kernel=${args[0]} entry=${args[1]}
  for which in seed evolved; do
    if [ "$which" = seed ]; then opts=${args[2]} patch=""; else opts=${args[3]} patch="--patch $folder/patch.gi"; fi
    echo "== $kernel $which: $opts $patch"
    # shellcheck disable=SC2086
    "$NCU" --kernel-name "regex:^${entry}\$" --launch-count 1 $sections \
      "$GI" check "seeds/$kernel" --workload train $opts $patch --cache .gi-cache > "$folder/ncu_$which.txt" 2>&1 \
      || echo "ncu_profile: $kernel $which failed (see $folder/ncu_$which.txt)"
    grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per Thread" \
      "$folder/ncu_$which.txt" | head -8
  done
done
