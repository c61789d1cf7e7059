"""TANH, int8 -> int8 with output zero point 0: TFLite Micro's fixed-point path.

Same input rescaling as LOGISTIC (Q4.27, radius). Per value v = q - zp_in: v <= -radius -> -128,
v >= radius -> 127, otherwise y = gemmlowp::tanh(MBQM(v, m, shift)) in Q0.31 (exp_on_negative_values
of 2x, then one_minus_x_over_one_plus_x_for_x_in_0_1), out = clamp(RoundingDivideByPOT(y, 24)).
The output scale is assumed 1/128, as TFLite Micro assumes it. Lowered to a 256-entry table.
int16 -> int16 (zero points 0, output scale 2**-15): TFLM's table kernel, edgecc/ops/_act16.py.
"""
from __future__ import annotations

import numpy as np

from edgecc.fixedpoint import (FORTY_EIGHT_OVER_17, NEG_THIRTY_TWO_OVER_17,
                               exp_on_negative_values, rescale, rounding_half_sum)
from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _act16
from edgecc.ops import _arith as ew
from edgecc.ops._lut import INT8_VALUES, lut_kernel
from edgecc.ops.logistic import INPUT_INT_BITS, input_rescale
from edgecc.quant import INT32_MAX, _wrap32, mbqm, rdbpot, srdhm


def one_minus_x_over_one_plus_x_for_x_in_0_1(a) -> np.ndarray:
    """(1 - a) / (1 + a) for a in [0, 1), Q0.31: Newton-Raphson in Q2.29 (gemmlowp)."""
    half_den = rounding_half_sum(a, INT32_MAX)
    x = _wrap32(FORTY_EIGHT_OVER_17 + srdhm(half_den, NEG_THIRTY_TWO_OVER_17))
    for _ in range(3):
        one_minus = _wrap32((1 << 29) - srdhm(half_den, x))
        x = _wrap32(x + rescale(srdhm(x, one_minus), 4, 2))
    return rescale(_wrap32(x - (1 << 29)), 2, 0)


def gemmlowp_tanh(x: np.ndarray) -> np.ndarray:
    """gemmlowp::tanh of Q4.27 raws, Q0.31 raws out."""
    x = np.asarray(x, dtype=np.int64)
    neg = x < 0
    nx = np.where(neg, x, -x)  # <= 0
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(nx, INPUT_INT_BITS + 1))
    return np.where(x == 0, 0, np.where(neg, -t, t))


def output_zero_point_zero(g: Graph, n: Node) -> bool:
    """int8 output must have zero point 0 (scale 1/128)"""
    return ew.zp(out_type(g, n)) == 0


def int8(g: Graph, n: Node, q: np.ndarray) -> np.ndarray:
    m, shift, radius = input_rescale(ew.scale32(in_type(g, n)))
    v = np.asarray(q, dtype=np.int64) - ew.zp(in_type(g, n))
    inner = np.clip(v, -radius + 1, radius - 1)
    y = rdbpot(gemmlowp_tanh(mbqm(inner, m, shift)), 31 - 7)
    out = np.where(v <= -radius, -128, np.where(v >= radius, 127, np.clip(y, -128, 127)))
    return out.astype(np.int8)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if _act16.is_int16(g, n):  # edgecc/ops/_act16.py
        return _act16.reference(g, n, ins)
    return [int8(g, n, INT8_VALUES)[ins[0].astype(np.int64) + 128]]


def lower(g: Graph, n: Node, target) -> Kernel:
    if _act16.is_int16(g, n):
        return _act16.lower(g, n, target)
    return lut_kernel("tanh.c.j2", g, n, lambda q: int8(g, n, q))


OP = register(OpDef("TANH", infer, reference, lower,
                    [_act16.int8_or_int16_in_out, ew.per_tensor_quantized, output_zero_point_zero,
                     *_act16.CONSTRAINTS],
                    dtypes="int8 (table), int16 (TFLM's interpolated sigmoid table)",
                    inplace=((0, 0),)))
