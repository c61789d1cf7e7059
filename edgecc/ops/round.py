"""ROUND, float32 (TFLite Micro's kernel, RoundToNearest): half to even.

f = floor(x), d = x - f; y = f when d < 0.5 or (d == 0.5 and f is even), else f + 1.
"""
from __future__ import annotations

import numpy as np

from edgecc.ops import register
from edgecc.ops._float import F32, unary_float_op


def round_to_nearest(x: np.ndarray) -> np.ndarray:
    f = np.floor(x).astype(F32)
    d = (x - f).astype(F32)
    with np.errstate(invalid="ignore"):
        even = np.fmod(f, F32(2)) == 0
    return np.where((d < F32(0.5)) | ((d == F32(0.5)) & even), f, (f + F32(1)).astype(F32))


OP = register(unary_float_op("ROUND", round_to_nearest, "ec_roundf_even(v)"))
