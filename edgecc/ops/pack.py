"""PACK: stack N equally shaped tensors along a new axis. edgecc folds PACK at compile time (Keras
emits SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE for Reshape/Flatten); it has no kernel, so a PACK
of activations is refused at import.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import OpDef, in_type, out_type, register
from edgecc.ops._static import known_at_compile_time


def axis_of(g: Graph, n: Node) -> int:
    axis = int(n.attrs.get("axis", 0))
    return axis + len(in_type(g, n).shape) + 1 if axis < 0 else axis


def inputs_known_at_compile_time(g: Graph, n: Node) -> bool:
    """inputs must be known at compile time (constants or tensor shapes): PACK is folded, there is
    no kernel for packing activations"""
    return all(known_at_compile_time(g, v) for v in n.inputs)


def same_shapes(g: Graph, n: Node) -> bool:
    """all inputs must have the same shape and type"""
    t0 = in_type(g, n)
    return all(g.type(v).shape == t0.shape and g.type(v).dtype == t0.dtype for v in n.inputs)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = list(in_type(g, n).shape)
    shape.insert(axis_of(g, n), len(n.inputs))
    return [TensorType(tuple(shape), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    out = np.stack([np.asarray(x) for x in ins], axis=axis_of(g, n))
    return [out.astype(out_type(g, n).dtype.np)]


OP = register(OpDef("PACK", infer, reference, None,
                    [inputs_known_at_compile_time, same_shapes],
                    dtypes="any (folded at compile time only)"))
