"""The outcome categories of the per-generation stacked bar, and which
evaluation status (gi/evaluate/evaluation.cpp's names) goes into which. gi
counts the outcomes (gi/publish/run_summary.cpp); this only groups them."""

# (label, colour), in stacking order from the bottom. The flags come first:
# a cached or same-binary evaluation is a repeat whose status was copied from
# the evaluation it repeats, so counting it again by status would inflate that.
CATEGORIES = [
    ("ok", "#2ca02c"),
    ("wrong output", "#d62728"),
    ("compile error", "#ff7f0e"),
    ("timeout", "#9467bd"),
    ("crash", "#8c564b"),
    ("rejected", "#e377c2"),
    ("same binary", "#17becf"),
    ("cached", "#bcbd22"),
    ("other", "#7f7f7f"),
]

STATUS_CATEGORY = {
    "ok": "ok",
    "wrong_output": "wrong output",
    "input_modified": "wrong output",  # the kernel wrote a read-only input: a wrong result
    "compile_error": "compile error",
    "load_error": "compile error",  # the compiled module would not load: no usable binary
    "timeout": "timeout",
    "launch_error": "crash",
    "illegal_address": "crash",
    "trap": "crash",
    "guard_violation": "crash",  # wrote outside its buffers
    "worker_died": "crash",
    "rejected": "rejected",  # breaks a rule of the seed's spec: never compiled
}

DESCRIPTIONS = {
    "ok": "measured and correct",
    "wrong output": "wrong_output, input_modified",
    "compile error": "compile_error, load_error",
    "timeout": "timeout",
    "crash": "launch_error, illegal_address, trap, guard_violation, worker_died",
    "rejected": "the patch breaks a rule of the seed's spec (never compiled)",
    "same binary": "compiled to a binary already measured this generation (measurement shared)",
    "cached": "an identical variant was already evaluated this generation",
    "other": "a status this report does not know",
}


def category_of_outcome(outcome):
    """The category an outcome of run_summary.json's per-generation counts
    falls in: "cached" and "same_binary" (repeats, counted as such by gi), or
    an evaluation status."""
    if outcome == "cached":
        return "cached"
    if outcome == "same_binary":
        return "same binary"
    return STATUS_CATEGORY.get(outcome, "other")
