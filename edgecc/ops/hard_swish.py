"""HARD_SWISH, int8 -> int8: TFLite's 16-bit fixed-point algorithm, as a 256-entry table.

Prepare (float): hires = s_in / 128; output multiplier QuantizeMultiplier(hires / s_out) and
"reluish" multiplier QuantizeMultiplier(hires / (3 / 32768)), both downscaled to int16
(DownScaleInt32ToInt16Multiplier). Per value: x = (q - zp_in) * 128 (int16);
pre = SRDHM16(x, m_out16); r = x rescaled by the reluish multiplier with TFLite's careful saturating
left shifts (or a rounding right shift), mapped from [-1, 1] to [0, 1] by (r + 32768) >> 1;
out = RoundingDivideByPOT(SaturatingDoublingHighMul(r, pre), -out_exponent) + zp_out, clamped.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._lut import INT8_VALUES, int8_in_out, lut_kernel
from edgecc.ops import _float_act
from edgecc.ops._float import twin
from edgecc.numerics.fixed_point import quantize_multiplier

I16_MIN, I16_MAX = -(1 << 15), (1 << 15) - 1


def downscale_to_int16(m: int) -> int:
    """DownScaleInt32ToInt16Multiplier."""
    if m >= (1 << 31) - 1 - (1 << 15):
        return I16_MAX
    return (m + (1 << 15)) >> 16


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def srdhm16(a: int, b: int) -> int:
    """gemmlowp SaturatingRoundingDoublingHighMul for int16."""
    if a == b == I16_MIN:
        return I16_MAX
    ab = a * b
    nudge = (1 << 14) if ab >= 0 else 1 - (1 << 14)
    return _tdiv(ab + nudge, 1 << 15)


def sdhm16(a: int, b: int) -> int:
    """SaturatingDoublingHighMul (rounds toward zero)."""
    if a == b == I16_MIN:
        return I16_MAX
    return _tdiv(a * b, 1 << 15)


def rdbpot16(x: int, e: int) -> int:
    mask = (1 << e) - 1
    rem = x & mask
    thr = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> e) + (1 if rem > thr else 0)


def sat_shl16(x: int, amount: int) -> int:
    return max(I16_MIN, min(I16_MAX, x * (1 << amount)))


def multipliers(g: Graph, n: Node) -> tuple[int, int, int, int]:
    f32 = np.float32
    hires = f32(1.0 / 128.0) * ew.scale32(in_type(g, n))
    mo, eo = quantize_multiplier(float(f32(hires / ew.scale32(out_type(g, n)))))
    mr, er = quantize_multiplier(float(f32(hires / f32(3.0 / 32768.0))))
    return downscale_to_int16(mo), eo, downscale_to_int16(mr), er


def output_exponent_nonpositive(g: Graph, n: Node) -> bool:
    """output scale must be at least input scale / 128 (TFLite requires a non-positive output exponent)"""
    return multipliers(g, n)[1] <= 0


def hard_swish_value(v: int, mo: int, eo: int, mr: int, er: int, out_zp: int) -> int:
    x = v * 128
    pre = srdhm16(x, mo)
    r = x
    if er > 0:
        r = sat_shl16(r, er - 1)
    r = srdhm16(r, mr)
    if er > 0:
        r = sat_shl16(r, 1)
    if er < 0:
        r = rdbpot16(r, -er)
    r = (r + (1 << 15)) >> 1
    out = rdbpot16(sdhm16(r, pre), -eo) + out_zp
    return max(-128, min(127, out))


def int8(g: Graph, n: Node, q: np.ndarray) -> np.ndarray:
    mo, eo, mr, er = multipliers(g, n)
    zi, zo = ew.zp(in_type(g, n)), ew.zp(out_type(g, n))
    return np.array([hard_swish_value(int(x) - zi, mo, eo, mr, er, zo) for x in np.ravel(q)],
                    dtype=np.int8).reshape(np.shape(q))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [int8(g, n, INT8_VALUES)[ins[0].astype(np.int64) + 128]]


def lower(g: Graph, n: Node, target) -> Kernel:
    return lut_kernel("hard_swish.c.j2", g, n, lambda q: int8(g, n, q))


OP = register(OpDef("HARD_SWISH", infer, reference, lower,
                    [int8_in_out, ew.per_tensor_quantized, output_exponent_nonpositive],
                    dtypes="int8 (table)", inplace=((0, 0),)))
twin(OP, _float_act.HARD_SWISH)  # float32: edgecc/ops/_float_act.py
