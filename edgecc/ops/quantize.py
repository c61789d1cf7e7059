"""QUANTIZE: float32 -> int8/int16, and requantization between int8, int16 and int32, and between
uint8 and int8 at a model's edges (uint8 -> int8 at an input, int8 -> uint8 at an output).

TFLite Micro (quantize_common.cc):
- float input, AffineQuantize: q = round(x / scale) + zp, clamped to the output type; the division
  is in float32 (x / (float)scale) and the rounding is TfLiteRound = std::round on a float (half
  away from zero). The generated C rounds without libm: it truncates, takes the exact remainder and
  steps away from zero when |remainder| >= 0.5. |x / scale| is first clamped to 2**24 (the result
  saturates anyway); TFLM's own cast is undefined beyond 2**31, where we saturate instead.
- ONNX numerics (`n.numerics.qlinear`, onnxruntime's QuantizeLinear): the same float32
  division, rounded half to even (ec_onnx_round; |x / scale| first clamped to 2**22).
- per channel (ONNX QuantizeLinear with `axis` on an activation; ONNX numerics only): the same
  per element with its channel's scale and zero point (edgecc/ops/_per_channel.py); uint8 <->
  int8 at the edges then moves every channel's zero point by 128 (the same as per tensor).
- integer input, Requantize: MultiplyByQuantizedMultiplier(x - zp_in) with
  QuantizeMultiplier(double(in_scale) / double(out_scale)), + zp_out, clamped to the output type.
  uint8 <-> int8 takes the same path (TFLM's Requantize; its XOR 0x80 shortcut for equal scales
  and zero points 128 apart gives the same bytes, since the multiplier is then exactly 1).
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, dtype_limits, in_type, out_type, register
from edgecc.ops._per_channel import broadcast_q, c_channels, per_channel_on_axis, xor_edge
from edgecc.numerics.fixed_point import mbqm, quantize_multiplier, wrap32

FLOAT_CLAMP = float(1 << 24)
ONNX_CLAMP = float(1 << 22)  # ec_onnx_round's exact range  # beyond this |x / scale| every int8/int16 result is saturated
_INT_IN = (DType.INT8, DType.INT16)
_INT_OUT = (DType.INT8, DType.INT16, DType.INT32)


_UINT8_EDGES = ((DType.UINT8, DType.INT8), (DType.INT8, DType.UINT8))


def supported_types(g: Graph, n: Node) -> bool:
    """input -> output must be float32 -> int8/int16, int8/int16 -> int8/int16/int32, or uint8 <->
    int8"""
    a, b = in_type(g, n).dtype, out_type(g, n).dtype
    if a == DType.FLOAT32:
        return b in (DType.INT8, DType.INT16)
    return (a in _INT_IN and b in _INT_OUT) or (a, b) in _UINT8_EDGES


def per_tensor_output(g: Graph, n: Node) -> bool:
    """output must be quantized per tensor (one scale), or per channel on an axis from float32
    with ONNX numerics or between uint8 and int8 of the same scales"""
    q = out_type(g, n).q
    if q is not None and q.per_channel:
        if in_type(g, n).dtype == DType.FLOAT32:
            return n.numerics.qlinear and per_channel_on_axis(out_type(g, n))
        return xor_edge(in_type(g, n), out_type(g, n))
    return q is not None and len(q.scale) == 1 and float(q.scale[0]) > 0


def quantized_integer_input(g: Graph, n: Node) -> bool:
    """an integer input must be quantized per tensor"""
    t = in_type(g, n)
    if t.q is not None and t.q.per_channel and t.dtype != DType.FLOAT32:
        return xor_edge(t, out_type(g, n))
    return t.dtype == DType.FLOAT32 or (t.q is not None and len(t.q.scale) == 1)


def scale_ratio_in_range(g: Graph, n: Node) -> bool:
    """input scale / output scale must be below 2**30"""
    if in_type(g, n).dtype == DType.FLOAT32:
        return True
    return _ratio(g, n) < float(1 << 30)


def _ratio(g: Graph, n: Node) -> float:
    return float(np.float32(in_type(g, n).q.scale[0])) / float(np.float32(out_type(g, n).q.scale[0]))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def _out(g: Graph, n: Node) -> tuple[float, int, int, int]:
    t = out_type(g, n)
    lo, hi = dtype_limits(t)
    return float(np.float32(t.q.scale[0])), int(t.q.zero_point[0]), lo, hi


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    scale, zp, lo, hi = _out(g, n)
    x = np.asarray(ins[0])
    if in_type(g, n).dtype == DType.FLOAT32:
        if out_type(g, n).q.per_channel:  # ONNX QuantizeLinear with an axis
            scale, zp = broadcast_q(out_type(g, n))
        r = x.astype(np.float32) / np.float32(scale)  # float32 division, as TFLM
        if n.numerics.qlinear:  # onnxruntime: round half to even
            r = np.clip(np.nan_to_num(r, nan=-ONNX_CLAMP), -ONNX_CLAMP, ONNX_CLAMP)
            y = np.rint(r).astype(np.int64) + zp
            return [np.clip(y, lo, hi).astype(out_type(g, n).dtype.np)]
        r = np.where(r > -FLOAT_CLAMP, r, -FLOAT_CLAMP)  # NaN goes to the minimum too
        r = np.minimum(r, FLOAT_CLAMP).astype(np.float64)
        q = (np.sign(r) * np.floor(np.abs(r) + 0.5)).astype(np.int64)  # std::round on a float
        y = q + zp
    elif n.numerics.qlinear:  # DequantizeLinear -> QuantizeLinear in float32
        from edgecc.numerics.qlinear import dequant_fn_quant_table
        return [dequant_fn_quant_table(g, n)[x.astype(np.int64) + 128]]
    else:
        m, s = quantize_multiplier(_ratio(g, n))
        in_zp = int(in_type(g, n).q.zero_point[0])
        y = wrap32(mbqm(x.astype(np.int64) - in_zp, m, s) + zp)
    return [np.clip(y, lo, hi).astype(out_type(g, n).dtype.np)]


def c_float_literal(x: float) -> str:
    """A float32 as an exact C99 hexadecimal float literal."""
    return float(np.float32(x)).hex() + "f"


def _c_int(v: int) -> str:
    return "INT32_MIN" if v == -(1 << 31) else str(v)  # -2147483648 is not an int literal in C


def lower(g: Graph, n: Node, target) -> Kernel:
    scale, zp, lo, hi = _out(g, n)
    params = dict(count=in_type(g, n).numel, out_zp=zp, out_min=_c_int(lo), out_max=_c_int(hi),
                  out_ctype=out_type(g, n).dtype.c)
    if in_type(g, n).dtype == DType.FLOAT32:
        params.update(scale=c_float_literal(scale), scale_text=f"{scale:.9g}",
                      clamp=c_float_literal(FLOAT_CLAMP))
        if n.numerics.qlinear:
            params["clamp"] = c_float_literal(ONNX_CLAMP)
            if not out_type(g, n).q.per_channel:
                return Kernel("quantize_float_onnx.c.j2", params=params)
            params.update(c_channels(out_type(g, n)))
            return Kernel("quantize_float_onnx_pc.c.j2", params=params, consts=dict(
                scales=out_type(g, n).q.scale_f32(),
                zps=np.asarray(out_type(g, n).q.zero_point, np.int32)))
        return Kernel("quantize_float.c.j2", params=params)
    if n.numerics.qlinear:  # int8 -> int8 through a 256-entry table
        from edgecc.ops._lut import table_kernel
        from edgecc.numerics.qlinear import dequant_fn_quant_table
        return table_kernel("table_onnx.c.j2", g, n, dequant_fn_quant_table(g, n))
    m, s = quantize_multiplier(_ratio(g, n))
    params.update(in_ctype=in_type(g, n).dtype.c, in_zp=int(in_type(g, n).q.zero_point[0]),
                  mult=m, shift=s)
    return Kernel("requantize.c.j2", params=params)


OP = register(OpDef(
    "QUANTIZE", infer, reference, lower,
    [supported_types, per_tensor_output, quantized_integer_input, scale_ratio_in_range],
    dtypes="float32 -> int8/int16; int8/int16 -> int8/int16/int32; uint8 <-> int8",
    inplace=((0, 0),)))  # same-size requantize: y[i] is written after x[i] is read
