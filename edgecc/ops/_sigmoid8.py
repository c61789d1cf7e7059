"""The int8 path LOGISTIC and TANH share: TFLite Micro's Q4.27 input rescale and 256-entry table.

Owns: Prepare's input rescaling (m = frexp(s_in * 2**27) -> (round(q * 2**31), left shift),
radius = CalculateInputRadius(4, left shift)), the per-value saturation outside the radius, and
the op plumbing both share (reference and lower, with the int16 path in _act16.py). Each op
module keeps only its gemmlowp function, output format and constraints.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from edgecc.numerics.gemmlowp import calculate_input_radius
from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, in_type
from edgecc.ops import _act16
from edgecc.ops import _arith as ew
from edgecc.ops._lut import INT8_VALUES, lut_kernel
from edgecc.numerics.fixed_point import MAX_LEFT_SHIFT, ScaleRangeError, mbqm, rdbpot, tflite_round

INPUT_INT_BITS = 4

Int8Fn = Callable[[Graph, Node, np.ndarray], np.ndarray]


def input_rescale(scale: float) -> tuple[int, int, int]:
    """(multiplier, left shift, radius) as TFLM's Prepare computes them for tanh/logistic."""
    frac, shift = math.frexp(float(scale) * float(1 << (31 - INPUT_INT_BITS)))
    if not 0 <= shift <= MAX_LEFT_SHIFT:  # TFLM shifts left by it; outside, no int32 range holds
        raise ScaleRangeError(f"input scale {scale:.3g} out of range for tanh/logistic "
                              f"(input shift {shift} outside [0, {MAX_LEFT_SHIFT}])")
    radius = calculate_input_radius(INPUT_INT_BITS, shift)
    return int(tflite_round(frac * (1 << 31))), shift, radius


def int8(g: Graph, n: Node, q: np.ndarray, fn: Callable[[np.ndarray], np.ndarray],
         out_frac_bits: int, out_zp: int) -> np.ndarray:
    """int8 outputs of int8 inputs q: fn maps Q4.27 raws to Q0.31 raws; the result is
    clamp(RoundingDivideByPOT(y, 31 - out_frac_bits) + out_zp), saturated outside the radius."""
    m, shift, radius = input_rescale(ew.scale32(in_type(g, n)))
    v = np.asarray(q, dtype=np.int64) - ew.zp(in_type(g, n))
    inner = np.clip(v, -radius + 1, radius - 1)  # keep the fixed-point path in its valid range
    y = rdbpot(fn(mbqm(inner, m, shift)), 31 - out_frac_bits) + out_zp
    out = np.where(v <= -radius, -128, np.where(v >= radius, 127, np.clip(y, -128, 127)))
    return out.astype(np.int8)


def reference(g: Graph, n: Node, ins: list, int8_fn: Int8Fn) -> list[np.ndarray]:
    if _act16.is_int16(g, n):  # edgecc/ops/_act16.py
        return _act16.reference(g, n, ins)
    return [int8_fn(g, n, INT8_VALUES)[ins[0].astype(np.int64) + 128]]


def lower(g: Graph, n: Node, target, template: str, int8_fn: Int8Fn) -> Kernel:
    if _act16.is_int16(g, n):
        return _act16.lower(g, n, target)
    return lut_kernel(template, g, n, lambda q: int8_fn(g, n, q))
