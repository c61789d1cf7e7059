"""MAXIMUM and MINIMUM, as TFLite Micro's reference: element-wise on the RAW stored values with
numpy-style broadcasting (up to 5-D); the quantization parameters play no part. float32 compares
as TFLite does (a > b ? a : b, a < b ? a : b), so a NaN in `a` yields `b`.

The kernel walks the 5-D output and reads each operand through its own strides (0 on broadcast
axes). A constant operand becomes a const array.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, operand, out_type, register
from edgecc.ops._elementwise import INT_DTYPES, extend_shape, strides_of

RANK = 5


def same_integer_type(g: Graph, n: Node) -> bool:
    """both inputs and the output must have the same type (int8, int16, int32 or float32)"""
    t = out_type(g, n).dtype
    return t in (*INT_DTYPES, DType.FLOAT32) and all(g.type(v).dtype == t for v in n.inputs)


def broadcastable(g: Graph, n: Node) -> bool:
    """input shapes must broadcast (numpy rules) to the output shape, rank at most 5"""
    try:
        shape = np.broadcast_shapes(in_type(g, n, 0).shape, in_type(g, n, 1).shape)
    except ValueError:
        return False
    return len(shape) <= RANK


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = np.broadcast_shapes(in_type(g, n, 0).shape, in_type(g, n, 1).shape)
    return [TensorType(tuple(int(s) for s in shape), out_type(g, n).dtype)]


def _operand_strides(shape, out_shape) -> list[int]:
    shape = extend_shape(shape, RANK)
    st = strides_of(shape)
    return [0 if d == 1 and o != 1 else s for d, s, o in zip(shape, st, out_shape)]


def make(name: str, fn) -> OpDef:
    def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
        out = fn(np.asarray(ins[0]), np.asarray(ins[1]))
        return [out.astype(out_type(g, n).dtype.np).reshape(out_type(g, n).shape)]

    def lower(g: Graph, n: Node, target) -> Kernel:
        out_shape = extend_shape(out_type(g, n).shape, RANK)
        consts = {}
        for i, key in ((0, "a"), (1, "b")):
            v = g.value(n.inputs[i])
            if v.is_const:
                consts[key] = v.data
        return Kernel("maximum.c.j2" if name == "MAXIMUM" else "minimum.c.j2", params=dict(
            ctype=out_type(g, n).dtype.c, dims=out_shape, a_const="a" in consts,
            b_const="b" in consts, sa=_operand_strides(in_type(g, n, 0).shape, out_shape),
            sb=_operand_strides(in_type(g, n, 1).shape, out_shape)), consts=consts,
            derived=dict(a_operand=operand("a" in consts), b_operand=operand("b" in consts)))

    return register(OpDef(name, infer, reference, lower, [same_integer_type, broadcastable],
                          dtypes="int8, int16, int32, float32 (raw values, broadcasting)"))
