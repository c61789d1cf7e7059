"""DEQUANTIZE: int8 / int16 / uint8 -> float32.

TFLite Micro (reference_ops::Dequantize): y = scale * (x - zero_point) with scale a float and the
integer difference converted to float, so one float32 multiplication, correctly rounded. The C
does exactly that (a float32 literal times (float)(x - zp)); the values are bit-identical.
ONNX DequantizeLinear with `axis` on an activation: the same per element with its channel's
scale and zero point (edgecc/ops/_per_channel.py), as onnx.reference and onnxruntime compute it.
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops._per_channel import broadcast_q, c_channels, per_channel_on_axis
from edgecc.ops.quantize import c_float_literal


def supported_types(g: Graph, n: Node) -> bool:
    """input must be int8, int16 or uint8 and the output float32"""
    return in_type(g, n).dtype in (DType.INT8, DType.INT16, DType.UINT8) and out_type(g, n).dtype == DType.FLOAT32


def per_tensor_input(g: Graph, n: Node) -> bool:
    """input must be quantized per tensor (one scale) or per channel on one axis"""
    q = in_type(g, n).q
    return q is not None and (len(q.scale) == 1 or per_channel_on_axis(in_type(g, n)))


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, DType.FLOAT32)]


def _q(g: Graph, n: Node) -> tuple[np.float32, int]:
    q = in_type(g, n).q
    return np.float32(q.scale[0]), int(q.zero_point[0])


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    scale, zp = broadcast_q(in_type(g, n)) if in_type(g, n).q.per_channel else _q(g, n)
    diff = (np.asarray(ins[0]).astype(np.int32) - zp).astype(np.float32)  # exact: |diff| < 2**17
    return [(scale * diff).astype(np.float32)]


def lower(g: Graph, n: Node, target) -> Kernel:
    scale, zp = _q(g, n)
    t = in_type(g, n)
    if t.q.per_channel:
        return Kernel("dequantize_pc.c.j2", params=dict(count=t.numel, in_ctype=t.dtype.c,
                                                     **c_channels(t)),
                      consts=dict(scales=t.q.scale_f32(), zps=np.asarray(t.q.zero_point, np.int32)))
    return Kernel("dequantize.c.j2", params=dict(
        count=in_type(g, n).numel, in_ctype=in_type(g, n).dtype.c, zp=zp,
        scale=c_float_literal(float(scale)), scale_text=f"{float(scale):.9g}"))


OP = register(OpDef("DEQUANTIZE", infer, reference, lower, [supported_types, per_tensor_input],
                    dtypes="int8/int16/uint8 -> float32"))
