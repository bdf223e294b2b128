"""The HTML of a library report (evolved/<gpu>/): the speed-up and floor
plots, the table of all kernels with the geometric mean, failures, and each
kernel's run with its per-generation plots."""
import re

import plots
from formatting import pct, sanitizer, speedup, ms, validation
from html_page import breakable, esc, image, missing_line, nowrap_numbers, table
from library_data import tuning_only
from run_page import outcome_legend, run_section

TERMS = [
    ("speed-up", "median seed time / median evolved time on the training workload, measured interleaved "
                 "(seed, evolved, seed, ...) with each kernel at its own best block size and compile options."),
    ("[ci low]", "the lower end of the speed-up's 95% bootstrap confidence interval: the speed-up is at "
                 "least this with 95% confidence. Below 1.000x the kernel may be no faster than the seed."),
    ("over best switches", "the evolved kernel against the seed's best hand-written switch setting (its "
                           "alternative code paths) without line edits: what the search added beyond choosing "
                           "a path. 'the seed's own': the seed's default path was already best."),
    ("floor", "time the kernel's minimum bytes need at the GPU's measured copy bandwidth, divided by its "
              "measured time: 100% = as fast as its memory traffic allows."),
    ("review", "a speed-up above 10x: usually a slow seed path replaced by a fast one, but check by hand."),
    ("no improvement", "the speed-up's ci low is not above 1.0x, or neither a patch nor a retuning was kept: "
                       "the tuned seed is published as it was (the search's best, when set aside, is in "
                       "result.json's search_best; the seed's best switch setting is tried before the tuned seed)."),
]


def anchor(folder):
    return "run-" + re.sub(r"[^A-Za-z0-9_-]", "-", folder)


def _badge(k):
    if k["outcome"].startswith("failed"):
        return f'<span class="badge failed">{esc(k["outcome"])}</span>'
    text = ('<span class="badge improved">improved</span>' if k["outcome"] == "improved"
            else '<span class="badge none">no improvement</span>')
    return text + (' <span class="badge review">review</span>' if k.get("review") else "")


def _switches(r):
    o = r.get("over_best_switches")
    if not isinstance(o, dict):
        return "-"
    against = o.get("switches") or "the seed's own"
    return f"{speedup(o.get('speedup'), o.get('speedup_ci_low'))} <span class='note'>vs {esc(against)}</span>"


def kernel_table(library):
    headers = ["kernel", "seed ms", "evolved ms", "speed-up [ci low]", "over best switches [ci low]",
               "floor seed &rarr; evolved", "validation (held-out data)", "patch", "run"]
    rows, classes = [], []
    for k in library["kernels"]:
        r = k["result"]
        run_id = r.get("run_id")
        run = (f'<a href="#{anchor(k["folder"])}">{breakable(run_id or k["folder"])}</a>' if k.get("run")
               else esc(run_id or "-") + (" <span class='note'>(no run_summary.json)</span>" if run_id else ""))
        check = nowrap_numbers(esc(validation(r.get("validation"))))
        if r.get("sanitizer"):
            check += "; <span class='note'>" + esc(sanitizer(r.get("sanitizer"))) + "</span>"
        patch = r.get("patch")
        patch = "<br>".join(esc(e) for e in str(patch or "").split())
        patch = f"<code>{patch}</code>" if patch else "<span class='note'>(empty)</span>"
        t = tuning_only(r)
        if t:
            patch += (f"<br><span class='note'>launch tuning only: block {esc(t.get('block_size'))}"
                      f"{', ' + esc(' '.join(t.get('options') or [])) if t.get('options') else ''}</span>")
        best = r.get("search_best")
        # What was published in place of the search's best (older results: the tuned seed).
        kept = (r.get("kept") or "the tuned seed").removeprefix("the ")
        for what, aside in (("the search's best", best), ("the best switch setting", r.get("switch_best"))):
            if isinstance(aside, dict) and aside.get("rejected"):  # failed validation
                patch += (f"<br><span class='note'>{esc(kept)} kept; {what} "
                          f"(<code>{esc(aside.get('patch') or '')}</code>) failed validation: "
                          f"{esc('; '.join(aside['rejected'])[:200])}</span>")
            elif isinstance(aside, dict):  # not shown faster: say what it gave
                patch += (f"<br><span class='note'>{esc(kept)} kept; {what} gave "
                          f"{speedup(aside.get('speedup'), aside.get('speedup_ci_low'))}</span>")
        rows.append([f"<b>{breakable(k['kernel'])}</b><br>{_badge(k)}" + missing_line(k["missing"]), ms(r.get("seed_median_ms")),
                     ms(r.get("evolved_median_ms")), speedup(r.get("speedup"), r.get("speedup_ci_low")),
                     _switches(r), f"{pct(r.get('seed_floor_fraction'))} &rarr; {pct(r.get('evolved_floor_fraction'))}",
                     check, patch, run])
        classes.append("failed" if k["outcome"].startswith("failed") else "review" if k.get("review") else
                       "same" if k["outcome"] == "no improvement" else "")
    g = library["geomean"]
    footer = [f"geometric mean over {library['geomean_count']} kernels", "", "",
              f"{g:.3f}x" if g else "-", "", "", "", "", ""]
    # Minimum widths keep patches and run ids from breaking mid-word in a table this wide.
    return table(headers, rows, classes, footer, numeric=(1, 2, 3, 5),
                 widths={4: "10em", 6: "13em", 7: "15em", 8: "10em"}, cls="wide")


