"""BATCH_MATMUL: out[..., i, j] = sum_k lhs[..., i, k] * rhs[..., k, j], batch dims broadcast (rank
2..5), adj_x / adj_y transpose the last two dims of lhs / rhs; int8 and float32.

int8 (TFLite Micro): m = QuantizeMultiplier(double(float(s_lhs * s_rhs)) / s_out);
out = clamp(MBQM(sum_k (l - zp_l) * (r - zp_r), m) + zp_out, -128, 127) (no fused activation).
float32 accumulates over k in order from 0, as TFLite's reference loop.
ONNX (QLinearMatMul, MatMulInteger; edgecc/frontends/onnx/): either operand may have a non-zero zero
point, the same exact (l - zp_l) * (r - zp_r) sums; the output is the int32 sum itself (int32
output, MatMulInteger) or int8 through onnxruntime's float32 epilogue (QLinear numerics:
y = sat(rne(float32(acc) * float32(float32(s_lhs * s_rhs) / s_out)) + zp_out), edgecc/numerics/qlinear.py).
The C walks the broadcast batch dims with the shared broadcast loops, then i, j, k with strides
that absorb adj_x / adj_y, so no transposed copy is made.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._broadcast import broadcast_loops, broadcast_shape
from edgecc.ops._loops import loop_text
from edgecc.numerics.qlinear import onnx_requantize
from edgecc.numerics.fixed_point import mbqm, quantize_multiplier


def _dims(g: Graph, n: Node):
    ls, rs = in_type(g, n).shape, in_type(g, n, 1).shape
    adj_x, adj_y = bool(n.attrs.get("adj_x")), bool(n.attrs.get("adj_y"))
    a, k = (ls[-1], ls[-2]) if adj_x else (ls[-2], ls[-1])
    k2, c = (rs[-1], rs[-2]) if adj_y else (rs[-2], rs[-1])
    return a, k, k2, c, tuple(ls[:-2]), tuple(rs[:-2]), adj_x, adj_y


def supported_types(g: Graph, n: Node) -> bool:
    """lhs, rhs and output must all be int8 or all float32 (ONNX: int8 x int8 -> int32 too)"""
    if (in_type(g, n).dtype, in_type(g, n, 1).dtype, out_type(g, n).dtype) == \
            (DType.INT8, DType.INT8, DType.INT32):
        return not n.numerics.qlinear
    t = {in_type(g, n).dtype, in_type(g, n, 1).dtype, out_type(g, n).dtype}
    return len(t) == 1 and t <= {DType.INT8, DType.FLOAT32}


def shapes_valid(g: Graph, n: Node) -> bool:
    """ranks must be 2..5, the contracted dims equal and the batch dims broadcastable"""
    ls, rs = in_type(g, n).shape, in_type(g, n, 1).shape
    if not (2 <= len(ls) <= 5 and 2 <= len(rs) <= 5):
        return False
    a, k, k2, c, lb, rb, _, _ = _dims(g, n)
    return k == k2 and broadcast_shape(lb, rb) is not None


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    a, k, _, c, lb, rb, _, _ = _dims(g, n)
    return [TensorType(broadcast_shape(lb, rb) + (a, c), out_type(g, n).dtype)]


def quant_params(g: Graph, n: Node) -> dict:
    out = dict(offl=-ew.in_zp(g, n, 0), offr=-ew.in_zp(g, n, 1), out_zp=ew.zp(out_type(g, n)),
               store="int32" if out_type(g, n).dtype == DType.INT32 else
               ("onnx" if n.numerics.qlinear else "tflite"))
    if out["store"] == "int32":
        return out
    prod = np.float32(ew.scale32(in_type(g, n)) * ew.scale32(in_type(g, n, 1)))
    if out["store"] == "onnx":  # onnxruntime's QLinearMatMul: float32 scale
        out["scale"] = np.float32(prod / ew.scale32(out_type(g, n)))
        return out
    out["mult"], out["shift"] = quantize_multiplier(float(prod) / float(ew.scale32(out_type(g, n))))
    return out


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    a, k, _, c, lb, rb, adj_x, adj_y = _dims(g, n)
    lhs, rhs = ins
    if adj_x:
        lhs = np.swapaxes(lhs, -1, -2)
    if adj_y:
        rhs = np.swapaxes(rhs, -1, -2)
    if lhs.dtype == np.float32:
        ob = broadcast_shape(lb, rb)
        lhs = np.broadcast_to(lhs, ob + (a, k))
        rhs = np.broadcast_to(rhs, ob + (k, c))
        acc = np.zeros(ob + (a, c), np.float32)
        for kk in range(k):  # sequential in k, as the reference loop
            acc = (acc + (lhs[..., :, kk:kk + 1] * rhs[..., kk:kk + 1, :]).astype(np.float32))
        return [acc.astype(np.float32)]
    p = quant_params(g, n)
    acc = np.matmul(lhs.astype(np.int64) + p["offl"], rhs.astype(np.int64) + p["offr"])
    if p["store"] == "int32":
        return [acc.astype(np.int32)]
    if p["store"] == "onnx":
        return [onnx_requantize(acc, p["scale"], p["out_zp"], -128, 127, np.int8)]
    out = mbqm(acc, p["mult"], p["shift"]) + p["out_zp"]
    return [np.clip(out, -128, 127).astype(np.int8)]


def lower(g: Graph, n: Node, target) -> Kernel:
    a, k, _, c, lb, rb, adj_x, adj_y = _dims(g, n)
    ob = broadcast_shape(lb, rb)
    loops = broadcast_loops([lb, rb], ob)
    params = dict(dims=loops.dims, sl=[s * a * k for s in loops.strides[0]],
                  sr=[s * k * c for s in loops.strides[1]], so=[s * a * c for s in loops.out_strides],
                  rows=a, cols=c, depth=k, li=1 if adj_x else k, lk=a if adj_x else 1,
                  rk=1 if adj_y else c, rj=k if adj_y else 1, ctype=in_type(g, n).dtype.c,
                  kind=in_type(g, n).dtype.name.lower())
    consts = ew.const_inputs(g, n)
    params["out_ctype"] = out_type(g, n).dtype.c
    if in_type(g, n).dtype == DType.INT8:  # the store: templates/c/_int_store.j2
        params.update(quant_params(g, n), act_min=-128, act_max=127)
        if "scale" in params:  # ONNX numerics: the float32 scale as a constant
            consts["scale"] = np.array([params.pop("scale")], np.float32)
    return Kernel("batch_matmul.c.j2", params=params, consts=consts,
                  derived=loop_text(params, v="b"))


OP = register(OpDef("BATCH_MATMUL", infer, reference, lower,
                    [supported_types, ew.per_tensor_quantized, shapes_valid],
                    dtypes="int8, float32"))
