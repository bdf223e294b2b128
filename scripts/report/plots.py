"""The report's matplotlib figures, each returned as a PNG data: URI so the
page needs no files beside it. Import after checking matplotlib exists."""
import base64
import io

import matplotlib

matplotlib.use("Agg")  # no display: render to memory only
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter  # noqa: E402

from outcomes import CATEGORIES  # noqa: E402

DPI = 100  # set by gi_report.py's --dpi; 100 keeps a 15-kernel library page under 1 MB
COLOURS = {"improved": "#1f77b4", "review": "#e6550d", "no improvement": "#969696", "failed": "#d62728"}

plt.rcParams.update({"font.size": 10, "axes.titlesize": 11, "axes.grid": True, "grid.alpha": 0.3})


def data_uri(fig):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    png = buffer.getvalue()
    try:  # a 256-colour palette makes these flat plots about 3x smaller
        from PIL import Image
        image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        small = io.BytesIO()
        image.save(small, format="png", optimize=True)
        png = min(png, small.getvalue(), key=len)
    except Exception:  # noqa: BLE001 - Pillow is optional: keep the full-colour PNG
        pass
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _ms(v, _pos=None):
    return f"{v:g}"


def _generation_axis(ax, gens):
    ax.set_xlabel("generation")
    if gens and max(gens) - min(gens) <= 20:
        ax.set_xticks(range(min(gens), max(gens) + 1))  # every generation of a short run
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _row_major(n, ncol):
    """Legend entry order that reads left to right, then down (matplotlib fills columns first)."""
    nrow = -(-n // ncol)
    return [r * ncol + c for c in range(ncol) for r in range(nrow) if r * ncol + c < n]


def _log_y(ax):
    """Log y with 1-2-5 labels: a range under a decade would otherwise show one label or none."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(_ms))
    ax.yaxis.set_minor_formatter(NullFormatter())

RUN_FIGSIZE = (6.6, 3.9)  # two side by side on a 1400-pixel-wide page


def run_times(per_generation, title):
    """(a) best and median time of the correct variants per generation, against the seed."""
    rows = [r for r in per_generation if any(r[k] is not None for k in ("seed_ms", "best_ms", "median_ms"))]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=RUN_FIGSIZE)
    gens = [r["generation"] for r in rows]
    # The seed is drawn last, on top: the median often sits on it until the first fast variants spread.
    series = [("best_ms", "best correct variant", "#2ca02c", "-", "^", 2),
              ("median_ms", "median of the correct variants", "#1f77b4", "-", "o", 2),
              ("seed_ms", "seed (re-measured each generation)", "#555555", "--", "s", 3)]
    values = []
    for key, label, colour, style, marker, z in series:
        ys = [r[key] for r in rows]
        if any(y is not None for y in ys):
            ax.plot(gens, [float("nan") if y is None else y for y in ys], style, color=colour,
                    marker=marker, markersize=4, label=label, zorder=z)
            values += [y for y in ys if y is not None]
    if values and max(values) / max(min(values), 1e-12) > 5:
        _log_y(ax)  # seeds are often 10-400x slower than the best variant
    _generation_axis(ax, gens)
    ax.set_ylabel("kernel time, median (ms)" + (", log scale" if ax.get_yscale() == "log" else ""))
    ax.set_title(title, pad=34)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], labels[::-1], loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8,
              frameon=False, handlelength=2.5, columnspacing=1.2)
    return data_uri(fig)


def run_outcomes(per_generation, title):
    """(b) what became of each generation's evaluations, as a stacked bar."""
    rows = [r for r in per_generation if r["counts"]]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=RUN_FIGSIZE)
    gens = [r["generation"] for r in rows]
    bottom = [0] * len(rows)
    for name, colour in CATEGORIES:
        counts = [r["counts"].get(name, 0) for r in rows]
        if any(counts):
            ax.bar(gens, counts, bottom=bottom, color=colour, label=name, width=0.8)
            bottom = [b + c for b, c in zip(bottom, counts)]
    _generation_axis(ax, gens)
    ax.set_ylabel("evaluations in the generation")
    ax.set_title(title, pad=34)
    ax.grid(axis="x", visible=False)
    handles, labels = ax.get_legend_handles_labels()
    ncol = len(handles) if len(handles) <= 5 else (len(handles) + 1) // 2
    order = _row_major(len(handles), ncol)
    ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="lower center",
              bbox_to_anchor=(0.5, 1.0), ncol=ncol, fontsize=8, frameon=False, columnspacing=1.0, handlelength=1.5)
    return data_uri(fig)


def _kernel_colour(k):
    if k["outcome"].startswith("failed"):
        return COLOURS["failed"]
    if k.get("review"):
        return COLOURS["review"]
    return COLOURS["improved"] if k["outcome"] == "improved" else COLOURS["no improvement"]


def _rows_figure(n):
    """A figure with one row per kernel, tall enough that names never overlap."""
    return plt.subplots(figsize=(11, 0.34 * n + 1.9))


