"""RESIZE_BILINEAR, int8 and int16 (NHWC, constant size; align_corners / half_pixel_centers).

TFLite's ResizeBilinearInteger, all in integers with 10 fractional bits:
scale = ((1 << 10) * in + out / 2) / out, or ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1)
with align_corners (and out > 1); source position s = i * scale (+ scale / 2 - 512 with
half_pixel_centers); lower index max(s / 1024, 0), upper min((s + 1023) / 1024, in - 1) (C
division, truncating), weight w = s - 1024 * lower (it may be negative near the border: TFLite
extrapolates there). out = (sum of the four products + sign * 2**19) / 2**20, truncated, then cast
to the output type. Python tables the row/column indices and weights; the C does the four
multiply-adds per element. The output keeps the input's quantization (no requantization).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _float_resize
from edgecc.ops._copy import const_ints
from edgecc.ops._float import twin


def _tdiv(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def axis_table(in_size: int, out_size: int, align: bool, half: bool) -> list[tuple[int, int, int]]:
    """(lower index, upper index, weight of the upper one in 1/1024) per output index."""
    scale = _tdiv((1 << 10) * in_size + out_size // 2, out_size)
    if align and out_size > 1:
        scale = _tdiv((1 << 10) * (in_size - 1) + (out_size - 1) // 2, out_size - 1)
    out = []
    for i in range(out_size):
        s = i * scale + _tdiv(scale, 2) - (1 << 9) if half else i * scale
        lo = max(_tdiv(s, 1 << 10), 0)
        hi = min(_tdiv(s + (1 << 10) - 1, 1 << 10), in_size - 1)
        out.append((lo, hi, s - (1 << 10) * lo))
    return out


def _flags(n: Node) -> tuple[bool, bool]:
    return bool(n.attrs.get("align_corners", False)), bool(n.attrs.get("half_pixel_centers", False))


def int_nhwc_constant_size(g: Graph, n: Node) -> bool:
    """input and output must be int8 or int16 (the same), 4-D NHWC, size a constant [h, w] of positive values"""
    s = const_ints(g, n, 1)
    return (in_type(g, n).dtype in (DType.INT8, DType.INT16) and out_type(g, n).dtype == in_type(g, n).dtype
            and len(in_type(g, n).shape) == 4 and s is not None and len(s) == 2 and min(s) >= 1)


def not_both_modes(g: Graph, n: Node) -> bool:
    """align_corners and half_pixel_centers cannot both be set"""
    return not all(_flags(n))


def indices_inside(g: Graph, n: Node) -> bool:
    """the upscale must keep TFLite's source rows/columns inside the input (extreme ratios read past it)"""
    _, h, w, _ = in_type(g, n).shape
    ty, tx = _tables(g, n)
    return all(t[0] < h for t in ty) and all(t[0] < w for t in tx)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    size = const_ints(g, n, 1)
    if size is None or len(size) != 2 or len(in_type(g, n).shape) != 4:
        return [None]  # size not known here: the constraints judge it
    nb, _, _, c = in_type(g, n).shape
    return [TensorType((nb, *size, c), out_type(g, n).dtype)]


def _tables(g: Graph, n: Node):
    _, h, w, _ = in_type(g, n).shape
    oh, ow = const_ints(g, n, 1)
    align, half = _flags(n)
    return axis_table(h, oh, align, half), axis_table(w, ow, align, half)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    ty, tx = _tables(g, n)
    x = ins[0].astype(np.int64)
    y0, y1, wy = (np.array(v) for v in zip(*ty))
    x0, x1, wx = (np.array(v) for v in zip(*tx))
    wy, wx = wy[None, :, None, None], wx[None, None, :, None]
    acc = (x[:, y0][:, :, x0] * ((1 << 10) - wy) * ((1 << 10) - wx)
           + x[:, y1][:, :, x0] * wy * ((1 << 10) - wx)
           + x[:, y0][:, :, x1] * ((1 << 10) - wy) * wx
           + x[:, y1][:, :, x1] * wy * wx)
    num = acc + np.where(acc > 0, 1 << 19, -(1 << 19))
    q = np.abs(num) >> 20
    out = np.where(num >= 0, q, -q)  # C division truncates
    return [out.astype(in_type(g, n).dtype.np)]  # wraps like the C++ static_cast


def lower(g: Graph, n: Node, target) -> Kernel:
    nb, h, w, c = in_type(g, n).shape
    ty, tx = _tables(g, n)
    dt = in_type(g, n).dtype
    return Kernel("resize_bilinear.c.j2",
                  params=dict(batches=nb, out_h=len(ty), out_w=len(tx), depth=c, in_batch=h * w * c,
                              ctype=dt.c, acc="int32_t" if dt == DType.INT8 else "int64_t"),
                  consts=dict(ylo=np.array([t[0] * w * c for t in ty], np.int32),
                              yhi=np.array([t[1] * w * c for t in ty], np.int32),
                              wy=np.array([t[2] for t in ty], np.int32),
                              xlo=np.array([t[0] * c for t in tx], np.int32),
                              xhi=np.array([t[1] * c for t in tx], np.int32),
                              wx=np.array([t[2] for t in tx], np.int32)))


OP = register(OpDef("RESIZE_BILINEAR", infer, reference, lower,
                    [int_nhwc_constant_size, not_both_modes, indices_inside], dtypes="int8, int16",
                    reference_oracle="TFLite Micro (int8, float32); LiteRT BUILTIN_REF (int16)"))
twin(OP, _float_resize.RESIZE_BILINEAR, keep=(not_both_modes,))  # edgecc/ops/_float_resize.py
