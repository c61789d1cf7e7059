"""`python3 -m benchmarks.gate`: the performance gate from exact counts (issue 30).

Owns: which rows there are (every model of ../shared/models/tflite, converter and onnx_models,
in edgecc's default options, on every target the baseline names: cortex-m4 and cortex-m55 today),
measuring one row (compile, build the seed-0 one-frame harness, and run it under QEMU: the exact
instructions per inference of edgecc.build.qemu, flash from the linked ELF, the planned arena;
the per-layer profile when updating, or when a row got worse, to name the layers that grew), and
the command: check every row against benchmarks/baseline.json (exit 1 naming what is worse), or
`--update --reason "..."` to re-measure and rewrite the baseline (a reason line is required, and
rows are re-measured in parallel with -j). benchmarks/baseline.py holds the file and the rule.

Usage: python3 -m benchmarks.gate [--models M ...] [--targets T ...] [--baseline F] [--no-cache]
       python3 -m benchmarks.gate --update --reason "why" [-j 2] [--models ...] [--targets ...]
"""
from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from benchmarks.baseline import BASELINE, Baseline, compare, layer_rows, load, save

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("EDGECC_SHARED", REPO.parent / "shared"))  # as tests/conftest.py
SETS = ("tflite", "converter", "onnx_models")
SUFFIXES = (".tflite", ".onnx")


def model_files(shared: Path = SHARED) -> dict[str, Path]:
    """name -> path of every gated model (the sets' folders; a missing folder is an error)."""
    out = {}
    for s in SETS:
        d = shared / "models" / s
        if not d.is_dir():
            raise FileNotFoundError(f"{d} is missing: the shared models must sit beside the "
                                    f"checkout")
        out.update({p.stem: p for p in sorted(d.iterdir()) if p.suffix in SUFFIXES})
    return out


