#!/usr/bin/env bash
# The elastix comparison of `gi register`: registers a gi test pair (gi
# make-pair) with elastix's B-spline registration, writes the deformation field
# with transformix and scores it against the pair's truth with gi accuracy.
#
#   bench/registration/run_elastix.sh PAIR_DIR OUT_DIR [THREADS]
#
# Writes into OUT_DIR: elastix's TransformParameters.0.txt and elastix.log,
# transformix's deformationField.nii.gz, elastix_time.json (wall seconds of
# elastix and transformix, apart) and elastix_accuracy.json (gi accuracy).
# THREADS defaults to every core (nproc).
#
# Measured on the default Colin27 pair (gi make-pair --out PAIR, seed 1) on a
# 2-core AMD EPYC VM: elastix 56-94 s (the VM's load varied), transformix
# 5-11 s; error inside the brain mean 0.247, p95 0.605, max 1.575 voxels
# against a truth of mean 2.284, max 6; no folding.
#
# Environment:
#   ELASTIX_DIR  a folder holding elastix, transformix and their shared
#                libraries (pack_elastix.sh makes one to carry to another
#                machine); they run with LD_LIBRARY_PATH=$ELASTIX_DIR.
#                Unset: elastix and transformix from PATH.
#   GI           the gi binary (default: build/gi/gi of this checkout).
#   STAGE        all (default); register: elastix alone (the GPU machine, to
#                time it beside gi there, when transformix's libraries do not
#                fit the device's carry limit); score: transformix and gi
#                accuracy on OUT_DIR's TransformParameters.0.txt from an
#                earlier `register` stage (its transformix time is recorded apart).
#   PARAMS       elastix parameter files, space-separated, run one after
#                another (default: elastix_bspline.txt beside this script; an
#                affine pair: "elastix_affine.txt elastix_bspline.txt"). A bare
#                name is looked for beside this script.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 PAIR_DIR OUT_DIR [THREADS]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
pair=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
threads=${3:-$(nproc)}
params=()
for p in ${PARAMS:-elastix_bspline.txt}; do
  [ -f "$p" ] || p=$here/$p
  params+=("$p")
done
gi=${GI:-$repo/build/gi/gi}

for f in reference.nii.gz floating.nii.gz truth_displacement.nii.gz brain_mask.nii.gz; do
  [ -f "$pair/$f" ] || { echo "$0: $pair/$f is missing (make the pair with gi make-pair)" >&2; exit 1; }
done
for p in "${params[@]}"; do
  [ -f "$p" ] || { echo "$0: parameter file $p is missing" >&2; exit 1; }
done
[ -x "$gi" ] || { echo "$0: gi binary $gi is missing (build it, or set GI)" >&2; exit 1; }

if [ -n "${ELASTIX_DIR:-}" ]; then
  elastix=$ELASTIX_DIR/elastix
  transformix=$ELASTIX_DIR/transformix
  # Carried binaries find their libraries beside them, not the system's.
  export LD_LIBRARY_PATH="$ELASTIX_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  elastix=$(command -v elastix || true)
  transformix=$(command -v transformix || true)
fi
stage=${STAGE:-all}
case "$stage" in all | register | score) ;; *) echo "$0: STAGE must be all, register or score" >&2; exit 2 ;; esac
{ [ "$stage" = score ] || [ -x "$elastix" ]; } && { [ "$stage" = register ] || [ -x "$transformix" ]; } ||
  { echo "$0: elastix/transformix not found (install elastix, or set ELASTIX_DIR)" >&2; exit 1; }

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
fail() { tail -30 "$1" >&2; echo "$0: $2 failed (log: $1)" >&2; exit 1; }

# elastix: the reference is the fixed image, the floating the moving one, so
# its transform maps reference points to floating points, as the truth does.
version=$("$elastix" --version 2>/dev/null | head -1 || true)
if [ "$stage" != score ]; then
  t0=$(now)
  p_args=()
  for p in "${params[@]}"; do p_args+=(-p "$p"); done
  "$elastix" -f "$pair/reference.nii.gz" -m "$pair/floating.nii.gz" "${p_args[@]}" -out "$out" -threads "$threads" \
    >"$out/elastix_stdout.txt" 2>&1 || fail "$out/elastix_stdout.txt" elastix
  t1=$(now)
  cat >"$out/elastix_time.json" <<EOF
{
  "elastix_seconds": $(seconds "$t0" "$t1"),
  "threads": $threads,
  "cores": $(nproc),
  "host": "$(hostname)",
  "cpu": "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //; s/"//g')",
  "elastix_version": "$version",
  "parameters": "${params[*]}",
  "parameters_sha256": "$(sha256sum "${params[@]}" | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')",
  "pair": "$pair"
}
EOF
  cat "$out/elastix_time.json"
fi
[ "$stage" = register ] && exit 0
# transformix -def all: the displacement at every reference voxel (ITK LPS
# millimetres), through the last stage's parameters, which chain to the
# earlier ones' (their path rewritten to OUT_DIR: elastix may have run elsewhere).
last=$out/$(cd "$out" && ls TransformParameters.*.txt | sort -t. -k2 -n | tail -1)
sed -i -E "s|\(InitialTransformParametersFileName \"[^\"]*/(TransformParameters\.[0-9]+\.txt)\"\)|(InitialTransformParametersFileName \"$out/\1\")|" \
  "$out"/TransformParameters.*.txt
t1=$(now)
"$transformix" -def all -tp "$last" -out "$out" -threads "$threads" \
  >"$out/transformix_stdout.txt" 2>&1 || fail "$out/transformix_stdout.txt" transformix
t2=$(now)
cat >"$out/transformix_time.json" <<EOF
{"transformix_seconds": $(seconds "$t1" "$t2"), "threads": $threads, "host": "$(hostname)"}
EOF

field=$(ls "$out"/deformationField.nii.gz "$out"/deformationField.nii 2>/dev/null | head -1 || true)
[ -n "$field" ] || { echo "$0: transformix wrote no deformationField.nii(.gz) in $out" >&2; exit 1; }
"$gi" accuracy --displacement "$field" --truth "$pair/truth_displacement.nii.gz" --mask "$pair/brain_mask.nii.gz" \
  --elastix-lps-mm --json "$out/elastix_accuracy.json"
