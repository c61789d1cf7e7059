"""LOGICAL_AND, LOGICAL_OR and LOGICAL_NOT over bool tensors (TFLite stores a bool in one byte, 0 or 1).

Owns their shared definition: bool inputs and output, numpy broadcasting for the binary ones
(rank <= 5), the numpy reference and the C (templates/c/binary_expr.c.j2 with uint8_t operands,
templates/c/logical_not.c.j2 for NOT).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type
from edgecc.ops import _arith as ew
from edgecc.ops._loops import loop_text


def bool_tensors(g: Graph, n: Node) -> bool:
    """inputs and output must be bool"""
    return all(g.type(v).dtype == DType.BOOL for v in [*n.inputs, *n.outputs] if v is not None)


def binary(name: str, fn: Callable, c_op: str) -> OpDef:
    def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
        return [fn(np.asarray(ins[0], bool), np.asarray(ins[1], bool))]

    def lower(g: Graph, n: Node, target) -> Kernel:
        params = dict(ew.loop_params(g, n), ctype="uint8_t", out_ctype="uint8_t",
                      expr=f"(uint8_t)(va {c_op} vb)")
        return Kernel("binary_expr.c.j2", params=params, consts=ew.const_inputs(g, n),
                      derived=dict(loop_text(params), store="store"))
    return OpDef(name, ew.infer_broadcast, reference, lower,
                 [bool_tensors, ew.shapes_broadcast, ew.rank_at_most_5], dtypes="bool",
                 inplace=((0, 0), (0, 1)))


def logical_not() -> OpDef:
    def infer(g: Graph, n: Node) -> list[TensorType | None]:
        return [TensorType(in_type(g, n).shape, DType.BOOL)]

    def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
        return [np.logical_not(np.asarray(ins[0], bool))]

    def lower(g: Graph, n: Node, target) -> Kernel:
        return Kernel("logical_not.c.j2", params=dict(count=in_type(g, n).numel))
    return OpDef("LOGICAL_NOT", infer, reference, lower, [bool_tensors], dtypes="bool",
                 inplace=((0, 0),))
