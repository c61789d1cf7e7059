"""AVERAGE_POOL_2D and MAX_POOL_2D over NHWC, int8 or int16 activations.

TFLite Micro's reference (integer_ops/pooling.h): the window is clipped to the input, so padded taps
are never read. MAX takes the largest valid tap. AVERAGE sums the valid taps and divides by their
count with rounding half away from zero: acc > 0 ? (acc + n/2) / n : (acc - n/2) / n, C division
truncating toward zero. Both clamp to the fused activation range. Input and output must share their
quantization (TFLM refuses anything else), so no requantization happens.
AVERAGE_POOL_2D with ONNX numerics (from QLinearAveragePool): onnxruntime's float average and
requantization (any output quantization), edgecc/ops/_onnx_pool.py.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._conv_common import act_range, pool_geometry, supported_activation
from edgecc.ops import _float_conv
from edgecc.ops._float import twin


def int8_or_int16(g: Graph, n: Node) -> bool:
    """input and output must both be int8 or both int16"""
    a, b = in_type(g, n).dtype, out_type(g, n).dtype
    return a == b and a in (DType.INT8, DType.INT16)


def rank4(g: Graph, n: Node) -> bool:
    """input must be a 4-D NHWC tensor"""
    return len(in_type(g, n).shape) == 4


def same_quantization(g: Graph, n: Node) -> bool:
    """input and output must have the same scale and zero point"""
    a, b = in_type(g, n).q, out_type(g, n).q
    if a is None or b is None:
        return False
    if n.numerics.onnxruntime:  # onnxruntime requantizes
        return in_type(g, n).dtype == DType.INT8
    return abs(float(a.scale[0]) - float(b.scale[0])) <= 1e-6 and a.zero_point[0] == b.zero_point[0]


def positive_window(g: Graph, n: Node) -> bool:
    """filter size and strides must be at least 1"""
    return all(int(n.attrs.get(k, 0)) >= 1
               for k in ("filter_height", "filter_width", "stride_h", "stride_w"))


def valid_padding_attr(g: Graph, n: Node) -> bool:
    """padding must be SAME or VALID"""
    return int(n.attrs.get("padding", 0)) in (0, 1)


def windows_not_empty(g: Graph, n: Node) -> bool:
    """every pooling window must overlap the input (TFLM fails on an empty window)"""
    d = pool_geometry(g, n)
    for out, pad, stride, k, size in ((d["out_h"], d["pad_h"], d["stride_h"], d["fh"], d["in_h"]),
                                      (d["out_w"], d["pad_w"], d["stride_w"], d["fw"], d["in_w"])):
        for o in range(out):
            origin = o * stride - pad
            if min(k, size - origin) <= max(0, -origin):
                return False
    return True


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    d = pool_geometry(g, n)
    return [TensorType((d["batches"], d["out_h"], d["out_w"], d["depth"]), in_type(g, n).dtype)]


def _pool(g: Graph, n: Node, x: np.ndarray, average: bool) -> np.ndarray:
    d = pool_geometry(g, n)
    lo, hi = act_range(g, n)
    x = np.asarray(x).astype(np.int64)
    out = np.zeros((d["batches"], d["out_h"], d["out_w"], d["depth"]), dtype=np.int64)
    for oy in range(d["out_h"]):
        y0 = oy * d["stride_h"] - d["pad_h"]
        ys = slice(max(y0, 0), min(y0 + d["fh"], d["in_h"]))
        for ox in range(d["out_w"]):
            x0 = ox * d["stride_w"] - d["pad_w"]
            xs = slice(max(x0, 0), min(x0 + d["fw"], d["in_w"]))
            win = x[:, ys, xs, :]
            if average:
                cnt = win.shape[1] * win.shape[2]
                acc = win.sum(axis=(1, 2))
                num = np.where(acc > 0, acc + cnt // 2, acc - cnt // 2)
                # C integer division truncates toward zero
                val = np.where(num >= 0, num // cnt, -((-num) // cnt))
            else:
                val = win.max(axis=(1, 2))
            out[:, oy, ox, :] = val
    return np.clip(out, lo, hi).astype(in_type(g, n).dtype.np)


def reference_avg(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if n.numerics.float_group:  # onnxruntime's float32 group: edgecc/ops/_ort_float.py
        from edgecc.ops._ort_float import reference as ort_reference
        return ort_reference(g, n, ins)
    if n.numerics.qlinear:
        from edgecc.ops._onnx_pool import reference
        return reference(g, n, ins)
    return [_pool(g, n, ins[0], average=True)]


def reference_max(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [_pool(g, n, ins[0], average=False)]


def _kernel(g: Graph, n: Node, template: str, scratch_per_channel: int) -> Kernel:
    d = pool_geometry(g, n)
    lo, hi = act_range(g, n)
    ctype = in_type(g, n).dtype.c
    # Both templates finish output pixel p (raster order) before pixel p+1 and read only p's
    # window meanwhile: the planner may stream the output over the input (plan/stream.py).
    return Kernel(template, params=dict(d, act_min=lo, act_max=hi, ctype=ctype),
                  scratch=scratch_per_channel * d["depth"], streams=(1, 1))


def lower_avg(g: Graph, n: Node, target) -> Kernel:
    """The portable kernel (the optimized ones are edgecc/lower/'s tables). The per-channel int32
    sums live in scratch so that the innermost loop runs over contiguous channels (NHWC)
    instead of striding across pixels."""
    if n.numerics.float_group:  # onnxruntime's float32 group: edgecc/ops/_ort_float.py
        from edgecc.ops._ort_float import lower as ort_lower
        return ort_lower(g, n, target)
    onnx = n.numerics.qlinear
    # ONNX: a channel's float32 sum in a register, one pixel's int8 results in scratch
    k = _kernel(g, n, "average_pool_2d_onnx.c.j2" if onnx else "average_pool_2d.c.j2",
                1 if onnx else 4)
    if onnx:
        from edgecc.ops._onnx_pool import kernel_params
        extra, consts = kernel_params(g, n)
        k.params.update(extra)
        k.consts.update(consts)
        k.reason = "onnxruntime's QLinearAveragePool arithmetic (float32 average, half to even)"
    return k


def lower_max(g: Graph, n: Node, target) -> Kernel:
    """The portable kernel (the optimized ones are edgecc/lower/'s tables)."""
    return _kernel(g, n, "max_pool_2d.c.j2", 0)


_CONSTRAINTS = [int8_or_int16, rank4, same_quantization, positive_window, valid_padding_attr,
                supported_activation, windows_not_empty]

AVG = register(OpDef("AVERAGE_POOL_2D", infer, reference_avg, lower_avg, list(_CONSTRAINTS),
                     dtypes="int8 -> int8, int16 -> int16"))
MAX = register(OpDef("MAX_POOL_2D", infer, reference_max, lower_max, list(_CONSTRAINTS),
                     dtypes="int8 -> int8, int16 -> int16"))
twin(AVG, _float_conv.AVERAGE_POOL_2D, keep=tuple(_CONSTRAINTS[1:2] + _CONSTRAINTS[3:]))
twin(MAX, _float_conv.MAX_POOL_2D, keep=tuple(_CONSTRAINTS[1:2] + _CONSTRAINTS[3:]))
