"""PACK: stack N equally shaped tensors along a new axis; any element type, copied as raw bytes.

PACK along `axis` is CONCATENATION of the inputs each viewed with a size-1 axis inserted there, so
it lowers to the shared copy helper (edgecc/ops/_copy.py): one segment per input, outer =
prod(shape[:axis]) rows, each a contiguous run of prod(shape[axis:]) elements, written N runs
apart. int8 is copied without requantization, as TFLite Micro does. Constant PACKs (Keras' SHAPE ->
STRIDED_SLICE -> PACK -> RESHAPE chains) are still folded at compile time by the fold pass, which
evaluates `reference`.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._arith import const_inputs
from edgecc.ops._copy import CopyPlan, box, copy_kernel


def axis_of(g: Graph, n: Node) -> int:
    axis = int(n.attrs.get("axis", 0))
    return axis + len(in_type(g, n).shape) + 1 if axis < 0 else axis


def axis_in_range(g: Graph, n: Node) -> bool:
    """axis must be inside the output's rank (input rank + 1)"""
    return 0 <= axis_of(g, n) <= len(in_type(g, n).shape)


def same_shapes(g: Graph, n: Node) -> bool:
    """all inputs must have the same shape and type"""
    t0 = in_type(g, n)
    return all(g.type(v).shape == t0.shape and g.type(v).dtype == t0.dtype for v in n.inputs)


def same_output_type(g: Graph, n: Node) -> bool:
    """the output must have the inputs' element type"""
    return out_type(g, n).dtype == in_type(g, n).dtype


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = list(in_type(g, n).shape)
    shape.insert(axis_of(g, n), len(n.inputs))
    return [TensorType(tuple(shape), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    out = np.stack([np.asarray(x) for x in ins], axis=axis_of(g, n))
    return [out.astype(out_type(g, n).dtype.np)]


def lower(g: Graph, n: Node, target) -> Kernel:
    shape = in_type(g, n).shape
    ax = axis_of(g, n)
    count = len(n.inputs)
    outer = int(np.prod(shape[:ax], dtype=np.int64))
    inner = int(np.prod(shape[ax:], dtype=np.int64))
    # input i fills slot i of the new axis: rows of `inner` elements, `count * inner` apart
    plan = CopyPlan([box([outer, inner], [inner, 1], [count * inner, 1], 0, i * inner,
                         src=("in", i), note=f"input {i}") for i in range(count)])
    return copy_kernel("pack.c.j2", plan, out_type(g, n).dtype.size, consts=const_inputs(g, n))


OP = register(OpDef("PACK", infer, reference, lower,
                    [axis_in_range, same_shapes, same_output_type],
                    dtypes="any (int8 copied without requantization, as TFLM)"))
