#!/usr/bin/python3
"""Tests of the record scripts: scripts/carry_over_both.py (the two
directions of a carry-over side by side) and scripts/evolve_all_records.py
(pack: which run folders travel to the GPU machine; keep: what comes back
goes to runs/ and evolved/)."""
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "scripts")
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, SCRIPTS)

import carry_over_both  # noqa: E402


def write_json(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(value, f)


def carry_over_record(here, other, ratios):
    return {"measured_on": here, "kernels_from": other,
            "kernels": [{"kernel": k, "other_time_over_own": r} for k, r in ratios.items()]}


class CarryOverBoth(unittest.TestCase):
    def test_each_reading(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "gpu-a"), os.path.join(tmp, "gpu-b")
            write_json(os.path.join(a, "carry-over-from-gpu-b.json"), carry_over_record("gpu-a", "gpu-b", {
                "f/specific": 1.10, "f/a_wins": 1.20, "f/b_wins": 0.80, "f/same": 1.01, "f/one_side": 1.0}))
            write_json(os.path.join(b, "carry-over-from-gpu-a.json"), carry_over_record("gpu-b", "gpu-a", {
                "f/specific": 1.05, "f/a_wins": 0.85, "f/b_wins": 1.30, "f/same": 0.995}))
            text = carry_over_both.table(a, b)
            rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| f/")}
            self.assertIn("GPU-specific", rows["f/specific"])
            self.assertIn("gpu-a's kernel is faster on both", rows["f/a_wins"])
            self.assertIn("gpu-b's kernel is faster on both", rows["f/b_wins"])
            self.assertIn("carries over", rows["f/same"])
            self.assertIn("measured on one GPU only", rows["f/one_side"])
            self.assertIn("| 1.200 | 0.850 |", rows["f/a_wins"])
            self.assertIn("(5 kernels)", text)
            self.assertIn("(4 kernels)", text)

    def test_a_missing_record_is_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(SystemExit) as e:
                carry_over_both.table(os.path.join(tmp, "x"), os.path.join(tmp, "y"))
            self.assertIn("carry-over-from-y.json", str(e.exception))


class EvolveAllRecordsPack(unittest.TestCase):
    """pack sends only what a device call resumes (complete kernels stay
    behind unless named); keep puts run records in runs/ and only the
    published kernel folders into evolved/."""

    def test_complete_kernels_stay_behind_unless_named(self):
        with tempfile.TemporaryDirectory() as tmp:
            records = os.path.join(tmp, "runs", "evolve-all-gpu")
            plan = {"kernels": [{"kernel": f"f/{n}", "run_dir": f"f-{n}", "status": s}
                                for n, s in (("done", "complete"), ("again", "complete"), ("half", "running"),
                                             ("bad", "rejected"), ("todo", "pending"))]}
            write_json(os.path.join(records, "evolve_all.json"), plan)
            for n in ("done", "again", "half", "bad"):
                write_json(os.path.join(records, f"f-{n}", "config.json"), {})
                with open(os.path.join(records, f"f-{n}", "evaluations.jsonl"), "w") as f:
                    f.write('{"n": 1}\n')
            out = os.path.join(tmp, "runs.tgz")
            subprocess.run([sys.executable, os.path.join(SCRIPTS, "evolve_all_records.py"), "pack", "gpu", out,
                            "f-again"], cwd=tmp, check=True, capture_output=True)
            with tarfile.open(out) as t:
                names = set(t.getnames())
            root = "runs/evolve-all-gpu/"
            self.assertIn(root + "evolve_all.json", names)
            for n in ("again", "half", "bad"):
                self.assertIn(root + f"f-{n}/evaluations.jsonl", names)
            self.assertFalse(any(name.startswith(root + "f-done") for name in names), names)

    def test_keep_puts_records_in_runs_and_results_in_evolved(self):
        with tempfile.TemporaryDirectory() as tmp:
            sent = os.path.join(tmp, "sent")
            write_json(os.path.join(sent, "runs", "evolve-all-gpu", "evolve_all.json"), {"kernels": []})
            write_json(os.path.join(sent, "runs", "evolve-all-gpu", "f-k", "checkpoint.json"), {})
            write_json(os.path.join(sent, "runs", "logs", "evolve-all.log.json"), {})
            write_json(os.path.join(sent, "evolved", "gpu", "f-k", "result.json"), {"speedup": 2.0})
            write_json(os.path.join(sent, "evolved", "gpu", "f-k", "run_summary.json"), {})
            write_json(os.path.join(sent, "evolved", "gpu", "failures.json"), [])
            tar = os.path.join(tmp, "runs.tar.gz")
            with tarfile.open(tar, "w:gz") as t:
                for name in ("runs", "evolved"):
                    t.add(os.path.join(sent, name), arcname=name)
            here = os.path.join(tmp, "checkout")
            os.makedirs(here)
            subprocess.run([sys.executable, os.path.join(SCRIPTS, "evolve_all_records.py"), "keep", tar, "gpu",
                            "call-1"], cwd=here, check=True, capture_output=True)
            self.assertTrue(os.path.isfile(os.path.join(here, "runs", "evolve-all-gpu", "f-k", "checkpoint.json")))
            self.assertTrue(os.path.isfile(os.path.join(here, "runs", "logs", "call-1", "evolve-all.log.json")))
            self.assertEqual(sorted(os.listdir(os.path.join(here, "evolved", "gpu"))), ["f-k", "failures.json"])
            self.assertEqual(sorted(os.listdir(os.path.join(here, "evolved", "gpu", "f-k"))),
                             ["result.json", "run_summary.json"])


if __name__ == "__main__":
    unittest.main()
