"""SignalFftAutoScale (TFLite Micro's signal library): shifts an int16 frame left as far as its
largest magnitude allows before the FFT, and outputs the shift.

Input int16 [n]; outputs int16 [n] and the shift, int32 scalar. The largest magnitude m is found
in order as TFLite Micro does (in int16: -(-32768) wraps to -32768, which the next element
replaces); shift = max(15 - bits(m), 0) with bits(m) the number of significant bits of m as a
uint32 (32 for m = 0 or a negative m, as GCC's builtin gives); y = int16(x * 2^shift).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, in_type, register
from edgecc.ops._signal import signal_op, types_are


def one_d(g: Graph, n: Node) -> bool:
    """input and output must be 1-D of one length, the shift a scalar"""
    shape = in_type(g, n).shape
    return len(shape) == 1 and g.type(n.outputs[0]).shape == shape and \
        g.type(n.outputs[1]).numel == 1


def _wrap16(v: int) -> int:
    return ((v + 32768) & 0xFFFF) - 32768


def scale_bits(x: np.ndarray) -> int:
    m = 0
    for v in x.ravel().tolist():
        if v > m:
            m = v
        elif -v > m:
            m = _wrap16(-v)
    bits = (m & 0xFFFFFFFF).bit_length() if m else 32
    return max(16 - bits - 1, 0)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, DType.INT16), TensorType((), DType.INT32)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    s = scale_bits(ins[0])
    y = ((ins[0].astype(np.int64) << s) + 32768) & 0xFFFF
    return [(y - 32768).astype(np.int16), np.array(s, np.int32)]


def lower(g: Graph, n: Node, target) -> Kernel:
    return Kernel("signal_fft_auto_scale.c.j2", params=dict(count=in_type(g, n).numel))


OP = register(signal_op("SignalFftAutoScale", infer, reference, lower,
                        [types_are((DType.INT16,), (DType.INT16, DType.INT32)), one_d],
                        dtypes="int16 -> int16, int32 shift"))
