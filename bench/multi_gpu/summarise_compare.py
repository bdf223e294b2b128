#!/usr/bin/env python3
"""Summarises bench/multi_gpu/compare.sh's two runs (one GPU, two GPUs):
distinct variants measured per second, and where each run's search time
went, so that a gain below 1.8x explains itself:
  - generations in which a variant hung: the generation waits for its
    time-out (at least the evaluator's 2 s minimum) and the worker's
    replacement, whatever the number of GPUs;
  - worker time measuring the variants that finished (what a second GPU
    can share);
  - waiting for NVRTC.
Writes OUT_DIR/summary.json and prints one line per run.

    python3 bench/multi_gpu/summarise_compare.py OUT_DIR
"""
import json
import os
import sys


def read_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def summarise_run(run):
    stats = json.load(open(os.path.join(run, "evaluator_stats.json")))
    generations = read_lines(os.path.join(run, "generations.jsonl"))
    evaluations = read_lines(os.path.join(run, "evaluations.jsonl"))
    versions = json.load(open(os.path.join(run, "versions.json")))
    measured = [e for e in evaluations if e.get("compiled") and not e.get("cached") and not e.get("same_binary")]
    hung = {e["generation"] for e in evaluations if e.get("status") == "timeout"}
    seconds = generations[-1]["search_seconds"]
    previous, in_hung_generations = 0.0, 0.0
    for g in generations:
        if g["generation"] in hung:
            in_hung_generations += g["search_seconds"] - previous
        previous = g["search_seconds"]
    finished = [e for e in measured if e.get("status") != "timeout"]
    measure_per_gpu = {}
    for e in finished:
        gpu = str((e.get("device") or {}).get("index", 0))
        measure_per_gpu[gpu] = measure_per_gpu.get(gpu, 0.0) + e.get("measure_seconds", 0.0)
    return {
        "gpu": versions.get("gpu"), "driver": versions.get("driver"), "date": versions.get("date"),
        "gi_commit": versions.get("gi_commit"),
        "search_seconds": seconds, "evaluations": generations[-1]["evaluations"], "measured": len(measured),
        "measured_per_second": len(measured) / seconds,
        "time_outs": sum(e.get("status") == "timeout" for e in measured),
        "seconds_in_generations_with_a_time_out": in_hung_generations,
        "measure_seconds_of_finished_variants_per_gpu": measure_per_gpu,
        "compile_wait_seconds": stats["compile_wait_seconds"], "gpu_seconds": stats["gpu_seconds"],
        "worker_restarts": stats["worker_restarts"], "total_seconds": stats["total_seconds"],
    }


def main():
    out = sys.argv[1]
    rows = {name: summarise_run(os.path.join(out, name)) for name in ("one-gpu", "two-gpus")}
    ratio = rows["two-gpus"]["measured_per_second"] / rows["one-gpu"]["measured_per_second"]
    summary = {"runs": rows, "measured_per_second_ratio": ratio}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    for name, r in rows.items():
        share = r["seconds_in_generations_with_a_time_out"] / r["search_seconds"]
        measuring = ", ".join(f"GPU {g} {s:.1f} s" for g, s in sorted(r["measure_seconds_of_finished_variants_per_gpu"].items()))
        print(f"{name:9s} {r['measured']:5d} measured in {r['search_seconds']:6.1f} s = {r['measured_per_second']:6.1f}/s; "
              f"{r['time_outs']} time-outs, their generations {r['seconds_in_generations_with_a_time_out']:.1f} s ({share:.0%}); "
              f"measuring the rest {measuring}; waiting for NVRTC {r['compile_wait_seconds']:.1f} s")
    print(f"two GPUs / one GPU: {ratio:.2f}x distinct variants measured per second")


if __name__ == "__main__":
    main()
