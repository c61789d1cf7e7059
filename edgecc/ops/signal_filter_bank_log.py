"""SignalFilterBankLog (TFLite Micro's signal library): y = min(round(ln(x << correction) *
output_scale), 32767) in its fixed point, 0 where the shifted value is 0 or 1.

Input uint32 [channels], output int16 [channels]; options input_correction_bits, output_scale.
The logarithm (numpy twin `log32`, C ec_signal_log32 in runtime_c/edgecc_signal.h): log2 in Q16
as the integer part (the most significant bit) plus the fraction f of the mantissa in Q16,
corrected by the 129-entry table of round(65536 (log2(1 + i / 128) - i / 128)) interpolated
linearly (products >> 16, floor); then ln = (45426 log2 + 2^15) >> 16 in 64 bits and the output
scale (out_scale ln + 2^15) >> 16 in 32 bits (wrapping as uint32 arithmetic does).
"""
from __future__ import annotations

import math

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, in_type, register
from edgecc.ops._signal import opt, signal_op, types_are

LOG_TABLE = [round(65536 * (math.log2(1 + i / 128) - i / 128)) for i in range(129)] + [0]
M32 = 0xFFFFFFFF


def log32(x: int, out_scale: int) -> int:
    integer = x.bit_length() - 1
    frac = x - (1 << integer)
    frac = frac << (16 - integer) if integer < 16 else frac >> (integer - 16)
    seg = frac >> 9
    c0, c1 = LOG_TABLE[seg], LOG_TABLE[seg + 1]
    fraction = (frac + c0 + (((c1 - c0) * (frac - 512 * seg)) >> 16)) & M32
    log2 = ((integer << 16) + fraction) & M32
    loge = ((45426 * log2 + 32768) >> 16) & M32
    return (((out_scale * loge) & M32) + 32768 & M32) >> 16


def options_in_range(g: Graph, n: Node) -> bool:
    """input and output must be 1-D of one length, input_correction_bits 0..31, output_scale >= 0"""
    shape = in_type(g, n).shape
    return (len(shape) == 1 and g.type(n.outputs[0]).shape == shape
            and 0 <= opt(n, "input_correction_bits") <= 31 and opt(n, "output_scale") >= 0)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, DType.INT16)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    bits, scale = opt(n, "input_correction_bits"), opt(n, "output_scale") & M32
    out = []
    for v in ins[0].ravel():
        s = (int(v) << bits) & M32
        out.append(min(log32(s, scale), 32767) if s > 1 else 0)
    return [np.array(out, np.int16)]


def lower(g: Graph, n: Node, target) -> Kernel:
    return Kernel("signal_filter_bank_log.c.j2",
                  params=dict(count=in_type(g, n).numel, bits=opt(n, "input_correction_bits"),
                              scale=opt(n, "output_scale")),
                  consts=dict(table=np.array(LOG_TABLE, np.uint16)))


OP = register(signal_op("SignalFilterBankLog", infer, reference, lower,
                        [types_are((DType.UINT32,), (DType.INT16,)), options_in_range],
                        dtypes="uint32 -> int16"))
