#!/usr/bin/env bash
# One device call: `gi init --check` on the corpus kernels that the survey
# (bench/init/survey.py) drafts with no FILL, as a user would run it: the
# sizes a user of each would give (sizes_for; a kernel not listed: every
# integer scalar 2048, every float 0.5, every bool true, 64 or 0.5 per
# component of a vector such as int3, an exact launch's threads_x 1 M), and an input distribution where the
# kernel's arithmetic needs one (--like). The
# corpus files are fetched copies in .corpus/ (tests/data/corpus/README.md):
# carry .corpus with .carry. Summary in $OUT/init_corpus.txt, each kernel's
# whole output in $OUT/corpus-<file stem>-<entry>.log. With EVOLVE=POP,GENS each kernel
# whose check passed is then evolved with every family (`gi evolve`, the seed
# its own reference; issue 28's corpus kernels with a spec), log in
# $OUT/evolve-<file stem>-<entry>.log and the result lines in $OUT/init_corpus.txt.
# ENTRIES='a b' keeps only those kernels.
#   [EVOLVE=20,4] [ENTRIES='...'] bash bench/init/device_check_corpus.sh [SURVEY.json]
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
survey=${1:-bench/init/results_2026-11-27.json}
rm -rf runs/init-check/corpus
python3 - "$survey" "${ENTRIES:-}" <<'PY' > /tmp/corpus_kernels.txt
import json, sys
only = set(sys.argv[2].split())
for k in json.load(open(sys.argv[1]))["kernels"]:
    if k["kind"] == "corpus" and k["status"] == "no FILL" and k.get("compiles", True) and (not only or k["entry"] in only):
        print(k["file"], k["entry"])
