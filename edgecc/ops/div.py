"""DIV: y = a / b with numpy broadcasting (rank <= 5), float32 (TFLite Micro's float kernel).

Each element is one float32 division, then the fused activation's clamp (NONE clamps to the finite
float range, as CalculateActivationRange<float>); division by zero gives TFLite's IEEE inf/NaN.
The float path is edgecc/ops/_float_act.py (DIV).
"""
from __future__ import annotations

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import register
from edgecc.ops import _arith as ew
from edgecc.ops import _float_act
from edgecc.ops._float import float_op


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return ew.infer_broadcast(g, n)


OP = register(float_op("DIV", infer, _float_act.DIV,
                       inplace=((0, 0), (0, 1))))  # y[i] is written after a[i], b[i] are read
