#!/usr/bin/env python3
"""The library's fraction of the memory floor before and after evolution.

Before: every seed as it is (its spec's block size and options), from the
floor survey of scripts/gpu_session.sh --floor (runs/floor/<family>-<kernel>.json,
`gi bench SEED --rounds 5 --json`). After: the evolved kernel's fraction from
evolved/<gpu>/<family>-<kernel>/result.json where one is published, the seed's
value otherwise (a kernel not evolved counts at its seed's value). Prints a
Markdown table and the geometric means; both sides come from one GPU model.

    python3 scripts/floor_geomean.py runs/floor evolved/nvidia-h100-80gb-hbm3
"""
import glob
import json
import math
import os
import sys


def seed_fractions(floor_dir):
    out = {}
    for path in sorted(glob.glob(os.path.join(floor_dir, "*.json"))):
        with open(path) as f:
            j = json.load(f)
        # gi bench --json: the seed against itself; either side is the seed.
        out[os.path.basename(path)[: -len(".json")]] = (j["seed_floor_fraction"], j["seed"]["median_ms"])
    return out


def evolved_fractions(evolved_dir):
    out = {}
    for path in sorted(glob.glob(os.path.join(evolved_dir, "*", "result.json"))):
        with open(path) as f:
            r = json.load(f)
        out[os.path.basename(os.path.dirname(path))] = r
    return out


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    seeds = seed_fractions(sys.argv[1])
    evolved = evolved_fractions(sys.argv[2])
    if not seeds:
        sys.exit("floor_geomean: no floor survey in " + sys.argv[1])
    missing = sorted(set(evolved) - set(seeds))
    if missing:
        sys.exit("floor_geomean: evolved kernels without a seed measurement: " + ", ".join(missing))
    before, after = [], []
    print("| kernel | seed ms | seed floor | evolved ms | evolved floor | speed-up over tuned seed [ci low] |")
    print("|---|---|---|---|---|---|")
    for name, (fraction, ms) in sorted(seeds.items()):
        before.append(fraction)
        r = evolved.get(name)
        if r is None:
            after.append(fraction)
            print("| %s | %.4f | %.2f%% | - | - | - |" % (name, ms, 100 * fraction))
            continue
        after.append(r["evolved_floor_fraction"])
        print("| %s | %.4f | %.2f%% | %.4f | %.2f%% | %.3fx [%.3f] |" % (
            name, ms, 100 * fraction, r["evolved_median_ms"], 100 * r["evolved_floor_fraction"],
            r["speedup"], r["speedup_ci_low"]))
    print()
    print("%d kernels, %d evolved: geometric mean of the floor fraction %.2f%% before, %.2f%% after" % (
        len(before), len(evolved), 100 * geomean(before), 100 * geomean(after)))


if __name__ == "__main__":
    main()
