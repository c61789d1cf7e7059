"""SLICE: out = x[begin : begin + size] per dim (size -1 = to the end); any element type, raw copy.

begin and size must be constants (int32 or int64). One copy segment: the output box read with the
input's strides from offset sum(begin[d] * stride[d]).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._copy import CopyPlan, box, const_ints, copy_kernel, row_major_strides, same_dtype


def _box(g: Graph, n: Node) -> tuple[list[int], list[int]]:
    shape = in_type(g, n).shape
    begin, size = const_ints(g, n, 1), const_ints(g, n, 2)
    size = [shape[d] - begin[d] if s == -1 else s for d, s in enumerate(size)]
    return begin, size


def constant_box(g: Graph, n: Node) -> bool:
    """begin and size must be constant vectors with one entry per input dim, inside the input"""
    begin, size = const_ints(g, n, 1), const_ints(g, n, 2)
    shape = in_type(g, n).shape
    if begin is None or size is None or len(begin) != len(shape) or len(size) != len(shape):
        return False
    b, s = _box(g, n)
    return all(0 <= b[d] and 0 <= s[d] and b[d] + s[d] <= shape[d] for d in range(len(shape)))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(tuple(_box(g, n)[1]), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    begin, size = _box(g, n)
    return [np.ascontiguousarray(ins[0][tuple(slice(b, b + s) for b, s in zip(begin, size))])]


def lower(g: Graph, n: Node, target) -> Kernel:
    x = in_type(g, n)
    begin, size = _box(g, n)
    st = row_major_strides(x.shape)
    seg = box(size, st, row_major_strides(size), sum(b * s for b, s in zip(begin, st)), 0)
    return copy_kernel("slice.c.j2", CopyPlan([seg]), x.dtype.size)


OP = register(OpDef("SLICE", infer, reference, lower, [constant_box, same_dtype],
                    dtypes="any (raw copy)"))
