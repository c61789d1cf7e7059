"""SignalFilterBank (TFLite Micro's signal library): triangular (mel) filters over an energy
spectrum, in uint64.

Inputs: energies uint32 [bins]; then constants, all int16 1-D: weights, unweights (1 - weight),
channel frequency starts, channel weight starts and channel widths, the last three with
num_channels + 1 entries. Output uint64 [num_channels]. Channel i (0..num_channels) sums
weights[ws_i + j] * e[fs_i + j] over its width into one accumulator and unweights[...] * e[...]
into another, both uint64 (an int16 weight converted to uint64: modulo 2^64); output i - 1 (for
i >= 1) is channel i's weighted sum plus channel i - 1's unweighted one; channel 0 only feeds
channel 1.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, const, in_type, register
from edgecc.ops._signal import opt, signal_op, types_are

I16 = DType.INT16


def _tables(g: Graph, n: Node) -> list[np.ndarray | None]:
    return [const(g, n, i) for i in range(1, 6)]


def constant_tables(g: Graph, n: Node) -> bool:
    """weights, unweights, channel frequency starts, weight starts and widths must be constant 1-D tensors (the last three num_channels + 1 long) that index inside the energies and weights, the output num_channels long"""
    w, u, fs, ws, wd = _tables(g, n)
    ch = opt(n, "num_channels")
    if any(t is None or t.ndim != 1 for t in (w, u, fs, ws, wd)) or ch < 1:
        return False
    if not (fs.size == ws.size == wd.size == ch + 1 and u.size == w.size):
        return False
    fs, ws, wd = (t.astype(np.int64) for t in (fs, ws, wd))
    bins = in_type(g, n).numel
    return bool(np.all(wd >= 0) and np.all(fs >= 0) and np.all(ws >= 0)
                and np.all(fs + wd <= bins) and np.all(ws + wd <= w.size)
                and g.type(n.outputs[0]).shape == (ch,))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType((opt(n, "num_channels"),), DType.UINT64)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    w, u, fs, ws, wd = (t.astype(np.int64) for t in _tables(g, n))
    e = ins[0].astype(np.uint64)
    mod = lambda a: a.astype(np.int64).astype(np.uint64)  # noqa: E731 - int16 -> uint64 wraps
    out, carry = [], np.uint64(0)
    with np.errstate(over="ignore"):
        for i in range(opt(n, "num_channels") + 1):
            sl, wl = slice(fs[i], fs[i] + wd[i]), slice(ws[i], ws[i] + wd[i])
            acc = carry + np.sum(mod(w[wl]) * e[sl], dtype=np.uint64)
            carry = np.sum(mod(u[wl]) * e[sl], dtype=np.uint64)
            out.append(acc)
    return [np.array(out[1:], np.uint64)]


def lower(g: Graph, n: Node, target) -> Kernel:
    w, u, fs, ws, wd = _tables(g, n)
    return Kernel("signal_filter_bank.c.j2", params=dict(channels=opt(n, "num_channels")),
                  consts=dict(w=w.astype(np.int16), u=u.astype(np.int16), fs=fs.astype(np.int16),
                              ws=ws.astype(np.int16), wd=wd.astype(np.int16)))


OP = register(signal_op("SignalFilterBank", infer, reference, lower,
                        [types_are((DType.UINT32, I16, I16, I16, I16, I16), (DType.UINT64,)),
                         constant_tables],
                        dtypes="uint32 -> uint64 (int16 tables)"))
