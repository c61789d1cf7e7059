"""One handler per ONNX op type: what each node makes of its inputs' records.

Owns: QuantizeLinear / DequantizeLinear (edge conversions, closing a pending group), the compute
ops that open a pending DQ -> op group (Conv, Gemm, MatMul, Add, Mul, pools, Softmax), the fusions
into a pending group (Relu, Clip, a bias Add), the QOperator ops (rewritten as their DQ -> op -> Q
group), and data movement (Transpose changes only the layout bookkeeping; Reshape, Flatten,
Squeeze, Unsqueeze and Identity reinterpret bytes).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import onnx

from edgecc.frontends.onnx import emit, floats
from edgecc.frontends.onnx.builder import Builder, Rec, inverse, to_int8
from edgecc.ir import DType, QParams, TensorType, Value
from edgecc.numerics import QLINEAR


def attrs_of(node: onnx.NodeProto) -> dict:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _const(b: Builder, name: str) -> np.ndarray | None:
    if not name:
        return None
    r = b.rec(name)
    return r.data if r.kind == "const" else None


def _need_const(b: Builder, name: str, what: str) -> np.ndarray:
    v = _const(b, name)
    if v is None:
        raise b.unsupported(f"{what} must be a constant")
    return v


def _scale(b: Builder, name: str, what: str) -> np.ndarray:
    """A constant float32 scale (ONNX requires a float type; edgecc reads float32)."""
    v = _need_const(b, name, what)
    if np.asarray(v).dtype != np.float32:
        raise b.unsupported(f"{what} must be float32, not {np.asarray(v).dtype}")
    return v


def dq_rec(b: Builder, x: str, s: str, zp: str, axis: int = 1) -> Rec:
    """The record of DequantizeLinear(x, s, zp)."""
    scale = _scale(b, s, "the scale")
    zpv = _const(b, zp) if zp else None
    r = b.rec(x)
    if r.kind == "const":
        data = r.data
        z = np.zeros(1, data.dtype) if zpv is None else zpv
        if data.dtype == np.int32:
            return Rec("qconst", data=data, q=b.qparams_of(scale, z, axis))
        data, z = to_int8(data, z)
        if data.dtype != np.int8:
            raise b.unsupported(f"DequantizeLinear of a {data.dtype} constant")
        ax = axis % max(data.ndim, 1)
        return Rec("qconst", data=data, q=b.qparams_of(scale, z, ax))
    if r.kind != "act":
        raise b.unsupported(f"DequantizeLinear of a {r.kind} value")
    v = b.values[r.value]
    raw_zp = zpv
    if zpv is not None:
        zpv = to_int8(np.zeros(0, zpv.dtype), zpv)[1]  # uint8 zero points as int8 ones
    ax = _ir_axis(b, r, axis, scale)  # per channel: the IR axis of ONNX axis `axis`
    q = b.qparams_of(scale, zpv, ax)
    if v.type.dtype == DType.UINT8:  # only graph inputs can be uint8 here: to int8, exactly
        r = _uint8_input(b, x, r, b.qparams_of(scale, raw_zp, ax), q)
        v = b.values[r.value]
    if v.type.dtype != DType.INT8:
        raise b.unsupported(f"DequantizeLinear of a {v.type.dtype.value[0]} activation")
    if v.type.q is None:  # an int8 graph input: its quantization is the DQ's
        b.values[r.value] = Value(v.name, replace(v.type, q=q), label=v.label)
    elif (v.type.q.scale, v.type.q.zero_point) != (q.scale, q.zero_point):
        raise b.unsupported("DequantizeLinear with other parameters than the QuantizeLinear "
                            "that made its input")
    return Rec("dq", value=r.value, perm=r.perm)


def _ir_axis(b: Builder, r: Rec, axis: int, scale) -> int:
    """The IR axis of ONNX axis `axis` of activation r, for per-channel scales (0 otherwise)."""
    if np.asarray(scale).size <= 1:
        return 0
    rank = len(r.perm)
    if not -rank <= axis < rank:
        raise b.unsupported(f"axis {axis} is outside the rank {rank}")
    return list(r.perm).index(axis % rank)


def _uint8_input(b: Builder, x: str, r: Rec, uq: QParams, q: QParams) -> Rec:
    """A uint8 graph input read through DequantizeLinear: the input takes the DQ's parameters
    and a QUANTIZE makes the int8 copy (zero point - 128, the bytes xor 0x80) that every reader
    of `x` then shares."""
    v = b.values[r.value]
    if v.type.q is not None:
        raise b.unsupported("a uint8 graph input read by DequantizeLinears with other "
                            "parameters")
    if any(not 0 <= z <= 255 for z in uq.zero_point):
        raise b.unsupported("a uint8 input's zero point must be uint8")
    b.values[r.value] = Value(v.name, replace(v.type, q=uq), label=v.label)
    y = b.add("QUANTIZE", [r.value], TensorType(v.type.shape, DType.INT8, q), label=x)
    b.recs[x] = Rec("act", y, r.perm)
    return b.recs[x]


def dequantize(b: Builder, n, a) -> list[Rec]:
    zp = n.input[2] if len(n.input) > 2 else ""
    return [dq_rec(b, n.input[0], n.input[1], zp, int(a.get("axis", 1)))]


def out_q(b: Builder, s: str, zp: str, axis: int | None = None) -> QParams:
    """The int8 quantization of a QuantizeLinear's output; per channel only given the IR axis
    (a QuantizeLinear with `axis` of a float activation)."""
    scale = _scale(b, s, "the output scale")
    z = _const(b, zp) if zp else np.zeros(1, np.uint8)
    if z is None:
        raise b.unsupported("the output zero point must be a constant")
    z = np.asarray(z)
    if z.dtype not in (np.int8, np.uint8):
        raise b.unsupported(f"QuantizeLinear to {z.dtype} is not supported")
    if np.asarray(scale).size != 1:
        if axis is None:
            raise b.unsupported("per-channel QuantizeLinear of an activation")
        return b.qparams_of(scale, to_int8(np.zeros(0, z.dtype), z)[1], axis)
    zz = int(z.ravel()[0]) - (128 if z.dtype == np.uint8 else 0)
    return QParams((float(np.float32(scale).ravel()[0]),), (zz,))


def quantize(b: Builder, n, a) -> list[Rec]:
    zp = n.input[2] if len(n.input) > 2 else ""
    r = b.rec(n.input[0])
    if r.kind == "qconst" and r.data.dtype == np.int8:  # requantized at compile time
        r = Rec("const", data=floats.dequantized_rec(r))
    if r.kind == "const" and np.asarray(r.data).dtype == np.float32:
        return [_quantize_const(b, r.data, n.input[1], zp, int(a.get("axis", 1)))]
    axis = None  # per channel: only a float activation's QuantizeLinear (ONNX numerics)
    if r.kind == "act" and b.type(r.value).dtype == DType.FLOAT32:
        axis = _ir_axis(b, r, int(a.get("axis", 1)), _scale(b, n.input[1], "the scale"))
    yq = out_q(b, n.input[1], zp, axis)
    if r.kind == "pend":
        return [emit.finish(b, r, yq)]
    if r.kind == "dq":
        xq = b.type(r.value).q
        if (xq.scale, xq.zero_point) == (yq.scale, yq.zero_point):
            return [Rec("act", r.value, r.perm)]
        y = b.add("QUANTIZE", [r.value], TensorType(b.type(r.value).shape, DType.INT8, yq),
                  dict(numerics=QLINEAR))  # in float32, as onnxruntime: a table
        return [Rec("act", y, r.perm)]
    if r.kind == "act" and b.type(r.value).dtype == DType.FLOAT32:
        y = b.add("QUANTIZE", [r.value], TensorType(b.type(r.value).shape, DType.INT8, yq),
                  dict(numerics=QLINEAR))
        return [Rec("act", y, r.perm)]
    raise b.unsupported(f"QuantizeLinear of a {r.kind} value")


def _quantize_const(b: Builder, data: np.ndarray, s: str, zp: str, axis: int) -> Rec:
    """QuantizeLinear of a float32 constant (float weights a vendor tool keeps behind
    QuantizeLinear -> DequantizeLinear), folded as onnxruntime computes it: x / scale in
    float32, round half to even, + zero point, saturate; per channel along `axis`."""
    scale = np.asarray(_scale(b, s, "the scale"), np.float32)
    z = np.asarray(_const(b, zp) if zp else np.zeros(1, np.uint8))
    if z.dtype not in (np.int8, np.uint8):
        raise b.unsupported(f"QuantizeLinear to {z.dtype} is not supported")
    shape = [1] * data.ndim
    if scale.size > 1:
        shape[axis % data.ndim] = scale.size
    v = (np.asarray(data, np.float32) / scale.reshape(shape)).astype(np.float32)
    info = np.iinfo(z.dtype)
    q = np.rint(v).astype(np.int64) + z.astype(np.int64).reshape(shape if z.size > 1 else [])
    return Rec("const", data=np.clip(q, info.min, info.max).astype(z.dtype))


def _ins(b: Builder, n) -> list[Rec]:
    return [b.rec(x) for x in n.input if x]


def _dq_act(b: Builder, r: Rec) -> Rec:
    if r.kind != "dq":
        raise b.unsupported("the input must come from a DequantizeLinear (QDQ)")
    if b.type(r.value).q.per_channel:
        raise b.unsupported("a per-channel DequantizeLinear of an activation can only be a "
                            "graph output")
    return r


def _weighted(b: Builder, n, info: dict, bias_at: int | None) -> dict:
    """info with the weights (input 1) and the optional bias (input `bias_at`), each required to
    be a DequantizeLinear of a constant."""
    ins = [b.rec(x) if x else None for x in n.input]
    if bias_at is not None and bias_at < len(ins) and ins[bias_at] is not None and \
            ins[bias_at].kind == "const" and ins[1] is not None and ins[1].kind == "qconst":
        ins[bias_at] = _float_bias(b, info["x"], ins[1], ins[bias_at].data)
    for i, what in ((1, "weights"), (bias_at, "bias")):
        if i is None or i >= len(ins) or ins[i] is None:
            continue
        if ins[i].kind != "qconst":
            raise b.unsupported(f"{n.op_type} {what} must be a DequantizeLinear of a constant")
        info["w" if i == 1 else "bias"] = ins[i]
    if "w" not in info:
        raise b.unsupported(f"{n.op_type} has no weights")
    return info


def _float_bias(b: Builder, x: Rec, w: Rec, data: np.ndarray) -> Rec:
    """A float32 bias of a quantized Conv / Gemm (quantize_static's QuantizeBias=False) as
    onnxruntime quantizes it before fusing the group: int32 in the scale x_scale * w_scale[c]
    (float32), round half to even."""
    if np.asarray(data).dtype != np.float32:
        raise b.unsupported("the bias must be float32 or a DequantizeLinear of a constant")
    scale = np.float32(b.type(x.value).q.scale[0]) * np.asarray(w.q.scale, np.float32)
    d = np.asarray(data, np.float32).ravel()
    scale = np.broadcast_to(scale, d.shape).astype(np.float32)
    q = np.rint((d / scale).astype(np.float32)).astype(np.int64)
    if q.min(initial=0) < -(1 << 31) or q.max(initial=0) >= (1 << 31):
        raise b.unsupported("the float bias does not fit int32 in the accumulator's scale")
    return Rec("qconst", data=q.astype(np.int32), q=b.qparams_of(scale, None, 0))


def conv(b: Builder, n, a) -> list[Rec]:
    if floats.is_float(b, b.rec(n.input[0])):
        return [floats.conv(b, n, a, b.rec(n.input[0]))]
    x = _dq_act(b, b.rec(n.input[0]))
    info = dict(x=x, attrs=a, ort_float=b.index in b.ort_float)
    return [Rec("pend", op="conv", info=_weighted(b, n, info, 2))]


def matmul(b: Builder, n, a) -> list[Rec]:
    if n.op_type == "Gemm" and (a.get("transA", 0) or float(a.get("alpha", 1.0)) != 1.0
                                or float(a.get("beta", 1.0)) != 1.0):
        raise b.unsupported("Gemm with transA, alpha or beta other than the defaults")
    if floats.is_float(b, b.rec(n.input[0])):
        return [floats.matmul(b, n, a, b.rec(n.input[0]))]
    x = _dq_act(b, b.rec(n.input[0]))
    info = dict(x=x, trans_b=bool(a.get("transB", 0)), ort_float=b.index in b.ort_float)
    return [Rec("pend", op="fc", info=_weighted(b, n, info, 2 if n.op_type == "Gemm" else None))]


def add_mul(b: Builder, n, a) -> list[Rec]:
    ins = _ins(b, n)
    # a bias Add on a pending MatMul/Gemm/Conv without one (tf2onnx's MatMul + Add)
    if n.op_type == "Add" and ins[0].kind == "pend" and ins[1].kind == "qconst" and \
            ins[0].op in ("fc", "conv") and "bias" not in ins[0].info and \
            ins[1].data.dtype == np.int32:
        return [replace(ins[0], info=dict(ins[0].info, bias=ins[1]))]
    if any(floats.is_float(b, r) for r in ins):
        return [floats.binary(b, n, ins)]
    for r in ins:
        if r.kind not in ("dq", "qconst"):
            raise b.unsupported(f"{n.op_type} operands must come from DequantizeLinear (QDQ)")
    return [Rec("pend", op="binary", info=dict(xs=ins, ir_op=n.op_type.upper(),
                                               ort_float=b.index in b.ort_float))]


def relu_clip(b: Builder, n, a) -> list[Rec]:
    r = b.rec(n.input[0])
    if r.kind != "pend" and not floats.is_float(b, r):
        raise b.unsupported(f"{n.op_type} must follow a quantized op inside a QDQ group")
    if n.op_type == "Relu":
        lo, hi = 0.0, None
    else:
        lo = a.get("min") if len(n.input) < 2 else _const(b, n.input[1])
        hi = a.get("max") if len(n.input) < 3 else _const(b, n.input[2])
        lo = None if lo is None else float(np.asarray(lo))
        hi = None if hi is None else float(np.asarray(hi))
    if r.kind != "pend":
        return [floats.relu_clip(b, n, lo, hi, r)]
    return [replace(r, info=dict(r.info, clips=[*r.info.get("clips", []), (lo, hi)]))]


def pool(b: Builder, n, a) -> list[Rec]:
    r = b.rec(n.input[0])
    kind = {"GlobalAveragePool": "global", "AveragePool": "avg", "MaxPool": "max",
            "GlobalMaxPool": "gmax"}[n.op_type]
    if len(n.output) > 1 and n.output[1]:
        raise b.unsupported("MaxPool's Indices output is not supported")
    if kind in ("max", "gmax") and r.kind in ("act", "dq"):
        # max commutes with (de)quantization: pooled on the int8 values, same quantization
        t = b.type(r.value)
        if t.q is None or t.dtype != DType.INT8:  # e.g. a float graph input (fuzz find)
            raise b.unsupported(f"{n.op_type} of a {t.dtype.value[0]} activation without "
                                "quantization is not supported")
        out = emit.pool(b, dict(x=r, attrs=a, kind=kind), b.type(r.value).q)
        return [replace(out, kind=r.kind)]
    if floats.is_float(b, r):
        return [floats.pool(b, a, kind, r)]
    fused = b.ort_fused.get(b.index)  # onnxruntime's QLinearAveragePool (ortfuse.py)
    return [Rec("pend", op="pool", info=dict(x=_dq_act(b, r), attrs=a, kind=kind,
                                             qlinear=fused is not None,
                                             ort_float=b.index in b.ort_float,
                                             zp_offset=128 if fused == "u8" else 0))]


def concat(b: Builder, n, a) -> list[Rec]:
    rs = [b.rec(x) for x in n.input if x]
    if rs and all(r.kind == "act" for r in rs):  # quantized values of one quantization
        qs = {(b.type(r.value).q.scale, b.type(r.value).q.zero_point)
              for r in rs if b.type(r.value).q is not None}
        if len(qs) != 1 or any(b.type(r.value).dtype != DType.INT8 for r in rs):
            raise b.unsupported("Concat of quantized values needs one int8 quantization")
        return [emit.concat(b, dict(xs=rs, axis=a.get("axis", 0)), b.type(rs[0].value).q)]
    return [Rec("pend", op="concat", info=dict(xs=[_dq_act(b, r) for r in rs],
                                               axis=a.get("axis", 0)))]


def sigmoid(b: Builder, n, a) -> list[Rec]:
    return [Rec("pend", op="lookup", info=dict(x=_dq_act(b, b.rec(n.input[0])),
                                               ir_op="LOGISTIC"))]


def softmax(b: Builder, n, a) -> list[Rec]:
    if floats.is_float(b, b.rec(n.input[0])):
        return [floats.softmax(b, a, b.rec(n.input[0]))]
    # qlinear: onnxruntime runs it as QLinearSoftmax, not in float (ortfuse.py)
    return [Rec("pend", op="softmax", info=dict(x=_dq_act(b, b.rec(n.input[0])), attrs=a,
                                                opset=b.opset, qlinear=b.index in b.ort_fused))]
