"""What every verb of the command line shares: the parser that fails in one line, the flag
helpers, the target or board a command names, and the one CompileOptions value of a command line.

Owns: `options_from_args`, the only place that reads the environment variables giving flags their
defaults ($EDGECC_SCRATCH, $EDGECC_TILING, $EDGECC_ONNX_NUMERICS (or the old $EDGECC_ONNX_FLOAT),
$EDGECC_ORT_THREADS); argument errors as one line (and a JSON object when --json is anywhere on
the command line: JSON_ERRORS, set by main).
"""
from __future__ import annotations

import argparse
import os

from edgecc.build.boards import load_board, parse_size
from edgecc.diagnostics import EXIT_BAD_INPUT, report
from edgecc.errors import EdgeccError
from edgecc.names import model_name_problem
from edgecc.options import LEGACY_ONNX_FLOAT, ONNX_NUMERICS, CompileOptions
from edgecc.targets import TARGETS, get_target


JSON_ERRORS = False  # --json anywhere on the command line: argument errors as JSON too


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse prints usage + message)
        report("error", message, JSON_ERRORS)
        self.exit(EXIT_BAD_INPUT)


def nonempty(what: str):
    def check(s: str) -> str:
        if not s.strip():
            raise argparse.ArgumentTypeError(f"{what} must not be empty")
        return s
    return check


def seed(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed must be an integer, not {s!r}") from None
    if not 0 <= v < 2**32:
        raise argparse.ArgumentTypeError(f"--seed must be in [0, 2^32), not {v}")
    return v


def size(flag: str):
    """A size flag's type: bytes, or KiB/MiB as board files write them ("30KiB", "1 MiB",
    "0x8000"), read by the board files' own parser."""
    def check(s: str) -> int:
        try:
            n = parse_size(s, flag)
        except EdgeccError as e:
            raise argparse.ArgumentTypeError(str(e).split(": ", 1)[-1]) from None
        if n <= 0:
            raise argparse.ArgumentTypeError(f"{flag} must be positive (bytes, or e.g. 30KiB), "
                                             f"not {s!r}")
        return n
    return check


def model_name(s: str) -> str:
    problem = model_name_problem(s)
    if problem:
        raise argparse.ArgumentTypeError(f"--name {s!r} {problem}")
    return s


def add_target(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", choices=sorted(TARGETS), help="target core / ISA")
    p.add_argument("--board", type=nonempty("--board"),
                   help="board name (boards/) or path to a board file")
    p.add_argument("--scratch", choices=["fit", "any"],
                   help="kernel scratch: 'fit' uses an optimized kernel only where its scratch fits "
                        "in RAM dead at its step (arena = activation peak); 'any' always takes the "
                        "fastest kernel (default: $EDGECC_SCRATCH or 'any')")
    add_numerics(p)
    add_tiling(p)


def add_numerics(p: argparse.ArgumentParser) -> None:
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


def add_cache(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-cache", action="store_true",
                   help="compile the model again instead of reusing the compile cache's result "
                        "for the same model, options, target and edgecc (default: the cache, "
                        "under $EDGECC_CACHE or the platform's cache folder; $EDGECC_NO_CACHE=1 "
                        "makes --no-cache the default)")


def use_cache(args) -> bool:
    """The compile cache is used unless --no-cache or $EDGECC_NO_CACHE (set, not empty or 0)."""
    return not (getattr(args, "no_cache", False)
                or os.environ.get("EDGECC_NO_CACHE", "") not in ("", "0"))


def add_weights_section(p: argparse.ArgumentParser) -> None:
    p.add_argument("--weights-section", metavar="NAME",
                   help="put every constant array of the model in this linker section (external "
                        "flash, XIP, QSPI); a board's placement.weights names its region")


def add_io(p: argparse.ArgumentParser) -> None:
    p.add_argument("--io", choices=["arena", "external"], default="arena",
                   help="where the model's inputs and outputs live: in the arena (default), or "
                        "'external': in caller buffers given to NAME_run_io, the arena excludes "
                        "them")


def add_tiling(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tiling", choices=["off", "auto"],
                   help="patch-based execution of the memory-heavy first layers: 'auto' where it "
                        "saves RAM for its extra MACs, 'off' never (default: $EDGECC_TILING, else "
                        "only when a --board's RAM cannot hold the arena otherwise)")


def resolve_target(args):
    if getattr(args, "board", None):
        board = load_board(args.board)
        if args.target and args.target != board.target:
            raise EdgeccError(f"--target {args.target} conflicts with board {board.name} "
                              f"(target {board.target})")
        return get_target(board.target), board
    return get_target(args.target or "host"), None


def error_line(message: str, args=None) -> None:
    """Exactly one clean line on stderr (edgecc/diagnostics.py); with --json also on stdout."""
    report("error", message, bool(getattr(args, "json", False)))
