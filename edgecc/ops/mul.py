"""MUL: y = a * b with numpy broadcasting (rank <= 5); int8/int16 (TFLite's rescaling), int32,
float32.

int8, as TFLite Micro prepares it (CalculateOpDataMul): the real multiplier
s_a * s_b / s_out is computed in double and quantized with QuantizeMultiplier; per element
out = MBQM((q_a - zp_a) * (q_b - zp_b), m, shift) + zp_out, clamped to the fused activation's
range. int16 is the same (TFLM's MulElementwise) with all zero points 0. int32 multiplies with
C's wrap-around and clamps to the activation range; float32 clamps with std::min/std::max.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._conv_common import act_range
from edgecc.numerics.fixed_point import mbqm, quantize_multiplier


def supported_type(g: Graph, n: Node) -> bool:
    """inputs and output must be int8, int16, int32 or float32"""
    return out_type(g, n).dtype in (DType.INT8, DType.INT16, DType.INT32, DType.FLOAT32)


def int16_zero_points(g: Graph, n: Node) -> bool:
    """int16 inputs and output must have zero point 0 (as TFLite Micro requires)"""
    if out_type(g, n).dtype != DType.INT16:
        return True
    return all(ew.zp(g.type(v)) == 0 for v in [*n.inputs, *n.outputs] if v is not None)


def quant_params(g: Graph, n: Node) -> dict:
    real = (float(ew.scale32(in_type(g, n, 0))) * float(ew.scale32(in_type(g, n, 1)))
            / float(ew.scale32(out_type(g, n))))
    m, s = quantize_multiplier(real)
    lo, hi = act_range(g, n)
    return dict(off0=-ew.in_zp(g, n, 0), off1=-ew.in_zp(g, n, 1), out_zp=ew.zp(out_type(g, n)),
                mult=m, shift=s, act_min=lo, act_max=hi)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return ew.infer_broadcast(g, n)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    dt = out_type(g, n).dtype
    act = int(n.attrs.get("fused_activation_function", 0))
    if dt in (DType.FLOAT32, DType.INT32):
        return [ew.unquantized_reference(dt, act, ins, np.multiply)]
    if n.numerics.qlinear:  # onnxruntime's QLinearMul: edgecc/ops/_onnx_elt.py
        from edgecc.ops._onnx_elt import reference_mul
        return reference_mul(g, n, ins)
    p = quant_params(g, n)
    prod = (ins[0].astype(np.int64) + p["off0"]) * (ins[1].astype(np.int64) + p["off1"])
    out = mbqm(prod, p["mult"], p["shift"]) + p["out_zp"]
    return [np.clip(out, p["act_min"], p["act_max"]).astype(dt.np)]


def lower(g: Graph, n: Node, target) -> Kernel:
    if n.numerics.qlinear:
        from edgecc.ops._onnx_elt import lower_mul
        return lower_mul(g, n, target)
    return ew.arith_kernel("mul.c.j2", g, n, (DType.INT8, DType.INT16), quant_params)


OP = register(OpDef(
    "MUL", infer, reference, lower,
    [supported_type, ew.same_types, ew.per_tensor_quantized, ew.shapes_broadcast,
     ew.rank_at_most_5, ew.supported_activation, int16_zero_points],
    dtypes="int8, int16, int32, float32",
    inplace=((0, 0), (0, 1))))  # y[i] is written after a[i], b[i] are read (full-shape input)
