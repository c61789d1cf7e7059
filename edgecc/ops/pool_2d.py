"""AVERAGE_POOL_2D and MAX_POOL_2D over NHWC, int8 or int16 activations.

TFLite Micro's reference (integer_ops/pooling.h): the window is clipped to the input, so padded taps
are never read. MAX takes the largest valid tap. AVERAGE sums the valid taps and divides by their
count with rounding half away from zero: acc > 0 ? (acc + n/2) / n : (acc - n/2) / n, C division
truncating toward zero. Both clamp to the fused activation range. Input and output must share their
quantization (TFLM refuses anything else), so no requantization happens.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import (Kernel, OpDef, conv_out_size, conv_pad, in_type, out_type, register)
from edgecc.ops._conv_common import act_range
from edgecc.ops import _simd, _vec_elt


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
    return abs(float(a.scale[0]) - float(b.scale[0])) <= 1e-6 and a.zero_point[0] == b.zero_point[0]


def positive_window(g: Graph, n: Node) -> bool:
    """filter size and strides must be at least 1"""
    return all(int(n.attrs.get(k, 0)) >= 1
               for k in ("filter_height", "filter_width", "stride_h", "stride_w"))


def valid_padding_attr(g: Graph, n: Node) -> bool:
    """padding must be SAME or VALID"""
    return int(n.attrs.get("padding", 0)) in (0, 1)


def supported_activation(g: Graph, n: Node) -> bool:
    """fused activation must be NONE, RELU, RELU_N1_TO_1 or RELU6"""
    return int(n.attrs.get("fused_activation_function", 0)) in (0, 1, 2, 3)


def windows_not_empty(g: Graph, n: Node) -> bool:
    """every pooling window must overlap the input (TFLM fails on an empty window)"""
    d = _geometry(g, n)
    for out, pad, stride, k, size in ((d["out_h"], d["pad_h"], d["stride_h"], d["fh"], d["in_h"]),
                                      (d["out_w"], d["pad_w"], d["stride_w"], d["fw"], d["in_w"])):
        for o in range(out):
            origin = o * stride - pad
            if min(k, size - origin) <= max(0, -origin):
                return False
    return True


def _geometry(g: Graph, n: Node) -> dict:
    batches, in_h, in_w, depth = in_type(g, n).shape
    a = n.attrs
    pad_mode = int(a.get("padding", 0))
    fh, fw = int(a["filter_height"]), int(a["filter_width"])
    sh, sw = int(a["stride_h"]), int(a["stride_w"])
    explicit = a.get("explicit_padding")  # (top, bottom, left, right), set by passes/fuse.py
    if explicit is not None:
        t, b, l, r = (int(v) for v in explicit)
        return dict(batches=batches, in_h=in_h, in_w=in_w, depth=depth, fh=fh, fw=fw, stride_h=sh,
                    stride_w=sw, out_h=(in_h + t + b - fh) // sh + 1,
                    out_w=(in_w + l + r - fw) // sw + 1, pad_h=t, pad_w=l)
    out_h = conv_out_size(pad_mode, in_h, fh, sh, 1)
    out_w = conv_out_size(pad_mode, in_w, fw, sw, 1)
    return dict(batches=batches, in_h=in_h, in_w=in_w, depth=depth, fh=fh, fw=fw, stride_h=sh,
                stride_w=sw, out_h=out_h, out_w=out_w,
                pad_h=conv_pad(pad_mode, in_h, fh, sh, 1, out_h),
                pad_w=conv_pad(pad_mode, in_w, fw, sw, 1, out_w))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    d = _geometry(g, n)
    return [TensorType((d["batches"], d["out_h"], d["out_w"], d["depth"]), in_type(g, n).dtype)]


def _pool(g: Graph, n: Node, x: np.ndarray, average: bool) -> np.ndarray:
    d = _geometry(g, n)
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
    return [_pool(g, n, ins[0], average=True)]


def reference_max(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [_pool(g, n, ins[0], average=False)]


def _kernel(g: Graph, n: Node, template: str, scratch_per_channel: int) -> Kernel:
    d = _geometry(g, n)
    lo, hi = act_range(g, n)
    ctype = in_type(g, n).dtype.c
    # Both templates finish output pixel p (raster order) before pixel p+1 and read only p's
    # window meanwhile: the planner may stream the output over the input (plan/stream.py).
    return Kernel(template, params=dict(d, act_min=lo, act_max=hi, ctype=ctype),
                  scratch=scratch_per_channel * d["depth"], streams=(1, 1))


def _lower_simd(g: Graph, n: Node, target, average: bool) -> Kernel | None:
    """The SIMD kernel (int8; averages over windows of at most 256 taps, whose int16 sums cannot
    overflow), or None for the portable one. Cortex-M DSP (runtime_c/dsp/pool_2d.h): SXTAB16
    sums of 8 channels / SSUB8+SEL maxima of 4; Helium (mve/pool_2d.h): 16 channels per vector."""
    if not _simd.has_isa(target, "dsp") or in_type(g, n).dtype != DType.INT8:
        return None
    d = _geometry(g, n)
    if average and d["fh"] * d["fw"] > 256:
        return None
    lo, hi = act_range(g, n)
    isa = "mve" if _simd.has_isa(target, "mve") else "dsp"
    kind = "avgpool" if average else "maxpool"
    geom = [d["batches"], d["in_h"], d["in_w"], d["depth"], d["out_h"], d["out_w"], d["fh"],
            d["fw"], d["stride_h"], d["stride_w"], d["pad_h"], d["pad_w"], lo, hi]
    how = ("int16 sums of 16 channels per vector" if isa == "mve" else
           "SXTAB16 int16 sums, 8 channels at a time") if average else \
        ("VMAX.S8 on 16 channels" if isa == "mve" else "SSUB8 + SEL on 4 channels")
    return Kernel(f"pool_2d_{isa}.c.j2",
                  params=dict(geom=geom, fn=f"ec_{isa}_pool_2d_{kind[:3]}_s8"),
                  variant=f"{isa}-{kind}",
                  reason=f"{'Helium' if isa == 'mve' else 'Cortex-M DSP'}: {how}")


def lower_avg(g: Graph, n: Node, target) -> Kernel:
    why = ""
    if _simd.has_isa(target, "avx2"):  # x86: edgecc/ops/_vec_elt.py
        k, why = _vec_elt.lower_avgpool(_geometry(g, n), in_type(g, n).dtype, *act_range(g, n))
        if k is not None:
            return k
    k = _lower_simd(g, n, target, average=True)
    if k is not None:
        return k
    # The per-channel int32 sums live in scratch so that the innermost loop runs over contiguous
    # channels (NHWC) instead of striding across pixels.
    return dataclasses.replace(_kernel(g, n, "average_pool_2d.c.j2", 4), reason=why)


def lower_max(g: Graph, n: Node, target) -> Kernel:
    k = _lower_simd(g, n, target, average=False)
    if k is not None:
        return k
    return _kernel(g, n, "max_pool_2d.c.j2", 0)


_CONSTRAINTS = [int8_or_int16, rank4, same_quantization, positive_window, valid_padding_attr,
                supported_activation, windows_not_empty]

AVG = register(OpDef("AVERAGE_POOL_2D", infer, reference_avg, lower_avg, list(_CONSTRAINTS),
                     dtypes="int8 -> int8, int16 -> int16"))
MAX = register(OpDef("MAX_POOL_2D", infer, reference_max, lower_max, list(_CONSTRAINTS),
                     dtypes="int8 -> int8, int16 -> int16"))
