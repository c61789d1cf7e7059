"""CONV_2D, FULLY_CONNECTED, ADD and AVERAGE_POOL_2D nodes of an `OrtFloatGroup` (edgecc/numerics):
QDQ groups onnxruntime runs in float32 between DequantizeLinear and QuantizeLinear
(frontends/onnx/ortfuse.py `float_groups`), computed in its order (edgecc/numerics/ort_order.py).

Owns: their numpy reference and their portable kernels (templates/c/*_ortf.c.j2). The int8
tensors and quantization are the IR's usual ones; the bias (int32) carries its own scale as its
QParams (DequantizeLinear's). The C is built with -ffp-contract=off and calls fmaf explicitly
where MLAS's SGEMM uses FMA.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, const, in_type, out_type
from edgecc.numerics import ort_order as of
from edgecc.ops._conv_common import act_range, conv_window, pack_weights, pool_geometry
from edgecc.ops.quantize import c_float_literal

F32 = np.float32
BLOCK = 8  # output channels the conv kernel computes together (independent fma chains)
FC_BLOCK = 4  # units the one-row Gemm kernel computes together
FLOAT_WEIGHT_BYTES = 64 * 1024  # larger FC layers keep int8 weights, dequantized on the fly


def _deq(t) -> np.ndarray:
    """float32 DequantizeLinear of every int8 value, indexed by q + 128."""
    return of.dequantize(np.arange(-128, 128), int(t.q.zero_point[0]), F32(t.q.scale[0]))


def _weights(g: Graph, n: Node) -> np.ndarray:
    """float32 weights [units, ...] dequantized with their per-unit scales."""
    w, q = const(g, n, 1), in_type(g, n, 1).q
    s = np.broadcast_to(np.asarray(q.scale, F32), (w.shape[0],))
    return of.dequantize(w, 0, s.reshape((-1,) + (1,) * (w.ndim - 1)))


def _bias(g: Graph, n: Node, units: int) -> np.ndarray:
    if len(n.inputs) < 3 or n.inputs[2] is None:
        return np.zeros(units, F32)
    b, t = const(g, n, 2).ravel(), in_type(g, n, 2)
    return of.dequantize(b, 0, np.broadcast_to(np.asarray(t.q.scale, F32), (units,)))


def _finish(g: Graph, n: Node, v: np.ndarray) -> np.ndarray:
    y = out_type(g, n)
    lo, hi = act_range(g, n)
    return of.quantize(v, y.q.scale[0], int(y.q.zero_point[0]), lo, hi).astype(np.int8)


def _conv_columns(g: Graph, n: Node, x: np.ndarray) -> np.ndarray:
    """The float32 im2col columns [C*kh*kw, oh*ow] of one image (NHWC int8 x[0])."""
    win = conv_window(g, n)
    xf = _deq(in_type(g, n))[np.asarray(x[0]).astype(np.int64) + 128]
    c = xf.shape[2]
    rows = []
    oy = np.arange(win.out_h)[:, None] * win.stride_h - win.pad_t
    ox = np.arange(win.out_w)[None, :] * win.stride_w - win.pad_l
    for ci in range(c):
        for fy in range(win.k_h):
            for fx in range(win.k_w):
                iy, ix = oy + fy * win.dil_h, ox + fx * win.dil_w
                ok = (iy >= 0) & (iy < win.in_h) & (ix >= 0) & (ix < win.in_w)
                v = xf[np.clip(iy, 0, win.in_h - 1), np.clip(ix, 0, win.in_w - 1), ci]
                rows.append(np.where(ok, v, F32(0)).ravel())
    return np.array(rows, F32)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x = np.asarray(ins[0])
    if n.op == "CONV_2D":
        w = _weights(g, n).transpose(0, 3, 1, 2)  # [oc, kh, kw, ic] -> (c, ky, kx) order
        win = conv_window(g, n)
        out = of.gemm_columns(w.reshape(w.shape[0], -1), _conv_columns(g, n, x),
                              _bias(g, n, w.shape[0]), n.numerics.threads)
        v = out.T.reshape(1, win.out_h, win.out_w, w.shape[0])
    elif n.op == "FULLY_CONNECTED":
        w = _weights(g, n)
        a = _deq(in_type(g, n))[x.astype(np.int64) + 128].reshape(-1, w.shape[1])
        v = np.stack([of.gemm_row(r, w.T, _bias(g, n, w.shape[0])) for r in a])
        v = v.reshape(out_type(g, n).shape)
    elif n.op == "ADD":
        a = _deq(in_type(g, n, 0))[x.astype(np.int64) + 128]
        b = _deq(in_type(g, n, 1))[np.asarray(ins[1]).astype(np.int64) + 128]
        v = (a + b).astype(F32)
    else:  # AVERAGE_POOL_2D
        d = pool_geometry(g, n)
        xf = _deq(in_type(g, n))[x.astype(np.int64) + 128]
        v = np.zeros((d["batches"], d["out_h"], d["out_w"], d["depth"]), F32)
        for oy in range(d["out_h"]):
            y0 = oy * d["stride_h"] - d["pad_h"]
            for ox in range(d["out_w"]):
                x0 = ox * d["stride_w"] - d["pad_w"]
                win = xf[:, max(y0, 0):min(y0 + d["fh"], d["in_h"]),
                         max(x0, 0):min(x0 + d["fw"], d["in_w"]), :]
                v[:, oy, ox, :] = of.avg_pool_window(win.transpose(0, 3, 1, 2))
    return [_finish(g, n, v)]


class FcPass(NamedTuple):
    """One pass of fully_connected_ortf.c.j2 over len(lanes) units (a tuple: codegen's parameter
    comment skips it). lanes: (j, [j] if unit j's int8 weights need their scale q_j else []);
    main: (j, 4 weight expressions) per unit; tail2 / tail1: [the per-unit expressions of the
    2- / 1-product tail] when depth % 4 leaves one, else []."""
    wtype: str
    step4: int
    step2: int
    lanes: list
    main: list
    tail2: list
    tail1: list


def _fc_pass(units: int, depth: int, wfloat: bool) -> FcPass:
    """The C of a pass over `units` units whose weights are interleaved [depth][units]."""
    def wv(i: int, j: int) -> str:  # weight i of the block, unit j
        return f"w[{i}]" if wfloat else f"((float)w[{i}] * q{j})"
    rest, js = depth % 4, range(units)
    return FcPass(wtype="float" if wfloat else "int8_t", step4=4 * units, step2=2 * units,
                  lanes=[(j, [] if wfloat else [j]) for j in js],
                  main=[(j, *(wv(k * units + j, j) for k in range(4))) for j in js],
                  tail2=[[(j, wv(j, j), wv(units + j, j)) for j in js]] if rest >= 2 else [],
                  tail1=[[(j, wv(j, j)) for j in js]] if rest % 2 else [])


def lower(g: Graph, n: Node, target) -> Kernel:
    y = out_type(g, n)
    lo, hi = act_range(g, n)
    p = dict(yscale=c_float_literal(F32(y.q.scale[0])), out_zp=int(y.q.zero_point[0]),
             act_min=lo, act_max=hi)
    why = "onnxruntime runs this QDQ group in float32: its order of operations (MLAS)"
    if n.op == "CONV_2D":
        win = conv_window(g, n)
        w = _weights(g, n).transpose(0, 3, 1, 2)
        oc, ic = w.shape[0], w.shape[1]
        ksize = w[0].size
        segs = of.conv_segments(win.out_h * win.out_w, ksize, oc, n.numerics.threads)
        p.update(in_h=win.in_h, in_w=win.in_w, in_c=ic, out_h=win.out_h, out_w=win.out_w,
                 out_c=oc, k_h=win.k_h, k_w=win.k_w, stride_h=win.stride_h,
                 stride_w=win.stride_w, dil_h=win.dil_h, dil_w=win.dil_w, pad_t=win.pad_t,
                 pad_l=win.pad_l, ksize=ksize, npix=win.out_h * win.out_w,
                 ktaps=win.k_h * win.k_w)
        p.update(block=BLOCK, out_main=oc - oc % BLOCK)
        consts = dict(w=pack_weights(w.reshape(oc, -1).astype(F32), 1, BLOCK),
                      bias=_bias(g, n, oc), deq=_deq(in_type(g, n)),
                      seg_end=np.array([s + c for s, c, _ in segs], np.int32),
                      seg_sk=np.array([k for _, _, k in segs], np.int32))
        return Kernel("conv_2d_ortf.c.j2", params=p, consts=consts, scratch=2 * 4 * ksize,
                      variant="portable-ort-float", reason=why)
    if n.op == "FULLY_CONNECTED":
        w = _weights(g, n)
        units, depth = w.shape
        wfloat = w.size * 4 <= FLOAT_WEIGHT_BYTES
        p.update(units=units, depth=depth, block=FC_BLOCK, units_main=units - units % FC_BLOCK,
                 main4=depth - depth % 4, wfloat=wfloat,
                 wide=_fc_pass(FC_BLOCK, depth, wfloat), single=_fc_pass(1, depth, wfloat))
        consts = dict(bias=_bias(g, n, units), deq=_deq(in_type(g, n)))
        if wfloat:
            consts["w"] = pack_weights(w.astype(F32), 1, FC_BLOCK)
        else:  # int8 in flash, float32(w) * scale[u] at run time: the same float32 values
            consts["w"] = pack_weights(const(g, n, 1).astype(np.int8), 1, FC_BLOCK)
            consts["wscale"] = np.broadcast_to(np.asarray(in_type(g, n, 1).q.scale, F32),
                                               (units,)).copy()
        return Kernel("fully_connected_ortf.c.j2", params=p, consts=consts,
                      scratch=4 * w.shape[1], variant="portable-ort-float", reason=why)
    if n.op == "ADD":
        p.update(count=y.numel)
        return Kernel("add_ortf.c.j2", params=p, variant="portable-ort-float", reason=why,
                      consts=dict(deq_a=_deq(in_type(g, n, 0)), deq_b=_deq(in_type(g, n, 1))))
    d = pool_geometry(g, n)
    x = in_type(g, n)  # DequantizeLinear on the fly: float32(q - zp) * scale, as _deq
    p.update(d, ctype="int8_t", in_zp=int(x.q.zero_point[0]),
             xscale=c_float_literal(F32(x.q.scale[0])))
    return Kernel("average_pool_2d_ortf.c.j2", params=p,  # one pixel's results (walk_channels)
                  scratch=d["depth"], variant="portable-ort-float", reason=why)
