"""FLOOR_DIV: y = floor(a / b) with numpy broadcasting (rank <= 5), float32 (TFLite Micro's kernel).

One float32 division, then std::floor (exact); division by zero gives IEEE inf/NaN where TFLite
Micro reports an error at run time. The float path is edgecc/ops/_float_act.py (FLOOR_DIV).
"""
from __future__ import annotations

from edgecc.ops import register
from edgecc.ops import _float_act
from edgecc.ops._float import float_op
from edgecc.ops.div import infer

OP = register(float_op("FLOOR_DIV", infer, _float_act.FLOOR_DIV,
                       inplace=((0, 0), (0, 1))))  # y[i] is written after a[i], b[i] are read
