"""Float32 ONNX graphs (no quantization) onto edgecc's float32 kernels (edgecc/ops/_float*.py).

Owns: recognising a float32 activation and the handlers of the compute ops on one: Conv
(plain, grouped, depthwise), Gemm / MatMul, Add / Mul with an activation or a float constant,
Relu and Clip(0, 6), AveragePool / GlobalAveragePool and Softmax. They reuse emit.py's layout
work (NHWC, folded Transposes) with no quantization (yq None); MaxPool, Reshape, Squeeze and the
other data movement take float activations as they are. Results are within docs/design.md's float32
tolerance of onnxruntime (1e-5 relative), not bit-exact: the summation orders differ.
"""
from __future__ import annotations

import numpy as np

from edgecc.frontends.onnx import emit
from edgecc.frontends.onnx.builder import NHWC, Builder, Rec
from edgecc.ir import DType, TensorType
from edgecc.numerics import QLINEAR
from edgecc.ops import conv_pad


def is_float(b: Builder, r: Rec) -> bool:
    return r.kind == "act" and b.type(r.value).dtype == DType.FLOAT32


def _fconst(b: Builder, name: str, what: str) -> Rec | None:
    if not name:
        return None
    r = b.rec(name)
    if r.kind != "const" or np.asarray(r.data).dtype != np.float32:
        raise b.unsupported(f"float {what} must be a float32 constant")
    return r


def _weighted(b: Builder, n, info: dict, bias_at: int | None) -> dict:
    info["w"] = _fconst(b, n.input[1], "weights")
    if bias_at is not None and len(n.input) > bias_at and n.input[bias_at]:
        info["bias"] = _fconst(b, n.input[bias_at], "bias")
    return info


def conv(b: Builder, n, a, x: Rec) -> Rec:
    return emit.conv(b, _weighted(b, n, dict(x=x, attrs=a), 2), None)


def matmul(b: Builder, n, a, x: Rec) -> Rec:
    info = dict(x=x, trans_b=bool(a.get("transB", 0)))
    return emit.fully_connected(b, _weighted(b, n, info, 2 if n.op_type == "Gemm" else None),
                                None)


def binary(b: Builder, n, ins: list[Rec]) -> Rec:
    for r in ins:
        if not (is_float(b, r) or (r.kind == "const" and r.data.dtype == np.float32)):
            raise b.unsupported(f"{n.op_type} of a float32 and a {r.kind} value")
    return emit.binary(b, dict(xs=ins, ir_op=n.op_type.upper()), None)


def relu_clip(b: Builder, n, lo: float | None, hi: float | None, x: Rec) -> Rec:
    op = {(0.0, None): "RELU", (0.0, 6.0): "RELU6"}.get((lo, hi))
    if op is None:
        raise b.unsupported(f"float {n.op_type} other than Relu or Clip(0, 6)")
    t = b.type(x.value)
    return Rec("act", b.add(op, [x.value], TensorType(t.shape, DType.FLOAT32)), perm=x.perm)


def pool(b: Builder, a, kind: str, x: Rec) -> Rec:
    return emit.pool(b, dict(x=x, attrs=a, kind=kind), None)


def softmax(b: Builder, a, x: Rec) -> Rec:
    return emit.softmax(b, dict(x=x, attrs=a, opset=b.opset), None)


# ---- ops onnxruntime computes in float inside quantized models -------------------------------

def as_float(b: Builder, r: Rec) -> Rec:
    """A float32 activation, or the DEQUANTIZE of a DequantizeLinear'd one (float32, as
    onnxruntime computes it)."""
    if is_float(b, r):
        return r
    if r.kind != "dq":
        raise b.unsupported(f"a float op of a {r.kind} value")
    t = b.type(r.value)
    return Rec("act", b.add("DEQUANTIZE", [r.value], TensorType(t.shape, DType.FLOAT32)),
               perm=r.perm)


def dequantized(b: Builder, name: str, what: str) -> np.ndarray | None:
    """A float32 constant, or DequantizeLinear of a constant evaluated in float32."""
    if not name:
        return None
    r = b.rec(name)
    if r.kind == "const" and np.asarray(r.data).dtype == np.float32:
        return np.asarray(r.data)
    if r.kind != "qconst":
        raise b.unsupported(f"the {what} must be constant")
    return dequantized_rec(r)


def dequantized_rec(r: Rec) -> np.ndarray:
    """A DequantizeLinear'd constant ("qconst") evaluated in float32."""
    d = np.asarray(r.data)
    shape = [1] * d.ndim
    if len(r.q.scale) > 1:
        shape[r.q.axis] = len(r.q.scale)
    s = np.asarray(r.q.scale, np.float32).reshape(shape)
    z = np.asarray(r.q.zero_point, np.int64).reshape(shape)
    return ((d.astype(np.int64) - z).astype(np.float32) * s).astype(np.float32)


