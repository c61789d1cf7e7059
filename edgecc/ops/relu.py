"""RELU, int8 and int16, as TFLite Micro computes it: requantize to the output parameters, then
clamp to [max(qmin, out_zp), qmax]. A RELU whose input and output parameters are equal is a clamp.
"""
from __future__ import annotations

from edgecc.ir import Graph, Node
from edgecc.ops import OpDef, register
from edgecc.ops._elementwise import same_as_input
from edgecc.ops import _float_act
from edgecc.ops._float import twin
from edgecc.ops._relu_common import (int8_or_int16_same_type, int16_zero_points, relu_lower,
                                     relu_reference)

ACT_RELU = 1


def reference(g: Graph, n: Node, ins: list) -> list:
    return [relu_reference(g, n, ins[0], ACT_RELU)]


def lower(g: Graph, n: Node, target):
    return relu_lower(g, n, ACT_RELU)


OP = register(OpDef("RELU", same_as_input, reference, lower,
                    [int8_or_int16_same_type, int16_zero_points],
                    dtypes="int8 -> int8, int16 -> int16 (requantizes)",
                    inplace=((0, 0),)))  # y[i] is written after x[i] is read
twin(OP, _float_act.RELU)  # float32: edgecc/ops/_float_act.py
