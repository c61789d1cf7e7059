"""How generated output bytes are compared with the reference's: exact, except float32 values.

Owns the comparison rule of `edgecc verify` and the op tests: integer outputs must equal the
reference byte for byte; float32 outputs must lie within FLOAT_RTOL relative of the reference
(docs/design.md, numerics), because the generated C computes exp/log/tanh with its own functions
(runtime_c/edgecc_math.h) where TFLite Micro calls the host libm. Bit-identical values (including
NaNs of either sign and infinities) always match.
"""
from __future__ import annotations

import numpy as np

FLOAT_RTOL = 1e-5
FLOAT_ATOL = 1e-37  # below float32's smallest normal: a flushed or rounded subnormal still matches


def float_mismatches(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Indices (flat) of float32 values outside the tolerance."""
    g = np.asarray(got, np.float32).ravel().astype(np.float64)
    r = np.asarray(ref, np.float32).ravel().astype(np.float64)
    with np.errstate(invalid="ignore"):
        close = np.abs(g - r) <= np.maximum(FLOAT_RTOL * np.abs(r), FLOAT_ATOL)
    same = (g == r) | (np.isnan(g) & np.isnan(r))
    return np.flatnonzero(~(close | same))


def count_mismatches(got: bytes, ref: np.ndarray) -> int:
    """Mismatched bytes (integer outputs) or mismatched float32 values (float32 outputs) of one
    output; `got` has as many bytes as `ref`."""
    ref = np.ascontiguousarray(ref)
    if len(got) != ref.nbytes:
        return max(len(got), ref.nbytes)
    if ref.dtype == np.float32:
        return int(float_mismatches(np.frombuffer(got, np.float32), ref).size)
    rb = ref.tobytes()
    return sum(a != b for a, b in zip(got, rb))
