#!/usr/bin/env python3
"""Moves an evolve-all between this machine's ignored runs/ folder and the GPU
machine. Raw run records never enter the tracked tree: what a developer
adopts (each published kernel folder with its run_summary.json, README.md,
failures.json) goes to evolved/GPU_SLUG/, the rest stays in runs/.

    python3 scripts/evolve_all_records.py pack GPU_SLUG OUT.tgz [RUN_DIR...]
        packs runs/evolve-all-GPU_SLUG/: its plan (evolve_all.json) and the
        run folder of every kernel that is not complete, into OUT.tgz, for
        scripts/pack_carry.sh OUT.tgz: the next device call resumes the run
        where it stopped. A complete kernel is never run again, and its
        records would only push the device call past its size limit. RUN_DIRs
        named (e.g. tools-max_vector_length) are packed whatever their
        status: to publish a finished kernel again under newer rules with
        `gi evolve --resume runs/evolve-all-GPU_SLUG/RUN_DIR`.

    python3 scripts/evolve_all_records.py keep RUNS_TAR_GZ GPU_SLUG LOG_NAME
        takes what scripts/gpu_session.sh sent back ($OUT/runs.tar.gz): each
        run folder and the plan into runs/evolve-all-GPU_SLUG/, the logs into
        runs/logs/LOG_NAME/, and the published kernel folders, README.md and
        failures.json into evolved/GPU_SLUG/.
"""
import os
import shutil
import sys
import tarfile
import tempfile
import json


def run_root(slug):
    return os.path.join("runs", "evolve-all-" + slug)


def pack(slug, out, also=()):
    root = run_root(slug)
    plan_file = os.path.join(root, "evolve_all.json")
    if not os.path.isfile(plan_file):
        raise SystemExit(f"{plan_file}: no evolve-all plan here (runs/ holds what earlier device calls sent back)")
    with open(plan_file) as f:
        plan = json.load(f)
    with tarfile.open(out, "w:gz") as t:
        t.add(plan_file, arcname=os.path.join(root, "evolve_all.json"))
        for k in plan["kernels"]:
            src = os.path.join(root, k["run_dir"])
            if (k["status"] == "complete" and k["run_dir"] not in also) or not os.path.isdir(src):
                continue  # finished, or not started yet
            t.add(src, arcname=os.path.join(root, k["run_dir"]))
    left = sum(k["status"] in ("pending", "running") for k in plan["kernels"])
    retry = sum(k["status"] in ("failed", "rejected") for k in plan["kernels"])
    print(f"{out}: {plan_file} with {len(plan['kernels']) - left} kernels done "
          f"({retry} failed or rejected, for --retry-failed), {left} to go")


def keep(tar_path, slug, log_name):
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(tar_path) as t:
            # The "data" filter refuses links and paths out of tmp; Pythons before 3.11.4 lack it.
            if hasattr(tarfile, "data_filter"):
                t.extractall(tmp, filter="data")
            else:
                t.extractall(tmp)
        came_back = os.path.join(tmp, run_root(slug))
        if not os.path.isdir(came_back):
            raise SystemExit(f"{tar_path}: no {run_root(slug)}/")
        os.makedirs(run_root(slug), exist_ok=True)
        for name in sorted(os.listdir(came_back)):
            src, dst = os.path.join(came_back, name), os.path.join(run_root(slug), name)
            if os.path.isdir(src):
                shutil.rmtree(dst, ignore_errors=True)
                shutil.copytree(src, dst)
            else:
                shutil.copyfile(src, dst)
        logs = os.path.join(tmp, "runs", "logs")
        if os.path.isdir(logs):
            shutil.copytree(logs, os.path.join("runs", "logs", log_name), dirs_exist_ok=True)
        published = os.path.join(tmp, "evolved", slug)
        os.makedirs(os.path.join("evolved", slug), exist_ok=True)
        for name in sorted(os.listdir(published)) if os.path.isdir(published) else []:
            src, dst = os.path.join(published, name), os.path.join("evolved", slug, name)
            if os.path.isdir(src) and os.path.isfile(os.path.join(src, "result.json")):
                shutil.rmtree(dst, ignore_errors=True)
                shutil.copytree(src, dst)
            elif name in ("README.md", "failures.json"):
                shutil.copyfile(src, dst)
    print(f"kept {tar_path}: runs in {run_root(slug)}/, logs in runs/logs/{log_name}/, results in evolved/{slug}/")


def main(argv):
    if len(argv) >= 4 and argv[1] == "pack":
        pack(argv[2], argv[3], argv[4:])
    elif len(argv) == 5 and argv[1] == "keep":
        keep(argv[2], argv[3], argv[4])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
