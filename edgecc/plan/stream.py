"""Streaming overlap: a window op's output may start below the end of the input it consumes.

Owns: the geometry of the window ops that can stream (CONV_2D, DEPTHWISE_CONV_2D,
AVERAGE_POOL_2D, MAX_POOL_2D), the pass table of a declared kernel, the shift bound `d_max` of a
streaming pair, and the byte saving a pair allows (used by the placement, the order search and the
lower bounds).

Declaration. A kernel may set `Kernel.streams = (rows, cols)`: it produces its output in passes
over blocks of `rows` output rows x `cols` output columns (cols 0 = the whole row), blocks in
raster order, batch by batch; a pass reads only input pixels inside the filter windows of its
own pixels (and its scratch) and writes only its own output pixels. `(rows,)` means whole rows
per pass. `(0, n)`: passes over blocks of n output pixels in flat order (batch, row, column),
a block crossing rows and batches (AArch64 NEON's convolution: 4 pixels a pass; the Cortex-M DSP convolution: `(0, PX, 1)`). A third
element 1 (`reads_first`): each pass reads all of its input before it writes any output (it
stages its results), so a pass may write over its own input. None (the default) means the
order is unknown: the planner never overlaps.

Bound. Put the output at byte `d` relative to the input (both in one arena). At the moment a pass
writes, every input byte still to be read lies at or above S(j) = the lowest input byte any pass
k >= j reads. So the pass may write only below that: d + W(j) <= S(j), W(j) = the end of the
bytes pass j writes (reads_first: S(j + 1), the input's end after the last pass). d_max =
min over passes of S(j) - W(j); every d <= d_max is safe (a d below
-output size is no overlap at all). The lowest byte a pixel reads is bounded from below by its
window's first in-image row and column, `max(0, oy*stride_h - pad_t)` and `max(0, ox*stride_w -
pad_l)`, which is what `d_max` uses; check.py recomputes the bound independently from the exact
taps.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops._conv_common import pool_geometry, window

STREAM_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D")


@dataclass(frozen=True)
class Geometry:
    """Sizes of a window op, in pixels; element sizes in bytes."""

    batches: int
    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    out_c: int
    k_h: int
    k_w: int
    stride_h: int
    stride_w: int
    dil_h: int
    dil_w: int
    pad_t: int
    pad_l: int
    in_esize: int = 1
    out_esize: int = 1

    @property
    def in_px(self) -> int:  # bytes of one input pixel
        return self.in_c * self.in_esize

    @property
    def out_px(self) -> int:
        return self.out_c * self.out_esize

    def with_(self, **kw) -> "Geometry":
        return replace(self, **kw)


def geometry(g: Graph, n: Node) -> Geometry | None:
    """The window geometry of a node, or None when it is not a 4-D window op."""
    if n.op not in STREAM_OPS or not n.inputs or n.inputs[0] is None:
        return None
    x, y = g.type(n.inputs[0]), g.type(n.outputs[0])
    if len(x.shape) != 4 or len(y.shape) != 4:
        return None
    if n.op in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        if len(n.inputs) < 2 or n.inputs[1] is None:
            return None
        w = g.type(n.inputs[1]).shape
        if len(w) != 4:
            return None
        win = window(n, (x.shape[1], x.shape[2]), (w[1], w[2]))
        geo = Geometry(x.shape[0], win.in_h, win.in_w, x.shape[3], win.out_h, win.out_w,
                       y.shape[3], win.k_h, win.k_w, win.stride_h, win.stride_w, win.dil_h,
                       win.dil_w, win.pad_t, win.pad_l, x.dtype.size, y.dtype.size)
    else:
        d = pool_geometry(g, n)
        geo = Geometry(d["batches"], d["in_h"], d["in_w"], d["depth"], d["out_h"], d["out_w"],
                       d["depth"], d["fh"], d["fw"], d["stride_h"], d["stride_w"], 1, 1,
                       d["pad_h"], d["pad_w"], x.dtype.size, y.dtype.size)
    if (geo.out_h, geo.out_w) != (y.shape[1], y.shape[2]):
        return None
    return geo


def normalize(streams) -> tuple[int, int] | None:
    """(rows, cols) of a declaration; cols 0 = whole rows; rows 0 = flat blocks of cols pixels.
    None for no declaration."""
    if not streams:
        return None
    rows = int(streams[0])
    cols = int(streams[1]) if len(streams) > 1 else 0
    if rows < 0 or cols < 0 or rows == cols == 0:
        raise ValueError(f"bad streams declaration {streams!r}")
    return rows, cols


def reads_first(streams) -> bool:
    """Whether a declaration says each pass reads all its input before writing (third element)."""
    return bool(streams) and len(streams) > 2 and bool(streams[2])


def pass_table(geo: Geometry, streams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pass, in execution order: (first output byte written, end of the bytes written, lowest
    input byte read, bounded from below by the first in-image window row and column)."""
    rows, cols = normalize(streams)
    if rows == 0:  # flat blocks: the per-pixel table, cols pixels merged a pass
        w_lo, w_hi, r_lo = pass_table(geo, (1, 1))
        starts = np.arange(0, len(w_lo), cols)
        return w_lo[starts], np.maximum.reduceat(w_hi, starts), np.minimum.reduceat(r_lo, starts)
    cols = cols or geo.out_w
    r0 = np.arange(0, geo.out_h, rows)
    c0 = np.arange(0, geo.out_w, cols)
    b = np.arange(geo.batches)
    bb, rr, cc = (a.ravel() for a in np.meshgrid(b, r0, c0, indexing="ij"))
    r_last = np.minimum(rr + rows, geo.out_h) - 1
    c_last = np.minimum(cc + cols, geo.out_w) - 1
    w_lo = ((bb * geo.out_h + rr) * geo.out_w + cc) * geo.out_px
    w_hi = ((bb * geo.out_h + r_last) * geo.out_w + c_last + 1) * geo.out_px
    iy = np.maximum(rr * geo.stride_h - geo.pad_t, 0)
    ix = np.maximum(cc * geo.stride_w - geo.pad_l, 0)
    r_lo = ((bb * geo.in_h + iy) * geo.in_w + ix) * geo.in_px
    return w_lo, w_hi, r_lo


