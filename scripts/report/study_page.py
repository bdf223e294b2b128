"""The HTML of an ablation study (gi ablate): per kernel a box plot of the
cells' final speed-ups, a table per cell and the tests against the baseline
and the named contrasts (numbers from study_stats.summarise)."""
import plots
from html_page import esc, image, key_values, table
from study_stats import fmt


def study_html(summary):
    method = summary["method"]
    plan = summary["plan"]
    parts = ["<h2>Method</h2>",
             key_values([("kernels", ", ".join(plan["kernels"])), ("repeats (RNG seeds)", plan["repeats"]),
                         ("budget per run", f"population {plan['population']}, {plan['generations']} generations"),
                         ("compute-sanitizer in validation", "yes" if plan.get("sanitizers", True) else "no"),
                         ("baseline cell", summary["baseline"]),
                         ("speed-up", method["speedup"]), ("test", method["test"]),
                         ("effect size", method["effect_size"]), ("correction", method["correction"])])]
    for kernel, k in summary["kernels"].items():
        parts.append(f"<h2>{esc(kernel)}</h2>")
        parts.append(image(plots.study_boxes(kernel, k["cells"]), f"final speed-ups of {kernel} per cell"))
        rows = []
        for name, c in k["cells"].items():
            rows.append([esc(name), esc(c["varies"]), len(c["speedups"]), fmt(c.get("median_speedup")),
                         f"{fmt(c.get('q1'))} – {fmt(c.get('q3'))}" if c["speedups"] else "-",
                         f"{c['improved_runs']}/{c['runs']}", fmt(c["median_evaluations_to_first_improvement"]),
                         fmt(c["median_seconds_to_first_improvement"]), fmt(c["valid_fraction"], 2),
                         esc(", ".join(f"{s} {n}" for s, n in sorted(c["status"].items())))])
        parts.append(table(["cell", "varies", "runs", "median speed-up", "IQR", "improved", "evaluations to 1st",
                            "search s to 1st", "valid", "status"], rows, numeric=(2, 3, 5, 6, 7, 8)))
        rows = [[esc(c["cell"]), esc(c["against"]), f"{c['n'][0]} / {c['n'][1]}", fmt(c["median_ratio"]),
                 f"{c['a12']:.2f}", c["magnitude"], f"{c['p']:.4f}", f"{c['p_holm']:.4f}",
                 "yes" if c["significant"] else "no"] for c in k["comparisons"]]
        parts.append(table(["cell", "against", "n", "ratio of medians", "A12", "magnitude", "p (Mann–Whitney)",
                            "p (Holm)", "p (Holm) < 0.05"], rows, numeric=(3, 4, 6, 7)))
    return "\n".join(parts)
