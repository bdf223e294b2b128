#!/usr/bin/env bash
# One call on the GPU machine: doctor, GPU tests, benchmarks and (resumable)
# evolution runs, with every log in runs/logs/ (inside $OUT/runs.tar.gz). Binaries are built on the
# development machine and carried in .carry/ (the GPU machine lacks CLI11):
#   scripts/pack_carry.sh            # here: build, strip, pack into .carry/
#   device run: bash scripts/gpu_session.sh [--tests] [--verify] [--survey "SEED..."] [--evolve "SEED..."]
#                                          [--evolve-all "ARGS"] [--minutes M] [--args "..."] [--gpu SLUG]
# --gpu SLUG (e.g. nvidia-h200) stops at once, exit 3, on a machine with another GPU.
# --evolve-all "ARGS" goes on with `gi evolve-all ARGS` in runs/evolve-all-<gpu>/
# (give "" for the defaults): it stops at a generation end with 2.5 minutes of
# the call left (validation and sanitizers of a kernel need them) and the
# next call resumes it; its log is runs/logs/evolve-all.log.
# --carry-over "GPU_SLUG" times that GPU's evolved kernels (evolved/GPU_SLUG)
# on this GPU beside this GPU's own (`gi carry-over`), after the evolution
# runs; the table and JSON land in runs/carry_over/.
# --ncu "FOLDER..." profiles seed and evolved kernel of published results
# (scripts/ncu_profile.sh) after the evolution runs; the profiles land beside
# each result.json and come back in runs.tar.gz.
# --floor times every seed of the library against itself (`gi bench --rounds
# 5`, the spec's block size) for its fraction of the memory floor, JSON in
# runs/floor/; scripts/floor_geomean.py sets them beside evolved/<gpu>/.
# --verify runs `gi verify` over every seed (resumable: results kept in
# seeds/verification/<gpu>/, carried back in runs.tar.gz; --verify-args
# "--again SEED..." re-checks chosen seeds). --survey times every switch
# setting of each seed at every block size against the seed (`gi bench
# --switches`), tables in survey.log, JSON in runs/surveys/.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gi-out}
mkdir -p "$OUT"
# At most 8 files come back from $OUT: the logs go into runs/logs/ and travel
# inside runs.tar.gz with the runs.
LOGS=runs/logs
mkdir -p "$LOGS"
GI=.carry/gi
# scripts/pack_carry.sh sends the binaries compressed.
[ -f .carry/bin.tar.xz ] && tar xJf .carry/bin.tar.xz -C .carry
export PATH=/usr/local/cuda/bin:$PATH
expect_gpu="" verify_args="" tests=0 tour=0 verify=0 evolve="" survey="" ncu="" floor=0 minutes=8 extra="" evolve_all="" carry_over=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tests) tests=1 ;;
    --tour) tour=1 ;;
    --verify) verify=1 ;;
    --verify-args) verify_args="$2"; shift ;;
    --evolve) evolve="$2"; shift ;;
    --evolve-all) evolve_all="run $2"; shift ;;
    --survey) survey="$2"; shift ;;
    --ncu) ncu="$2"; shift ;;
    --carry-over) carry_over="$2"; shift ;;
    --floor) floor=1 ;;
    --minutes) minutes="$2"; shift ;;
    --gpu) expect_gpu="$2"; shift ;;
    --args) extra="$2"; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
deadline=$(( $(date +%s) + minutes * 60 ))
gpu_here=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/^-|-$//g')
# --gpu SLUG: a call for one GPU model can be given another (the device tool
# may answer an H200 call with an H100); an evolve-all would then start a new
# plan for the wrong GPU and spend the call on it.
if [ -n "$expect_gpu" ] && [ "$gpu_here" != "$expect_gpu" ]; then
  echo "gpu_session: this machine's GPU is '$gpu_here', not '$expect_gpu' (--gpu); nothing was run" >&2
  exit 3
