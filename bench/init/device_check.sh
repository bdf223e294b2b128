#!/usr/bin/env bash
# One device call: `gi init --check` on the plain user kernels and the README's
# box filter with the sizes of their hand-written specs' timed workloads: the
# inferred spec is drafted, then the seed runs once on each of its workloads
# (`gi check`) and its branch coverage is measured (`gi coverage`; the last verdict
# counts: gi init may add a small check of one-signed inputs and measure again).
# Needs the binaries of scripts/pack_carry.sh in .carry/. Summary in
# $OUT/init_check.txt, each kernel's whole output in $OUT/init-<kernel>.log.
# ONLY='name ...' checks only those kernels.
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
check() {  # kernel file, name, sizes (NAME=VALUE) and other gi init options (--pre-include=FILE)...
  local file=$1 name=$2
  shift 2
  # ONLY='a b' keeps only the kernels of those names.
  if [ -n "${ONLY:-}" ] && ! [[ " $ONLY " == *" $name "* ]]; then return 0; fi
  local args=()
  for s in "$@"; do case $s in --*) args+=("$s") ;; *) args+=(--size "$s") ;; esac; done
  timeout 60 "$GI" init "$file" --out "runs/init-check/user/$name" --force "${args[@]}" --check > "$OUT/init-$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc, $(grep -oE '[0-9]+ fields? to fill' "$OUT/init-$name.log" | head -1), $(grep -c '"status": "ok"' "$OUT/init-$name.log") workloads ok, $(grep -c '"passed": false\|"ok": false' "$OUT/init-$name.log") failed, $(grep -oE 'coverage (passed|FAILED)' "$OUT/init-$name.log" | tail -1)" | tee -a "$OUT/init_check.txt"
}
rm -rf runs/init-check
u=tests/data/user
check $u/dot_product/kernel.cu dot_product n=4194304
check $u/vector_max/kernel.cu vector_max n=4194304
check $u/count_positive/kernel.cu count_positive n=4194304 threshold=0.25
check $u/masked_mean/kernel.cu masked_mean n=4194304
check $u/weighted_sum/kernel.cu weighted_sum n=4194304
check $u/row_sum/kernel.cu row_sum rows=4096 cols=1024
check $u/row_max/kernel.cu row_max rows=4096 cols=1024
check $u/slice_sums/kernel.cu slice_sums nx=128 ny=128 nz=128
check $u/histogram256/kernel.cu histogram256 n=4194304
# A coarse grid's nodes (gx, gy as its hand-written spec sets them: ceil_div(nx, spacing)).
check $u/grid_scatter/kernel.cu grid_scatter nx=160 ny=160 nz=160 spacing=5 gx=32 gy=32
check $u/scale_rows/kernel.cu scale_rows rows=2048 cols=2048
check $u/planes_to_deformation/kernel.cu planes_to_deformation nx=256 ny=256 nz=160
check $u/deformation_to_planes/kernel.cu deformation_to_planes nx=256 ny=256 nz=160
# Grey values binned to 64, some past both ends of [0, 256) (padding, which
# the kernel skips: uniform(0, 256) alone never takes that branch).
check $u/joint_histogram64/kernel.cu joint_histogram64 pixels=4194304 '--like=reference:uniform(-8,264)' '--like=floating:normal(128,40)'
check $u/transfer_curve/kernel.cu transfer_curve count=16777216 lo=-1 hi=1 '--like=image:uniform(-1.2,1.2)'
check examples/box_filter/box_filter_rows.cu box_filter_rows width=4096 height=2048 radius=4
# Kernels written on 11-28 for that day's rules (bench/init/kernels/README.md).
k=bench/init/kernels
check $k/matmul.cu matmul M=1024 N=1024 K=512
check $k/blur3.cu blur3 w=4096 h=2048
check $k/saxpy_unguarded.cu saxpy_unguarded a=2 threads_x=4194304
check $k/shift_shared.cu shift_shared n=4194304
check $k/conv_taps.cu conv_taps w=4096 h=1024 threads_y=h
check $k/twice_unsigned.cu twice_unsigned n=4194304
check $k/block_sum.cu block_sum n=4194304
# 11-28 (later): 64-bit scalars, a pre-included header's type alias and block size.
check $k/scale_sizes64.cu scale_sizes64 n=4194304 offset=-3
check $k/fixed_block.cu fixed_block d_Ne=4194304 --pre-include=fixed_block_defs.h
# 11-29: template kernels, drafted as one instance (the file's, or the one --entry names).
check $k/axpy_template.cu axpy_template n=4194304 a=2
check $k/window_sum_template.cu window_sum_template n=4194304 "--entry=window_sum_template<double, 5>"
check $k/window_sum_template.cu window_sum_template_instantiated n=4194304 "--entry=window_sum_template<double, 5>" --instantiate
# 11-29 (later): a buffer of structs; a tree reduction in a static shared array.
check $k/particles_aos.cu particles_aos n=4194304 dt=0.01
check $k/tree_sum.cu tree_sum n=4194304
check $k/scale_params.cu scale_params p_n=4194304 p_bias=0.5 p_gain=2
# 11-29 (night): textures over CUDA arrays (tex2D/tex3D), and a 3-D texture reference ported.
check $k/texture_gradient.cu texture_gradient nx=256 ny=256 nz=128
check $k/texture_upsample.cu texture_upsample width=2048 height=2048
check $k/texture_reference_3d.cu texture_reference_3d nx=256 ny=256 nz=128 scale=2
check $k/texture_reference_helper.cu texture_reference_helper n=4194304
check $k/texture_reference_template.cu texture_reference_template width=2048 height=2048 scale=0.5 image=1024,1024 --include-dir=$k/include
