"""`python3 -m benchmarks.run`: benchmark the generated C on the shared models, all targets.

Owns: the command line, the model sets (../shared/models/tflite and ../shared/models/converter;
the `onnx` set, ../shared/models/onnx_models, is benchmarks/onnx_set.py's),
the loop over models x targets, collecting each cell's figures (from `edgecc.verify.verify_model`
over N consecutive frames for the QEMU targets; from host builds, qemu-x86_64 counts and the
timing harness for host / x86-avx2), and writing results.md / results.json (and, with --readme,
the summary blocks of README.md and docs/benchmarks.md), and, on the Cortex-M targets, the per-layer profile of benchmarks/profile.py.
A cell that fails (unsupported model, build error) becomes a footnoted error row;
the run goes on. Every row is stamped with the run's date and commit: results.md is one run of
one commit (benchmarks/table.py refuses anything else; there is no merging of runs).

Usage: python3 -m benchmarks.run [--targets T ...] [--sets tflite converter onnx] [--models M ...]
                                 [--frames N] [-o benchmarks/results.md] [--json PATH]
                                 [--readme README.md] [--no-latency]
                                 [--profile anchors|all|none]
       python3 -m benchmarks.run --render saved.json [-o ...] [--readme ...]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from edgecc.errors import EdgeccError
from edgecc.options import LEGACY_ONNX_FLOAT, ONNX_NUMERICS, CompileOptions

from benchmarks.anchors import load_anchors
from benchmarks.onnx_set import COMPARE_TARGET, compare_with_tflite, is_onnx, row_base, row_suffix
from benchmarks.profile import PROFILE_CHOICES
from benchmarks.table import (HOST_TARGETS, docs_block, readme_block, render_results,
                              update_readme)

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("EDGECC_SHARED", REPO.parent / "shared"))  # as tests/conftest.py
SETS = {"tflite": SHARED / "models" / "tflite", "converter": SHARED / "models" / "converter",
        "onnx": SHARED / "models" / "onnx_models"}
DEFAULT_SETS = ["tflite", "converter"]
SUFFIXES = (".tflite", ".onnx")
DEFAULT_TARGETS = ["cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55", "aarch64", "host",
                   "x86-avx2", "x86-avx512"]


def _version(cmd: list[str]) -> str:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unavailable"


def _pkg_version(name: str) -> str:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return "not installed"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_meta(argv: list[str], latency_cflags: list[str]) -> dict:
    commit = _version(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return dict(command="python3 -m benchmarks.run " + " ".join(argv),
                date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                cpu=cpu_model(), cores=os.cpu_count(), os=platform.platform(),
                commit=commit + (" (with uncommitted changes)" if dirty else ""),
                gcc=_version(["gcc", "--version"]),
                arm_gcc=_version(["arm-none-eabi-gcc", "--version"]),
                aarch64_gcc=_version(["aarch64-linux-gnu-gcc", "--version"]),
                qemu=_version(["qemu-system-arm", "--version"]).replace("QEMU emulator version ", ""),
                litert=_pkg_version("ai-edge-litert"), tflm=_pkg_version("tflite-micro"),
                latency_cflags=latency_cflags)


def model_paths(names: list[str] | None, models_dirs: list[Path]) -> list[Path]:
    """The .tflite / .onnx files of the sets' folders (no names), or the named models: a bare
    name is looked up in each folder in turn, anything with a suffix is a path."""
    if not names:
        paths = []
        for d in models_dirs:
            found = sorted(p for p in d.glob("*") if p.suffix in SUFFIXES)
            if not found:
                raise EdgeccError(f"no .tflite or .onnx models in {d}")
            paths += found
        return paths
    out = []
    for n in names:
        p = Path(n)
        if not p.suffix:
            p = next((d / f"{n}{s}" for d in models_dirs for s in SUFFIXES
                      if (d / f"{n}{s}").is_file()), models_dirs[0] / f"{n}.tflite")
        if not p.is_file():
            raise EdgeccError(f"{p}: no such model")
        out.append(p)
    return out


def _verified(r, compile_s: float) -> dict:
    """The figures every cell takes from a VerifyResult: exactness per frame, arena, bound."""
    frames = r.frames or [dict(bit_exact=r.bit_exact)]
    return dict(bit_exact=r.bit_exact, frames=len(frames),
                frames_exact=sum(1 for f in frames if f["bit_exact"]),
                first_bad_layer=r.first_bad_layer, arena_bytes=r.arena_bytes,
                lower_bound_bytes=r.lower_bound_bytes,  # the live-bytes lower bound
                compile_s=round(compile_s, 2),
                values_differing=r.extra.get("values_differing"))  # ONNX: vs onnxruntime


def bench_qemu(model: Path, target, frames: int = 1, profile: bool = False,
               options: CompileOptions | None = None) -> dict:
    """A Cortex-M or AArch64 cell: verify under QEMU gives the count (per frame, averaged over
    the frames), flash and bit-exactness of every frame; with `profile`, the same verify's
    profile build adds the per-layer counts (benchmarks/profile.py)."""
    from edgecc.verify import verify_model
    r = verify_model(model, target, frames=frames, profile=profile, options=options)
    x = r.extra
    out = dict(_verified(r, x.get("compile_seconds", 0.0)), instructions=x.get("instructions"),
               flash_bytes=x.get("flash_bytes"), code_bytes=x.get("code_bytes"),
               weights_flash_bytes=x.get("weights_flash_bytes"), board=x.get("board"))
    if profile:
        from benchmarks.profile import annotate
        out["profile"] = annotate(x["profile"], target.name)
    return out


def bench_host(model: Path, target, latency: bool, latency_cflags: list[str],
               budget_s: float, frames: int = 1, options: CompileOptions | None = None) -> dict:
    """A host / x86 cell: verify on the host, then count under qemu-x86_64, measure the
    objects and time the generated C."""
    from edgecc.codegen import write_files
    from edgecc.compiler import compile_model
    from edgecc.verify import verify_model
    from edgecc.build.harness import harness_c
    from edgecc.verify.reference import seeded_inputs

    from benchmarks.metrics import host_flash
    from benchmarks.x86 import PLAIN_CFLAGS, build_timer, count_instructions, time_c_tail
    r = verify_model(model, target, frames=frames, options=options)
    c = compile_model(model, target, "model", options)
    out = _verified(r, c.seconds)
    with tempfile.TemporaryDirectory(prefix="edgecc-bench-") as tmp:
        work = Path(tmp)
        gen = work / "gen"
        write_files(c.files, gen)
        h = work / "harness.c"
        h.write_text(harness_c(c.name, seeded_inputs(c.graph, 0), len(c.graph.outputs)))
        # QEMU's TCG implements AVX2 but not AVX-512: no exact count for x86-avx512
        out["instructions"] = (None if "avx512" in target.features else
                               count_instructions(gen, h, work, list(target.cflags)))
        sizes = host_flash(gen, work / "obj", ["-O2", *target.cflags])
        out.update(flash_bytes=sum(sizes.values()), code_bytes=sizes["code"],
                   weights_flash_bytes=sizes["weights"])
        if latency:
            exe = build_timer(gen, work, c.name, len(c.graph.inputs),
                              [*latency_cflags, *target.cflags])
            out["latency_us"], out["latency_p99_us"] = time_c_tail(exe, budget_s)
            # -O2 and the target's own flags only (x86-avx2: -mavx2 -mfma, kernels chosen at run
            # time; x86-avx512: AVX-512 F/BW/VL/VNNI, its 512-bit paths at compile time)
            exe = build_timer(gen, work / "plain", c.name, len(c.graph.inputs),
                              [*PLAIN_CFLAGS, *target.cflags])
            out["latency_plain_us"], out["latency_plain_p99_us"] = time_c_tail(exe, budget_s)
    return out


def run(models: list[Path], target_names: list[str], latency: bool = True,
        budget_s: float = 0.5, log=print, frames: int = 1, profile: str = "anchors",
        options: CompileOptions | None = None) -> tuple[dict, dict[str, list[dict]]]:
    from edgecc.compiler import load_model
    from edgecc.targets import get_target

    from benchmarks.metrics import count_macs, tflm_arena
    from benchmarks.profile import wants_profile
    from benchmarks.x86 import LATENCY_CFLAGS, time_litert, time_litert_tail
    targets = [get_target(t) for t in target_names]
    anchors = load_anchors(SHARED / "bench" / "anchors.md")
    results: dict[str, list[dict]] = {t.name: [] for t in targets}
    extra: dict = {}
    if latency and any(t.name in HOST_TARGETS for t in targets):
        floor = SHARED / "models" / "tflite" / "hello_world_int8.tflite"
        extra["litert_floor_us"] = time_litert(floor, 0.2) if floor.is_file() else None
    from edgecc.progress import progress
    options = options or CompileOptions()
    for model in progress(models, desc="benchmarks", unit="model"):
        name = model.stem + row_suffix(options.onnx_numerics) if is_onnx(model) else model.stem
        base: dict = dict(model=name)
        try:
            base.update(row_base(model) if is_onnx(model) else
                        dict(tflm_arena_bytes=tflm_arena(model)))
        except Exception:  # noqa: BLE001 - TFLM refusing the model leaves the column empty
            base["tflm_arena_bytes"] = None
        try:
            base["macs"] = count_macs(load_model(model, options))
        except EdgeccError as e:
            base["error"] = str(e)
        litert = None
        litert_done = False
        for t in targets:
            row = dict(base)
            a = anchors.get(t.name, name)
            row["anchor"] = a.__dict__ if a else None
            if "error" not in row:
                try:
                    if t.name in HOST_TARGETS:
                        row.update(bench_host(model, t, latency, LATENCY_CFLAGS, budget_s,
                                              frames, options))
                        if latency and not litert_done and not is_onnx(model):
                            # measured right after the generated C: same machine state
                            litert, litert_done = time_litert_tail(model, budget_s), True
                        row["litert_us"], row["litert_p99_us"] = litert or (None, None)
                    else:
                        row.update(bench_qemu(model, t, frames,
                                              wants_profile(profile, name, t.name), options))
                except (EdgeccError, subprocess.SubprocessError, OSError) as e:
                    row["error"] = str(e).splitlines()[0] if str(e) else type(e).__name__
            results[t.name].append(row)
            log(f"{name:32s} {t.name:11s} " + (f"error: {row['error']}" if row.get("error") else
                f"{row.get('instructions') or 0:>12,} instr  arena {row.get('arena_bytes')}"
                f"  exact {row.get('frames_exact')}/{row.get('frames')}"
                + (f"  {row['latency_us']:.1f} us ({row.get('latency_plain_us', 0):.1f} us -O2 + "
                   f"target flags) vs LiteRT {row.get('litert_us')}"
                   if row.get("latency_us") else "")))
    if any(is_onnx(m) for m in models) and COMPARE_TARGET in results:
        extra["onnx_vs_tflite"] = compare_with_tflite(
            results, SETS["tflite"], lambda p: bench_qemu(p, get_target(COMPARE_TARGET), frames),
            log)
    return extra, results


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(prog="python3 -m benchmarks.run", description=__doc__.split("\n")[0])
    p.add_argument("--targets", nargs="+", default=DEFAULT_TARGETS, metavar="T",
                   help=f"edgecc targets (default: {' '.join(DEFAULT_TARGETS)})")
    p.add_argument("--sets", nargs="+", choices=sorted(SETS), default=DEFAULT_SETS,
                   help="model folders of ../shared/models to run (default: tflite converter; "
                        "onnx: the quantized ONNX models, with the tfl_*_qdq against their "
                        "TFLite originals)")
    p.add_argument("--models", nargs="+", metavar="M",
                   help="model names (looked up in the --sets folders) or .tflite / .onnx paths "
                        "(default: every model of the sets)")
    p.add_argument("--frames", type=int, default=5,
                   help="consecutive frames verified per cell, after one name_reset (default 5)")
    p.add_argument("-o", "--output", type=Path, default=REPO / "benchmarks" / "results.md")
    p.add_argument("--json", type=Path, help="also write the raw figures as JSON")
    p.add_argument("--readme", type=Path,
                   help="replace README's benchmarks block with the short summary, and that of "
                        "docs/benchmarks.md beside it (when there) with every model's ratios")
    p.add_argument("--no-latency", action="store_true", help="skip the x86 latency timings")
    p.add_argument("--budget", type=float, default=0.5,
                   help="seconds of timed runs per latency figure (default 0.5)")
    p.add_argument("--profile", choices=PROFILE_CHOICES, default="anchors",
                   help="per-layer instruction profile on the Cortex-M targets (one more QEMU "
                        "build per cell): of issue 16's six anchor models (default), of every "
                        "model, or none")
    p.add_argument("--onnx-numerics", choices=list(ONNX_NUMERICS),
                   help="edgecc's --onnx-numerics for the ONNX models (default: edgecc's); rows "
                        "of another numerics are named MODEL@NUMERICS (onnx_set.row_suffix)")
    p.add_argument("--onnx-float", choices=list(LEGACY_ONNX_FLOAT),
                   help="the old spelling of --onnx-numerics")
    p.add_argument("--render", type=Path, metavar="JSON",
                   help="measure nothing: rewrite -o (and --readme) from a saved --json file")
    args = p.parse_args(argv)
    options = CompileOptions(onnx_numerics=args.onnx_numerics
                             or LEGACY_ONNX_FLOAT.get(args.onnx_float or "")
                             or CompileOptions().onnx_numerics)
    from benchmarks.x86 import LATENCY_CFLAGS
    from edgecc.progress import say
    if args.render:
        saved = json.loads(args.render.read_text())
        try:
            _write(args, saved["meta"], saved["results"])
        except ValueError as e:
            print(f"benchmarks: error: {e}", file=sys.stderr)
            return 2
        return 0
    try:
        models = model_paths(args.models, [SETS[s] for s in args.sets])
        from edgecc.targets import get_target
        for t in args.targets:
            get_target(t)
        meta = machine_meta(argv, LATENCY_CFLAGS)
        extra, results = run(models, args.targets, not args.no_latency, args.budget,
                             log=say, frames=args.frames, profile=args.profile,
                             options=options)
        for rows in results.values():
            for r in rows:
                r.update(measured=meta["date"], commit=meta["commit"])
    except EdgeccError as e:
        print(f"benchmarks: error: {e}", file=sys.stderr)
        return 2
    meta.update(extra)
    try:
        _write(args, meta, results)
    except ValueError as e:
        print(f"benchmarks: error: {e}", file=sys.stderr)
        return 2
    return 0


def _write(args, meta: dict, results: dict[str, list[dict]]) -> None:
    """The JSON first (a long run's figures are kept even when rendering refuses them), then
    results.md: the repository's own (and the summaries of --readme) only from a clean commit."""
    if args.json:
        args.json.write_text(json.dumps(dict(meta=meta, results=results), indent=1))
    own = {(REPO / "benchmarks" / "results.md").resolve(), (REPO / "README.md").resolve()}
    clean = args.output.resolve() in own or bool(args.readme and args.readme.resolve() in own)
    text = render_results(meta, results, clean)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    if args.readme:  # README's short summary, and docs/benchmarks.md's table beside it
        docs = args.readme.resolve().parent / "docs" / "benchmarks.md"
        update_readme(args.readme, readme_block(meta, results, _link(docs, args.readme)))
        if docs.is_file():
            update_readme(docs, docs_block(meta, results, _link(args.output, docs)))
    print(f"wrote {args.output}", file=sys.stderr)


def _link(path: Path, page: Path) -> str:
    """`path` as a markdown link from `page` (relative where they share a folder tree)."""
    return os.path.relpath(path.resolve(), page.resolve().parent)


if __name__ == "__main__":
    sys.exit(main())
