#!/usr/bin/env bash
# One device call: aggregate with the toolkit's reduce (cooperative groups,
# levels warp_cg and block_cg) against gi's own shuffles (warp, block) on
# the plain user kernels with one atomic at a uniform address: a float sum
# (dot_product), an integer count (count_positive) and a float maximum
# through a compare-and-swap helper (vector_max). Each variant: `gi bench`
# (20 interleaved rounds) against the seed at the spec's block. Then the
# GPU suite's donor test. Summary in $OUT/donor.txt.
#   bash bench/transform/donor_call.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/device_prelude.sh
rm -rf runs/donor && mkdir -p runs/donor
{
  cat "$OUT/machine.txt"
  for k in dot_product count_positive vector_max; do
    for level in warp warp_cg block block_cg; do
      site=$("$GI" families tests/data/user/$k | grep -o "aggregate:<_kernel[^>]*>=$level\b" | head -1)
      echo "$site" > runs/donor/p.gi
      "$GI" bench tests/data/user/$k --patch runs/donor/p.gi --rounds 20 --cache runs/donor/cache > runs/donor/b.log 2>&1
      echo "$k $site: exit $?: $(grep -iE 'speed-up' runs/donor/b.log | tr -s ' ')"
      grep -E "^  evolved " runs/donor/b.log | tr -s ' '
    done
  done
  GI_TEST_SOURCE_DIR=$PWD GI_TEST_BINARY=$GI GI_TEST_WORKER=$PWD/.carry/gi_test_worker \
    .carry/gi_tests --gtest_filter='AggregateFamily.GpuDonor*' 2>&1 | tail -4
} 2>&1 | tee "$OUT/donor.txt"
