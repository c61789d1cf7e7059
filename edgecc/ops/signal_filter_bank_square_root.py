"""SignalFilterBankSquareRoot (TFLite Micro's signal library): y = isqrt(x) >> scale_bits, the
integer square root of each uint64 filter bank channel, rounded, as a uint32.

Inputs x uint64 [channels], scale_bits int32 scalar (a constant here); output uint32 [channels].
The root (runtime_c/edgecc_signal.h ec_signal_sqrt64, numpy twin `sqrt64`) is the bit-by-bit
method from the most significant pair of bits down, then + 1 when the remainder exceeds the root
(unless that overflows: 0xFFFF for 32-bit inputs, 0xFFFFFFFF for 64-bit ones); inputs below 2^32
take the 32-bit routine.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, const, in_type, register
from edgecc.ops._signal import signal_op, types_are


def _isqrt(num: int, width: int) -> int:
    """Sqrt32 / Sqrt64 of TFLite Micro's signal library on one value."""
    if num == 0:
        return 0
    top = (64 if width == 64 else 32) - num.bit_length()  # width - MostSignificantBit
    top |= 1
    bit = 1 << (width - 1 - top)
    res = 0
    for _ in range((width - 1 - top) // 2 + 1):
        if num >= res + bit:
            num -= res + bit
            res = (res >> 1) + bit
        else:
            res >>= 1
        bit >>= 2
    if num > res and res != (0xFFFF if width == 32 else 0xFFFFFFFF):
        res += 1
    return res


def sqrt64(x: int) -> int:
    return _isqrt(x, 32) if x >> 32 == 0 else _isqrt(x, 64)


def scale_bits_const(g: Graph, n: Node) -> bool:
    """scale_bits must be a constant int32 scalar in 0..31, the input and output 1-D of one length"""
    s = const(g, n, 1) if len(n.inputs) > 1 else None
    shape = in_type(g, n).shape
    return (s is not None and s.size == 1 and 0 <= int(s.ravel()[0]) <= 31 and len(shape) == 1
            and g.type(n.outputs[0]).shape == shape)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, DType.UINT32)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    shift = int(const(g, n, 1).ravel()[0])
    return [np.array([sqrt64(int(v)) >> shift for v in ins[0].ravel()], np.uint32)]


def lower(g: Graph, n: Node, target) -> Kernel:
    return Kernel("signal_filter_bank_square_root.c.j2",
                  params=dict(count=in_type(g, n).numel, shift=int(const(g, n, 1).ravel()[0])))


OP = register(signal_op("SignalFilterBankSquareRoot", infer, reference, lower,
                        [types_are((DType.UINT64, DType.INT32), (DType.UINT32,)),
                         scale_bits_const],
                        dtypes="uint64 -> uint32"))
