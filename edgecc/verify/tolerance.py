"""How generated output bytes are compared with the reference's: exact, except float32 values.

Owns the comparison rule of `edgecc verify` and the op tests: integer outputs must equal the
reference byte for byte; float32 outputs must lie within FLOAT_RTOL relative of the reference
(docs/design.md, numerics), because the generated C computes exp/log/tanh with its own functions
(runtime_c/edgecc_math.h) where TFLite Micro calls the host libm. Bit-identical values (including
NaNs of either sign and infinities) always match. TFLite float kernels follow TFLite's summation
order, so each value is compared relative to itself; an ONNX float region sums in another order
than onnxruntime's MLAS (a value that cancels to ~0, or a Relu of one, has no relative accuracy),
so there each value is compared relative to its output's largest magnitude (`norm_wise`), and
`relative_error` reports that measure.
"""
from __future__ import annotations

import numpy as np

FLOAT_RTOL = 1e-5
FLOAT_ATOL = 1e-37  # below float32's smallest normal: a flushed or rounded subnormal still matches


def _scale(r: np.ndarray, norm_wise: bool) -> np.ndarray | float:
    """What each value's error is relative to: itself, or the output's largest finite magnitude."""
    if not norm_wise:
        return np.abs(r)
    fin = np.abs(r[np.isfinite(r)])
    return float(fin.max()) if fin.size else 0.0


def float_mismatches(got: np.ndarray, ref: np.ndarray, norm_wise: bool = False) -> np.ndarray:
    """Indices (flat) of float32 values outside the tolerance."""
    g = np.asarray(got, np.float32).ravel().astype(np.float64)
    r = np.asarray(ref, np.float32).ravel().astype(np.float64)
    with np.errstate(invalid="ignore"):
        close = np.abs(g - r) <= np.maximum(FLOAT_RTOL * _scale(r, norm_wise), FLOAT_ATOL)
    same = (g == r) | (np.isnan(g) & np.isnan(r))
    return np.flatnonzero(~(close | same))


def relative_error(got: bytes, ref: np.ndarray, norm_wise: bool = False) -> float:
    """The largest |got - ref| of a float32 output relative to the reference (each value's own
    magnitude, or with norm_wise the output's largest one); 0 when bit-identical, inf when a
    value is NaN or infinite on one side only."""
    g = np.frombuffer(got, np.float32).astype(np.float64)
    r = np.ascontiguousarray(ref, np.float32).ravel().astype(np.float64)
    same = (g == r) | (np.isnan(g) & np.isnan(r))
    if same.all():
        return 0.0
    g, r = g[~same], r[~same]
    if not (np.isfinite(g).all() and np.isfinite(r).all()):
        return float("inf")
    scale = _scale(np.ascontiguousarray(ref, np.float32).ravel().astype(np.float64), norm_wise)
    if not norm_wise:
        scale = np.abs(r)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.abs(g - r) / np.maximum(scale, FLOAT_ATOL)
    return float(rel.max())


def count_mismatches(got: bytes, ref: np.ndarray, norm_wise: bool = False) -> int:
    """Mismatched bytes (integer outputs) or mismatched float32 values (float32 outputs) of one
    output; `got` has as many bytes as `ref`."""
    ref = np.ascontiguousarray(ref)
    if len(got) != ref.nbytes:
        return max(len(got), ref.nbytes)
    if ref.dtype == np.float32:
        return int(float_mismatches(np.frombuffer(got, np.float32), ref, norm_wise).size)
    rb = ref.tobytes()
    return sum(a != b for a, b in zip(got, rb))
