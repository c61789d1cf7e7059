"""The Cortex-M DSP fully connected kernels (runtime_c/dsp/fully_connected.h,
fully_connected_8u.h, fully_connected_rd.h; templates/dsp/fully_connected_4u*.c.j2).

Owns: when each applies and its constants: 4 units a pass over the input row sign-extended a
chunk at a time into scratch (offset weight bytes when the accumulators stay below 2^23; the
per-channel form with each unit's own constants), the same where that scratch fits in bytes
dead at the layer's step (`fits`), and the form that reads its int8 input in place (`rd`, no
scratch); the 8-unit step a model takes when its weights pay for its code; the ONNX-numerics
twins (onnxruntime's float32 epilogue). The fast requantization of a layer (fc_rq) the Helium
kernels share is here.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.numerics import fastrq
from edgecc.lower.dsp import common  # (common.dead_bytes: tests set it)
from edgecc.lower.dsp.common import int16_why
from edgecc.lower.dsp.conv import fast_rq
from edgecc.lower.layout import (doubled, interleave_fc8, interleave_rows, offset_bytes,
                                 pack_words, pad_to, record, round_up, wrap32)
from edgecc.lower.table import Refused
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.ops._conv_common import act_range, bias_or_zeros, fc_unit_multipliers
from edgecc.numerics.qlinear import onnx_scales
from edgecc.ops.fully_connected import fc_dims

DspFcGeom = record("ec_dsp_fc_geom", "batches depth dp units up m n e lo hi cp")

# Inputs the DSP FC kernels sign-extend at a time: deep rows (micro_speech's 4000) go in
# chunks so the scratch stays ~1 KiB; the partial sums cost ~15 instructions per chunk and
# 4-unit block (against ~2400 of MACs). A multiple of 16: only the last chunk may hold an odd
# number of 8-input steps.
FC_CHUNK = 512


# The offset-byte FC kernels' 8-unit step (dsp/fully_connected_8u.h) saves ~3 instructions per
# 32 MACs but its unrolled asm is ~1.8 KB of code in each kernel entry that has it (measured with
# arm-none-eabi-gcc: hello_world_int8's in-place entry 3,826 -> ~2,000 B without it). A model takes
# the entries with it (the _8u_ functions) only where its constant bytes are at least
# FC8_MIN_WEIGHT_BYTES, so that code adds at most ~10% to its flash (ad01_int8, kws_ref_model
# keep it; hello_world_int8, trained_lstm_int8, the small ONNX models go without), and only if
# some FC layer has 8 units to run it on. One choice per model: its layers share one entry.
FC8_MIN_WEIGHT_BYTES = 19000


def fc8_why_not(g: Graph) -> str | None:
    """Why the model's offset-byte FC layers take the 4u entries, or None: the 8u ones
    (FC8_MIN_WEIGHT_BYTES, an FC layer of 8 units or more)."""
    fcs = [n for n in g.nodes if n.op == "FULLY_CONNECTED"]
    if not any(fc_dims(g, n)[1] >= 8 for n in fcs if const(g, n, 1) is not None):
        return "no FC layer of 8 units"
    consts = {v for n in g.nodes for v in n.inputs if v is not None and g.value(v).is_const}
    if sum(int(g.value(v).data.nbytes) for v in consts) < FC8_MIN_WEIGHT_BYTES:
        return f"the model's constants under {FC8_MIN_WEIGHT_BYTES} B"
    return None


def fc8_entry(g: Graph, form: str) -> tuple[str, bool, str]:
    """(C function, eight, words for the kernel's reason) of the offset-byte FC kernel `form`
    ("ub", "ub_onnx", "rd", "rd_onnx")."""
    why_not = fc8_why_not(g)
    how = f"; no 8-unit step ({why_not})" if why_not else "; 8 units per step while 8 remain"
    return f"ec_dsp_fully_connected_{'4u' if why_not else '8u'}_{form}_s8", not why_not, how


def fc_chunk(dp: int, up: int) -> tuple[int, int]:
    """(inputs per chunk, scratch bytes) for ec_dsp_fully_connected_4u[_ub]_s8: the extended chunk
    (2 bytes per input), the 8-byte row tail, and with several chunks up int32 partial sums."""
    whole = 2 * dp + 8
    chunked = 2 * FC_CHUNK + 8 + 4 * up
    if dp <= FC_CHUNK or chunked >= whole:
        return dp, whole
    return FC_CHUNK, chunked


def fc_applies(g: Graph, n: Node, target) -> str | None:
    """int8, per-tensor weights (the DSP and Helium fully connected kernels)."""
    if int16_why(g, n):
        return int16_why(g, n)
    if in_type(g, n, 1).q.per_channel:
        return "per-channel weights: the per-channel entry (fc-4u-pc)"
    return None


def fc_pc_applies(g: Graph, n: Node, target) -> str | None:
    """int8, per-channel weights (the DSP and Helium per-channel fully connected kernels)."""
    if int16_why(g, n):
        return int16_why(g, n)
    if not in_type(g, n, 1).q.per_channel:
        return "per-tensor weights: the per-tensor entry (fc-4u)"
    return None


def fc_rq(g: Graph, n: Node, uniform: bool = True) -> fastrq.ConvRequant:
    """The fast requantization of a FULLY_CONNECTED layer (each unit's own multiplier and shift:
    fc_unit_multipliers), or Refused; with `uniform`, one for every unit."""
    units = fc_dims(g, n)[1]
    rq = fast_rq(g, n, const(g, n, 1).astype(np.int64), *fc_unit_multipliers(g, n, units))
    if uniform and not rq.fr.uniform:
        raise Refused("units need different requantization constants: portable kernel")
    return rq


def _fc_padded(g: Graph, n: Node, folded: np.ndarray) -> tuple[int, int, np.ndarray, np.ndarray]:
    """(dp, up, weights, bias) for the DSP FC kernels: depth padded to a multiple of 8, units to
    a multiple of 4, with zero weights and biases."""
    _, units, depth = fc_dims(g, n)
    dp, up = round_up(depth, 8), round_up(units, 4)
    wpad = np.zeros((up, dp), np.int64)
    wpad[:units, :depth] = const(g, n, 1).astype(np.int64)
    return dp, up, wpad, pad_to(folded, up).astype(np.int64)


def lower_fc(g: Graph, n: Node, target) -> Kernel:
    """The input row sign-extended a chunk at a time (fc_chunk); 4 units at a time, their
    weights interleaved 8 inputs at a time."""
    batches, units, depth = fc_dims(g, n)
    w = const(g, n, 1).astype(np.int64)
    in_zp = int(in_type(g, n).q.zero_point[0])
    rq = fc_rq(g, n)
    fr = rq.fr
    dp, up, wpad, bias = _fc_padded(g, n, rq.folded)
    cp, scratch = fc_chunk(dp, up)
    geom = DspFcGeom(batches, depth, dp, units, up, int(fr.m[0]), int(fr.n[0]), int(fr.e[0]), fr.lo, fr.hi,
            cp)
    lo_acc, hi_acc = fastrq.acc_range(w, bias_or_zeros(g, n, units), in_zp)
    if max(-int(lo_acc.min()), int(hi_acc.max())) < (1 << 23):
        # offset weight bytes (dsp/fully_connected.h, ec_dsp_fully_connected_4u_ub_s8): the kernel sums 256 * acc
        wb, b256 = offset_bytes(wpad, bias)
        fn, eight, how = fc8_entry(g, "ub")
        return Kernel("dsp/fully_connected_4u.c.j2", params=dict(geom=geom, fn=fn),
                      consts=dict(w=pack_words(interleave_fc8(wb, eight)), bias=b256),
                      scratch=scratch, variant="dsp-fc-4u-ub",
                      reason="Cortex-M DSP: 4 units per pass over offset weight bytes "
                             "(UXTB16 + 2 SMLAD per 4 MACs; accumulators below 2^23)" + how)
    return Kernel("dsp/fully_connected_4u.c.j2",
                  params=dict(geom=geom, fn="ec_dsp_fully_connected_4u_s8"),
                  consts=dict(w=pack_words(interleave_rows(wpad, 4, 8)),
                              bias=doubled(bias)),  # the kernel doubles the activations
                  scratch=scratch, variant="dsp-fc-4u",
                  reason="Cortex-M DSP: 4 units per pass, input sign-extended once, weights "
                         "interleaved by 8 inputs")


def lower_fc_pc(g: Graph, n: Node, target) -> Kernel:
    """ec_dsp_fc_pc: ec_dsp_fc's passes with each unit's own fast-requantization constants
    (qmn, qe as the DSP convolution takes them); the sums always wait in the scratch's partial
    sums, so the scratch is the chunk, the tail and up int32 however shallow the row."""
    batches, units, depth = fc_dims(g, n)
    rq = fc_rq(g, n, uniform=False)
    fr = rq.fr
    dp, up, wpad, bias = _fc_padded(g, n, rq.folded)
    cp, _ = fc_chunk(dp, up)
    geom = DspFcGeom(batches, depth, dp, units, up, 0, 0, 0, fr.lo, fr.hi, cp)  # m, n, e: per unit
    return Kernel("dsp/fully_connected_4u_pc.c.j2", params=dict(geom=geom),
                  consts=dict(w=pack_words(interleave_rows(wpad, 4, 8)), bias=doubled(bias),
                              qmn=fr.qmn(), qe=fr.e.astype(np.int32)),
                  scratch=2 * cp + 8 + 4 * up, variant="dsp-fc-4u-pc",
                  reason="Cortex-M DSP: 4 units per pass, per-channel weights: each unit's own "
                         "requantization constants")


# ------------------------------------------- the scratch where it is dead; the input in place

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
    """ec_dsp_fully_connected_4u_ub_onnx_s8: lower_fc's offset-byte form (input row
    extended into scratch) with onnxruntime's epilogue."""
    _check_below_2_23(g, n)
    batches, units, depth = fc_dims(g, n)
    folded, q = _onnx_fc(g, n)
    dp, up, wpad, bias = _fc_padded(g, n, folded)
    cp, scratch = fc_chunk(dp, up)
    wb, b256 = offset_bytes(wpad, bias)
    fn, eight, how = fc8_entry(g, "ub_onnx")
    return Kernel("dsp/fully_connected_4u_ub_onnx.c.j2",
                  params=dict(geom=DspFcGeom(batches, depth, dp, units, up, *q, cp), fn=fn),
                  consts=dict(w=pack_words(interleave_fc8(wb, eight)), bias=b256,
                              scale=onnx_scales(g, n, units)),
                  scratch=scratch, variant="dsp-fc-4u-ub-onnx",
                  reason="Cortex-M DSP: 4 units per pass over offset weight bytes, the input "
                         "extended once; onnxruntime's float32 epilogue" + how)


def lower_fc_fits(g: Graph, n: Node, target) -> Kernel:
    """The DSP FC kernels with an extended-input scratch (lower_fc: 30 instructions per 32
    MACs in the offset-byte form), where that scratch fits in bytes dead at this step."""
    k = _fc_ub_onnx(g, n) if n.numerics.qlinear else lower_fc(g, n, target)
    free = common.dead_bytes(g, n, target)
    if k.scratch > free:
        raise Refused(f"{k.variant} needs {k.scratch} B scratch, {free} B are dead at this step")
    return k


def fc_rd_applies(g: Graph, n: Node, target) -> str | None:
    """int8; per-tensor weights (as the DSP fc-4u entry) unless the node has ONNX numerics,
    whose float32 epilogue takes a scale per unit either way."""
    if n.numerics.qlinear:
        return int16_why(g, n)
    return fc_applies(g, n, target)


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
        rq = fc_rq(g, n)
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
    fn, eight, how8 = fc8_entry(g, "rd_onnx" if n.numerics.qlinear else "rd")
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
