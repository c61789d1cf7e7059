"""TILE: repeat the input multiples[d] times along every dim; any element type, raw copy.

TFLite Micro has no TILE; the oracle is LiteRT's reference kernel. Every output dim d of extent
m_d * n_d is split into (m_d, n_d): the copy reads with stride 0 over the repeats and the input's
stride over n_d, so the whole op is one strided copy (contiguous runs become memcpy).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._copy import CopyPlan, box, const_ints, copy_kernel, row_major_strides, same_dtype


def constant_multiples(g: Graph, n: Node) -> bool:
    """multiples must be a constant vector of positive integers, one per input dim"""
    m = const_ints(g, n, 1)
    return m is not None and len(m) == len(in_type(g, n).shape) and all(k >= 1 for k in m)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    m = const_ints(g, n, 1)
    if m is None or len(m) != len(in_type(g, n).shape):
        return [None]  # multiples not known here: the constraints judge them
    return [TensorType(tuple(d * k for d, k in zip(in_type(g, n).shape, m)), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [np.tile(ins[0], const_ints(g, n, 1))]


def lower(g: Graph, n: Node, target) -> Kernel:
    x = in_type(g, n)
    m = const_ints(g, n, 1)
    ins_st = row_major_strides(x.shape)
    out_st = row_major_strides([d * k for d, k in zip(x.shape, m)])
    dims, ss, ds = [], [], []
    for d in range(len(x.shape)):
        dims += [m[d], x.shape[d]]
        ss += [0, ins_st[d]]
        ds += [x.shape[d] * out_st[d], out_st[d]]
    return copy_kernel("tile.c.j2", CopyPlan([box(dims, ss, ds)]), x.dtype.size)


OP = register(OpDef("TILE", infer, reference, lower, [constant_multiples, same_dtype],
                    dtypes="any (raw copy)", reference_oracle="LiteRT BUILTIN_REF (not in TFLite Micro)"))
