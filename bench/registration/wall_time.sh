#!/usr/bin/env bash
# One device call: how long a user waits for `gi register` on the Colin27
# test pair, from start to exit (/usr/bin/time), as issue 30 measures it:
#   - with an empty compile cache (a fresh --cache-dir: every kernel compiled);
#   - then REPEATS runs after one that fills the cache (the default case of a
#     second run: the user's cache folder);
# with the evolved kernels, then the seeds (fewer runs: 15-20 s each). Writes
# the grid and the warped image only (gi register's default); the dense
# displacement of each kernel set's first run comes from `gi transform`
# afterwards, outside the timed run, for `gi accuracy` and the seed-vs-evolved
# difference. Needs .carry/ from bench/registration/pack_device.sh.
#   device run: bash bench/registration/wall_time.sh [REPEATS] [SEED_REPEATS]
# PAIR_OPTIONS adds gi make-pair options (e.g. --affine: a known affine and
# the floating image on another grid) and TAG names the run folder
# (runs/wall-time-TAG); MASK=1 registers with the pair's brain mask as the
# reference mask (--rmask). Everything lands in $OUT/wall_time${TAG}.tar.gz;
# summarise with bench/registration/summarise_wall_time.py.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gi-out}
mkdir -p "$OUT"
repeats=${1:-5}
seed_repeats=${2:-2}
[ -f .carry/bin.tar.xz ] && tar xJf .carry/bin.tar.xz -C .carry
GI=$PWD/.carry/gi
R=runs/wall-time${TAG:+-$TAG}
mkdir -p "$R"
{ date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv; nproc; "$GI" doctor | head -5; } > "$R/machine.txt" 2>&1
cat "$R/machine.txt"
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/^-|-$//g')
pair=$R/pair
if [ ! -f "$pair/pair.json" ]; then
  # shellcheck disable=SC2086
  "$GI" make-pair --out "$pair" --image .carry/ch2.nii.gz --brain .carry/ch2bet.nii.gz --seed 1 ${PAIR_OPTIONS:-} \
    > "$R/make_pair.log" 2>&1
fi
# timed NAME KERNELS CACHE: one gi register, its wall seconds in NAME.wall
timed() {
  local name=$1 kernels=$2 cache=$3
  /usr/bin/time -f '%e' -o "$R/$name.wall" "$GI" register --seeds seeds --reference "$pair/reference.nii.gz" \
    --floating "$pair/floating.nii.gz" --kernels "$kernels" --out "$R/$name" --cache-dir "$cache" \
    ${MASK:+--rmask "$pair/brain_mask.nii.gz"} > "$R/$name.log" 2>&1
  echo "$name: exit $? wall $(cat "$R/$name.wall") s, $(grep -o 'registered in [0-9.]* s, [0-9.]* s in all' "$R/$name.log")"
}
series() {  # series TAG KERNELS N
  local tag=$1 kernels=$2 n=$3
  rm -rf "$R/cache-$tag-empty"
  timed "$tag-empty-cache" "$kernels" "$R/cache-$tag-empty"
  timed "$tag-fill" "$kernels" "$R/cache-$tag"
  for i in $(seq 1 "$n"); do timed "$tag-$i" "$kernels" "$R/cache-$tag"; done
}
series evolved "evolved/$slug" "$repeats"
series seeds seeds "$seed_repeats"
for tag in evolved seeds; do
  "$GI" transform --seeds seeds --reference "$pair/reference.nii.gz" --cpp "$R/$tag-1/control_points.nii.gz" \
    --kernels "$([ $tag = evolved ] && echo "evolved/$slug" || echo seeds)" --cache-dir "$R/cache-$tag" \
    --displacement "$R/$tag-1/displacement.nii" > "$R/$tag-1/transform.log" 2>&1
  echo "transform $tag-1: exit $?"
  "$GI" accuracy --displacement "$R/$tag-1/displacement.nii" --truth "$pair/truth_displacement.nii.gz" \
    --mask "$pair/brain_mask.nii.gz" --json "$R/$tag-1/accuracy.json" > "$R/$tag-1/accuracy.txt" 2>&1
  grep -i "mean" "$R/$tag-1/accuracy.txt" | head -3
done
"$GI" accuracy --displacement "$R/seeds-1/displacement.nii" --compare "$R/evolved-1/displacement.nii" \
  --truth "$pair/truth_displacement.nii.gz" --mask "$pair/brain_mask.nii.gz" --json "$R/compare_seeds_vs_evolved.json" \
  > "$R/compare_seeds_vs_evolved.txt" 2>&1
grep compare "$R/compare_seeds_vs_evolved.txt"
tar czf "$OUT/wall_time${TAG:+-$TAG}.tar.gz" --exclude='*.nii.gz' --exclude='*.nii' --exclude='cache*' "$R"
