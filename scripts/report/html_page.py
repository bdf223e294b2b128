"""Small HTML builders for the report: one self-contained page with inline CSS."""
import datetime
import html
import re

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 24px auto;
       max-width: 1360px; color: #222; line-height: 1.4; padding: 0 16px; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 3px;
     margin-top: 2em; } h3 { margin-top: 1.6em; }
.meta, .note { color: #555; font-size: 0.92em; } .missing { color: #a94400; font-size: 0.92em; }
table { border-collapse: collapse; margin: 0.6em 0 1em; font-size: 0.86em; }
table.wide { width: 100%; } td code { font-size: 0.95em; }
td code { overflow-wrap: anywhere; }  /* a long patch wraps instead of widening the table */
th, td { border: 1px solid #ddd; padding: 3px 7px; vertical-align: top; }
th { background: #f2f2f2; text-align: left; } td.num { text-align: right; font-variant-numeric: tabular-nums;
     white-space: nowrap; }
tr.review td { background: #fff3e0; } tr.failed td { background: #fdecea; } tr.same td { color: #666; }
tfoot td { font-weight: bold; background: #f7f7f7; }
code, .patch { font-family: "SFMono-Regular", Consolas, monospace; font-size: 0.92em; }
.patch { white-space: pre-wrap; word-break: break-all; background: #f6f8fa; padding: 6px; display: block; }
.badge { display: inline-block; padding: 0 5px; border-radius: 3px; font-size: 0.82em; font-weight: bold; }
.badge.review { background: #e6550d; color: white; } .badge.failed { background: #d62728; color: white; }
.badge.none { background: #bbb; color: #222; } .badge.improved { background: #1f77b4; color: white; }
.plots { display: flex; flex-wrap: wrap; gap: 8px; } .plots img { max-width: 49.5%; }
img { max-width: 100%; height: auto; }
dl.terms dt { font-weight: bold; float: left; clear: left; width: 11em; } dl.terms dd { margin-left: 11.5em; }
"""


def esc(value):
    return html.escape("" if value is None else str(value))


def breakable(text, after="/-"):
    """Escaped text that may wrap after the given characters (kernel names and run ids are long single words)."""
    return re.sub(f"([{re.escape(after)}])", r"\1<wbr>", esc(text))


def nowrap_numbers(html_text):
    """Keeps numbers like 1.4e-05 on one line (browsers break them at the '-')."""
    return re.sub(r"(\d[\d.]*e[-+]\d+)", r'<span style="white-space:nowrap">\1</span>', html_text)


def table(headers, rows, row_classes=None, footer=None, numeric=(), widths=None, cls=None):
    """headers: column titles (HTML); rows: lists of cell HTML; numeric: right-aligned, unwrapped column
    indices; widths: {column index: CSS min-width} for columns whose text would wrap into a tall row."""
    widths = widths or {}
    heads = "".join(f'<th style="min-width:{widths[i]}">{h}</th>' if i in widths else f"<th>{h}</th>"
                    for i, h in enumerate(headers))
    table_class = f' class="{cls}"' if cls else ""
    out = [f"<table{table_class}><thead><tr>{heads}</tr></thead><tbody>"]
    for i, row in enumerate(rows):
        cls = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        cells = "".join(f'<td class="num">{c}</td>' if j in numeric else f"<td>{c}</td>" for j, c in enumerate(row))
        out.append(f"<tr{cls}>{cells}</tr>")
    out.append("</tbody>")
    if footer:
        out.append("<tfoot><tr>" + "".join(f"<td>{c}</td>" for c in footer) + "</tr></tfoot>")
    out.append("</table>")
    return "\n".join(out)


def key_values(pairs):
    """A two-column table of (name, value HTML)."""
    return table(["", ""], [[f"<b>{esc(k)}</b>", v] for k, v in pairs]).replace(
        "<thead><tr><th></th><th></th></tr></thead>", "")


def image(uri, alt):
    return f'<img src="{uri}" alt="{esc(alt)}">' if uri else f'<p class="missing">No data for: {esc(alt)}.</p>'


def missing_line(missing):
    if not missing:
        return ""
    return '<p class="missing">Missing: ' + esc("; ".join(missing)) + ".</p>"


def page(title, body):
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body>\n<h1>{esc(title)}</h1>\n"
            f'<p class="meta">Written by <code>gi report</code> on {stamp}.</p>\n{body}\n</body></html>\n')