def speedups(kernels, geomean):
    """(c) speed-up over the tuned seed per kernel, log x, with its 95% lower bound."""
    rows = [k for k in kernels if isinstance(k["result"].get("speedup"), (int, float)) and k["result"]["speedup"] > 0]
    if not rows:
        return None
    rows.sort(key=lambda k: k["result"]["speedup"])
    fig, ax = _rows_figure(len(rows))
    lows = []
    for y, k in enumerate(rows):
        s = k["result"]["speedup"]
        low = k["result"].get("speedup_ci_low")
        low = low if isinstance(low, (int, float)) and low > 0 else None
        colour = _kernel_colour(k)
        if low is not None:
            lows.append(low)
            ax.plot([low, s], [y, y], color=colour, linewidth=6, alpha=0.35, solid_capstyle="butt")
        ax.plot([s], [y], "o", color=colour, markersize=6)
        text = f"{s:.3g}x" + (f"  [ci low {low:.3g}x]" if low is not None else "  [no ci low]")
        ax.annotate(text, (s, y), xytext=(9, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}x"))
    ax.axvline(1.0, color="black", linewidth=1.2)
    if geomean:
        ax.axvline(geomean, color="#31a354", linestyle="--", linewidth=1.2)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([k["kernel"] + ("  [review]" if k.get("review") else "") for k in rows])
    for label, k in zip(ax.get_yticklabels(), rows):
        label.set_color(_kernel_colour(k) if k.get("review") or k["outcome"].startswith("failed") else "#222")
    ax.set_ylim(-0.7, len(rows) - 0.3)
    lo = min(lows + [k["result"]["speedup"] for k in rows])
    hi = max(k["result"]["speedup"] for k in rows)
    ax.set_xlim(min(lo, 1.0) / 1.4, hi * 8)  # room for the value labels
    ax.set_xlabel("speed-up over the tuned seed (seed time / evolved time), log scale")
    ax.set_title("Speed-up per kernel; [ci low] = its 95% lower bound (shaded bar from the dot down to it, "
                 "too short to see when the measurement is tight)")
    ax.grid(axis="y", visible=False)
    from matplotlib.lines import Line2D
    legend = [Line2D([], [], marker="o", linestyle="", color=COLOURS["improved"], label="improved"),
              Line2D([], [], marker="o", linestyle="", color=COLOURS["review"], label="improved, over 10x: review"),
              Line2D([], [], marker="o", linestyle="", color=COLOURS["no improvement"],
                     label="no improvement (ci low not above 1x)"),
              Line2D([], [], color="black", linewidth=1.2, label="1x: as fast as the seed")]
    if geomean:
        legend.append(Line2D([], [], color="#31a354", linestyle="--", label=f"geometric mean {geomean:.3g}x"))
    ax.legend(handles=legend, loc="lower right", fontsize=8, framealpha=0.95)
    return data_uri(fig)


def floor_fractions(kernels):
    """(d) fraction of the memory-bandwidth floor reached, seed -> evolved, per kernel."""
    rows = [k for k in kernels if isinstance(k["result"].get("evolved_floor_fraction"), (int, float))
            and isinstance(k["result"].get("seed_floor_fraction"), (int, float))]
    if not rows:
        return None
    rows.sort(key=lambda k: k["result"]["evolved_floor_fraction"])
    fig, ax = _rows_figure(len(rows))
    for y, k in enumerate(rows):
        seed = max(k["result"]["seed_floor_fraction"], 1e-5) * 100
        evolved = max(k["result"]["evolved_floor_fraction"], 1e-5) * 100
        if abs(evolved / seed - 1) > 0.08:  # an arrow over a tiny change is just noise on the markers
            ax.annotate("", xy=(evolved, y), xytext=(seed, y),
                        arrowprops={"arrowstyle": "-|>", "color": "#9ecae1", "linewidth": 1.5,
                                    "shrinkA": 4, "shrinkB": 4})
        ax.plot([seed], [y], "o", markerfacecolor="white", markeredgecolor="#636363", markersize=7)
        ax.plot([evolved], [y], "o", color="#08519c", markersize=6)
        # The values in a column right of the axes, where they cannot cover a marker.
        ax.annotate(f"{seed:.2g}% \u2192 {evolved:.2g}%", (1.01, y), xycoords=("axes fraction", "data"),
                    va="center", fontsize=8)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}%"))
    ax.axvline(100, color="black", linewidth=1.2)
    low = min(min(k["result"]["seed_floor_fraction"], k["result"]["evolved_floor_fraction"]) for k in rows)
    ax.set_xlim(max(low, 1e-5) * 100 / 2, 150)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([k["kernel"] for k in rows])
    ax.set_xlabel("fraction of the memory floor reached = (bytes it must move / measured bandwidth) / measured time;"
                  " log scale")
    ax.set_title("Memory floor reached: seed (hollow) \u2192 evolved (filled); 100% = as fast as its memory "
                 "traffic allows")
    from matplotlib.lines import Line2D
    ax.legend(handles=[Line2D([], [], marker="o", linestyle="", markerfacecolor="white", markeredgecolor="#636363",
                              label="seed (tuned)"),
                       Line2D([], [], marker="o", linestyle="", color="#08519c", label="evolved")],
              loc="lower right", fontsize=8, framealpha=0.95)
    ax.grid(axis="y", visible=False)
    return data_uri(fig)


def study_boxes(kernel, cells):
    """One kernel of an ablation study: the final speed-ups of each cell's
    runs (a box per cell, every run a dot), on a log axis when they span
    more than 10x."""
    names = [n for n, c in cells.items() if c["speedups"]]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(names) + 1.2))
    data = [cells[n]["speedups"] for n in names]
    ax.boxplot(data, vert=False, labels=names, widths=0.6, showfliers=False)
    for i, values in enumerate(data, start=1):
        ax.plot(values, [i] * len(values), "o", color="#1f77b4", alpha=0.6, markersize=4)
    ax.axvline(1.0, color="#969696", linewidth=1, linestyle="--")
    lo = min(min(v) for v in data)
    hi = max(max(v) for v in data)
    if hi / max(lo, 1e-9) > 10:
        ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel("final speed-up over the seed at its default launch (interleaved, per run)")
    ax.set_title(kernel)
    return data_uri(fig)
