#!/usr/bin/env python3
"""Compile survey: which real-world CUDA corpus files compile with NVRTC as gi seeds?

For every "kernel" entry of tests/data/corpus/MANIFEST.json (the "support" entries are the
headers and included files those need; see tests/data/corpus/README.md), checks the sha256 of
the file under .corpus/, then runs

    GI mutants FILE --count 40 --jobs 2 --include-dir D ... [--pre-include F ...]

with the file's own folder and its project's include folders (INCLUDE_DIRS below), and the files
its project's build includes before it (PRE_INCLUDES below), one file at
a time, with a time limit. `gi mutants` compiles the unmodified seed first: if NVRTC rejects it,
gi exits non-zero with NVRTC's log; otherwise it prints one JSON object with the compile rate of
the mutants ("rate") and per edit family ("per_type"). Each file is classified as

  compiles          the seed compiles; its mutant compile rate and per-family rates are kept;
  outside-library   NVRTC "cannot open source file" for a header that is not among the project's
                    files under .corpus/ (a library outside the project: nifti, thrust, GL, ...;
                    KNOWN_ELSEWHERE notes where a snapshot carries one that was not copied);
  licence-left-out  the missing file is the project's own but was left out of .corpus/ for its
                    licence (LEFT_OUT_FOR_LICENCE);
  fails             any other reason: the first 3 error lines of NVRTC's log (or gi's message),
                    grouped by the first error with names and numbers masked (a C/C++/POSIX
                    system header NVRTC lacks, e.g. <stdlib.h> named by the toolkit's cuda.h,
                    is such a reason, not an outside library);
  timeout           no answer within the time limit.

A file that NVRTC stops on in the CUDA toolkit's own cuda.h (it includes <stdlib.h> and
<stdint.h>, which NVRTC lacks) is run once more with an extra include folder holding an empty
cuda.h, and what that run gives is reported beside it as a what-if, outside the totals
(--no-what-if to skip).

Writes a markdown report and a JSON file (next to it, .json) with every file and a summary:
compiles out of the files that need only their own project's headers (all files but the
outside-library ones), per project, mutant compile rates per edit family pooled over the files
that compile, and the failures grouped.

Usage:
    python3 bench/corpus/compile_survey.py [--out bench/corpus/compile_results_<date>.md]

GI (environment) names the gi binary; default build/gi/gi relative to the repository root.
Python 3 standard library only.
"""

import argparse
import atexit
import collections
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus_common import ROOT, git_head, md_escape, sha256_file, wait_for_binary  # noqa: E402

# Include folders per project, relative to the project's root (the manifest's "local" prefix,
# e.g. .corpus/niftyreg-aa79bf22/), as the project's own build gives them. Every file gets its
# own folder first; then the folders of the first rule whose path prefix matches the file's
# repository path ("" matches all). "{parent}" is the parent of the file's folder. Folders that
# are not under .corpus/ (third-party code that was not copied) are named here for the record
# but not passed to gi (it rejects a folder that does not exist).
INCLUDE_DIRS = {
    # NiftyReg's CMakeLists.txt (both commits): include_directories reg-lib, reg-lib/cpu, reg-io,
    # reg-io/png, reg-lib/cuda (with CUDA on); also third-party/ and reg-io/zlib, which hold
    # vendored libraries (Eigen, zlib) that are not NiftyReg's own and are not in .corpus/.
    "niftyreg": [
        ("", ["reg-lib", "reg-lib/cpu", "reg-lib/cuda", "reg-io", "reg-io/png",
              "third-party", "reg-io/zlib"]),
    ],
    # Rodinia: each benchmark builds from its own folder; the file's folder and its parent
    # cover b+tree/kernel, lavaMD/kernel, dwt2d/dwt_cuda, leukocyte/CUDA, lud/cuda. Extra -I
    # from the benchmarks' Makefiles: ../util (gaussian, nn, nw, pathfinder), ../../util and
    # ../common (lud/cuda), ./AVI (heartwall), $(MATRIX_DIR) = meschach_lib (leukocyte: a
    # third-party library, left out of .corpus/ for its licence). cfd uses the CUDA SDK's
    # common/inc (outside the repository).
    "rodinia": [
        ("cuda/gaussian/", ["{parent}", "cuda/util"]),
        ("cuda/nn/", ["{parent}", "cuda/util"]),
        ("cuda/nw/", ["{parent}", "cuda/util"]),
        ("cuda/pathfinder/", ["{parent}", "cuda/util"]),
        ("cuda/lud/cuda/", ["{parent}", "cuda/util", "cuda/lud/common"]),
        ("cuda/heartwall/", ["{parent}", "cuda/heartwall/AVI"]),
        ("cuda/leukocyte/CUDA/", ["{parent}", "cuda/leukocyte/meschach_lib"]),
        ("", ["{parent}"]),
    ],
    # CubicInterpolationCUDA: the library is code/ (code/internal/ for the files it includes);
    # the examples' Makefile_cuda5 adds -I../../code -I../cuda5_fix (cuda5_fix/cutil.h is the
    # project's small stand-in for the CUDA SDK's cutil.h) and the CUDA samples' common/inc
    # (outside the repository).
    "cubic-interpolation-cuda": [
        ("", ["code", "code/internal", "examples/cuda5_fix"]),
    ],
}

