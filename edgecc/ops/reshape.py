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


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [None]  # the output shape comes from the model (new_shape may hold -1)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [ins[0].reshape(out_type(g, n).shape)]


for _name in ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"):
    register(OpDef(_name, infer, reference, None, [same_element_count, same_dtype], alias=True,
                   dtypes="any (alias, no code)"))
