"""The `edgecc` command line: argument parsing, human tables and --json output, exit codes.

Owns: the verbs and flags (the DESIGN.md contract), turning the flags into one CompileOptions
value (`options_from_args`: the only place that reads the environment variables giving flags
their defaults: $EDGECC_SCRATCH, $EDGECC_TILING, $EDGECC_ONNX_NUMERICS (or the old
$EDGECC_ONNX_FLOAT), $EDGECC_ORT_THREADS), turning every EdgeccError into one line on stderr with
exit status 2, any other exception (a bug) into exit 3, and never letting a traceback reach the
user.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from edgecc.diagnostics import EXIT_BAD_INPUT, EXIT_INTERNAL, internal_message, report
from edgecc.errors import EdgeccError
from edgecc.options import LEGACY_ONNX_FLOAT, ONNX_NUMERICS, CompileOptions
from edgecc.targets import TARGETS, get_target
from edgecc.verify.onnx_ref import oracle_label


_JSON_ERRORS = False  # --json anywhere on the command line: argument errors as JSON too


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse prints usage + message)
        report("error", message, _JSON_ERRORS)
        self.exit(EXIT_BAD_INPUT)


def _nonempty(what: str):
    def check(s: str) -> str:
        if not s.strip():
            raise argparse.ArgumentTypeError(f"{what} must not be empty")
        return s
    return check


def _seed(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed must be an integer, not {s!r}") from None
    if not 0 <= v < 2**32:
        raise argparse.ArgumentTypeError(f"--seed must be in [0, 2^32), not {v}")
    return v


def _model_name(s: str) -> str:
    from edgecc.names import model_name_problem
    problem = model_name_problem(s)
    if problem:
        raise argparse.ArgumentTypeError(f"--name {s!r} {problem}")
    return s


def _add_target(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", choices=sorted(TARGETS), help="target core / ISA")
    p.add_argument("--board", type=_nonempty("--board"),
                   help="board name (boards/) or path to a board file")
    p.add_argument("--scratch", choices=["fit", "any"],
                   help="kernel scratch: 'fit' uses an optimized kernel only where its scratch fits "
                        "in RAM dead at its step (arena = activation peak); 'any' always takes the "
                        "fastest kernel (default: $EDGECC_SCRATCH or 'any')")
    _add_numerics(p)
    _add_tiling(p)


def _add_numerics(p: argparse.ArgumentParser) -> None:
    p.add_argument("--onnx-numerics", choices=list(ONNX_NUMERICS),
                   help="how ONNX DequantizeLinear -> op -> QuantizeLinear groups compute: "
                        "'fused', every group as the integer kernel onnxruntime fuses it into "
                        "where int8 is allowed (Arm CPUs; x86 with session.qdqisint8allowed=1, "
                        "which verify then sets), as fast as the TFLite path; 'x86', onnxruntime's "
                        "x86 default, whose int8 Conv/MatMul groups run in float32, reproduced "
                        "exactly on integer kernels with a near-tie check; 'x86-float', the same "
                        "in onnxruntime's float32 order throughout, slower; the x86 numerics "
                        "follow onnxruntime on $EDGECC_ORT_THREADS threads (default: the CPU "
                        f"count) (default: $EDGECC_ONNX_NUMERICS or "
                        f"'{CompileOptions().onnx_numerics}')")
    p.add_argument("--onnx-float", choices=list(LEGACY_ONNX_FLOAT),
                   help="the old spelling of --onnx-numerics: integer = x86, ort = x86-float, "
                        "fused = fused")


def options_from_args(args) -> CompileOptions:
    """The one CompileOptions of a command line: its flags, else the environment variables that
    give them defaults, else CompileOptions' defaults."""
    env = os.environ
    numerics = (getattr(args, "onnx_numerics", None)
                or LEGACY_ONNX_FLOAT.get(getattr(args, "onnx_float", None) or "")
                or env.get("EDGECC_ONNX_NUMERICS")
                or LEGACY_ONNX_FLOAT.get(env.get("EDGECC_ONNX_FLOAT", ""),
                                         env.get("EDGECC_ONNX_FLOAT"))
                or CompileOptions().onnx_numerics)
    threads = env.get("EDGECC_ORT_THREADS", "")
    return CompileOptions(
        scratch=getattr(args, "scratch", None) or env.get("EDGECC_SCRATCH") or "any",
        tiling=getattr(args, "tiling", None) or env.get("EDGECC_TILING") or None,
        io=getattr(args, "io", None) or "arena",
        weights_section=getattr(args, "weights_section", None),
        onnx_numerics=numerics,
        ort_threads=int(threads) if threads.isdigit() and int(threads) > 0 else None).check()