fi
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; $GI doctor; } > "$OUT/doctor.txt" 2>&1
cat "$OUT/doctor.txt"
if [ "$tests" = 1 ]; then
  GI_TEST_SOURCE_DIR=$PWD GI_TEST_BINARY=$PWD/$GI GI_TEST_WORKER=$PWD/.carry/gi_test_worker \
    .carry/gi_tests --gtest_filter='*Gpu*:GpuRunner*' \
    2>&1 | tee "$LOGS/gpu_tests.log" | grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests ran'
fi
mkdir -p runs
[ -f .carry/runs.tar.gz ] && tar xzf .carry/runs.tar.gz
# A warm machine keeps runs/ (ignored) between calls but resets the tracked
# evolved/: results published by an earlier call of this machine come back
# from the copy kept in runs/.
[ -d runs/.evolved-published ] && cp -r runs/.evolved-published/. evolved/
if [ "$tour" = 1 ]; then
  # The README's commands, with gi=$GI; a step's wall time as a user sees it.
  {
    gi=$GI
    step() { local t0; t0=$(date +%s.%N); echo "\$ $*"; "$@"; local rc=$?; echo "[tour] exit $rc in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s"; }
    rm -rf runs/tour runs/tour-evolved
    step "$gi" evolve bspline/bending_energy --population 40 --generations 5 --run-dir runs/tour --evolved-dir runs/tour-evolved
    step "$gi" report runs/tour
    ls runs/tour-evolved/*/bspline-bending_energy/
    diff_file=$(ls runs/tour-evolved/*/bspline-bending_energy/kernel.diff)
    step patch -p1 -i "$diff_file"
    patch -R -p1 -i "$diff_file"  # the README takes it back with git checkout
  } 2>&1 | tee "$LOGS/tour.log" | grep -E '^\$|^\[tour\]|speed|kernel.cu|patching|error'
fi
if [ "$verify" = 1 ]; then
  left=$(( deadline - $(date +%s) - 20 ))
  timeout --signal=INT --kill-after=10 "$left" $GI verify --cache .gi-cache --out "seeds/verification/$gpu_here" $verify_args 2>&1 | tee -a "$LOGS/verify.log" | tail -n 50
fi
for seed in $evolve; do
  left=$(( deadline - $(date +%s) - 20 ))
  [ "$left" -le 30 ] && { echo "no time left for $seed"; break; }
  name=$(basename "$seed")
  if [ -f "runs/$name/config.json" ]; then
    args=(evolve --resume "runs/$name")
  else
    args=(evolve "$seed" --run-dir "runs/$name" --jobs 16 $extra)
  fi
  echo "== $name (${left}s left): ${args[*]}"
  timeout --signal=INT --kill-after=10 "$left" $GI "${args[@]}" 2>&1 | tee -a "$LOGS/evolve-$name.log" | tail -n 25
