"""UNPACK: split the input along `axis` into `num` outputs with that dim removed; any element type.

One copy segment per output: prod(shape[:axis]) rows of contiguous runs of prod(shape[axis+1:]).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, register
from edgecc.ops._copy import CopyPlan, box, copy_kernel, positive_axis


def _axis(g: Graph, n: Node) -> int:
    return positive_axis(int(n.attrs.get("axis", 0)), len(in_type(g, n).shape))


def axis_and_count(g: Graph, n: Node) -> bool:
    """axis must be inside the input's rank and the output count must equal that dim"""
    shape = in_type(g, n).shape
    ax = _axis(g, n)
    return 0 <= ax < len(shape) and shape[ax] == len(n.outputs)


def same_types(g: Graph, n: Node) -> bool:
    """outputs must have the input's element type"""
    return all(g.type(o).dtype == in_type(g, n).dtype for o in n.outputs)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    x = in_type(g, n)
    ax = _axis(g, n)
    shape = tuple(d for i, d in enumerate(x.shape) if i != ax)
    return [TensorType(shape, x.dtype) for _ in n.outputs]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    ax = _axis(g, n)
    return [np.ascontiguousarray(np.take(ins[0], k, axis=ax)) for k in range(len(n.outputs))]


def lower(g: Graph, n: Node, target) -> Kernel:
    x = in_type(g, n)
    ax = _axis(g, n)
    outer = int(np.prod(x.shape[:ax], dtype=np.int64))
    inner = int(np.prod(x.shape[ax + 1:], dtype=np.int64))
    plan = CopyPlan([box([outer, inner], [x.shape[ax] * inner, 1], [inner, 1], k * inner, 0,
                         dst=k, note=f"output {k}") for k in range(len(n.outputs))])
    return copy_kernel("unpack.c.j2", plan, x.dtype.size)


OP = register(OpDef("UNPACK", infer, reference, lower, [axis_and_count, same_types],
                    dtypes="any (raw copy)"))
