"""Reading gi's JSON and JSON-lines files for the report.

A missing file is not an error (runs in progress, older runs and failed
kernels lack some files): readers return None and the caller says what is
missing. A file that exists but does not parse is an error naming the file and
line, because a report drawn from half a file would mislead.
"""
import gzip
import json
import os


class ReportError(Exception):
    """Bad input: the message names the file (and line) at fault."""


def read_json(path):
    """The parsed file, or None when it does not exist."""
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}:{e.lineno}: malformed JSON: {e.msg}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ReportError(f"{path}: cannot read: {e}") from None


def read_object(path):
    """read_json for files that must hold a JSON object (every gi record but failures.json)."""
    value = read_json(path)
    if value is not None and not isinstance(value, dict):
        raise ReportError(f"{path}: expected a JSON object, got {type(value).__name__}")
    return value


def read_text(path):
    """The file's text, or None when it does not exist."""
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def jsonl_path(run_dir, stem):
    """RUN_DIR/stem.jsonl or its gzipped form (finished runs compress it), or None."""
    for name in (stem + ".jsonl", stem + ".jsonl.gz"):
        path = os.path.join(run_dir, name)
        if os.path.isfile(path):
            return path
    return None


def read_jsonl(path):
    """One dict per non-blank line; a malformed line is a ReportError with its number."""
    opener = gzip.open if path.endswith(".gz") else open
    rows = []
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ReportError(f"{path}:{number}: malformed JSON line: {e.msg}") from None
                if not isinstance(row, dict):
                    raise ReportError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
                rows.append(row)
    except (OSError, EOFError, UnicodeDecodeError) as e:
        # A truncated .gz (a run killed while compressing) ends here.
        raise ReportError(f"{path}: cannot read: {e}") from None
    return rows