def d_max(geo: Geometry, streams) -> int:
    """The largest output-minus-input byte shift at which the declared kernel never writes over
    an input byte it still has to read (see the module docstring)."""
    _, w_hi, r_lo = pass_table(geo, streams)
    suffix = np.minimum.accumulate(r_lo[::-1])[::-1]
    if reads_first(streams):
        in_bytes = geo.batches * geo.in_h * geo.in_w * geo.in_px
        suffix = np.minimum(np.append(suffix[1:], in_bytes), in_bytes)
    return int(np.min(suffix - w_hi))


def aligned(d: int, align: int) -> int:
    """The largest multiple of `align` not above d (offsets are aligned, so shifts are too)."""
    return (d // align) * align


def saving(size_in: int, size_out: int, d: int) -> int:
    """Bytes a pair with shift bound d (already aligned) saves over two disjoint buffers: the
    region holding both is max(size_in - d, size_out) when d <= 0, max(size_in, size_out) else."""
    return max(0, min(size_in, size_out + min(0, d)))


def stream_pair(g: Graph, n: Node, streams) -> tuple[str, str, int] | None:
    """(output value, input value, d_max) of a node whose kernel declares streaming."""
    if not normalize(streams):
        return None
    geo = geometry(g, n)
    if geo is None or g.value(n.inputs[0]).is_const:
        return None
    if min(geo.batches, geo.out_h, geo.out_w) < 1:  # no pass at all: nothing to overlap
        return None
    return n.outputs[0], n.inputs[0], d_max(geo, streams)