def commit() -> str:
    """HEAD's short hash, `+dirty` when tracked files have uncommitted changes."""
    def git(*a):
        return subprocess.run(["git", "-C", str(REPO), *a], capture_output=True,
                              text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def toolchain() -> dict:
    """The versions a count depends on (another compiler or QEMU gives other counts)."""
    def first(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
            return (r.stdout or r.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "unavailable"
    return dict(arm_gcc=first(["arm-none-eabi-gcc", "--version"]),
                qemu=first(["qemu-system-arm", "--version"]).replace("QEMU emulator version ", ""))


def measure_row(model: Path, target_name: str, profile: bool = False,
                cache: bool = True) -> dict:
    """One row measured for real: instructions per inference (QEMU, exact), flash and arena;
    with `profile`, the per-layer counts of the profile build too."""
    from edgecc.build.boards import default_board
    from edgecc.build.harness import harness_frames_c
    from edgecc.build.qemu import profile_layers, run_on_qemu
    from edgecc.codegen import write_files
    from edgecc.compile_cache import compile_cached
    from edgecc.targets import get_target
    from edgecc.verify.reference import seeded_frames
    target = get_target(target_name)
    c = compile_cached(model, target, "model", None, use_cache=cache)
    with tempfile.TemporaryDirectory(prefix="edgecc-gate-") as tmp:
        work = Path(tmp)
        write_files(c.files, work / "gen")
        h = work / "harness.c"
        h.write_text(harness_frames_c(c.name, seeded_frames(c.graph, 0, 1), len(c.graph.outputs),
                                      run_io=bool(c.plan.external)))
        info: dict = {}
        run_on_qemu(c, work / "gen", h, work, None, target.name, None, False, info)
        row = dict(model=model.stem, target=target.name, instructions=info["instructions"],
                   flash_bytes=info["flash_bytes"], arena_bytes=c.plan.arena)
        if profile:
            row["layers"] = layer_rows(profile_layers(c, work / "gen", h, work,
                                                      default_board(target.name), None))
    return row


def check_row(model: Path, target: str, base: Baseline, cache: bool = True
              ) -> tuple[list[str], list[str]]:
    """(failures, improvements) of one row against the baseline; a row that got worse is
    measured again with its per-layer profile, to name the layers that grew."""
    key = (model.stem, target)
    if key not in base.rows:
        return [f"{model.stem} on {target}: no baseline row (add it: {update_hint()})"], []
    got = measure_row(model, target, cache=cache)
    worse, better = compare(base.rows[key], got, base.tolerance)
    if worse:
        got = measure_row(model, target, profile=True, cache=cache)
        worse, better = compare(base.rows[key], got, base.tolerance)
    return worse, better


def update_hint(models=None) -> str:
    only = f" --models {' '.join(models)}" if models else ""
    return f'python3 -m benchmarks.gate --update{only} --reason "..."'


def _measure_args(a) -> dict:
    return measure_row(*a)


def update(base: Baseline, rows: list[tuple[Path, str]], reason: str, jobs: int = 1,
           cache: bool = True, log=print) -> list[str]:
    """Re-measure `rows` (with their profiles) into `base` and add the reason line; returns the
    lines saying what changed."""
    stamp = commit()  # the code measured is the tree as it is now
    args = [(m, t, True, cache) for m, t in rows]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            got = list(ex.map(_measure_args, args))
    else:
        got = [_measure_args(a) for a in args]
    changes, count = [], dict(new=0, worse=0, better=0)
    for r in got:
        r["commit"] = stamp
        old = base.rows.get((r["model"], r["target"]))
        if old is None:
            changes.append(f"{r['model']} on {r['target']}: new row")
            count["new"] += 1
        else:
            worse, better = compare(old, r, base.tolerance)
            changes += [f"worse: {w}" for w in worse] + [f"better: {b}" for b in better]
            count["worse"] += bool(worse)
            count["better"] += bool(better) and not worse
        base.rows[(r["model"], r["target"])] = r
        log(f"{r['model']:32s} {r['target']:11s} {r['instructions']:>12,} instr  flash "
            f"{r['flash_bytes']:,}  arena {r['arena_bytes']:,}")
    day = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    base.reasons.append(f"{day} {stamp}: {reason} ({len(got)} rows measured: "
                        + ", ".join(f"{n} {k}" for k, n in count.items()) + ")")
    base.toolchain = toolchain()
    return changes


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.gate",
                                description=__doc__.split("\n")[0])
    p.add_argument("--models", nargs="+", metavar="M", help="only these models (names)")
    p.add_argument("--targets", nargs="+", metavar="T",
                   help="only these targets (default: the baseline's); with --update, a target "
                        "the baseline lacks is added to it")
    p.add_argument("--baseline", type=Path, default=BASELINE)
    p.add_argument("--update", action="store_true", help="re-measure and rewrite the baseline")
    p.add_argument("--reason", help="with --update (required): why the figures changed, kept as "
                                    "a line in the file")
    p.add_argument("-j", "--jobs", type=int, default=1, help="rows measured at once (--update)")
    p.add_argument("--no-cache", action="store_true", help="compile without the compile cache")
    args = p.parse_args(argv)
    if args.update and not (args.reason or "").strip():
        p.error("--update needs --reason \"why the figures changed\" (a line in the file)")
    base = load(args.baseline) if args.baseline.is_file() else Baseline([])
    files = model_files()
    names = args.models or sorted(files)
    unknown = [n for n in names if n not in files]
    if unknown:
        p.error(f"unknown model(s): {', '.join(unknown)} (not in {SHARED / 'models'})")
    targets = args.targets or base.targets
    if not targets:
        p.error("no targets: give --targets (the baseline names none yet)")
    rows = [(files[n], t) for t in targets for n in names]
    if args.update:
        base.targets += [t for t in targets if t not in base.targets]
        for line in update(base, rows, args.reason.strip(), args.jobs, not args.no_cache):
            print(line)
        save(base, args.baseline)
        print(f"wrote {args.baseline} ({len(rows)} rows measured)")
        return 0
    failed = 0
    for model, t in rows:
        worse, better = check_row(model, t, base, not args.no_cache)
        for line in worse:
            print(f"FAIL {line}")
        for line in better:
            print(f"better {line}: update the baseline ({update_hint([model.stem])})")
        failed += bool(worse)
        if not worse and not better:
            print(f"ok   {model.stem} on {t}")
    if failed:
        print(f"{failed} row(s) worse than the baseline by more than {base.tolerance:.0%}; if "
              f"intended: {update_hint()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
