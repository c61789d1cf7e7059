#!/usr/bin/env python3
"""Compare the C this checkout generates with the C a base commit generates, model by model and
target by target, apart from kernel names, include lines and runtime_c/ / template paths.

Usage: python3 scripts/compare_generated.py BASE [--targets T ...] [--models M ...] [--work DIR]
BASE is a commit of this repository (extracted with `git archive`); models default to every
.tflite in $EDGECC_SHARED/models/tflite (../shared), targets to host, x86-avx2, cortex-m4,
cortex-m55, aarch64. Base names are mapped through scripts/c_renames.json (old C name -> new)
before comparing NAME.c, NAME.h and NAME_weights.c line by line; each pair prints SAME or DIFF
with the runtime headers the new output holds. Exits 1 when any pair differs.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ("host", "x86-avx2", "cortex-m4", "cortex-m55", "aarch64")
SHARED = Path(os.environ.get("EDGECC_SHARED", ROOT.parent / "shared"))


def _extract(commit: str, dest: Path) -> None:
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def _compile(tree: Path, model: Path, target: str, out: Path) -> str:
    """'' when it compiled, else the error's last line."""
    env = dict(os.environ, PYTHONPATH=str(tree), EDGECC_SHARED=str(SHARED))
    r = subprocess.run([sys.executable, "-m", "edgecc", "compile", str(model), "--target", target,
                        "--name", "m", "-o", str(out)], cwd=tree, env=env, capture_output=True,
                       text=True)
    return "" if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1]


def _normal(text: str, rename) -> list[str]:
    text = rename(text)
    text = re.sub(r"runtime_c/[\w/*]+\.h", "runtime_c/H", text)   # header paths in comments
    text = re.sub(r"kernel [\w/]+\.c\.j2", "kernel T", text)      # template paths in comments
    return [ln for ln in text.split("\n") if not ln.lstrip().startswith("#include")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("base")
    ap.add_argument("--targets", nargs="+", default=list(TARGETS))
    ap.add_argument("--models", nargs="+")
    ap.add_argument("--work", type=Path)
    a = ap.parse_args()
    names = json.loads((ROOT / "scripts" / "c_renames.json").read_text())
    pat = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")\b")
    old = lambda t: pat.sub(lambda m: names[m.group(1)], t)  # noqa: E731
    models = [SHARED / "models" / "tflite" / f"{m}.tflite" for m in a.models] if a.models else \
        sorted((SHARED / "models" / "tflite").glob("*.tflite"))
    work = a.work or Path(tempfile.mkdtemp(prefix="edgecc_cmp_"))
    if work.exists():
        shutil.rmtree(work)
    _extract(a.base, work / "base")
    bad = 0
    for t in a.targets:
        for m in models:
            b, n = work / "out" / "base" / t / m.stem, work / "out" / "new" / t / m.stem
            eb, en = _compile(work / "base", m, t, b), _compile(ROOT, m, t, n)
            if eb or en:
                same = eb == en
                print(f"{t} {m.stem}: {'same error' if same else 'DIFF'}: {eb or 'ok'} | {en or 'ok'}")
                bad += not same
                continue
            diff = [f for f in ("m.c", "m.h", "m_weights.c")
                    if _normal((b / f).read_text(), old) != _normal((n / f).read_text(), str)]
            headers = sorted(p.relative_to(n).as_posix() for p in n.rglob("*.h") if p.name != "m.h")
            print(f"{t} {m.stem}: {'DIFF ' + ','.join(diff) if diff else 'SAME'}; "
                  f"headers: {' '.join(headers)}")
            bad += bool(diff)
    print(f"{bad} pair(s) differ (base {a.base}, work {work})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
