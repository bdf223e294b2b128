#!/usr/bin/env python3
"""How often `gi init` leaves no FILL (issue 29): on the plain user kernels
(tests/data/user), the examples and the real-world corpus (.corpus/, see
tests/data/corpus/README.md), every kernel of every file is drafted twice:
once without sizes (to learn its scalar parameters) and once with every
scalar (parameter or __constant__ variable) given a value (--size NAME=VALUE:
1024 for integers, 0.5 for floats, true for bools, 64 or 0.5 per component
of a vector such as int3; a template the file never instantiates is drafted
as the instance gi init suggests, float for each type),
so that what FILL is left is what the kernel itself does not say. A corpus
file gets the files its project's host file includes before it (the
manifest's "pre_includes": Rodinia's define.c, NiftyReg's _reg_X_gpu.h) as
--pre-include, and a NiftyReg file NiftyReg's include folders, as its CMake
build does. Per kernel: the fields left and the first reason. CPU only.

    python3 bench/init/survey.py [--gi build/gi/gi] [--out bench/init/results_DATE]
"""
import argparse, json, os, re, subprocess, sys, tempfile, collections

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def manifest_pre_includes():
    """.corpus path -> the files its project's host file includes before it
    (the manifest's "pre_includes", the host file in "pre_includes_from":
    Rodinia's define.c, NiftyReg's _reg_X_gpu.h before _reg_X_kernels.cu)."""
    manifest = json.load(open(os.path.join(ROOT, "tests/data/corpus/MANIFEST.json")))
    return {os.path.join(ROOT, ".corpus", e["local"]): e["pre_includes"] for e in manifest if e.get("pre_includes")}


PRE_INCLUDES = manifest_pre_includes()


def build_options(path):
    """What the kernel's own build gives it: the files its host file includes
    first (above), and NiftyReg's include folders (its CMakeLists.txt:
    reg-io, reg-lib, reg-lib/cpu and reg-io/png)."""
    options = [o for h in PRE_INCLUDES.get(os.path.abspath(path), []) for o in ("--pre-include", h)]
    # CubicInterpolationCUDA's examples build with -I../../code (their
    # Makefiles) and write `#include <cubicTex2D.cu>`.
    m = re.search(r"^(.*/cubic-interpolation-cuda-[0-9a-f]+)/examples/", path)
    if m:
        options += ["--include-dir", os.path.join(m.group(1), "code")]
    m = re.search(r"^(.*/niftyreg-[0-9a-f]+)/", path)
    if m:
        options += [o for d in ("reg-io", "reg-lib", "reg-lib/cpu", "reg-io/png")
                    if os.path.isdir(os.path.join(m.group(1), d)) for o in ("--include-dir", os.path.join(m.group(1), d))]
    return options


