#!/usr/bin/env python3
"""gi report: one self-contained HTML page (plots embedded as data: URIs) of
a folder gi wrote: an evolution run, a library of evolved kernels, an
ablation study.

    /usr/bin/python3 scripts/report/gi_report.py PATH [--out FILE] [--dpi N]

Each kind of page is one module in scripts/report/pages/ (registered by being
there, as gi's edit families and seeds are): ORDER, WANTS (what folder it
draws, for messages), NEEDS ({module: how to install it}), recognises(path)
and draw(path) -> (title, body HTML). The first page, by ORDER, that
recognises PATH draws it. `gi report` runs this script (and makes a run's
run_summary.json first). Exit 0 on success, 1 on bad input (the message names
file and line), 2 on usage errors, 3 when a module the page needs is missing.
"""
import argparse
import importlib.util
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from jsonio import ReportError  # noqa: E402

MODULE_MISSING = 3
PAGES_DIR = os.path.join(HERE, "pages")


def load_pages(pages_dir=PAGES_DIR):
    """Every page module in pages_dir, in ORDER (then name)."""
    pages = []
    for name in sorted(os.listdir(pages_dir)):
        if not name.endswith(".py") or name.startswith("_"):
            continue
        path = os.path.join(pages_dir, name)
        spec = importlib.util.spec_from_file_location(f"gi_report_page_{name[:-3]}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        lacking = [a for a in ("ORDER", "WANTS", "recognises", "draw") if not hasattr(module, a)]
        if lacking:
            raise ReportError(f"{path}: a report page needs {', '.join(lacking)}")
        module.NAME = name[:-3]
        pages.append(module)
    pages.sort(key=lambda p: (p.ORDER, p.NAME))
    return pages


def missing_modules(page):
    """'module (how to install it)' for every module the page needs that is not installed."""
    return [f"{m}: {how}" for m, how in sorted(getattr(page, "NEEDS", {}).items())
            if importlib.util.find_spec(m) is None]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="gi report", description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a folder gi wrote: a run directory, evolved/<gpu>/ or a study")
    parser.add_argument("--out", help="the HTML file to write (default: PATH/report.html)")
    parser.add_argument("--dpi", type=int, help="resolution of the plots (default: plots.DPI, 100)")
    args = parser.parse_args(argv)
    path = args.path
    out = args.out or os.path.join(path, "report.html")
    try:
        if not os.path.isdir(path):
            raise ReportError(f"{path}: no such directory")
        pages = load_pages()
        page = next((p for p in pages if p.recognises(path)), None)
        if page is None:
            raise ReportError(f"{path}: not a folder a report page draws; expected "
                              + "; or ".join(p.WANTS for p in pages))
        missing = missing_modules(page)
        if missing:
            print(f"gi report's {page.NAME} page needs " + "; ".join(missing)
                  + f" (run this script with the Python they install into, /usr/bin/python3; this is "
                  f"{sys.executable})", file=sys.stderr)
            return MODULE_MISSING
        from html_page import page as html_page
        if args.dpi:
            import plots
            plots.DPI = args.dpi
        title, body = page.draw(path)
        html = html_page(title, body)
        with open(out, "w", encoding="utf-8") as f:
            f.write(html)
    except ReportError as e:
        print(f"gi report: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"gi report: error: {e}", file=sys.stderr)
        return 1
    print(f"gi report: wrote {out} ({os.path.getsize(out) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
