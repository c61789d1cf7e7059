"""SignalEnergy (TFLite Micro's signal library): the energy re^2 + im^2 of complex int16 bins.

Input int16 [2 n] (n complex values, interleaved); output uint32 [m]; options start_index,
end_index: bins start_index <= i < end_index are written (the sum of the two int32 squares, kept
as uint32: 2^31 for (-32768, -32768)). TFLite Micro leaves the other output elements as they were;
edgecc writes 0 there.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, in_type, out_type, register
from edgecc.ops._signal import opt, signal_op, types_are


def bins(g: Graph, n: Node) -> bool:
    """input and output must be 1-D, 0 <= start_index <= end_index <= the output's length and the input's complex count"""
    x, y = in_type(g, n).shape, out_type(g, n).shape
    lo, hi = opt(n, "start_index"), opt(n, "end_index")
    return (len(x) == 1 and len(y) == 1 and x[0] % 2 == 0 and 0 <= lo <= hi
            and hi <= min(y[0], x[0] // 2))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(out_type(g, n).shape, DType.UINT32)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    lo, hi = opt(n, "start_index"), opt(n, "end_index")
    x = ins[0].astype(np.int64)
    y = np.zeros(out_type(g, n).shape, np.uint32)
    y[lo:hi] = (x[2 * lo:2 * hi:2] ** 2 + x[2 * lo + 1:2 * hi:2] ** 2).astype(np.uint32)
    return [y]


def lower(g: Graph, n: Node, target) -> Kernel:
    return Kernel("signal_energy.c.j2",
                  params=dict(start=opt(n, "start_index"), end=opt(n, "end_index"),
                              bytes=4 * out_type(g, n).numel))


OP = register(signal_op("SignalEnergy", infer, reference, lower,
                        [types_are((DType.INT16,), (DType.UINT32,)), bins],
                        dtypes="int16 (complex) -> uint32"))