def _add_weights_section(p: argparse.ArgumentParser) -> None:
    p.add_argument("--weights-section", metavar="NAME",
                   help="put every constant array of the model in this linker section (external "
                        "flash, XIP, QSPI); a board's placement.weights names its region")


def _add_io(p: argparse.ArgumentParser) -> None:
    p.add_argument("--io", choices=["arena", "external"], default="arena",
                   help="where the model's inputs and outputs live: in the arena (default), or "
                        "'external': in caller buffers given to NAME_run_io, the arena excludes "
                        "them")


def _add_tiling(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tiling", choices=["off", "auto"],
                   help="patch-based execution of the memory-heavy first layers: 'auto' where it "
                        "saves RAM for its extra MACs, 'off' never (default: $EDGECC_TILING, else "
                        "only when a --board's RAM cannot hold the arena otherwise)")


def _resolve_target(args):
    if getattr(args, "board", None):
        from edgecc.boards import load_board
        board = load_board(args.board)
        if args.target and args.target != board.target:
            raise EdgeccError(f"--target {args.target} conflicts with board {board.name} "
                              f"(target {board.target})")
        return get_target(board.target), board
    return get_target(args.target or "host"), None


def cmd_compile(args) -> int:
    from edgecc.codegen import write_files
    from edgecc.compiler import compile_model
    from edgecc.budget import board_options
    target, board = _resolve_target(args)
    c = compile_model(args.model, target, args.name,
                      board_options(options_from_args(args), board))
    from edgecc.api import output_files
    files = output_files(c, args.model, target, board, args.emit or [])
    paths = write_files(files, Path(args.output))
    info = dict(model=str(args.model), target=target.name, name=args.name,
                files=[str(p) for p in paths], arena_bytes=c.plan.arena,
                lower_bound_bytes=c.plan.lower_bound, weights_bytes=c.weights_bytes,
                compile_seconds=round(c.seconds, 3), tiling=c.stats.get("tiling"))
    if args.json:
        print(json.dumps(info))
    else:
        print(f"wrote {len(paths)} files to {args.output}: arena {c.plan.arena} B "
              f"(lower bound {c.plan.lower_bound} B), weights {c.weights_bytes} B, "
              f"{c.seconds:.2f} s")
    return 0


def cmd_verify(args) -> int:
    from edgecc.verify import verify_model
    target, board = _resolve_target(args)
    if args.inputs:
        return _verify_inputs(args, target, board)
    if args.more_models:
        return _verify_many(args, target, board)
    if args.profile and args.frames > 1:  # the shares below are of one run's count
        raise EdgeccError("--profile counts the layers of one run: use it without --frames")
    r = verify_model(args.model, target, cc=args.cc, seed=args.seed, keep=args.keep,
                     board=board, profile=args.profile, frames=args.frames,
                     options=options_from_args(args))
    if args.json:
        print(json.dumps(r.as_json()))
    else:
        status = _status(r)
        if args.frames > 1:
            status += (f" over {args.frames} frames" if r.bit_exact else
                       f" (first in frame {r.first_bad_frame} of {args.frames})")
        print(f"{Path(args.model).name} on {r.target}: {status} ({r.total_bytes} output bytes) vs "
              f"{_oracle(r)}, arena {r.arena_bytes} B, lower bound {r.lower_bound_bytes} B")
        if r.first_bad_layer:
            print(f"first layer that differs: {r.first_bad_layer}")
        elif "first_mismatch_note" in r.extra:
            print(r.extra["first_mismatch_note"])
        _print_qemu_info(r.extra)
    return 0 if r.passed else 1


def _status(r) -> str:
    """bit-exact, within one step of onnxruntime's float ops (DESIGN.md), or MISMATCH."""
    if r.bit_exact:
        return "bit-exact"
    x = r.extra
    if r.passed:
        ops = ", ".join(f"{k} x{v}" for k, v in sorted(x["onnxruntime_float_ops"].items()))
        return (f"within one step: {x['values_differing']} values differ by one step, downstream "
                f"of ops onnxruntime computes in float ({ops})")
    hint = ""
    if x.get("onnxruntime_float_ops") and x.get("onnx_numerics") == "x86":
        hint = ("; onnxruntime computes some groups in float32: --onnx-numerics x86-float "
                "follows its order (slower)")
    return f"MISMATCH in {r.mismatched_bytes} bytes{hint}"


def _oracle(r) -> str:
    return oracle_label(r.oracle, r.extra.get("onnxruntime_session_config"))


