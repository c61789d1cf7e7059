"""Cortex-M DSP kernels that need no arena scratch: depthwise read in place, fully connected
reading its int8 input as it goes.

Owns: when these kernels apply and their constants (weights re-laid out, folded biases, the
requantization records), and `TABLE`: the DSP table of edgecc/lower/dsp.py with these entries
placed before the kernels they replace (edgecc/lower/choose.py tries it; dsp.py cannot list
them itself without an import cycle). The C is runtime_c/dsp/{depthwise_conv_2d_direct,fully_connected_rd}.h,
the calls templates/dsp/. The ONNX ADD / MUL entries are edgecc/lower/dsp_add.py (placed here
too).

Why: the planes depthwise and the FC kernels with an extended-input buffer buy their speed with
scratch that lifts the arena over the live-bytes lower bound (kws, str_ww, ad01, hello_world).
These read the activations where they are, so their steps cost only their tensors, and the
depthwise one streams (Kernel.streams = (1, 1)): each output pixel reads only its own window.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.lower import dsp, dsp_add
from edgecc.lower.dsp import conv_rq, dw_rows, _int16
from edgecc.lower.geom import record
from edgecc.numerics import fastrq
from edgecc.lower.climits import c_define
from edgecc.lower.dsp_conv import NO_LINE, line_words
from edgecc.lower.geom import DspFcGeom
from edgecc.lower.layout import (fits_int32, interleave_fc8, offset_bytes, pack_words, pad_to,
                                 round_up, wrap32)
from edgecc.lower.table import Candidate, Refused
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.ops._conv_common import act_range, bias_or_zeros, conv_window
from edgecc.numerics.qlinear import fixed_epilogue, onnx_scales
from edgecc.ops.fully_connected import fc_dims

DWD_MAX_TAPS = c_define("dsp/depthwise_conv_2d_direct.h", "EC_DSP_DWD_MAX_TAPS")
DW1_MAX_WIN = c_define("dsp/depthwise_conv_2d_direct.h", "EC_DSP_DW1_MAX_WIN")
DspDw1Geom = record("ec_dsp_dw1_geom", "batches in_h in_w out_h out_w c k_h k_w groups s_h s_w "
                    "pad_t pad_l pad_val lo hi")
DspDwDirectGeom = record("ec_dsp_dw_direct_geom",
                         "batches in_h in_w c out_h out_w k_h k_w s_h s_w pad_t pad_l pad_val lo hi")


# --------------------------------------------------------------------- DEPTHWISE_CONV_2D

# Output rows at most this wide take the in-place kernel even where the planes kernel fits: its
# per-row and per-channel overheads dominate there (kws 5 wide: 274K against 321K instructions
# a layer; person_detect 6 wide: 147K against 177K), while wide rows favour it (48 wide: 504K
# against 1.12M).
DWD_NARROW = 8


def dw_direct_applies(g: Graph, n: Node, target) -> str | None:
    """int8, undilated, depth multiplier 1, channels a multiple of 4 (one SXTB16 pair each), at
    most EC_DSP_DWD_MAX_TAPS taps; and the planes kernel worse here: narrow rows (DWD_NARROW),
    one-column filters (its tap pairs would be half zero), over 8 rows (it has no slots for
    them) or its scratch not dead at this step (dead_bytes); and ONNX numerics always: both
    kernels have onnxruntime's epilogue, but the planes kernel streams by rows only, and
    dead_bytes, measured without streaming, misses the arena the in-place kernel's per-pixel
    streaming saves (ox_se_mbv2_qdq_s8 on cortex-m4: 74368 B, 91296 B with the planes kernel;
    the TFLite converter twin cv_se_mbv2 pays those 91296 B). The planes kernel takes the
    ONNX layers the in-place one cannot (channels not a multiple of 4, depth multipliers)."""
    if _int16(g, n):
        return _int16(g, n)
    win = conv_window(g, n)
    if win.dil_h != 1 or win.dil_w != 1:
        return "dilated depthwise: portable kernel"
    ic = in_type(g, n).shape[3]
    if const(g, n, 1).shape[3] != ic:
        return "depth multiplier above 1: the planes kernel"
    if ic % 4:
        return "channels not a multiple of 4: the planes kernel"
    if win.k_h * win.k_w > DWD_MAX_TAPS:
        return f"over {DWD_MAX_TAPS} taps: the planes kernel"
    if n.numerics.qlinear or win.out_w <= DWD_NARROW or win.k_w == 1 or dsp.dw_common(g, n, target):
        return None
    try:
        planes = dsp.lower_dw(g, n, target).scratch
    except Refused:
        return None
    if planes > dead_bytes(g, n, target):
        return None
    return f"rows over {DWD_NARROW} wide whose planes fit in dead bytes: the planes kernel"


def _pair_words(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """int16 pairs (a in the bottom half, SMLAD's / SMLABB's first) as int32 words."""
    return ((a & 0xFFFF) | ((b & 0xFFFF) << 16)).astype(np.uint32).view(np.int32)


def _scaled(g: Graph, n: Node, rows: np.ndarray, lines: bool = False
            ) -> tuple[int, np.ndarray, np.ndarray, int, int, bool]:
    """(L, bias * 2^L, per-channel records, lo, hi, on lines) of filter rows [c, taps] whose
    int16 weights the kernel takes scaled by 2^L, or Refused. Records: TFLite's fast
    requantization (m, N, e); ONNX numerics (L = 0), per quad of channels (the in-place
    kernel's): the 4 float32 scales' bits, the output zero point 4 times, and 4 flags, 1 where
    |acc * scale| is proven below 2^15 (the kernel without an FPU then skips ec_onnx_rq's float
    clamp); or, with `lines` and any channel's integer line proven (edgecc/numerics/qlinear.py
    fixed_epilogue; the line kernel), the 4 multipliers, the 4 constants' low words and their
    high words where all 4 of the quad have lines (else its float32 record, NO_LINE the first
    flag)."""
    if n.numerics.qlinear:  # per channel quad: 4 scales, the zero point 4 times, 4 flags
        folded, epi = dsp.onnx_dw_epilogue(g, n, rows)
        lo, hi = act_range(g, n)
        recs = epi.reshape(-1, 4, 3).transpose(0, 2, 1)  # [quad, word, channel]
        ok = np.zeros(1, bool)
        if lines:
            bias, in_zp = bias_or_zeros(g, n, rows.shape[0]), int(in_type(g, n).q.zero_point[0])
            m, r, ok = fixed_epilogue(onnx_scales(g, n, rows.shape[0]),
                                      *fastrq.acc_range(rows, bias, in_zp),
                                      int(out_type(g, n).q.zero_point[0]), lo, hi)
        if ok.any():  # the line kernel; a quad with a channel without a line stays float32
            line = line_words(m, r).reshape(-1, 4, 3).transpose(0, 2, 1)
            quad = ok.reshape(-1, 4).all(axis=1)
            recs[:, 2, :] = [NO_LINE, 0, 0, 0]  # no flags: the float clamp kept
            recs = np.where(quad[:, None, None], line, recs)
        return 0, folded.astype(np.int32), recs.astype(np.int32).ravel(), lo, hi, bool(ok.any())
    rq = conv_rq(g, n, rows)
    L = rq.fr.L
    if L > 8:  # the scaled weights must stay int16
        raise Refused("requantization left shift above 8: portable kernel")
    bias = rq.folded.astype(np.int64) << L
    if not fits_int32(bias):
        raise Refused("scaled bias overflows int32: portable kernel")
    recs = np.stack([rq.fr.m, rq.fr.n, rq.fr.e], axis=1).astype(np.int32).ravel()
    return L, bias.astype(np.int32), recs, rq.fr.lo, rq.fr.hi, False


class _Geom(NamedTuple):
    geom: tuple   # the kernel's C struct record
    onnx: bool    # onnxruntime's epilogue
    lines: bool = False  # ... as proven integer lines


def _streaming_dw(kind: str, geom: _Geom, words: np.ndarray, bias: np.ndarray, recs: np.ndarray,
                  how: str, **more: np.ndarray) -> Kernel:
    """The scratch-free depthwise kernel `kind` (templates/dsp/depthwise_conv_2d_<kind>.c.j2):
    output pixels in raster order, each reading only its own window, so it streams (1, 1)."""
    onnx = "_line" if geom.lines else "_onnx" if geom.onnx else ""
    return Kernel(f"dsp/depthwise_conv_2d_{kind}.c.j2",
                  params=dict(geom=geom.geom, fn=f"ec_dsp_depthwise_conv_2d_{kind}{onnx}_s8"),
                  consts=dict(w=words.ravel(), bias=bias, rq=recs, **more),
                  variant=f"dsp-dw-{kind}{onnx.replace('_', '-')}", streams=(1, 1),
                  reason=f"Cortex-M DSP: {how} (no scratch)"
                         + ("; onnxruntime's epilogue as integer lines proven equal to it"
                            if geom.lines else "; onnxruntime's float32 epilogue" if onnx
                            else ""))


def lower_dw_direct(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_depthwise_conv_2d_direct_s8: weights as int16 pairs (w0, w2), (w1, w3) of each
    channel quad and tap, scaled by 2^L so the accumulator is what the fast requantization
    takes; bias * 2^L; (m, N, e) per channel."""
    win = conv_window(g, n)
    x = in_type(g, n)
    rows = dw_rows(g, n)  # [c, kh*kw]
    c, taps = rows.shape
    L, bias, recs, lo, hi, lines = _scaled(g, n, rows, lines=True)
    w = (rows << L).reshape(c // 4, 4, taps).transpose(0, 2, 1)  # [quad, tap, 4]
    words = _pair_words(w[:, :, [0, 1]], w[:, :, [2, 3]])  # [quad, tap, 2]
    geom = DspDwDirectGeom(x.shape[0], win.in_h, win.in_w, c, win.out_h, win.out_w, win.k_h,
                           win.k_w, win.stride_h, win.stride_w, win.pad_t, win.pad_l,
                           int(x.q.zero_point[0]), lo, hi)
    return _streaming_dw("direct", _Geom(geom, n.numerics.qlinear, lines), words, bias, recs,
                         f"{win.k_h}x{win.k_w} read in place, 4 channels per SXTB16 pair, "
                         "SMLABB/SMLATT per tap",
                         zrow=np.full(c, x.q.zero_point[0], np.int8))  # padding taps read it


def dw_one_applies(g: Graph, n: Node, target) -> str | None:
    """int8, undilated, one input channel, output channels a multiple of 4, a window padded to
    whole words of at most EC_DSP_DW1_MAX_WIN bytes."""
    if _int16(g, n):
        return _int16(g, n)
    win = conv_window(g, n)
    if win.dil_h != 1 or win.dil_w != 1:
        return "dilated depthwise: portable kernel"
    if in_type(g, n).shape[3] != 1 or const(g, n, 1).shape[3] % 4:
        return "not one input channel with output channels a multiple of 4"
    if win.k_h * round_up(win.k_w, 4) > DW1_MAX_WIN:
        return f"window over {DW1_MAX_WIN} bytes: the convolution form"
    return None


def lower_dw_one(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_depthwise_conv_2d_one_s8: weights [quad][row][4-tap group][channel][2 words],
    taps past k_w zero, scaled by 2^L."""
    win = conv_window(g, n)
    x = in_type(g, n)
    rows = dw_rows(g, n)  # [c, kh*kw]
    c = rows.shape[0]
    groups = -(-win.k_w // 4)
    L, bias, recs, lo, hi, _ = _scaled(g, n, rows)
    w = np.zeros((c, win.k_h, 4 * groups), np.int64)
    w[:, :, :win.k_w] = (rows << L).reshape(c, win.k_h, win.k_w)
    w = w.reshape(c // 4, 4, win.k_h, groups, 4).transpose(0, 2, 3, 1, 4)  # [q, fy, k, ch, tap]
    words = _pair_words(w[..., [0, 1]], w[..., [2, 3]])  # [q, fy, k, ch, 2]
    geom = DspDw1Geom(x.shape[0], win.in_h, win.in_w, win.out_h, win.out_w, c, win.k_h, win.k_w,
                      groups, win.stride_h, win.stride_w, win.pad_t, win.pad_l,
                      int(x.q.zero_point[0]), lo, hi)
    return _streaming_dw("one", _Geom(geom, n.numerics.qlinear), words, bias, recs,
                         f"one input channel, {win.k_h}x{win.k_w}: 4 taps per SXTB16 pair, "
                         "4 channels per pass")


# ----------------------------------------------------------------------- FULLY_CONNECTED

def dead_bytes(g: Graph, n: Node, target) -> int:
    """Bytes the activations' own peak leaves dead at n's step: the target's budget under
    `--scratch fit`, else the same measure (edgecc.compiler.scratch_budget) taken here, so
    the default build too gives a kernel scratch only where it cannot grow the arena."""
    if getattr(target, "scratch_budget", None) is not None:
        return int(target.scratch_budget)
    from edgecc.ops import all_ops
    from edgecc.plan.liveness import buffers_for
    bufs = buffers_for(g, {}, {k for k, op in all_ops().items() if op.alias})
    i = next(k for k, m in enumerate(g.nodes) if m is n)
    live = [sum(b.size for b in bufs if b.first <= s <= b.last) for s in range(len(g.nodes))]
    return max(live, default=0) - live[i]


def _onnx_fc(g: Graph, n: Node) -> tuple[np.ndarray, tuple]:
    """(folded bias, (m, n = output zero point, e, lo, hi)) of an ONNX-numerics FC: the kernels'
    sums are acc itself, requantized by onnxruntime's float32 epilogue (scale per unit); e = 1
    when every |acc * scale| is proven below 2^15, so the kernel may skip ec_onnx_rq's clamp."""
    w = const(g, n, 1).astype(np.int64)
    in_zp = int(in_type(g, n).q.zero_point[0])
    folded = bias_or_zeros(g, n, w.shape[0]) - in_zp * w.sum(axis=1)
    lo, hi = fastrq.acc_range(w, bias_or_zeros(g, n, w.shape[0]), in_zp)
    top = np.maximum(-lo, hi).astype(np.float64) * onnx_scales(g, n, w.shape[0])
    inside = int(bool((top * (1 + 1e-6) < 32767).all()))  # e = 1: no float clamp needed
    return folded, (0, int(out_type(g, n).q.zero_point[0]), inside, *act_range(g, n))


def _check_below_2_23(g: Graph, n: Node) -> None:
    """Refused unless every accumulator of n stays below 2^23 (the offset-byte kernels sum
    256 * acc in int32)."""
    w = const(g, n, 1).astype(np.int64)
    lo_acc, hi_acc = fastrq.acc_range(w, bias_or_zeros(g, n, w.shape[0]),
                                      int(in_type(g, n).q.zero_point[0]))
    if max(-int(lo_acc.min()), int(hi_acc.max())) >= (1 << 23):
        raise Refused("accumulators reach 2^23: the kernel's 256 * acc would overflow")


def _fc_ub_onnx(g: Graph, n: Node) -> Kernel:
    """ec_dsp_fully_connected_4u_ub_onnx_s8: dsp.lower_fc's offset-byte form (input row
    extended into scratch) with onnxruntime's epilogue."""
    _check_below_2_23(g, n)
    batches, units, depth = fc_dims(g, n)
    folded, q = _onnx_fc(g, n)
    dp, up, wpad, bias = dsp._fc_padded(g, n, folded)
    cp, scratch = dsp.fc_chunk(dp, up)
    wb, b256 = offset_bytes(wpad, bias)
    fn, eight, how = dsp.fc8_entry(g, "ub_onnx")
    return Kernel("dsp/fully_connected_4u_ub_onnx.c.j2",
                  params=dict(geom=DspFcGeom(batches, depth, dp, units, up, *q, cp), fn=fn),
                  consts=dict(w=pack_words(interleave_fc8(wb, eight)), bias=b256,
                              scale=onnx_scales(g, n, units)),
                  scratch=scratch, variant="dsp-fc-4u-ub-onnx",
                  reason="Cortex-M DSP: 4 units per pass over offset weight bytes, the input "
                         "extended once; onnxruntime's float32 epilogue" + how)


def lower_fc_fits(g: Graph, n: Node, target) -> Kernel:
    """The DSP FC kernels with an extended-input scratch (dsp.lower_fc: 30 instructions per 32
    MACs in the offset-byte form), where that scratch fits in bytes dead at this step."""
    k = _fc_ub_onnx(g, n) if n.numerics.qlinear else dsp.lower_fc(g, n, target)
    free = dead_bytes(g, n, target)
    if k.scratch > free:
        raise Refused(f"{k.variant} needs {k.scratch} B scratch, {free} B are dead at this step")
    return k


def fc_rd_applies(g: Graph, n: Node, target) -> str | None:
    """int8; per-tensor weights (as the DSP fc-4u entry) unless the node has ONNX numerics,
    whose float32 epilogue takes a scale per unit either way."""
    if n.numerics.qlinear:
        return _int16(g, n)
    return dsp.fc_applies(g, n, target)


def lower_fc_rd(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_fully_connected_4u_rd_s8: the offset-byte weights of the first dp = depth rounded
    down to 8 inputs, interleaved 4 units x 8 inputs; bias256 = 256 * bias minus the weight
    terms of the on-the-fly input pairs (127 * even-input weights + 32512 per 4 inputs); the
    last depth - dp inputs' plain weights. Refused unless every accumulator stays below 2^23.
    ONNX numerics: the same sums, onnxruntime's epilogue (..._rd_onnx_s8, float32 scales)."""
    batches, units, depth = fc_dims(g, n)
    w = const(g, n, 1).astype(np.int64)
    _check_below_2_23(g, n)
    if n.numerics.qlinear:
        folded, geom_q = _onnx_fc(g, n)
    else:
        rq = dsp.fc_rq(g, n)
        folded = rq.folded
        geom_q = (int(rq.fr.m[0]), int(rq.fr.n[0]), int(rq.fr.e[0]), rq.fr.lo, rq.fr.hi)
    dp, up = depth // 8 * 8, round_up(units, 4)
    wpad = np.zeros((up, depth), np.int64)
    wpad[:units] = w
    head = wpad[:, :dp]
    stored = head.copy()
    stored[:, 0::2] += 128
    stored = np.where(stored > 127, stored - 256, stored).astype(np.int8)
    b256 = 256 * pad_to(folded, up) - 127 * head[:, 0::2].sum(axis=1) - 32512 * (dp // 4)
    tail = wpad[:, dp:].astype(np.int8).ravel() if depth > dp else np.zeros(4, np.int8)
    geom = DspFcGeom(batches, depth, dp, units, up, *geom_q, 0)
    fn, eight, how8 = dsp.fc8_entry(g, "rd_onnx" if n.numerics.qlinear else "rd")
    words = interleave_fc8(stored, eight=eight and depth == dp)  # the C's 8-unit blocks: no tail
    consts = dict(w=pack_words(words) if dp else np.zeros(1, np.int32),
                  bias=wrap32(b256).astype(np.int32), wt=tail)
    how = ("4 units per pass over offset weight bytes, the input read in place (SXTB16 / "
           "REV16 pairs per word; no scratch)"
           + (how8 if not eight or depth == dp else "; 4-unit blocks only (a depth tail)"))
    if n.numerics.qlinear:
        consts["scale"] = onnx_scales(g, n, units)
        return Kernel("dsp/fully_connected_4u_rd_onnx.c.j2", params=dict(geom=geom, fn=fn),
                      consts=consts, variant="dsp-fc-4u-rd-onnx",
                      reason=f"Cortex-M DSP: {how}; onnxruntime's float32 epilogue")
    return Kernel("dsp/fully_connected_4u_rd.c.j2", params=dict(geom=geom, fn=fn), consts=consts,
                  variant="dsp-fc-4u-rd", reason=f"Cortex-M DSP: {how}")


# --------------------------------------------------------------------------------- table

def _before(table: list[Candidate], op: str, variant: str, new: list[Candidate]) -> list[Candidate]:
    """table with `new` inserted before the entry (op, variant)."""
    i = next(k for k, c in enumerate(table) if c.op == op and c.variant == variant)
    return table[:i] + new + table[i:]


TABLE: list[Candidate] = _before(dsp.TABLE, "DEPTHWISE_CONV_2D", "dw-as-conv", [
    Candidate("DEPTHWISE_CONV_2D", dsp.ISA, "dw-one", dw_one_applies, lower_dw_one),
])
TABLE = _before(TABLE, "DEPTHWISE_CONV_2D", "dw", [
    Candidate("DEPTHWISE_CONV_2D", dsp.ISA, "dw-direct", dw_direct_applies, lower_dw_direct,
              onnx=True),
])
TABLE = _before(TABLE, "ADD", "add-lut", dsp_add.ENTRIES)
TABLE = _before(TABLE, "FULLY_CONNECTED", "fc-4u", [
    Candidate("FULLY_CONNECTED", dsp.ISA, "fc-4u-fits", fc_rd_applies, lower_fc_fits, onnx=True),
    Candidate("FULLY_CONNECTED", dsp.ISA, "fc-4u-rd", fc_rd_applies, lower_fc_rd, onnx=True),
])
