#!/usr/bin/env python3
"""Behaviour unchanged? Generate the C of every shared model on every target with a base commit
and with this checkout, and compare them apart from kernel names, include lines and header /
template paths.

    python3 scripts/compare_generated.py BASE [--sets tflite converter onnx_models onnx]
        [--targets T ...] [--models NAME ...] [--modes default fit tile x86 fused] [--jobs N]
        [--cache DIR] [--keep DIR]

BASE is a commit of this repository (extracted with `git archive` and generated once into
--cache, default ~/.cache/edgecc-compare/<commit>, so later runs only generate this checkout).
Every job is `edgecc compile MODEL --target T --name m -o OUT` plus a mode's flags, run through
the tree's own command line (`edgecc.cli.main`) in worker processes, so the comparison holds
across any refactoring of the Python API. Modes:

  default  no flag (ONNX models skip it when x86 is asked for: their default is one of the two
           named numerics, and it changed from x86 to fused)
  fit      --scratch fit          (cortex-m4, cortex-m55 only)
  tile     --tiling auto          (cortex-m4, cortex-m55, aarch64, x86-avx2 only)
           (fit and tile: ONNX models under the x86 numerics, the default before it became
           fused, so that they compare across that change too)
  x86      ONNX only: onnxruntime's x86 default numerics (`--onnx-float integer` before the
           numerics option was renamed, `--onnx-numerics x86` after)
  fused    ONNX only: the fused integer numerics (`--onnx-float fused` / `--onnx-numerics fused`)

A refusal is recorded as ERROR.txt, so a changed refusal shows too. Normalization: C names
`ec_*`/`EC_*` -> one token, `#include "..."` lines dropped, runtime header paths, template paths and
Python module paths in comments -> one token. Runtime headers themselves are not compared (their
split is expected); each differing file prints the first lines of its diff. Exits 1 when anything
differs.
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("EDGECC_SHARED", ROOT.parent / "shared"))
TARGETS = ("host", "x86-avx2", "x86-avx512", "cortex-m4", "cortex-m7", "cortex-m33",
           "cortex-m55", "aarch64")
SETS = ("tflite", "converter", "onnx_models", "onnx")
MODE_TARGETS = {"fit": ("cortex-m4", "cortex-m55"),
                "tile": ("cortex-m4", "cortex-m55", "aarch64", "x86-avx2")}
ONNX_MODES = {"x86": ("integer", "x86"), "fused": ("fused", "fused")}  # (old flag value, new)
DEFAULT_MODES = ("default", "fit", "tile", "x86", "fused")


def models(sets: list[str], only: list[str] | None) -> list[Path]:
    found = []
    for s in sets:
        d = SHARED / "models" / s
        if not d.is_dir():
            sys.exit(f"compare_generated: {d} is missing")
        if s == "onnx":  # the conformance cases: one folder each with model.onnx
            found += sorted(d.glob("*/model.onnx"))
        else:
            found += sorted(p for p in d.iterdir() if p.suffix in (".tflite", ".onnx"))
    return [m for m in found if not only or _label(m) in only]


def _label(m: Path) -> str:
    return m.parent.name if m.name == "model.onnx" else m.stem


def jobs_for(ms: list[Path], targets: list[str], modes: list[str]) -> list[tuple[str, str, str]]:
    out = []
    for m in ms:
        onnx = m.suffix == ".onnx"
        for t in targets:
            for mode in modes:
                if mode in ONNX_MODES and not onnx:
                    continue
                if mode == "default" and onnx and "x86" in modes:
                    continue  # an ONNX model's default is one of the two named modes
                if mode in MODE_TARGETS and t not in MODE_TARGETS[mode]:
                    continue
                out.append((str(m), t, mode))
    return out


def _flags(tree: Path, mode: str, model: str = "") -> list[str]:
    renamed = "--onnx-numerics" in _cli_text(tree)
    if mode in ("fit", "tile"):
        # an ONNX model under the numerics every tree can give: the old default, x86 (the
        # default became fused with the rename's tree; before the rename x86 is the default)
        x86 = ["--onnx-numerics", "x86"] if renamed and model.endswith(".onnx") else []
        return (["--scratch", "fit"] if mode == "fit" else ["--tiling", "auto"]) + x86
    if mode in ONNX_MODES:
        old, new = ONNX_MODES[mode]
        return ["--onnx-numerics", new] if renamed else ["--onnx-float", old]
    return []


def _cli_text(tree: Path) -> str:
    cli = tree / "edgecc" / "cli"
    files = sorted(cli.rglob("*.py")) if cli.is_dir() else [tree / "edgecc" / "cli.py"]
    return "".join(p.read_text() for p in files if p.exists())


def _worker(args: tuple[str, str, list[tuple[str, str, str]]]) -> list[str]:
    """Runs in a fresh process whose sys.path starts with the tree: one compile per job."""
    tree, out, jobs = args
    code = (
        "import contextlib, io, json, os, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from edgecc.cli import main\n"
        "env = dict(os.environ)\n"
        "for line in sys.stdin:\n"
        "    argv, dest = json.loads(line)\n"
        "    os.environ.clear(); os.environ.update(env)\n"
        "    err = io.StringIO()\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):\n"
        "        try:\n"
        "            rc = main(argv)\n"
        "        except SystemExit as e:\n"
        "            rc = e.code\n"
        "    if rc not in (0, None):\n"
        "        os.makedirs(dest, exist_ok=True)\n"
        "        lines = err.getvalue().strip().splitlines() or ['exit %s' % rc]\n"
        "        open(os.path.join(dest, 'ERROR.txt'), 'w').write(lines[-1] + '\\n')\n"
        "    print(dest, rc, flush=True)\n")
    env = dict(os.environ, EDGECC_SHARED=str(SHARED), EDGECC_NO_PROGRESS="1")
    env.pop("PYTHONPATH", None)
    feed = []
    for model, target, mode in jobs:
        dest = Path(out) / _label(Path(model)) / f"{target}-{mode}"
        argv = ["compile", model, "--target", target, "--name", "m", "-o", str(dest)]
        feed.append(repr_json([argv + _flags(Path(tree), mode, model), str(dest)]))
    r = subprocess.run([sys.executable, "-c", code, tree], input="\n".join(feed) + "\n",
                       capture_output=True, text=True, env=env, cwd=tree)
    if r.returncode:
        return [f"worker failed: {r.stderr.strip()[-2000:]}"]
    return r.stdout.splitlines()


def repr_json(x) -> str:
    import json
    return json.dumps(x)


def generate(tree: Path, out: Path, jobs: list[tuple[str, str, str]], n: int) -> None:
    todo = [j for j in jobs
            if not (out / _label(Path(j[0])) / f"{j[1]}-{j[2]}").exists()]
    if not todo:
        return
    chunks = [(str(tree), str(out), todo[i::n * 4]) for i in range(n * 4) if todo[i::n * 4]]
    with ProcessPoolExecutor(n) as ex:
        for lines in ex.map(_worker, chunks):
            for ln in lines:
                if ln.startswith("worker failed"):
                    sys.exit(f"compare_generated: {tree}: {ln}")


_KERNEL = re.compile(r"\b(ec|EC)_[A-Za-z0-9_]+")
_TEMPLATE = re.compile(r"(kernel )\S+\.c\.j2")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"[^"]*".*$')
_HEADER = re.compile(r"\b(runtime_c/)?[\w/*]*(edgecc_\w+|/[\w*]+)\.h\b")
_MODULE = re.compile(r"\b(edgecc/)?[\w/]+\.py\b")  # Python modules cited in comments (moved)


def normalize(text: str) -> list[str]:
    lines = []
    for line in text.splitlines():
        if _INCLUDE.match(line):
            continue
        line = _MODULE.sub("M.py", _HEADER.sub("H.h", _TEMPLATE.sub(r"\1T", line)))
        lines.append(_KERNEL.sub("ec_K", line))
    return lines


def compare(base: Path, new: Path, jobs: list[tuple[str, str, str]]) -> int:
    bad = 0
    for model, target, mode in jobs:
        rel = Path(_label(Path(model))) / f"{target}-{mode}"
        a, b = base / rel, new / rel
        names = sorted({p.name for p in a.glob("*") if _compared(p)}
                       | {p.name for p in b.glob("*") if _compared(p)})
        diffs = []
        for f in names:
            if not (a / f).exists() or not (b / f).exists():
                diffs.append(f"{f}: only in {'new' if (b / f).exists() else 'base'}")
                continue
            la, lb = normalize((a / f).read_text()), normalize((b / f).read_text())
            if la != lb:
                d = list(difflib.unified_diff(la, lb, "base", "new", lineterm="", n=1))
                diffs.append(f"{f}: {len(d)} diff lines\n    " + "\n    ".join(d[2:14]))
        if diffs:
            bad += 1
            print(f"DIFF {rel}:\n  " + "\n  ".join(diffs))
    print(f"{len(jobs)} outputs compared, {bad} differ")
    return 1 if bad else 0


def _compared(p: Path) -> bool:
    return p.is_file() and (p.name in ("ERROR.txt", "m.h") or p.suffix == ".c")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", help="a commit of this repository")
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--targets", nargs="+", default=list(TARGETS))
    ap.add_argument("--models", nargs="+", help="model names (file stems / conformance folders)")
    ap.add_argument("--modes", nargs="+", default=list(DEFAULT_MODES),
                    choices=("default",) + tuple(MODE_TARGETS) + tuple(ONNX_MODES))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--keep", type=Path, help="write this checkout's output here (else a temp dir)")
    a = ap.parse_args(argv)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", a.base], check=True,
                            capture_output=True, text=True).stdout.strip()
    cache = a.cache or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") \
        / "edgecc-compare" / commit
    tree = cache / "tree"
    if not (tree / "edgecc").is_dir():
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    jobs = jobs_for(models(a.sets, a.models), a.targets, a.modes)
    generate(tree, cache / "out", jobs, a.jobs)
    new = a.keep or Path(tempfile.mkdtemp(prefix="edgecc_cmp_"))
    if new.exists():
        shutil.rmtree(new)
    generate(ROOT, new, jobs, a.jobs)
    print(f"base {commit[:10]} ({cache / 'out'}), new {ROOT} ({new})")
    return compare(cache / "out", new, jobs)


if __name__ == "__main__":
    sys.exit(main())