PY
# Inputs whose values the kernel's arithmetic needs in a range (logf of a determinant: positive).
like_for() {
  case $1 in
    LogSquaredValues|reg_spline_logSquaredValues_kernel) echo "--like det:uniform(0.5,2)" ;;
    compress) echo "--like d_I:uniform(0.1,1)" ;;  # Rodinia srad_v1: the logarithm of the image
    # NiftyReg's composition: positions (affine 0.5 per entry) past both
    # edges of the 64-voxel image, so that every neighbour guard fails somewhere.
    reg_defField_compose2D_kernel|reg_defField_compose3D_kernel) echo "--like outDef:uniform(-8,100)" ;;
    # Rodinia's particle filter search: a CDF in [0, 1] and draws past its
    # end now and then, so that the search also finds nothing (index -1).
    find_index_kernel) echo "--like CDF:uniform(0,1) --like u:uniform(0,1.2)" ;;
    # NiftyReg's image gradient: positions (an identity floatingMatrix) past
    # both edges of the 256^2 x 64 image, so that every edge guard fails somewhere.
    reg_getImageGradient2D_kernel|reg_getImageGradient3D_kernel) echo "--like deformationFieldTexture:uniform(-8,300)" ;;
    # NiftyReg's resampling: an identity sourceIJKMatrix (its three rows)
    # and positions past both edges of the image, so that every bounds test
    # fails somewhere.
    ResampleImage2D|ResampleImage3D)
      echo "--like sourceIJKMatrix:constant(1)[1];constant(0)[4];constant(1)[1];constant(0)[4];constant(1)[1];constant(0)
            --like deformationField:uniform(-8,300)" ;;
    kernel) [[ $2 == *particlefilter* ]] && echo "--like CDF:uniform(0,1) --like u:uniform(0,1.2)" ;;
    # Rodinia's CFD: variables holds density, three momenta and energy, nelr
    # each, drawn in pieces so that the pressure is positive (one
    # distribution for the whole buffer gives NaN); sqrt of the areas.
    # Rodinia's myocyte: random initial values drive its ODE solver to inf,
    # so it gets what its host reads for every workload (work_2.cu): y.txt's
    # 91 values at the start of each workload's (xmax + 1) * 91, and the 16
    # parameters of params.txt in each 18 (the host reads 18 from the file
    # of 16; the last two stay as the allocation left them, here 0).
    solver_2)
      local data=.corpus/rodinia-data-9419a213/data/myocyte
      echo "--like 'y:values(@$data/y.txt)[91];constant(0) every (xmax+1)*91'
            --like 'params:values(@$data/params.txt)[16];constant(0) every 18'
            --like com:constant(0)" ;;  # com: cudaMalloc'd and never set by the host; 0 here
    cuda_compute_step_factor)
      echo "--like variables:uniform(1,2)[nelr];uniform(-0.1,0.1)[3*nelr];uniform(5,6) --like areas:uniform(0.5,1.5)" ;;
  esac
}
# What the kernel's own build gives it (bench/init/survey.py's build_options):
# Rodinia's define.c, NiftyReg's include folders and the headers its host
# file includes before the kernel file (the manifest's pre_includes).
build_for() {
  python3 -c "import sys; sys.path.insert(0, 'bench/init'); import survey; print(' '.join(survey.build_options(sys.argv[1])))" "$1"
}
# Sizes of a realistic call: 4 M voxels, 1 M points or equations, a 2048^2 matrix at elimination step 5.
sizes_for() {
  case $1 in
    reg_GetConjugateGradient2_kernel) echo "--size nVoxels=4194304 --size scale=0.5" ;;
    reg_updateControlPointPosition_kernel)
      echo "--size nVoxels=4194304 --size scale=0.5 --size optimiseX=true --size optimiseY=true --size optimiseZ=false" ;;
    # NiftyReg's field conversions: an int3 image size and the rows of an affine matrix (float4 constants).
    reg_getDeformationFromDisplacement3D_kernel|reg_getDisplacementFromDeformation3D_kernel)
      echo "--size c_VoxelNumber=4194304 --size c_ReferenceImageDim=256,256,64 --size c_AffineMatrix0b=1,0,0,0.5
            --size c_AffineMatrix1b=0,1,0,-0.5 --size c_AffineMatrix2b=0,0,1,2" ;;
    # NiftyReg 1 kernels whose texture references gi init ports to texture objects.
    reg_affine_deformationField_kernel) echo "--size c_ImageSize=256,256,64 --size c_VoxelNumber=4194304" ;;
    _reg_convertNMIGradientFromVoxelToRealSpace_kernel) echo "--size c_NodeNumber=4194304" ;;
    reg_marginaliseResultX_kernel|reg_marginaliseTargetX_kernel)
      echo "--size c_firstTargetBin=64 --size c_secondTargetBin=64 --size c_firstResultBin=64 --size c_secondResultBin=64" ;;
    reg_marginaliseResultXY_kernel) echo "--size c_firstTargetBin=64 --size c_secondTargetBin=64 --size c_firstResultBin=64" ;;
    reg_marginaliseTargetXY_kernel) echo "--size c_secondTargetBin=64 --size c_firstResultBin=64 --size c_secondResultBin=64" ;;
    # NiftyReg 2's optimiser and gradient kernels (texture objects): 4 M voxels.
    reg_initialiseConjugateGradient_kernel|reg_GetConjugateGradient1_kernel) echo "--size nVoxels=4194304" ;;
    GetMaximalLengthKernel) echo "--size nVoxels=4194304 --size optimiseX=true --size optimiseY=true --size optimiseZ=false" ;;
    NormaliseGradientKernel)
      echo "--size nVoxels=4194304 --size maxGradLenInv=0.5 --size optimiseX=true --size optimiseY=true --size optimiseZ=false" ;;
    transformWarpedPointsKernel) echo "--size definedBlockNum=1048576" ;;
    populateLengthsKernel) echo "--size numEquations=1048576" ;;
    LogSquaredValues) echo "--size voxelNumber=4194304" ;;
    Fan1) echo "--size Size=2048 --size t=5" ;;
    Fan2) echo "--size Size=2048 --size j1=1 --size t=5" ;;
    invert_mapping) echo "--size npoints=65536 --size nfeatures=32" ;;
    normalize_weights_kernel) echo "--size Nparticles=1048576" ;;
    # Rodinia's CFD solver: one thread per element of nelr, launched exactly (no guard):
    # its host launches nelr threads, which threads_x=nelr says.
    cuda_compute_step_factor|cuda_time_step|cuda_compute_flux_contributions|cuda_initialize_variables)
      echo "--size nelr=1048576 --size threads_x=nelr" ;;
    # Rodinia's leukocyte dilation: a 1024^2 image, one thread per pixel (its
    # host launches img_m * img_n threads), its 25 x 25 structuring element
    # (STREL_SIZE) in a __constant__ array.
    dilate_kernel) echo "--size img_m=1024 --size img_n=1024 --size strel_m=25 --size strel_n=25 --size threads_x=img_m*img_n" ;;
    # NiftyReg's tools kernels: sized by __constant__ scalars the host sets.
    reg_multiplyValue_kernel_float*|reg_addValue_kernel_float*) echo "--size c_VoxelNumber=4194304 --size c_Weight=0.5" ;;
    reg_multiplyArrays_kernel_float*|reg_addArrays_kernel_float*|reg_fillMaskArray_kernel|reg_spline_logSquaredValues_kernel)
      echo "--size c_VoxelNumber=4194304" ;;
    # NiftyReg 1's B-spline regularisation kernels (opened by the straight-line
    # index values of 11-28): a control-point grid (32^3, or 128^2 in 2-D) over
    # an image four times as fine, an identity affine (its rows).
    reg_spline_getApproxBendingEnergy2D_kernel) echo "--size c_ControlPointNumber=16384" ;;
    reg_spline_getApproxBendingEnergy3D_kernel) echo "--size c_ControlPointNumber=32768" ;;
    reg_spline_getApproxSecondDerivatives2D|reg_spline_getApproxBendingEnergyGradient2D_kernel) echo "$cp2" ;;
    reg_spline_getApproxSecondDerivatives3D|reg_spline_getApproxBendingEnergyGradient3D_kernel) echo "$cp3" ;;
    reg_spline_getApproxJacobianValues2D_kernel) echo "$cp2 $affine2" ;;
    reg_spline_getApproxJacobianValues3D_kernel) echo "$cp3 $affine3" ;;
    reg_spline_computeJacGradient2D_kernel)
      echo "$cp2 $affine2 --size c_ReferenceImageDim=512,512,1 --size c_ControlPointVoxelSpacing=4,4,1 --size c_Weight3=1,1,1" ;;
    reg_spline_computeJacGradient3D_kernel) echo "$cp3 $affine3 $ref3 --size c_Weight3=1,1,1" ;;
    reg_spline_approxCorrectFolding3D_kernel) echo "$cp3 $affine3 --size c_ControlPointSpacing=4,4,4" ;;
    reg_spline_correctFolding3D_kernel) echo "$cp3 $affine3 $ref3 --size c_ControlPointSpacing=4,4,4" ;;
    # Opened by lockstep counters (11-28): the approximate Jacobian gradients.
    reg_spline_computeApproxJacGradient2D_kernel) echo "$cp2 $affine2 --size c_Weight3=1,1,1" ;;
    reg_spline_computeApproxJacGradient3D_kernel) echo "$cp3 $affine3 --size c_Weight3=1,1,1" ;;
    # NiftyReg's affine field: a 256^2 x 64 image. NiftyReg 2's reads the mask right of && in its
    # guard; NiftyReg 1's also takes the voxel count, the stride between the field's x, y and z.
    affineKernel) case $2 in
        *aa79bf22*) echo "--size dims=256,256,64 --size voxelNumber=4194304 --size composition=false" ;;
        *) echo "--size dims=256,256,64 --size composition=false" ;;
      esac ;;
    # Rodinia's nearest neighbour: 4 M records of LatLong (a buffer of structs), a target point.
    euclid) echo "--size numRecords=4194304 --size lat=30 --size lng=90" ;;
    # NiftyReg 2's LTS reductions: one block over 1 M points.
    ReduceRigidSums|ReduceAffineNormal) echo "--size count=1048576" ;;
    # NiftyReg 2's B-spline Jacobian kernels (their headers' device code cut
    # out by gi init, mat33 from gi): the control-point grids above.
    GetApproxJacobianValues2d) echo "$cp2n" ;;
    GetApproxJacobianValues3d) echo "$cp3n" ;;
    ComputeApproxJacGradient2d) echo "$cp2n --size weight=1,1,1" ;;
    ComputeApproxJacGradient3d) echo "$cp3n --size weight=1,1,1" ;;
    ComputeJacGradient2d)
      echo "$cp2n --size controlPointVoxelSpacing=4,4,1 --size referenceImageDims=512,512,1 --size weight=1,1,1" ;;
    ComputeJacGradient3d)
      echo "$cp3n --size controlPointVoxelSpacing=4,4,4 --size referenceImageDims=128,128,128 --size weight=1,1,1" ;;
    ApproxCorrectFolding3d) echo "$cp3n --size controlPointSpacing=4,4,4" ;;
    CorrectFolding3d)
      echo "$cp3n --size controlPointSpacing=4,4,4 --size controlPointVoxelSpacing=4,4,4 --size referenceImageDims=128,128,128" ;;
    AssembleRigid) echo "--size count=1048576" ;;
    # Rodinia's srad reduction (opened by gridDim and shared loop counters,
    # 11-30): the first pass over a 1024^2 image, its sums d_mul = 1 apart.
    reduce) echo "--size d_Ne=1048576 --size d_no=1048576 --size d_mul=1" ;;
    # Rodinia's dwt2d component copies (opened by blockDim.x, 11-30): a 2048^2 image.
    c_CopySrcToComponent*) echo "--size pixels=4194304" ;;
    # NiftyReg 1's B-spline Jacobians (opened by real divisors, 11-30): a
    # 512^2 or 128^3 image under a grid of spacing 4 voxels, which needs
    # 512 / 4 + 3 = 131 nodes (35 in 3-D) along each axis.
    reg_spline_getJacobianValues2D_kernel)
      echo "--size c_ReferenceImageDim=512,512,1 --size c_VoxelNumber=c_ReferenceImageDim_x*c_ReferenceImageDim_y
            --size c_ControlPointVoxelSpacing=4,4,1 --size c_ControlPointImageDim=131,131,1 $affine2" ;;
    reg_spline_getJacobianValues3D_kernel)
      echo "--size c_ReferenceImageDim=128,128,128
            --size c_VoxelNumber=c_ReferenceImageDim_x*c_ReferenceImageDim_y*c_ReferenceImageDim_z
            --size c_ControlPointVoxelSpacing=4,4,4 --size c_ControlPointImageDim=35,35,35 $affine3" ;;
    # NiftyReg 2's (their voxels split by IndexToDims), the same grids.
    GetJacobianValues2d)
      echo "--size referenceImageDims=512,512,1 --size voxelNumber=referenceImageDims_x*referenceImageDims_y
            --size controlPointSpacing=4,4,1 --size controlPointImageDims=131,131,1" ;;
    GetJacobianValues3d)
      echo "--size referenceImageDims=128,128,128
            --size voxelNumber=referenceImageDims_x*referenceImageDims_y*referenceImageDims_z
            --size controlPointSpacing=4,4,4 --size controlPointImageDims=35,35,35" ;;
    # CubicInterpolation's casts between a pitched float image (as
    # cudaMalloc3D lays it out) and a plain one: rows of 1024 voxels, one
    # thread each (its host launches width / block threads), the pitch tied
    # to the row (4 bytes a voxel, 16 for the interleaved float4).
    CopyCast\<*|CopyCastBack\<*)
      echo "--size width=1024 --size threads_x=width --size threads_y=1024 --size pitch=4*width" ;;
    CopyCastInterleaved\<*)
      echo "--size width=1024 --size threads_x=width --size threads_y=1024 --size pitch=16*width" ;;
    # NiftyReg's image gradient (a 256^2 x 64 floating image, 4 M voxels
    # of the deformation field), node-centric resampling (a 32^3 grid of
    # nodes over a 128^3 image, nodeNumber their count, as its host sets it)
    # and joint histogram smoothing (64 bins on each of four axes).
    reg_getImageGradient2D_kernel|reg_getImageGradient3D_kernel)
      echo "--size activeVoxelNumber=4194304 --size floatingDim=256,256,64 $identity44" ;;
    # Its transformation puts node n at voxel 5 n - 2, so that nodes stand
    # past both edges of the image, as a control-point grid does.
    reg_voxelCentric2NodeCentric_kernel)
      echo "--size nodeImageDims=32,32,32 --size voxelImageDims=128,128,128 --size nodeNumber=nodeImageDims_x*nodeImageDims_y*nodeImageDims_z
            --size transformation_m_0=5 --size transformation_m_5=5 --size transformation_m_10=5 --size transformation_m_15=1
            --size transformation_m_3=-2 --size transformation_m_7=-2 --size transformation_m_11=-2" ;;
    # NiftyReg's Jacobian matrices of a dense field: a 256^2 x 64 image,
    # c_VoxelNumber its voxels, as the host sets it.
    reg_defField_getJacobianMatrix3D_kernel)
      echo "--size c_ReferenceImageDim=256,256,64 --size c_VoxelNumber=c_ReferenceImageDim_x*c_ReferenceImageDim_y*c_ReferenceImageDim_z" ;;
    # NiftyReg's Gaussian smoothing of a gradient image along x, y or z
    # (opened by lockstep partners): a 256^2 x 64 image, c_VoxelNumber its
    # voxels, as the host sets them, and a window of 13 (sigma 2).
    _reg_ApplyConvolutionWindowAlong?_kernel)
      echo "--size c_ImageDim=256,256,64 --size c_VoxelNumber=c_ImageDim_x*c_ImageDim_y*c_ImageDim_z --size windowSize=13" ;;
    # Rodinia's hotspot3D (opened by loops read after they end): a 1024 x 512 x 8
    # chip (a whole number of 1024-thread rows, which a launch with no guard
    # needs), one thread per column of the plane (its host launches nx x ny).
    hotspotOpt1) echo "--size nx=1024 --size ny=512 --size nz=8 --size threads_x=nx --size threads_y=ny" ;;
    reg_smoothJointHistogram?_kernel)
      echo "--size c_firstTargetBin=64 --size c_secondTargetBin=64 --size c_firstResultBin=64 --size c_secondResultBin=64" ;;
    # Rodinia's myocyte solver: one ODE system of 91 equations per thread,
    # 256 of them over 16 time steps (Rodinia runs 100 steps of 1 to 1000).
    solver_2) echo "--size workload=256 --size xmax=16" ;;
    # NiftyReg 2023's resampling (opened by tests held in locals, 11-30):
    # linear interpolation (kernelType 1) of a 256^2 x 64 floating image
    # (512^2 in 2-D) into a warped image of the same size, one time point;
    # voxelNumber is (warped voxels, floating voxels), as its host sets it.
    ResampleImage3D)
      echo "--size voxelNumber=4194304,4194304 --size fi_xyz=256,256,64 --size wi_tu=1,1 --size paddingValue=0
            --size kernelType=1" ;;
    ResampleImage2D)
      echo "--size voxelNumber=262144,262144 --size fi_xyz=512,512,1 --size wi_tu=1,1 --size paddingValue=0
            --size kernelType=1" ;;
    # Rodinia's srad_v1 image statistics: a 2048^2 image.
    prepare|compress|extract) echo "--size d_Ne=4194304" ;;
  esac
}
identity44="--size floatingMatrix_m_0=1 --size floatingMatrix_m_5=1 --size floatingMatrix_m_10=1 --size floatingMatrix_m_15=1"
for i in 1 2 3 4 6 7 8 9 11 12 13 14; do identity44="$identity44 --size floatingMatrix_m_$i=0"; done
cp2n="--size controlPointImageDims=128,128,1 --size controlPointNumber=16384"
cp3n="--size controlPointImageDims=32,32,32 --size controlPointNumber=32768"
cp2="--size c_ControlPointImageDim=128,128,1 --size c_ControlPointNumber=16384"
cp3="--size c_ControlPointImageDim=32,32,32 --size c_ControlPointNumber=32768"
ref3="--size c_ReferenceImageDim=128,128,128 --size c_ControlPointVoxelSpacing=4,4,4"
affine2="--size c_AffineMatrix0=1,0,0 --size c_AffineMatrix1=0,1,0"
affine3="$affine2 --size c_AffineMatrix2=0,0,1"
while read -r file entry; do
  # One entry name may stand in several files (Rodinia's four CFD solvers).
  key=$(basename "$file" .cu)-$entry
  dir=runs/init-check/corpus/$key
  # The scalars, as the survey learns them: a draft without sizes first;
  # a template the file never instantiates takes the instance gi init
  # suggests, as the survey does (CubicInterpolation's CopyCast<float>).
  # shellcheck disable=SC2046
  first=$("$GI" init "$file" --entry "$entry" --out "$dir" --force $(build_for "$file") 2>&1)
  instance=$(sed -n "s/.*name the instance to evolve, e.g. --entry '\([^']*\)'.*/\1/p" <<< "$first")
  if [ -n "$instance" ]; then
    entry=$instance
    # shellcheck disable=SC2046
    "$GI" init "$file" --entry "$entry" --out "$dir" --force $(build_for "$file") > /dev/null 2>&1
  fi
  # sizes_for's, and the default for each scalar it leaves out.
  given=$(sizes_for "$entry" "$file")
  sizes="$given $(GIVEN="$given" python3 -c "
