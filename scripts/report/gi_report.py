#!/usr/bin/env python3
"""gi report: one self-contained HTML page (plots embedded as data: URIs) of
an evolution run, of a library of evolved kernels, or of an ablation study.

    /usr/bin/python3 scripts/report/gi_report.py RUN_DIR|evolved/<gpu>|STUDY_DIR [--out FILE] [--dpi N]

RUN_DIR holds config.json and generations.jsonl (a run of `gi evolve`);
evolved/<gpu>/ holds <family>-<kernel>/result.json folders and runs/<run_id>/;
STUDY_DIR holds study.json and study_results.json (gi ablate): its statistics
(scripts/report/study_stats.py, scipy) go to STUDY_DIR/study_summary.json.
Exit 0 on success, 1 on bad input (the message names file and line), 2 on
usage errors, 3 when matplotlib is missing.
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from jsonio import ReportError  # noqa: E402

MATPLOTLIB_MISSING = 3


def main(argv=None):
    parser = argparse.ArgumentParser(prog="gi report", description=__doc__.splitlines()[0])
    parser.add_argument("path", help="a run directory or an evolved/<gpu>/ library")
    parser.add_argument("--out", help="the HTML file to write (default: PATH/report.html)")
    parser.add_argument("--dpi", type=int, help="resolution of the plots (default: plots.DPI, 100)")
    args = parser.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("gi report needs matplotlib: apt-get install python3-matplotlib "
              f"(and run this script with the Python it installs into, /usr/bin/python3; this is {sys.executable})",
              file=sys.stderr)
        return MATPLOTLIB_MISSING
    import plots
    from html_page import page
    from library_data import is_library_dir, load_library
    from library_page import library_html
    from run_data import is_run_dir, load_run
    from run_page import run_section

    if args.dpi:
        plots.DPI = args.dpi
    path = args.path
    out = args.out or os.path.join(path, "report.html")
    try:
        if not os.path.isdir(path):
            raise ReportError(f"{path}: no such directory")
        if os.path.isfile(os.path.join(path, "study.json")):
            try:
                import scipy.stats  # noqa: F401
            except ImportError:
                print("gi report needs scipy for a study: apt-get install python3-scipy", file=sys.stderr)
                return MATPLOTLIB_MISSING
            import study_stats
            from study_page import study_html
            summary = study_stats.summarise(study_stats.load_results(path))
            study_stats.write_summary(summary, os.path.join(path, "study_summary.json"))
            html = page(f"gi ablation study: {os.path.basename(os.path.normpath(path))}", study_html(summary))
        elif is_run_dir(path):
            run = load_run(path)
            title = f"gi evolution run {run['name']}" + (f": {run['kernel']}" if run.get("kernel") else "")
            html = page(title, run_section(run, level=2, title="Summary", legend=True))
        elif is_library_dir(path):
            library = load_library(path)
            html = page(f"gi evolved kernels: {os.path.basename(os.path.normpath(path))}", library_html(library))
        else:
            raise ReportError(f"{path}: neither a run directory (config.json and generations.jsonl) nor a library "
                              "of evolved kernels (<family>-<kernel>/result.json folders)")
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
