"""SUB: y = a - b with numpy broadcasting (rank <= 5); int8 (TFLite's rescaling), int32, float32.

int8, as TFLite Micro prepares it (CalculateOpDataSub, float arithmetic where TFLM uses float):
twice_max = 2 * max(s_a, s_b) (float); m_a = s_a / twice_max, m_b = s_b / twice_max and
m_out = twice_max / (2**20 * s_out), each float then QuantizeMultiplierSmallerThanOneExp. Per
element: x_k = MBQM_<1((q_k - zp_k) * 2**20, m_k), out = MBQM_<1(x_a - x_b, m_out) + zp_out,
clamped to the fused activation's range. int32 wraps like C and clamps to the activation range;
float32 clamps with std::min/std::max.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._conv_common import act_range
from edgecc.numerics.fixed_point import (mbqm_smaller_than_one,
                                         quantize_multiplier_smaller_than_one_exp)

LEFT_SHIFT = 20  # int8 inputs are scaled up by 2**20 before rescaling (TFLM's data->left_shift)


def supported_type(g: Graph, n: Node) -> bool:
    """inputs and output must be int8, int32 or float32"""
    return out_type(g, n).dtype in (DType.INT8, DType.INT32, DType.FLOAT32)


def output_scale_large_enough(g: Graph, n: Node) -> bool:
    """int8: output scale must exceed 2 * max(input scales) / 2**20 (TFLite's multiplier must be < 1)"""
    if out_type(g, n).dtype != DType.INT8:
        return True
    return 0.0 < _real_multipliers(g, n)[2] < 1.0


def _real_multipliers(g: Graph, n: Node) -> tuple[float, float, float]:
    s1, s2 = ew.scale32(in_type(g, n, 0)), ew.scale32(in_type(g, n, 1))
    so = ew.scale32(out_type(g, n))
    twice = np.float32(2) * max(s1, s2)
    return (float(s1 / twice), float(s2 / twice),
            float(twice / (np.float32(1 << LEFT_SHIFT) * so)))


def quant_params(g: Graph, n: Node) -> dict:
    r1, r2, ro = _real_multipliers(g, n)
    m1, sh1 = quantize_multiplier_smaller_than_one_exp(r1)
    m2, sh2 = quantize_multiplier_smaller_than_one_exp(r2)
    mo, sho = quantize_multiplier_smaller_than_one_exp(ro)
    lo, hi = act_range(g, n)
    return dict(off0=-ew.in_zp(g, n, 0), off1=-ew.in_zp(g, n, 1), out_zp=ew.zp(out_type(g, n)),
                left=1 << LEFT_SHIFT, m0=m1, sh0=sh1, m1=m2, sh1=sh2, mo=mo, sho=sho,
                act_min=lo, act_max=hi)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return ew.infer_broadcast(g, n)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    dt = out_type(g, n).dtype
    act = int(n.attrs.get("fused_activation_function", 0))
    if dt in (DType.FLOAT32, DType.INT32):
        return [ew.unquantized_reference(dt, act, ins, np.subtract)]
    p = quant_params(g, n)
    a = mbqm_smaller_than_one((ins[0].astype(np.int64) + p["off0"]) * p["left"], p["m0"], p["sh0"])
    b = mbqm_smaller_than_one((ins[1].astype(np.int64) + p["off1"]) * p["left"], p["m1"], p["sh1"])
    out = mbqm_smaller_than_one(a - b, p["mo"], p["sho"]) + p["out_zp"]
    return [np.clip(out, p["act_min"], p["act_max"]).astype(np.int8)]


def lower(g: Graph, n: Node, target) -> Kernel:
    return ew.arith_kernel("sub.c.j2", g, n, (DType.INT8,), quant_params)


OP = register(OpDef(
    "SUB", infer, reference, lower,
    [supported_type, ew.same_types, ew.per_tensor_quantized, ew.shapes_broadcast,
     ew.rank_at_most_5, ew.supported_activation, output_scale_large_enough],
    dtypes="int8, int32, float32",
    inplace=((0, 0), (0, 1))))  # y[i] is written after a[i], b[i] are read (full-shape input)