def failures_table(failures):
    if not failures:
        return ""
    rows = [[esc(f["kernel"]), esc(f["stage"]), f"<code>{esc(f['error'])}</code>"] for f in failures]
    return '<h2 id="failed">Failed</h2>' + table(["kernel", "stage", "error"], rows, ["failed"] * len(rows))


def library_html(library):
    kernels = library["kernels"]
    gpu = next((k["result"].get("gpu") for k in kernels if k["result"].get("gpu")), None)
    g = library["geomean"]
    with_runs = [k for k in kernels if k.get("run")]
    body = [f'<p class="meta">Library <code>{esc(library["path"])}</code>'
            + (f", GPU {esc(gpu)}" if gpu else "") + f": {len(kernels)} kernels"
            + (f", geometric-mean speed-up <b>{g:.3f}x</b> over {library['geomean_count']}" if g else "")
            + (f", {len(library['failures'])} failed" if library["failures"] else "") + ".</p>",
            "<dl class='terms'>" + "".join(f"<dt>{esc(t)}</dt><dd>{esc(d)}</dd>" for t, d in TERMS) + "</dl>",
            "<p>Contents: <a href='#speedups'>speed-ups</a> &middot; <a href='#floor'>memory floor</a> &middot; "
            "<a href='#kernels'>all kernels</a>" + (" &middot; <a href='#failed'>failed</a>" if library["failures"]
                                                    else "") + " &middot; <a href='#runs'>runs</a></p>",
            '<h2 id="speedups">Speed-up per kernel</h2>',
            image(plots.speedups(kernels, g), "speed-up per kernel"),
            '<h2 id="floor">Memory floor reached</h2>',
            image(plots.floor_fractions(kernels), "fraction of the memory floor per kernel"),
            '<h2 id="kernels">All kernels</h2>', kernel_table(library), failures_table(library["failures"]),
            '<h2 id="runs">Evolution runs</h2>']
    if not kernels:
        body.append('<p class="missing">No kernel folders with result.json here.</p>')
    body.append("<p>" + " &middot; ".join(f'<a href="#{anchor(k["folder"])}">{esc(k["kernel"])}</a>'
                                          for k in with_runs) + "</p>")
    without = [k["kernel"] for k in kernels if not k.get("run")]
    if without:
        body.append('<p class="missing">No run summary (run_summary.json) for: ' + esc(", ".join(without)) + ".</p>")
    body.append(outcome_legend())
    for k in with_runs:
        run = k["run"]
        body.append(f'<section id="{anchor(k["folder"])}">')
        body.append(run_section(run, level=3, title=f"{k['kernel']} (run {run['name']})", legend=False))
        body.append("</section>")
    return "\n".join(b for b in body if b)
