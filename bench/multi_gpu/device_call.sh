#!/usr/bin/env bash
# One device call on a host with two GPUs (device kind nvidia-h100-x2 or
# nvidia-h200-x2), with the binaries of scripts/pack_carry.sh in .carry/:
#   1. the GPU tests, the two-GPU evaluator test among them;
#   2. bench/multi_gpu/compare.sh: distinct variants measured per second on
#      one GPU and on two, same cores, same budget in evaluations;
#   3. `gi evolve-all --gpus 0,1` and `mpirun -n 2 gi evolve-all` on two small
#      kernels: one kernel per GPU, results gathered in one folder.
# Every log goes to $OUT (default /tmp/gi-out); each step has its own time
# limit so that one stuck step leaves the call's time to the others.
#   bash bench/multi_gpu/device_call.sh [POPULATION] [GENERATIONS]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gi-out}
mkdir -p "$OUT"
population=${1:-100}
generations=${2:-20}
[ -f .carry/bin.tar.xz ] && tar xJf .carry/bin.tar.xz -C .carry
export PATH=/usr/local/cuda/bin:$PATH
GI=$PWD/.carry/gi
{ date -u; nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv; nproc; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

step() {  # name, seconds, command...
  local name=$1 limit=$2; shift 2
  local start=$(date +%s)
  timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
  echo "$name: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps.txt"
}

step gpu_tests 200 env GI_TEST_SOURCE_DIR=$PWD GI_TEST_BINARY=$GI GI_TEST_WORKER=$PWD/.carry/gi_test_worker \
  .carry/gi_tests --gtest_filter='*Gpu*:GpuRunner*'
grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests ran' "$OUT/gpu_tests.log"

step compare 300 env GI=$GI bash bench/multi_gpu/compare.sh "$OUT/compare" "$population" "$generations"
tail -4 "$OUT/compare.log"

kernels=tools/sum_reduction,tools/max_vector_length
tiny=(--kernels "$kernels" --population 20 --generations 3 --budget-per-kernel 2 --quiet)
step evolve_all_gpus 150 "$GI" evolve-all --gpus 0,1 --out "$OUT/evolve_all_gpus" --evolved-dir "$OUT/evolved_gpus" "${tiny[@]}"
step evolve_all_mpi 150 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpirun -n 2 "$GI" evolve-all --out "$OUT/evolve_all_mpi" --evolved-dir "$OUT/evolved_mpi" "${tiny[@]}"
# Which process ran which kernel on which GPU, from each run's own config.
for d in "$OUT"/evolve_all_gpus "$OUT"/evolve_all_mpi; do
  echo "== $d"
  find "$d" -name config.json | sort | while read -r c; do
    echo "$c: $(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print({k: c.get(k) for k in ("seed_dir", "device", "devices")})' "$c")"
  done
  find "$d" -maxdepth 1 -name '*.json' -printf '%f\n'
done | tee "$OUT/evolve_all_placement.txt"
# Only small files come back: pack the run folders.
tar czf "$OUT/runs.tar.gz" -C "$OUT" compare evolve_all_gpus evolve_all_mpi evolved_gpus evolved_mpi 2>/dev/null
rm -rf "$OUT"/compare/*/ "$OUT"/evolve_all_gpus "$OUT"/evolve_all_mpi "$OUT"/evolved_gpus "$OUT"/evolved_mpi