def run(gi, args):
    p = subprocess.run([gi, "init", *args, *build_options(args[0])], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def kernels_of(gi, path, tmp):
    code, out = run(gi, [path, "--out", os.path.join(tmp, "probe"), "--force"])
    m = re.search(r"\d+ kernels \(([^)]*)\): name the one", out)
    if m:
        return [k.strip() for k in m.group(1).split(",")]
    m = re.search(r"for kernel '([^']+)'", out) or re.search(r": '([^']+)' is a template", out)
    return [m.group(1).split("<")[0]] if m else []


def survey_value(t):
    """The value the survey gives a scalar of spec type t: 1024 for an integer,
    0.5 for a float, true for a bool, and per component for a vector (64 for
    an integer one, an image's extent; 0.5 for a float one)."""
    if t in ("float", "double"):
        return "0.5"
    if t == "bool":
        return "true"
    m = re.fullmatch(r"(u?int|u?long|float)([234])", t)
    if m:
        return ",".join(["0.5" if m.group(1) == "float" else "64"] * int(m.group(2)))
    return "1024"


def draft(gi, path, entry, tmp):
    out_dir = os.path.join(tmp, "seed", re.sub(r"\W", "_", entry))
    code, out = run(gi, [path, "--entry", entry, "--out", out_dir, "--force"])
    # A template the file never instantiates: the instance gi init suggests
    # (float for each type, 4 for each value), the survey's choice as its
    # sizes are.
    m = re.search(r"name the instance to evolve, e.g. --entry '([^']+)'", out) if code != 0 else None
    if m:
        entry = m.group(1)
        code, out = run(gi, [path, "--entry", entry, "--out", out_dir, "--force"])
    if code != 0:
        return {"status": "error", "message": out.strip().splitlines()[-1] if out.strip() else ""}
    spec = json.load(open(os.path.join(out_dir, "spec.json")))
    sizes = []
    # A struct by value ("layout") is given per component, below, as the
    # workload variables gi init makes of it (reorientation_m_0, ...).
    scalars = [p for p in spec["parameters"] if p.get("role") == "scalar" and "layout" not in p]
    # __constant__ scalars the kernel reads are workload variables too.
    scalars += [c for c in spec.get("constants", []) if "FILL" not in str(c.get("type")) and "count" not in c]
    for p in scalars:
        sizes += ["--size", p["name"] + "=" + survey_value(p.get("type", ""))]
    # Workload variables that are neither (an exact launch's thread count,
    # threads_x, for a kernel with no guard): 1024, a multiple of every block size.
    named = {p["name"] for p in scalars}
    for name, v in spec["workloads"]["train"]["variables"].items():
        # (a vector's components, dim_x, come with their vector's value)
        component = re.search(r"_[xyzw]$", name) and not name.startswith("threads_")
        if name != "inputs" and name not in named and "FILL" in str(v) and not component:
            sizes += ["--size", name + "=1024"]
    code, out = run(gi, [path, "--entry", entry, "--out", out_dir, "--force", *sizes])
    # Where 1024 for every integer breaks what the kernel needs, the names the
    # message points at get 5 instead, and the draft is made again:
    #  - no work where a bound is a difference (Fan1's `x < Size - t - 1`):
    #    the subtracted names;
    #  - a __constant__ array (a structuring element, a table of cluster
    #    centres) read past its declared length: the sizes its index's guards name.
    for pattern, names in ((r"below 1 \(([^)]*)\)", r"-\s*([A-Za-z_]\w*)"),
                           (r"read the __constant__ array .* past its \d+ elements \((.*)\): give sizes",
                            r"< ([A-Za-z_]\w*)")):
        m = re.search(pattern, out) if code != 0 else None
        if m:
            small = set(re.findall(names, m.group(1)))
            sizes = [s if not (s.split("=")[0] in small and s.endswith("=1024")) else s.split("=")[0] + "=5"
                     for s in sizes]
            code, out = run(gi, [path, "--entry", entry, "--out", out_dir, "--force", *sizes])
    # A pitched view whose rows overlap at 1024 for every integer: the pitch
    # tied to the row, as gi init suggests.
    m = re.search(r"\(--size (\w+)=(\S+) ties the pitch to the row\)", out) if code != 0 else None
    if m:
        sizes = [s if s.split("=")[0] != m.group(1) else m.group(1) + "=" + m.group(2) for s in sizes]
        code, out = run(gi, [path, "--entry", entry, "--out", out_dir, "--force", *sizes])
    # Rows an exact launch numbers as thread / d (Rodinia's dilate_kernel:
    # j = thread_id / img_m, in rows img_n apart): one thread per element,
    # the launch tied to the rows as its host does (threads_x=img_m*img_n),
    # each of the two 32 so that their product is a multiple of 1024.
    m = re.search(r"in rows (\w+) apart that reach ceil_div\((threads_[xyz]), (\w+)\) into each", out) if code != 0 else None
    if m:
        sizes = [s for s in sizes if s.split("=")[0] not in (m.group(1), m.group(2), m.group(3))]
        sizes += ["--size", m.group(1) + "=32", "--size", m.group(3) + "=32",
                  "--size", m.group(2) + "=" + m.group(3) + "*" + m.group(1)]
        sizes = [s for i, s in enumerate(sizes) if not (s == "--size" and (i + 1 >= len(sizes) or sizes[i + 1] == "--size"))]
        code, out = run(gi, [path, "--entry", entry, "--out", out_dir, "--force", *sizes])
    if code != 0:
        return {"status": "error", "message": out.strip().splitlines()[-1]}
    # gi init compiles the draft with NVRTC (cutting the kernel out of a file
    # that does not build whole): a spec only a GPU run can confirm needs that.
    compiles = not re.search(r"^problem: .*does not compile with NVRTC", out, re.M)
    fills = [l.strip() for l in out.splitlines() if l.startswith("  ") and ": FILL" in l]
    # The cause first: a count gi could not infer, else the grid, else whatever is left.
    causes = [f for f in fills if "could not infer" in f] + [f for f in fills if f.startswith("launch.grid")]
    first = (causes or fills or [""])[0]
    return {"status": "no FILL" if not fills else "FILL left", "fields_left": len(fills), "compiles": compiles,
            "first": first, "cause": cause_of(first) if fills else "", "fills": fills}


# The first reason's kind, for the table of causes (first match wins).
CAUSES = [
    ("a __constant__ symbol bounds it", r"__constant__"),
    ("a texture a helper reads (its extent unseen)", r"reads it where gi does not look"),
    ("a texture fetch in an index", r"tex1Dfetch|tex2D|tex3D"),
    # gridDim where no guard names the grid: the grid itself is the user's
    # to give (launch.grid), a size no guard names, and so is the index.
    ("an index no guard bounds", r"is the grid's extent, and no guard"),
    ("an index over gridDim", r"gridDim"),
    ("an index from loaded data", r"computed from loaded data"),
    ("a counter incremented inside an index", r"\+\+' is not arithmetic|--' is not arithmetic"),
    ("a local whose value depends on the path", r"the value of '.*' at the read"),
    ("a macro or name the analysis cannot read",
     r"nothing bounds '[A-Z_0-9]+'|'[A-Z_0-9]+\(.*' is not arithmetic|definitions \(lines|which gi does not evaluate|"
     r"under a condition gi cannot decide|\(the macro at"),
    ("a local that may be negative", r"may be negative"),
    ("pointer arithmetic other than T* q = p + e", r"is used as a pointer|address is taken"),
    ("a pointer never indexed", r"never indexes"),
    ("two extents gi cannot order", r"cannot tell which is larger|cannot order"),
    ("an index no guard bounds", r"nothing bounds|no guard names its bound"),
    ("no guard on the global index (grid)", r"^launch\.grid"),
    ("a parameter type gi cannot generate", r"\.type: FILL"),
]


# The kinds of FILL the issue allows, where the kernel does not say: an
# index from loaded data or a texture, a size no guard names, an array a
# helper reads through a texture.
ALLOWED = {"a texture fetch in an index", "an index from loaded data", "an index no guard bounds",
           "no guard on the global index (grid)", "a texture a helper reads (its extent unseen)"}


def fill_causes(r):
    """The kinds of a draft's FILLs that say why (counts, extents, the grid)."""
    return [cause_of(f) for f in r["fills"] if "could not infer" in f or f.startswith("launch.grid")]


def only_allowed(r):
    """Whether every FILL of the draft that says why is of an allowed kind."""
    causes = fill_causes(r)
    return r["status"] == "FILL left" and bool(causes) and all(c in ALLOWED for c in causes)


def cause_of(first):
    for name, pattern in CAUSES:
        if re.search(pattern, first):
            return name
    return "other"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gi", default=os.path.join(ROOT, "build/gi/gi"))
    ap.add_argument("--out", help="write OUT.json and OUT.md")
    a = ap.parse_args()
    files = [("user", os.path.join(ROOT, "tests/data/user", d, "kernel.cu"))
             for d in sorted(os.listdir(os.path.join(ROOT, "tests/data/user")))
             if os.path.isfile(os.path.join(ROOT, "tests/data/user", d, "kernel.cu"))]
    files.append(("example", os.path.join(ROOT, "examples/box_filter/box_filter_rows.cu")))
    manifest = json.load(open(os.path.join(ROOT, "tests/data/corpus/MANIFEST.json")))
    for e in manifest:
        path = os.path.join(ROOT, ".corpus", e["local"])
        if e["role"] == "kernel" and os.path.isfile(path):
            files.append(("corpus", path))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, path in files:
            for entry in kernels_of(a.gi, path, tmp):
                r = draft(a.gi, path, entry, tmp)
                r.update(kind=kind, file=os.path.relpath(path, ROOT), entry=entry)
                rows.append(r)
                builds = "" if r["status"] == "error" else ("builds" if r.get("compiles") else "no build")
                print(f"{kind:8} {r['status']:10} {builds:8} {entry:40} {r.get('first', r.get('message', ''))[:100]}",
                      flush=True)
    summary = collections.OrderedDict()
    for kind in ("user", "example", "corpus"):
        mine = [r for r in rows if r["kind"] == kind]
        summary[kind] = {"kernels": len(mine), "no_fill": sum(r["status"] == "no FILL" for r in mine),
                         "fill_left": sum(r["status"] == "FILL left" for r in mine),
                         "error": sum(r["status"] == "error" for r in mine),
                         "no_fill_compiles": sum(r["status"] == "no FILL" and r.get("compiles", False) for r in mine)}
    print(json.dumps(summary, indent=1))
    # Counted strictly: a kernel is left out only where every FILL is allowed;
    # a success is a draft with no FILL that builds.
    drafted = [r for r in rows if r["status"] != "error"]
    left_out = sum(only_allowed(r) for r in drafted)
    builds = sum(r["status"] == "no FILL" and r.get("compiles", False) for r in drafted)
    summary["strict"] = {"no_fill_builds": builds, "only_allowed_fills": left_out,
                         "counted": len(drafted) - left_out,
                         "rate": round(builds / max(1, len(drafted) - left_out), 4)}
    print(json.dumps(summary["strict"]))
    causes = collections.Counter(r["cause"] for r in rows if r["kind"] == "corpus" and r["status"] == "FILL left")
    summary["corpus_causes"] = dict(causes.most_common())
    for name, n in causes.most_common():
        print(f"{n:4} {name}")
    if a.out:
        json.dump({"summary": summary, "kernels": rows}, open(a.out + ".json", "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
