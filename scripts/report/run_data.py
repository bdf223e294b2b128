"""One evolution run read into a dict the report draws from, from its compact
summary, run_summary.json (gi/publish/run_summary.hpp): `gi report RUN_DIR`
makes it from the run's records, and publication puts it beside each evolved
kernel, whose run's raw records stay in the ignored runs/ folder. Whatever is
missing is listed in run["missing"]."""
import collections
import math
import os

from jsonio import ReportError, read_object, read_text
from outcomes import category_of_outcome

SUMMARY = "run_summary.json"
SUMMARY_FORMAT = "gi-run-summary-1"


def number(value):
    """value when it is a finite number (JSON writes an unmeasured time as null), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def is_run_dir(path):
    # Either file makes it a run: one that has just started (or lost a file) still gets a page that
    # says what is missing.
    return any(os.path.isfile(os.path.join(path, f)) for f in ("config.json", "generations.jsonl", SUMMARY))


def read_summary(path):
    """run_summary.json, checked for its format; None when absent."""
    summary = read_object(path)
    if summary is not None and summary.get("format") != SUMMARY_FORMAT:
        raise ReportError(f"{path}: expected format {SUMMARY_FORMAT}, got {summary.get('format')!r}")
    return summary


def per_generation(summary):
    """Per generation (the summary keeps one column per measure): seed, best
    and median time of the correct evaluations, and the count of each outcome
    category (None without evaluations)."""
    columns = summary.get("generations") or {}
    generations = columns.get("generation") or []

    def column(name, i):
        values = columns.get(name) or []
        return values[i] if i < len(values) else None

    outcomes = columns.get("outcomes")
    rows = []
    for i, generation in enumerate(generations):
        counts = None
        if isinstance(outcomes, dict):
            counts = collections.Counter()
            for outcome, per_generation_counts in outcomes.items():
                counts[category_of_outcome(outcome)] += per_generation_counts[i] if i < len(per_generation_counts) else 0
        best = number(column("best_ms", i))
        rows.append({
            "generation": generation,
            "seed_ms": number(column("seed_ms", i)),
            # Without evaluations, the search's best so far (generations.jsonl) stands in.
            "best_ms": best if best is not None else number(column("search_best_ms", i)),
            "median_ms": number(column("median_ms", i)),
            "counts": counts,
            "total": column("total", i) or 0,
        })
    return rows


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


def run_from_summary(summary, path, name):
    """The parts of a run dict that come from its summary."""
    run = {"path": path, "name": name, "missing": []}
    run["config"] = summary.get("config")
    if run["config"] is None:
        run["missing"].append("config.json (no configuration)")
    run["kernel"] = kernel_name(run["config"])
    run["per_generation"] = per_generation(summary)
    if not run["per_generation"]:
        run["missing"].append("generations.jsonl (no per-generation log)")
    elif summary.get("evaluations") is None:
        run["missing"].append("evaluations.jsonl (no outcome counts; times from generations.jsonl)")
    run["evaluation_count"] = summary.get("evaluations")
    run["search"] = summary.get("search") or {}
    run["evaluator_stats"] = summary.get("evaluator_stats")
    run["versions"] = summary.get("versions")
    run["stage_seconds"] = summary.get("stage_seconds")  # {"stage": seconds}
    return run


def load_run(run_dir):
    """A run directory: its summary (which `gi report` writes first) and its final records."""
    summary = read_summary(os.path.join(run_dir, SUMMARY))
    if summary is None:
        raise ReportError(f"{run_dir}: no {SUMMARY}: draw a run with `gi report {run_dir}`, which makes it "
                          "from the run's records")
    run = run_from_summary(summary, run_dir, os.path.basename(os.path.normpath(run_dir)))
    missing = run["missing"]

    def need(name, why):
        value = read_object(os.path.join(run_dir, name))
        if value is None:
            missing.append(f"{name} ({why})")
        return value

    run["comparison"] = need("comparison.json", "no final seed-versus-evolved measurement")
    run["comparison_switches"] = read_object(os.path.join(run_dir, "comparison_switches.json"))
    run["validation"] = need("validation.json", "not validated")
    run["results"] = read_object(os.path.join(run_dir, "results.json"))
    run["patch_file"], run["patch"] = patch_text(run_dir)
    if run["patch_file"] is None:
        missing.append("minimised.gi (no final patch)")
    return run


def load_published_run(kernel_dir, result):
    """A published kernel's run: its run_summary.json beside result.json,
    which gives the final measurement, validation and patch. None when the
    folder has no summary (results published before summaries existed)."""
    summary = read_summary(os.path.join(kernel_dir, SUMMARY))
    if summary is None:
        return None
    run = run_from_summary(summary, kernel_dir, summary.get("run_id") or os.path.basename(kernel_dir))
    run["comparison"] = {
        "seed": {"median_ms": result.get("seed_median_ms")}, "evolved": {"median_ms": result.get("evolved_median_ms")},
        "speedup": result.get("speedup"), "speedup_ci_low": result.get("speedup_ci_low"),
        "review": result.get("review"), "rounds": result.get("rounds"), "workload": result.get("workload"),
        "seed_floor_fraction": result.get("seed_floor_fraction"),
        "evolved_floor_fraction": result.get("evolved_floor_fraction")}
    over = result.get("over_best_switches")
    run["comparison_switches"] = ({"baseline_patch": over.get("switches"), "speedup": over.get("speedup"),
                                   "speedup_ci_low": over.get("speedup_ci_low")} if isinstance(over, dict) else None)
    validation = result.get("validation")
    if isinstance(validation, dict) and result.get("sanitizer"):
        validation = dict(validation, sanitizer=result["sanitizer"])
    run["validation"] = validation
    run["results"] = None
    run["published"] = True
    run["patch_file"], run["patch"] = "patch.gi", result.get("patch") or ""
    return run
