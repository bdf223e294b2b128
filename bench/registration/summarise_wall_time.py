#!/usr/bin/env python3
"""Summarise bench/registration/wall_time.sh's runs: per kernel set, the wall
time from start to exit (/usr/bin/time) with an empty cache and after one run
that filled it (median and range), and gi register's own split of it
(register.json's wall_seconds, medians over the warm runs).

    python3 bench/registration/summarise_wall_time.py runs/wall-time [--json FILE]
"""
import argparse
import json
import pathlib
import statistics
import sys


def run_record(folder, name):
    wall_file = folder / f"{name}.wall"
    record_file = folder / name / "register.json"
    if not wall_file.exists() or not record_file.exists():
        return None
    lines = wall_file.read_text().split()
    try:
        wall = float(lines[-1])
    except (IndexError, ValueError):
        sys.exit(f"{wall_file}: no wall time in it")
    record = json.loads(record_file.read_text())
    return {"wall": wall, "split": record.get("wall_seconds", {}), "compile": record.get("compile", {}),
            "registration": record.get("seconds"), "levels": [l["iterations"] for l in record.get("levels", [])]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--json")
    args = parser.parse_args()
    folder = pathlib.Path(args.folder)
    summary = {"machine": (folder / "machine.txt").read_text().strip().splitlines()[:3]}
    for tag in ("evolved", "seeds"):
        empty = run_record(folder, f"{tag}-empty-cache")
        warm = []
        i = 1
        while (r := run_record(folder, f"{tag}-{i}")) is not None:
            warm.append(r)
            i += 1
        if not warm:
            continue
        phases = sorted({p for r in warm for p in r["split"]})
        walls = [r["wall"] for r in warm]
        summary[tag] = {
            "empty_cache_wall": empty["wall"] if empty else None,
            "empty_cache_split": empty["split"] if empty else None,
            "warm_runs": len(warm),
            "warm_wall_median": statistics.median(walls),
            "warm_wall_range": [min(walls), max(walls)],
            "warm_split_median": {p: statistics.median(r["split"].get(p, 0) for r in warm) for p in phases},
            "iterations_per_level": [r["levels"] for r in warm],
        }
    print(json.dumps(summary, indent=2))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
