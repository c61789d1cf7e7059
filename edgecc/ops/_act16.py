"""LOGISTIC and TANH on int16 -> int16, as TFLite Micro computes them.

Owns: TFLM's int16 Prepare for these two ops (zero points 0, output scale 2**-15, and the input
rescaling: a power-of-two input scale of 2**-12 (LOGISTIC) or 2**-12 / 2**-11 (TANH) takes the
multiplier 3 << shift with no shift; any other scale s takes m = int(s * 4096 * 3 * 2**k) with the
smallest k that lifts it above 32767 / 2, and a rounding right shift by k), their constraints,
the numpy references and the lowering to templates/c/{logistic,tanh}_s16.c.j2.

Both then interpolate TFLite's 256-entry sigmoid(i/24) table (edgecc/ops/_lstm_math.py
SIGMOID_TABLE): LOGISTIC splits |v| into index >> 9 and a 9-bit fraction, TANH (via tanh(x) =
2 * sigmoid(2x) - 1) into index >> 8 and an 8-bit fraction. The C twins are ec_logistic16 and
ec_tanh16 in runtime_c/edgecc_lstm.h.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, in_type, out_type
from edgecc.ops import _arith as ew
from edgecc.ops._lstm_math import SIGMOID_TABLE, checked_log2, sigmoid_lookup16, tanh16

INPUT_INT_BITS = 3
OUTPUT_FRAC_BITS = 15
MAX_INPUT_SCALE = 32767.0 / (4096 * 3)  # above it the multiplier leaves 16 bits (TFLM DCHECKs)


def is_int16(g: Graph, n: Node) -> bool:
    return in_type(g, n).dtype == DType.INT16


def input_rescale(scale: float, tanh: bool) -> tuple[int, int]:
    """(multiplier, right shift) the int16 kernel applies: v = (x * m + round) >> shift."""
    log2, pot = checked_log2(scale)
    shift = (15 - INPUT_INT_BITS) + log2
    if pot and (shift == 0 or (tanh and shift == 1)):
        return 3 << shift, 0  # TFLM stores multiplier 0; its kernel then uses 3 << shift, 0
    mult, shift = float(np.float32(scale)) * 4096.0 * 3.0, 0
    while mult <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        mult *= 2.0
    return int(mult), shift


def _scaled(x, mult: int, shift: int) -> np.ndarray:
    rnd = (1 << (shift - 1)) if shift > 0 else 0
    return (np.asarray(x, dtype=np.int64) * mult + rnd) >> shift


def logistic16(x, mult: int, shift: int) -> np.ndarray:
    """reference_integer_ops::Logistic on int16 after the rescaling; Q0.15 out."""
    return sigmoid_lookup16(_scaled(x, mult, shift))


# ---- constraints (both ops) ---------------------------------------------------------------

def int8_or_int16_in_out(g: Graph, n: Node) -> bool:
    """input and output must both be int8 or both int16"""
    return (in_type(g, n).dtype, out_type(g, n).dtype) in ((DType.INT8,) * 2, (DType.INT16,) * 2)


def int16_zero_points(g: Graph, n: Node) -> bool:
    """int16 input and output must have zero point 0"""
    return not is_int16(g, n) or (ew.zp(in_type(g, n)) == 0 and ew.zp(out_type(g, n)) == 0)


def int16_output_scale(g: Graph, n: Node) -> bool:
    """int16 output scale must be 2**-15"""
    if not is_int16(g, n):
        return True
    log2, pot = checked_log2(float(ew.scale32(out_type(g, n))))
    return pot and log2 == -OUTPUT_FRAC_BITS


def int16_input_scale(g: Graph, n: Node) -> bool:
    """int16 input scale must be at most 32767 / 12288 (the rescaling multiplier is 16-bit)"""
    return not is_int16(g, n) or float(ew.scale32(in_type(g, n))) <= MAX_INPUT_SCALE


# the int16 checks; the op lists int8_or_int16_in_out itself, beside its int8 ones
CONSTRAINTS = [int16_zero_points, int16_output_scale, int16_input_scale]


# ---- references and lowering --------------------------------------------------------------

def _rescale(g: Graph, n: Node) -> tuple[int, int]:
    return input_rescale(float(ew.scale32(in_type(g, n))), n.op == "TANH")


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    mult, shift = _rescale(g, n)
    fn = tanh16 if n.op == "TANH" else logistic16
    return [fn(ins[0], mult, shift).astype(np.int16)]


def lower(g: Graph, n: Node, target) -> Kernel:
    mult, shift = _rescale(g, n)
    template = "tanh_s16.c.j2" if n.op == "TANH" else "logistic_s16.c.j2"
    return Kernel(template, params=dict(count=in_type(g, n).numel, mult=mult, shift=shift),
                  consts=dict(sigmoid_table=SIGMOID_TABLE.astype(np.uint16)), variant="s16")
