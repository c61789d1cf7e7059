"""Emitting one DQ -> op -> Q group (or a QOperator op) as the IR's integer op.

Owns: the translation of ONNX Conv (plain, grouped, depthwise; 1-D and 2-D), Gemm/MatMul, Add,
Mul, AveragePool, GlobalAveragePool, MaxPool and Softmax, with their DequantizeLinear'd inputs and
the QuantizeLinear'd output, into CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, MUL,
AVERAGE_POOL_2D, MEAN, MAX_POOL_2D and SOFTMAX in NHWC. Convolutions, fully connected layers,
ADD and MUL carry the QLINEAR dialect (onnxruntime's float32 requantization, edgecc/numerics/
qlinear.py and qlinear_elt.py) and a `clamp` range from a fused Relu/Clip; SOFTMAX carries it too
where onnxruntime runs QLinearSoftmax (qlinear_softmax.py; ortfuse.py says when), AVERAGE_POOL_2D
for QLinearAveragePool (qlinear_pool.py). The groups onnxruntime runs in float32 (ortfuse.py
float_groups) carry the builder's OrtFloatGroup instead (edgecc/ops/_ort_float.py: its float
order, the bias with its own scale as QParams); an unfused group edgecc does not emulate (grouped
conv, several rows, broadcast Add) keeps the integer arithmetic, which may differ by a step. With
no output quantization (yq None: a float32 model, frontends/onnx/floats.py) the same ops are
emitted in float32.
"""
from __future__ import annotations

import numpy as np

from edgecc.frontends.onnx import integer
from edgecc.frontends.onnx.builder import NHWC, Builder, Rec, inverse
from edgecc.ir import DType, QParams, TensorType
from edgecc.numerics import QLINEAR


