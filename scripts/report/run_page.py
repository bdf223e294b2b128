"""The HTML of one evolution run: its summary table, stage times and the two
per-generation plots. Used alone (`gi report RUN_DIR`) and per kernel in a
library report."""
import plots
from formatting import config_html, ms, pct, sanitizer, seconds, speedup, validation
from html_page import esc, image, key_values, missing_line, table
from outcomes import CATEGORIES, DESCRIPTIONS
from run_data import number


def outcome_legend(open_=False):
    rows = [[f'<span style="color:{c}">&#9632;</span> {esc(n)}', esc(DESCRIPTIONS[n])] for n, c in CATEGORIES]
    return (f"<details{' open' if open_ else ''}><summary>What the outcome categories mean (each evaluation "
            "counts once: cached and same binary first, the rest by status)</summary>"
            + table(["category", "evaluation status / flag"], rows) + "</details>")


def _final_result(run):
    c = run.get("comparison")
    if not isinstance(c, dict):
        return '<span class="missing">no comparison.json</span>'
    seed_ms = (c.get("seed") or {}).get("median_ms")
    evolved_ms = (c.get("evolved") or {}).get("median_ms")
    rounds = f", {esc(c['rounds'])} interleaved rounds" if c.get("rounds") is not None else ""
    text = (f"<b>{speedup(c.get('speedup'), c.get('speedup_ci_low'))}</b> over the tuned seed "
            f"({ms(seed_ms)} ms &rarr; {ms(evolved_ms)} ms, {esc(c.get('workload', 'train'))} workload{rounds})")
    if c.get("review"):
        text += ' <span class="badge review">review</span>'
    s = run.get("comparison_switches")
    if isinstance(s, dict):
        text += (f"<br>over the best switch setting alone (<code>{esc(s.get('baseline_patch') or 'the seed')}</code>): "
                 f"{speedup(s.get('speedup'), s.get('speedup_ci_low'))}")
    return text


def _rate(run):
    last = run.get("search") or {}  # the last generation's figures
    rate = number(last.get("evaluations_per_second"))
    stats = run.get("evaluator_stats") or {}
    rate = rate if rate is not None else number(stats.get("evaluations_per_second"))
    elapsed = number(last.get("elapsed_seconds"))
    text = f"{rate:.1f}/s" if rate is not None else "-"
    return text + (f" over {seconds(elapsed)} of search" if elapsed is not None else "")


def summary_table(run):
    config = run.get("config") or {}
    c = run.get("comparison") if isinstance(run.get("comparison"), dict) else {}
    seed = esc(config.get("seed_dir", "-"))
    if config.get("seed_sha256"):
        seed += f" <span class='note'>(sha256 {esc(str(config['seed_sha256'])[:12])})</span>"
    count = run.get("evaluation_count")
    logged = (run.get("search") or {}).get("evaluations")
    evaluations = (f"{count} in {len(run['per_generation'])} generations" if count is not None
                   else f"{logged} (from generations.jsonl)" if logged is not None else "-")
    v = run.get("validation")
    versions = run.get("versions") or {}
    pairs = [
        ("kernel", esc(run.get("kernel") or "-")),
        # A published kernel's run is its summary; the records stayed in the runs/ folder it ran in.
        ("run", f"<code>{esc(run['name'])}</code> <span class='note'>(drawn from run_summary.json)</span>")
        if run.get("published") else ("run folder", f"<code>{esc(run['path'])}</code>"),
        ("seed", seed),
        ("configuration", config_html(config)),
        ("evaluations", esc(evaluations) + " <span class='note'>(not counting the seed, re-measured each "
                                           "generation)</span>"),
        ("evaluations/s", esc(_rate(run))),
        ("final result", _final_result(run)),
        ("memory floor", f"{pct(c.get('seed_floor_fraction'))} &rarr; {pct(c.get('evolved_floor_fraction'))} "
                         "<span class='note'>(seed &rarr; evolved; fraction of the time its bytes need at the "
                         "measured bandwidth)</span>" if c else "-"),
        ("validation", esc(validation(v)) + (f"; sanitizer: {esc(sanitizer(v.get('sanitizer')))}"
                                              if isinstance(v, dict) and v.get("sanitizer") else "")),
        ("patch" + (f" ({run['patch_file']})" if run.get("patch_file") else ""),
         f"<span class='patch'>{esc(run['patch'] or '(empty: no change to the seed)')}</span>"
         if run.get("patch_file") else "-"),
    ]
    published = (run.get("results") or {}).get("folder")
    if published:
        pairs.append(("published to", f"<code>{esc(published)}</code>"))
    if versions:
        pairs.append(("measured on", esc(", ".join(str(versions[k]) for k in ("gpu", "driver", "date", "gi_commit")
                                                   if versions.get(k)))))
    return key_values(pairs)


def stage_table(stages):
    if not stages:
        return ""
    total = sum(v for v in (number(x) for x in stages.values()) if v is not None)
    rows = [[esc(name), seconds(value), pct(number(value) / total) if total and number(value) is not None else "-"]
            for name, value in stages.items()]
    return "<h4>Time per stage</h4>" + table(["stage", "time", "share"], rows, footer=["total", seconds(total), ""],
                                              numeric=(1, 2))


def run_section(run, level=2, title=None, legend=False):
    h = f"h{level}"
    name = title or f"Run {run['name']}" + (f": {run['kernel']}" if run.get("kernel") else "")
    label = run.get("kernel") or run["name"]
    parts = [f"<{h}>{esc(name)}</{h}>", missing_line(run["missing"]), summary_table(run),
             stage_table(run.get("stage_seconds")), '<div class="plots">',
             image(plots.run_times(run["per_generation"], f"{label}: kernel time per generation"),
                   "time per generation"),
             image(plots.run_outcomes(run["per_generation"], f"{label}: outcome of each evaluation"),
                   "outcomes per generation (needs evaluations.jsonl)"),
             "</div>"]
    if legend:
        parts.append(outcome_legend(open_=True))
    return "\n".join(p for p in parts if p)
