"""LEAKY_RELU: int8 (TFLite Micro's two multipliers, as a 256-entry table) and float32.

int8: identity multiplier QuantizeMultiplier(float(s_in / s_out)) and alpha multiplier
QuantizeMultiplier(float(s_in * alpha / s_out)) (float arithmetic, as TFLM); v = q - zp_in,
out = zp_out + MBQM(v, v >= 0 ? identity : alpha), clamped to int8. float32: x > 0 ? x : x * alpha.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._lut import INT8_VALUES, lut_kernel
from edgecc.numerics.fixed_point import mbqm, quantize_multiplier


def supported_type(g: Graph, n: Node) -> bool:
    """input and output must both be int8 or both float32"""
    a, b = in_type(g, n).dtype, out_type(g, n).dtype
    return a == b and a in (DType.INT8, DType.FLOAT32)


def _alpha(n: Node) -> np.float32:
    return np.float32(n.attrs.get("alpha", 0.2))


def int8(g: Graph, n: Node, q: np.ndarray) -> np.ndarray:
    si, so = ew.scale32(in_type(g, n)), ew.scale32(out_type(g, n))
    mi, shi = quantize_multiplier(float(np.float32(si / so)))
    ma, sha = quantize_multiplier(float(np.float32(np.float32(si * _alpha(n)) / so)))
    v = np.asarray(q, dtype=np.int64) - ew.zp(in_type(g, n))
    out = np.where(v >= 0, mbqm(v, mi, shi), mbqm(v, ma, sha)) + ew.zp(out_type(g, n))
    return np.clip(out, -128, 127).astype(np.int8)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if in_type(g, n).dtype == DType.FLOAT32:
        x = ins[0].astype(np.float32)
        return [np.where(x > 0, x, (x * _alpha(n)).astype(np.float32)).astype(np.float32)]
    return [int8(g, n, INT8_VALUES)[ins[0].astype(np.int64) + 128]]


def lower(g: Graph, n: Node, target) -> Kernel:
    if in_type(g, n).dtype == DType.FLOAT32:
        return Kernel("leaky_relu.c.j2", params=dict(kind="float32", count=in_type(g, n).numel,
                                                     alpha=ew.c_float(_alpha(n))))
    k = lut_kernel("leaky_relu.c.j2", g, n, lambda q: int8(g, n, q))
    k.params["kind"] = "int8"
    return k


OP = register(OpDef("LEAKY_RELU", infer, reference, lower, [supported_type, ew.per_tensor_quantized],
                    dtypes="int8 (table), float32", inplace=((0, 0),)))
