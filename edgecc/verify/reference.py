"""The golden references: TensorFlow Lite Micro's interpreter (PyPI `tflite-micro`), and LiteRT's
built-in reference kernels (PyPI `ai-edge-litert`) for models with ops TFLite Micro lacks.

Owns: running a .tflite model through `tflite_micro.runtime.Interpreter` on given inputs, with every
intermediate tensor preserved so the first differing layer can be named; running it through LiteRT
with OpResolverType.BUILTIN_REF (no XNNPACK, no optimized kernels); choosing between the two
(`run_reference`); and making seeded inputs. Every runner takes a list of frames (each a list of
input arrays) and invokes ONE interpreter on them in turn, so variable tensors (LSTM/SVDF state)
carry from one frame to the next, as the generated code carries them from one name_run() to the
next after one name_reset().
"""
from __future__ import annotations

import os
import re
import struct
from pathlib import Path

import numpy as np
import tflite

from edgecc.errors import EdgeccError
from edgecc.frontends.tflite import settled_graph
from edgecc.ir import DType, Graph
from edgecc.ops import const


def seeded_frames(g: Graph, seed: int, frames: int) -> list[list[np.ndarray]]:
    """`frames` consecutive input sets: the first is seeded_inputs(g, seed), frame k > 0 is drawn
    from the seed sequence (seed, k)."""
    return [seeded_inputs(g, seed if k == 0 else [seed, k]) for k in range(frames)]


def seeded_inputs(g: Graph, seed: int | list[int]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for v in g.inputs:
        t = g.type(v)
        if t.dtype == DType.FLOAT32:
            arr = rng.standard_normal(t.shape).astype(np.float32)
            # Every other element on a 1/64 grid: power-of-two quantization scales then meet
            # exact rounding ties (x / scale = k + 0.5), where rounding modes differ.
            flat = arr.reshape(-1)
            flat[::2] = np.round(flat[::2] * 64) / 64
        elif t.dtype == DType.BOOL:
            arr = rng.integers(0, 2, size=t.shape).astype(bool)
        else:
            info = np.iinfo(t.dtype.np)
            wide = {"dtype": np.uint64} if t.dtype == DType.UINT64 else {}  # beyond int64
            arr = rng.integers(info.min, info.max, size=t.shape, endpoint=True,
                               **wide).astype(t.dtype.np)
        out.append(arr)
    return out


TFLM = "tflite-micro"
LITERT_REF = "litert-builtin-ref"


class TFLMCannotRun(EdgeccError):
    """TFLite Micro refused the model (typically an op it has no kernel for)."""


class StderrToNull:
    """print_allocations and the interpreter write to C stderr; keep CLI output clean."""

    def __enter__(self):
        self.saved = os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)

    def __exit__(self, *a):
        os.dup2(self.saved, 2)
        os.close(self.saved)


def tflm_unsound(model: str | Path) -> str | None:
    """Why TFLite Micro's results on this model would not be the model's, or None.

    TFLite Micro runs ops on the shapes the file declares: where the converter wrote placeholders
    (shape_signature -1, e.g. batch 1 after a dilated Conv1D's SPACE_TO_BATCH_ND, really the block
    size) it computes something else (cv_conv1d). And it fills SPACE_TO_BATCH_ND's padding with
    SpaceToBatchParams.output_offset, which it never initializes (TFLite: the zero point)."""
    g = settled_graph(model)
    if g is None:
        return None
    wrong = [note for note in g.notes if "the file says" in note]
    if wrong:
        return (f"it computes with the file's placeholder shapes ({len(wrong)} wrong, first "
                f"{wrong[0]})")
    for n in g.nodes:
        pads = const(g, n, 2) if n.op == "SPACE_TO_BATCH_ND" else None
        if pads is not None and np.any(pads != 0):
            return f"it leaves the padding of SPACE_TO_BATCH_ND (op {n.index}) uninitialized"
    return None


def run_tflm(model: str | Path, inputs: list[np.ndarray], n_outputs: int, preserve: bool = False,
             n_tensors: int = 0) -> tuple[list[np.ndarray], dict[int, np.ndarray]]:
    """Outputs, and (with preserve) every tensor by TFLite index after the run."""
    return run_tflm_frames(model, [inputs], n_outputs, preserve, n_tensors)[0]


def run_tflm_frames(model: str | Path, frames: list[list[np.ndarray]], n_outputs: int,
                    preserve: bool = False, n_tensors: int = 0
                    ) -> list[tuple[list[np.ndarray], dict[int, np.ndarray]]]:
    """Per frame, on one interpreter (state kept): outputs and (preserve) every tensor."""
    try:  # optional: the `verify` / `test` extra
        from tflite_micro.python.tflite_micro import runtime
    except ImportError:
        raise EdgeccError("the reference needs the 'tflite-micro' package "
                          "(pip install 'edgecc[verify]')") from None
    unsound = tflm_unsound(model)
    if unsound:
        raise TFLMCannotRun(f"TFLite Micro cannot run {Path(model).name}: {unsound}")
    cfg = runtime.InterpreterConfig.kPreserveAllTensors if preserve else \
        runtime.InterpreterConfig.kAllocationRecording
    results = []
    with StderrToNull():
        try:
            it = runtime.Interpreter.from_file(str(model), arena_size=16 << 20,
                                               intrepreter_config=cfg)
        except RuntimeError as e:  # e.g. "TFLM failed to allocate tensors" for an op it lacks
            raise TFLMCannotRun(f"TFLite Micro cannot run {Path(model).name}: {e}") from None
        for inputs in frames:
            try:
                for i, x in enumerate(inputs):
                    it.set_input(x, i)
                it.invoke()
            except RuntimeError as e:
                raise TFLMCannotRun(f"TFLite Micro cannot run {Path(model).name}: {e}") from None
            outs = [np.array(it.get_output(i)) for i in range(n_outputs)]
            tensors: dict[int, np.ndarray] = {}
            for i in range(n_tensors if preserve else 0):
                try:
                    tensors[i] = np.array(it.GetTensor(i, 0)["tensor_data"])
                except Exception:  # constant or unallocated tensors have no runtime data
                    continue
            results.append((outs, tensors))
    return results


