"""The Helium 3x3 convolution at stride 1 or 2 over a ring of padded input rows (Cortex-M55).

Owns: when `ec_mve_conv_2d_ring<q>[s2]_s8` (runtime_c/mve/conv_2d_ring.h) applies, its weight
stream (per channel pair: [filter row][16-input chunk][tap][channel of the pair][16] int8, then
the pair's requantization records), its geometry
record and ring width, its scratch and its streaming declaration. The kernel copies each input
row once into a ring of 3 rows padded with the input zero point, then computes blocks of 4
pixels x 2 output channels whose 6 input vectors per filter row and chunk serve all 3 taps (the
ResNet-style 3x3 layers with 16, 32, 64 channels, and their stride-2 ones). The per-channel records are the 2-channel
Helium convolution's (edgecc/lower/mve.py mve_blocks2), handed in by its table entry.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower import dsp
from edgecc.lower import mve_onnx as mo
from edgecc.lower.geom import record
from edgecc.lower.layout import round_up
from edgecc.ops import Kernel, const, in_type
from edgecc.ops._conv_common import conv_window

RingGeom = record("ec_mve_conv_ring_geom",
                  "batches in_h in_w in_c out_h out_w out_c s pad_t pad_l pw pad_val lo hi")

# in_c / 16 by stride: the row segment's immediate offsets (16 * (6 or 9 vectors x in_c / 16))
# end at 508 bytes (VLDRW)
MAX_CHUNKS = {1: 5, 2: 3}
RING_ROWS = 3   # the filter's rows: the ring holds one input row per filter row
STREAMS = (1, 0, 1)  # whole output rows, each pass reads (copies) all its input first


def ring_width(win) -> int:
    """Ring row width in pixels: the last block of 4 pixels' windows, and the input."""
    return max(win.stride_w * (round_up(win.out_w, 4) - 1) + 3, win.pad_l + win.in_w)


def ring_applies(g: Graph, n: Node, target) -> str | None:
    """3x3 filters at stride 1 (in_c a multiple of 16 up to 80) or 2 (up to 48), undilated,
    padding of at most 2."""
    why = dsp.conv_applies(g, n, target)
    if why:
        return why
    win = conv_window(g, n)
    ic = in_type(g, n).shape[3]
    if (win.k_h, win.k_w) != (3, 3):
        return "not a 3x3 filter"
    if (win.dil_h, win.dil_w) != (1, 1):
        return "dilated"
    if win.stride_h != win.stride_w or win.stride_h not in MAX_CHUNKS:
        return "strides other than 1x1 or 2x2"
    top = 16 * MAX_CHUNKS[win.stride_h]
    if ic % 16 or ic > top:
        return f"input channels not a multiple of 16 up to {top} at this stride"
    if not (0 <= win.pad_t <= 2 and 0 <= win.pad_l <= 2):
        return "padding over 2"
    return None


def ring_stream(w: np.ndarray, recs: np.ndarray) -> np.ndarray:
    """[oc, 3, 3, ic] weights and per-channel records [oc (padded to even), 4] -> one int32
    stream: per channel pair its weights [row][chunk][tap][channel of the pair][16] (int8), then
    the pair's 2 records."""
    oc, kh, kw, ic = w.shape
    ocp = round_up(oc, 2)
    wp = np.zeros((ocp, kh, kw, ic), np.int64)
    wp[:oc] = w
    wp = wp.reshape(ocp // 2, 2, kh, kw, ic // 16, 16).transpose(0, 2, 4, 3, 1, 5)
    wb = np.ascontiguousarray(wp).reshape(ocp // 2, -1).astype(np.int8).view(np.int32)
    rb = np.asarray(recs, np.int64).reshape(ocp // 2, 8).astype(np.int32)
    return np.concatenate([wb, rb], axis=1).ravel()


def lower_ring(g: Graph, n: Node, target, records: Callable) -> Kernel:
    """The kernel for node n; `records(rows, folded, fr)` gives per channel [bias, m, N, -e]
    (mve.mve_blocks2, whose `.rq` this reads)."""
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)
    oc, ic = w.shape[0], w.shape[3]
    rows = w.reshape(oc, -1)
    rq = mo.conv_rq(g, n, rows)
    q = ic // 16
    pw = ring_width(win)
    s = win.stride_h
    geom = RingGeom(x.shape[0], win.in_h, win.in_w, ic, win.out_h, win.out_w, oc, s, win.pad_t,
                    win.pad_l, pw, int(x.q.zero_point[0]), rq.fr.lo, rq.fr.hi)
    name = f"ring{q}" + ("s2" if s == 2 else "")
    return Kernel("mve/conv_2d_ring.c.j2",
                  params=dict(geom=geom, fn=mo.entry(f"ec_mve_conv_2d_{name}_s8", n)),
                  consts=dict(w=ring_stream(w, records(rows, rq.folded, rq.fr).rq)),
                  scratch=RING_ROWS * pw * ic, streams=STREAMS,
                  variant=mo.tag("mve-conv-ring", n),
                  reason=f"Helium: 3x3 stride {s} over a ring of {RING_ROWS} zero-point-padded "
                         f"input rows; blocks of 4 pixels x 2 output channels share each input "
                         f"vector between the 3 taps ({q} chunk(s) of 16 inputs a tap)")
