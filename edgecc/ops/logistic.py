"""LOGISTIC (sigmoid), int8 -> int8 with output zero point -128: TFLite Micro's fixed-point path.

Prepare: m = frexp(s_in * 2**27) -> (round(q * 2**31), left shift), radius = CalculateInputRadius(4,
left shift). Per value v = q - zp_in: v <= -radius -> -128, v >= radius -> 127, otherwise
x = MBQM(v, m, shift) as Q4.27, y = gemmlowp::logistic(x) in Q0.31 (exp_on_negative_values and
one_over_one_plus_x_for_x_in_0_1), out = clamp(RoundingDivideByPOT(y, 23) - 128). The output
scale is assumed 1/256, as TFLite Micro assumes it. Lowered to a 256-entry table built from
this reference (the int8 path shared with TANH is edgecc/ops/_sigmoid8.py).
int16 -> int16 (zero points 0, output scale 2**-15): TFLM's table kernel, edgecc/ops/_act16.py.
"""
from __future__ import annotations

import numpy as np

from edgecc.numerics.gemmlowp import exp_on_negative_values, one_over_one_plus_x_for_x_in_0_1
from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, OpDef, out_type, register
from edgecc.ops import _act16
from edgecc.ops import _arith as ew
from edgecc.ops import _sigmoid8
from edgecc.ops._elementwise import same_as_input as infer
from edgecc.ops._sigmoid8 import INPUT_INT_BITS
from edgecc.ops import _float_act
from edgecc.ops._float import twin
from edgecc.numerics.fixed_point import INT32_MAX


def gemmlowp_logistic(x: np.ndarray) -> np.ndarray:
    """gemmlowp::logistic of Q4.27 raws, Q0.31 raws out."""
    x = np.asarray(x, dtype=np.int64)
    pos = x > 0
    a = np.where(pos, x, -x)
    r_pos = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(-a, INPUT_INT_BITS))
    r = np.where(pos, r_pos, INT32_MAX - r_pos)
    return np.where(x == 0, 1 << 30, r)


def output_zero_point_min(g: Graph, n: Node) -> bool:
    """int8 output must have zero point -128 (scale 1/256)"""
    return _act16.is_int16(g, n) or ew.zp(out_type(g, n)) == -128 or _onnx(n)


def _onnx(n: Node) -> bool:
    """ONNX numerics: onnxruntime's float sigmoid between DequantizeLinear and QuantizeLinear,
    tabulated (edgecc/numerics/qlinear.py); within one step of onnxruntime's MLAS approximation."""
    return n.numerics.qlinear


def int8(g: Graph, n: Node, q: np.ndarray) -> np.ndarray:
    return _sigmoid8.int8(g, n, q, gemmlowp_logistic, 8, -128)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if _onnx(n):
        from edgecc.numerics.qlinear import dequant_fn_quant_table, sigmoid
        return [dequant_fn_quant_table(g, n, sigmoid)[ins[0].astype(np.int64) + 128]]
    return _sigmoid8.reference(g, n, ins, int8)


def lower(g: Graph, n: Node, target) -> Kernel:
    if _onnx(n):
        from edgecc.ops._lut import table_kernel
        from edgecc.numerics.qlinear import dequant_fn_quant_table, sigmoid
        return table_kernel("table_onnx.c.j2", g, n, dequant_fn_quant_table(g, n, sigmoid))
    return _sigmoid8.lower(g, n, target, "logistic.c.j2", int8)


OP = register(OpDef("LOGISTIC", infer, reference, lower,
                    [_act16.int8_or_int16_in_out, ew.per_tensor_quantized, output_zero_point_min,
                     *_act16.CONSTRAINTS],
                    dtypes="int8 (table), int16 (TFLM's interpolated sigmoid table)",
                    inplace=((0, 0),)))
twin(OP, _float_act.LOGISTIC)  # float32: edgecc/ops/_float_act.py