def conv_transpose(b: Builder, n, a) -> list[Rec]:
    """ConvTranspose in float32 (onnxruntime has no integer kernel for it): TRANSPOSE_CONV with
    TFLite's SAME or VALID padding where that is the node's padding."""
    x = b.with_perm(as_float(b, b.rec(n.input[0])), NHWC)
    w = dequantized(b, n.input[1], "weights")  # [C_in, C_out, kh, kw]
    bias = dequantized(b, n.input[2] if len(n.input) > 2 else "", "bias")
    if w.ndim != 4 or int(a.get("group", 1)) != 1 or any(int(v) != 1 for v in
                                                        a.get("dilations", [1, 1])):
        raise b.unsupported("ConvTranspose: only 2-D, group 1, dilation 1")
    auto = a.get("auto_pad", b"NOTSET")
    if (auto.decode() if isinstance(auto, bytes) else auto) not in ("NOTSET", ""):
        raise b.unsupported("ConvTranspose with auto_pad is not supported")
    nb, h, wd, c = b.type(x.value).shape
    k, s = w.shape[2:], [int(v) for v in a.get("strides", [1, 1])]
    pads = [int(v) for v in a.get("pads", [0, 0, 0, 0])]
    extra = [int(v) for v in a.get("output_padding", [0, 0])]
    out = [(i - 1) * st + kk - p0 - p1 + e
           for i, st, kk, p0, p1, e in zip((h, wd), s, k, pads[:2], pads[2:], extra)]
    padding = next((p for p in (0, 1) if all(  # TFLite's padding giving the same leading pads
        conv_pad(p, o, kk, st, 1, -(-o // st) if p == 0 else (o - kk) // st + 1) == p0
        for o, kk, st, p0 in zip(out, k, s, pads[:2]))), None)
    if padding is None:
        raise b.unsupported(f"ConvTranspose pads {pads} are not TFLite's SAME or VALID")
    m = w.shape[1]
    wv = b.const(w.transpose(1, 2, 3, 0), DType.FLOAT32, label="filter")  # [C_out, kh, kw, C_in]
    bv = b.const(np.zeros(m, np.float32) if bias is None else bias, DType.FLOAT32, label="bias")
    shape = b.const(np.array([nb, *out, m]), DType.INT32)
    y = b.add("TRANSPOSE_CONV", [shape, wv, x.value, bv],
              TensorType((nb, *out, m), DType.FLOAT32),
              dict(padding=padding, stride_h=s[0], stride_w=s[1], fused_activation_function=0))
    return [Rec("act", y, perm=NHWC)]


def resize(b: Builder, n, a) -> list[Rec]:
    """Resize (linear, 2-D, half_pixel / align_corners / asymmetric) in float32 as
    RESIZE_BILINEAR with onnxruntime's arithmetic (edgecc/ops/_onnx_resize.py); onnxruntime
    computes it in float between DequantizeLinear and QuantizeLinear."""
    mode = a.get("mode", b"nearest")
    ctm = a.get("coordinate_transformation_mode", b"half_pixel")
    mode, ctm = (v.decode() if isinstance(v, bytes) else v for v in (mode, ctm))
    flags = {"half_pixel": (False, True), "align_corners": (True, False),
             "asymmetric": (False, False)}.get(ctm)
    if mode != "linear" or flags is None:
        raise b.unsupported(f"Resize mode {mode} with {ctm} coordinates is not supported")
    x = b.with_perm(as_float(b, b.rec(n.input[0])), NHWC)
    nb, h, wd, c = b.type(x.value).shape
    sizes = b.rec(n.input[3]).data if len(n.input) > 3 and n.input[3] else None
    if sizes is not None and np.asarray(sizes).size:
        oh, ow = (int(v) for v in np.asarray(sizes).ravel()[2:])
        scales = (float(np.float32(oh) / np.float32(h)), float(np.float32(ow) / np.float32(wd)))
    else:
        sc = np.asarray(b.rec(n.input[2]).data, np.float32).ravel()
        if sc.size != 4 or sc[0] != 1 or sc[1] != 1:
            raise b.unsupported("Resize must scale the two spatial axes only")
        oh, ow = int(np.floor(h * sc[2])), int(np.floor(wd * sc[3]))
        scales = (float(sc[2]), float(sc[3]))
    size = b.const(np.array([oh, ow]), DType.INT32)
    y = b.add("RESIZE_BILINEAR", [x.value, size], TensorType((nb, oh, ow, c), DType.FLOAT32),
              dict(align_corners=flags[0], half_pixel_centers=flags[1], numerics=QLINEAR,
                   onnx_ctm=ctm, onnx_scales=scales))
    return [Rec("act", y, perm=NHWC)]
