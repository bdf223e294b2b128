"""One evolution run's directory (gi/run/run_directory.hpp) read into a dict the
report draws from. Whatever is missing is listed in run["missing"]."""
import collections
import math
import os
import statistics

from jsonio import jsonl_path, read_jsonl, read_object, read_text
from outcomes import category


def number(value):
    """value when it is a finite number (JSON writes an unmeasured time as null), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def is_run_dir(path):
    # Either file makes it a run: one that has just started (or lost a file) still gets a page that
    # says what is missing.
    return any(os.path.isfile(os.path.join(path, f)) for f in ("config.json", "generations.jsonl"))


def per_generation(evaluations, generations):
    """Per generation: seed time, best and median time of the correct
    evaluations, and the count of each outcome category."""
    by_gen = collections.defaultdict(list)
    for e in evaluations:
        g = e.get("generation")
        if isinstance(g, int):
            by_gen[g].append(e)
    seed_from_generations = {r.get("generation"): number(r.get("seed_ms")) for r in generations}
    rows = []
    for g in sorted(by_gen):
        seed_times, times, counts = [], [], collections.Counter()
        for e in by_gen[g]:
            ms = number(e.get("median_ms"))
            if e.get("index") == -1:  # the seed, measured again each generation
                if ms is not None and e.get("status") == "ok":
                    seed_times.append(ms)
                continue
            counts[category(e)] += 1
            if e.get("status") == "ok" and ms is not None:
                times.append(ms)
        seed = statistics.median(seed_times) if seed_times else seed_from_generations.get(g)
        rows.append({
            "generation": g,
            "seed_ms": seed,
            "best_ms": min(times) if times else None,
            "median_ms": statistics.median(times) if times else None,
            "counts": counts,
            "total": sum(counts.values()),
        })
    return rows


def per_generation_from_log(generations):
    """Without evaluations: generations.jsonl's best and seed times only."""
    return [{"generation": r.get("generation"), "seed_ms": number(r.get("seed_ms")),
             "best_ms": number(r.get("best_ms")), "median_ms": None, "counts": None, "total": 0}
            for r in generations if isinstance(r.get("generation"), int)]


def kernel_name(config):
    seed_dir = (config or {}).get("seed_dir")
    if not isinstance(seed_dir, str) or not seed_dir:
        return None
    parts = [p for p in seed_dir.replace("\\", "/").split("/") if p]
    return "/".join(parts[-2:]) if len(parts) >= 2 else parts[-1]


def patch_text(run_dir):
    """minimised.gi without its @seed header line (best.gi when not minimised)."""
    for name in ("minimised.gi", "best.gi"):
        text = read_text(os.path.join(run_dir, name))
        if text is not None:
            lines = [l for l in text.splitlines() if l.strip() and not l.startswith("@seed")]
            return name, " ".join(lines)
    return None, None


def load_run(run_dir):
    run = {"path": run_dir, "name": os.path.basename(os.path.normpath(run_dir)), "missing": []}
    missing = run["missing"]

    def need(name, why):
        value = read_object(os.path.join(run_dir, name))
        if value is None:
            missing.append(f"{name} ({why})")
        return value

    run["config"] = need("config.json", "no configuration")
    run["kernel"] = kernel_name(run["config"])
    gen_path = os.path.join(run_dir, "generations.jsonl")
    run["generations"] = read_jsonl(gen_path) if os.path.isfile(gen_path) else []
    if not run["generations"]:
        missing.append("generations.jsonl (no per-generation log)")
    eval_path = jsonl_path(run_dir, "evaluations")
    run["evaluations_file"] = eval_path
    if eval_path:
        evaluations = read_jsonl(eval_path)
        run["evaluation_count"] = sum(1 for e in evaluations if e.get("index") != -1)
        run["per_generation"] = per_generation(evaluations, run["generations"])
    else:
        missing.append("evaluations.jsonl[.gz] (no outcome counts; times from generations.jsonl)")
        run["evaluation_count"] = None
        run["per_generation"] = per_generation_from_log(run["generations"])
    run["comparison"] = need("comparison.json", "no final seed-versus-evolved measurement")
    run["comparison_switches"] = read_object(os.path.join(run_dir, "comparison_switches.json"))
    run["validation"] = need("validation.json", "not validated")
    run["results"] = read_object(os.path.join(run_dir, "results.json"))
    run["evaluator_stats"] = read_object(os.path.join(run_dir, "evaluator_stats.json"))
    run["versions"] = read_object(os.path.join(run_dir, "versions.json"))
    run["stage_seconds"] = read_object(os.path.join(run_dir, "stage_seconds.json"))  # {"stage": seconds}
    run["patch_file"], run["patch"] = patch_text(run_dir)
    if run["patch_file"] is None:
        missing.append("minimised.gi (no final patch)")
    return run
