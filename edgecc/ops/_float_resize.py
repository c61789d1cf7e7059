"""The float32 path of RESIZE_BILINEAR: TFLite's reference ResizeBilinear<float>, as TFLite Micro runs it.

Per axis (float32 throughout): scale = in / out (align_corners and out > 1: (in - 1) / (out - 1));
source position s = (i + 0.5f) * scale - 0.5f with half_pixel_centers, else i * scale; lower
index max(int(floor(s)), 0), upper min(int(ceil(s)), in - 1), d = s - lower. Each output is
x00*(1-dy)*(1-dx) + x10*dy*(1-dx) + x01*(1-dy)*dx + x11*dy*dx + 0.0f, evaluated left to right
(TFLite adds a rounding offset of 0 for float). Python tables the indices, d and 1 - d; the C
(templates/c/resize_bilinear_float.c.j2) does the products in the same order: bit-exact.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.ops import Kernel, in_type, out_type
from edgecc.ops._copy import const_ints
from edgecc.ops._float import F32, FloatPath


def axis_table(in_size: int, out_size: int, align: bool, half: bool):
    """(lower, upper, d, 1 - d) arrays for one axis (d, 1 - d as float32)."""
    scale = F32(in_size) / F32(out_size)
    if align and out_size > 1:
        scale = F32(in_size - 1) / F32(out_size - 1)
    i = np.arange(out_size, dtype=F32)
    s = ((i + F32(0.5)) * scale - F32(0.5)).astype(F32) if half else (i * scale).astype(F32)
    lo = np.maximum(np.floor(s).astype(np.int64), 0)
    hi = np.minimum(np.ceil(s).astype(np.int64), in_size - 1)
    d = (s - lo.astype(F32)).astype(F32)
    return lo, hi, d, (F32(1) - d).astype(F32)


def float_nhwc_constant_size(g: Graph, n: Node) -> bool:
    """float32: input and output must be float32, 4-D NHWC, size a constant [h, w] of positive
    values"""
    s = const_ints(g, n, 1)
    return (in_type(g, n).dtype == DType.FLOAT32 and out_type(g, n).dtype == DType.FLOAT32
            and len(in_type(g, n).shape) == 4 and s is not None and len(s) == 2 and min(s) >= 1)


def _tables(g: Graph, n: Node):
    _, h, w, _ = in_type(g, n).shape
    oh, ow = const_ints(g, n, 1)
    align = bool(n.attrs.get("align_corners", False))
    half = bool(n.attrs.get("half_pixel_centers", False))
    return axis_table(h, oh, align, half), axis_table(w, ow, align, half)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    if n.numerics.qlinear:  # onnxruntime's Resize: edgecc/ops/_onnx_resize.py
        from edgecc.ops._onnx_resize import reference as onnx_reference
        return onnx_reference(g, n, ins)
    (y0, y1, dy, cy), (x0, x1, dx, cx) = _tables(g, n)
    x = np.asarray(ins[0], F32)
    dy, cy = dy[None, :, None, None], cy[None, :, None, None]
    dx, cx = dx[None, None, :, None], cx[None, None, :, None]

    def term(rows, cols, wy, wx):
        return ((x[:, rows][:, :, cols] * wy).astype(F32) * wx).astype(F32)
    acc = (term(y0, x0, cy, cx) + term(y1, x0, dy, cx)).astype(F32)
    acc = (acc + term(y0, x1, cy, dx)).astype(F32)
    acc = (acc + term(y1, x1, dy, dx)).astype(F32)
    return [(acc + F32(0)).astype(F32)]


def lower(g: Graph, n: Node, target) -> Kernel:
    if n.numerics.qlinear:
        from edgecc.ops._onnx_resize import lower as onnx_lower
        return onnx_lower(g, n, target)
    nb, h, w, c = in_type(g, n).shape
    (y0, y1, dy, cy), (x0, x1, dx, cx) = _tables(g, n)
    return Kernel("resize_bilinear_float.c.j2",
                  params=dict(batches=nb, out_h=len(y0), out_w=len(x0), depth=c, in_batch=h * w * c),
                  consts=dict(ylo=(y0 * w * c).astype(np.int32), yhi=(y1 * w * c).astype(np.int32),
                              dy=dy, cy=cy, xlo=(x0 * c).astype(np.int32),
                              xhi=(x1 * c).astype(np.int32), dx=dx, cx=cx),
                  variant="float32")


RESIZE_BILINEAR = FloatPath(reference, lower, [float_nhwc_constant_size])
