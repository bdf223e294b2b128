#!/usr/bin/env bash
# One device call of an ablation study (gi ablate), resumable across calls:
#   bash bench/ablation/device_call.sh STUDY.json MINUTES [gi ablate options, e.g. --redo CELL]
# needs the binaries of scripts/pack_carry.sh in .carry/. The study folder is
# $STUDY_DIR (default runs/ablation/; kept on a warm machine); every call leaves it in
# $OUT/study.tar.gz, and a fresh machine starts from .carry/study.tar.gz
# (that tarball, carried back) instead of from nothing. The README's box
# filter becomes the seed folder runs/seeds/user/box_filter first.
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
if [ ! -d "$dir" ] && [ -f .carry/study.tar.gz ]; then tar xzf .carry/study.tar.gz; fi
start=$(date +%s)
timeout $((minutes * 60 + 120)) "$GI" ablate "$study" --out "$dir" --jobs 16 --max-minutes-this-call "$minutes" \
  --quiet "$@" > "$OUT/ablate.log" 2>&1
echo "ablate: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps.txt"
tail -5 "$OUT/ablate.log"
tar czf "$OUT/study.tar.gz" "$dir"
cp "$dir/study_results.json" "$OUT/" 2>/dev/null
grep -c '"status": "complete"' "$dir/study.json"
