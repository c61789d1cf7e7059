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

from edgecc.ir import Graph, Node
from edgecc.ops import Kernel, OpDef, register
from edgecc.ops import _arith as ew
from edgecc.ops._elementwise import same_as_input as infer
from edgecc.ops._lut import int8_in_out, libm, node_float_table, table_kernel

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
    return node_float_table(g, n, gelu_tanh if n.attrs.get("approximate") else gelu_exact)


def reference(g: Graph, n: Node, ins: list) -> list[np.ndarray]:
    return [table(g, n)[ins[0].astype(np.int64) + 128]]


def lower(g: Graph, n: Node, target) -> Kernel:
    return table_kernel("gelu.c.j2", g, n, table(g, n))


OP = register(OpDef("GELU", infer, reference, lower, [int8_in_out, ew.per_tensor_quantized],
                    dtypes="int8 (table)", reference_oracle="LiteRT BUILTIN_REF (not in TFLite Micro)",
                    inplace=((0, 0),)))
