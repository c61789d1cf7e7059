"""SQUARED_DIFFERENCE: y = (a - b)**2 with numpy broadcasting (rank <= 5); int8, int32, float32.

int8, as TFLite Micro prepares it (double arithmetic): twice_max = 2 * max(s_a, s_b);
m_k = s_k / twice_max (QuantizeMultiplierSmallerThanOneExp) and
m_out = twice_max**2 / (2**14 * s_out) (QuantizeMultiplier). Per element:
x_k = MBQM_<1((q_k - zp_k) * 2**7, m_k), d = x_a - x_b, out = MBQM(d * d, m_out) + zp_out,
clamped to int8 (the op has no fused activation).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._loops import loop_text
from edgecc.numerics.fixed_point import (mbqm, mbqm_smaller_than_one, quantize_multiplier,
                          quantize_multiplier_smaller_than_one_exp)

LEFT_SHIFT = 7  # 255**2 * 2**14 still fits int32


def supported_type(g: Graph, n: Node) -> bool:
    """inputs and output must be int8, int32 or float32"""
    return out_type(g, n).dtype in (DType.INT8, DType.INT32, DType.FLOAT32)


def quant_params(g: Graph, n: Node) -> dict:
    s1, s2 = float(ew.scale32(in_type(g, n, 0))), float(ew.scale32(in_type(g, n, 1)))
    so = ew.scale32(out_type(g, n))
    twice = 2.0 * max(s1, s2)
    m1, sh1 = quantize_multiplier_smaller_than_one_exp(s1 / twice)
    m2, sh2 = quantize_multiplier_smaller_than_one_exp(s2 / twice)
    # (1 << 14) * output scale is a float product in TFLM, then widened to double.
    mo, sho = quantize_multiplier(twice * twice / float(np.float32(1 << 2 * LEFT_SHIFT) * so))
    return dict(off0=-ew.in_zp(g, n, 0), off1=-ew.in_zp(g, n, 1), out_zp=ew.zp(out_type(g, n)),
                left=1 << LEFT_SHIFT, m0=m1, sh0=sh1, m1=m2, sh1=sh2, mo=mo, sho=sho)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return ew.infer_broadcast(g, n)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    dt = out_type(g, n).dtype
    if dt == DType.FLOAT32:
        d = ins[0].astype(np.float32) - ins[1].astype(np.float32)
        return [(d * d).astype(np.float32)]
    if dt == DType.INT32:
        d = ew.wrap32(ins[0].astype(np.int64) - ins[1].astype(np.int64)).astype(np.int64)
        return [ew.wrap32(d * d)]
    p = quant_params(g, n)
    a = mbqm_smaller_than_one((ins[0].astype(np.int64) + p["off0"]) * p["left"], p["m0"], p["sh0"])
    b = mbqm_smaller_than_one((ins[1].astype(np.int64) + p["off1"]) * p["left"], p["m1"], p["sh1"])
    out = mbqm((a - b) * (a - b), p["mo"], p["sho"]) + p["out_zp"]
    return [np.clip(out, -128, 127).astype(np.int8)]


def lower(g: Graph, n: Node, target) -> Kernel:
    dt = out_type(g, n).dtype
    params = dict(ew.loop_params(g, n), kind=dt.name.lower(), ctype=dt.c)
    if dt == DType.INT8:
        params.update(quant_params(g, n))
    return Kernel("squared_difference.c.j2", params=params, consts=ew.const_inputs(g, n),
                  derived=loop_text(params))


OP = register(OpDef(
    "SQUARED_DIFFERENCE", infer, reference, lower,
    [supported_type, ew.same_types, ew.per_tensor_quantized, ew.shapes_broadcast,
     ew.rank_at_most_5],
    dtypes="int8, int32, float32",
    inplace=((0, 0), (0, 1))))  # y[i] is written after a[i], b[i] are read (full-shape input)
