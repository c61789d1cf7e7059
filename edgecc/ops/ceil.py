"""CEIL, float32 (TFLite Micro's elementwise kernel): y = std::ceil(x), exact (signed zeros kept).
"""
from __future__ import annotations

import numpy as np

from edgecc.ops import register
from edgecc.ops._float import unary_float_op

OP = register(unary_float_op("CEIL", np.ceil, "ec_ceilf(v)"))
