"""TANH, int8 -> int8 with output zero point 0: TFLite Micro's fixed-point path.

Same input rescaling as LOGISTIC (Q4.27, radius). Per value v = q - zp_in: v <= -radius -> -128,
v >= radius -> 127, otherwise y = gemmlowp::tanh(MBQM(v, m, shift)) in Q0.31 (exp_on_negative_values
of 2x, then one_minus_x_over_one_plus_x_for_x_in_0_1), out = clamp(RoundingDivideByPOT(y, 24)).
The output scale is assumed 1/128, as TFLite Micro assumes it. Lowered to a 256-entry table
(the int8 path shared with LOGISTIC is edgecc/ops/_sigmoid8.py).
int16 -> int16 (zero points 0, output scale 2**-15): TFLM's table kernel, edgecc/ops/_act16.py.
"""
from __future__ import annotations

import numpy as np

from edgecc.numerics.gemmlowp import (exp_on_negative_values,
                                      one_minus_x_over_one_plus_x_for_x_in_0_1)
from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, OpDef, out_type, register
from edgecc.ops import _act16
from edgecc.ops import _arith as ew
from edgecc.ops import _sigmoid8
from edgecc.ops._elementwise import same_as_input as infer
from edgecc.ops._sigmoid8 import INPUT_INT_BITS
from edgecc.ops import _float_act
from edgecc.ops._float import twin


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
    return _sigmoid8.int8(g, n, q, gemmlowp_tanh, 7, 0)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return _sigmoid8.reference(g, n, ins, int8)


def lower(g: Graph, n: Node, target) -> Kernel:
    return _sigmoid8.lower(g, n, target, "tanh.c.j2", int8)


OP = register(OpDef("TANH", infer, reference, lower,
                    [_act16.int8_or_int16_in_out, ew.per_tensor_quantized, output_zero_point_zero,
                     *_act16.CONSTRAINTS],
                    dtypes="int8 (table), int16 (TFLM's interpolated sigmoid table)",
                    inplace=((0, 0),)))
twin(OP, _float_act.TANH)  # float32: edgecc/ops/_float_act.py
