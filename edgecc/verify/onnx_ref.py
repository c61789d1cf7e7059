"""onnxruntime as the oracle for .onnx models (CPU execution provider, default session options;
with the fused ONNX numerics, int8 QDQ fusion allowed as on Arm: `session_config`).

Owns: the session options each ONNX numerics needs, running an ONNX model on given inputs (in the model's own dtypes and layout, as the
generated C API takes them), optionally with chosen intermediate tensors added as graph outputs
(a copy of the model) so a mismatch can be traced to the first differing layer, and counting the
values that differ by exactly one quantization step.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from edgecc.errors import EdgeccError
from edgecc.options import DEFAULT_ONNX_NUMERICS

ORT = "onnxruntime"


def session_config(numerics: str = DEFAULT_ONNX_NUMERICS) -> dict[str, str]:
    """The onnxruntime session options the oracle runs with for CompileOptions.onnx_numerics:
    'fused' lets the QDQ transformer fuse int8 activations, as it does on Arm CPUs; the x86
    numerics are onnxruntime's default options on x86."""
    return {"session.qdqisint8allowed": "1"} if numerics == "fused" else {}


def run_onnxruntime(model: str | Path, inputs: list[np.ndarray], extra: list[str] = (),
                    numerics: str = DEFAULT_ONNX_NUMERICS
                    ) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """The model's outputs and (for `extra` tensor names) those intermediate tensors, with the
    session options of `numerics`."""
    # onnx takes ~2 s to import: loaded only when an ONNX model is verified
    import onnx
    try:  # optional: onnxruntime is the ONNX oracle, not a dependency of compiling
        import onnxruntime as ort
    except ImportError:
        raise EdgeccError("the ONNX reference needs the 'onnxruntime' package "
                          "(pip install 'edgecc[verify]')") from None
    m = onnx.load(str(model))
    n_out = len(m.graph.output)
    have = {o.name for o in m.graph.output}
    for name in extra:
        if name not in have:
            m.graph.output.append(onnx.ValueInfoProto(name=name))
    opts = quiet_session_options(ort)
    for k, v in session_config(numerics).items():
        opts.add_session_config_entry(k, v)
    try:
        sess = ort.InferenceSession(m.SerializeToString(), opts,
                                    providers=["CPUExecutionProvider"])
        feed = {i.name: x for i, x in zip(sess.get_inputs(), inputs)}
        res = sess.run(None, feed)
    except Exception as e:
        msg = " ".join(str(e).split())[:300]
        raise EdgeccError(f"onnxruntime cannot run {Path(model).name}: {msg}") from None
    names = [o.name for o in sess.get_outputs()]
    return [np.asarray(r) for r in res[:n_out]], dict(zip(names[n_out:], map(np.asarray, res[n_out:])))


def quiet_session_options(ort):
    """SessionOptions that log nothing: onnxruntime prints its (coloured, multi-line) log lines
    on stderr before raising, and stderr carries edgecc's one line. Fatal only, for the session
    and for the default logger that session creation logs to."""
    ort.set_default_logger_severity(4)
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    return opts


def oracle_label(oracle: str, opts: dict[str, str] | None = None) -> str:
    """The oracle's name as verify prints it: onnxruntime with the session options it ran with
    (fused numerics: int8 QDQ fusion allowed)."""
    return oracle + (" (" + ", ".join(f"{k}={v}" for k, v in opts.items()) + ")"
                     if opts else "")


def lsb_diffs(got: bytes, ref: np.ndarray, step: float | None = 1.0) -> tuple[int, int, int]:
    """(bytes that differ, values that differ, values that differ by at most one quantization
    `step`: 1 for an integer output, the scale of a dequantized float one; None: no step)."""
    rb = np.ascontiguousarray(ref).tobytes()
    bad = sum(a != b for a, b in zip(got, rb))
    if not bad:
        return 0, 0, 0
    g = np.frombuffer(got, ref.dtype)
    r = ref.ravel()
    values = int(np.sum(g != r))
    if step is None:
        return bad, values, 0
    d = np.abs(g.astype(np.float64) - r.astype(np.float64))
    return bad, values, int(np.sum((d > 0) & (d <= step * (1 + 1e-6))))


def onnx_reference_tensor(arr: np.ndarray, perm: tuple[int, ...]) -> bytes:
    """An onnxruntime tensor as the IR holds it: uint8 as int8 (q - 128), axes permuted."""
    a = np.asarray(arr)
    if a.dtype == np.uint8:
        a = (a.astype(np.int16) - 128).astype(np.int8)
    if a.ndim == len(perm):
        a = np.transpose(a, perm)
    return np.ascontiguousarray(a).tobytes()


def onnx_first_mismatch(c, traces: dict[int, bytes], model, inputs) -> str | None:
    """The first executed layer whose output differs from the ONNX tensor it stands for
    (onnxruntime's intermediate value, fetched by adding it to the graph outputs)."""
    names = getattr(c.imported, "onnx_tensors", {})
    wanted = [(lw.node, v) for lw in c.lowered for v in lw.node.outputs if v in names]
    _, inter = run_onnxruntime(model, inputs, [names[v][0] for _, v in wanted],
                               c.options.onnx_numerics)
    for node, v in wanted:
        idx = int(v[1:])
        onnx_name, perm = names[v]
        if idx not in traces or onnx_name not in inter:
            continue
        if traces[idx] != onnx_reference_tensor(inter[onnx_name], perm):
            return f"node {node.index} {node.op} (ONNX tensor '{onnx_name}')"
    return None
