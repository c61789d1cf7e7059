"""SPLIT and SPLIT_V: cut the input along an axis into several outputs; any element type.

SPLIT's inputs are (axis, input) and the pieces are equal; SPLIT_V's are (input, size_splits,
axis) with one size per output (at most one -1, the remainder). Both are raw byte copies: one copy
segment per output, outer = prod(shape[:axis]) rows of contiguous runs.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, register
from edgecc.ops._copy import CopyPlan, box, copy_kernel, positive_axis


def _data_index(n: Node) -> int:
    return 1 if n.op == "SPLIT" else 0


def _axis_value(g: Graph, n: Node) -> int:
    a = const(g, n, 0 if n.op == "SPLIT" else 2)
    rank = len(g.type(n.inputs[_data_index(n)]).shape)
    return positive_axis(int(np.asarray(a).ravel()[0]), rank)


def _sizes(g: Graph, n: Node) -> list[int]:
    dim = g.type(n.inputs[_data_index(n)]).shape[_axis_value(g, n)]
    if n.op == "SPLIT":
        k = len(n.outputs)
        return [dim // k] * k
    sizes = [int(s) for s in np.asarray(const(g, n, 1)).ravel()]
    if -1 in sizes:
        sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
    return sizes


def axis_is_constant(g: Graph, n: Node) -> bool:
    """axis must be a constant scalar inside the input's rank"""
    v = n.inputs[0 if n.op == "SPLIT" else 2]
    if v is None or not g.value(v).is_const or g.value(v).data.size != 1:
        return False
    rank = len(g.type(n.inputs[_data_index(n)]).shape)
    return -rank <= int(g.value(v).data.ravel()[0]) < rank


def sizes_valid(g: Graph, n: Node) -> bool:
    """SPLIT: the axis must divide evenly; SPLIT_V: size_splits must be constant, one per output, summing to the axis"""
    dim = g.type(n.inputs[_data_index(n)]).shape[_axis_value(g, n)]
    if n.op == "SPLIT":
        return dim % len(n.outputs) == 0
    v = n.inputs[1]
    if not g.value(v).is_const:
        return False
    raw = [int(s) for s in g.value(v).data.ravel()]
    sizes = _sizes(g, n)
    return (len(raw) == len(n.outputs) and raw.count(-1) <= 1 and all(s >= 0 for s in sizes)
            and sum(sizes) == dim)


def same_types(g: Graph, n: Node) -> bool:
    """outputs must have the input's element type"""
    t = g.type(n.inputs[_data_index(n)]).dtype
    return all(g.type(o).dtype == t for o in n.outputs)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    x = g.type(n.inputs[_data_index(n)])
    ax = _axis_value(g, n)
    out = []
    for s in _sizes(g, n):
        shape = list(x.shape)
        shape[ax] = s
        out.append(TensorType(tuple(shape), x.dtype))
    return out


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x = ins[_data_index(n)]
    cuts = np.cumsum(_sizes(g, n))[:-1]
    return [np.ascontiguousarray(p) for p in np.split(x, cuts, axis=_axis_value(g, n))]


def lower(g: Graph, n: Node, target) -> Kernel:
    x = g.type(n.inputs[_data_index(n)])
    ax = _axis_value(g, n)
    outer = int(np.prod(x.shape[:ax], dtype=np.int64))
    inner = int(np.prod(x.shape[ax + 1:], dtype=np.int64))
    plan, start = CopyPlan(), 0
    for k, s in enumerate(_sizes(g, n)):
        plan.segments.append(box([outer, s * inner], [x.shape[ax] * inner, 1], [s * inner, 1],
                                 start * inner, 0, src=("in", _data_index(n)), dst=k,
                                 note=f"output {k}"))
        start += s
    return copy_kernel("split.c.j2", plan, x.dtype.size)


for _name in ("SPLIT", "SPLIT_V"):
    register(OpDef(_name, infer, reference, lower, [axis_is_constant, sizes_valid, same_types],
                   dtypes="any (raw copy)"))
