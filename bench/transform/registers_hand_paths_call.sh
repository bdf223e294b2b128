#!/usr/bin/env bash
# One device call: do `registers` edits add to the published kernels of the
# two library seeds whose hand paths read basis arrays at a computed index
# (voxel_to_node_gradient's and log_jacobian_gradient_exact's tiled paths)?
# `gi bench` (20 rounds) of the published patch, alone and with registers
# edits, each against the seed with the tuning result.json gives both.
# Summary in $OUT/registers_hand_paths.txt.
#   bash bench/transform/registers_hand_paths_call.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
rm -rf runs/registers-hand && mkdir -p runs/registers-hand
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/-$//')
tuning() {  # folder, seed|evolved: the gi bench options of that side
  python3 -c "
import json
t = json.load(open('evolved/$gpu/$1/result.json'))['tuning']['$2']
prefix = '--seed-' if '$2' == 'seed' else '--'
print(prefix + 'block', t['block_size'], ' '.join(prefix + 'option=' + o for o in t['options']))"
}
bench() {  # seed, folder, extra edits
  tail -n 1 "evolved/$gpu/$2/patch.gi" > runs/registers-hand/p.gi
  sed -i "s|\$| $3|" runs/registers-hand/p.gi
  # shellcheck disable=SC2046
  "$GI" bench "$1" --patch runs/registers-hand/p.gi --rounds 20 --cache runs/registers-hand/cache \
    $(tuning "$2" seed) $(tuning "$2" evolved) > runs/registers-hand/b.log 2>&1
  echo "$2 ($(cat runs/registers-hand/p.gi)): exit $?: $(grep -iE 'speed-up' runs/registers-hand/b.log | tr -s ' ')"
}
{
  v=tools/voxel_to_node_gradient; vf=tools-voxel_to_node_gradient
  bench $v $vf ""
  bench $v $vf "registers:<decl_kernel.cu_61>=xBasis"
  bench $v $vf "registers:<decl_kernel.cu_61>=xBasis registers:<decl_kernel.cu_62>=yBasis registers:<decl_kernel.cu_63>=zBasis"
  l=bspline/log_jacobian_gradient_exact; lf=bspline-log_jacobian_gradient_exact
  bench $l $lf ""
  bench $l $lf "registers:<decl_kernel.cu_66>=xBasis registers:<decl_kernel.cu_67>=yBasis registers:<decl_kernel.cu_68>=zBasis"
  bench $l $lf "registers:<decl_kernel.cu_69>=xDerivative registers:<decl_kernel.cu_70>=yDerivative registers:<decl_kernel.cu_71>=zDerivative"
  bench $l $lf "registers:<decl_kernel.cu_66>=xBasis registers:<decl_kernel.cu_67>=yBasis registers:<decl_kernel.cu_68>=zBasis registers:<decl_kernel.cu_69>=xDerivative registers:<decl_kernel.cu_70>=yDerivative registers:<decl_kernel.cu_71>=zDerivative"
} 2>&1 | tee "$OUT/registers_hand_paths.txt"
