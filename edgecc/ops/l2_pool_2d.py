"""L2_POOL_2D over NHWC, float32 (TFLite's reference L2Pool, as TFLite Micro runs it).

Per output value: the squares of the window's taps inside the input summed in row-major order
from 0.0f, divided by their count, square-rooted (correctly rounded on both sides), then the
fused activation's clamp. Geometry and its constraints are AVERAGE_POOL_2D's
(edgecc/ops/pool_2d.py); the arithmetic is edgecc/ops/_float_conv.py's pool path.
"""
from __future__ import annotations

from edgecc.ops import OpDef, register
from edgecc.ops import _float_conv
from edgecc.ops.pool_2d import (infer, positive_window, rank4, supported_activation,
                                valid_padding_attr, windows_not_empty)

_PATH = _float_conv.pool_path("l2")
OP = register(OpDef("L2_POOL_2D", infer, _PATH.reference, _PATH.lower,
                    [*_PATH.constraints, rank4, positive_window, valid_padding_attr,
                     supported_activation, windows_not_empty], dtypes="float32"))
