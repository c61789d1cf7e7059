"""`edgecc compile MODEL --target T | --board B --name NAME -o OUT`: the C, the build files of
--emit and the manifest written to OUT; one line (or --json object) saying what was written. With
--board, a model that cannot fit the board is refused (exit 1, budget's OVER lines, nothing
written) unless --no-fit-check (edgecc/budget.py fit_check)."""
from __future__ import annotations

import json
from pathlib import Path

from edgecc.api import output_files
from edgecc.budget import fit_check
from edgecc.build.boards import board_options
from edgecc.cli.common import (add_cache, add_io, add_target, add_weights_section, model_name,
                               nonempty, options_from_args, resolve_target, use_cache)
from edgecc.codegen import write_files
from edgecc.compile_cache import compile_cached
from edgecc.ir import DType


def add_parser(sub) -> None:
    p = sub.add_parser("compile", help="write C for a model")
    p.add_argument("model")
    add_target(p)
    p.add_argument("--name", default="model", type=model_name,
                   help="C prefix of the generated API (not edgecc*, a C keyword or a C header)")
    p.add_argument("-o", "--output", required=True, type=nonempty("-o"), help="output folder")
    p.add_argument("--json", action="store_true")
    add_io(p)
    add_weights_section(p)
    add_cache(p)
    p.add_argument("--emit", action="append", choices=["cmake", "make", "zephyr"],
                   help="also write build files: a CMake library (+ toolchain file; for a "
                        "bare-metal board the startup code and linker script of the device build, "
                        "real memory map, and of the qemu test build), a Make fragment (with the "
                        "same board files), a Zephyr module (repeatable)")
    p.add_argument("--no-fit-check", action="store_true",
                   help="with --board: write the C even when the model cannot fit the board "
                        "(by default compile refuses it, exit 1, as budget would)")
    p.set_defaults(fn=run)


def run(args) -> int:
    target, board = resolve_target(args)
    c = compile_cached(args.model, target, args.name,
                       board_options(options_from_args(args), board), use_cache(args))
    fit = fit_check(c, str(args.model), board) if board and not args.no_fit_check else None
    if fit is not None and fit.over:
        if args.json:
            print(json.dumps(dict(model=str(args.model), target=target.name, name=args.name,
                                  files=[], fits=False, budget=fit.as_json())))
        else:
            print("\n".join([f"{args.model} does not fit {board.name} ({fit.method}):",
                             *fit.tiling_lines(), *fit.verdict(),
                             "nothing written; --no-fit-check writes the C anyway"]))
        return 1
    files = output_files(c, args.model, target, board, args.emit or [])
    paths = write_files(files, Path(args.output))
    info = dict(model=str(args.model), target=target.name, name=args.name,
                files=[str(p) for p in paths], arena_bytes=c.plan.arena,
                lower_bound_bytes=c.plan.model_lower_bound,
                planned_peak_bytes=c.plan.lower_bound, weights_bytes=c.weights_bytes,
                compile_seconds=round(c.seconds, 3), tiling=c.stats.get("tiling"),
                compile_cache=c.stats.get("compile_cache"))
    info.update(precision(c.graph))
    if fit is not None:
        info.update(fits=True, budget=fit.as_json())
    if args.json:
        print(json.dumps(info))
    else:
        print(f"wrote {len(paths)} files to {args.output}: arena {c.plan.arena} B "
              f"(lower bound {c.plan.model_lower_bound} B), weights {c.weights_bytes} B, "
              f"{c.seconds:.2f} s; {info['precision_summary']}")
        if fit is not None:
            print(*fit.tiling_lines(), fit.fits_line(), sep="\n")
    return 0


_EDGES = {"QUANTIZE", "DEQUANTIZE"}  # conversions at the edges of float regions


def precision(g) -> dict:
    """How the model computes: 'float32' (every layer in float32: a float model), 'quantized'
    (no float32 layer), or 'mixed' with the count of float32 layers; the summary says it."""
    layers = [n for n in g.nodes if n.op not in _EDGES]
    fl = sum(1 for n in layers if all(g.type(v).dtype == DType.FLOAT32 for v in n.outputs))
    if layers and fl == len(layers):
        kind, text = "float32", "the model runs in float32 (no quantized layer)"
    elif fl:
        kind, text = "mixed", f"mixed: {fl} of {len(layers)} layers run in float32"
    else:
        kind, text = "quantized", "quantized: every layer runs in integer arithmetic"
    return dict(precision=kind, float32_layers=fl, layers=len(layers), precision_summary=text)