_MAX_VERSION_RETRIES = 4
_NO_VERSION = re.compile(r"builtin opcode '(\w+)' version '(\d+)'")


def _older_version(content: bytes, error: str) -> bytes | None:
    """The model with the op version LiteRT's reference resolver lacks lowered by one, or None.

    The reference resolver registers some ops up to a lower version than the converter writes
    (TILE v3, int8, is registered only to v2 there), though the kernel it holds reads the tensor
    types and runs them; the version is only checked at registration."""
    m = _NO_VERSION.search(error)
    if m is None or int(m.group(2)) <= 1:
        return None
    raw = bytearray(content)
    model = tflite.Model.GetRootAsModel(raw, 0)
    for i in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(i)
        name = tflite.BUILTIN_OPCODE2NAME.get(max(code.BuiltinCode(), code.DeprecatedBuiltinCode()))
        off = code._tab.Offset(8)  # OperatorCode.version: field 2 (vtable slot 4 + 2 * 2)
        if name == m.group(1) and off and code.Version() == int(m.group(2)):
            struct.pack_into("<i", raw, code._tab.Pos + off, code.Version() - 1)
    return bytes(raw)


def _ref_interpreter(model: str | Path, interpreter, resolver):
    """LiteRT's interpreter on the model, retried with an op's version lowered (_older_version)
    while the reference resolver lacks the version the file names."""
    content = Path(model).read_bytes()
    for _ in range(_MAX_VERSION_RETRIES):
        try:
            return interpreter(model_content=content, experimental_op_resolver_type=resolver)
        except (RuntimeError, ValueError) as e:
            content = _older_version(content, str(e))
            if content is None:
                raise
    return interpreter(model_content=content, experimental_op_resolver_type=resolver)


def run_litert_ref(model: str | Path, inputs: list[np.ndarray],
                   n_outputs: int) -> list[np.ndarray]:
    """Outputs of LiteRT's reference kernels (OpResolverType.BUILTIN_REF): no XNNPACK delegate and
    no optimized kernels, so the arithmetic is TFLite's reference definition of each op."""
    return run_litert_ref_frames(model, [inputs], n_outputs)[0]


def run_litert_ref_frames(model: str | Path, frames: list[list[np.ndarray]],
                          n_outputs: int) -> list[list[np.ndarray]]:
    """run_litert_ref per frame on one interpreter (variable tensors kept between invokes)."""
    try:  # optional: the `test` extra (the oracle for ops TFLite Micro lacks)
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        raise EdgeccError("the LiteRT reference needs the 'ai-edge-litert' package "
                          "(pip install 'edgecc[verify]')") from None
    try:
        with StderrToNull():  # LiteRT logs "INFO: Created TensorFlow Lite ..." on C stderr
            it = _ref_interpreter(model, Interpreter, OpResolverType.BUILTIN_REF)
            it.allocate_tensors()
            results = []
            for inputs in frames:
                for d, x in zip(it.get_input_details(), inputs):
                    it.set_tensor(d["index"], x)
                it.invoke()
                results.append([np.array(it.get_tensor(d["index"]))
                                for d in it.get_output_details()[:n_outputs]])
            return results
    except (RuntimeError, ValueError) as e:
        msg = " ".join(str(e).split())
        raise EdgeccError(f"LiteRT cannot run {Path(model).name}: {msg}") from None


def litert_available() -> bool:
    try:  # optional: the `test` extra
        import ai_edge_litert.interpreter  # noqa: F401
    except ImportError:
        return False
    return True


def run_reference(model: str | Path, inputs: list[np.ndarray],
                  n_outputs: int) -> tuple[list[np.ndarray], str]:
    """Outputs and the oracle's name: TFLite Micro when it can run the model, else (an op it
    lacks) LiteRT BUILTIN_REF, which defines those ops' arithmetic for TFLite."""
    outs, oracle = run_reference_frames(model, [inputs], n_outputs)
    return outs[0], oracle


def run_reference_frames(model: str | Path, frames: list[list[np.ndarray]],
                         n_outputs: int) -> tuple[list[list[np.ndarray]], str]:
    """run_reference per frame, state kept from one frame to the next."""
    try:
        return [o for o, _ in run_tflm_frames(model, frames, n_outputs)], TFLM
    except TFLMCannotRun as e:
        if not litert_available():
            raise EdgeccError(f"{e}; the fallback oracle LiteRT BUILTIN_REF is missing "
                              "(pip install 'edgecc[verify]')") from None
    return run_litert_ref_frames(model, frames, n_outputs), LITERT_REF
