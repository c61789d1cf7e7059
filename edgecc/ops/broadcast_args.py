"""BROADCAST_ARGS: the numpy broadcast of two shape vectors (int32 or int64), TFLite Micro's kernel.

Output length max(len(s0), len(s1)); the shorter vector is aligned to the right and padded with 1s;
each output dimension is the one that is not 1 (both 1: 1). Both inputs constant (the usual case:
a converter's shape chain) fold at compile time; run-time vectors are computed by the C. Shapes
that do not broadcast fail TFLite Micro's invoke; the generated C then takes the first vector's.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._arith import const_inputs


def int_vectors(g: Graph, n: Node) -> bool:
    """inputs and output must be 1-D int32 or int64 vectors of one type"""
    ts = [in_type(g, n, 0), in_type(g, n, 1), out_type(g, n)]
    return (len({t.dtype for t in ts}) == 1 and ts[0].dtype in (DType.INT32, DType.INT64)
            and all(len(t.shape) == 1 for t in ts))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    size = max(in_type(g, n, 0).shape[0], in_type(g, n, 1).shape[0])
    return [TensorType((size,), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    a, b = (np.asarray(x, np.int64).ravel() for x in ins)
    size = max(a.size, b.size)
    a = np.concatenate([np.ones(size - a.size, np.int64), a])
    b = np.concatenate([np.ones(size - b.size, np.int64), b])
    return [np.where(a == 1, b, a).astype(out_type(g, n).dtype.np)]


def lower(g: Graph, n: Node, target) -> Kernel:
    la, lb = in_type(g, n, 0).shape[0], in_type(g, n, 1).shape[0]
    size = max(la, lb)
    return Kernel("broadcast_args.c.j2",
                  params=dict(size=size, off0=size - la, off1=size - lb,
                              ctype=out_type(g, n).dtype.c), consts=const_inputs(g, n))


OP = register(OpDef("BROADCAST_ARGS", infer, reference, lower, [int_vectors],
                    dtypes="int32, int64 (shape vectors)"))
