"""DYNAMIC_QUANTIZE: ONNX DynamicQuantizeLinear, float32 x -> (uint8 y, float32 y_scale, uint8
y_zero_point), the scale and zero point computed at run time from x's range.

Meaning (the ONNX spec, as onnx.reference computes it, every step in float32):
    x_max = max(0, max(x)), x_min = min(0, min(x))
    y_scale = (x_max == x_min ? 1 : x_max - x_min) / 255
    y_zero_point = round_half_even(clamp(0 - x_min / y_scale, 0, 255))
    y = clamp(round_half_even(x / y_scale) + y_zero_point, 0, 255)
The C does the same float32 operations in the same order (built with -ffp-contract=off, no
libm): the rounding is ec_onnx_round after clamping x / y_scale to +-2^22 (beyond it every
result saturates). A NaN in x is outside the spec (onnx.reference's cast of NaN is undefined);
here it compares false, so it neither moves the range nor leaves y's range [0, 255].
"""
from __future__ import annotations

import numpy as np

from edgecc.ir import DType, Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops.quantize import ONNX_CLAMP, c_float_literal

F32 = np.float32


def float_in_uint8_float_uint8_out(g: Graph, n: Node) -> bool:
    """input must be float32 and the outputs uint8 y, float32 y_scale and uint8 y_zero_point"""
    return in_type(g, n).dtype == DType.FLOAT32 and len(n.outputs) == 3 and \
        [out_type(g, n, i).dtype for i in range(3)] == [DType.UINT8, DType.FLOAT32, DType.UINT8]


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, DType.UINT8), TensorType((), DType.FLOAT32),
            TensorType((), DType.UINT8)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    x = np.asarray(ins[0], F32).ravel()
    hi = F32(max(F32(0), F32(x.max()) if x.size else F32(0)))
    lo = F32(min(F32(0), F32(x.min()) if x.size else F32(0)))
    scale = F32(F32(1.0 if hi == lo else F32(hi - lo)) / F32(255))
    zp = F32(np.rint(np.clip(F32(F32(0) - F32(lo / scale)), F32(0), F32(255))))
    r = np.clip(np.nan_to_num((x / scale).astype(F32), nan=-ONNX_CLAMP), -ONNX_CLAMP, ONNX_CLAMP)
    y = np.clip(np.rint(r).astype(np.int64) + int(zp), 0, 255).astype(np.uint8)
    return [y.reshape(in_type(g, n).shape), np.array(scale, F32), np.array(int(zp), np.uint8)]


def lower(g: Graph, n: Node, target) -> Kernel:
    return Kernel("dynamic_quantize.c.j2", params=dict(
        count=in_type(g, n).numel, clamp=c_float_literal(ONNX_CLAMP)))


register(OpDef("DYNAMIC_QUANTIZE", infer, reference, lower, [float_in_uint8_float_uint8_out],
               dtypes="float32 -> uint8, float32 scale, uint8 zero point",
               reference_oracle="onnx.reference / onnxruntime"))
