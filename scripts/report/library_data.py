"""An evolved/<gpu>/ library: one <family>-<kernel>/ folder per kernel with its
result.json and run_summary.json (gi/publish/results_writer.cpp), and an
optional failures.json written by evolve-all."""
import math
import os

from jsonio import ReportError, read_json, read_object
from run_data import load_published_run, number

# Above this speed-up a result is flagged for review by hand (result.json's "review").
REVIEW_SPEEDUP = 10.0


def is_library_dir(path):
    return bool(kernel_folders(path)) or os.path.isfile(os.path.join(path, "failures.json"))


def kernel_folders(path):
    """Sub-folders that hold a kernel's result (or look like they should)."""
    out = []
    for name in sorted(os.listdir(path)):
        folder = os.path.join(path, name)
        if name.startswith(".") or not os.path.isdir(folder):
            continue
        if any(os.path.isfile(os.path.join(folder, f)) for f in ("result.json", "patch.gi", "kernel.cu")):
            out.append(name)
    return out


def tuning_only(result):
    """The evolved kernel's launch tuning when it differs from the tuned seed's and no patch was kept, else None."""
    tuning = result.get("tuning") if isinstance(result.get("tuning"), dict) else {}
    evolved = tuning.get("evolved")
    if str(result.get("patch") or "").strip() or not isinstance(evolved, dict) or evolved == tuning.get("seed"):
        return None
    return evolved


def outcome(result):
    """'failed: why', 'no improvement' or 'improved' for one result.json."""
    for key in ("error", "failure"):
        if result.get(key):
            return f"failed: {result[key]}"
    status = result.get("status")
    if isinstance(status, str) and status not in ("ok", "passed", "improved"):
        return f"failed: {status}" if status != "no_improvement" else "no improvement"
    validation = result.get("validation")
    if isinstance(validation, dict) and validation.get("passed") is False:
        return "failed: validation"
    low = number(result.get("speedup_ci_low"))
    if low is None or low <= 1.0:
        return "no improvement"
    # An empty patch at another launch tuning (the winner's retuning) is an
    # improvement too: the tuned seed with nothing changed is not.
    if not str(result.get("patch") or "").strip() and tuning_only(result) is None:
        return "no improvement"
    return "improved"


def load_kernel(library_dir, folder):
    path = os.path.join(library_dir, folder)
    result = read_object(os.path.join(path, "result.json"))
    entry = {"folder": folder, "missing": [], "run": None}
    if result is None:
        entry.update(result={}, kernel=folder, outcome="failed: no result.json")
        entry["missing"].append("result.json")
        return entry
    entry["result"] = result
    entry["kernel"] = result.get("kernel") or folder
    entry["outcome"] = outcome(result)
    speedup = number(result.get("speedup"))
    entry["review"] = result.get("review") is True or (speedup is not None and speedup > REVIEW_SPEEDUP)
    for key in ("seed_median_ms", "evolved_median_ms", "speedup", "speedup_ci_low",
                "seed_floor_fraction", "evolved_floor_fraction"):
        if number(result.get(key)) is None:
            entry["missing"].append(key)
    entry["run"] = load_published_run(path, result)
    if entry["run"] is None:
        entry["missing"].append("run_summary.json")
    return entry


def read_failures(path):
    """failures.json: a list of {"kernel", "stage", "error"}; [] when absent."""
    data = read_json(path)
    if data is None:
        return []
    if not isinstance(data, list) or not all(isinstance(x, dict) for x in data):
        raise ReportError(f"{path}: expected a JSON list of objects with kernel, stage and error")
    return [{k: str(x.get(k, "")) for k in ("kernel", "stage", "error")} for x in data]


def geometric_mean(values):
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def load_library(library_dir):
    kernels = [load_kernel(library_dir, f) for f in kernel_folders(library_dir)]
    kernels.sort(key=lambda k: k["kernel"])
    speedups = [number(k["result"].get("speedup")) for k in kernels]
    return {
        "path": library_dir,
        "kernels": kernels,
        "failures": read_failures(os.path.join(library_dir, "failures.json")),
        "geomean": geometric_mean(speedups),
        "geomean_count": sum(1 for s in speedups if s is not None and s > 0),
    }
