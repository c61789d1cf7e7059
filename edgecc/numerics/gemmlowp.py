"""gemmlowp's fixed-point math functions (exp, 1/(1+x), reciprocal) in numpy, bit for bit.

Owns: the transcendental fixed-point helpers TFLite's quantized SOFTMAX is built on, evaluated on
int64 numpy arrays that hold int32 values (wrapping to 32 bits wherever C would wrap), and the
softmax scaling constants TFLite prepares (PreprocessSoftmaxScaling, CalculateInputRadius). Their
C twins are the static inline functions of `runtime_c/edgecc_fixedpoint.h`; both must stay
bit-identical with each other and with gemmlowp/TFLite Micro.

A value `FixedPoint<int32, I>` is a raw int32 r meaning r / 2**(31 - I): I integer bits, 31 - I
fractional bits. Multiplying two fixed-point values is SaturatingRoundingDoublingHighMul of their
raws (integer bits add up); Rescale changes I by a saturating (left) or rounding (right) shift.
"""
from __future__ import annotations

import math

import numpy as np

from edgecc.numerics.fixed_point import (INT32_MAX, INT32_MIN, quantize_multiplier, rdbpot,
                                         srdhm, wrap32)

# gemmlowp's raw constants (RescaleConstantInitializer is the identity for int32).
EXP_MINUS_ONE_EIGHTH = 1895147668  # exp(-1/8) in Q0.31
ONE_THIRD = 715827883  # 1/3 in Q0.31
# exp(-2**k) in Q0.31 for k = -2 .. 4: the barrel shifter of exp_on_negative_values.
EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
              (2, 39332535), (3, 720401), (4, 242))
FORTY_EIGHT_OVER_17 = 1515870810  # 48/17 in Q2.29
NEG_THIRTY_TWO_OVER_17 = -1010580540  # -32/17 in Q2.29


def _i64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def sat_shl(x, exponent: int) -> np.ndarray:
    """SaturatingRoundingMultiplyByPOT for exponent >= 0: x * 2**exponent saturated to int32.

    gemmlowp saturates when x > 2**(31-e) - 1 or x < -(2**(31-e) - 1); note that the exactly
    representable -2**(31-e) also saturates (to INT32_MIN, which is the same value).
    """
    x = _i64(x)
    if exponent == 0:
        return x
    threshold = (1 << (31 - exponent)) - 1
    out = x << exponent
    out = np.where(x > threshold, INT32_MAX, out)
    return np.where(x < -threshold, INT32_MIN, out)


def rescale(x, src_int_bits: int, dst_int_bits: int) -> np.ndarray:
    """gemmlowp Rescale<dst>(FixedPoint<int32, src>)."""
    e = src_int_bits - dst_int_bits
    return sat_shl(x, e) if e >= 0 else rdbpot(x, -e)