# Files the project's build includes before a kernel file, passed as `gi mutants --pre-include`
# (spec.json "pre_includes"): the manifest's "pre_includes" of each kernel file, with the host
# file that includes them first in "pre_includes_from" (Rodinia builds some benchmarks as one
# translation unit, a host file that includes its definitions and then the kernel files;
# NiftyReg's _reg_X_gpu.cu includes _reg_X_gpu.h, then _reg_X_kernels.cu), so a kernel file
# alone lacks their names. Paths are relative to the kernel file's folder, as gi looks them up.
def pre_includes(entry):
    return entry.get("pre_includes", [])


# The project's own files that its kernels include but that are not in .corpus/ because of their
# licence (see tests/data/corpus/README.md, "Support files left out"): a missing header is one
# of them when it resolves to one of these paths from the including file's folder or one of the
# include folders. (Copies of outside libraries that a snapshot carries, such as the CUDA
# samples' helper_cuda.h in Rodinia's hybridsort/, are outside libraries: KNOWN_ELSEWHERE.)
LEFT_OUT_FOR_LICENCE = {
    "rodinia": {
        "cuda/huffman/pabio_kernels_v2.cu": "'All rights reserved', no grant",
        "cuda/huffman/stats_logger.h": "'All rights reserved', no grant",
    },
    "cubic-interpolation-cuda": {
        "code/internal/cutil_math_bugfixes.h": "NVIDIA 2007 SDK notice, no right to redistribute",
    },
}

# Outside libraries that a snapshot nevertheless carries (vendored third-party code, not
# copied to .corpus/): a regular expression on the header name NVRTC could not open -> where the
# snapshot has it. Only used to annotate the report.
KNOWN_ELSEWHERE = {
    "niftyreg": [
        (r"(^|/)RNifti(\.h|/)", "RNifti, vendored in reg-io/RNifti* (third-party)"),
        (r"(^|/)nifti[12](_io|_image)?\.h$", "NIfTI library, vendored in reg-io/niftilib/ (third-party, public domain)"),
        (r"(^|/)znzlib\.h$", "znzlib, vendored in reg-io/znzlib/ (third-party, public domain)"),
        (r"(^|/)z(lib|conf)\.h$", "zlib, vendored in reg-io/zlib/ (third-party)"),
        (r"^Eigen/", "Eigen, vendored in third-party/Eigen/ (third-party)"),
    ],
    "rodinia": [
        (r"(^|/)(matrix2?|machine|err|meminfo|sparse2?|zmatrix2?|iter|matlab)\.h$",
         "Meschach, vendored in cuda/leukocyte/meschach_lib/ (third-party)"),
        (r"(^|/)avilib\.h$", "avilib, vendored in cuda/heartwall/AVI/, cuda/leukocyte/CUDA/ (third-party, GPL)"),
        (r"(^|/)(helper_cuda|helper_timer|helper_string|exception)\.h$",
         "CUDA samples' common/inc; a copy (NVIDIA EULA) is vendored in cuda/hybridsort/"),
        (r"(^|/)cutil\.h$", "CUDA SDK's cutil; a copy (NVIDIA EULA) is vendored in cuda/huffman/"),
    ],
    "cubic-interpolation-cuda": [
        (r"^GL/", "OpenGL; GLEW/GLUT headers vendored in examples/cuda5_fix/GL/ (third-party)"),
        (r"(^|/)(helper_timer|exception)\.h$", "CUDA samples header, vendored in examples/cuda5_fix/ (NVIDIA EULA)"),
    ],
}


