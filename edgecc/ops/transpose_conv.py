"""TRANSPOSE_CONV, int8 activations and weights (per-channel or per-tensor), optional int32 bias;
16x8 (int16 activations, int8 weights, optional int64 bias); float32.

Inputs (output_shape, weights [oc, kh, kw, ic], input NHWC, bias). TFLite Micro scatters every
input pixel into an int32 scratch image: out[oy * 0 + iy * sh - pad_t + fy, ix * sw - pad_l + fx, oc]
+= (x - zp_in) * w, then per output channel acc + bias -> MBQM(per-channel multiplier from
double(s_in) * s_w[c] / s_out) + zp_out, clamped. The padding is TFLite's ComputePaddingHeightWidth
run on the OUTPUT size (total = (ComputeOutSize(out) - 1) * stride + k - out, halved, >= 0), for
VALID as well. edgecc gathers instead of scattering (integer sums do not depend on the order):
each output pixel sums the taps whose source row/column is an integer inside the input, so no
scratch image is needed.
16x8 (TFLite Micro's int16 kernel): zero points 0, the sums in an int64 scratch image, + the int64
bias, then MultiplyByQuantizedMultiplier's int64 overload (edgecc/numerics mbqm64, ec_mbqm64),
clamped to the fused activation's range, int16. edgecc's gather accumulates in int64 as well.
float32 (input, weights, bias and output float32, from an ONNX ConvTranspose that onnxruntime
computes in float): the same gather, acc = bias, then += x * w over filter row, filter column,
input channel; y = the fused activation of acc. Within float tolerance of onnxruntime's (which
sums in another order), not bit-exact.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, conv_out_size, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._conv_common import act_range
from edgecc.ops._conv16 import MAX_SHIFT
from edgecc.ops._float import F32, FloatPath, act_params, activate, twin
from edgecc.numerics.fixed_point import mbqm, mbqm64, quantize_multiplier


def _geometry(g: Graph, n: Node) -> dict:
    _, h, w, _ = out_type(g, n).shape
    oc, kh, kw, ic = in_type(g, n, 1).shape
    sh, sw = int(n.attrs.get("stride_h", 1)), int(n.attrs.get("stride_w", 1))
    pad = int(n.attrs.get("padding", 0))

    def lead(size: int, k: int, s: int) -> int:
        total = (conv_out_size(pad, size, k, s, 1) - 1) * s + k - size
        return max(total, 0) // 2

    return dict(kh=kh, kw=kw, sh=sh, sw=sw, pad_t=lead(h, kh, sh), pad_l=lead(w, kw, sw))


def _is16(g: Graph, n: Node) -> bool:
    return in_type(g, n, 2).dtype == DType.INT16


def int_types(g: Graph, n: Node) -> bool:
    """input and output must both be int8 or both int16 (16x8), the weights int8"""
    x, y = in_type(g, n, 2).dtype, out_type(g, n).dtype
    return x == y and x in (DType.INT8, DType.INT16) and in_type(g, n, 1).dtype == DType.INT8


def int16_zero_points(g: Graph, n: Node) -> bool:
    """int16 input and output must have zero point 0 (TFLite's 16x8 quantization)"""
    return not _is16(g, n) or all(
        t.q is not None and all(int(z) == 0 for z in t.q.zero_point)
        for t in (in_type(g, n, 2), out_type(g, n)))


def int16_shift_in_range(g: Graph, n: Node) -> bool:
    """with int16 activations, input scale x filter scale / output scale must stay below 2**14
    (TFLite's 64-bit requantization shifts right by 15 - shift)"""
    return not _is16(g, n) or bool(np.all(multipliers(g, n)[1] <= MAX_SHIFT))


def constant_weights(g: Graph, n: Node) -> bool:
    """weights must be a constant [out_ch, kh, kw, in_ch] tensor with zero point 0, one scale or one per output channel"""
    v = g.value(n.inputs[1])
    q = v.type.q
    return (v.is_const and len(v.type.shape) == 4 and q is not None
            and all(z == 0 for z in q.zero_point)
            and len(q.scale) in (1, v.type.shape[0])
            and v.type.shape[3] == in_type(g, n, 2).shape[3])


def bias_int_const(g: Graph, n: Node) -> bool:
    """bias, when present, must be a constant tensor with one value per output channel, int32 with int8 activations, int64 with int16"""
    if len(n.inputs) < 4 or n.inputs[3] is None:
        return True
    b = g.value(n.inputs[3])
    want = DType.INT64 if _is16(g, n) else DType.INT32
    return b.is_const and b.type.dtype == want and b.type.numel == in_type(g, n, 1).shape[0]


def nhwc_shapes(g: Graph, n: Node) -> bool:
    """input and output must be 4-D NHWC with equal batch, the output channels the weights' first dim, strides >= 1, padding SAME or VALID"""
    x, y = in_type(g, n, 2).shape, out_type(g, n).shape
    return (len(x) == 4 and len(y) == 4 and x[0] == y[0] and y[3] == in_type(g, n, 1).shape[0]
            and int(n.attrs.get("stride_h", 1)) >= 1 and int(n.attrs.get("stride_w", 1)) >= 1
            and int(n.attrs.get("padding", 0)) in (0, 1))


def per_tensor_activations(g: Graph, n: Node) -> bool:
    """input and output must be quantized per tensor (one scale and zero point each)"""
    return all(t.q is not None and not t.q.per_channel for t in (in_type(g, n, 2), out_type(g, n)))


def supported_activation(g: Graph, n: Node) -> bool:
    """fused activation must be NONE, RELU, RELU_N1_TO_1 or RELU6"""
    return int(n.attrs.get("fused_activation_function", 0)) in (0, 1, 2, 3)


def multipliers(g: Graph, n: Node) -> tuple[np.ndarray, np.ndarray]:
    oc = in_type(g, n, 1).shape[0]
    s_in = float(ew.scale32(in_type(g, n, 2)))
    s_out = float(ew.scale32(out_type(g, n)))
    fs = in_type(g, n, 1).q.scale
    ms, ss = [], []
    for c in range(oc):
        m, s = quantize_multiplier(s_in * float(np.float32(fs[c] if len(fs) > 1 else fs[0])) / s_out)
        ms.append(m)
        ss.append(s)
    return np.array(ms, np.int64), np.array(ss, np.int64)


def _bias(g: Graph, n: Node) -> np.ndarray:
    oc = in_type(g, n, 1).shape[0]
    if len(n.inputs) < 4 or n.inputs[3] is None:
        return np.zeros(oc, np.int64)
    return g.value(n.inputs[3]).data.astype(np.int64).ravel()


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    """The output_shape operand (a constant, possibly computed at import); else the file's."""
    v = g.value(n.inputs[0]) if n.inputs and n.inputs[0] is not None else None
    if v is None or not v.is_const or v.data.size != 4:
        return [None]
    return [TensorType(tuple(int(d) for d in v.data.ravel()), out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    geo = _geometry(g, n)
    x = ins[2].astype(np.int64) - (0 if _is16(g, n) else ew.zp(in_type(g, n, 2)))
    wts = g.value(n.inputs[1]).data.astype(np.int64)
    nb, h, w, oc = out_type(g, n).shape
    _, ih, iw, _ = x.shape
    acc = np.zeros((nb, h, w, oc), np.int64)
    for fy in range(geo["kh"]):
        for fx in range(geo["kw"]):
            contrib = np.einsum("bhwi,oi->bhwo", x, wts[:, fy, fx, :])
            for iy in range(ih):
                oy = iy * geo["sh"] - geo["pad_t"] + fy
                if not 0 <= oy < h:
                    continue
                for ix in range(iw):
                    ox = ix * geo["sw"] - geo["pad_l"] + fx
                    if 0 <= ox < w:
                        acc[:, oy, ox, :] += contrib[:, iy, ix, :]
    m, s = multipliers(g, n)
    lo, hi = act_range(g, n)
    if _is16(g, n):
        return [np.clip(mbqm64(acc + _bias(g, n), m, s), lo, hi).astype(np.int16)]
    out = mbqm(acc + _bias(g, n), m, s) + ew.zp(out_type(g, n))
    return [np.clip(out, lo, hi).astype(np.int8)]


def lower(g: Graph, n: Node, target) -> Kernel:
    geo = _geometry(g, n)
    nb, h, w, oc = out_type(g, n).shape
    _, ih, iw, ic = in_type(g, n, 2).shape
    m, s = multipliers(g, n)
    lo, hi = act_range(g, n)
    if _is16(g, n):
        return Kernel("transpose_conv_s16.c.j2",
                      params=dict(geo, batches=nb, out_h=h, out_w=w, out_c=oc, in_h=ih, in_w=iw,
                                  in_c=ic, act_min=lo, act_max=hi, in_batch=ih * iw * ic),
                      consts=dict(w=g.value(n.inputs[1]).data.astype(np.int8), bias=_bias(g, n),
                                  mult=m.astype(np.int32), shift=s.astype(np.int32)),
                      variant="s16")
    return Kernel("transpose_conv.c.j2",
                  params=dict(geo, batches=nb, out_h=h, out_w=w, out_c=oc, in_h=ih, in_w=iw,
                              in_c=ic, in_off=-ew.zp(in_type(g, n, 2)),
                              out_zp=ew.zp(out_type(g, n)), act_min=lo, act_max=hi,
                              in_batch=ih * iw * ic),
                  consts=dict(w=g.value(n.inputs[1]).data.astype(np.int8),
                              bias=_bias(g, n).astype(np.int32), mult=m.astype(np.int32),
                              shift=s.astype(np.int32)))


def _float_ok(g: Graph, n: Node) -> bool:
    """float32: input, weights, output (and the bias, when present) must be float32, the weights constant [out_ch, kh, kw, in_ch], the shapes NHWC"""
    ts = [in_type(g, n, 2), in_type(g, n, 1), out_type(g, n)]
    if len(n.inputs) > 3 and n.inputs[3] is not None:
        ts.append(in_type(g, n, 3))
    w = g.value(n.inputs[1])
    return (all(t.dtype == DType.FLOAT32 for t in ts) and w.is_const and len(w.type.shape) == 4
            and w.type.shape[3] == in_type(g, n, 2).shape[3] and nhwc_shapes(g, n))


def _float_bias(g: Graph, n: Node) -> np.ndarray:
    oc = in_type(g, n, 1).shape[0]
    if len(n.inputs) < 4 or n.inputs[3] is None:
        return np.zeros(oc, F32)
    return g.value(n.inputs[3]).data.astype(F32).ravel()


def _float_reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    geo = _geometry(g, n)
    x = np.asarray(ins[2], F32)
    wts = g.value(n.inputs[1]).data.astype(F32)
    nb, h, w, oc = out_type(g, n).shape
    _, ih, iw, ic = x.shape
    acc = np.broadcast_to(_float_bias(g, n), (nb, h, w, oc)).copy()
    oy, ox = np.arange(h), np.arange(w)
    for fy in range(geo["kh"]):
        ty = oy + geo["pad_t"] - fy
        ys = (ty >= 0) & (ty % geo["sh"] == 0) & (ty // geo["sh"] < ih)
        for fx in range(geo["kw"]):
            tx = ox + geo["pad_l"] - fx
            xs = (tx >= 0) & (tx % geo["sw"] == 0) & (tx // geo["sw"] < iw)
            if not ys.any() or not xs.any():
                continue
            src = x[:, ty[ys] // geo["sh"]][:, :, tx[xs] // geo["sw"]]
            for c in range(ic):  # one float32 rounding per tap, in the C's order
                t = acc[:, ys][:, :, xs] + src[..., c:c + 1] * wts[:, fy, fx, c]
                acc[np.ix_(range(nb), np.flatnonzero(ys), np.flatnonzero(xs))] = t.astype(F32)
    return [activate(acc, n)]


def _float_lower(g: Graph, n: Node, target) -> Kernel:
    geo = _geometry(g, n)
    nb, h, w, oc = out_type(g, n).shape
    _, ih, iw, ic = in_type(g, n, 2).shape
    return Kernel("transpose_conv_float.c.j2",
                  params=dict(geo, batches=nb, out_h=h, out_w=w, out_c=oc, in_h=ih, in_w=iw,
                              in_c=ic, in_batch=ih * iw * ic, **act_params(n)),
                  consts=dict(w=g.value(n.inputs[1]).data.astype(F32), bias=_float_bias(g, n)))


OP = register(OpDef("TRANSPOSE_CONV", infer, reference, lower,
                    [int_types, per_tensor_activations, constant_weights, bias_int_const,
                     nhwc_shapes, supported_activation, int16_zero_points, int16_shift_in_range],
                    dtypes="int8 x int8 -> int8 (int32 bias), int16 x int8 -> int16 (int64 "
                           "bias); per-channel or per-tensor weights"))
twin(OP, FloatPath(_float_reference, _float_lower, [_float_ok], "float32 -> float32"),
     keep=(supported_activation,))
