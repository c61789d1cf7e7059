"""TFLite's integer arithmetic, in numpy, bit for bit.

Owns: turning a real multiplier into (int32 multiplier, shift) exactly as TFLite's
`QuantizeMultiplier` does, and the fixed-point primitives of gemmlowp/TFLite
(SaturatingRoundingDoublingHighMul, RoundingDivideByPOT, MultiplyByQuantizedMultiplier) evaluated
on int64 arrays with int32 wrap-around where C would wrap. The C twins of these functions live in
`runtime_c/edgecc_rt.h`; both must stay bit-identical.
"""
from __future__ import annotations

import math

import numpy as np

from edgecc.errors import UnsupportedModel

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1



def fits_int32(a: np.ndarray) -> bool:
    """Whether every value of a (any integers) lies in int32."""
    a = np.asarray(a, dtype=np.int64)
    return bool(a.size == 0 or (a.min() >= INT32_MIN and a.max() <= INT32_MAX))


ROUND_LIMIT = 1 << 62  # tflite_round of an infinite value (a bound beyond every integer type)


def tflite_round(x: float) -> int:
    """std::round: half away from zero. An infinite x (a float32 quotient that overflowed, from
    an extreme scale) gives +-ROUND_LIMIT, which every caller's clamp to its dtype absorbs; NaN
    gives 0 (the validator refuses NaN scales, so only derived quotients can get here)."""
    if not math.isfinite(x):
        return 0 if math.isnan(x) else (ROUND_LIMIT if x > 0 else -ROUND_LIMIT)
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


MAX_LEFT_SHIFT = 30  # TFLite computes x * (1 << shift) in int32: a larger shift overflows


class ScaleRangeError(UnsupportedModel):
    """A ratio of quantization scales whose requantization TFLite's int32 arithmetic cannot
    express (not finite, or a left shift above MAX_LEFT_SHIFT); lowering adds the op."""


def quantize_multiplier(m: float) -> tuple[int, int]:
    """TFLite QuantizeMultiplier: m ~= q * 2**(shift - 31) with q in [2**30, 2**31).
    Ratios too small for 2**-31 become (0, 0) as in TFLite; ratios of 2**30 and more, and
    non-finite ones, are refused (ScaleRangeError): TFLite's own arithmetic would overflow."""
    if m == 0.0:
        return 0, 0
    if not math.isfinite(m):
        raise ScaleRangeError(f"scale ratio {m} out of range")
    frac, shift = math.frexp(m)
    q = tflite_round(frac * (1 << 31))
    if q == (1 << 31):
        q //= 2
        shift += 1
    if shift < -31:
        shift, q = 0, 0
    if shift > MAX_LEFT_SHIFT:
        raise ScaleRangeError(f"scale ratio {m:.3g} out of range (its requantization shift "
                              f"{shift} exceeds {MAX_LEFT_SHIFT})")
    # TFLite clamps shift > 30 only in TFLITE_SINGLE_ROUNDING builds; TFLM's default build (the
    # oracle) uses double rounding and keeps the shift as is.
    return int(q), int(shift)


def quantize_multiplier_smaller_than_one_exp(m: float) -> tuple[int, int]:
    """TFLite QuantizeMultiplierSmallerThanOneExp: like quantize_multiplier, for 0 < m < 1."""
    q, shift = quantize_multiplier(m)
    assert shift <= 0
    return q, shift


def wrap32(x: np.ndarray) -> np.ndarray:
    """int64 values modulo 2^32 as signed int32 values (in int64): C's int32 wrap-around."""
    return ((np.asarray(x, dtype=np.int64) + (1 << 31)) % (1 << 32)) - (1 << 31)


def _trunc_div_pow2(x: np.ndarray, bits: int) -> np.ndarray:
    """C integer division by 2**bits (rounds toward zero)."""
    x = np.asarray(x, dtype=np.int64)
    return np.where(x >= 0, x >> bits, -((-x) >> bits))


