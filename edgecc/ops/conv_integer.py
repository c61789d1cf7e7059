"""CONV_INTEGER: ONNX's integer convolution with weight zero points (ConvInteger, and QLinearConv
whose weights have a non-zero zero point), NHWC, grouped, any stride, dilation and explicit pads.

Meaning (ONNX ConvInteger / QLinearConv, onnx.reference): for every output pixel and channel c,
acc = sum over the taps inside the input of (x - x_zp) * (w - w_zp[c]) (+ bias[c]); padded taps
read x_zp, i.e. contribute 0. Both differences are exact in int32 (8-bit values, 8-bit zero
points), as onnxruntime subtracts the weight zero point before its integer GEMM. The output is
either that int32 accumulator (ConvInteger: no quantization on the output) or int8 through
onnxruntime's float32 epilogue (the QLinear dialect, edgecc/numerics/qlinear.py).

The existing CONV_2D kernels (portable and SIMD) assume weights with zero point 0; this op is
the portable kernel for the rest, one plain loop nest (no SIMD variant: the kernel tables have
no entry for it, so nothing can choose a kernel that ignores the weight zero point).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, const, in_type, out_type, register
from edgecc.ops._conv_common import (act_range, bias_or_zeros, conv_groups, conv_window,
                                     requantize, valid_window_options)
from edgecc.numerics.qlinear import onnx_scales


def int8_input(g: Graph, n: Node) -> bool:
    """input must be int8 quantized per tensor (its zero point is x_zero_point)"""
    x = in_type(g, n)
    return x.dtype == DType.INT8 and x.q is not None and not x.q.per_channel


def int32_or_onnx_int8_output(g: Graph, n: Node) -> bool:
    """output must be int32 (no requantization) or int8 with ONNX numerics, per tensor"""
    y = out_type(g, n)
    if y.dtype == DType.INT32:
        return not n.numerics.qlinear
    return y.dtype == DType.INT8 and n.numerics.qlinear and y.q is not None and not y.q.per_channel


def int8_filter_with_zero_points(g: Graph, n: Node) -> bool:
    """filter must be a constant int8 tensor [out_ch, kh, kw, in_ch / groups] with one zero point
    (and scale) per tensor or per output channel"""
    w = g.value(n.inputs[1])
    if not (w.is_const and w.type.dtype == DType.INT8 and len(w.type.shape) == 4
            and w.type.q is not None and len(in_type(g, n).shape) == 4):
        return False
    return len(w.type.q.zero_point) in (1, w.type.shape[0]) and \
        len(w.type.q.scale) in (1, w.type.shape[0])


def whole_groups(g: Graph, n: Node) -> bool:
    """input depth must be a multiple of the filter's input depth, and output channels a multiple
    of the group count"""
    fic, ic, oc = in_type(g, n, 1).shape[3], in_type(g, n).shape[3], in_type(g, n, 1).shape[0]
    return fic > 0 and ic % fic == 0 and oc % (ic // fic) == 0


def bias_int32(g: Graph, n: Node) -> bool:
    """bias, when present, must be a constant int32 tensor with one value per output channel"""
    if len(n.inputs) < 3 or n.inputs[2] is None:
        return True
    b = g.value(n.inputs[2])
    return b.is_const and b.type.dtype == DType.INT32 and b.type.numel == in_type(g, n, 1).shape[0]


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    win = conv_window(g, n)
    shape = (in_type(g, n).shape[0], win.out_h, win.out_w, in_type(g, n, 1).shape[0])
    return [TensorType(shape, out_type(g, n).dtype)]


def weight_offsets(g: Graph, n: Node, channels: int) -> np.ndarray:
    """The weights' zero point per output channel (int64)."""
    z = np.asarray(in_type(g, n, 1).q.zero_point, np.int64)
    return np.broadcast_to(z, (channels,)).copy()


def finish(g: Graph, n: Node, acc: np.ndarray, channels: int) -> np.ndarray:
    """int32 accumulators (+ bias, last axis = channels) -> the op's output (shared with
    MATMUL_INTEGER-like users): int32 as is, or int8 through onnxruntime's epilogue."""
    acc = acc + bias_or_zeros(g, n, channels)
    if out_type(g, n).dtype == DType.INT32:
        return acc.astype(np.int32)
    lo, hi = act_range(g, n)
    return requantize(acc, onnx_scales(g, n, channels), 0, out_type(g, n).q.zero_point[0],
                      lo, hi, np.int8)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    win = conv_window(g, n)
    w = const(g, n, 1).astype(np.int64)
    oc, fic = w.shape[0], w.shape[3]
    w = (w - weight_offsets(g, n, oc)[:, None, None, None]).astype(np.float64)
    groups = conv_groups(g, n)
    per_group = oc // groups
    xz = ins[0].astype(np.float64) - in_type(g, n).q.zero_point[0]
    # float64 sums of 9-bit by 9-bit products are exact far beyond any int32 accumulator
    acc = np.zeros((xz.shape[0], win.out_h, win.out_w, oc), np.float64)
    for fy, fx, patch in win.taps(xz):
        for gi in range(groups):
            ch = slice(gi * per_group, (gi + 1) * per_group)
            acc[..., ch] += patch[..., gi * fic:(gi + 1) * fic] @ w[ch, fy, fx, :].T
    return [finish(g, n, acc.astype(np.int64), oc)]


def epilogue_params(g: Graph, n: Node, channels: int) -> tuple[dict, dict]:
    """(params, consts) of the C epilogue (templates/c/_int_store.j2): int32 out, or int8
    through ec_onnx_rq with float32 scales."""
    int32 = out_type(g, n).dtype == DType.INT32
    params = dict(store="int32" if int32 else "onnx", out_ctype=out_type(g, n).dtype.c)
    consts = dict(bias=bias_or_zeros(g, n, channels).astype(np.int32))
    if not int32:
        lo, hi = act_range(g, n)
        params.update(out_zp=int(out_type(g, n).q.zero_point[0]), act_min=lo, act_max=hi)
        consts["scale"] = onnx_scales(g, n, channels)
    return params, consts


def lower(g: Graph, n: Node, target) -> Kernel:
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1)
    oc, kh, kw, fic = w.shape
    params, consts = epilogue_params(g, n, oc)
    consts.update(w=w.astype(np.int8), w_zp=weight_offsets(g, n, oc).astype(np.int32))
    params.update(batches=x.shape[0], in_h=win.in_h, in_w=win.in_w, in_c=x.shape[3],
                  out_h=win.out_h, out_w=win.out_w, out_c=oc, k_h=kh, k_w=kw, fic=fic,
                  per_group=oc // conv_groups(g, n), ksize=kh * kw * fic, stride_h=win.stride_h,
                  stride_w=win.stride_w, dil_h=win.dil_h, dil_w=win.dil_w, pad_t=win.pad_t,
                  pad_l=win.pad_l, x_zp=int(x.q.zero_point[0]))
    return Kernel("conv_integer.c.j2", params=params, consts=consts,
                  reason="weights with non-zero zero points: the portable integer kernel")


register(OpDef(
    "CONV_INTEGER", infer, reference, lower,
    [int8_input, int32_or_onnx_int8_output, int8_filter_with_zero_points, whole_groups,
     bias_int32, valid_window_options],
    dtypes="int8 x int8 (weight zero points) -> int32, or -> int8 (ONNX numerics)",
    reference_oracle="onnx.reference / onnxruntime"))
