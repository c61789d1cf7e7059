"""The int8 sums of ADD_N and CUMSUM, as TFLite Micro prepares and computes them.

Prepare: left shift 20; input multiplier s_in / (2 s_in) and output multiplier
2 s_in / (2**20 s_out), both in double, quantized with QuantizeMultiplierSmallerThanOneExp.
Per sum: the accumulator STARTS at scale_in(-zp_in) (TFLite's "x = 0" is the input offset, so
-zp_in is counted once more), each term adds scale_in(q - zp_in), where
scale_in(v) = MBQM_<1(v * 2**20, m_in, shift_in); the output is MBQM_<1(acc, m_out, shift_out) +
zp_out clamped to int8. The C templates compute the same with ec_mbqm (shift <= 0).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import TensorType
from edgecc.ops._arith import scale32, zp
from edgecc.numerics.fixed_point import (mbqm_smaller_than_one,
                                         quantize_multiplier_smaller_than_one_exp)

LEFT_SHIFT = 20


def params(x: TensorType, y: TensorType) -> dict:
    twice = 2 * float(scale32(x))
    m_in, s_in = quantize_multiplier_smaller_than_one_exp(float(scale32(x)) / twice)
    m_out, s_out = quantize_multiplier_smaller_than_one_exp(
        twice / ((1 << LEFT_SHIFT) * float(scale32(y))))
    return dict(in_off=-zp(x), out_zp=zp(y), left=1 << LEFT_SHIFT, m_in=m_in, s_in=s_in,
                m_out=m_out, s_out=s_out)


def scale_in(q, p: dict) -> np.ndarray:
    """scale_in(q - zp_in) of int8 values q (the accumulator's start is scale_in of 0 - zp)."""
    v = (np.asarray(q, np.int64) + p["in_off"]) * p["left"]
    return mbqm_smaller_than_one(v, p["m_in"], p["s_in"])


def output(acc, p: dict) -> np.ndarray:
    out = mbqm_smaller_than_one(np.asarray(acc, np.int64), p["m_out"], p["s_out"]) + p["out_zp"]
    return np.clip(out, -128, 127).astype(np.int8)
