#!/usr/bin/env python3
"""Statistics of an ablation study (gi ablate): per kernel and cell, the
median and interquartile range of the final speed-up (each run's from its
interleaved comparison of the final kernel against the seed at its default
launch), time to the first improvement in evaluations and in seconds, and
the fraction of valid variants; then each cell against the baseline cell,
and the contrasts the study exists for, by two-sided Mann-Whitney U tests
(scipy.stats.mannwhitneyu) with Vargha-Delaney A12 effect sizes, the p-values
corrected for multiple comparisons by Holm's step-down method within each
kernel.

    /usr/bin/python3 scripts/report/study_stats.py STUDY_DIR [--out FILE]

Reads STUDY_DIR/study_results.json (written by gi ablate) and writes
STUDY_DIR/study_summary.json (or FILE): every number behind the report's
tables and plots. Exit 0 on success, 1 on bad input, 3 without scipy.
"""
import argparse
import json
import math
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from jsonio import ReportError  # noqa: E402

SCIPY_MISSING = 3

# The contrasts every study answers (issue 14): what GI's line and CUDA edits
# add beyond choosing switch paths, and beyond launch tuning; and what the
# edits add to each of those when everything is searched together.
CONTRASTS = [
    ("line_and_cuda_edits", "switches_only"),
    ("line_and_cuda_edits", "launch_tuning_only"),
    ("everything", "switches_only"),
    ("everything", "launch_tuning_only"),
    # issue 28: the transformation families on a plain seed against the
    # hand-written switch paths of its library seed (one slug, one table)
    ("transform_only", "switches_only"),
]


def a12(x, y, u):
    """Vargha-Delaney A12: the probability that a run of x beats (is faster
    than) a run of y, ties counting half; from the U statistic of x."""
    return u / (len(x) * len(y))


def a12_magnitude(a):
    d = abs(a - 0.5)
    return "negligible" if d < 0.06 else "small" if d < 0.14 else "medium" if d < 0.21 else "large"


