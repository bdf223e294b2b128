#!/usr/bin/python3
"""Tests of scripts/report/study_stats.py (gi ablate's statistics) and the
study page of gi report, on small study folders written here: the per-cell
numbers, Mann-Whitney U with Vargha-Delaney A12 against the baseline and the
named contrasts, Holm's correction, and bad input named. Run by
/usr/bin/python3 (Debian's python3-scipy, python3-matplotlib); exits 77,
which ctest counts as skipped, when either is missing."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT_DIR = os.path.join(HERE, "..", "scripts", "report")
sys.dont_write_bytecode = True
sys.path.insert(0, REPORT_DIR)

CELLS = ["everything", "line_and_cuda_edits", "switches_only", "launch_tuning_only"]


def study(speedups, kernel="tools-sum_reduction"):
    """study_results.json of one kernel: speedups = {cell: [per-run speed-up]}."""
    runs = []
    for cell, values in speedups.items():
        for i, s in enumerate(values):
            runs.append({"kernel": kernel, "cell": cell, "seed": i + 1, "status": "complete", "speedup": s,
                         "evaluations_to_first_improvement": None if cell == "launch_tuning_only" else 17 * (i + 1),
                         "seconds_to_first_improvement": None if cell == "launch_tuning_only" else 0.5 * (i + 1),
                         "variants": 0 if cell == "launch_tuning_only" else 10,
                         "valid_fraction": None if cell == "launch_tuning_only" else 0.5})
    plan = {"kernels": [kernel], "repeats": 5, "population": 8, "generations": 2, "baseline": "everything",
            "sanitizers": True, "cells": [{"name": c, "varies": c} for c in CELLS]}
    return {"format": "gi-study-results-1", "plan": plan, "runs": runs}


class StudyStats(unittest.TestCase):
    def setUp(self):
        import study_stats
        self.stats = study_stats

    def test_cells_and_tests_against_the_baseline(self):
        s = self.stats.summarise(study({
            "everything": [2.0, 2.1, 2.2, 2.3, 2.4],
            "line_and_cuda_edits": [1.0, 1.1, 1.2, 1.3, 1.4],     # every run below every run of everything
            "switches_only": [2.05, 2.15, 2.25, 2.35, 2.45],      # interleaved with everything
            "launch_tuning_only": [1.0, 1.0, 1.0, 1.0, 1.0]}))
        k = s["kernels"]["tools-sum_reduction"]
        e = k["cells"]["everything"]
        self.assertAlmostEqual(e["median_speedup"], 2.2)
        self.assertAlmostEqual(e["q1"], 2.1)
        self.assertAlmostEqual(e["q3"], 2.3)
        self.assertEqual(e["median_evaluations_to_first_improvement"], 51)
        self.assertAlmostEqual(e["valid_fraction"], 0.5)
        self.assertIsNone(k["cells"]["launch_tuning_only"]["median_evaluations_to_first_improvement"])
        by = {(c["cell"], c["against"]): c for c in k["comparisons"]}
        line = by[("line_and_cuda_edits", "everything")]
        self.assertEqual(line["a12"], 0.0)            # never faster than a run of everything
        self.assertAlmostEqual(line["p"], 2 / 252)    # the exact two-sided p of a perfect separation, 5 vs 5
        self.assertEqual(line["magnitude"], "large")
        switches = by[("switches_only", "everything")]
        self.assertAlmostEqual(switches["a12"], 0.6)  # 15 of 25 pairs faster
        self.assertGreater(switches["p"], 0.3)
        # The named contrasts are there too, and Holm's correction covers every comparison.
        self.assertIn(("line_and_cuda_edits", "switches_only"), by)
        self.assertIn(("line_and_cuda_edits", "launch_tuning_only"), by)
        ps = sorted(c["p"] for c in k["comparisons"])
        adjusted = sorted(c["p_holm"] for c in k["comparisons"])
        self.assertAlmostEqual(adjusted[0], min(1.0, ps[0] * len(ps)))
        for c in k["comparisons"]:
            self.assertGreaterEqual(c["p_holm"], c["p"])
            self.assertEqual(c["significant"], c["p_holm"] < 0.05)

    def test_holm(self):
        self.assertEqual(self.stats.holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
        self.assertEqual(self.stats.holm([0.5, 0.9]), [1.0, 1.0])

    def test_identical_runs_give_no_evidence(self):
        s = self.stats.summarise(study({c: [1.0] * 4 for c in CELLS}))
        for c in s["kernels"]["tools-sum_reduction"]["comparisons"]:
            self.assertEqual(c["p"], 1.0)
            self.assertEqual(c["a12"], 0.5)

    def test_the_report_page_and_bad_input(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "study.json"), "w") as f:
                json.dump({"format": "gi-study-1"}, f)
            with open(os.path.join(d, "study_results.json"), "w") as f:
                json.dump(study({c: [1.0 + 0.1 * i for i in range(5)] for c in CELLS}), f)
            out = subprocess.run([sys.executable, os.path.join(REPORT_DIR, "gi_report.py"), d],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            with open(os.path.join(d, "report.html"), encoding="utf-8") as f:
                html = f.read()
            self.assertIn("tools-sum_reduction", html)
            self.assertIn("data:image/png;base64,", html)
            self.assertIn("Holm", html)
            self.assertTrue(os.path.isfile(os.path.join(d, "study_summary.json")))
            with open(os.path.join(d, "study_results.json"), "w") as f:
                f.write("{\"format\": ")
            out = subprocess.run([sys.executable, os.path.join(REPORT_DIR, "study_stats.py"), d],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 1)
            self.assertIn("study_results.json:1: malformed JSON", out.stderr)


if __name__ == "__main__":
    try:
        import matplotlib  # noqa: F401
        import scipy.stats  # noqa: F401
    except ImportError:
        print("skipped: needs python3-scipy and python3-matplotlib", file=sys.stderr)
        sys.exit(77)
    unittest.main()
