"""RESIZE_NEAREST_NEIGHBOR (NHWC, constant output size; align_corners / half_pixel_centers).

Source index per output row and column as TFLite's GetNearestNeighbor computes it in float32:
scale = (in - 1) / (out - 1) with align_corners (and out > 1), else in / out;
v = (i + 0.5 if half_pixel_centers else i) * scale, rounded half away from zero with
align_corners, floored otherwise, capped at in - 1 (and at 0 from below with half pixel centers).
Python turns the two index maps into element-offset tables; the C memcpys one pixel (C elements)
per output pixel. Any element type (raw copy).
"""
from __future__ import annotations

import math

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._copy import const_ints, same_dtype


def nearest_index(i: int, in_size: int, out_size: int, align: bool, half: bool) -> int:
    f32 = np.float32
    if align and out_size > 1:
        scale = f32(in_size - 1) / f32(out_size - 1)
    else:
        scale = f32(in_size) / f32(out_size)
    v = (f32(i) + f32(0.5 if half else 0.0)) * scale
    r = int(math.floor(abs(float(v)) + 0.5)) * (1 if v >= 0 else -1) if align else math.floor(v)
    r = min(r, in_size - 1)
    return max(0, r) if half else r


def _flags(n: Node) -> tuple[bool, bool]:
    return bool(n.attrs.get("align_corners", False)), bool(n.attrs.get("half_pixel_centers", False))


def nhwc_constant_size(g: Graph, n: Node) -> bool:
    """input must be 4-D NHWC and size a constant [new_height, new_width] of positive values"""
    s = const_ints(g, n, 1)
    return len(in_type(g, n).shape) == 4 and s is not None and len(s) == 2 and min(s) >= 1


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    size = const_ints(g, n, 1)
    if size is None or len(size) != 2 or len(in_type(g, n).shape) != 4:
        return [None]  # size not known here: the constraints judge it
    nb, _, _, c = in_type(g, n).shape
    return [TensorType((nb, *size, c), out_type(g, n).dtype)]


def _maps(g: Graph, n: Node) -> tuple[list[int], list[int]]:
    _, h, w, _ = in_type(g, n).shape
    oh, ow = const_ints(g, n, 1)
    align, half = _flags(n)
    return ([nearest_index(y, h, oh, align, half) for y in range(oh)],
            [nearest_index(x, w, ow, align, half) for x in range(ow)])


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    ys, xs = _maps(g, n)
    return [np.ascontiguousarray(ins[0][:, ys][:, :, xs])]


def lower(g: Graph, n: Node, target) -> Kernel:
    nb, h, w, c = in_type(g, n).shape
    oh, ow = const_ints(g, n, 1)
    ys, xs = _maps(g, n)
    dt = in_type(g, n).dtype
    return Kernel("resize_nearest_neighbor.c.j2",
                  params=dict(batches=nb, out_h=oh, out_w=ow, depth=c, in_batch=h * w * c,
                              ctype=dt.c, bytes=c * dt.size),
                  consts=dict(row=np.array([y * w * c for y in ys], np.int32),
                              col=np.array([x * c for x in xs], np.int32)),
                  variant="copy")


OP = register(OpDef("RESIZE_NEAREST_NEIGHBOR", infer, reference, lower,
                    [nhwc_constant_size, same_dtype], dtypes="any (raw copy)"))
