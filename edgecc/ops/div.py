"""DIV: y = a / b with numpy broadcasting (rank <= 5); int8 (TFLite's fixed-point quotient), int32
(C division), float32 (edgecc/ops/_float_act.py). TFLite Micro's reference Div.

int8 (DivElementwise): a = q_a - zp_a, b = q_b - zp_b; when b < 0 both change sign. With
(r, bits) = GetReciprocal(b, 31) and h = CountLeadingSignBits(a):
q = SRDHM(a * 2**h, r) (MultiplyByQuantizedMultiplierGreaterThanOne), then
out = RDBPOT(SRDHM(q, m), -(shift - bits - h)) + zp_out, clamped to the fused activation, where
(m, shift) = QuantizeMultiplier(s_a / (s_b * s_out)) (a float quotient of a float product).
Where the shift exceeds gemmlowp's RoundingDivideByPOT range (e = bits + h - shift > 31, which
every a == 0 reaches), TFLite Micro's host build computes (x >> (e & 31)) + (x >= 0): the values
of its 64-bit mask and of the x86 shift; edgecc reproduces that (0 / b gives zp_out + 1).
int32: C's truncating division, clamped to the activation range.
A zero divisor is undefined in TFLite (a DCHECK); the generated C never traps: int8 saturates by
the sign of a (0 / 0 gives zp_out), int32 gives 0.
"""
from __future__ import annotations

import numpy as np

from edgecc.numerics.gemmlowp import count_leading_zeros32, get_reciprocal
from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops import _float_act
from edgecc.ops._conv_common import act_range
from edgecc.ops._float import twin
from edgecc.numerics.fixed_point import mbqm_greater_than_one, quantize_multiplier, rdbpot, srdhm


def supported_type(g: Graph, n: Node) -> bool:
    """inputs and output must be int8 or int32 (or float32)"""
    return out_type(g, n).dtype in (DType.INT8, DType.INT32)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return ew.infer_broadcast(g, n)


def quant_params(g: Graph, n: Node) -> dict:
    s1, s2 = ew.scale32(in_type(g, n, 0)), ew.scale32(in_type(g, n, 1))
    m, s = quantize_multiplier(float(np.float32(s1 / np.float32(s2 * ew.scale32(out_type(g, n))))))
    lo, hi = act_range(g, n)
    return dict(off0=-ew.in_zp(g, n, 0), off1=-ew.in_zp(g, n, 1), out_zp=ew.zp(out_type(g, n)),
                mult=m, shift=s, act_min=lo, act_max=hi)


def leading_sign_bits(a: np.ndarray) -> np.ndarray:
    """CountLeadingSignBits of int32 values (|a| small: no INT32_MIN here)."""
    a = np.asarray(a, np.int64)
    return np.where(a >= 0, count_leading_zeros32(a) - 1, count_leading_zeros32(-2 * a - 1))


def int8_quotient(a: np.ndarray, b: np.ndarray, p: dict) -> np.ndarray:
    a, b = np.broadcast_arrays(np.asarray(a, np.int64) + p["off0"],
                               np.asarray(b, np.int64) + p["off1"])
    a, zero = np.where(b < 0, -a, a), b == 0
    b = np.where(zero, 1, np.abs(b))
    recip, bits = get_reciprocal(b, 31)
    h = leading_sign_bits(a)
    q = srdhm(mbqm_greater_than_one(a, recip, h), p["mult"])
    e = np.maximum(bits + h - p["shift"], 0)
    # gemmlowp's RoundingDivideByPOT beyond its range (e > 31, e.g. every a == 0): TFLM's x86
    # build takes mask = (1ll << e) - 1 -> all ones, and x >> e as x >> (e & 31)
    wide = (q >> (e & 31)) + (q >= 0)
    out = np.where(e > 31, wide, rdbpot(q, np.minimum(e, 31))) + p["out_zp"]
    out = np.where(zero, np.sign(a) * (1 << 20) + p["out_zp"], out)
    return np.clip(out, p["act_min"], p["act_max"]).astype(np.int8)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if out_type(g, n).dtype == DType.INT8:
        return [int8_quotient(ins[0], ins[1], quant_params(g, n))]
    a, b = np.broadcast_arrays(np.asarray(ins[0], np.int64), np.asarray(ins[1], np.int64))
    q = np.sign(a) * np.sign(b) * (np.abs(a) // np.where(b == 0, 1, np.abs(b)))  # C truncation
    lo, hi = ew.int32_act_range(int(n.attrs.get("fused_activation_function", 0)))
    return [np.clip(ew.wrap32(q), lo, hi).astype(np.int32)]


def lower(g: Graph, n: Node, target) -> Kernel:
    int8 = out_type(g, n).dtype == DType.INT8  # TFLite's reciprocal arithmetic, else C's int32 /
    return ew.arith_kernel("div_s8.c.j2" if int8 else "div.c.j2", g, n, (DType.INT8,), quant_params)


OP = register(OpDef(
    "DIV", infer, reference, lower,
    [supported_type, ew.same_types, ew.per_tensor_quantized, ew.shapes_broadcast,
     ew.rank_at_most_5, ew.supported_activation],
    dtypes="int8, int32",
    inplace=((0, 0), (0, 1))))  # y[i] is written after a[i], b[i] are read (full-shape input)
twin(OP, _float_act.DIV)  # float32: edgecc/ops/_float_act.py
