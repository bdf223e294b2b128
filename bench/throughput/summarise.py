#!/usr/bin/env python3
"""Evaluation throughput per kernel, from the run directories of an evolve-all
folder (or any run directories): the benchmark behind the design's target of
100 evaluations/s on every kernel that runs under 1 ms (300/s on B-spline).

    python3 bench/throughput/summarise.py runs/evolve-all-<gpu> [--out FILE.md]
    python3 bench/throughput/summarise.py runs/evolve-all-<gpu> --plan runs/evolve-all-<gpu>/evolve_all.json

(--plan: only the run folders an evolve-all plan names, where older runs sit
beside them. Run records stay in the ignored runs/ folder of the machine that
keeps them, never in the tracked tree.) A footer counts the kernels that meet
their target.

Evaluations are counted as the runs log them (the seed's own, cached and
same-binary ones included) over the search's wall time (search_seconds, summed
over every call of a resumed run); "measured/s" counts only the distinct
binaries the worker checked and timed (neither cached nor same binary)."""
import argparse
import os
import sys

# The report's readers: .jsonl or .jsonl.gz, a malformed line named with its number.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "report"))
from jsonio import ReportError, jsonl_path, read_jsonl, read_object  # noqa: E402


def run_dirs(root, plan=None):
    if os.path.exists(os.path.join(root, "generations.jsonl")):
        return [root]
    if plan is not None:
        named = [k["run_dir"] for k in (read_object(plan) or {}).get("kernels", [])]
        if not named:
            raise ReportError(f"{plan}: no kernels")
        return [os.path.join(root, d) for d in named if os.path.exists(os.path.join(root, d, "generations.jsonl"))]
    return sorted(os.path.join(root, d) for d in os.listdir(root)
                  if os.path.exists(os.path.join(root, d, "generations.jsonl")))


def summarise(run):
    gens = read_jsonl(os.path.join(run, "generations.jsonl"))
    if not gens:
        return None
    evals_file = jsonl_path(run, "evaluations")
    measured = 0
    if evals_file:
        for e in read_jsonl(evals_file):
            measured += bool(e.get("compiled")) and not e.get("cached") and not e.get("same_binary")
    last = gens[-1]
    seconds = last.get("search_seconds") or last.get("elapsed_seconds") or 0.0
    config = read_object(os.path.join(run, "config.json")) or {}
    data = read_object(os.path.join(run, "search_data.json")) or {}
    return {
        "kernel": os.path.basename(config.get("seed_dir", run).rstrip("/")),
        "family": os.path.basename(os.path.dirname(config.get("seed_dir", run).rstrip("/"))),
        "seed_ms": gens[0]["seed_ms"],
        "generations": len(gens),
        "evaluations": last["evaluations"],
        "search_seconds": seconds,
        "evaluations_per_second": last["evaluations"] / seconds if seconds else 0.0,
        "measured_per_second": measured / seconds if seconds else 0.0,
        "data_every": data.get("data_every", config.get("search", {}).get("data_every", 1)),
        "set_seconds": data.get("prepare_seconds"),
    }


def target(row):
    if row["kernel"] == "deformation_field":
        return 300
    return 100 if row["seed_ms"] < 1.0 else None


def table(rows):
    out = ["| kernel | seed ms | generations | evaluations | search s | evaluations/s | measured/s | data every | s per data set | target | met |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        t = target(r)
        met = "-" if t is None else ("yes" if r["evaluations_per_second"] >= t else "**no**")
        out.append("| %s/%s | %.4f | %d | %d | %.1f | %.1f | %.1f | %s | %s | %s | %s |" % (
            r["family"], r["kernel"], r["seed_ms"], r["generations"], r["evaluations"], r["search_seconds"],
            r["evaluations_per_second"], r["measured_per_second"], r["data_every"],
            "-" if r["set_seconds"] is None else "%.2f" % r["set_seconds"], "-" if t is None else t, met))
    judged = [r for r in rows if target(r) is not None]
    met = [r for r in judged if r["evaluations_per_second"] >= target(r)]
    out.append("")
    out.append(f"{len(met)} of {len(judged)} kernels with a target meet it "
               "(100 evaluations/s for a seed under 1 ms, 300/s for B-spline deformation_field).")
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root", help="an evolve-all folder or a run directory")
    p.add_argument("--out", help="write the table here (Markdown) as well")
    p.add_argument("--plan", help="an evolve_all plan (JSON): only the run folders it names")
    a = p.parse_args()
    try:
        rows = [r for r in (summarise(d) for d in run_dirs(a.root, a.plan)) if r]
    except ReportError as e:
        sys.exit(str(e))
    text = table(rows)
    print(text, end="")
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
