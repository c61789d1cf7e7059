"""CONCATENATION: join the inputs along `axis`; any element type, copied as raw bytes.

TFLite Micro copies int8 inputs without requantizing (the converter gives every input the output's
scale and zero point); edgecc does the same. One copy segment per input: outer = prod(shape[:axis])
rows, each a contiguous run of shape_i[axis] * prod(shape[axis+1:]) elements.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, out_type, register
from edgecc.ops._arith import const_inputs
from edgecc.ops._copy import CopyPlan, box, copy_kernel, positive_axis


def _axis(g: Graph, n: Node) -> int:
    return positive_axis(int(n.attrs.get("axis", 0)), len(out_type(g, n).shape))


def no_activation(g: Graph, n: Node) -> bool:
    """fused activation must be NONE"""
    return int(n.attrs.get("fused_activation_function", 0)) == 0


def same_types(g: Graph, n: Node) -> bool:
    """all inputs must have the output's element type"""
    return all(g.type(v).dtype == out_type(g, n).dtype for v in n.inputs)


def shapes_match(g: Graph, n: Node) -> bool:
    """inputs must have the output's rank and agree with it on every dim except the axis"""
    out = out_type(g, n).shape
    ax = _axis(g, n)
    if not 0 <= ax < len(out):
        return False
    for v in n.inputs:
        s = g.type(v).shape
        if len(s) != len(out) or any(a != b for d, (a, b) in enumerate(zip(s, out)) if d != ax):
            return False
    return sum(g.type(v).shape[ax] for v in n.inputs) == out[ax]


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shapes = [g.type(v).shape for v in n.inputs]
    ax = _axis(g, n)
    shape = list(shapes[0])
    shape[ax] = sum(s[ax] for s in shapes)
    return [TensorType(tuple(shape), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [np.concatenate(ins, axis=_axis(g, n))]


def lower(g: Graph, n: Node, target) -> Kernel:
    out = out_type(g, n).shape
    ax = _axis(g, n)
    outer = int(np.prod(out[:ax], dtype=np.int64))
    inner = int(np.prod(out[ax + 1:], dtype=np.int64))
    plan, start = CopyPlan(), 0
    for i, v in enumerate(n.inputs):
        run = g.type(v).shape[ax] * inner
        plan.segments.append(box([outer, run], [run, 1], [out[ax] * inner, 1], 0, start * inner,
                                 src=("in", i), note=f"input {i}"))
        start += g.type(v).shape[ax]
    return copy_kernel("concatenation.c.j2", plan, out_type(g, n).dtype.size,
                       consts=const_inputs(g, n))


OP = register(OpDef("CONCATENATION", infer, reference, lower,
                    [no_activation, same_types, shapes_match],
                    dtypes="any (int8 copied without requantization, as TFLM)"))