# The C and C++ standard library's and POSIX's headers: NVRTC has none of them. A file that fails
# because NVRTC cannot open one of these does not need an outside library; it fails (gi stands in
# for those a file names with <> itself, not for those a CUDA toolkit header such as cuda.h names).
SYSTEM_HEADERS = set("""
assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h
setjmp.h signal.h stdalign.h stdarg.h stdbool.h stddef.h stdint.h stdio.h stdlib.h string.h
tgmath.h time.h uchar.h wchar.h wctype.h malloc.h memory.h alloca.h error.h fcntl.h unistd.h
pthread.h dirent.h getopt.h strings.h values.h sched.h semaphore.h dlfcn.h libgen.h poll.h
algorithm any array atomic bitset cassert ccomplex cctype cerrno cfenv cfloat charconv chrono
cinttypes climits clocale cmath codecvt complex condition_variable csetjmp csignal cstdarg
cstddef cstdint cstdio cstdlib cstring ctime cwchar cwctype deque exception execution filesystem
forward_list fstream functional future initializer_list iomanip ios iosfwd iostream istream
iterator limits list locale map memory mutex new numeric optional ostream queue random ratio
regex set shared_mutex sstream stack stdexcept streambuf string string_view system_error thread
tuple type_traits typeindex typeinfo unordered_map unordered_set utility valarray variant vector
""".split())


def is_system_header(name):
    return name in SYSTEM_HEADERS or name.startswith(("sys/", "arpa/", "netinet/"))


def include_dirs(project, path, project_root):
    """(folders to pass to gi, as absolute paths; folders named by INCLUDE_DIRS that are not
    under .corpus/, relative to the project root)."""
    own = os.path.dirname(path)
    wanted = [own]
    for prefix, dirs in INCLUDE_DIRS.get(project, []):
        if path.startswith(prefix):
            wanted += [os.path.dirname(own) if d == "{parent}" else d for d in dirs]
            break
    passed, absent = [], []
    for d in wanted:
        full = os.path.normpath(os.path.join(project_root, d))
        if os.path.isdir(full):
            if full not in passed:
                passed.append(full)
        elif d not in absent:
            absent.append(d)
    return passed, absent


