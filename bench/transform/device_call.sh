#!/usr/bin/env bash
# One device call: the transformation families (issue 28) measured end to end
# with `gi evolve` on kernels nobody wrote alternative paths for:
#  - the plain kernels of tests/data/user/ (every family on, the seed
#    its own reference);
#  - library seeds whose hand-written switch paths are withheld: only the
#    transformation and structural families (--families transform,structural),
#    so no edit can choose or copy a hand-written path.
# Needs the binaries of scripts/pack_carry.sh in .carry/. Logs and the run and
# evolved folders come back in $OUT/transform_runs.tar.gz; the logs' tails also
# in $OUT/transform.log.
#   bash bench/transform/device_call.sh POPULATION GENERATIONS [NAME...]
# NAMEs (user kernel folder names or withheld library kernels such as
# similarity/nmi_joint_histogram) pick a subset; none: all of them.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gi-out}
mkdir -p "$OUT"
# Fresh runs every call (a warm machine keeps runs/): the benchmark measures, it does not resume.
rm -rf runs/transform runs/transform-evolved
mkdir -p runs/transform
[ -f .carry/bin.tar.xz ] && tar xJf .carry/bin.tar.xz -C .carry
export PATH=/usr/local/cuda/bin:$PATH
GI=$PWD/.carry/gi
population=${1:-20} generations=${2:-3}
shift 2 || true
only=("$@")
wanted() {  # name: whether this call measures it
  [ ${#only[@]} -eq 0 ] && return 0
  local x
  for x in "${only[@]}"; do [ "$x" = "$1" ] && return 0; done
  return 1
}
{ date -u; nvidia-smi --query-gpu=index,name,driver_version --format=csv; nproc; "$GI" doctor | head -2; } > "$OUT/machine.txt" 2>&1
evolve() {  # name, then gi evolve's arguments
  local name=$1 start
  shift
  start=$(date +%s.%N)
  "$GI" evolve "$@" --population "$population" --generations "$generations" --jobs 16 \
    --run-dir "runs/transform/$name" --evolved-dir runs/transform-evolved --cache runs/transform-cache \
    > "runs/transform/$name.log" 2>&1
  echo "== $name: exit $? in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $start }") s (gi evolve $*)"
  grep -E "speed-up|patch:|of floor speed|FAILED|error" "runs/transform/$name.log" | tail -6
}
{
  for seed in tests/data/user/*/; do
    wanted "$(basename "$seed")" && evolve "user-$(basename "$seed")" "$seed"
  done
  for kernel in tools/sum_reduction optimiser/cg_dot_products tools/max_vector_length similarity/nmi_joint_histogram \
    tools/voxel_to_node_gradient bspline/log_jacobian_gradient_exact blockmatching/ncc_block_matching tools/intensity_minmax; do
    wanted "$kernel" && evolve "withheld-${kernel//\//-}" "$kernel" --families transform,structural
  done
} 2>&1 | tee "$OUT/transform.log"
tar czf "$OUT/transform_runs.tar.gz" runs/transform runs/transform-evolved
