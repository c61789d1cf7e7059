"""STRIDED_SLICE with constant begin/end/strides, as TFLite's reference StridedSlice.

TFLite pads the indices to 5-D (leading axes fully included), then per axis: start = begin (+size
if negative), clamped to [0, size] ([-1, size-1] for negative strides), or the first element under
begin_mask; stop = start+1 for a shrunk axis, else end (+start when `offset`, +size if negative),
clamped the same way, or past the last element under end_mask. ellipsis_mask, new_axis_mask and
`offset` are not supported, nor rank > 4 (TFLite Micro's limits). The kernel walks the 5-D index ranges and writes the output sequentially.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, out_type, register
from edgecc.ops._elementwise import extend_shape, strides_of

RANK = 5


def constant_indices(g: Graph, n: Node) -> bool:
    """begin, end and strides must be constant vectors with one entry per input axis, and no stride
    may be 0"""
    vals = [const(g, n, i) for i in (1, 2, 3)]
    if any(v is None for v in vals):
        return False
    k = vals[0].size
    return (all(v.size == k for v in vals) and k == len(in_type(g, n).shape)
            and bool(np.all(vals[2] != 0)))


def no_ellipsis_or_new_axis(g: Graph, n: Node) -> bool:
    """ellipsis_mask and new_axis_mask must be 0"""
    return not n.attrs.get("ellipsis_mask", 0) and not n.attrs.get("new_axis_mask", 0)


def no_offset(g: Graph, n: Node) -> bool:
    """offset must be false (TFLite Micro sizes the output without it but slices with it)"""
    return not n.attrs.get("offset", False)


def max_rank(g: Graph, n: Node) -> bool:
    """rank must be at most 4 (as TFLite Micro)"""
    return len(in_type(g, n).shape) <= 4


def same_type(g: Graph, n: Node) -> bool:
    """input and output must have the same element type (int8, int16, int32 or float32)"""
    a, b = in_type(g, n), out_type(g, n)
    return a.dtype == b.dtype and a.dtype in (DType.INT8, DType.INT16, DType.INT32, DType.FLOAT32)


def _clamp(v: int, lo: int, hi: int) -> int:
    return hi if v > hi else (lo if v < lo else v)


def axis_ranges(g: Graph, n: Node) -> tuple[list[int], list[tuple[int, int, int]]]:
    """(input shape padded to 5-D, [(start, stop, stride)] per 5-D axis), as TFLite computes them."""
    shape = extend_shape(in_type(g, n).shape, RANK)
    begin, end, strides = ([int(v) for v in const(g, n, i).ravel()] for i in (1, 2, 3))
    pad = RANK - len(begin)
    begin, end, strides = [0] * pad + begin, [1] * pad + end, [1] * pad + strides
    full = (1 << pad) - 1
    begin_mask = (int(n.attrs.get("begin_mask", 0)) << pad) | full
    end_mask = (int(n.attrs.get("end_mask", 0)) << pad) | full
    shrink = int(n.attrs.get("shrink_axis_mask", 0)) << pad
    offset = bool(n.attrs.get("offset", False))
    ranges = []
    for a in range(RANK):
        size, stride = shape[a], strides[a]
        start = begin[a] + size if begin[a] < 0 else begin[a]
        start = _clamp(start, 0, size) if stride > 0 else _clamp(start, -1, size - 1)
        if begin_mask & (1 << a):
            start = 0 if stride > 0 else size - 1
        if shrink & (1 << a):
            stop = start if start >= size else start + 1
        else:
            stop = end[a] + start if offset else end[a]
            stop = stop + size if stop < 0 else stop
            stop = _clamp(stop, 0, size) if stride > 0 else _clamp(stop, -1, size - 1)
            if end_mask & (1 << a):
                stop = size if stride > 0 else -1
        ranges.append((start, stop, stride))
    return shape, ranges


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    rank = len(in_type(g, n).shape)
    _, ranges = axis_ranges(g, n)
    shrink = int(n.attrs.get("shrink_axis_mask", 0))
    dims = []
    for a, (start, stop, stride) in enumerate(ranges[RANK - rank:]):
        if not shrink & (1 << a):
            dims.append(len(range(start, stop, stride)))
    return [TensorType(tuple(dims), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    shape, ranges = axis_ranges(g, n)
    x = np.asarray(ins[0]).reshape(shape)
    idx = [np.array(list(range(*r)), dtype=np.int64) for r in ranges]
    out = x[np.ix_(*idx)]
    return [np.ascontiguousarray(out).reshape(out_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    shape, ranges = axis_ranges(g, n)
    in_strides = strides_of(shape)
    counts = [len(range(*r)) for r in ranges]
    base = sum(r[0] * s for r, s in zip(ranges, in_strides)) if all(counts) else 0
    steps = [r[2] * s for r, s in zip(ranges, in_strides)]
    return Kernel("strided_slice.c.j2",
                  params=dict(ctype=out_type(g, n).dtype.c, counts=counts, steps=steps, base=base))


OP = register(OpDef("STRIDED_SLICE", infer, reference, lower,
                    [constant_indices, no_ellipsis_or_new_axis, no_offset, max_rank, same_type],
                    dtypes="int8, int16, int32, float32 (data movement)"))
