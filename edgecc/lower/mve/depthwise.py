"""The Helium depthwise convolutions (runtime_c/mve/depthwise_conv_2d.h, conv_2d.h).

Owns: when each applies and its constants: a channel's window as one byte gather over int8
channel planes (filters of at most 16 taps; bigger ones take the DSP kernels), its geometry
record and gather offsets; and the one-input-channel layer run as the Helium convolution it
equals (edgecc/lower/mve/conv.py), whose fields stay in registers across all output channels.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower.dsp.depthwise import dw_common, dw_rows
from edgecc.lower.layout import pad_to, record, round_up
from edgecc.lower.mve import onnx as mo
from edgecc.lower.mve.blocks import mve_records
from edgecc.lower.mve.conv import conv_kernel
from edgecc.lower.table import Refused
from edgecc.ops import Kernel, const, in_type
from edgecc.ops._conv_common import conv_window

MveDwGeom = record("ec_mve_dw_geom", "batches in_h in_w in_c out_h out_w out_c dm k_h s_h s_w "
                   "pad_t pad_l wp pad_val lo hi")


def dw_one_channel_applies(g: Graph, n: Node, target) -> str | None:
    """One input channel: the layer IS a CONV_2D with in_c = 1 and out_c = the depth multiplier
    (person_detect's first layer), whose fields of at most 64 bytes stay in registers across
    all output channels (the depthwise gather walks its one plane once per 4 channels)."""
    why = dw_common(g, n, target)
    if why:
        return why
    if in_type(g, n).shape[3] != 1:
        return "more than one input channel"
    return None


def lower_dw_as_conv(g: Graph, n: Node, target) -> Kernel:
    """One input channel, a filter over 8 rows: the convolution kernel on filter [oc, kh, kw, 1]."""
    win = conv_window(g, n)
    rows = dw_rows(g, n)
    rq = mo.conv_rq(g, n, rows)
    return conv_kernel(n, win, in_type(g, n), rows.reshape(-1, win.k_h, win.k_w, 1), rq, False)


def dw_applies(g: Graph, n: Node, target) -> str | None:
    """ec_mve_depthwise_conv_2d_gather_s8 takes filters of at most 16 taps (bigger ones: the DSP kernel)."""
    why = dw_common(g, n, target)
    if why:
        return why
    win = conv_window(g, n)
    if win.k_h * win.k_w > 16:
        return "filter over 16 taps"
    return None


def lower_dw(g: Graph, n: Node, target) -> Kernel:
    """Helium (runtime_c/mve/depthwise_conv_2d.h, ec_mve_depthwise_conv_2d_gather_s8): a channel's window as one byte gather over
    int8 channel planes, or Refused (planes too wide for byte gather offsets)."""
    win = conv_window(g, n)
    x = in_type(g, n)
    w = const(g, n, 1).astype(np.int64)[0]  # [kh, kw, oc]
    kh, kw, oc = w.shape
    ic = x.shape[3]
    rq = mo.conv_rq(g, n, dw_rows(g, n))
    # plane row: input columns at pad_l.., wide enough for the last output's window
    need = max(win.pad_l + win.in_w, (win.out_w - 1) * win.stride_w + (kw - 1) * win.dil_w + 1)
    wp = need
    offs = np.zeros((kh, 16), np.int64)
    for ph in range(kh):
        for fy in range(kh):
            for fx in range(kw):
                offs[ph, fy * kw + fx] = ((ph + fy * win.dil_h) % kh) * wp + fx * win.dil_w
    if win.dil_h != 1 and kh > 1 or offs.max() > 255:
        # (dilated rows would need more ring slots than filter rows)
        raise Refused("dilated rows or planes too wide for byte gather offsets")
    ocp = round_up(oc, 4)
    w16 = np.zeros((ocp, 16), np.int64)
    w16[:oc, :kh * kw] = w.transpose(2, 0, 1).reshape(oc, -1)

    # per 4 channels: [bias x4][m x4][N x4][-e x4], one pointer for the kernel's 4 loads
    rqs = np.concatenate([pad_to(rq.folded, ocp).reshape(-1, 4),
                          mve_records(rq.fr, ocp).reshape(-1, 12)], axis=1)
    geom = MveDwGeom(x.shape[0], win.in_h, win.in_w, ic, win.out_h, win.out_w, oc, oc // ic, kh,
            win.stride_h, win.stride_w, win.pad_t, win.pad_l, wp, int(x.q.zero_point[0]),
            rq.fr.lo, rq.fr.hi)
    return Kernel("mve/depthwise_conv_2d_gather.c.j2",
                  params=dict(geom=geom, fn=mo.entry("ec_mve_depthwise_conv_2d_gather_s8", n)),
                  consts=dict(w16=w16.ravel().astype(np.int8), rq=rqs.ravel().astype(np.int32),
                              offs=offs.ravel().astype(np.uint8)),
                  scratch=ic * kh * wp, variant=mo.tag("mve-dw-gather", n), streams=(1,),
                  reason=f"Helium: {kh}x{kw} window of a channel as one byte gather over int8 "
                         "channel planes, one VMLADAVA per output, 4 channels per requantization")
