"""Which outputs of an ONNX model onnxruntime computes through float arithmetic (so edgecc's
integer kernels may differ from it by one quantization step there, as docs/design.md allows).

Owns: asking onnxruntime itself. Its graph optimizer (CPU provider, default session options)
writes the graph it runs; every node of that graph that is not data movement, a
QuantizeLinear / DequantizeLinear or an integer QOperator kernel computes in float (a Conv or Gemm
left between DequantizeLinear and QuantizeLinear, Add, AveragePool, Softmax, Resize ..., and the
table kernels QLinearSigmoid / QLinearLeakyRelu built from float functions). An output is
"downstream" of such a node when a path of the optimized graph leads from one to it.
"""
from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from edgecc.options import DEFAULT_ONNX_NUMERICS
from edgecc.verify.onnx_ref import quiet_session_options, session_config

# nodes whose result is exact: they move bytes or are onnxruntime's integer kernels
EXACT = {"QuantizeLinear", "DequantizeLinear", "Transpose", "Reshape", "Squeeze", "Unsqueeze",
         "Flatten", "Identity", "Concat", "Tile", "Gather", "Slice", "Pad", "Split", "Expand",
         "MaxPool", "GlobalMaxPool", "ReorderInput", "ReorderOutput", "Shape", "Cast",
         "QLinearConv", "QGemm", "QLinearMatMul", "QLinearAdd", "QLinearMul",
         "QLinearAveragePool", "QLinearGlobalAveragePool", "QLinearConcat", "QLinearSoftmax",
         "MatMulInteger", "ConvInteger", "DynamicQuantizeLinear", "Relu", "Clip"}


def float_nodes(model: str | Path, numerics: str = DEFAULT_ONNX_NUMERICS
                ) -> tuple[dict[str, int], set[int]]:
    """(op type -> count of the float-computing nodes onnxruntime runs, indices of the graph
    outputs downstream of one)."""
    import onnx  # ~2 s to import: loaded only when an ONNX model is verified
    import onnxruntime as ort  # optional: the ONNX oracle, not a dependency of compiling
    with tempfile.TemporaryDirectory(prefix="edgecc-ort-") as tmp:
        o = quiet_session_options(ort)
        for k, v in session_config(numerics).items():
            o.add_session_config_entry(k, v)
        o.optimized_model_filepath = str(Path(tmp) / "opt.onnx")
        ort.InferenceSession(str(model), o, providers=["CPUExecutionProvider"])
        g = onnx.load(o.optimized_model_filepath).graph
    tainted: set[str] = set()
    ops: Counter = Counter()
    for n in g.node:  # the optimized graph is in topological order
        own = n.op_type not in EXACT
        if own:
            ops[n.op_type] += 1
        if own or any(x in tainted for x in n.input):
            tainted.update(n.output)
    return dict(ops), {i for i, o in enumerate(g.output) if o.name in tainted}


def output_steps(g) -> list[float | None]:
    """Per graph output of the IR `g`: one quantization step in the output's own units (1 for
    an integer output, the scale for a DEQUANTIZE'd float one, None otherwise)."""
    made = {v: n for n in g.nodes for v in n.outputs}
    steps: list[float | None] = []
    for v in g.outputs:
        t, n = g.value(v).type, made.get(v)
        if t.dtype.np.kind in "iu":
            steps.append(1.0)
        elif n is not None and n.op == "DEQUANTIZE" and g.value(n.inputs[0]).type.q is not None:
            steps.append(float(g.value(n.inputs[0]).type.q.scale[0]))
        else:
            steps.append(None)
    return steps


def within_one_step(model, info: dict, numerics: str = DEFAULT_ONNX_NUMERICS) -> None:
    """Sets info["within_one_step"] (every differing value at most one step off, in outputs
    downstream of onnxruntime's float ops) and info["onnxruntime_float_ops"]."""
    ops, down = float_nodes(model, numerics)
    info["onnxruntime_float_ops"] = ops
    info["within_one_step"] = bool(
        info.get("values_differing") and info["values_differing"] == info.get("values_off_by_one")
        and all(i in down for i in info.get("outputs_differing", [])))
