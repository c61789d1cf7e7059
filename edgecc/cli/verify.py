"""`edgecc verify MODEL [MODEL...] --target T | --board B`: build, run, compare with the reference
byte for byte; one model, several (a progress bar on a terminal), or the user's samples (--inputs).
Exit 0 only when every output matches (or is within one step where docs/design.md allows it)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from edgecc.cli.common import (add_cache, add_io, add_target, add_weights_section,
                               options_from_args, resolve_target, seed, use_cache)
from edgecc.diagnostics import clean_line
from edgecc.errors import EdgeccError
from edgecc.progress import progress, say
from edgecc.verify import verify_model
from edgecc.verify.dataset import verify_inputs
from edgecc.verify.onnx_ref import oracle_label


def add_parser(sub) -> None:
    p = sub.add_parser("verify", help="build, run and compare with TFLite Micro byte for byte "
                       "(LiteRT BUILTIN_REF for ops TFLite Micro lacks)")
    p.add_argument("model")
    p.add_argument("more_models", nargs="*", metavar="MODEL",
                   help="more models to verify in one run (a progress bar on a terminal)")
    add_target(p)
    p.add_argument("--cc", choices=["gcc", "clang"], help="C compiler (default gcc)")
    p.add_argument("--seed", type=seed, default=0, help="input seed, 0 <= S < 2^32")
    p.add_argument("--json", action="store_true")
    p.add_argument("--keep", type=Path, help="keep the build folder here")
    p.add_argument("--profile", action="store_true",
                   help="instructions per layer (QEMU targets and boards)")
    p.add_argument("--frames", type=int, default=1,
                   help="N consecutive seeded frames on one arena after one name_reset (state "
                        "carried), each compared with the reference that keeps its state too")
    add_io(p)
    add_weights_section(p)
    add_cache(p)
    p.add_argument("--inputs", type=Path, metavar="FILE",
                   help="the samples to compare on (instead of seeded random ones): a .npy "
                        "([N, *input shape]), a .npz (one array per input) or a folder of .npy")
    p.set_defaults(fn=run)


def run(args) -> int:
    target, board = resolve_target(args)
    if args.inputs:
        return _verify_inputs(args, target, board)
    if args.more_models:
        return _verify_many(args, target, board)
    if args.profile and args.frames > 1:  # the shares below are of one run's count
        raise EdgeccError("--profile counts the layers of one run: use it without --frames")
    r = verify_model(args.model, target, cc=args.cc, seed=args.seed, keep=args.keep,
                     board=board, profile=args.profile, frames=args.frames,
                     options=options_from_args(args), cache=use_cache(args))
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
    """bit-exact, within one step of onnxruntime's float ops (docs/design.md), or MISMATCH."""
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
    rows, worst = [], 0
    for m in progress([args.model, *args.more_models], desc="verify", unit="model",
                      json_mode=args.json):
        try:
            r = verify_model(m, target, cc=args.cc, seed=args.seed, board=board,
                             options=options_from_args(args), cache=use_cache(args))
        except EdgeccError as e:
            rows.append(dict(model=str(m), error=clean_line(str(e))))
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
    """The board run's numbers (edgecc.build.qemu) under verify's one-line verdict."""
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
