#!/usr/bin/python3
"""Tests of `gi report` (gi's run summary, gi/publish/run_summary.cpp, drawn by
scripts/report/gi_report.py) on small run and library folders written here.

    /usr/bin/python3 tests/report_test.py GI_BINARY

Run by /usr/bin/python3 (Debian's python3-matplotlib); exits 77, which ctest
counts as skipped, when matplotlib is missing."""
import gzip
import shutil
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT_DIR = os.path.join(HERE, "..", "scripts", "report")
SCRIPT = os.path.join(REPORT_DIR, "gi_report.py")
GI = os.environ.get("GI_BINARY", "")
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, REPORT_DIR)

# One evaluation per outcome category, as (status, cached, same_binary, median_ms).
EVALUATIONS = [
    ("ok", False, False, 0.5),
    ("ok", False, False, 0.7),
    ("wrong_output", False, False, 0.4),
    ("compile_error", False, False, None),
    ("timeout", False, False, None),
    ("illegal_address", False, False, None),
    ("rejected", False, False, None),
    ("ok", False, True, 0.5),  # same binary
    ("ok", True, False, 0.7),  # cached
    ("no_such_status", False, False, None),  # other
]
GENERATIONS = 3
SEED_MS = 2.0


def write_json(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(value, f)


def write_run(run_dir, gz=False, stages=True):
    write_json(os.path.join(run_dir, "config.json"),
               {"seed_dir": "seeds/tools/sum_reduction", "search": {"algorithm": "gp", "population": 10}})
    lines = []
    for g in range(GENERATIONS):
        lines.append({"generation": g, "index": -1, "status": "ok", "median_ms": SEED_MS, "cached": False,
                      "same_binary": False})
        for i, (status, cached, same, ms) in enumerate(EVALUATIONS):
            lines.append({"generation": g, "index": i, "status": status, "cached": cached, "same_binary": same,
                          "median_ms": ms})
    text = "".join(json.dumps(l) + "\n" for l in lines)
    if gz:
        with gzip.open(os.path.join(run_dir, "evaluations.jsonl.gz"), "wt") as f:
            f.write(text)
    else:
        with open(os.path.join(run_dir, "evaluations.jsonl"), "w") as f:
            f.write(text)
    with open(os.path.join(run_dir, "generations.jsonl"), "w") as f:
        for g in range(GENERATIONS):
            f.write(json.dumps({"generation": g, "seed_ms": SEED_MS, "best_ms": 0.5, "evaluations": 10 * (g + 1),
                                "evaluations_per_second": 12.5, "elapsed_seconds": 2.4 * (g + 1)}) + "\n")
    write_json(os.path.join(run_dir, "comparison.json"),
               {"speedup": 4.0, "speedup_ci_low": 3.9, "seed": {"median_ms": 2.0}, "evolved": {"median_ms": 0.5},
                "seed_floor_fraction": 0.1, "evolved_floor_fraction": 0.4})
    write_json(os.path.join(run_dir, "validation.json"), {"passed": True, "workloads": 5, "output_values": 16000000})
    write_json(os.path.join(run_dir, "results.json"), {"folder": "evolved/x/tools-sum_reduction", "run_id": "r"})
    with open(os.path.join(run_dir, "minimised.gi"), "w") as f:
        f.write("@seed=abc\ndefine:SUM_ITEMS=8\n")
    if stages:
        write_json(os.path.join(run_dir, "stage_seconds.json"), {"tune seed": 3.0, "search": 30.0, "validate": 7.0})


def write_result(library, folder, speedup, **extra):
    result = {"kernel": folder.replace("-", "/", 1), "seed_median_ms": 1.0, "evolved_median_ms": 1.0 / speedup,
              "speedup": speedup, "speedup_ci_low": speedup * 0.99, "seed_floor_fraction": 0.05,
              "evolved_floor_fraction": 0.05 * speedup, "patch": "define:A=1", "review": speedup > 10,
              "validation": {"passed": True, "workloads": 6}, "run_id": folder + "-run"}
    result.update(extra)
    write_json(os.path.join(library, folder, "result.json"), result)


def report(path, out=None):
    """`gi report PATH [--out OUT]`: a run's summary made by gi, the page drawn by the script."""
    argv = [GI, "report", path] + (["--out", out] if out else [])
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


def script(path, out=None, script_path=SCRIPT):
    """The report script alone, as gi report runs it."""
    argv = [sys.executable, script_path, path] + (["--out", out] if out else [])
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


def summarise(run_dir):
    """run_summary.json of a run directory, as gi makes it."""
    r = report(run_dir, os.path.join(run_dir, "summary-made.html"))
    if r.returncode != 0:
        raise AssertionError(r.stderr)
    with open(os.path.join(run_dir, "run_summary.json")) as f:
        return json.load(f)


def kernel_row(html, kernel):
    """The library table's row of one kernel (line-break hints removed)."""
    return html.replace("<wbr>", "").split(f"<b>{kernel}</b>")[1].split("</tr>")[0]


def images(html):
    return re.findall(r"<img [^>]*>", html)


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def assert_self_contained(self, html):
        self.assertNotIn("http://", html)
        self.assertNotIn("https://", html)
        for src in re.findall(r'src="([^"]*)"', html):
            self.assertTrue(src.startswith("data:image/png;base64,"), src[:60])
        self.assertNotIn("<link", html)  # no external stylesheet

    def test_outcome_categories_cover_every_evaluation(self):
        import run_data
        run_dir = os.path.join(self.dir, "run")
        write_run(run_dir)
        summary = summarise(run_dir)
        self.assertEqual(summary["format"], "gi-run-summary-1")
        self.assertEqual(summary["stage_seconds"]["search"], 30.0)
        run = run_data.load_run(run_dir)
        self.assertEqual(len(run["per_generation"]), GENERATIONS)
        expected = {"ok": 2, "wrong output": 1, "compile error": 1, "timeout": 1, "crash": 1, "rejected": 1,
                    "same binary": 1, "cached": 1, "other": 1}
        for row in run["per_generation"]:
            self.assertEqual(dict(row["counts"]), expected)
            self.assertEqual(row["total"], len(EVALUATIONS))  # the seed line is not an evaluation
            self.assertEqual(row["seed_ms"], SEED_MS)
            self.assertEqual(row["best_ms"], 0.5)
            self.assertAlmostEqual(row["median_ms"], 0.6)  # the "ok" times 0.5 0.7 0.5 0.7, repeats included
        self.assertEqual(run["evaluation_count"], GENERATIONS * len(EVALUATIONS))
        self.assertEqual(run["patch"], "define:SUM_ITEMS=8")

    def test_run_report_is_self_contained_with_two_plots(self):
        run_dir = os.path.join(self.dir, "run")
        write_run(run_dir, gz=True)
        r = report(run_dir)  # default output: RUN_DIR/report.html
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(run_dir, "report.html")) as f:
            html = f.read()
        self.assert_self_contained(html)
        self.assertEqual(len(images(html)), 2)
        self.assertIn("tools/sum_reduction", html)
        self.assertIn("4.000x [3.900x]", html)
        self.assertIn("define:SUM_ITEMS=8", html)
        self.assertIn("Time per stage", html)
        self.assertIn("validate", html)

    def test_run_without_evaluations_or_results_says_what_is_missing(self):
        run_dir = os.path.join(self.dir, "run")
        write_run(run_dir, stages=False)
        for name in ("evaluations.jsonl", "comparison.json", "validation.json", "minimised.gi"):
            os.remove(os.path.join(run_dir, name))
        out = os.path.join(self.dir, "out.html")
        r = report(run_dir, out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            html = f.read()
        self.assertIn("Missing:", html)
        for name in ("evaluations.jsonl", "comparison.json", "validation.json", "minimised.gi"):
            self.assertIn(name, html)
        self.assertNotIn("Time per stage", html)
        self.assertEqual(len(images(html)), 1)  # times from generations.jsonl; no outcome counts

    def test_a_run_without_its_summary_names_the_command_that_makes_it(self):
        run_dir = os.path.join(self.dir, "run")
        write_run(run_dir)
        r = script(run_dir, os.path.join(self.dir, "out.html"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("run_summary.json", r.stderr)
        self.assertIn("gi report", r.stderr)

    def test_malformed_line_is_an_error_naming_file_and_line(self):
        run_dir = os.path.join(self.dir, "run")
        write_run(run_dir)
        path = os.path.join(run_dir, "evaluations.jsonl")
        with open(path) as f:
            lines = f.readlines()
        lines[2] = '{"generation": 0, "index": 1, "status": \n'
        with open(path, "w") as f:
            f.writelines(lines)
        r = report(run_dir, os.path.join(self.dir, "out.html"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f"{path}:3:", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "out.html")))

    def test_library_report(self):
        library = os.path.join(self.dir, "nvidia-test-gpu")
        speedups = {"tools-a": 2.0, "tools-b": 8.0, "tools-c": 12.5, "tools-same": 1.0, "tools-retuned": 1.05,
                    "tools-kept": 1.05, "tools-rejected": 1.0}
        seed_tuning = {"block_size": 128, "options": []}
        extras = {"tools-same": {"patch": ""},
                  # no patch, but the winner's retuning is faster: an improvement
                  "tools-retuned": {"patch": "", "tuning": {"seed": seed_tuning,
                                                            "evolved": {"block_size": 256, "options": []}}},
                  # the tuned seed against itself: never an improvement, whatever the noise says
                  "tools-kept": {"patch": "", "tuning": {"seed": seed_tuning, "evolved": seed_tuning},
                                 "search_best": {"patch": "ldg:<_kernel.cu_9>", "speedup": 0.98,
                                                 "speedup_ci_low": 0.97}},
                  # the search's best failed held-out validation: the tuned seed is published
                  "tools-rejected": {"patch": "", "tuning": {"seed": seed_tuning, "evolved": seed_tuning},
                                     "search_best": {"patch": "del:<_kernel.cu_4>", "reason": "validation",
                                                     "rejected": ["validate:1: got nan"]}}}
        for folder, s in speedups.items():
            write_result(library, folder, s, **extras.get(folder, {}))
        write_result(library, "tools-broken", 1.0, error="the search found no valid variant")
        # The only kernel whose run summary is here (published with it, made by gi from a run's records).
        run_dir = os.path.join(self.dir, "tools-a-run")
        write_run(run_dir)
        summarise(run_dir)
        shutil.copy(os.path.join(run_dir, "run_summary.json"), os.path.join(library, "tools-a", "run_summary.json"))
        write_json(os.path.join(library, "failures.json"),
                   [{"kernel": "tools/exploded", "stage": "validate", "error": "memcheck: 3 errors"}])
        out = os.path.join(self.dir, "lib.html")
        r = report(library, out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            html = f.read()
        self.assert_self_contained(html)
        self.assertEqual(len(images(html)), 4)  # speed-ups, floor fractions, and tools-a's two run plots
        every = list(speedups.values()) + [1.0]  # the failed kernel's result still has a speed-up
        geomean = math.exp(sum(math.log(s) for s in every) / len(every))
        self.assertIn(f"geometric-mean speed-up <b>{geomean:.3f}x</b> over {len(every)}", html)
        self.assertIn(f"{geomean:.3f}x", html.split("<tfoot>")[1])
        self.assertIn("badge review", kernel_row(html, "tools/c"))
        self.assertNotIn("badge review", kernel_row(html, "tools/a"))
        self.assertIn("no improvement", kernel_row(html, "tools/same"))
        self.assertIn("no improvement", kernel_row(html, "tools/kept"))
        self.assertIn("tuned seed kept; the search's best gave 0.980x [0.970x]", kernel_row(html, "tools/kept"))
        self.assertIn("no improvement", kernel_row(html, "tools/rejected"))
        self.assertIn("failed validation: validate:1: got nan", kernel_row(html, "tools/rejected"))
        self.assertNotIn("no improvement", kernel_row(html, "tools/retuned"))
        self.assertIn("launch tuning only: block 256", kernel_row(html, "tools/retuned"))
        self.assertIn("failed: the search found no valid variant", html)
        self.assertIn('id="failed"', html)
        self.assertIn("tools/exploded", html)
        self.assertIn("memcheck: 3 errors", html)
        self.assertIn('href="#run-tools-a"', html)
        self.assertIn('id="run-tools-a"', html)

    def test_library_with_a_malformed_result_names_it(self):
        library = os.path.join(self.dir, "lib")
        write_result(library, "tools-a", 2.0)
        os.makedirs(os.path.join(library, "tools-b"))
        path = os.path.join(library, "tools-b", "result.json")
        with open(path, "w") as f:
            f.write('{\n  "speedup": 2.0,\n  oops\n}\n')
        r = report(library, os.path.join(self.dir, "lib.html"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f"{path}:3:", r.stderr)

    def test_not_a_run_or_library(self):
        r = report(self.dir, os.path.join(self.dir, "x.html"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("not a folder a report page draws", r.stderr)
        self.assertIn("a run directory", r.stderr)
        self.assertIn("a library of evolved kernels", r.stderr)

    def test_a_new_page_is_one_file_in_pages(self):
        # A copy of the report scripts with one more page file: nothing else changes.
        scripts = os.path.join(self.dir, "report")
        shutil.copytree(REPORT_DIR, scripts, ignore=shutil.ignore_patterns("__pycache__"))
        with open(os.path.join(scripts, "pages", "stand_in.py"), "w") as f:
            f.write('import os\nORDER = 5\nWANTS = "a stand-in folder (stand_in.txt)"\nNEEDS = {}\n\n'
                    'def recognises(path):\n    return os.path.isfile(os.path.join(path, "stand_in.txt"))\n\n'
                    'def draw(path):\n    return "stand-in page", "<p>drawn by the stand-in page</p>"\n')
        folder = os.path.join(self.dir, "folder")
        os.makedirs(folder)
        with open(os.path.join(folder, "stand_in.txt"), "w") as f:
            f.write("x")
        out = os.path.join(self.dir, "stand_in.html")
        r = script(folder, out, os.path.join(scripts, "gi_report.py"))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            self.assertIn("drawn by the stand-in page", f.read())
        # The stand-in is listed among what the pages draw; the tree's own pages do not know it.
        r = script(self.dir, out, os.path.join(scripts, "gi_report.py"))
        self.assertIn("a stand-in folder (stand_in.txt)", r.stderr)
        self.assertNotEqual(script(folder, out).returncode, 0)


if __name__ == "__main__":
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("report_test: skipped: gi report needs matplotlib: apt-get install python3-matplotlib")
        sys.exit(77)
    if not GI or not os.access(GI, os.X_OK):
        print("report_test: GI_BINARY must name the gi binary (tests/CMakeLists.txt sets it)", file=sys.stderr)
        sys.exit(2)
    unittest.main()
