"""SHAPE: the static shape of its input as an int32 (or int64) vector. Constant folding removes it;
the kernel (a copy of constants) exists only for a SHAPE whose output is a graph output.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register


def int_output(g: Graph, n: Node) -> bool:
    """output must be int32 or int64"""
    return out_type(g, n).dtype in (DType.INT32, DType.INT64)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType((len(in_type(g, n).shape),), out_type(g, n).dtype)]


def value(g: Graph, n: Node) -> np.ndarray:
    return np.array(in_type(g, n).shape, dtype=out_type(g, n).dtype.np)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [value(g, n)]


def lower(g: Graph, n: Node, target) -> Kernel:
    return Kernel("shape.c.j2", params=dict(n=out_type(g, n).numel), consts=dict(v=value(g, n)))


OP = register(OpDef("SHAPE", infer, reference, lower, [int_output],
                    dtypes="any -> int32/int64 (folded at compile time)"))
