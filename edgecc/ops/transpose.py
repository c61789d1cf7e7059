"""TRANSPOSE: permute the axes of a tensor (any element type TFLite Micro accepts; no arithmetic).

Lowering simplifies the permutation first: unit dimensions are dropped and runs of input axes that
stay adjacent and in order are merged, so e.g. NHWC->NCHW of a [1, 8, 8, 16] tensor becomes a 2-D
transpose of [64, 16]. A permutation that simplifies to the identity moves no bytes: the graph
passes turn such a TRANSPOSE into a RESHAPE (see `simplify`).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, out_type, register
from edgecc.ops._elementwise import extend_shape, strides_of

MAX_RANK = 5  # as TFLite Micro


def perm_of(g: Graph, n: Node) -> list[int]:
    p = [int(v) for v in const(g, n, 1).ravel()]
    rank = len(in_type(g, n).shape)
    return [v + rank if v < 0 else v for v in p]


def constant_perm(g: Graph, n: Node) -> bool:
    """the permutation must be a constant int32 vector listing every axis once"""
    if const(g, n, 1) is None:
        return False
    return sorted(perm_of(g, n)) == list(range(len(in_type(g, n).shape)))


def supported_type(g: Graph, n: Node) -> bool:
    """element type must be int8, int16 or float32 (as in TFLite Micro) or int32 (the output of
    ONNX's ConvInteger), the same for input and output"""
    a, b = in_type(g, n), out_type(g, n)
    return a.dtype == b.dtype and a.dtype in (DType.INT8, DType.INT16, DType.FLOAT32, DType.INT32)


def max_rank(g: Graph, n: Node) -> bool:
    """rank must be at most 5"""
    return len(in_type(g, n).shape) <= MAX_RANK


def simplify(shape, perm) -> tuple[list[int], list[int]]:
    """An equivalent (shape, perm) with unit axes dropped and adjacent in-order axes merged."""
    keep = [a for a in range(len(shape)) if shape[a] != 1]
    renum = {a: i for i, a in enumerate(keep)}
    shape1 = [int(shape[a]) for a in keep]
    perm1 = [renum[a] for a in perm if a in renum]
    # merge input axes a, a+1 when they appear consecutively in perm
    groups: list[list[int]] = []
    for a in perm1:
        if groups and groups[-1][-1] + 1 == a:
            groups[-1].append(a)
        else:
            groups.append([a])
    order = sorted(range(len(groups)), key=lambda gi: groups[gi][0])  # groups by input position
    new_index = {gi: i for i, gi in enumerate(order)}
    shape2 = [int(np.prod([shape1[a] for a in groups[gi]])) for gi in order]
    perm2 = [new_index[gi] for gi in range(len(groups))]
    return shape2, perm2


def is_identity(shape, perm) -> bool:
    """True when the transpose keeps the memory order of every element (a reshape)."""
    _, p = simplify(shape, perm)
    return p == list(range(len(p)))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    x = in_type(g, n)
    return [TensorType(tuple(x.shape[a] for a in perm_of(g, n)), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [np.array(np.transpose(ins[0], perm_of(g, n)), order="C")]


def lower(g: Graph, n: Node, target) -> Kernel:
    shape, perm = simplify(in_type(g, n).shape, perm_of(g, n))
    in_strides = strides_of(shape)
    dims = [shape[a] for a in perm]
    strides = [in_strides[a] for a in perm]
    pad = MAX_RANK - len(dims)
    return Kernel("transpose.c.j2",
                  params=dict(ctype=out_type(g, n).dtype.c, dims=extend_shape(dims, MAX_RANK),
                              strides=[0] * pad + strides, n=out_type(g, n).numel))


OP = register(OpDef("TRANSPOSE", infer, reference, lower, [constant_perm, supported_type, max_rank],
                    dtypes="int8, int16, int32, float32 (data movement)"))