def run_gi(gi, args, timeout_s, wait_s):
    """Returns (returncode or None for a timeout, stdout, stderr, seconds)."""
    for attempt in range(10):
        wait_for_binary(gi, wait_s, "compile_survey")
        start = time.monotonic()
        try:
            proc = subprocess.run([gi] + args, cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None, "", "", time.monotonic() - start
        except OSError:  # replaced under us (ENOENT, ETXTBSY): wait and retry
            time.sleep(5)
            continue
        return (proc.returncode, proc.stdout.decode("utf-8", "replace"),
                proc.stderr.decode("utf-8", "replace"), time.monotonic() - start)
    sys.exit(f"compile_survey: could not run {gi}")


CANNOT_OPEN = re.compile(r'^(?P<where>\S+?)\((?P<line>\d+)\): catastrophic error: cannot open source file "(?P<name>[^"]+)"')
NVRTC_ERROR = re.compile(r"^\S+\(\d+\): (?:catastrophic )?error: ")
LOCATION = re.compile(r"^\S+\(\d+\): (?:catastrophic )?error: |^gi: error: (?:\S+?:\d+(?::\d+)?: )?")


def project_files(project_root):
    """Every file under the project's folder in .corpus/, as a path relative to it."""
    out = []
    for dirpath, _, names in os.walk(project_root):
        for n in names:
            out.append(os.path.relpath(os.path.join(dirpath, n), project_root).replace(os.sep, "/"))
    return out


def suffix_match(name, paths):
    name = name.replace("\\", "/")
    while name.startswith("./") or name.startswith("../"):
        name = name.split("/", 1)[1]
    return [p for p in paths if p == name or p.endswith("/" + name)]


def mask(text):
    """A failure's group: the message without its location, quoted names as "…", numbers as N."""
    text = LOCATION.sub("", text.strip())
    text = re.sub(r'"[^"]*"', '"…"', text)
    text = re.sub(r"'[^']*'", "'…'", text)
    return re.sub(r"\d+", "N", text)


def classify(project, rc, stdout, stderr, files_here, dirs):
    """dirs: the include folders given to gi, relative to the project root."""
    if rc is None:
        return {"result": "timeout"}
    if rc == 0:
        try:
            report = json.loads(stdout)
        except ValueError:
            return {"result": "fails", "errors": ["gi exited 0 but printed no JSON object"],
                    "group": "gi printed no JSON"}
        per_type = {k: {"compiled": v.get("compiled", 0), "total": v.get("total", 0),
                        "rate": v.get("rate")} for k, v in sorted(report.get("per_type", {}).items())}
        return {"result": "compiles", "rate": report.get("rate"), "compiled": report.get("compiled"),
                "total": report.get("total"), "unique_sources": report.get("unique_sources"),
                "per_type": per_type,
                "wall_seconds": report.get("wall_seconds")}
    lines = [l.rstrip() for l in stderr.splitlines() if l.strip()]
    for l in lines:
        m = CANNOT_OPEN.match(l.strip())
        if not m:
            continue
        name = m.group("name")
        where = m.group("where")
        out = {"missing_header": name, "included_at": f"{where}({m.group('line')})"}
        if is_system_header(name):
            by = (f"the CUDA toolkit's {os.path.basename(where)}" if os.path.isabs(where)
                  else "a file of the project")
            out.update(result="fails", errors=[l.strip()],
                       group=f'NVRTC has no system header "{name}", included by {by}')
            return out
        # Where the header would be: beside the including file (when that is a project file)
        # or in an include folder; paths relative to the project root.
        folders = list(dirs)
        if not os.path.isabs(where):
            folders += [os.path.dirname(p) for p in files_here if os.path.basename(p) == os.path.basename(where)]
        candidates = {os.path.normpath(os.path.join(d, name)).replace(os.sep, "/") for d in folders}
        left = sorted(candidates & set(LEFT_OUT_FOR_LICENCE.get(project, {})))
        if left:
            out.update(result="licence-left-out", left_out=left[0],
                       why=LEFT_OUT_FOR_LICENCE[project][left[0]])
            return out
        if suffix_match(name, files_here):
            out.update(result="fails", errors=[l.strip()],
                       group="a header of the project is not on the include path")
            return out
        out["result"] = "outside-library"
        for pattern, note in KNOWN_ELSEWHERE.get(project, []):
            if re.search(pattern, name):
                out["vendored"] = note
                break
        return out
    errors = [l.strip() for l in lines if NVRTC_ERROR.match(l.strip())]
    if not errors:  # gi's own message (a parse error, a bad option, a crash)
        errors = [l.strip() for l in lines if l.startswith("gi:")] or lines or [f"exit status {rc}, no message"]
        if rc < 0:
            errors[0] = f"killed by signal {-rc}: {errors[0]}"
    return {"result": "fails", "errors": errors[:3], "group": mask(errors[0])}


def stopped_in_toolkit_cuda_h(row):
    """NVRTC stopped on a system header that the CUDA toolkit's own cuda.h includes."""
    where = row.get("included_at", "")
    return os.path.isabs(where) and os.path.basename(where.rsplit("(", 1)[0]) == "cuda.h"


_STAND_IN_DIR = []


def stand_in_dir():
    """A temporary folder holding an empty cuda.h (made once, removed at exit)."""
    if not _STAND_IN_DIR:
        d = tempfile.mkdtemp(prefix="compile_survey_")
        atexit.register(shutil.rmtree, d, True)
        with open(os.path.join(d, "cuda.h"), "w") as f:
            f.write("/* compile_survey.py: empty stand-in for the CUDA toolkit's cuda.h */\n")
        _STAND_IN_DIR.append(d)
    return _STAND_IN_DIR[0]


def pct(a, b):
    return f"{100.0 * a / b:.0f} %" if b else "n/a"


def main():
    today = datetime.date.today().isoformat()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", default="tests/data/corpus/MANIFEST.json")
    ap.add_argument("--corpus", default=".corpus", help="folder the manifest's 'local' paths are in")
    ap.add_argument("--out", default=f"bench/corpus/compile_results_{today}.md",
                    help="markdown report; the JSON goes next to it with .json")
    ap.add_argument("--count", type=int, default=40, help="mutants per file")
    ap.add_argument("--jobs", type=int, default=2, help="gi mutants --jobs")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per file")
    ap.add_argument("--wait", type=float, default=900.0,
                    help="seconds to wait for a missing gi binary (it may be being rebuilt)")
    ap.add_argument("--no-what-if", dest="what_if", action="store_false",
                    help="do not rerun the files NVRTC stops on in the toolkit's cuda.h with an empty "
                         "stand-in for it")
    ap.add_argument("--only", default="", help="run only files whose 'local' path contains this")
    args = ap.parse_args()

    def at_root(p):
        return p if os.path.isabs(p) else os.path.join(ROOT, p)

    gi = at_root(os.environ.get("GI", "build/gi/gi"))
    with open(at_root(args.manifest)) as f:
        manifest = json.load(f)
    kernels = [e for e in manifest if e.get("role", "kernel") == "kernel" and args.only in e["local"]]
    support = collections.Counter(e["local"][:-len(e["path"])].rstrip("/")
                                  for e in manifest if e.get("role") == "support")

    wait_for_binary(gi, args.wait, "compile_survey")
    gi_sha_before = sha256_file(gi)
    rows = []
    files_cache = {}
    for entry in kernels:
        corpus = at_root(args.corpus)
        path = os.path.join(corpus, entry["local"])
        root_rel = entry["local"][:-len(entry["path"])]
        project_root = os.path.join(corpus, root_rel)
        row = {k: entry[k] for k in ("project", "repository", "commit", "path", "local", "kernels")}
        if not os.path.isfile(path):
            row.update(result="missing", seconds=0.0)
        elif sha256_file(path) != entry["sha256"]:
            row.update(result="sha256-mismatch", seconds=0.0)
        else:
            dirs, absent = include_dirs(entry["project"], entry["path"], project_root)
            cmd = ["mutants", os.path.relpath(path, ROOT), "--count", str(args.count),
                   "--jobs", str(args.jobs)]
            for d in dirs:
                cmd += ["--include-dir", os.path.relpath(d, ROOT)]
            for name in pre_includes(entry):
                cmd += ["--pre-include", name]
            if project_root not in files_cache:
                files_cache[project_root] = project_files(project_root)
            rc, out, err, seconds = run_gi(gi, cmd, args.timeout, args.wait)
            row["include_dirs"] = [os.path.relpath(d, project_root) for d in dirs]
            if pre_includes(entry):
                row["pre_includes"] = pre_includes(entry)
            if absent:
                row["include_dirs_not_in_corpus"] = absent
            row.update(classify(entry["project"], rc, out, err, files_cache[project_root], row["include_dirs"]))
            row["seconds"] = round(seconds, 2)
            if args.what_if and row["result"] == "fails" and stopped_in_toolkit_cuda_h(row):
                # What-if, not part of the totals: the same run with an empty stand-in for the
                # toolkit's cuda.h (the driver API header; kernels need none of it), to see what
                # the file needs next.
                rc2, out2, err2, _ = run_gi(gi, cmd + ["--include-dir", stand_in_dir()], args.timeout, args.wait)
                row["with_empty_cuda_h"] = classify(entry["project"], rc2, out2, err2, files_cache[project_root],
                                                    row["include_dirs"])
        rows.append(row)
        detail = {"compiles": lambda r: f"mutant rate {r['rate']:.2f}",
                  "outside-library": lambda r: f"needs {r['missing_header']}",
                  "licence-left-out": lambda r: f"needs {r['left_out']} (left out: {r['why']})",
                  "fails": lambda r: r["errors"][0]}.get(row["result"], lambda r: "")(row)
        print(f"{row['result']:>16}  {entry['local']}  {detail}", flush=True)
    gi_sha_after = sha256_file(gi)

    # ---- summary --------------------------------------------------------------------------
    count = collections.Counter(r["result"] for r in rows)
    compiling = [r for r in rows if r["result"] == "compiles"]
    own_only = [r for r in rows if r["result"] not in ("outside-library", "missing", "sha256-mismatch")]
    texture_refs = [r for r in own_only if r["result"] == "fails" and "texture is not a template" in r["errors"][0]]
    families = collections.OrderedDict()
    for r in compiling:
        for fam, v in r["per_type"].items():
            f = families.setdefault(fam, {"compiled": 0, "total": 0, "files": 0})
            f["compiled"] += v["compiled"]
            f["total"] += v["total"]
            f["files"] += 1
    families = collections.OrderedDict(sorted(families.items()))
    for f in families.values():
        f["rate"] = round(f["compiled"] / f["total"], 4) if f["total"] else None
    mutants_compiled = sum(r["compiled"] or 0 for r in compiling)
    mutants_total = sum(r["total"] or 0 for r in compiling)
    mutants_unique = sum(r.get("unique_sources") or 0 for r in compiling)

    per_project = collections.OrderedDict()
    for r in rows:
        key = f"{r['project']}@{r['commit'][:8]}"
        p = per_project.setdefault(key, {"repository": r["repository"], "commit": r["commit"],
                                         "files": 0, "compiles": 0, "outside_library": 0,
                                         "licence_left_out": 0, "fails": 0, "timeout": 0,
                                         "support_files": support.get(r["local"][:-len(r["path"])].rstrip("/"), 0)})
        p["files"] += 1
        key2 = {"compiles": "compiles", "outside-library": "outside_library",
                "licence-left-out": "licence_left_out", "fails": "fails", "timeout": "timeout"}.get(r["result"])
        if key2:
            p[key2] += 1

    outside = collections.OrderedDict()
    for r in sorted((r for r in rows if r["result"] == "outside-library"), key=lambda r: r["missing_header"]):
        g = outside.setdefault(r["missing_header"], {"vendored": r.get("vendored"), "files": []})
        g["files"].append(r["local"])
    outside = collections.OrderedDict(sorted(outside.items(), key=lambda kv: (-len(kv[1]["files"]), kv[0])))
    failures = collections.OrderedDict()
    for r in rows:
        if r["result"] == "fails":
            failures.setdefault(r["group"], []).append({"local": r["local"], "errors": r["errors"]})
        elif r["result"] == "licence-left-out":
            failures.setdefault(f"needs {r['left_out']}, left out of .corpus/ for its licence ({r['why']})",
                                []).append({"local": r["local"], "errors": [f"cannot open source file \"{r['missing_header']}\""]})
        elif r["result"] == "timeout":
            failures.setdefault("timeout", []).append({"local": r["local"], "errors": []})
    failures = collections.OrderedDict(sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0])))

    # What-if: the files that stopped in the toolkit's cuda.h, rerun with an empty stand-in for it;
    # the totals as they would be with each such file's what-if result instead of its own.
    redo = [r for r in rows if "with_empty_cuda_h" in r]
    after = collections.Counter(r["with_empty_cuda_h"]["result"] if "with_empty_cuda_h" in r else r["result"]
                                for r in rows)
    after_own = sum(n for k, n in after.items() if k not in ("outside-library", "missing", "sha256-mismatch"))
    what_if = {"files": len(redo),
               "results": dict(collections.Counter(r["with_empty_cuda_h"]["result"] for r in redo)),
               "totals_with_stand_in": {"compiles": after["compiles"], "outside_library": after["outside-library"],
                                        "licence_left_out": after["licence-left-out"], "fails": after["fails"],
                                        "timeout": after["timeout"], "files_needing_only_own_headers": after_own}}

    summary = {
        "date": today,
        "gi": os.path.relpath(gi, ROOT) if gi.startswith(ROOT) else gi,
        "gi_sha256": gi_sha_before,
        "gi_changed_during_run": gi_sha_before != gi_sha_after,
        "repository_head": git_head(),
        "command": f"GI mutants FILE --count {args.count} --jobs {args.jobs} --include-dir D ...",
        "timeout_s": args.timeout,
        "files": len(rows),
        "compiles": count["compiles"],
        "outside_library": count["outside-library"],
        "licence_left_out": count["licence-left-out"],
        "fails": count["fails"],
        "timeout": count["timeout"],
        "missing": count["missing"],
        "sha256_mismatch": count["sha256-mismatch"],
        "files_needing_only_own_headers": len(own_only),
        "compile_rate_own_headers_only": round(len(compiling) / len(own_only), 4) if own_only else None,
        # Texture references were removed in CUDA 12: no CUDA 13 compiler (nvcc neither) builds these.
        "fails_texture_references": len(texture_refs),
        "compile_rate_without_texture_references":
            round(len(compiling) / (len(own_only) - len(texture_refs)), 4) if len(own_only) > len(texture_refs) else None,
        "mutants_compiled": mutants_compiled,
        "mutants_total": mutants_total,
        "mutants_unique_sources": mutants_unique,
        "mutant_rate_pooled": round(mutants_compiled / mutants_total, 4) if mutants_total else None,
        "per_family_pooled": families,
        "per_project": per_project,
        "outside_libraries": outside,
        "failures_grouped": failures,
        "what_if_empty_cuda_h": what_if,
    }

    summary_line_texture = (f"- {len(texture_refs)} of the failures use texture references, which CUDA 12 removed (no "
                            f"CUDA 13 compiler builds them): without those files, **{len(compiling)} of "
                            f"{len(own_only) - len(texture_refs)} compile "
                            f"({pct(len(compiling), len(own_only) - len(texture_refs))})**")
    out_md = at_root(args.out)
    out_json = os.path.splitext(out_md)[0] + ".json"
    os.makedirs(os.path.dirname(out_md), exist_ok=True)
    with open(out_json, "w") as f:
        json.dump({"summary": summary, "files": rows}, f, indent=1, ensure_ascii=False)
        f.write("\n")

    md = [f"# Corpus kernels compiled with NVRTC as gi seeds, {today}", "",
          f"`{summary['gi']} mutants FILE --count {args.count} --jobs {args.jobs} --include-dir D ...` on each "
          f"kernel file of `{args.manifest}` (files under `{args.corpus}/`, their projects' headers there too; "
          f"include folders per project in `bench/corpus/compile_survey.py`; timeout {args.timeout:g} s a file, "
          "one file at a time).", "",
          f"- gi binary sha256: `{gi_sha_before}`" + (" (CHANGED during the run)" if summary["gi_changed_during_run"] else ""),
          f"- repository HEAD: `{summary['repository_head']}`",
          f"- **{len(compiling)} of {len(own_only)} files that need only their own project's headers compile "
          f"({pct(len(compiling), len(own_only))})**; {count['outside-library']} more of the {len(rows)} need a "
          "library outside their project",
          f"- results: {count['compiles']} compile, {count['outside-library']} need an outside library, "
          f"{count['licence-left-out']} need a project file left out for its licence, {count['fails']} fail for "
          f"another reason, {count['timeout']} time out"
          + (f", {count['missing']} missing, {count['sha256-mismatch']} with another sha256"
             if count["missing"] or count["sha256-mismatch"] else ""),
          summary_line_texture,
          f"- mutants of the compiling files: {mutants_compiled} of {mutants_total} compile "
          f"({pct(mutants_compiled, mutants_total)}); {mutants_unique} of the {mutants_total} are distinct sources",
          "", "A file is classified by the first thing NVRTC stops at: an outside-library file may fail "
          "for other reasons too once its library is given.", ""]
    md += ["## Mutant compile rate per edit family, pooled over the compiling files", ""]
    if families:
        md += ["| family | files | mutants | compiled | rate |", "|---|---:|---:|---:|---:|"]
        for fam, f in families.items():
            md.append(f"| {fam} | {f['files']} | {f['total']} | {f['compiled']} | {pct(f['compiled'], f['total'])} |")
    else:
        md.append("No file compiles.")
    md += ["", "## Per project", "",
           "| project | commit | files | compile | outside library | licence left out | fail | timeout | support files |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key, p in per_project.items():
        md.append(f"| {key.split('@')[0]} | `{p['commit'][:8]}` | {p['files']} | {p['compiles']} | "
                  f"{p['outside_library']} | {p['licence_left_out']} | {p['fails']} | {p['timeout']} | {p['support_files']} |")
    md += ["", "## Outside libraries (first header NVRTC could not open)", ""]
    if outside:
        md += ["| files | header | note | files |", "|---:|---|---|---|"]
        for name, g in outside.items():
            md.append(f"| {len(g['files'])} | `{name}` | {md_escape(g['vendored'] or '')} | "
                      + "<br>".join(f"`{x}`" for x in g["files"]) + " |")
    else:
        md.append("None.")
    md += ["", "## Other failures, grouped by the first error (names as \"…\", numbers as N)", ""]
    if failures:
        md += ["| files | first error | files |", "|---:|---|---|"]
        for g, items in failures.items():
            md.append(f"| {len(items)} | {md_escape(g)} | " + "<br>".join(f"`{i['local']}`" for i in items) + " |")
    else:
        md.append("None.")
    md += ["", "## What if the toolkit's cuda.h had a stand-in", ""]
    if redo:
        t = what_if["totals_with_stand_in"]
        md += [f"{len(redo)} files stop where the CUDA toolkit's own `cuda.h` (the driver API header, which a "
               "kernel file includes through `#include \"cuda.h\"` or a project header) includes a C header "
               "NVRTC does not have. Rerun with an extra include folder holding an empty `cuda.h` "
               "(not part of the totals above), they give:", "",
               "| file (under .corpus/) | result | detail |", "|---|---|---|"]
        for r in redo:
            w = r["with_empty_cuda_h"]
            if w["result"] == "compiles":
                d = f"mutants {w['compiled']}/{w['total']}"
            elif w["result"] in ("outside-library", "licence-left-out"):
                d = f"cannot open `{w['missing_header']}`" + (f" ({w['vendored']})" if w.get("vendored") else "")
            elif w["result"] == "fails":
                d = "<br>".join(f"`{md_escape(e)}`" for e in w["errors"])
            else:
                d = ""
            md.append(f"| `{r['local']}` | {w['result']} | {d} |")
        md += ["", f"With those results the totals would be: {t['compiles']} of {t['files_needing_only_own_headers']} "
               f"files that need only their own project's headers compile; {t['outside_library']} need an outside "
               f"library, {t['licence_left_out']} a file left out for its licence, {t['fails']} fail otherwise."]
    else:
        md.append("No file stopped in the toolkit's cuda.h.")
    md += ["", "## Every file", "",
           "| file (under .corpus/) | `__global__` | result | mutant rate | seconds | detail (first 3 errors) |",
           "|---|---:|---|---:|---:|---|"]
    for r in rows:
        if r["result"] == "compiles":
            detail = ", ".join(f"{k} {v['compiled']}/{v['total']}" for k, v in r["per_type"].items())
            rate = f"{r['compiled']}/{r['total']}"
        elif r["result"] == "outside-library":
            detail, rate = f"cannot open `{r['missing_header']}` at {r['included_at']}" + \
                (f" ({r['vendored']})" if r.get("vendored") else ""), ""
        elif r["result"] == "licence-left-out":
            detail, rate = f"cannot open `{r['missing_header']}` at {r['included_at']}: left out for licence", ""
        elif r["result"] == "fails":
            detail, rate = "<br>".join(f"`{md_escape(e)}`" for e in r["errors"]), ""
        else:
            detail, rate = "", ""
        if "with_empty_cuda_h" in r:
            w = r["with_empty_cuda_h"]
            detail += f"<br>with an empty cuda.h: {w['result']}" + (
                f" (`{w['missing_header']}`)" if "missing_header" in w else "")
        md.append(f"| `{r['local']}` | {r['kernels']} | {r['result']} | {rate} | {r.get('seconds', 0):.1f} | {detail} |")
    with open(out_md, "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"{len(compiling)}/{len(own_only)} of the files needing only their own headers compile "
          f"({count['outside-library']} need an outside library); wrote {os.path.relpath(out_md, ROOT)} "
          f"and {os.path.relpath(out_json, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
