#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a while; see fuzz/README.md.
#   fuzz/run_fuzzers.sh [SECONDS] [TARGET...]     (default 300 s; all targets)
# Environment: GI_FUZZ_JOBS (targets run at once, default 2), GI_FUZZ_BUILD
# (build folder, default build-fuzz), CC/CXX (default clang-14/clang++-14).
# New inputs go to fuzz/corpus-run/<target>/ (git-ignored; kept, so a later
# run goes on from them), logs and findings (crash-*, timeout-*, oom-*) to
# fuzz/corpus-run/artifacts-<date>/; the checked-in seeds in fuzz/corpus/ and
# the dictionaries in fuzz/dict/ are read, never written. Exit status 1 when
# any target found something.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_grammar fuzz_bnf fuzz_patch)
jobs=${GI_FUZZ_JOBS:-2}
build=${GI_FUZZ_BUILD:-$root/build-fuzz}
scratch=$root/fuzz/corpus-run
artifacts=$scratch/artifacts-$(date +%Y%m%d-%H%M%S)  # one folder per run

CC=${CC:-clang-14} CXX=${CXX:-clang++-14} cmake -S "$root" -B "$build" -DGI_FUZZ=ON -DBUILD_TESTING=OFF \
  -DGI_WERROR=OFF >/dev/null
cmake --build "$build" --target "${targets[@]}" -j"$jobs" >/dev/null
mkdir -p "$artifacts"

run_one() {
  local target=$1 name=${1#fuzz_}
  mkdir -p "$scratch/$target"
  # -rss_limit_mb: a blow-up is reported as an OOM finding, not by the kernel.
  "$build/fuzz/$target" "$scratch/$target" "$root/fuzz/corpus/$name" -dict="$root/fuzz/dict/$name.dict" \
    -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
    -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$artifacts/$target-" \
    >"$artifacts/$target.log" 2>&1
}

declare -A status
pending=("${targets[@]}")
while [ ${#pending[@]} -gt 0 ]; do
  batch=("${pending[@]:0:$jobs}")
  pending=("${pending[@]:$jobs}")
  pids=()
  for t in "${batch[@]}"; do run_one "$t" & pids+=($!); done
  for i in "${!batch[@]}"; do
    if wait "${pids[$i]}"; then status[${batch[$i]}]=ok; else status[${batch[$i]}]="FOUND SOMETHING"; fi
  done
done

echo "target         result            runs        exec/s  new  corpus   log"
failed=0
for t in "${targets[@]}"; do
  log=$artifacts/$t.log
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  new=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  corpus=$(find "$scratch/$t" -type f | wc -l)
  printf '%-14s %-17s %-11s %-7s %-4s %-8s %s\n' "$t" "${status[$t]}" "${runs:-?}" "${rate:-?}" "${new:-?}" \
    "$corpus" "$log"
  [ "${status[$t]}" = ok ] || failed=1
done
if [ $failed -ne 0 ]; then
  echo "findings (reproduce: $build/fuzz/<target> FILE):"
  ls -1 "$artifacts" | grep -Ev '\.log$' | sed "s|^|  $artifacts/|"
fi
exit $failed
