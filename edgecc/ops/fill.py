"""FILL: y = a tensor of shape `dims` (a constant int32/int64 vector) with every element equal to
the scalar `value` (a constant or a run-time tensor); any element type (raw copy of the value)."""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._arith import const_inputs
from edgecc.ops._copy import const_ints


def constant_dims(g: Graph, n: Node) -> bool:
    """dims must be a constant vector of non-negative sizes"""
    dims = const_ints(g, n, 0)
    return dims is not None and all(d >= 0 for d in dims)


def scalar_value(g: Graph, n: Node) -> bool:
    """value must hold one element of the output's element type"""
    return in_type(g, n, 1).numel == 1 and in_type(g, n, 1).dtype == out_type(g, n).dtype


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    dims = const_ints(g, n, 0)
    shape = tuple(dims) if dims is not None else tuple(out_type(g, n).shape)
    return [TensorType(shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    t = out_type(g, n)
    return [np.full(tuple(t.shape), np.asarray(ins[1]).ravel()[0], dtype=t.dtype.np)]


def lower(g: Graph, n: Node, target) -> Kernel:
    t = out_type(g, n)
    consts = {k: v for k, v in const_inputs(g, n).items() if k != "in0"}
    return Kernel("fill.c.j2", params=dict(count=t.numel, ctype=t.dtype.c), consts=consts)


OP = register(OpDef("FILL", infer, reference, lower, [constant_dims, scalar_value],
                    dtypes="any (raw copy of the value)"))
