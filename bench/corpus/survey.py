#!/usr/bin/env python3
"""Survey: how much of the real-world CUDA corpus does `gi grammar` parse?

Reads tests/data/corpus/MANIFEST.json, checks the sha256 of each kernel file under
.corpus/ (the files themselves are not in the repository; see
tests/data/corpus/README.md for how to rebuild .corpus/), runs
`GI grammar FILE` on each with a time limit, and writes a markdown report and
a JSON file with the result of every file and a summary: files parsed out of
the total, per project, and the failures grouped by the construct named in
gi's error message.

Usage:
    python3 bench/corpus/survey.py [--out bench/corpus/results_<date>.md]

GI (environment) names the gi binary; default build/gi/gi relative to the
repository root. Python 3 standard library only.
"""

import argparse
import collections
import datetime
import json
import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_common import ROOT, git_head, md_escape, sha256_file, wait_for_binary  # noqa: E402


def run_gi(gi, path, timeout_s, wait_s):
    """Returns (result, message, seconds). result: parses | error | timeout."""
    for attempt in range(5):
        wait_for_binary(gi, wait_s, "survey")
        start = time.monotonic()
        try:
            proc = subprocess.run([gi, "grammar", path], cwd=ROOT, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return "timeout", f"no answer within {timeout_s} s", time.monotonic() - start
        except OSError:  # replaced under us (ENOENT, ETXTBSY): wait and retry
            time.sleep(2)
            continue
        seconds = time.monotonic() - start
        if proc.returncode == 0:
            return "parses", "", seconds
        stderr = proc.stderr.decode("utf-8", "replace")
        lines = [l.strip() for l in stderr.splitlines() if l.strip()]
        errors = [l for l in lines if "error" in l]
        message = (errors or lines or [f"exit status {proc.returncode}, no message"])[0]
        if proc.returncode < 0:
            message = f"killed by signal {-proc.returncode}: {message}"
        return "error", message, seconds
    sys.exit(f"survey: could not run {gi}")


LOCATION = re.compile(r"^(?:gi:\s*)?(?:error:\s*)?(?:[^\s:]+:\d+(?::\d+)?:\s*)?")


def construct(message):
    """The construct an error names: the message without 'gi: error: FILE:L:C:'
    and with numbers replaced by N."""
    text = LOCATION.sub("", message)
    text = re.sub(r"\d+", "N", text)
    return text


def main():
    today = datetime.date.today().isoformat()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", default="tests/data/corpus/MANIFEST.json")
    ap.add_argument("--corpus", default=".corpus", help="folder the manifest's 'local' paths are in")
    ap.add_argument("--out", default=f"bench/corpus/results_{today}.md",
                    help="markdown report; the JSON goes next to it with .json")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per file")
    ap.add_argument("--wait", type=float, default=600.0,
                    help="seconds to wait for a missing gi binary (it may be being rebuilt)")
    args = ap.parse_args()

    def at_root(p):
        return p if os.path.isabs(p) else os.path.join(ROOT, p)

    gi = os.environ.get("GI", "build/gi/gi")
    gi = at_root(gi)
    with open(at_root(args.manifest)) as f:
        manifest = json.load(f)
    # Only the kernel files; "support" entries (headers and included files) are not surveyed.
    manifest = [e for e in manifest if e.get("role", "kernel") == "kernel"]

    wait_for_binary(gi, args.wait, "survey")
    gi_sha_before = sha256_file(gi)
    rows = []
    for entry in manifest:
        path = os.path.join(at_root(args.corpus), entry["local"])
        row = {k: entry[k] for k in ("project", "repository", "commit", "path", "local", "kernels")}
        if not os.path.isfile(path):
            row.update(result="missing", message="file not in .corpus/ (rebuild it: tests/data/corpus/README.md)",
                       seconds=0.0)
        elif sha256_file(path) != entry["sha256"]:
            row.update(result="sha256-mismatch", message="file differs from the manifest's sha256", seconds=0.0)
        else:
            result, message, seconds = run_gi(gi, path, args.timeout, args.wait)
            row.update(result=result, message=message, seconds=round(seconds, 3))
        if row["result"] in ("error", "timeout"):
            row["construct"] = construct(row["message"]) if row["result"] == "error" else "timeout"
        rows.append(row)
        print(f"{row['result']:>15}  {entry['local']}" + (f"  {row['message']}" if row["message"] else ""),
              flush=True)
    gi_sha_after = sha256_file(gi)

    # Summary.
    ran = [r for r in rows if r["result"] in ("parses", "error", "timeout")]
    parsed = [r for r in rows if r["result"] == "parses"]
    per_project = collections.OrderedDict()
    for r in rows:
        key = f"{r['project']}@{r['commit'][:8]}"
        p = per_project.setdefault(key, {"repository": r["repository"], "commit": r["commit"],
                                         "files": 0, "parsed": 0, "kernels": 0, "kernels_in_parsed": 0})
        p["files"] += 1
        p["kernels"] += r["kernels"]
        if r["result"] == "parses":
            p["parsed"] += 1
            p["kernels_in_parsed"] += r["kernels"]
    groups = collections.OrderedDict()
    for r in sorted((r for r in rows if "construct" in r), key=lambda r: r["construct"]):
        groups.setdefault(r["construct"], []).append({"local": r["local"], "message": r["message"]})
    groups = collections.OrderedDict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    summary = {
        "date": today,
        "gi": os.path.relpath(gi, ROOT) if gi.startswith(ROOT) else gi,
        "gi_sha256": gi_sha_before,
        "gi_changed_during_run": gi_sha_before != gi_sha_after,
        "repository_head": git_head(),
        "timeout_s": args.timeout,
        "files": len(rows),
        "files_run": len(ran),
        "parsed": len(parsed),
        "missing": sum(r["result"] == "missing" for r in rows),
        "sha256_mismatch": sum(r["result"] == "sha256-mismatch" for r in rows),
        "kernels": sum(r["kernels"] for r in rows),
        "kernels_in_parsed_files": sum(r["kernels"] for r in parsed),
        "per_project": per_project,
        "failures_by_construct": groups,
    }

    out_md = at_root(args.out)
    out_json = os.path.splitext(out_md)[0] + ".json"
    os.makedirs(os.path.dirname(out_md), exist_ok=True)
    with open(out_json, "w") as f:
        json.dump({"summary": summary, "files": rows}, f, indent=1)
        f.write("\n")

    pct = 100.0 * len(parsed) / len(rows) if rows else 0.0
    md = [f"# gi grammar on the real-world CUDA corpus, {today}", "",
          f"`{summary['gi']} grammar FILE` on each file of `{args.manifest}` "
          f"(files under `{args.corpus}/`, timeout {args.timeout:g} s a file).", "",
          f"- gi binary sha256: `{gi_sha_before}`" + (" (CHANGED during the run)" if summary["gi_changed_during_run"] else ""),
          f"- repository HEAD: `{summary['repository_head']}`",
          f"- **{len(parsed)} of {len(rows)} files parse ({pct:.0f} %)**; "
          f"kernels (`__global__` occurrences) in parsed files: {summary['kernels_in_parsed_files']} of {summary['kernels']}",
          ]
    if summary["missing"] or summary["sha256_mismatch"]:
        md.append(f"- not run: {summary['missing']} missing, {summary['sha256_mismatch']} with a different sha256")
    md += ["", "## Per project", "", "| project | repository | commit | files | parse | `__global__` | in parsed files |",
           "|---|---|---|---:|---:|---:|---:|"]
    for key, p in per_project.items():
        md.append(f"| {key.split('@')[0]} | {p['repository']} | `{p['commit'][:8]}` | {p['files']} | "
                  f"{p['parsed']} | {p['kernels']} | {p['kernels_in_parsed']} |")
    md += ["", "## Failures grouped by construct", ""]
    if groups:
        md += ["| files | construct (message without location, numbers as N) | files |", "|---:|---|---|"]
        for c, items in groups.items():
            md.append(f"| {len(items)} | {md_escape(c)} | " + "<br>".join(f"`{i['local']}`" for i in items) + " |")
    else:
        md.append("None.")
    md += ["", "## Every file", "", "| file (under .corpus/) | `__global__` | result | seconds | message |",
           "|---|---:|---|---:|---|"]
    for r in rows:
        md.append(f"| `{r['local']}` | {r['kernels']} | {r['result']} | {r['seconds']:.2f} | {md_escape(r['message'])} |")
    with open(out_md, "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"{len(parsed)}/{len(rows)} parse; wrote {os.path.relpath(out_md, ROOT)} and {os.path.relpath(out_json, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
