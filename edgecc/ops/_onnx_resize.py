"""onnxruntime's float32 Resize (mode linear, 2-D; CPU provider, NCHW float UpsampleBilinear) for
RESIZE_BILINEAR nodes with QLinear numerics, in numpy and as portable C.

Owns: the per-axis tables and the output formula. Per axis (float32): the original coordinate
(half_pixel: (x + 0.5f) / scale - 0.5f; asymmetric: x / scale; align_corners: x * (in - 1) /
(out - 1)), clamped to [0, in - 1]; x1 = min(int(x), in - 1), x2 = min(x1 + 1, in - 1),
d1 = |x - x1|, d2 = |x - x2| (both 0.5 when x1 == x2). Each output is
(dx2*dy2) * X11 + (dx1*dy2) * X21 + (dx2*dy1) * X12 + (dx1*dy1) * X22, products and sums in
float32 left to right (the coefficient products first). `scale` is the Resize's scales input,
or output / input size as float32 when it gives sizes (attrs "onnx_scales", "onnx_ctm").
edgecc checked it against onnxruntime 1.32 on ox_autoenc's 96x96 -> 192x192 half_pixel Resize:
identical floats. The C needs -ffp-contract=off.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, in_type, out_type

F32 = np.float32


def axis_table(inn: int, out: int, scale: float, ctm: str):
    """(x1, x2, d1, d2) of one axis."""
    i = np.arange(out, dtype=F32)
    if ctm == "half_pixel":
        xo = ((i + F32(0.5)) / F32(scale) - F32(0.5)).astype(F32)
    elif ctm == "align_corners":
        xo = np.zeros(out, F32) if out == 1 else ((i * F32(inn - 1)).astype(F32) / F32(out - 1))
    else:  # asymmetric
        xo = (i / F32(scale)).astype(F32)
    xin = np.maximum(F32(0), np.minimum(xo.astype(F32), F32(inn - 1))).astype(F32)
    x1 = np.minimum(xin.astype(np.int64), inn - 1)
    x2 = np.minimum(x1 + 1, inn - 1)
    d1 = np.abs(xin - x1.astype(F32)).astype(F32)
    d2 = np.abs(xin - x2.astype(F32)).astype(F32)
    d1[x1 == x2] = F32(0.5)
    d2[x1 == x2] = F32(0.5)
    return x1, x2, d1, d2


def _tables(g: Graph, n: Node):
    _, h, w, _ = in_type(g, n).shape
    _, oh, ow, _ = out_type(g, n).shape
    sh, sw = n.attrs["onnx_scales"]
    ctm = n.attrs.get("onnx_ctm", "half_pixel")
    return axis_table(h, oh, sh, ctm), axis_table(w, ow, sw, ctm)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    (y1, y2, dy1, dy2), (x1, x2, dx1, dx2) = _tables(g, n)
    x = np.asarray(ins[0], F32)
    c = [(a[None, :] * b[:, None]).astype(F32)[None, :, :, None]
         for a, b in ((dx2, dy2), (dx1, dy2), (dx2, dy1), (dx1, dy1))]
    taps = [x[:, r][:, :, k] for r, k in ((y1, x1), (y1, x2), (y2, x1), (y2, x2))]
    acc = (c[0] * taps[0]).astype(F32)
    for cf, t in zip(c[1:], taps[1:]):
        acc = (acc + (cf * t).astype(F32)).astype(F32)
    return [acc]


def lower(g: Graph, n: Node, target) -> Kernel:
    nb, h, w, c = in_type(g, n).shape
    (y1, y2, dy1, dy2), (x1, x2, dx1, dx2) = _tables(g, n)
    k = Kernel("resize_bilinear_onnx.c.j2",
               params=dict(batches=nb, out_h=len(y1), out_w=len(x1), depth=c, in_batch=h * w * c),
               consts=dict(ylo=(y1 * w * c).astype(np.int32), yhi=(y2 * w * c).astype(np.int32),
                           dy1=dy1, dy2=dy2, xlo=(x1 * c).astype(np.int32),
                           xhi=(x2 * c).astype(np.int32), dx1=dx1, dx2=dx2),
               variant="float32")
    k.reason = "onnxruntime's float Resize (linear) arithmetic"
    return k