import json, os, re
spec = json.load(open('$dir/spec.json'))
scalars = [p for p in spec['parameters'] if p.get('role') == 'scalar'] + [c for c in spec.get('constants', []) if 'count' not in c]
given = set(re.findall(r'--size (\w+)=', os.environ['GIVEN']))
# An exact launch's thread count (a kernel with no guard): 1 M threads.
for name in spec['workloads']['train']['variables']:
    if name.startswith('threads_') and name not in given:
        print('--size', name + '=1048576')
for p in scalars:
    if p['name'] in given: continue
    # A struct by value: each of its workload variables (m_0 .. m_8 of a mat33), 0.5 or 2048.
    if 'layout' in p:
        word = '0.5' if all(e.startswith(('float', 'double')) for e in p['layout']) else '2048'
        for name in p['value']:
            if name not in given: print('--size', name + '=' + word)
        continue
    t = p.get('type', '')
    m = re.fullmatch(r'(u?int|float)([234])', t)
    v = ','.join(['0.5' if m.group(1) == 'float' else '64'] * int(m.group(2))) if m else \
        {'float': '0.5', 'double': '0.5', 'bool': 'true'}.get(t, '2048')
    print('--size', p['name'] + '=' + v)
")"
  # like_for's words as the shell would split them, quotes kept together ('... every 18')
  mapfile -t likes < <(like_for "$entry" "$file" | xargs -r -n1 printf '%s\n')
  # (no globbing: a piece's length is in brackets, as in [3*nelr])
  set -f
  # shellcheck disable=SC2046
  timeout 120 "$GI" init "$file" --entry "$entry" --out "$dir" --force $sizes "${likes[@]}" $(build_for "$file") --check \
    > "$OUT/corpus-$key.log" 2>&1
  rc=$?
  set +f
  echo "$entry ($file): init --check exit $rc, $(grep -c '"status": "ok"' "$OUT/corpus-$key.log") workloads ok, $(grep -c '"passed": false\|"ok": false' "$OUT/corpus-$key.log") failed, $(grep -oE 'coverage (passed|FAILED)' "$OUT/corpus-$key.log" | tail -1)" | tee -a "$OUT/init_corpus.txt"
  if [ -n "${EVOLVE:-}" ] && [ $rc -eq 0 ]; then
    timeout 200 "$GI" evolve "$dir" --population "${EVOLVE%,*}" --generations "${EVOLVE#*,}" --jobs 16 \
      --run-dir "runs/init-check/evolve/$key" --evolved-dir runs/init-check/evolved --cache runs/init-check/cache \
      > "$OUT/evolve-$key.log" 2>&1
    echo "  evolve exit $?: $(grep -E 'seed +block|evolved +block|speed-up|patch:' "$OUT/evolve-$key.log" | tail -4 | tr -s ' ' | tr '\n' ';')" |
      tee -a "$OUT/init_corpus.txt"
  fi
done < /tmp/corpus_kernels.txt
