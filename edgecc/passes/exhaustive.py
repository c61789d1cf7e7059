"""Proof by exhaustion for element-wise rewrites.

Owns: evaluating one element-wise node's numpy reference on EVERY value of its input type (256 for
int8, 65536 for int16), so a rule can prove that a rewrite gives identical bytes for all inputs
instead of arguing it: "DEQUANTIZE then QUANTIZE with equal parameters is the identity", "this
standalone RELU after a CONV_2D equals the CONV_2D's fused RELU6 clamp". The references are the
same bit-exact models of TFLite Micro the op tests hold against TFLM.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType, Value
from edgecc.ops import get_op

ENUMERABLE = (DType.INT8, DType.UINT8, DType.INT16)


def all_values(t: TensorType) -> np.ndarray | None:
    """Every value of an 8- or 16-bit integer type, ascending; None when not enumerable."""
    if t.dtype not in ENUMERABLE:
        return None
    info = np.iinfo(t.dtype.np)
    return np.arange(info.min, info.max + 1, dtype=np.int64).astype(t.dtype.np)


def eval_elementwise(g: Graph, n: Node, x: np.ndarray, operand: int = 0) -> np.ndarray:
    """Run node n's reference with input `operand` replaced by the 1-D array x.

    Every other input must be a constant holding one distinct value (a scalar clamp bound, a
    per-tensor parameter); it is passed as a 1-element array so the op broadcasts it.
    """
    values = dict(g.values)
    args: list[np.ndarray | None] = []
    for i, name in enumerate(n.inputs):
        if name is None:
            args.append(None)
            continue
        v = g.value(name)
        if i == operand:
            values[name] = Value(name, TensorType((x.size,), v.type.dtype, v.type.q))
            args.append(np.asarray(x))
        else:
            if not v.is_const or np.unique(v.data).size != 1:
                raise ValueError(f"input {i} of {n.name} is not a single constant value")
            one = v.data.ravel()[:1].copy()
            values[name] = Value(name, TensorType((1,), v.type.dtype, v.type.q), one)
            args.append(one)
    for o in n.outputs:
        t = g.type(o)
        values[o] = Value(o, TensorType((x.size,), t.dtype, t.q))
    tmp = Graph(values, [n], [n.inputs[operand]], list(n.outputs), g.name)
    return np.asarray(get_op(n.op).reference(tmp, n, args)[0]).ravel()
