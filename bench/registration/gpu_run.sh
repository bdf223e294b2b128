#!/usr/bin/env bash
# One device call: the Colin27 test pair registered with the seed kernels and
# with this GPU's evolved kernels, alternately, REPEATS times each; accuracy
# of every run against the known deformation, the seed-vs-evolved difference,
# and the registration GPU tests. Needs in .carry/: bin.tar.xz
# (scripts/pack_carry.sh) and ch2.nii.gz, ch2bet.nii.gz (Debian mricron-data;
# bench/registration/pack_device.sh puts them there).
#   device run: bash bench/registration/gpu_run.sh [REPEATS] [extra gi register options]
# Everything lands in $OUT/registration.tar.gz (the images stay behind: the
# GPU machine's $OUT brings back few files); summarise with
# bench/registration/summarise.py.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gi-out}
mkdir -p "$OUT"
repeats=${1:-3}
tag=${TAG:-}  # runs are named $tag seeds-N / evolved-N, so variants can sit side by side
shift || true
[ -f .carry/bin.tar.xz ] && tar xJf .carry/bin.tar.xz -C .carry
export PATH=/usr/local/cuda/bin:$PATH
GI=$PWD/.carry/gi
R=runs/registration
mkdir -p "$R"
{ date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv; nproc; } > "$R/machine.txt" 2>&1
cat "$R/machine.txt"
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/^-|-$//g')
pair=$R/pair
if [ ! -f "$pair/pair.json" ]; then
  /usr/bin/time -v "$GI" make-pair --out "$pair" --image .carry/ch2.nii.gz --brain .carry/ch2bet.nii.gz --seed 1 \
    > "$R/make_pair.log" 2>&1
fi
tail -3 "$R/make_pair.log"
run() {  # run NAME KERNELS
  local name=$1 kernels=$2
  "$GI" register --seeds seeds --reference "$pair/reference.nii.gz" --floating "$pair/floating.nii.gz" \
    --kernels "$kernels" --out "$R/$name" --progress --cache-dir "$R/cache" "${@:3}" > "$R/$name.log" 2>&1
  echo "$name: exit $? $(grep -o 'registered in [0-9.]* s' "$R/$name.log")"
  # gi register writes the grid; the dense displacement is made from it.
  "$GI" transform --seeds seeds --reference "$pair/reference.nii.gz" --cpp "$R/$name/control_points.nii.gz" \
    --kernels "$kernels" --cache-dir "$R/cache" --displacement "$R/$name/displacement.nii.gz" > "$R/$name.transform.log" 2>&1
  "$GI" accuracy --displacement "$R/$name/displacement.nii.gz" --truth "$pair/truth_displacement.nii.gz" \
    --mask "$pair/brain_mask.nii.gz" --json "$R/$name/accuracy.json" > "$R/$name/accuracy.txt" 2>&1
}
for i in $(seq 1 "$repeats"); do
  run "${tag}seeds-$i" seeds "$@"
  run "${tag}evolved-$i" "evolved/$slug" "$@"
done
compare() {  # compare A B: how far two runs' displacements differ inside the brain
  "$GI" accuracy --displacement "$R/$1/displacement.nii.gz" --compare "$R/$2/displacement.nii.gz" \
    --truth "$pair/truth_displacement.nii.gz" --mask "$pair/brain_mask.nii.gz" --json "$R/compare_$1_vs_$2.json" \
    > "$R/compare_$1_vs_$2.txt" 2>&1
  echo "$1 vs $2: $(grep compare "$R/compare_$1_vs_$2.txt")"
}
compare "${tag}seeds-1" "${tag}evolved-1"
if [ "$repeats" -ge 2 ]; then
  compare "${tag}seeds-1" "${tag}seeds-2"
  compare "${tag}evolved-1" "${tag}evolved-2"
fi
if [ -f .carry/gi_tests ] && [ "${SKIP_TESTS:-0}" != 1 ]; then
  GI_TEST_SOURCE_DIR=$PWD GI_TEST_BINARY=$GI GI_TEST_WORKER=$PWD/.carry/gi_test_worker \
    timeout 200 .carry/gi_tests --gtest_filter="${TEST_FILTER:-Registration*:RegisterCommand*}" > "$R/gpu_tests.log" 2>&1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests ran|OK \]|FAILED' "$R/gpu_tests.log"
fi
# The first part of the elastix bundle (pack_device.sh --elastix) waits in
# runs/ for bench/registration/gpu_elastix.sh.
if [ -f .carry/elastix.part-a ]; then mkdir -p runs/elastix-parts && cp .carry/elastix.part-a runs/elastix-parts/; fi
tar czf "$OUT/registration.tar.gz" --exclude='*.nii.gz' --exclude=cache "$R"
