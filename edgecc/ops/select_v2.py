"""SELECT_V2: y = condition ? x : z with three-way numpy broadcasting; any element type, raw values.

The condition is bool; x and z share the output's type (and, for int8, TFLite copies raw values:
the converter gives x, z and the output one quantization).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._loops import loop_text


def supported_types(g: Graph, n: Node) -> bool:
    """condition must be bool; both value inputs must have the output's type"""
    return (in_type(g, n).dtype == DType.BOOL and in_type(g, n, 1).dtype == out_type(g, n).dtype
            and in_type(g, n, 2).dtype == out_type(g, n).dtype)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return ew.infer_broadcast(g, n, out_type(g, n).dtype)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [np.where(ins[0].astype(bool), ins[1], ins[2]).astype(out_type(g, n).dtype.np)]


def lower(g: Graph, n: Node, target) -> Kernel:
    params = dict(ew.loop_params(g, n), ctype=out_type(g, n).dtype.c)
    return Kernel("select_v2.c.j2", params=params, consts=ew.const_inputs(g, n),
                  derived=loop_text(params))


OP = register(OpDef("SELECT_V2", infer, reference, lower,
                    [supported_types, ew.shapes_broadcast, ew.rank_at_most_5],
                    dtypes="bool condition; any value type (raw copy)",
                    inplace=((0, 0), (0, 1), (0, 2))))  # y[i] written after its inputs are read
