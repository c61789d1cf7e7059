"""SQUARE, float32 (TFLite Micro's elementwise kernel): y = x * x, one float32 product.
"""
from __future__ import annotations

import numpy as np

from edgecc.ops import register
from edgecc.ops._float import unary_float_op

OP = register(unary_float_op("SQUARE", np.square, "v * v"))
