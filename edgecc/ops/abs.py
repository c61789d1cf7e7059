"""ABS: int8 (TFLite Micro's rescaling, lowered to a 256-entry table) and float32.

int8 (AbsEvalQuantized): v = |q - zp_in|; when the input and output scales differ (as floats),
v = MBQM(v, QuantizeMultiplier(double(s_in) / double(s_out))); out = clamp(v + zp_out, -128, 127).
float32 clears the sign bit (std::abs), so -0.0 and negative NaNs come out positive too.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._lut import lut_kernel
from edgecc.numerics.fixed_point import mbqm, quantize_multiplier


def supported_type(g: Graph, n: Node) -> bool:
    """input and output must both be int8 or both float32"""
    a, b = in_type(g, n).dtype, out_type(g, n).dtype
    return a == b and a in (DType.INT8, DType.FLOAT32)


def int8(g: Graph, n: Node, q: np.ndarray) -> np.ndarray:
    x, y = in_type(g, n), out_type(g, n)
    v = np.abs(q.astype(np.int64) - ew.zp(x))
    if ew.scale32(x) != ew.scale32(y):
        m, s = quantize_multiplier(float(ew.scale32(x)) / float(ew.scale32(y)))
        v = mbqm(v, m, s)
    return np.clip(v + ew.zp(y), -128, 127).astype(np.int8)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if in_type(g, n).dtype == DType.FLOAT32:
        return [np.abs(ins[0]).astype(np.float32)]
    return [int8(g, n, ins[0])]


def lower(g: Graph, n: Node, target) -> Kernel:
    if in_type(g, n).dtype == DType.FLOAT32:
        return Kernel("abs.c.j2", params=dict(kind="float32", count=in_type(g, n).numel))
    k = lut_kernel("abs.c.j2", g, n, lambda q: int8(g, n, q))
    k.params["kind"] = "int8"
    return k


OP = register(OpDef("ABS", infer, reference, lower,
                    [supported_type, ew.per_tensor_quantized], dtypes="int8 (table), float32",
                    inplace=((0, 0),)))  # y[i] is written after x[i] is read