def srdhm(a, b) -> np.ndarray:
    """SaturatingRoundingDoublingHighMul on int32 values (as int64 arrays)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    overflow = (a == INT32_MIN) & (b == INT32_MIN)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    res = _trunc_div_pow2(ab + nudge, 31)
    return np.where(overflow, INT32_MAX, res)


def rdbpot(x, exponent) -> np.ndarray:
    """RoundingDivideByPOT: x / 2**exponent rounded to nearest, ties away from zero."""
    x = np.asarray(x, dtype=np.int64)
    exponent = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def mbqm(x, multiplier, shift) -> np.ndarray:
    """MultiplyByQuantizedMultiplier (TFLite's double-rounding form), element-wise."""
    x = np.asarray(x, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    left = np.where(shift > 0, shift, 0)
    right = np.where(shift > 0, 0, -shift)
    return rdbpot(srdhm(wrap32(x << left), multiplier), right)


def mbqm_smaller_than_one(x, multiplier, shift) -> np.ndarray:
    """MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0)."""
    return rdbpot(srdhm(x, multiplier), -np.asarray(shift, dtype=np.int64))


def mbqm_greater_than_one(x, multiplier, left_shift) -> np.ndarray:
    """MultiplyByQuantizedMultiplierGreaterThanOne (left shift >= 0)."""
    return srdhm(wrap32(np.asarray(x, dtype=np.int64) << left_shift), multiplier)


def mbqm64(x, multiplier, shift) -> np.ndarray:
    """MultiplyByQuantizedMultiplier's int64 overload (TFLite's 16x8 conv/FC requantization).

    The multiplier is first rounded to 16 bits (m + 2**15) >> 16 (0x7FFF from 0x7FFF0000 up), then
    (x * m16 + 2**(14 - shift)) >> (15 - shift): one rounding, half up, unlike the int32 form's
    SRDHM + RoundingDivideByPOT. int64 wraps as C does on the products, the result is cast to
    int32. Valid for shift <= 14 (TFLite assumes -31..7).
    """
    x = np.asarray(x, dtype=np.int64)
    m = np.asarray(multiplier, dtype=np.int64)
    total = 15 - np.asarray(shift, dtype=np.int64)
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    with np.errstate(over="ignore"):
        r = x * reduced + (np.int64(1) << (total - 1))
    return wrap32(r >> total)


def mbqm64_prepare(multiplier, shift) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """mbqm64's constants rearranged for an int32 x: (M, R, k) with
    mbqm64(x, multiplier, shift) == ((x * M + R) >> 32) >> k, one 32x32->64 multiply and no
    64-bit variable shift (ec_mbqm64_pre). With total = 15 - shift and the 16-bit multiplier r:
    M = r << max(32 - total, 0), R = 2**(31 + k), k = max(total - 32, 0); exact because
    shifting right by 32 and then by k is flooring by 2**(32 + k). None unless total >= 16
    everywhere (shift <= -1), which keeps M below 2**31."""
    m = np.asarray(multiplier, dtype=np.int64)
    total = 15 - np.asarray(shift, dtype=np.int64)
    if np.any(total < 16):
        return None
    reduced = np.where(m < 0x7FFF0000, (m + (1 << 15)) >> 16, 0x7FFF)
    k = np.maximum(total - 32, 0)
    return reduced << np.maximum(32 - total, 0), np.int64(1) << (31 + k), k


def mbqm64_pre(x, m_pre, r_pre, k) -> np.ndarray:
    """mbqm64 through mbqm64_prepare's constants (int32 x): ((x * M + R) >> 32) >> k."""
    return ((np.asarray(x, dtype=np.int64) * m_pre + r_pre) >> 32) >> k


def activation_range(act: int, dtype_min: int, dtype_max: int, scale: float, zp: int) -> tuple[int, int]:
    """CalculateActivationRangeQuantized: clamp bounds of a fused activation in the output's domain."""
    def q(v: float) -> int:  # TFLite divides in float32, then std::round
        with np.errstate(over="ignore"):
            return zp + tflite_round(float(np.float32(v) / np.float32(scale)))

    if act == 0:  # NONE
        return dtype_min, dtype_max
    if act == 1:  # RELU
        return max(dtype_min, q(0.0)), dtype_max
    if act == 3:  # RELU6
        return max(dtype_min, q(0.0)), min(dtype_max, q(6.0))
    if act == 2:  # RELU_N1_TO_1
        return max(dtype_min, q(-1.0)), min(dtype_max, q(1.0))
    raise ValueError(f"unsupported fused activation {act}")


ACTIVATION_NAMES = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6"}
