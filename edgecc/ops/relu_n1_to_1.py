"""RELU_N1_TO_1, int8. TFLite Micro has no kernel for it; the oracle is TFLite's reference kernel
(QuantizedReluX(-1, 1)): requantize to the output parameters, then clamp to
[max(-128, zp + round(-1/scale)), min(127, zp + round(1/scale))].
"""
from __future__ import annotations

from edgecc.ir import DType, Graph, Node
from edgecc.ops import OpDef, in_type, register
from edgecc.ops._elementwise import same_as_input
from edgecc.ops._relu_common import int8_or_int16_same_type, relu_lower, relu_reference

ACT_RELU_N1_TO_1 = 2


def int8_only(g: Graph, n: Node) -> bool:
    """RELU_N1_TO_1 supports int8 only"""
    return in_type(g, n).dtype == DType.INT8


def reference(g: Graph, n: Node, ins: list) -> list:
    return [relu_reference(g, n, ins[0], ACT_RELU_N1_TO_1)]


def lower(g: Graph, n: Node, target):
    k = relu_lower(g, n, ACT_RELU_N1_TO_1)
    if k.template == "relu.c.j2":
        k.template = "relu_n1_to_1.c.j2"
    return k


OP = register(OpDef("RELU_N1_TO_1", same_as_input, reference, lower,
                    [int8_or_int16_same_type, int8_only],
                    dtypes="int8 -> int8 (requantizes)",
                    reference_oracle="TFLite reference kernels (not in TFLite Micro)",
                    inplace=((0, 0),)))  # y[i] is written after x[i] is read
