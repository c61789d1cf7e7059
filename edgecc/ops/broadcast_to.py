"""BROADCAST_TO: numpy-broadcast the input to a constant shape; any element type, raw copy.

One strided copy over the output box: the input's stride where it has the dim, 0 where it is
broadcast (input shapes are padded with leading 1s, as numpy does).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._broadcast import broadcast_shape
from edgecc.ops._copy import CopyPlan, box, const_ints, copy_kernel, row_major_strides, same_dtype


def constant_shape(g: Graph, n: Node) -> bool:
    """shape must be a constant the input broadcasts to (numpy rules), rank <= 5"""
    s = const_ints(g, n, 1)
    return (s is not None and len(s) <= 5
            and broadcast_shape(tuple(in_type(g, n).shape), tuple(s)) == tuple(s))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    s = const_ints(g, n, 1)
    return [None if s is None else TensorType(tuple(s), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [np.ascontiguousarray(np.broadcast_to(ins[0], tuple(const_ints(g, n, 1))))]


def lower(g: Graph, n: Node, target) -> Kernel:
    x = in_type(g, n)
    out = const_ints(g, n, 1)
    shape = (1,) * (len(out) - len(x.shape)) + tuple(x.shape)
    st = row_major_strides(shape)
    ss = [0 if shape[d] == 1 and out[d] != 1 else st[d] for d in range(len(out))]
    return copy_kernel("broadcast_to.c.j2", CopyPlan([box(out, ss, row_major_strides(out))]),
                       x.dtype.size)


OP = register(OpDef("BROADCAST_TO", infer, reference, lower, [constant_shape, same_dtype],
                    dtypes="any (raw copy)"))