def _verify_many(args, target, board) -> int:
    """verify MODEL MODEL...: one line (or JSON object) per model, a progress bar on a terminal;
    a model that cannot be verified is reported and the others still run."""
    from edgecc.progress import progress, say
    from edgecc.verify import verify_model
    rows, worst = [], 0
    for m in progress([args.model, *args.more_models], desc="verify", unit="model",
                      json_mode=args.json):
        try:
            r = verify_model(m, target, cc=args.cc, seed=args.seed, board=board,
                             options=options_from_args(args))
        except EdgeccError as e:
            rows.append(dict(model=str(m), error=" ".join(str(e).split())))
            worst = 2
            if not args.json:
                say(f"{Path(m).name}: error: {rows[-1]['error']}", file=sys.stdout)
            continue
        rows.append(r.as_json())
        worst = max(worst, 0 if r.passed else 1)
        if not args.json:
            status = _status(r)
            say(f"{Path(m).name} on {r.target}: {status} ({r.total_bytes} output bytes) vs "
                f"{_oracle(r)}, arena {r.arena_bytes} B", file=sys.stdout)
    if args.json:
        print(json.dumps(dict(models=rows, bit_exact=worst == 0)))
    return worst


def _verify_inputs(args, target, board) -> int:
    """verify --inputs: the user's samples, one build (and one QEMU boot) for all of them."""
    from edgecc.verify.dataset import verify_inputs
    r = verify_inputs(args.model, target, args.inputs, cc=args.cc, keep=args.keep, board=board,
                      progress=not args.json, options=options_from_args(args))
    x = r.extra
    if args.json:
        print(json.dumps(r.as_json()))
        return 0 if r.bit_exact else 1
    print(f"{Path(args.model).name} on {r.target}: {x['samples_exact']}/{x['samples']} samples "
          f"bit-exact vs {r.oracle} ({x['builds']} build{'s' if x['builds'] > 1 else ''}, "
          f"{x['seconds']:.1f} s)")
    for o in x["outputs"]:
        line = f"  output {o['index']} ({o['dtype']}): max |diff| {o['max_abs_diff']:g}"
        if "rmse" in o:
            line += f", RMSE {o['rmse']:.3g}, cosine {o['cosine_mean']:.6f} (min {o['cosine_min']:.6f})"
        print(line)
    if x["mismatched_samples"]:
        print(f"  samples that differ: {', '.join(map(str, x['mismatched_samples']))}")
    return 0 if r.bit_exact else 1


def _print_qemu_info(x: dict) -> None:
    """The board run's numbers (edgecc.verify.qemu) under verify's one-line verdict."""
    if "instructions" not in x:
        return
    print(f"board {x['board']} (QEMU {x['qemu_machine']}): {x['instructions']:,} instructions "
          f"per inference; flash {x['flash_bytes']:,} B, RAM {x['ram_bytes']:,} B "
          f"(stack {x['stack_bytes']:,} B)")
    for row in x.get("profile", []):
        share = 100.0 * row["instructions"] / max(x["instructions"], 1)
        ipm = f"{row['instructions'] / row['macs']:6.3f} instr/MAC" if row.get("macs") else ""
        print(f"  layer {row['layer']:3d} {row['op']:<24} {row.get('kernel', ''):<20} "
              f"{row['instructions']:>12,} {share:5.1f}% {ipm}".rstrip())


def cmd_budget(args) -> int:
    from edgecc.boards import load_board
    from edgecc.budget import budget_model
    rep = budget_model(args.model, load_board(args.board), ram_limit=args.ram_limit,
                       flash_limit=args.flash_limit, keep=args.keep,
                       options=options_from_args(args))
    print(json.dumps(rep.as_json()) if args.json else rep.table())
    return 1 if rep.over else 0


def cmd_inspect(args) -> int:
    from edgecc.inspect import inspect_model
    target, board = _resolve_target(args)
    return inspect_model(args, target, board.name if board else None, options_from_args(args))


def cmd_report(args) -> int:
    from edgecc.report import write_report
    target, board = _resolve_target(args)
    out = write_report(args.model, target, board, Path(args.output), options_from_args(args))
    print(f"wrote {out}")
    return 0


def cmd_plan(args) -> int:
    from edgecc.plan.show import plan_cli
    from edgecc.budget import board_options
    target, board = _resolve_target(args)
    return plan_cli(args, target, board_options(options_from_args(args), board))


