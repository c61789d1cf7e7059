"""REVERSE_V2: y = x with the constant `axis` dimensions reversed; any element type (raw copy).

One strided copy (edgecc/ops/_copy.py): the reversed dimensions read with negative strides,
starting from their last element.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._copy import (CopyPlan, box, const_ints, copy_kernel, positive_axis,
                              row_major_strides, same_dtype)


def _axes(g: Graph, n: Node) -> list[int] | None:
    axes = const_ints(g, n, 1)
    rank = len(in_type(g, n).shape)
    return None if axes is None else sorted({positive_axis(a, rank) for a in axes})


def constant_axes(g: Graph, n: Node) -> bool:
    """axis must be a constant int32/int64 tensor of dimensions inside the input's rank"""
    axes, rank = const_ints(g, n, 1), len(in_type(g, n).shape)
    return axes is not None and all(-rank <= a < rank for a in axes)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(tuple(in_type(g, n).shape), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [np.flip(ins[0], axis=tuple(_axes(g, n))).copy()]


def lower(g: Graph, n: Node, target) -> Kernel:
    x = in_type(g, n)
    src = row_major_strides(x.shape)
    offset = 0
    for a in _axes(g, n):
        offset += (x.shape[a] - 1) * src[a]
        src[a] = -src[a]
    seg = box(x.shape, src, row_major_strides(x.shape), offset, 0)
    return copy_kernel("reverse_v2.c.j2", CopyPlan([seg]), x.dtype.size)


OP = register(OpDef("REVERSE_V2", infer, reference, lower, [constant_axes, same_dtype],
                    dtypes="any (raw copy)",
                    reference_oracle="TFLite Micro (one axis); LiteRT BUILTIN_REF (several axes)"))