def _pads(attrs: dict, in_hw: list[int], k: list[int], s: list[int], d: list[int]) -> list[int]:
    """(begin..., end...) pads per spatial axis, auto_pad resolved as onnxruntime does."""
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    r = len(in_hw)
    if auto in ("", "NOTSET"):
        p = list(attrs.get("pads", [0] * (2 * r)))
        return [int(x) for x in p]
    if auto == "VALID":
        return [0] * (2 * r)
    begin, end = [], []
    for i in range(r):
        out = -(-in_hw[i] // s[i])
        total = max((out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in_hw[i], 0)
        lo = total // 2 if auto == "SAME_UPPER" else total - total // 2
        begin.append(lo)
        end.append(total - lo)
    return begin + end


def _clamp(info: dict, yq: QParams | None) -> tuple[int, int]:
    """int8 clamp of a fused Relu/Clip in the output's quantization (real 0 is exactly zp)."""
    lo, hi = -128, 127
    if yq is None:  # an int32 output (ConvInteger): nothing to clamp
        return lo, hi
    zp, s = yq.zero_point[0], np.float32(yq.scale[0])
    for a, b_ in info.get("clips", []):
        if a is not None:
            lo = max(lo, zp + int(np.rint(np.float32(a) / s)))
        if b_ is not None:
            hi = min(hi, zp + int(np.rint(np.float32(b_) / s)))
    return lo, hi


def _bias(b: Builder, info: dict, xq: QParams, wq: QParams, channels: int,
          own_scale: bool = False) -> str | None:
    """The int32 bias in the accumulator's scale; own_scale: unchanged, with its
    DequantizeLinear's scale as its QParams (a float32 group, edgecc/ops/_ort_float.py)."""
    r: Rec | None = info.get("bias")
    if r is None:
        return None
    data = np.broadcast_to(np.asarray(r.data).ravel(), (channels,)).astype(np.int64)
    want = np.float32(xq.scale[0]) * np.asarray(wq.scale, np.float32)
    have = np.asarray(r.q.scale, np.float32) if r.q else want
    if own_scale:
        s = tuple(float(v) for v in np.broadcast_to(have, (channels,)))
        return b.const(data, DType.INT32, QParams(s, (0,) * channels, 0), label="bias")
    if not np.allclose(have, want, rtol=1e-6, atol=0):  # re-express in the accumulator's scale
        data = np.rint(data * have.astype(np.float64) / want.astype(np.float64)).astype(np.int64)
    if data.min() < -(1 << 31) or data.max() >= (1 << 31):
        raise b.unsupported("bias does not fit int32 in the accumulator's scale")
    return b.const(data, DType.INT32, label="bias")


def _weights(b: Builder, r: Rec) -> tuple[np.ndarray, QParams]:
    if r.kind != "qconst" or r.data.dtype != np.int8:
        raise b.unsupported("the weights must be a constant int8 or uint8 tensor")
    return np.asarray(r.data), r.q


def _is_float(info: dict, yq: QParams | None = None) -> bool:
    """A float32 layer (a float model: plain float32 weights; a weightless op with yq None), not
    an integer one; a weighted integer layer with yq None has an int32 output (ConvInteger /
    MatMulInteger)."""
    w = info.get("w")
    return yq is None if w is None else w.kind == "const"


def _typed(b: Builder, info: dict, yq: QParams | None) -> tuple[np.ndarray, QParams | None, DType]:
    """(weights, their quantization, the IR dtype): float32 ones for a float layer (edgecc's
    float32 kernels), else the int8 ones of a DQ'd constant."""
    if _is_float(info):
        return np.asarray(info["w"].data, np.float32), None, DType.FLOAT32
    return (*_weights(b, info["w"]), DType.INT8)


def _float_bias(b: Builder, info: dict, channels: int) -> str | None:
    r: Rec | None = info.get("bias")
    if r is None:
        return None
    data = np.broadcast_to(np.asarray(r.data, np.float32).ravel(), (channels,))
    return b.const(data, DType.FLOAT32, label="bias")


def _rq_attrs(b: Builder, info: dict, yq: QParams | None, ort_float: bool = False) -> dict:
    """The ONNX requantization attributes of an integer node (none for float32): its dialect
    (Builder.add moves it to the node's field) and clamp; ort_float: onnxruntime's float32
    group (b.float_group, edgecc/ops/_ort_float.py) instead of QLinear."""
    if _is_float(info, yq):
        return {}
    return dict(numerics=b.float_group if ort_float else QLINEAR, clamp=_clamp(info, yq))


def _ort_float(info: dict, yq: QParams | None, wq: QParams | None = None) -> bool:
    """Whether this group is one onnxruntime runs in float32 and edgecc emulates: int8 in and
    out, weights without zero points (ortfuse.py float_groups decides the first part)."""
    return bool(info.get("ort_float")) and yq is not None and not _is_float(info, yq) and \
        (wq is None or not integer.wide(wq, yq))


def _wq(wq: QParams | None, axis: int) -> QParams | None:
    return None if wq is None else QParams(wq.scale, wq.zero_point, axis)


def conv(b: Builder, info: dict, yq: QParams | None) -> Rec:
    """A float32 Conv (float weights and bias), or an integer one; yq None there: an int32
    output (ConvInteger)."""
    x: Rec = info["x"]
    w, wq, dt = _typed(b, info, yq)
    attrs = info["attrs"]
    one_d = w.ndim == 3
    if one_d:  # [M, C/g, k] as a 2-D conv over a height of 1
        w = w[:, :, None, :]
    if w.ndim != 4:
        raise b.unsupported(f"Conv over {w.ndim - 2} spatial dimensions is not supported")
    m, cpg, kh, kw = w.shape
    if one_d:
        x = b.with_perm(x, (0, 2, 1))
        n_, l_, c_ = b.type(x.value).shape
        xv = b.reshape(x.value, (n_, 1, l_, c_))
    else:
        x = b.with_perm(x, NHWC)
        xv = x.value
    n_, h, wd, c = b.type(xv).shape
    groups = int(attrs.get("group", 1))
    s = [int(v) for v in attrs.get("strides", [1, 1])]
    d = [int(v) for v in attrs.get("dilations", [1, 1])]
    if one_d:
        s, d = [1, *s], [1, *d]
    pads = _pads(attrs, [h, wd][1:] if one_d else [h, wd], [kw] if one_d else [kh, kw],
                 s[1:] if one_d else s, d[1:] if one_d else d)
    t, l_, bt, r_ = (0, pads[0], 0, pads[1]) if one_d else (pads[0], pads[1], pads[2], pads[3])
    xq = b.type(xv).q
    ortf = _ort_float(info, yq, wq) and groups == 1 and n_ == 1
    bias = _float_bias(b, info, m) if _is_float(info) else _bias(b, info, xq, wq, m, ortf)
    a = dict(stride_h=s[0], stride_w=s[1], dilation_h_factor=d[0], dilation_w_factor=d[1],
             padding=1, explicit_padding=(t, bt, l_, r_), fused_activation_function=0,
             **_rq_attrs(b, info, yq, ortf))
    if not _is_float(info) and integer.wide(wq, yq):  # weight zero points or int32 out
        y = integer.conv_node(b, xv, w, wq, bias, a, yq)
    elif groups > 1 and groups == c and cpg == 1:  # depthwise: [1, kh, kw, M], scales on axis 3
        wv = b.const(w.transpose(1, 2, 3, 0), dt, _wq(wq, 3), label="filter")
        a["depth_multiplier"] = m // c
        y = b.add_inferred("DEPTHWISE_CONV_2D", [xv, wv, bias], dt, yq, a)
    else:
        wv = b.const(w.transpose(0, 2, 3, 1), dt, _wq(wq, 0), label="filter")
        y = b.add_inferred("CONV_2D", [xv, wv, bias], dt, yq, a)
    if one_d:
        n_, _, ol, oc = b.type(y).shape
        return Rec("act", b.reshape(y, (n_, ol, oc)), perm=(0, 2, 1))
    return Rec("act", y, perm=NHWC)


def fully_connected(b: Builder, info: dict, yq: QParams | None) -> Rec:
    """A float32 Gemm / MatMul, or an integer one (yq None there: MatMulInteger's int32)."""
    w, wq, dt = _typed(b, info, yq)
    if not _is_float(info) and yq is not None and w.ndim == 2 and integer.wide(wq, yq) and \
            (info.get("bias") is not None or info.get("clips") or len(wq.scale) > 1):
        return _fc_as_conv(b, info, w, wq, yq)
    if not _is_float(info) and (integer.wide(wq, yq) or w.ndim > 2):  # frontends/onnx/integer.py
        return integer.matmul_node(b, info, w, wq, yq)
    x = b.plain(info["x"])
    if w.ndim != 2:
        raise b.unsupported("the weights of MatMul/Gemm must be 2-D")
    if not info.get("trans_b"):  # [K, N] -> [N, K]; the scales are on N either way
        w = w.T
    q = _wq(wq, 0)
    units, depth = w.shape
    shape = b.type(x.value).shape
    if shape[-1] != depth:
        raise b.unsupported(f"MatMul/Gemm depth {shape[-1]} does not match the weights' {depth}")
    ortf = _ort_float(info, yq, wq) and int(np.prod(shape)) == depth  # one row
    bias = _float_bias(b, info, units) if _is_float(info) else \
        _bias(b, info, b.type(x.value).q, q, units, ortf)
    wv = b.const(w, dt, q, label="weights")
    a = dict(fused_activation_function=0, keep_num_dims=len(shape) > 2,
             **_rq_attrs(b, info, yq, ortf))
    y = b.add_inferred("FULLY_CONNECTED", [x.value, wv, bias], dt, yq, a)
    return Rec("act", y, perm=tuple(range(len(b.type(y).shape))))


def _fc_as_conv(b: Builder, info: dict, w: np.ndarray, wq: QParams, yq: QParams) -> Rec:
    """A Gemm / MatMul whose weights have zero points (uint8 weights) with a bias, a fused
    Relu/Clip or per-column scales: the 1x1 CONV_INTEGER over its rows (QGemm's arithmetic:
    the same exact accumulator, bias and float32 epilogue as QLinearConv)."""
    x = b.plain(info["x"])
    shape = b.type(x.value).shape
    if not info.get("trans_b"):
        w = w.T
    units, depth = w.shape
    if shape[-1] != depth:
        raise b.unsupported(f"MatMul/Gemm depth {shape[-1]} does not match the weights' {depth}")
    xv = b.reshape(x.value, (1, 1, int(np.prod(shape[:-1])), depth))
    q = _wq(wq, 0)
    bias = _bias(b, info, b.type(xv).q, q, units)
    a = dict(stride_h=1, stride_w=1, dilation_h_factor=1, dilation_w_factor=1, padding=1,
             explicit_padding=(0, 0, 0, 0), fused_activation_function=0,
             **_rq_attrs(b, info, yq))
    y = integer.conv_node(b, xv, w[:, :, None, None], q, bias, a, yq)
    y = b.reshape(y, (*shape[:-1], units))
    return Rec("act", y, perm=tuple(range(len(shape))))


def _broadcast_const(b: Builder, r: Rec, like: Rec) -> str:
    """A constant operand (quantized, or float32 for a float model) laid out like the activation
    `like` (rank-aligned, permuted)."""
    rank = len(like.perm)
    data = np.asarray(r.data)
    data = data.reshape((1,) * (rank - data.ndim) + data.shape).transpose(like.perm)
    if r.kind == "const":
        return b.const(data, DType.FLOAT32, label="operand")
    if r.q.per_channel:
        raise b.unsupported("a per-channel quantized constant operand is not supported yet")
    return b.const(data, DType.INT8, r.q, label="operand")


def binary(b: Builder, info: dict, yq: QParams | None) -> Rec:
    """yq None: float32 operands (activations and float constants)."""
    xs: list[Rec] = info["xs"]
    acts = [r for r in xs if r.kind in ("dq", "act")]
    if not acts:
        raise b.unsupported("both operands are constant")
    perm = acts[0].perm
    vals = []
    for r in xs:
        if r.kind in ("dq", "act"):
            vals.append(b.with_perm(r, perm).value)
        else:
            vals.append(_broadcast_const(b, r, acts[0]))
    ortf = _ort_float(info, yq) and info["ir_op"] == "ADD" and len(acts) == 2 and \
        b.type(vals[0]).shape == b.type(vals[1]).shape
    a = dict(fused_activation_function=0, **_rq_attrs(b, info, yq, ortf))
    y = b.add_inferred(info["ir_op"], vals, DType.INT8 if yq else DType.FLOAT32, yq, a)
    return Rec("act", y, perm=perm)


def pool(b: Builder, info: dict, yq: QParams) -> Rec:
    if info["kind"] in ("global", "gmax"):  # over the spatial axes, in whatever layout x has
        x = info["x"]
        axes = [x.perm.index(a) for a in range(2, len(x.perm))]
        ax = b.const(np.array(axes), DType.INT32)
        op = "MEAN" if info["kind"] == "global" else "REDUCE_MAX"
        a = dict(keep_dims=True, numerics=QLINEAR) if op == "MEAN" and yq else dict(keep_dims=True)
        y = b.add_inferred(op, [x.value, ax], DType.INT8 if yq else DType.FLOAT32, yq, a)
        return Rec("act", y, perm=x.perm)
    x = b.with_perm(info["x"], NHWC)
    attrs = info["attrs"]
    xq = b.type(x.value).q
    n_, h, w, c = b.type(x.value).shape
    if "kernel_shape" not in attrs:  # required; onnx.checker does not insist (fuzz find)
        raise b.unsupported("the pool has no kernel_shape attribute")
    k = [int(v) for v in attrs["kernel_shape"]]
    s = [int(v) for v in attrs.get("strides", [1, 1])]
    if len(k) != 2:
        raise b.unsupported("only 2-D pooling is supported")
    if int(attrs.get("ceil_mode", 0)):
        raise b.unsupported("ceil_mode=1 is not supported")
    pads = _pads(attrs, [h, w], k, s, [1, 1])
    if info["kind"] == "avg" and any(pads) and int(attrs.get("count_include_pad", 0)):
        raise b.unsupported("AveragePool with count_include_pad=1 over padding is not supported")
    a = dict(filter_height=k[0], filter_width=k[1], stride_h=s[0], stride_w=s[1], padding=1,
             explicit_padding=(pads[0], pads[2], pads[1], pads[3]), fused_activation_function=0)
    op = "AVERAGE_POOL_2D" if info["kind"] == "avg" else "MAX_POOL_2D"
    if op == "AVERAGE_POOL_2D" and info.get("qlinear"):  # onnxruntime's: edgecc/ops/_onnx_pool.py
        a.update(numerics=QLINEAR, onnx_zp_offset=info["zp_offset"])
    elif op == "AVERAGE_POOL_2D" and _ort_float(info, yq):  # edgecc/ops/_ort_float.py
        a.update(numerics=b.float_group, clamp=_clamp(info, yq))
    if op == "MAX_POOL_2D" and yq and (xq.scale[0], xq.zero_point[0]) != (yq.scale[0],
                                                                          yq.zero_point[0]):
        raise b.unsupported("MaxPool whose QuantizeLinear changes the quantization")
    y = b.add_inferred(op, [x.value], DType.INT8 if yq else DType.FLOAT32, yq, a)
    return Rec("act", y, perm=NHWC)


def lookup(b: Builder, info: dict, yq: QParams) -> Rec:
    """An elementwise float function between DequantizeLinear and QuantizeLinear (Sigmoid):
    the IR op with ONNX numerics tabulates it over the 256 int8 inputs."""
    x: Rec = info["x"]
    y = b.add_inferred(info["ir_op"], [x.value], DType.INT8, yq, dict(numerics=QLINEAR))
    return Rec("act", y, perm=x.perm)


def softmax(b: Builder, info: dict, yq: QParams) -> Rec:
    x: Rec = info["x"]
    rank = len(x.perm)
    axis = int(info["attrs"].get("axis", -1 if info["opset"] >= 13 else 1)) % rank
    if info["opset"] < 13 and axis != rank - 1:
        raise b.unsupported("Softmax before opset 13 over more than the last axis")
    # the softmax axis must be the IR's last axis
    if x.perm[-1] != axis:
        rest = [a for a in x.perm if a != axis]
        x = b.with_perm(x, (*rest, axis))
    if yq is None:  # a float32 model
        return Rec("act", b.add_inferred("SOFTMAX", [x.value], DType.FLOAT32, None,
                                         dict(beta=1.0)), perm=x.perm)
    if info.get("qlinear"):  # onnxruntime's QLinearSoftmax: edgecc/ops/_onnx_softmax.py
        y = b.add_inferred("SOFTMAX", [x.value], DType.INT8, yq, dict(beta=1.0, numerics=QLINEAR))
        return Rec("act", y, perm=x.perm)
    # onnxruntime's float Softmax (frontends/onnx/ortfuse.py says when): in float32 here too,
    # between its DequantizeLinear and QuantizeLinear; exp may differ in the last bits, so a
    # value may land one step away (verify counts them)
    shape = b.type(x.value).shape
    f = b.add("DEQUANTIZE", [x.value], TensorType(shape, DType.FLOAT32))
    s = b.add("SOFTMAX", [f], TensorType(shape, DType.FLOAT32), dict(beta=1.0))
    y = b.add("QUANTIZE", [s], TensorType(shape, DType.INT8, yq), dict(numerics=QLINEAR))
    return Rec("act", y, perm=x.perm)


def concat(b: Builder, info: dict, yq: QParams) -> Rec:
    """Concat between DequantizeLinears and a QuantizeLinear (or QLinearConcat): each input whose
    quantization is not the output's is requantized first as onnxruntime does (its
    DequantizeLinear -> QuantizeLinear in float32: a table), then the int8 bytes are joined."""
    xs: list[Rec] = info["xs"]
    perm = xs[0].perm
    axis = int(info["axis"]) % len(perm)
    vals = []
    for x in xs:
        x = b.with_perm(x, perm)
        t = b.type(x.value)
        if (t.q.scale, t.q.zero_point) != (yq.scale, yq.zero_point):
            vals.append(b.add("QUANTIZE", [x.value], TensorType(t.shape, DType.INT8, yq),
                              dict(numerics=QLINEAR)))
        else:
            vals.append(x.value)
    y = b.add_inferred("CONCATENATION", vals, DType.INT8, yq,
                       dict(axis=perm.index(axis), fused_activation_function=0))
    return Rec("act", y, perm=perm)


EMIT = {"conv": conv, "fc": fully_connected, "binary": binary, "pool": pool, "softmax": softmax,
        "lookup": lookup, "concat": concat}


def finish(b: Builder, pend: Rec, yq: QParams) -> Rec:
    """The group emitted with output quantization yq, then the reshapes that followed its op
    (info "post": (handler, node, attrs), each applied to the record so far)."""
    r = EMIT[pend.op](b, pend.info, yq)
    for fn, n, a in pend.info.get("post", []):
        b.recs[n.input[0]] = r
        r = fn(b, n, a)[0]
    return r


__all__ = ["finish", "inverse"]
