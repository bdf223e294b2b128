"""What the corpus surveys (survey.py: parsing; compile_survey.py: compiling)
share: the repository root, file checksums, waiting for a gi binary that may
be rebuilt under them, the repository state a result was measured at, and
markdown cells."""
import hashlib
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def wait_for_binary(gi, wait_s, who):
    """gi may be rebuilt while a survey runs: wait for it to be there."""
    deadline = time.monotonic() + wait_s
    while not (os.path.isfile(gi) and os.access(gi, os.X_OK)):
        if time.monotonic() > deadline:
            sys.exit(f"{who}: {gi} is missing or not executable (waited {wait_s} s)")
        time.sleep(2)


def md_escape(text):
    return text.replace("|", "\\|").replace("\n", " ")


def git_head():
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