def holm(pvalues):
    """Holm's step-down adjustment: the i-th smallest of m p-values times
    (m - i), made monotone, capped at 1."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted = [0.0] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def quartiles(values):
    import numpy
    q1, med, q3 = numpy.percentile(values, [25, 50, 75])
    return float(q1), float(med), float(q3)


def median_or_none(values):
    return quartiles(values)[1] if values else None


def summarise(results):
    from scipy.stats import mannwhitneyu

    plan = results["plan"]
    baseline = plan.get("baseline", "everything")
    cells_in_order = [c["name"] for c in plan["cells"]]
    varies = {c["name"]: c.get("varies", "") for c in plan["cells"]}
    kernels = []
    for run in results["runs"]:
        if run["kernel"] not in kernels:
            kernels.append(run["kernel"])
    out = {"format": "gi-study-summary-1", "baseline": baseline,
           "method": {"speedup": "median(seed at the spec's default launch) / median(final kernel), interleaved, "
                                 "per run (ablation_comparison.json)",
                      "test": "scipy.stats.mannwhitneyu, two-sided",
                      "effect_size": "Vargha-Delaney A12 = U / (n1 n2): P(a run of the cell is faster than one of "
                                     "the other), ties half; magnitude thresholds 0.56, 0.64, 0.71",
                      "correction": "Holm step-down within each kernel, over its comparisons against the baseline "
                                    "and the named contrasts"},
           "plan": plan, "kernels": {}}
    for kernel in kernels:
        runs = [r for r in results["runs"] if r["kernel"] == kernel]
        cells = {}
        for name in cells_in_order:
            mine = [r for r in runs if r["cell"] == name]
            if not mine:
                continue
            speedups = [r["speedup"] for r in mine if r.get("speedup") is not None]
            status = {}
            for r in mine:
                status[r["status"]] = status.get(r["status"], 0) + 1
            cell = {"varies": varies.get(name, ""), "runs": len(mine), "status": status, "speedups": speedups}
            if speedups:
                q1, med, q3 = quartiles(speedups)
                cell.update(median_speedup=med, q1=q1, q3=q3, iqr=q3 - q1, min=min(speedups), max=max(speedups))
            improved = [r for r in mine if r.get("evaluations_to_first_improvement") is not None]
            cell["improved_runs"] = len(improved)
            cell["median_evaluations_to_first_improvement"] = median_or_none(
                [r["evaluations_to_first_improvement"] for r in improved])
            cell["median_seconds_to_first_improvement"] = median_or_none(
                [r["seconds_to_first_improvement"] for r in improved])
            valid = [r["valid_fraction"] for r in mine if r.get("valid_fraction") is not None]
            cell["valid_fraction"] = sum(valid) / len(valid) if valid else None
            cell["variants"] = sum(r.get("variants", 0) for r in mine)
            cells[name] = cell

        comparisons = []
        pairs = [(name, baseline) for name in cells if name != baseline]
        pairs += [p for p in CONTRASTS if p not in pairs and (p[1], p[0]) not in pairs]
        for first, second in pairs:
            if first not in cells or second not in cells:
                continue
            x, y = cells[first]["speedups"], cells[second]["speedups"]
            if len(x) < 2 or len(y) < 2:
                continue
            if len(set(x + y)) == 1:  # every run the same: no evidence either way
                u, p = len(x) * len(y) / 2.0, 1.0
            else:
                res = mannwhitneyu(x, y, alternative="two-sided")
                u, p = float(res.statistic), float(res.pvalue)
            effect = a12(x, y, u)
            comparisons.append({"cell": first, "against": second, "n": [len(x), len(y)],
                                "median_ratio": cells[first]["median_speedup"] / cells[second]["median_speedup"],
                                "u": u, "p": p, "a12": effect, "magnitude": a12_magnitude(effect)})
        for c, adjusted in zip(comparisons, holm([c["p"] for c in comparisons])):
            c["p_holm"] = adjusted
            c["significant"] = adjusted < 0.05
        out["kernels"][kernel] = {"cells": cells, "comparisons": comparisons}
    return out


def fmt(v, digits=3):
    if v is None:
        return "-"
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "-"
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def text_report(summary):
    lines = []
    for kernel, k in summary["kernels"].items():
        lines.append(f"== {kernel}")
        lines.append(f"{'cell':24} {'n':>3} {'median':>8} {'IQR':>8} {'evals→1st':>10} {'s→1st':>7} {'valid':>6}")
        for name, c in k["cells"].items():
            lines.append(f"{name:24} {len(c['speedups']):>3} {fmt(c.get('median_speedup')):>8} {fmt(c.get('iqr')):>8} "
                         f"{fmt(c['median_evaluations_to_first_improvement']):>10} "
                         f"{fmt(c['median_seconds_to_first_improvement']):>7} {fmt(c['valid_fraction'], 2):>6}")
        for c in k["comparisons"]:
            lines.append(f"  {c['cell']} vs {c['against']}: ratio {c['median_ratio']:.3f}, A12 {c['a12']:.2f} "
                         f"({c['magnitude']}), p {c['p']:.4f}, Holm {c['p_holm']:.4f}")
    return "\n".join(lines)


def write_summary(summary, path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")


def load_results(study_dir):
    path = os.path.join(study_dir, "study_results.json")
    try:
        with open(path, encoding="utf-8") as f:
            results = json.load(f)
    except OSError as e:
        raise ReportError(f"{path}: {e.strerror} (run gi ablate first)")
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}:{e.lineno}: malformed JSON: {e.msg}")
    if results.get("format") != "gi-study-results-1":
        raise ReportError(f"{path}: format: expected gi-study-results-1")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study_dir")
    parser.add_argument("--out", help="the summary JSON (default: STUDY_DIR/study_summary.json)")
    args = parser.parse_args(argv)
    try:
        import scipy.stats  # noqa: F401
    except ImportError:
        print("study_stats needs scipy: apt-get install python3-scipy (and /usr/bin/python3, where it installs; "
              f"this is {sys.executable})", file=sys.stderr)
        return SCIPY_MISSING
    try:
        summary = summarise(load_results(args.study_dir))
    except ReportError as e:
        print(f"study_stats: error: {e}", file=sys.stderr)
        return 1
    out = args.out or os.path.join(args.study_dir, "study_summary.json")
    write_summary(summary, out)
    print(text_report(summary))
    print(f"study_stats: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
