"""GELU, int8 -> int8 (exact or tanh-approximate): TFLite's float-built 256-entry table.

TFLite Micro has no GELU; the oracle is LiteRT's reference kernel, which fills its table at
Prepare with LUTPopulate (dequantize in float, transform, * 1/s_out, round half away, + zp_out).
The transforms, in float as TFLite writes them: exact 0.5 * x * erfcf(x * -sqrt(1/2));
approximate 0.5 * x * (1 + tanhf(sqrt(2/pi) * (x + 0.044715 * x * x * x))). erfcf/tanhf are
the host C library's, as LiteRT's.
"""
from __future__ import annotations

import ctypes

import numpy as np

from edgecc.ir import Graph, Node, TensorType
from edgecc.ops import Kernel, OpDef, in_type, out_type, register
from edgecc.ops import _arith as ew
from edgecc.ops._lut import float_table, int8_in_out, libm

f32 = np.float32
M_SQRT1_2 = 0.70710678118654752440
SQRT_2_OVER_PI = f32(1.12837916709551257390 * M_SQRT1_2)


def _erfcf(x: np.float32) -> np.float32:
    fn = libm().erfcf
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return f32(fn(float(x)))


def gelu_exact(x: np.float32) -> np.float32:
    return f32(f32(f32(0.5) * x) * _erfcf(f32(x * f32(-M_SQRT1_2))))


def gelu_tanh(x: np.float32) -> np.float32:
    cube = f32(f32(f32(f32(0.044715) * x) * x) * x)
    t = f32(libm().tanhf(float(f32(SQRT_2_OVER_PI * f32(x + cube)))))
    return f32(f32(f32(0.5) * x) * f32(f32(1) + t))


def table(g: Graph, n: Node) -> np.ndarray:
    x, y = in_type(g, n), out_type(g, n)
    fn = gelu_tanh if n.attrs.get("approximate") else gelu_exact
    return float_table(ew.scale32(x), ew.zp(x), ew.scale32(y), ew.zp(y), fn)


def infer(g: Graph, n: Node) -> list[TensorType | None]:
    return [TensorType(in_type(g, n).shape, out_type(g, n).dtype)]


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [table(g, n)[ins[0].astype(np.int64) + 128]]


def lower(g: Graph, n: Node, target) -> Kernel:
    return Kernel("gelu.c.j2", params=dict(count=in_type(g, n).numel), consts=dict(lut=table(g, n)),
                  variant="lut")


OP = register(OpDef("GELU", infer, reference, lower, [int8_in_out, ew.per_tensor_quantized],
                    dtypes="int8 (table)", reference_oracle="LiteRT BUILTIN_REF (not in TFLite Micro)",
                    inplace=((0, 0),)))
