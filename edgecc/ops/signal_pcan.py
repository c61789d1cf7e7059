"""SignalPCAN (TFLite Micro's signal library): per-channel energy normalization, the automatic
gain control of the audio front end (fixed point).

Inputs: x uint32 [channels] (filter bank output), the noise estimate uint32 [channels], the gain
table int16 (a constant, >= 125 entries); output uint32 [channels]; option snr_shift.
Per channel: gain = W(noise) as a uint32 (an int16 sign-extended), where W(v) = lut[v] for v <= 2,
else with b = the number of significant bits of v, L = lut + 4 b - 6, f = (v shifted to 11 bits)
& 0x3FF: r = ((L[2] f) >> 5) + L[1] * 32; r = (r f + 2^14) >> 15; W = int16(r + L[0]).
snr = (uint64 x * gain) >> snr_shift, kept as uint32; y = snr^2 >> 20 (snr < 2^13) or
(snr >> 6) - 64: the shrink function with 12 fractional bits in, 6 out.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, const, in_type, register
from edgecc.ops._signal import opt, signal_op, types_are

LUT_MIN = 4 * 32 - 6 + 3  # W reads up to lut[4 * 32 - 6 + 2]


def _wrap(x: int, bits: int) -> int:
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def wide_dynamic(v: int, lut: np.ndarray) -> int:
    if v <= 2:
        return int(lut[v])
    b = v.bit_length()
    base = 4 * b - 6
    f = ((v << (11 - b)) if b < 11 else (v >> (b - 11))) & 0x3FF
    r = (int(lut[base + 2]) * f) >> 5
    r = _wrap(r + int(lut[base + 1]) * 32, 32)
    r = (_wrap(r * f, 32) + (1 << 14)) >> 15
    return _wrap(r + int(lut[base]), 16)


def shrink(snr: int) -> int:
    return (snr * snr) >> 20 if snr < (2 << 12) else (snr >> 6) - 64


def gain_table(g: Graph, n: Node) -> bool:
    """the gain table must be a constant int16 1-D tensor of at least 125 entries, the input, noise estimate and output 1-D of one length, snr_shift 0..63"""
    lut = const(g, n, 2) if len(n.inputs) > 2 else None
    shape = in_type(g, n).shape
    return (lut is not None and lut.ndim == 1 and lut.size >= LUT_MIN and len(shape) == 1
            and in_type(g, n, 1).shape == shape and g.type(n.outputs[0]).shape == shape
            and 0 <= opt(n, "snr_shift") <= 63)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, DType.UINT32)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    lut, shift = const(g, n, 2), opt(n, "snr_shift")
    out = []
    for x, noise in zip(ins[0].ravel(), ins[1].ravel()):
        gain = wide_dynamic(int(noise), lut) & 0xFFFFFFFF
        out.append(shrink(((int(x) * gain) >> shift) & 0xFFFFFFFF))
    return [np.array(out, np.uint32)]


def lower(g: Graph, n: Node, target) -> Kernel:
    return Kernel("signal_pcan.c.j2",
                  params=dict(channels=in_type(g, n).numel, shift=opt(n, "snr_shift")),
                  consts=dict(lut=const(g, n, 2).astype(np.int16)))


OP = register(signal_op("SignalPCAN", infer, reference, lower,
                        [types_are((DType.UINT32, DType.UINT32, DType.INT16), (DType.UINT32,)),
                         gain_table],
                        dtypes="uint32 (uint32 noise estimate, int16 gain table) -> uint32"))
