"""The Python API: `edgecc.compile(...)` and `edgecc.run(...)`.

Owns: compiling a model with the command line's options from Python (and writing the output
folder: C, build files, manifest, exactly as `edgecc compile`), and running a compiled model on
numpy inputs on the host or an emulated board, returning numpy outputs. Compiles are memoized per
model contents and options in this process; the built programs are cached on disk per generated
C (edgecc.build.runner), so a test suite builds each model once.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from edgecc.build.boards import board_options, load_board
from edgecc.build.firmware import board_for, emit_files
from edgecc.build.manifest import manifest_file
from edgecc.build.runner import build_runner, run_frames
from edgecc.codegen import write_files
from edgecc.compiler import compile_model
from edgecc.errors import EdgeccError
from edgecc.names import model_name_problem
from edgecc.numerics.io import quantizable, quantize, rounding_of
from edgecc.options import CompileOptions
from edgecc.targets import get_target

_COMPILED: dict[tuple, object] = {}


def _resolve(target: str | None, board: str | None):
    if board is not None:
        b = load_board(board) if isinstance(board, (str, Path)) else board
        if target is not None and target != b.target:
            raise EdgeccError(f"target {target} conflicts with board {b.name} (target {b.target})")
        return get_target(b.target), b
    return get_target(target or "host"), None


def compile(model: str | Path, target: str | None = None, board: str | None = None,
            name: str = "model", output: str | Path | None = None, emit: tuple[str, ...] = (),
            options: CompileOptions | None = None, **fields):
    """Compile `model` (as `edgecc compile`) with `options` (edgecc.options.CompileOptions;
    `fields` such as io="external" or onnx_numerics="x86" change single fields of it); with
    `output`, write the folder (the C, the build files of `emit`, the manifest). Returns the
    edgecc.compiler.Compiled record (.files: the C, .plan.arena, .lowered, ...)."""
    problem = model_name_problem(name)
    if problem:
        raise EdgeccError(f"name {name!r} {problem}")
    t, b = _resolve(target, board)
    opts = board_options((options or CompileOptions()).but(**fields), b)
    data = Path(model).read_bytes() if Path(model).is_file() else b""
    key = (hashlib.sha256(data).hexdigest(), str(Path(model).resolve()), t.name, repr(b), name,
           opts)
    c = _COMPILED.get(key)
    if c is None:
        c = compile_model(model, t, name, opts)
        _COMPILED[key] = c
    if output is not None:
        write_files(output_files(c, model, t, b, emit), Path(output))
    return c


def manifest_options(c, model, emit) -> dict:
    """The options as the manifest records them (the ONNX numerics for ONNX models only)."""
    o = c.options
    d = dict(scratch=o.scratch, tiling=o.tiling, io=o.io, emit=sorted(set(emit)),
             weights_section=o.weights_section)
    if Path(model).suffix.lower() == ".onnx":
        d["onnx_numerics"] = o.onnx_numerics
    return d


def output_files(c, model, target, board, emit) -> dict[str, str]:
    """Every file of the output folder: the C, the build files of `emit`, the manifest."""
    files = dict(c.files)
    if emit:
        files.update(emit_files(c.files, c.name, c.graph.name, list(emit),
                                board_for(target.name, board), c.plan.arena,
                                c.weights_section))
    fname, text = manifest_file(c, model, target.name, board, manifest_options(c, model, emit))
    files[fname] = text
    return files


def _input_name(g, k: int) -> str:
    label = g.value(g.inputs[k]).label
    return f"input {k} ('{label}')" if label else f"input {k}"


def _by_position(g, inputs) -> list:
    """The inputs in the model's order: one array, a list (one per input), or a dict keyed by
    the model's tensor names (NAME_INPUTi_NAME)."""
    if isinstance(inputs, dict):
        names = [g.value(v).label for v in g.inputs]
        unknown = sorted(set(inputs) - set(names))
        missing = [n for n in names if n not in inputs]
        if unknown or missing:
            raise EdgeccError(f"inputs by name: the model's inputs are {names}"
                              + (f"; unknown {unknown}" if unknown else "")
                              + (f"; missing {missing}" if missing else ""))
        return [inputs[n] for n in names]
    xs = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
    if len(xs) != len(g.inputs):
        raise EdgeccError(f"the model has {len(g.inputs)} inputs, {len(xs)} given")
    return xs


def _frames(g, inputs, frames: int | None, rounding: str) -> list[list[np.ndarray]]:
    """Per frame, the input arrays in the model's dtypes: float data for a quantized input is
    quantized as the model's format does (edgecc/numerics/io.py), as `verify --inputs` does."""
    out = []
    xs = _by_position(g, inputs)
    for k in range(frames or 1):
        fr = []
        for i, (x, v) in enumerate(zip(xs, g.inputs)):
            t = g.type(v)
            a = np.asarray(x)[k] if frames else np.asarray(x)
            if a.dtype.kind == "f" and t.dtype.np.kind in "iu" and quantizable(t):
                a = quantize(a, t, rounding)
            if a.size != t.numel or a.dtype != t.dtype.np:
                want = t.dtype.np.name + (" (or float, quantized)" if quantizable(t) else "")
                raise EdgeccError(f"{_input_name(g, i)}: expected {want} with {t.numel} "
                                  f"elements{' per frame' if frames else ''}, got {a.dtype.name} "
                                  f"{list(a.shape)}")
            fr.append(np.ascontiguousarray(a))
        out.append(fr)
    return out


def run(model: str | Path, target: str | None = None, board: str | None = None,
        inputs=None, frames: int | None = None, name: str = "model",
        cc: str | None = None, timeout: float = 120.0, options: CompileOptions | None = None,
        **fields) -> list[np.ndarray]:
    """Run `model` compiled for `target` or `board` (host by default; Arm targets and boards
    under QEMU) on `inputs`: an array, a list of one per model input, or a dict keyed by the
    model's tensor names; each of the input's dtype, or float data for a quantized input
    (quantized with its scale and zero point, rounded as the model's format does: TFLite half
    away from zero, ONNX half to even). Returns the outputs as arrays of the model's output
    shapes, in the model's dtypes (`edgecc.numerics.io.dequantize` gives their real values). frames=N: every input has a leading axis of
    N frames, run in order on one arena (a stateful model carries its state); every output then
    has that leading axis too."""
    c = compile(model, target=target, board=board, name=name, options=options, **fields)
    t, b = _resolve(target, board)
    g = c.graph
    fr = _frames(g, inputs, frames, rounding_of(model))
    got = run_frames(c, build_runner(c, t, b, cc), t, b, fr, timeout)
    outs = []
    for i, v in enumerate(g.outputs):
        ty = g.type(v)
        per = [np.frombuffer(f[i], dtype=ty.dtype.np).reshape(ty.shape) for f in got]
        outs.append(np.stack(per) if frames else per[0].copy())
    return outs
