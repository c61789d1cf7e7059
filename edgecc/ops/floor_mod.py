"""FLOOR_MOD: y = a - floor(a / b) * b as TFLite computes it, with numpy broadcasting (rank <= 5).

float32 (TFLite Micro's kernel): t = fmod(a, b) (exact), then t + b when t is non-zero and its
sign differs from b's; a zero divisor gives NaN (edgecc/ops/_float_act.py).
int8, int16, int32, int64: LiteRT's reference kernel (TFLite Micro has none), the same rule on
C's truncated remainder (edgecc/ops/_int_floor.py).
"""
from __future__ import annotations

from edgecc.ops import register
from edgecc.ops import _float_act
from edgecc.ops._float import twin
from edgecc.ops._int_floor import FLOOR_MOD, int_floor_op

OP = register(twin(int_floor_op("FLOOR_MOD", **FLOOR_MOD), _float_act.FLOOR_MOD))
