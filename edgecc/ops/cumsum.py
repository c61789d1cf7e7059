"""CUMSUM along a constant axis, float32, int8 and int32, with TFLite's `exclusive` and `reverse`.

TFLite's reference CumSum: for each line along the axis (walked backwards when reverse), a total
starting at 0 is written before (exclusive) or after (inclusive) adding each element. float32
rounds after every add (the numpy reference sums sequentially), int32 wraps around, int8 is
TFLite Micro's rescaled sum (edgecc/ops/_sum8.py: the total starts at the scaled -zp_in).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _sum8
from edgecc.ops._arith import wrap32
from edgecc.ops._copy import const_ints, positive_axis


def float_or_int32(g: Graph, n: Node) -> bool:
    """input and output must both be float32, int8 (quantized per tensor) or int32"""
    a, b = in_type(g, n), out_type(g, n)
    if a.dtype == DType.INT8:
        return (b.dtype == DType.INT8 and a.q is not None and b.q is not None
                and not a.q.per_channel and not b.q.per_channel)
    return a.dtype == b.dtype and a.dtype in (DType.FLOAT32, DType.INT32)


def constant_axis(g: Graph, n: Node) -> bool:
    """axis must be a constant scalar inside the input's rank"""
    a, rank = const_ints(g, n, 1), len(in_type(g, n).shape)
    return a is not None and len(a) == 1 and -rank <= a[0] < rank


def _split(g: Graph, n: Node) -> tuple[int, int, int]:
    shape = in_type(g, n).shape
    axis = positive_axis(const_ints(g, n, 1)[0], len(shape))
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    return outer, int(shape[axis]), inner


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(tuple(in_type(g, n).shape), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    outer, size, inner = _split(g, n)
    x = np.asarray(ins[0]).reshape(outer, size, inner)
    rev, excl = bool(n.attrs.get("reverse")), bool(n.attrs.get("exclusive"))
    if rev:
        x = x[:, ::-1]
    if x.dtype == np.int8:
        p = _sum8.params(in_type(g, n), out_type(g, n))
        sums = wrap32(_sum8.scale_in(0, p) + np.cumsum(_sum8.scale_in(x, p), axis=1))
    elif x.dtype == np.float32:
        sums = np.cumsum(x, axis=1, dtype=np.float32)
    else:
        sums = wrap32(np.cumsum(x.astype(np.int64), axis=1))
    if excl:
        start = _sum8.scale_in(0, p) if x.dtype == np.int8 else 0
        sums = np.concatenate([np.full_like(sums[:, :1], start), sums[:, :-1]], axis=1)
    if rev:
        sums = sums[:, ::-1]
    if x.dtype == np.int8:
        sums = _sum8.output(sums, p)
    return [np.ascontiguousarray(sums).astype(x.dtype).reshape(in_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    outer, size, inner = _split(g, n)
    dt = in_type(g, n).dtype
    q = _sum8.params(in_type(g, n), out_type(g, n)) if dt == DType.INT8 else {}
    return Kernel("cumsum.c.j2", params=dict(
        q, outer=outer, size=size, inner=inner, ctype=dt.c, kind=dt.name.lower(),
        reverse=bool(n.attrs.get("reverse")), exclusive=bool(n.attrs.get("exclusive"))),
        derived=_variant(dt.name.lower(), size, bool(n.attrs.get("reverse")),
                         bool(n.attrs.get("exclusive"))))


def _variant(kind: str, size: int, reverse: bool, exclusive: bool) -> dict:
    """cumsum.c.j2's variant (macros of templates/c/_cumsum.j2): the dtype's start, term, add and
    store; the element k reads (from the end when reverse); an exclusive sum stores before it
    adds."""
    add = "add_int8" if kind == "int8" else "add"
    store = "store_int8" if kind == "int8" else "store"
    return dict(start=f"start_{kind}", term=f"term_{kind}",
                k_at=f"{size - 1} - k" if reverse else "k",
                steps=[store, add] if exclusive else [add, store])


OP = register(OpDef("CUMSUM", infer, reference, lower, [float_or_int32, constant_axis],
                    dtypes="float32, int8, int32",
                    reference_oracle="TFLite Micro (float32, int8); LiteRT BUILTIN_REF (int32)"))
