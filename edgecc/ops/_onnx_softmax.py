"""onnxruntime's QLinearSoftmax (CPU provider, com.microsoft) for SOFTMAX nodes with
QLinear numerics, in numpy and as portable C.

Owns: the 256-entry float32 exp table and the row formula. onnxruntime also runs a QDQ
DequantizeLinear -> Softmax -> QuantizeLinear group through this kernel (its QDQ transformer fuses
the group), so both ONNX forms import to it. Per row (the last axis, depth D):

- table: bit_shift = max(0, log(FLT_MAX / D) - 5) / x_scale (double);
  T[d] = float32(exp((255 - d - 255 + bit_shift) * x_scale)) for d = max - x in 0..255;
- sum = float32 sum of T[max - x] in element order; Y = floor(1.0f / y_scale) (float32);
- y = saturate(round_half_even(float32(float32(T[max - x] * Y) / sum)) + y_zp): int8 and uint8
  alike (the IR's int8 with zero point - 128 for uint8 saturates at the same values).

edgecc checked this against onnxruntime 1.32 on the QDQ and QOperator models of
../shared/models/onnx_models and tests/test_onnx_softmax.py (int8 and uint8, output scales
1/256 and 1/255, rows one value dominates): no difference.
The C needs -ffp-contract=off (every float32 product and quotient rounds).
"""
from __future__ import annotations

import math

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, in_type, out_type
from edgecc.ops.quantize import c_float_literal

F32 = np.float32
FLT_MAX = float(np.finfo(np.float32).max)


def exp_table(x_scale: float, depth: int) -> np.ndarray:
    """T[d] = exp of the scaled (x - max) = -d, shifted so the sum of a row stays finite."""
    xs = float(F32(x_scale))
    shift = max(0.0, math.log(float(F32(FLT_MAX / depth))) - 5.0) / xs
    return np.array([F32(math.exp((float(255 - d) - 255 + shift) * xs)) for d in range(256)],
                    F32)


def params(g: Graph, n: Node) -> dict:
    x, y = in_type(g, n), out_type(g, n)
    depth = int(x.shape[-1])
    return dict(depth=depth, rows=x.numel // depth, zp=int(y.q.zero_point[0]),
                y=F32(math.floor(F32(1.0) / F32(y.q.scale[0]))),
                table=exp_table(x.q.scale[0], depth))


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    p = params(g, n)
    x = np.asarray(ins[0]).astype(np.int64).reshape(p["rows"], p["depth"])
    e = p["table"][x.max(axis=1, keepdims=True) - x]
    s = np.zeros(p["rows"], F32)
    for c in range(p["depth"]):  # float32 sum in element order
        s = (s + e[:, c]).astype(F32)
    with np.errstate(over="ignore"):  # a one-value row: table entry x y overflows to +inf
        q = ((e * p["y"]).astype(F32) / s[:, None]).astype(F32)
    v = np.rint(np.minimum(q, F32(1024))).astype(np.int64) + p["zp"]  # as the C: saturates
    return [np.clip(v, -128, 127).astype(np.int8).reshape(in_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    p = params(g, n)
    k = Kernel("softmax_onnx.c.j2",
               params=dict(depth=p["depth"], rows=p["rows"], zp=p["zp"], y=c_float_literal(p["y"])),
               consts=dict(table=p["table"]))
    k.reason = "onnxruntime's QLinearSoftmax arithmetic (float32 exp table, half to even)"
    return k
