"""PAD and PADV2: constant padding (no arithmetic), as TFLite Micro's reference Pad.

The pad value is, for PAD: the output zero point (int8) or 0 (int16, int32, float32); for PADV2:
the scalar `constant_values` input, which for int8 TFLite Micro requires to share the output's
quantization.
The C kernel fills the output with the pad value, then copies the input rows into place.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, out_type, register
from edgecc.ops._arith import c_float
from edgecc.ops._elementwise import INT_DTYPES, extend_shape, strides_of

MAX_RANK = 5


def paddings(g: Graph, n: Node) -> list[tuple[int, int]]:
    p = const(g, n, 1).reshape(-1, 2)
    return [(int(a), int(b)) for a, b in p]


def constant_paddings(g: Graph, n: Node) -> bool:
    """paddings must be a constant [rank, 2] tensor of non-negative integers"""
    p = const(g, n, 1)
    return (p is not None and p.size == 2 * len(in_type(g, n).shape)
            and bool(np.all(p >= 0)))


def integer_type(g: Graph, n: Node) -> bool:
    """element type must be int8, int16, int32 or float32, the same for input and output"""
    a, b = in_type(g, n), out_type(g, n)
    return a.dtype == b.dtype and a.dtype in (*INT_DTYPES, DType.FLOAT32)


def max_rank(g: Graph, n: Node) -> bool:
    """rank must be at most 5"""
    return len(in_type(g, n).shape) <= MAX_RANK


def scalar_constant_value(g: Graph, n: Node) -> bool:
    """PADV2's constant_values must be a constant scalar of the input's type (for int8, with the
    output's scale and zero point)"""
    if len(n.inputs) < 3 or n.inputs[2] is None:
        return True
    v = g.value(n.inputs[2])
    if not v.is_const or v.data.size != 1 or v.type.dtype != in_type(g, n).dtype:
        return False
    if v.type.dtype == DType.INT8:
        o = out_type(g, n)
        return (v.type.q is not None and o.q is not None
                and v.type.q.zero_point[0] == o.q.zero_point[0]
                and np.float32(v.type.q.scale[0]) == np.float32(o.q.scale[0]))
    return True


def pad_value(g: Graph, n: Node) -> int | float:
    """The value written into the padding, exactly as TFLite Micro's PadEval picks it."""
    if len(n.inputs) >= 3 and n.inputs[2] is not None:
        v = const(g, n, 2).ravel()[0]
        return float(v) if out_type(g, n).dtype == DType.FLOAT32 else int(v)
    t = out_type(g, n)
    if t.dtype == DType.INT8 and t.q is not None:
        return int(t.q.zero_point[0])
    return 0


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    x = in_type(g, n)
    shape = tuple(d + a + b for d, (a, b) in zip(x.shape, paddings(g, n)))
    return [TensorType(shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x = ins[0]
    return [np.pad(x, paddings(g, n), constant_values=pad_value(g, n)).astype(x.dtype)]


def lower(g: Graph, n: Node, target) -> Kernel:
    x, y = in_type(g, n), out_type(g, n)
    rank = len(x.shape)
    dims = extend_shape(x.shape, MAX_RANK)
    out_strides = strides_of(extend_shape(y.shape, MAX_RANK))
    left = [0] * (MAX_RANK - rank) + [a for a, _ in paddings(g, n)]
    return Kernel("pad.c.j2", params=dict(
        ctype=y.dtype.c, n_out=y.numel, dims=dims, out_strides=out_strides,
        value=c_float(pad_value(g, n)) if y.dtype == DType.FLOAT32 else pad_value(g, n),
        base=sum(l * s for l, s in zip(left, out_strides))))


for _name in ("PAD", "PADV2"):
    register(OpDef(_name, infer, reference, lower,
                   [constant_paddings, integer_type, max_rank, scalar_constant_value],
                   dtypes="int8, int16, int32, float32 (data movement)"))
