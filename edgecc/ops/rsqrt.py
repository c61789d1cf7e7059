"""RSQRT: y = 1 / sqrt(x), int8 only (TFLite Micro's fixed-point Newton-Raphson, as a 256-entry table).

int8 (RsqrtEvalQuantized): v = q - zp_in; v == 0 gives 127. Otherwise
GetInvSqrtQuantizedMultiplierExp(v) -> (m_inv, shift_inv) (five Newton-Raphson steps in Q3.28),
d = MBQM(1, m_inv, shift_inv + 20), out = MBQM(d, m, shift - 20) + zp_out clamped to int8, with
(m, shift) = QuantizeMultiplier(1 / (sqrt(double(s_in)) * double(s_out))). TFLite rejects inputs
below the input zero point at run time; edgecc treats them like v <= 1 (no error path in the C).
"""
from __future__ import annotations

import math

import numpy as np

from edgecc.numerics.gemmlowp import rescale
from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._lut import int8_in_out, lut_kernel
from edgecc.ops import _float_act
from edgecc.ops._float import twin
from edgecc.numerics.fixed_point import INT32_MAX, mbqm, quantize_multiplier, rdbpot, srdhm

K_SHIFT = 20  # keeps the intermediate 1/sqrt an integer


def inv_sqrt_multiplier_exp(x: int) -> tuple[int, int]:
    """GetInvSqrtQuantizedMultiplierExp(x, reverse_shift=-1): 1/sqrt(x) as (multiplier, shift)."""
    if x <= 1:
        return INT32_MAX, 0
    shift = 11
    while x >= (1 << 29):
        x //= 4
        shift += 1
    left_pairs = ((32 - x.bit_length()) - 1) // 2 - 1
    shift -= left_pairs
    x <<= 2 * left_pairs
    half_input = int(rdbpot(x >> 1, 1))              # Q3.28, SaturatingRoundingMultiplyByPOT<-1>
    half_three = (1 << 28) + (1 << 27)               # 1.5 in Q3.28
    r = 1 << 28                                      # x = 1.0
    for _ in range(5):
        r3 = int(rescale(srdhm(srdhm(r, r), r), 9, 3))
        r = int(rescale(int(srdhm(half_three, r)) - int(srdhm(half_input, r3)), 6, 3))
    r = int(srdhm(r, 1518500250))                    # * sqrt(2)/2 in Q0.31
    if shift < 0:
        r = ((r << -shift) + (1 << 31)) % (1 << 32) - (1 << 31)
        shift = 0
    return r, -shift


def int8(g: Graph, n: Node, q: np.ndarray) -> np.ndarray:
    x, y = in_type(g, n), out_type(g, n)
    m, s = quantize_multiplier(1.0 / (math.sqrt(float(ew.scale32(x))) * float(ew.scale32(y))))
    out = []
    for v in (np.asarray(q, dtype=np.int64) - ew.zp(x)).ravel().tolist():
        if v == 0:
            out.append(127)
            continue
        mi, si = inv_sqrt_multiplier_exp(v)
        d = int(mbqm(1, mi, si + K_SHIFT))
        out.append(int(np.clip(int(mbqm(d, m, s - K_SHIFT)) + ew.zp(y), -128, 127)))
    return np.array(out, dtype=np.int8).reshape(np.shape(q))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    lut = int8(g, n, np.arange(-128, 128))
    return [lut[ins[0].astype(np.int64) + 128]]


def lower(g: Graph, n: Node, target) -> Kernel:
    return lut_kernel("rsqrt.c.j2", g, n, lambda q: int8(g, n, q))


OP = register(OpDef("RSQRT", infer, reference, lower, [int8_in_out, ew.per_tensor_quantized],
                    dtypes="int8 (table)", inplace=((0, 0),)))
twin(OP, _float_act.RSQRT)  # float32: edgecc/ops/_float_act.py