def rounding_half_sum(a, b) -> np.ndarray:
    """(a + b) / 2 rounded half away from zero (gemmlowp RoundingHalfSum, int32)."""
    s = _i64(a) + _i64(b)
    sign = np.where(s >= 0, 1, -1)
    num = s + sign
    return np.where(num >= 0, num // 2, -((-num) // 2))  # C division truncates


def exp_on_interval_between_negative_one_quarter_and_0_excl(a) -> np.ndarray:
    """exp(a) for a in [-1/4, 0), Q0.31 in and out: Taylor series around -1/8."""
    x = wrap32(_i64(a) + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rdbpot(x4, 2)
    poly = rdbpot(wrap32(srdhm(wrap32(x4_over_4 + x3), ONE_THIRD) + x2), 1)
    return wrap32(EXP_MINUS_ONE_EIGHTH + srdhm(EXP_MINUS_ONE_EIGHTH, wrap32(x + poly)))


def exp_on_negative_values(a, int_bits: int) -> np.ndarray:
    """exp(a) for a <= 0 given as FixedPoint<int32, int_bits>; result in Q0.31."""
    a = _i64(a)
    frac = 31 - int_bits
    one_quarter = 1 << (frac - 2)
    mask = one_quarter - 1
    a_mod = (a & mask) - one_quarter
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(rescale(a_mod, int_bits, 0))
    remainder = wrap32(a_mod - a)
    for k, mult in EXP_BARREL:
        if int_bits > k:
            bit = (remainder >> (frac + k)) & 1
            result = np.where(bit != 0, srdhm(result, mult), result)
    if int_bits > 5:
        clamp = -(1 << (36 - int_bits))  # -32.0 in this format
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, INT32_MAX, result)


def _two_over_one_plus_x_q2_29(a) -> np.ndarray:
    """2 / (1 + a) for a in [0, 1) (Q0.31 in) as Q2.29: three Newton-Raphson steps on the half
    denominator (1 + a) / 2, the common core of gemmlowp's two functions below."""
    half_den = rounding_half_sum(a, INT32_MAX)
    x = wrap32(FORTY_EIGHT_OVER_17 + srdhm(half_den, NEG_THIRTY_TWO_OVER_17))
    for _ in range(3):
        one_minus = wrap32((1 << 29) - srdhm(half_den, x))
        x = wrap32(x + rescale(srdhm(x, one_minus), 4, 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(a) -> np.ndarray:
    """1 / (1 + a) for a in [0, 1), Q0.31 in and out: three Newton-Raphson steps in Q2.29."""
    # ExactMulByPot<-1> makes it Q1.30, then Rescale<0>
    return rescale(_two_over_one_plus_x_q2_29(a), 1, 0)


def one_minus_x_over_one_plus_x_for_x_in_0_1(a) -> np.ndarray:
    """(1 - a) / (1 + a) for a in [0, 1), Q0.31 in and out: 2 / (1 + a) - 1 (gemmlowp)."""
    return rescale(wrap32(_two_over_one_plus_x_q2_29(a) - (1 << 29)), 2, 0)


def count_leading_zeros32(x) -> np.ndarray:
    """Leading zero bits of x as a uint32 (32 for 0)."""
    u = _i64(x) & 0xFFFFFFFF
    out = np.full(u.shape, 32, dtype=np.int64)
    nz = u != 0
    # float64 holds every uint32 exactly, so frexp gives floor(log2(u)) + 1 without error
    _, e = np.frexp(u[nz].astype(np.float64))
    out[nz] = 32 - e
    return out


def get_reciprocal(x, x_integer_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLite GetReciprocal: (1/x as Q0.31 scaled into [0.5, 1), num_bits_over_unit)."""
    x = _i64(x)
    headroom_plus_one = count_leading_zeros32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = ((x & 0xFFFFFFFF) << headroom_plus_one) & 0xFFFFFFFF
    shifted_minus_one = wrap32(shifted - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_minus_one), num_bits_over_unit


# ---- softmax constants (TFLite's Prepare) ----------------------------------------------------

SOFTMAX_SCALED_DIFF_INT_BITS = 5  # exp input is Q5.26
SOFTMAX_ACCUM_INT_BITS = 12  # sum of exps is Q12.19


def softmax_input_beta_real(beta: float, input_scale: float,
                            input_integer_bits: int = SOFTMAX_SCALED_DIFF_INT_BITS) -> float:
    """PreprocessSoftmaxScaling's real multiplier (double; capped at 2**31 - 1)."""
    return min(float(beta) * float(input_scale) * float(1 << (31 - input_integer_bits)),
               float((1 << 31) - 1))


def preprocess_softmax_scaling(beta: float, input_scale: float,
                               input_integer_bits: int = SOFTMAX_SCALED_DIFF_INT_BITS
                               ) -> tuple[int, int]:
    """(input_beta_multiplier, input_beta_left_shift) as TFLite's PreprocessSoftmaxScaling."""
    return quantize_multiplier(softmax_input_beta_real(beta, input_scale, input_integer_bits))


def calculate_input_radius(input_integer_bits: int, input_left_shift: int,
                           total_signed_bits: int = 31) -> int:
    """Largest |input diff| whose rescaling cannot overflow: TFLite CalculateInputRadius."""
    max_input_rescaled = (1.0 * ((1 << input_integer_bits) - 1)
                          * float(1 << (total_signed_bits - input_integer_bits))
                          / float(1 << input_left_shift))
    return int(math.floor(max_input_rescaled))


def softmax_rows(x: np.ndarray, mult: int, left_shift: int, diff_min: int, out_bits: int
                 ) -> np.ndarray:
    """TFLite's quantized softmax over the last axis of int8 `x` (2-D: rows x depth).

    Returns int64 values in the output type's range (int8 for out_bits 8, int16 for 16).
    """
    x = _i64(x)
    out_min = -(1 << (out_bits - 1))
    out_max = (1 << (out_bits - 1)) - 1
    diff = x - x.max(axis=1, keepdims=True)
    valid = diff >= diff_min
    # MultiplyByQuantizedMultiplierGreaterThanOne: diff_min keeps diff * 2**shift inside int32
    rescaled = srdhm(np.where(valid, diff, 0) << left_shift, mult)
    exps = exp_on_negative_values(rescaled, SOFTMAX_SCALED_DIFF_INT_BITS)
    summands = np.where(valid, rescale(exps, 0, SOFTMAX_ACCUM_INT_BITS), 0)
    sums = wrap32(summands.sum(axis=1))
    recip, bits_over_unit = get_reciprocal(sums, SOFTMAX_ACCUM_INT_BITS)
    exponent = bits_over_unit + 31 - out_bits
    if np.any((exponent < 0) | (exponent > 31)):
        raise ValueError("softmax reciprocal exponent out of range")
    unsat = rdbpot(srdhm(recip[:, None], exps), exponent[:, None])
    out = np.clip(unsat + out_min, out_min, out_max)
    return np.where(valid, out, out_min)
