"""AVERAGE_POOL_2D on x86 AVX2 / AVX-512 (runtime_c/x86/pool_2d.h,
templates/x86/pool_2d_avg.c.j2).

Owns: when the kernel applies (int8, windows of at most 256 taps, channels a multiple of 16, a
division by every window's tap count proven exact as a multiply-shift), its geometry record,
and its streaming declaration.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node
from edgecc.lower.climits import c_define
from edgecc.lower.layout import record
from edgecc.ops import Kernel, in_type
from edgecc.ops._conv_common import act_range
from edgecc.ops.pool_2d import pool_geometry

X86PoolGeom = record("ec_x86_pool_geom", "batches in_h in_w c out_h out_w fh fw s_h s_w pad_h "
                     "pad_w lo hi")

# one output pixel's channels buffered on the stack
POOL_MAX_C = c_define("x86/pool_2d.h", "EC_X86_POOL_MAX_C")


POOL_MAX_TAPS = 256  # int16 sums of int8 taps cannot overflow


def window_counts(d: dict) -> set[int]:
    """Every tap count of a clipped pooling window (edgecc/ops/pool_2d.py's pool_geometry)."""
    def spans(out: int, stride: int, pad: int, k: int, size: int) -> set[int]:
        return {min(k, size - (o * stride - pad)) - max(0, pad - o * stride) for o in range(out)}
    return {h * w for h in spans(d["out_h"], d["stride_h"], d["pad_h"], d["fh"], d["in_h"])
            for w in spans(d["out_w"], d["stride_w"], d["pad_w"], d["fw"], d["in_w"])}


def division_exact(count: int) -> bool:
    """ec_x86_pool_2d_avg_s8's ((v * M) mod 2^32) >> 24, M = ceil(2^24 / count), equals v // count for
    every v = |sum| + count // 2 a window of `count` int8 taps can reach."""
    m = -(-(1 << 24) // count)
    v = np.arange(0, 128 * count + count // 2 + 1, dtype=np.int64)
    return bool(np.array_equal(((v * m) % (1 << 32)) >> 24, v // count))


def avgpool_applies(g: Graph, n: Node, target) -> str | None:
    """Why the x86 AVERAGE_POOL_2D kernel cannot run n (None when it can)."""
    d = pool_geometry(g, n)
    if in_type(g, n).dtype != DType.INT8:
        return "int16: portable kernel"
    if d["fh"] * d["fw"] > POOL_MAX_TAPS:
        return f"windows over {POOL_MAX_TAPS} taps: portable kernel"
    if d["depth"] % 16 or d["depth"] > POOL_MAX_C:
        return f"channels not a multiple of 16 or over {POOL_MAX_C}: portable kernel"
    bad = [c for c in sorted(window_counts(d)) if not division_exact(c)]
    if bad:
        return f"division by {bad[0]} not proven exact: portable kernel"
    return None


def lower_avgpool(g: Graph, n: Node, target) -> Kernel:
    """The x86 AVERAGE_POOL_2D kernel (ec_x86_pool_2d_avg_s8)."""
    d = pool_geometry(g, n)
    lo, hi = act_range(g, n)
    geom = X86PoolGeom(d["batches"], d["in_h"], d["in_w"], d["depth"], d["out_h"], d["out_w"], d["fh"],
            d["fw"], d["stride_h"], d["stride_w"], d["pad_h"], d["pad_w"], lo, hi)
    # The kernel finishes output pixel p (raster order) before p+1, reading only p's window
    # before writing p: the portable kernel's order, so the planner may stream it (streams).
    return Kernel("x86/pool_2d_avg.c.j2", params=dict(geom=geom), variant="x86-avgpool",
                  reason="int16 sums of 64/16 channels per pixel, division by a proven "
                         "multiply-shift", streams=(1, 1))
