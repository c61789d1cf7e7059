"""Generate the C of every shared TFLite model for every target, and compare two such folders.

Issue 11's "behaviour unchanged" check: moving kernel choice into edgecc/lower/ and splitting the
runtime headers must leave the bodies of the generated NAME.c / NAME.h / NAME_weights.c unchanged
apart from kernel names and include lines.

    python3 scripts/gen_compare.py gen OUT [--models DIR] [--targets t1,t2] [--jobs N]
    python3 scripts/gen_compare.py compare BASE NEW

`gen` writes OUT/<model>/<target>[-fit]/ for every model x target (the default scratch policy),
plus the MODES below (`--scratch fit`, `--tiling auto`) on a few targets, and kernels.txt (the
variant and scratch of every layer).
`compare` normalizes each generated model file (C kernel names `ec_*` -> `ec_K`, runtime header
paths -> `H.h`, the template path in the layer comment, `#include "..."` lines dropped) and lists
every file that differs, exiting 1 when any does. Runtime headers are not compared (their split is expected).
Run it from a worktree root with PYTHONPATH=$PWD so the worktree's edgecc is used.
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

TARGETS = ("host", "x86-avx2", "x86-avx512", "cortex-m4", "cortex-m7", "cortex-m33",
           "cortex-m55", "aarch64")
# extra modes: --scratch fit (lower_graph's fallback to portable kernels) and --tiling auto
# (memory first: plan/stream.py's prefer_streaming swaps in portable streaming kernels)
MODES = {"fit": ("cortex-m4", "cortex-m55"), "tile": ("cortex-m4", "cortex-m55", "aarch64",
                                                     "x86-avx2")}
DEFAULT_MODELS = Path(os.environ.get("EDGECC_SHARED", "/work/shared")) / "models" / "tflite"
NAME = "net"


def _one(job: tuple[str, str, str, str]) -> str:
    model, target, mode, out = job
    from edgecc.codegen import write_files
    from edgecc.compiler import compile_model
    from edgecc.errors import EdgeccError
    from edgecc.targets import get_target
    try:
        c = compile_model(model, get_target(target), NAME, scratch="fit" if mode == "fit" else "any",
                          tiling="auto" if mode == "tile" else "off")
    except EdgeccError as e:  # recorded, so a changed refusal also shows in the comparison
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "ERROR.txt").write_text(str(e) + "\n")
        return f"{out}: error {e}"
    files = {k: v for k, v in c.files.items() if k.startswith(NAME)}
    # the kernel chosen per layer (variant and scratch; the reasons' wording may change)
    files["kernels.txt"] = "".join(f"{lw.node.op} {lw.node.index} {lw.kernel.variant} "
                                   f"{lw.kernel.scratch}\n" for lw in c.lowered)
    write_files(files, Path(out))
    return f"{out}: {len(c.files)} files"


def gen(out: Path, models: Path, targets: list[str], jobs: int) -> int:
    todo = []
    for m in sorted(models.glob("*.tflite")):
        for t in targets:
            todo.append((str(m), t, "any", str(out / m.stem / t)))
            for mode, ts in MODES.items():
                if t in ts:
                    todo.append((str(m), t, mode, str(out / m.stem / f"{t}-{mode}")))
    with ProcessPoolExecutor(jobs) as ex:
        for line in ex.map(_one, todo):
            print(line, flush=True)
    return 0


_KERNEL = re.compile(r"\bec_[A-Za-z0-9_]+")
_TEMPLATE = re.compile(r"(kernel )\S+\.c\.j2")
_INCLUDE = re.compile(r'^\s*#\s*include\s+"[^"]*".*$')
_HEADER = re.compile(r"\b(runtime_c/)?[\w/*]*(edgecc_\w+|/[\w*]+)\.h\b")  # a header's path


def normalize(text: str) -> list[str]:
    lines = []
    for line in text.splitlines():
        if _INCLUDE.match(line):
            continue
        line = _HEADER.sub("H.h", _TEMPLATE.sub(r"\1T", line))
        lines.append(_KERNEL.sub("ec_K", line))
    return lines


def compare(base: Path, new: Path) -> int:
    bad = 0
    rel = sorted({p.relative_to(base) for p in base.rglob("*") if p.is_file()}
                 | {p.relative_to(new) for p in new.rglob("*") if p.is_file()})
    for r in rel:
        a, b = base / r, new / r
        if not a.exists() or not b.exists():
            print(f"only in {'new' if b.exists() else 'base'}: {r}")
            bad += 1
            continue
        la, lb = normalize(a.read_text()), normalize(b.read_text())
        if la != lb:
            bad += 1
            diff = list(difflib.unified_diff(la, lb, str(a), str(b), lineterm="", n=1))
            print(f"differs: {r} ({len(diff)} diff lines)")
            print("\n".join(diff[:20]))
    print(f"{len(rel)} files compared, {bad} differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("out", type=Path)
    g.add_argument("--models", type=Path, default=DEFAULT_MODELS)
    g.add_argument("--targets", default=",".join(TARGETS))
    g.add_argument("--jobs", type=int, default=1)
    c = sub.add_parser("compare")
    c.add_argument("base", type=Path)
    c.add_argument("new", type=Path)
    a = ap.parse_args(argv)
    if a.cmd == "gen":
        return gen(a.out, a.models, a.targets.split(","), a.jobs)
    return compare(a.base, a.new)


if __name__ == "__main__":
    sys.exit(main())
