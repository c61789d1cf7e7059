"""Float32 ONNX graphs (no quantization) onto edgecc's float32 kernels (edgecc/ops/_float*.py).

Owns: recognising a float32 activation and the handlers of the compute ops on one: Conv
(plain, grouped, depthwise), Gemm / MatMul, Add / Mul with an activation or a float constant,
Relu and Clip(0, 6), AveragePool / GlobalAveragePool and Softmax. They reuse emit.py's layout
work (NHWC, folded Transposes) with no quantization (yq None); MaxPool, Reshape, Squeeze and the
other data movement take float activations as they are. Results are within DESIGN.md's float32
tolerance of onnxruntime (1e-5 relative), not bit-exact: the summation orders differ.
"""
from __future__ import annotations

import numpy as np

from edgecc.frontends.onnx import emit
from edgecc.frontends.onnx.builder import Builder, Rec
from edgecc.ir import DType, TensorType


def is_float(b: Builder, r: Rec) -> bool:
    return r.kind == "act" and b.type(r.value).dtype == DType.FLOAT32


def _fconst(b: Builder, name: str, what: str) -> Rec | None:
    if not name:
        return None
    r = b.rec(name)
    if r.kind != "const" or np.asarray(r.data).dtype != np.float32:
        raise b.unsupported(f"float {what} must be a float32 constant")
    return r


def _weighted(b: Builder, n, info: dict, bias_at: int | None) -> dict:
    info["w"] = _fconst(b, n.input[1], "weights")
    if bias_at is not None and len(n.input) > bias_at and n.input[bias_at]:
        info["bias"] = _fconst(b, n.input[bias_at], "bias")
    return info


def conv(b: Builder, n, a, x: Rec) -> Rec:
    return emit.conv(b, _weighted(b, n, dict(x=x, attrs=a), 2), None)


def matmul(b: Builder, n, a, x: Rec) -> Rec:
    info = dict(x=x, trans_b=bool(a.get("transB", 0)))
    return emit.fully_connected(b, _weighted(b, n, info, 2 if n.op_type == "Gemm" else None),
                                None)


def binary(b: Builder, n, ins: list[Rec]) -> Rec:
    for r in ins:
        if not (is_float(b, r) or (r.kind == "const" and r.data.dtype == np.float32)):
            raise b.unsupported(f"{n.op_type} of a float32 and a {r.kind} value")
    return emit.binary(b, dict(xs=ins, ir_op=n.op_type.upper()), None)


def relu_clip(b: Builder, n, lo: float | None, hi: float | None, x: Rec) -> Rec:
    op = {(0.0, None): "RELU", (0.0, 6.0): "RELU6"}.get((lo, hi))
    if op is None:
        raise b.unsupported(f"float {n.op_type} other than Relu or Clip(0, 6)")
    t = b.type(x.value)
    return Rec("act", b.add(op, [x.value], TensorType(t.shape, DType.FLOAT32)), perm=x.perm)


def pool(b: Builder, a, kind: str, x: Rec) -> Rec:
    return emit.pool(b, dict(x=x, attrs=a, kind=kind), None)


def softmax(b: Builder, a, x: Rec) -> Rec:
    return emit.softmax(b, dict(x=x, attrs=a, opset=b.opset), None)
