"""Validation of quantization parameters: what TFLite's quantization spec allows.

Scales finite and positive; zero points inside the tensor's dtype (int32/int64 tensors: inside
int32, as TFLite's kernels read them); per-channel arrays as long as the quantized dimension.
"""
from __future__ import annotations

import math

from edgecc.ir import DType, Graph, Value
from edgecc.validate.registry import tensor_check

_ZP_RANGE = {DType.INT8: (-128, 127), DType.UINT8: (0, 255), DType.INT16: (-32768, 32767),
             DType.INT32: (-2**31, 2**31 - 1), DType.INT64: (-2**31, 2**31 - 1)}


@tensor_check
def scale_and_zero_point_lengths(g: Graph, v: Value) -> object:
    """quantization must have as many zero points as scales"""
    q = v.type.q
    return q is None or len(q.scale) == len(q.zero_point) or (
        f"{len(q.scale)} scales, {len(q.zero_point)} zero points")


@tensor_check
def per_channel_axis(g: Graph, v: Value) -> object:
    """per-channel quantization needs one scale per channel of its quantized dimension"""
    q = v.type.q
    if q is None or not q.per_channel:
        return True
    shape = v.type.shape
    if len(shape) == 1 and shape[0] == len(q.scale):  # biases: TFLite ignores their axis field
        return True
    if not 0 <= q.axis < len(shape):
        return f"quantized dimension {q.axis} of a rank-{len(shape)} tensor"
    return shape[q.axis] == len(q.scale) or (
        f"{len(q.scale)} scales for dimension {q.axis} of size {shape[q.axis]}")


@tensor_check
def scales_finite_positive(g: Graph, v: Value) -> object:
    """quantization scales must be finite and positive"""
    q = v.type.q
    if q is None:
        return True
    bad = [s for s in q.scale if not (math.isfinite(s) and s > 0)]
    return not bad or f"scale {bad[0]!r}"


@tensor_check
def zero_points_in_dtype(g: Graph, v: Value) -> object:
    """zero points must lie inside the tensor's element type"""
    q = v.type.q
    if q is None or v.type.dtype not in _ZP_RANGE:
        return True
    lo, hi = _ZP_RANGE[v.type.dtype]
    bad = [z for z in q.zero_point if not lo <= z <= hi]
    return not bad or f"zero point {bad[0]} outside [{lo}, {hi}]"
