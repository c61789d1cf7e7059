"""FLOOR_DIV: y = floor(a / b) with numpy broadcasting (rank <= 5).

float32: TFLite Micro's kernel, one float32 division, then std::floor (exact); division by zero
gives IEEE inf/NaN where TFLite Micro reports an error at run time (edgecc/ops/_float_act.py).
int8, int16, int32: LiteRT's reference kernel (TFLite Micro has none), edgecc/ops/_int_floor.py.
"""
from __future__ import annotations

from edgecc.ops import register
from edgecc.ops import _float_act
from edgecc.ops._float import twin
from edgecc.ops._int_floor import FLOOR_DIV, int_floor_op

OP = register(twin(int_floor_op("FLOOR_DIV", **FLOOR_DIV), _float_act.FLOOR_DIV))