done
if [ -n "$evolve_all" ]; then
  left=$(( deadline - $(date +%s) - 20 ))
  stop_minutes=$(( (left - 150) / 60 ))
  if [ "$stop_minutes" -ge 1 ]; then
    echo "== evolve-all (${left}s left, stops at a generation end after ${stop_minutes} min)"
    # shellcheck disable=SC2086
    # Every core: with --gpus the children share them out (16 each on a host of 4 GPUs and 64 cores).
    timeout --signal=INT --kill-after=10 "$left" $GI evolve-all ${evolve_all#run } --jobs "$(nproc)" \
      --max-minutes-this-call "$stop_minutes" 2>&1 | tee -a "$LOGS/evolve-all.log" | grep -E '^\[evolve-all\]|^(finished|in progress)' | tail -n 60
  else
    echo "no time left for evolve-all"
  fi
fi
if [ -n "$carry_over" ]; then
  left=$(( deadline - $(date +%s) - 20 ))
  if [ "$carry_over" = "$gpu_here" ]; then
    echo "no carry-over: evolved/$carry_over is this GPU's own" | tee -a "$LOGS/carry-over.log"
  elif [ "$left" -gt 30 ]; then
    timeout --kill-after=10 "$left" $GI carry-over "evolved/$gpu_here" "evolved/$carry_over" --out-dir runs/carry_over \
      --cache .gi-cache 2>&1 | tee -a "$LOGS/carry-over.log" | tail -n 50
  else
    echo "no time left for carry-over" | tee -a "$LOGS/carry-over.log"
  fi
fi
if [ -n "$ncu" ]; then
  left=$(( deadline - $(date +%s) - 20 ))
  if [ "$left" -gt 30 ]; then
    # shellcheck disable=SC2086
    timeout --kill-after=10 "$left" bash scripts/ncu_profile.sh $ncu 2>&1 | tee -a "$LOGS/ncu.log"
  else
    echo "no time left for ncu profiles" | tee -a "$LOGS/ncu.log"
  fi
fi
mkdir -p runs/surveys
for seed in $survey; do
  left=$(( deadline - $(date +%s) - 20 ))
  [ "$left" -le 30 ] && { echo "no time left to survey $seed"; break; }
  name=$(basename "$seed")
  timeout --signal=INT --kill-after=10 "$left" $GI bench "$seed" --switches --blocks 64,128,256,512,1024 --rounds 20 \
    --cache .gi-cache --json > "runs/surveys/$name.json" 2>> "$LOGS/survey.log" || echo "survey of $seed failed" | tee -a "$LOGS/survey.log"
  python3 - "runs/surveys/$name.json" "$seed" <<'PY' | tee -a "$LOGS/survey.log"
import json, sys
rows = json.load(open(sys.argv[1]))
print("== " + sys.argv[2])
best = {}
for r in rows:
    c = r.get("comparison")
    key = r["setting"]
    if c is None:
        print("  %-50s block %4d FAILED %s" % (key, r["tuning"]["block_size"], r["error"][:160]))
        continue
    if key not in best or c["evolved"]["median_ms"] < best[key][1]["evolved"]["median_ms"]:
        best[key] = (r["tuning"]["block_size"], c)
for key, (block, c) in best.items():
    print("  %-50s block %4d %9.4f ms  seed(block %d) %9.4f ms  %7.3fx [%.3f]  floor %5.1f%%" % (
        key, block, c["evolved"]["median_ms"], c["tuning"]["seed"]["block_size"], c["seed"]["median_ms"],
        c["speedup"], c["speedup_ci_low"], 100 * c["evolved_floor_fraction"]))
PY
done
if [ "$floor" = 1 ]; then
  mkdir -p runs/floor
  for kernel in $($GI list --json | python3 -c 'import json, sys; print(" ".join(k["kernel"] for k in json.load(sys.stdin)))'); do
    left=$(( deadline - $(date +%s) - 20 ))
    [ "$left" -le 30 ] && { echo "no time left for the floor survey at $kernel" | tee -a "$LOGS/floor.log"; break; }
    out="runs/floor/${kernel/\//-}.json"
    [ -s "$out" ] && continue
    timeout --kill-after=10 "$left" $GI bench "seeds/$kernel" --rounds 5 --json --timeout "$left" > "$out.part" 2>> "$LOGS/floor.log" \
      && mv "$out.part" "$out" || echo "floor survey of $kernel failed" | tee -a "$LOGS/floor.log"
  done
fi
mkdir -p seeds/verification runs/.evolved-published
cp -r evolved/. runs/.evolved-published/
# Only what this session made comes back (files over the device's size limit
# do not): the copy in runs/.evolved-published stays behind.
# scripts/evolve_all_records.py keep puts the records in the ignored runs/ and
# the published kernels in evolved/.
tar czf "$OUT/runs.tar.gz" --exclude='runs/.evolved-published' runs evolved seeds/verification
ls -la "$OUT"
