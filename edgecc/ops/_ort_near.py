"""The x86 numerics' kernels of the Conv and Gemm QDQ groups onnxruntime's x86 defaults run in
float32: the exact int32 accumulator, and onnxruntime's float32 order (numerics/ort_order.py) only
for the rare output whose value lies so near a rounding boundary that the float32 order could
cross it.

Owns: the constants per output channel of the rigorous bound that decides "near"
(edgecc/numerics/ort_near.py), and the portable kernels templates/c/conv_2d_ortf_near.c.j2 /
fully_connected_ortf_near.c.j2. Their numpy reference is onnxruntime's order itself
(edgecc/ops/_ort_float.py `reference`): the kernel must equal it bit for bit, which it does whenever
the bound holds (tests/test_onnx_float.py checks the bound on random and real layers, and that a
kernel without the check misses a real case).

The bound and its proof: edgecc/numerics/ort_near.py. Measured on tfl_pretrainedResnet_quant_qdq
over 3 frames: 1.2% of the float-group conv outputs are recomputed, and the real float32 error
stays under 12% of the bound.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.numerics import ort_order as of
from edgecc.numerics.ort_near import ABS_SLACK, coefficient, roundings
from edgecc.ops._conv_common import act_range, conv_window
from edgecc.ops.quantize import c_float_literal

F32, F64 = np.float32, np.float64


def channel_constants(g: Graph, n: Node, m: int) -> dict[str, np.ndarray]:
    """Per output channel: the int8 weights' max |w|, the estimate's scale and bias in output
    steps (sc, bb), delta's factor of T' (kt) and constant (kb), the weight scale and the float32
    bias onnxruntime adds (DequantizeLinear's values)."""
    from edgecc.ops._ort_float import _bias
    w = const(g, n, 1).astype(np.int64)
    oc = w.shape[0]
    sx = F64(F32(in_type(g, n).q.scale[0]))
    ys = F64(F32(out_type(g, n).q.scale[0]))
    sw = np.broadcast_to(np.asarray(in_type(g, n, 1).q.scale, F32), (oc,)).astype(F64)
    bf = _bias(g, n, oc)
    c = coefficient(m)
    return dict(wmax=np.abs(w.reshape(oc, -1)).max(axis=1).astype(np.int32),
                sc=(sx * sw / ys).astype(F32), bb=(bf.astype(F64) / ys).astype(F32),
                kt=(c * sx * sw / ys).astype(F32) * F32(1 + 2 ** -20),
                kb=(c * np.abs(bf.astype(F64)) / ys + ABS_SLACK).astype(F32) * F32(1 + 2 ** -20),
                sw=sw.astype(F32), bias=bf.astype(F32))


def _common(g: Graph, n: Node) -> dict:
    x, y = in_type(g, n), out_type(g, n)
    lo, hi = act_range(g, n)
    return dict(sx=c_float_literal(F32(x.q.scale[0])), ys=c_float_literal(F32(y.q.scale[0])),
                in_zp=int(x.q.zero_point[0]), out_zp=int(y.q.zero_point[0]), act_min=lo,
                act_max=hi)


def near_geometry(g: Graph, n: Node) -> list[str]:
    """The leading fields of runtime_c/edgecc_ort_near.h's ec_ortn_conv (C initializers)."""
    win, w = conv_window(g, n), const(g, n, 1)
    c = _common(g, n)
    return [str(v) for v in (win.in_h, win.in_w, w.shape[3], win.out_w, win.k_h, win.k_w,
                             win.stride_h, win.stride_w, win.dil_h, win.dil_w, win.pad_t,
                             win.pad_l, int(w[0].size), c["in_zp"])] + [c["sx"], c["ys"]]


def fc_geometry(g: Graph, n: Node) -> list[str]:
    """The leading fields of runtime_c/edgecc_ort_near.h's ec_ortn_fc (C initializers)."""
    w, c = const(g, n, 1), _common(g, n)
    return [str(v) for v in (w.shape[0], w.shape[1], c["in_zp"], c["out_zp"], c["act_min"],
                             c["act_max"])] + [c["sx"], c["ys"]]


# A one-row Gemm group this small keeps the max|w| bound alone (fully_connected_ortf_near_small):
# the norms' flash and the row's square root cost more than its rare recomputation
FC_NORM_MIN_MACS = 4096


def fc_constants(g: Graph, n: Node) -> dict[str, np.ndarray]:
    """channel_constants of a one-row Gemm group, fold = -zx * sum(w) per unit and wnorm, each
    unit's Euclidean norm of w rounded up (the kernels bound T = sum |x - zx| |w| by the
    smaller of max|w| * sum |x - zx| and, Cauchy-Schwarz, wnorm * the row's norm of x - zx;
    a row too deep for the kernels' int32 sum of squares gets FLT_MAX, the first alone)."""
    w = const(g, n, 1).astype(np.int64)
    k = channel_constants(g, n, roundings("FC", int(w.shape[1]), 0))
    zx = int(in_type(g, n).q.zero_point[0])
    norm = np.sqrt((w.astype(F64) ** 2).sum(axis=1)) * (1 + 2.0 ** -20)
    wnorm = np.nextafter(norm.astype(F32), F32(np.inf)).astype(F32)
    if w.shape[1] * 255 ** 2 >= 2 ** 31:
        wnorm[:] = np.finfo(F32).max
    return dict(k, fold=(-zx * w.sum(axis=1)).astype(np.int32), wnorm=wnorm)


def conv_segments_sk(g: Graph, n: Node) -> tuple[list, int]:
    """onnxruntime's thread segments of the conv's output pixels and m (roundings)."""
    win, w = conv_window(g, n), const(g, n, 1)
    ksize = int(w[0].size)
    segs = of.conv_segments(win.out_h * win.out_w, ksize, w.shape[0], n.numerics.threads)
    return segs, roundings("CONV_2D", ksize, max(-(-ksize // sk) for _, _, sk in segs))


def derive_factors(g: Graph, n: Node, m: int) -> list[str]:
    """ec_ortn_conv's ckt, ckb, cslack (C literals) and out_zp: a kernel derives kt = fl(h * ckt)
    from half its estimate's scale h = sc / 2 and kb = fl(fl(|bb| * ckb) + cslack) from its bias
    in output steps bb. sc and bb are float32 roundings of the real sx sw / ys and bias / ys
    (relative error <= u each), every product and sum rounds once more: the factors carry 2^-19
    / 2^-20 on top of coefficient(m), so each derived value stays at or above the compile-time
    kt and kb (tests/test_ort_near.py test_dsp_derived_factors_bound)."""
    c = coefficient(m)
    factors = (2 * c * (1 + 2.0 ** -19), c * (1 + 2.0 ** -20), ABS_SLACK * (1 + 2.0 ** -20))
    return [c_float_literal(np.nextafter(F32(v), F32(np.inf))) for v in factors] + \
        [str(int(out_type(g, n).q.zero_point[0]))]


WHY = ("onnxruntime runs this QDQ group in float32: the exact integer accumulator, and its "
       "float32 order (MLAS) for the outputs a rigorous error bound finds near a rounding "
       "boundary; portable kernel")


def exact_sum_fits(g: Graph, n: Node) -> bool:
    """Whether the kernels' exact bound sum(|x - zx| |w|) fits their uint32 (K * 255 * 128),
    and a conv's filter width their column mask (k_w <= 32)."""
    w = const(g, n, 1)
    return int(w[0].size) * 255 * 128 < 2 ** 32 and (n.op != "CONV_2D" or w.shape[2] <= 32)


def lower(g: Graph, n: Node, target) -> Kernel:
    """The portable kernel of a float-group CONV_2D / FULLY_CONNECTED: this module's in the
    x86 numerics, onnxruntime's float order throughout (edgecc/ops/_ort_float.py) with
    --onnx-numerics x86-float or a filter too large for the exact bound's uint32."""
    from edgecc.ops import _ort_float
    if not n.numerics.near_checked or not exact_sum_fits(g, n):
        return _ort_float.lower(g, n, target)
    w = const(g, n, 1)
    oc = w.shape[0]
    p = _common(g, n)
    if n.op == "CONV_2D":
        win = conv_window(g, n)
        ksize = int(w[0].size)
        segs, m = conv_segments_sk(g, n)
        p.update(in_c=w.shape[3], out_c=oc, k_w=win.k_w, ksize=ksize,
                 npix=win.out_h * win.out_w, near=near_geometry(g, n),
                 factors=derive_factors(g, n, m))
        consts = dict(w=w.reshape(oc, -1).astype(np.int8), **channel_constants(g, n, m),
                      seg_end=np.array([s + c for s, c, _ in segs], np.int32),
                      seg_sk=np.array([k for _, _, k in segs], np.int32))
        return Kernel("conv_2d_ortf_near.c.j2", params=p, consts=consts,
                      variant="portable-ort-near", reason=WHY)
    p.update(units=oc, depth=int(w.shape[1]), near=fc_geometry(g, n))
    consts = dict(w=w.astype(np.int8), **fc_constants(g, n))
    if w.size < FC_NORM_MIN_MACS:  # a small layer: the max|w| bound alone, no norms in flash
        del consts["wnorm"]
        return Kernel("fully_connected_ortf_near_small.c.j2", params=p, consts=consts,
                      variant="portable-ort-near", reason=WHY)
    return Kernel("fully_connected_ortf_near.c.j2", params=p, consts=consts,
                  variant="portable-ort-near", reason=WHY)