def cmd_ops(args) -> int:
    from edgecc.opsdoc import as_json, as_text
    print(as_json() if args.json else as_text())
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="edgecc", description="Compile quantized neural networks to plain C.")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    c = sub.add_parser("compile", help="write C for a model")
    c.add_argument("model")
    _add_target(c)
    c.add_argument("--name", default="model", type=_model_name,
                   help="C prefix of the generated API (not edgecc*, a C keyword or a C header)")
    c.add_argument("-o", "--output", required=True, type=_nonempty("-o"), help="output folder")
    c.add_argument("--json", action="store_true")
    _add_io(c)
    _add_weights_section(c)
    c.add_argument("--emit", action="append", choices=["cmake", "make", "zephyr"],
                   help="also write build files: a CMake library (+ toolchain file, startup code "
                        "and linker script for a bare-metal board), a Make fragment, a Zephyr "
                        "module (repeatable)")
    c.set_defaults(fn=cmd_compile)

    v = sub.add_parser("verify", help="build, run and compare with TFLite Micro byte for byte "
                       "(LiteRT BUILTIN_REF for ops TFLite Micro lacks)")
    v.add_argument("model")
    v.add_argument("more_models", nargs="*", metavar="MODEL",
                   help="more models to verify in one run (a progress bar on a terminal)")
    _add_target(v)
    v.add_argument("--cc", choices=["gcc", "clang"], help="C compiler (default gcc)")
    v.add_argument("--seed", type=_seed, default=0, help="input seed, 0 <= S < 2^32")
    v.add_argument("--json", action="store_true")
    v.add_argument("--keep", type=Path, help="keep the build folder here")
    v.add_argument("--profile", action="store_true",
                   help="instructions per layer (QEMU targets and boards)")
    v.add_argument("--frames", type=int, default=1,
                   help="N consecutive seeded frames on one arena after one name_reset (state "
                        "carried), each compared with the reference that keeps its state too")
    _add_io(v)
    _add_weights_section(v)
    v.add_argument("--inputs", type=Path, metavar="FILE",
                   help="the samples to compare on (instead of seeded random ones): a .npy "
                        "([N, *input shape]), a .npz (one array per input) or a folder of .npy")
    v.set_defaults(fn=cmd_verify)

    b = sub.add_parser("budget", help="RAM and flash of the model on a board; exit 1 when over")
    b.add_argument("model")
    b.add_argument("--board", required=True, type=_nonempty("--board"),
                   help="board name (boards/) or path to a board file")
    b.add_argument("--ram-limit", type=int, metavar="BYTES", help="instead of the board's RAM")
    b.add_argument("--flash-limit", type=int, metavar="BYTES", help="instead of the board's flash")
    b.add_argument("--json", action="store_true")
    b.add_argument("--keep", type=Path, help="keep the build folder here")
    _add_tiling(b)
    _add_weights_section(b)
    b.set_defaults(fn=cmd_budget)

    i = sub.add_parser("inspect", help="the graph before and after each pass")
    i.add_argument("model")
    i.add_argument("--json", action="store_true")
    i.add_argument("--verbose", action="store_true")
    i.add_argument("--dump-ir", type=Path)
    _add_target(i)
    i.set_defaults(fn=cmd_inspect)

    r = sub.add_parser("report", help="one self-contained HTML page: model, layers, kernels, "
                                      "memory plan, board budget")
    r.add_argument("model")
    _add_target(r)
    r.add_argument("-o", "--output", required=True, type=_nonempty("-o"),
                   help="the HTML file to write")
    r.set_defaults(fn=cmd_report)

    o = sub.add_parser("ops", help="the supported ops: types, constraints, reference oracle")
    o.add_argument("--json", action="store_true")
    o.set_defaults(fn=cmd_ops)

    pl = sub.add_parser("plan", help="the arena plan: buffers, offsets, lower bound, SVG")
    pl.add_argument("model")
    _add_target(pl)
    pl.add_argument("--json", action="store_true")
    pl.add_argument("--svg", type=Path, help="write the plan picture (SVG) here")
    pl.set_defaults(fn=cmd_plan)
    return p


def _error(message: str, args=None) -> None:
    """Exactly one clean line on stderr (edgecc/diagnostics.py); with --json also on stdout."""
    report("error", message, bool(getattr(args, "json", False)))


def main(argv: list[str] | None = None) -> int:
    global _JSON_ERRORS
    argv = sys.argv[1:] if argv is None else list(argv)
    _JSON_ERRORS = "--json" in argv
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # stderr carries the one result line, nothing else
            return args.fn(args)
    except EdgeccError as e:
        _error(str(e), args)
        return EXIT_BAD_INPUT
    except OSError as e:  # the user's paths: unwritable -o folder, unreadable board file, ...
        where = f"{e.filename}: " if e.filename else ""
        _error(f"{where}{e.strerror or e}", args)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except (Exception, RecursionError) as e:  # anything else is a bug in edgecc: exit 3
        report("internal error", internal_message(e), bool(getattr(args, "json", False)))
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
