"""FLOOR_MOD: y = a - floor(a / b) * b as TFLite computes it, with numpy broadcasting (rank <= 5),
float32 (TFLite Micro's kernel): t = fmod(a, b) (exact), then t + b when t is non-zero and its
sign differs from b's. A zero divisor gives NaN. The float path is edgecc/ops/_float_act.py.
"""
from __future__ import annotations

from edgecc.ops import register
from edgecc.ops import _float_act
from edgecc.ops._float import float_op
from edgecc.ops.div import infer

OP = register(float_op("FLOOR_MOD", infer, _float_act.FLOOR_MOD,
                       inplace=((0, 0), (0, 1))))  # y[i] is written after a[i], b[i] are read
