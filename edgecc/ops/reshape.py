"""RESHAPE (and its aliases): the same bytes under another shape; no code, shared storage."""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import OpDef, in_type, out_type, register


def same_element_count(g: Graph, n: Node) -> bool:
    """output must have as many elements as the input"""
    return in_type(g, n).numel == out_type(g, n).numel


def same_dtype(g: Graph, n: Node) -> bool:
    """input and output must have the same type and quantization"""
    a, b = in_type(g, n), out_type(g, n)
    return a.dtype == b.dtype and (a.q is None or b.q is None or
                                   (a.q.scale == b.q.scale and a.q.zero_point == b.q.zero_point))


def _resolve(shape: list[int], numel: int) -> tuple[int, ...] | None:
    """new_shape with its one -1 stretched so the element count is kept; None if it cannot be."""
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if shape.count(-1) > 1 or any(d < -1 for d in shape):
        return None
    if -1 in shape:
        if known == 0 or numel % known:
            return None
        shape = [numel // known if d == -1 else d for d in shape]
    return tuple(shape) if known and int(np.prod(shape, dtype=np.int64)) == numel else None


def _new_shape(g: Graph, n: Node) -> list[int] | None:
    """RESHAPE's target as TFLite reads it: the shape operand when there is one (a 1-D constant,
    possibly computed at import), else the new_shape option."""
    v = n.inputs[1] if len(n.inputs) > 1 else None
    if v is not None:
        val = g.value(v)
        return [int(d) for d in val.data.ravel()] if val.is_const and val.data.ndim == 1 else None
    opt = n.attrs.get("new_shape")
    return [int(d) for d in opt] if opt else None


def _expanded(g: Graph, n: Node) -> tuple[int, ...] | None:
    """EXPAND_DIMS: a 1 inserted at the constant axis (negative counts from the end, rank + 1)."""
    v = n.inputs[1] if len(n.inputs) > 1 else None
    if v is None or not g.value(v).is_const or g.value(v).data.size != 1:
        return None
    shape = list(in_type(g, n).shape)
    axis = int(g.value(v).data.ravel()[0])
    axis += len(shape) + 1 if axis < 0 else 0
    return tuple(shape[:axis] + [1] + shape[axis:]) if 0 <= axis <= len(shape) else None


def _squeezed(g: Graph, n: Node) -> tuple[int, ...]:
    shape = in_type(g, n).shape
    dims = {int(d) % max(len(shape), 1) for d in n.attrs.get("squeeze_dims") or []}
    return tuple(d for i, d in enumerate(shape) if not (d == 1 and (not dims or i in dims)))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    """The output shape from the operands (None when they are not constants: the file's stands)."""
    if n.op == "EXPAND_DIMS":
        shape = _expanded(g, n)
    elif n.op == "SQUEEZE":
        shape = _squeezed(g, n)
    else:
        target = _new_shape(g, n)
        shape = None if target is None else _resolve(target, in_type(g, n).numel)
    return [None if shape is None else TensorType(shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [ins[0].reshape(out_type(g, n).shape)]


for _name in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"):
    register(OpDef(_name, infer, reference, None, [same_element_count, same_dtype], alias=True,
                   dtypes="any (alias, no code)"))
