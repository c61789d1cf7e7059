"""GATHER_ND: y[i...] = params[indices[i..., 0], ..., indices[i..., k-1], ...]; any params type
(raw copy), int32 or int64 indices (a constant or a run-time tensor).

The last dimension of `indices` (k) indexes the first k dimensions of `params`; each index vector
selects one contiguous slice of the remaining dimensions. TFLite Micro fails the invoke on an index
outside its dimension; the generated C has no error path and clamps each index into range (as
GATHER does), so it never reads outside the tensor.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._arith import const_inputs
from edgecc.ops._copy import row_major_strides, same_dtype


def int_indices(g: Graph, n: Node) -> bool:
    """indices must be int32 or int64 with a last dimension no larger than params' rank"""
    t = in_type(g, n, 1)
    return (t.dtype in (DType.INT32, DType.INT64) and len(t.shape) >= 1
            and 1 <= t.shape[-1] <= len(in_type(g, n).shape))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape, ishape = in_type(g, n).shape, in_type(g, n, 1).shape
    return [TensorType(tuple(ishape[:-1]) + tuple(shape[ishape[-1]:]), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x = np.asarray(ins[0])
    k = in_type(g, n, 1).shape[-1]
    idx = np.asarray(ins[1], np.int64).reshape(-1, k)
    idx = np.clip(idx, 0, np.array(x.shape[:k]) - 1)
    rows = [x[tuple(i)] for i in idx]
    return [np.array(rows, dtype=x.dtype).reshape(out_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    x, it = in_type(g, n), in_type(g, n, 1)
    k = it.shape[-1]
    strides = row_major_strides(x.shape)
    inner = int(np.prod(x.shape[k:], dtype=np.int64))
    return Kernel("gather_nd.c.j2",
                  params=dict(ctype=x.dtype.c, itype=it.dtype.c, count=it.numel // k, depth=k,
                              last=[int(d) - 1 for d in x.shape[:k]], strides=strides[:k],
                              inner=inner, bytes=inner * x.dtype.size),
                  consts=const_inputs(g, n), variant="copy")


OP = register(OpDef("GATHER_ND", infer, reference, lower, [int_indices, same_dtype],
                    dtypes="any params, int32/int64 indices (raw copy)",
                    reference_oracle="TFLite Micro (float32, int8 params); LiteRT BUILTIN_REF "
                                     "(others)"))
