"""SQRT, float32 (TFLite Micro's elementwise kernel): y = std::sqrt(x), correctly rounded on both
sides (NaN below zero).
"""
from __future__ import annotations

import numpy as np

from edgecc.ops import register
from edgecc.ops._float import unary_float_op

OP = register(unary_float_op("SQRT", np.sqrt, "ec_sqrtf(v)"))
