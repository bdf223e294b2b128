#!/usr/bin/env python3
"""Moves an evolve-all between the GPU machine and the repository's records.

    python3 scripts/evolve_all_records.py pack GPU_SLUG OUT.tgz [RUN_DIR...]
        rebuilds runs/evolve-all-GPU_SLUG/ from evolved/GPU_SLUG/runs/ (the
        plan evolve_all-*.json, newest first, and the run folder of every
        kernel it names that is not complete, evaluations un-gzipped) into
        OUT.tgz, for scripts/pack_carry.sh OUT.tgz: the next device call
        resumes the run where the records end. A complete kernel is never run
        again, and its records would only push the device call past its size
        limit. RUN_DIRs named (e.g. tools-max_vector_length) are packed
        whatever their status: to publish a finished kernel again under newer
        rules with `gi evolve --resume runs/evolve-all-GPU_SLUG/RUN_DIR`.

    python3 scripts/evolve_all_records.py keep RUNS_TAR_GZ GPU_SLUG LOG_NAME
        takes what scripts/gpu_session.sh sent back ($OUT/runs.tar.gz) into
        the records: each run folder into evolved/GPU_SLUG/runs/ (evaluations
        gzipped), the plan as evolve_all-<date>.json, the log into
        runs/LOG_NAME/, and the published kernel folders, README.md and
        failures.json into evolved/GPU_SLUG/.

The plan's date is the day of the run it began; `keep` writes it under the
name `pack` read it from (or today's date for a new run)."""
import datetime
import glob
import gzip
import json
import os
import shutil
import sys
import tarfile
import tempfile


def newest_plan(records):
    plans = sorted(glob.glob(os.path.join(records, "evolve_all-*.json")))
    if not plans:
        raise SystemExit(f"{records}: no evolve_all-*.json plan")
    return plans[-1]


def pack(slug, out, also=()):
    records = os.path.join("evolved", slug, "runs")
    plan_file = newest_plan(records)
    with open(plan_file) as f:
        plan = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        run_root = os.path.join(tmp, "runs", "evolve-all-" + slug)
        os.makedirs(run_root)
        for k in plan["kernels"]:
            src = os.path.join(records, k["run_dir"])
            if (k["status"] == "complete" and k["run_dir"] not in also) or not os.path.isdir(src):
                continue  # finished, or not started yet
            dst = os.path.join(run_root, k["run_dir"])
            shutil.copytree(src, dst)
            for gz in glob.glob(os.path.join(dst, "*.jsonl.gz")):
                with gzip.open(gz, "rb") as f, open(gz[:-3], "wb") as g:
                    shutil.copyfileobj(f, g)
                os.remove(gz)
        with open(os.path.join(run_root, "evolve_all.json"), "w") as f:
            json.dump(plan, f, indent=2)
            f.write("\n")
        with tarfile.open(out, "w:gz") as t:
            t.add(os.path.join(tmp, "runs"), arcname="runs")
    left = sum(k["status"] in ("pending", "running") for k in plan["kernels"])
    retry = sum(k["status"] in ("failed", "rejected") for k in plan["kernels"])
    print(f"{out}: {plan_file} with {len(plan['kernels']) - left} kernels done "
          f"({retry} failed or rejected, for --retry-failed), {left} to go")



def read_bytes(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def write_gzip_once(plain, kept_gz):
    """Gzips `plain` beside itself and removes it. Where the records already
    held these evaluations (`kept_gz`), their bytes stay as they were, so a
    kernel that did not run again shows no change in git; a new file is
    written with mtime 0 for the same reason."""
    with open(plain, "rb") as f:
        data = f.read()
    if kept_gz is not None and gzip.decompress(kept_gz) == data:
        out = kept_gz
    else:
        out = gzip.compress(data, mtime=0)
    with open(plain + ".gz", "wb") as g:
        g.write(out)
    os.remove(plain)

def keep(tar_path, slug, log_name):
    records = os.path.join("evolved", slug, "runs")
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(tar_path) as t:
            t.extractall(tmp, filter="data")
        run_root = os.path.join(tmp, "runs", "evolve-all-" + slug)
        if not os.path.isdir(run_root):
            raise SystemExit(f"{tar_path}: no runs/evolve-all-{slug}/")
        os.makedirs(records, exist_ok=True)
        existing = sorted(glob.glob(os.path.join(records, "evolve_all-*.json")))
        plan_name = os.path.basename(existing[-1]) if existing else \
            f"evolve_all-{datetime.date.today().isoformat()}.json"
        for name in sorted(os.listdir(run_root)):
            src = os.path.join(run_root, name)
            if name == "evolve_all.json":
                shutil.copyfile(src, os.path.join(records, plan_name))
                continue
            dst = os.path.join(records, name)
            kept_gz = read_bytes(os.path.join(dst, "evaluations.jsonl.gz"))
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(src, dst)
            plain = os.path.join(dst, "evaluations.jsonl")
            if os.path.exists(plain):
                write_gzip_once(plain, kept_gz)
        logs = os.path.join(tmp, "runs", "logs")
        if os.path.isdir(logs):
            shutil.copytree(logs, os.path.join(records, log_name), dirs_exist_ok=True)
        published = os.path.join(tmp, "evolved", slug)
        for name in sorted(os.listdir(published)) if os.path.isdir(published) else []:
            src, dst = os.path.join(published, name), os.path.join("evolved", slug, name)
            if name == "runs":
                continue
            if os.path.isdir(src):
                shutil.rmtree(dst, ignore_errors=True)
                shutil.copytree(src, dst)
            elif name in ("README.md", "failures.json"):
                shutil.copyfile(src, dst)
    print(f"kept {tar_path} in evolved/{slug}/ (plan {plan_name}, log {log_name})")


def main(argv):
    if len(argv) >= 4 and argv[1] == "pack":
        pack(argv[2], argv[3], argv[4:])
    elif len(argv) == 5 and argv[1] == "keep":
        keep(argv[2], argv[3], argv[4])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
