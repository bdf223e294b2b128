"""Numbers and result records as short text for the report's tables."""
import json
from html_page import esc
from run_data import number


def ms(value):
    v = number(value)
    if v is None:
        return "-"
    return f"{v:.4f}" if v >= 0.001 else f"{v:.2e}"


def pct(fraction):
    v = number(fraction)
    if v is None:
        return "-"
    return f"{v * 100:.1f}%" if v >= 0.01 else f"{v * 100:.2f}%"


def speedup(value, low=None):
    v = number(value)
    if v is None:
        return "-"
    lo = number(low)
    return f"{v:.3f}x" + (f" [{lo:.3f}x]" if lo is not None else "")


def seconds(value):
    v = number(value)
    if v is None:
        return "-"
    return f"{v:.1f} s" if v < 120 else f"{v / 60:.1f} min"


def validation(v):
    """'passed, 7 workloads, ...' from a validation record (result.json's or validation.json)."""
    if not isinstance(v, dict):
        return "-"
    parts = ["passed" if v.get("passed") else "FAILED"]
    if v.get("workloads") is not None:
        parts.append(f"{v['workloads']} workloads")
    if number(v.get("output_values")) is not None:
        parts.append(f"{count(v['output_values'])} values")
    if number(v.get("max_abs_error")) is not None:
        # Not max_rel_error: against reference values near zero it reads as 2.0 or 20 for a passing kernel.
        parts.append(f"max abs error {v['max_abs_error']:.2g}")
    problems = v.get("problems") or []
    if problems:
        parts.append("problems: " + "; ".join(str(p) for p in problems[:3]))
    return ", ".join(parts)


def count(n):
    """12345678 -> '12.3M'."""
    n = number(n)
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.3g}{suffix}"
    return f"{n:g}"


def sanitizer(s):
    """'memcheck, racecheck passed' from a {"memcheck": {"status": ...}, ...} record."""
    if not isinstance(s, dict) or not s:
        return "-"
    status = {tool: (r or {}).get("status", "?") for tool, r in sorted(s.items())}
    if set(status.values()) == {"passed"}:
        return ", ".join(status) + " passed"
    return ", ".join(f"{tool} {st}" for tool, st in status.items())


def flat_config(config, prefix=""):
    """config.json as 'key: value' pairs, nested objects joined with dots."""
    out = []
    for key, value in (config or {}).items():
        if isinstance(value, dict):
            out += flat_config(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def config_html(config):
    skip = {"seed_dir", "seed_sha256"}  # shown in the seed row
    pairs = [(k, v) for k, v in flat_config(config) if k not in skip]
    # JSON spelling of values (true, not Python's True), all on a few wrapped lines
    text = [f"<code>{esc(k)}</code>&nbsp;{esc(v if isinstance(v, str) else json.dumps(v))}" for k, v in pairs]
    return " &middot; ".join(text) if text else "-"
