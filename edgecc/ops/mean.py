"""MEAN and SUM over any constant set of axes, keep_dims either way: int8/int16 and float32.

int8/int16 (TFLite's QuantizedMeanOrSum): (m, s) = QuantizeMultiplier(double(s_in) / double(s_out));
for MEAN the 1/n of the n reduced elements is folded in: k = min(floor(log2 n), 32, 31 + s),
m' = (m << k) / n (int64, truncating), s' = s - k. out = MBQM(sum(q) - zp_in * n, m', s') + zp_out,
clamped to the output type. float32 sums in TFLite's row-major visiting order (so the float result
is bit-identical), then MEAN divides by float(n).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, dtype_limits, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._reduce import (constant_axes, loop_plan, reduce_np, reduce_text,
                                reduced_shape, resolve_axes)
from edgecc.numerics.fixed_point import mbqm, quantize_multiplier


def supported_type(g: Graph, n: Node) -> bool:
    """input and output must both be int8, both int16 or both float32"""
    a, b = in_type(g, n).dtype, out_type(g, n).dtype
    return a == b and a in (DType.INT8, DType.INT16, DType.FLOAT32)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    shape = reduced_shape(in_type(g, n).shape, resolve_axes(g, n), bool(n.attrs.get("keep_dims")))
    return [TensorType(shape, out_type(g, n).dtype)]


def quant_params(g: Graph, n: Node, count: int) -> dict:
    m, s = quantize_multiplier(float(ew.scale32(in_type(g, n))) / float(ew.scale32(out_type(g, n))))
    if n.op == "MEAN":
        k = min(count.bit_length() - 1, 32, 31 + s)
        m, s = int((m << k) // count), s - k
    lo, hi = dtype_limits(out_type(g, n))
    return dict(mult=m, shift=s, zp_times_n=ew.zp(in_type(g, n)) * count,
                out_zp=ew.zp(out_type(g, n)), lo=lo, hi=hi)


def _sequential_sum(flat: np.ndarray) -> np.ndarray:
    acc = np.zeros(flat.shape[:-1], np.float32)
    for k in range(flat.shape[-1]):
        acc = (acc + flat[..., k]).astype(np.float32)
    return acc


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    axes = resolve_axes(g, n)
    count = loop_plan(in_type(g, n).shape, axes)["count"]
    if in_type(g, n).dtype == DType.FLOAT32:
        s = reduce_np(ins[0].astype(np.float32), axes, _sequential_sum)
        if n.op == "MEAN":
            s = (s / np.float32(count)).astype(np.float32)
        return [s.reshape(out_type(g, n).shape)]
    p = quant_params(g, n, count)
    total = reduce_np(ins[0].astype(np.int64), axes, lambda f: f.sum(axis=-1))
    if n.numerics.qlinear:  # QLinearGlobalAveragePool: edgecc/numerics/qlinear.py
        from edgecc.numerics.qlinear import onnx_requantize
        out = onnx_requantize(total - p["zp_times_n"], _onnx_scale(g, n, count), p["out_zp"],
                              p["lo"], p["hi"], out_type(g, n).dtype.np)
        return [out.reshape(out_type(g, n).shape)]
    out = mbqm(total - p["zp_times_n"], p["mult"], p["shift"]) + p["out_zp"]
    return [np.clip(out, p["lo"], p["hi"]).astype(out_type(g, n).dtype.np)
            .reshape(out_type(g, n).shape)]


def lower(g: Graph, n: Node, target) -> Kernel:
    x = in_type(g, n)
    plan = loop_plan(x.shape, resolve_axes(g, n))
    params = dict(plan, ctype=x.dtype.c, octype=out_type(g, n).dtype.c)
    if x.dtype == DType.FLOAT32:
        params.update(kind="fsum", divide=n.op == "MEAN", fcount=ew.c_float(plan["count"]))
    else:
        params.update(kind="qsum", **quant_params(g, n, plan["count"]))
        if n.numerics.qlinear:
            params.update(rq="ec_onnx_rq", shift=0,
                          mult=ew.c_float(float(_onnx_scale(g, n, plan["count"]))))
    return Kernel(f"{n.op.lower()}.c.j2", params=params, derived=reduce_text(params))


def _onnx_scale(g: Graph, n: Node, count: int) -> np.float32:
    """onnxruntime's QLinearGlobalAveragePool: the mean's scale x_scale / (y_scale * count) in
    float32, applied to the int32 sum minus zp * count, rounded half to even."""
    xs, ys = ew.scale32(in_type(g, n)), ew.scale32(out_type(g, n))
    return np.float32(xs / np.float32(ys * np.float32(count)))


for _name in ("MEAN", "SUM"):
    register(OpDef(_name, infer, reference, lower,
                   [supported_type, ew.per_tensor_quantized, constant_axes],
                   dtypes="int8, int16, float32"))
