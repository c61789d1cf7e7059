"""EMBEDDING_LOOKUP: y[i, ...] = value[ids[i], ...] (TFLite Micro's kernel), int32 ids (a constant or
a run-time tensor). value float32 -> float32 and int8 -> int8 are raw row copies; int8 -> float32
is TFLM's hybrid lookup, y = float(q) * s with s the value's scale, zero point 0. A table quantized
per row is refused: TFLite Micro scales every row by the first row's scale there, LiteRT by the
row's own (the two oracles disagree). TFLite Micro fails the invoke on an id outside
[0, rows); the generated C has no error path and clamps the id into range (as GATHER does).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._arith import c_float, const_inputs


def ids_and_types(g: Graph, n: Node) -> bool:
    """ids must be a 1-D int32 tensor; value and output float32, int8, or int8 value with a float32
    output (hybrid: zero point 0, one scale for the whole table)"""
    ids, v, y = in_type(g, n, 0), in_type(g, n, 1), out_type(g, n)
    if ids.dtype != DType.INT32 or len(ids.shape) != 1 or len(v.shape) < 1:
        return False
    if (v.dtype, y.dtype) in ((DType.FLOAT32,) * 2, (DType.INT8,) * 2):
        return True
    return (v.dtype == DType.INT8 and y.dtype == DType.FLOAT32 and v.q is not None
            and len(v.q.scale) == 1 and v.q.zero_point[0] == 0)


def _hybrid(g: Graph, n: Node) -> bool:
    return in_type(g, n, 1).dtype == DType.INT8 and out_type(g, n).dtype == DType.FLOAT32


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType((in_type(g, n, 0).shape[0],) + tuple(in_type(g, n, 1).shape[1:]),
                       out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    value = np.asarray(ins[1])
    ids = np.clip(np.asarray(ins[0], np.int64), 0, value.shape[0] - 1)
    rows = value[ids]
    if _hybrid(g, n):
        rows = (rows.astype(np.float32) * np.float32(in_type(g, n, 1).q.scale[0])).astype(np.float32)
    return [rows.reshape(out_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    v = in_type(g, n, 1)
    width = v.numel // max(v.shape[0], 1)
    hybrid = _hybrid(g, n)  # int8 table, float32 output: each row dequantized
    return Kernel("embedding_lookup_hybrid.c.j2" if hybrid else "embedding_lookup.c.j2",
                  params=dict(count=in_type(g, n, 0).shape[0], last_row=v.shape[0] - 1,
                              width=width, ctype=v.dtype.c, out_ctype=out_type(g, n).dtype.c,
                              bytes=width * v.dtype.size,
                              scale=c_float(v.q.scale[0]) if hybrid else ""),
                  consts=const_inputs(g, n), variant="copy")


OP = register(OpDef("EMBEDDING_LOOKUP", infer, reference, lower, [ids_and_types],
                    dtypes="float32, int8 (raw rows); int8 -> float32 (hybrid, one scale)"))
