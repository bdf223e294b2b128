#!/usr/bin/env python3
"""Summarise a bench/registration/gpu_run.sh folder (runs/registration/ from
the device's registration.tar.gz) and, when given, the elastix folder
(gpu_elastix.sh, then run_elastix.sh STAGE=score here):

    summarise.py RUNS_DIR [--elastix ELASTIX_DIR] [--json OUT.json] > results.md

Accuracy of every run against the pair's known deformation, the end-to-end
time of the seed kernels against the evolved ones (ratio of medians, with a
95% bootstrap interval over the runs), the per-kernel profile (median over
the runs), and how far the runs' final displacements differ."""
import argparse
import glob
import json
import os
import random
import re
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def runs(folder, kind):
    out = []
    found = [d for d in glob.glob(os.path.join(folder, kind + "-[0-9]*")) if os.path.isdir(d)]
    for d in sorted(found, key=lambda p: int(p.rsplit("-", 1)[1])):
        out.append({"name": os.path.basename(d), "register": load(os.path.join(d, "register.json")),
                    "accuracy": load(os.path.join(d, "accuracy.json"))["accuracy"]})
    return out


def ratio_interval(a, b, resamples=10000, seed=1):
    """Ratio of medians a / b with a percentile bootstrap 95% interval
    (each group resampled on its own: the runs are independent)."""
    rng = random.Random(seed)
    ratios = sorted(statistics.median(rng.choices(a, k=len(a))) / statistics.median(rng.choices(b, k=len(b)))
                    for _ in range(resamples))
    return statistics.median(a) / statistics.median(b), ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs_dir")
    ap.add_argument("--elastix")
    ap.add_argument("--json")
    args = ap.parse_args()
    seeds, evolved = runs(args.runs_dir, "seeds"), runs(args.runs_dir, "evolved")
    if not seeds or not evolved:
        sys.exit(f"summarise: no seeds-N / evolved-N runs in {args.runs_dir}")
    machine = open(os.path.join(args.runs_dir, "machine.txt")).read().strip().splitlines()
    out = {"machine": machine, "runs": {}, "profile": {}}
    print(f"# gi register on the Colin27 test pair\n\nMachine: {' / '.join(machine)}\n")
    print("## Accuracy inside the brain (voxels) and time\n")
    print("| run | mean error | p95 | p99 | max | folded voxels | registration s | kernels s | "
          "iterations per level (coarse to fine) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in seeds + evolved:
        a, g = r["accuracy"], r["register"]
        e = a["error_in_mask"]
        its = "/".join(str(l["iterations"]) for l in g["levels"])
        print(f"| {r['name']} | {e['mean']:.3f} | {e['p95']:.3f} | {e['p99']:.3f} | {e['max']:.2f} | "
              f"{a['folding']['folded_voxels']} | {g['seconds']:.2f} | {g['kernel_milliseconds'] / 1000:.2f} | {its} |")
        out["runs"][r["name"]] = {"error": e, "folded_voxels": a["folding"]["folded_voxels"],
                                  "min_jacobian": a["folding"]["min_jacobian"], "seconds": g["seconds"],
                                  "kernel_seconds": g["kernel_milliseconds"] / 1000,
                                  "iterations": [l["iterations"] for l in g["levels"]],
                                  "evaluations": [l["evaluations"] for l in g["levels"]]}
    truth = seeds[0]["accuracy"]["truth_length_in_mask"]
    print(f"\nTruth inside the brain: mean {truth['mean']:.3f}, p95 {truth['p95']:.3f}, max {truth['max']:.3f} voxels.\n")
    st = [r["register"]["seconds"] for r in seeds]
    et = [r["register"]["seconds"] for r in evolved]
    speedup, low, high = ratio_interval(st, et)
    ks = [r["register"]["kernel_milliseconds"] for r in seeds]
    ke = [r["register"]["kernel_milliseconds"] for r in evolved]
    kspeed, klow, khigh = ratio_interval(ks, ke)
    out["end_to_end"] = {"seed_seconds": st, "evolved_seconds": et, "speedup": speedup, "interval_95": [low, high],
                         "kernel_speedup": kspeed, "kernel_interval_95": [klow, khigh]}
    print("## End to end\n")
    print(f"Seed kernels: median {statistics.median(st):.2f} s (range {min(st):.2f}-{max(st):.2f}, {len(st)} runs); "
          f"evolved kernels: median {statistics.median(et):.3f} s (range {min(et):.3f}-{max(et):.3f}).")
    print(f"**End-to-end speed-up {speedup:.1f}x** (95% bootstrap interval {low:.1f}-{high:.1f}x); "
          f"kernel time alone {kspeed:.1f}x ({klow:.1f}-{khigh:.1f}x).")
    print("The seed runs' times vary with their iteration counts: the seed histogram's float atomics make each run "
          "take its own path to the same optimum (see the differences below).\n")
    print("## Profile (median over the runs)\n")
    names = sorted(set().union(*[r["register"]["profile"] for r in seeds + evolved]))
    rows = []
    for n in names:
        sm = statistics.median(r["register"]["profile"].get(n, {"milliseconds": 0})["milliseconds"] for r in seeds)
        em = statistics.median(r["register"]["profile"].get(n, {"milliseconds": 0})["milliseconds"] for r in evolved)
        sl = statistics.median(r["register"]["profile"].get(n, {"launches": 0})["launches"] for r in seeds)
        el = statistics.median(r["register"]["profile"].get(n, {"launches": 0})["launches"] for r in evolved)
        rows.append((n, sm, em, sl, el))
        out["profile"][n] = {"seed_ms": sm, "evolved_ms": em, "seed_launches": sl, "evolved_launches": el}
    stot, etot = sum(r[1] for r in rows), sum(r[2] for r in rows)
    origin = evolved[0]["register"]["kernels"]
    print("| kernel | seed ms | seed share | evolved ms | evolved share | per launch seed / evolved ms | evolved kernel |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for n, sm, em, sl, el in sorted(rows, key=lambda r: -r[1]):
        kind = "published (evolved/<gpu>)" if origin.get(n, {}).get("evolved") else "seed (none published)"
        print(f"| {n} | {sm:.1f} | {100 * sm / stot:.1f}% | {em:.1f} | {100 * em / etot:.1f}% | "
              f"{sm / max(sl, 1):.4f} / {em / max(el, 1):.4f} | {kind} |")
    print(f"| all kernels | {stot:.0f} | | {etot:.0f} | | | |\n")
    print("## Differences between final displacements inside the brain (voxels)\n")
    print("| runs | p50 | p99 | max | mean |\n|---|---:|---:|---:|---:|")
    out["differences"] = {}
    for f in sorted(glob.glob(os.path.join(args.runs_dir, "compare_*.json"))):
        c = load(f)["compare"]
        name = re.sub(r"^compare_|\.json$", "", os.path.basename(f)).replace("_vs_", " vs ")
        out["differences"][name] = c
        print(f"| {name} | {c['p50']:.4f} | {c['p99']:.4f} | {c['max']:.3f} | {c['mean']:.4f} |")
    if args.elastix:
        t = load(os.path.join(args.elastix, "elastix_time.json"))
        a = load(os.path.join(args.elastix, "elastix_accuracy.json"))["accuracy"]
        e = a["error_in_mask"]
        out["elastix"] = {"time": t, "error": e, "folded_voxels": a["folding"]["folded_voxels"]}
        print("\n## elastix on the same machine's CPUs\n")
        print("| tool | mean error | p95 | p99 | folded voxels | wall s |\n|---|---:|---:|---:|---:|---:|")
        print(f"| elastix {t['elastix_version'].replace('elastix version: ', '')} ({t['threads']} threads, "
              f"{t['cpu']}) | {e['mean']:.3f} | {e['p95']:.3f} | {e['p99']:.3f} | {a['folding']['folded_voxels']} | "
              f"{t['elastix_seconds']:.2f} |")
        for label, group, times in (("gi, seed kernels", seeds, st), ("gi, evolved kernels", evolved, et)):
            acc = group[0]["accuracy"]["error_in_mask"]
            print(f"| {label} (median time; accuracy of run 1) | {acc['mean']:.3f} | {acc['p95']:.3f} | {acc['p99']:.3f} | "
                  f"{group[0]['accuracy']['folding']['folded_voxels']} | {statistics.median(times):.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
