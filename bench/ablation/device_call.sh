#!/usr/bin/env bash
# One device call of an ablation study (gi ablate), resumable across calls:
#   bash bench/ablation/device_call.sh STUDY.json MINUTES [gi ablate options, e.g. --redo CELL]
# needs the binaries of scripts/pack_carry.sh in .carry/. The study folder is
# $STUDY_DIR (default runs/ablation/; kept on a warm machine); every call leaves it in
# $OUT/study.tar.gz, and a fresh machine starts from .carry/study.tar.gz
# (that tarball, carried back) instead of from nothing. The README's box
# filter becomes the seed folder runs/seeds/user/box_filter first, and every
# library seed's plain form (gi plain) goes to runs/plain/<family>/<kernel>.
# On a machine of several GPUs each GPU runs one shard (--shard I/N, --device
# I, its own compile cache) of the one study folder; one process per GPU, so
# that no two runs time kernels on one GPU at once.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gi-out}
mkdir -p "$OUT"
study=$1
minutes=${2:-8}
shift 2
dir=${STUDY_DIR:-runs/ablation}
[ -f .carry/bin.tar.xz ] && tar xJf .carry/bin.tar.xz -C .carry
export PATH=/usr/local/cuda/bin:$PATH
GI=$PWD/.carry/gi
{ date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv; nproc; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
mkdir -p runs/seeds/user/box_filter
cp examples/box_filter/box_filter_rows.cu runs/seeds/user/box_filter/kernel.cu
cp examples/box_filter/filled_spec.json runs/seeds/user/box_filter/spec.json
for seed in seeds/*/*/; do
  [ -f "$seed/kernel.cu" ] || continue  # seeds/verification/ holds results, not seeds
  "$GI" plain "$seed" runs/plain > /dev/null || echo "gi plain $seed failed" | tee -a "$OUT/steps.txt"
done
if [ ! -d "$dir" ] && [ -f .carry/study.tar.gz ]; then tar xzf .carry/study.tar.gz; fi
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
[ "$gpus" -ge 1 ] || gpus=1
jobs=$(( $(nproc) / gpus ))
start=$(date +%s)
for ((g = 0; g < gpus; ++g)); do
  timeout $((minutes * 60 + 120)) "$GI" ablate "$study" --out "$dir" --jobs "$jobs" --max-minutes-this-call "$minutes" \
    --shard "$g/$gpus" --device "$g" --cache "runs/ablation-cache-$g" --quiet "$@" > "$OUT/ablate-$g.log" 2>&1 &
done
wait
echo "ablate: $gpus shards done after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps.txt"
tail -n 3 "$OUT"/ablate-*.log
tar czf "$OUT/study.tar.gz" "$dir"
cp "$dir/study_results.json" "$OUT/" 2>/dev/null
grep -c '"status": "complete"' "$dir/study.json"
